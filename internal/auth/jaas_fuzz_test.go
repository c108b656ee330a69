package auth

import (
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// formatJAAS writes sections back as a JAAS file: every name and value
// quoted, classes and keys as the words they were parsed from.
func formatJAAS(sections map[string][]LoginModule) string {
	quote := strings.NewReplacer(`\`, `\\`, `"`, `\"`, "\n", `\n`, "\r", `\r`).Replace
	var b strings.Builder
	names := make([]string, 0, len(sections))
	for name := range sections {
		names = append(names, name)
	}
	slices.Sort(names)
	for _, name := range names {
		b.WriteString(`"` + quote(name) + "\" {\n")
		for _, m := range sections[name] {
			b.WriteString("  " + m.Class + " " + m.Flag + "\n")
			keys := make([]string, 0, len(m.Options))
			for k := range m.Options {
				keys = append(keys, k)
			}
			slices.Sort(keys)
			for _, k := range keys {
				b.WriteString("    " + k + `="` + quote(m.Options[k]) + "\"\n")
			}
			b.WriteString("  ;\n")
		}
		b.WriteString("};\n")
	}
	return b.String()
}

// FuzzParseJAAS parses arbitrary JAAS files: no panic, errors wrap
// ErrJAASSyntax, and what parses writes back (formatJAAS) to a file that
// parses to the same sections. ServerUsers of every section lists
// exactly the user_ options of its modules.
func FuzzParseJAAS(f *testing.F) {
	f.Add(zkJAAS)
	f.Add("Server { org.apache.zookeeper.server.auth.DigestLoginModule required user_a=\"x\\ty\\\\\" user_b=bare; };")
	f.Add("/**/ \"Quoted name\" {\n a.B OPTIONAL k = v ;} // end")
	f.Add("A{}B{};C{x required;}")
	f.Fuzz(func(t *testing.T, in string) {
		got, err := ParseJAAS(strings.NewReader(in))
		if err != nil {
			if !errors.Is(err, ErrJAASSyntax) {
				t.Fatalf("error without ErrJAASSyntax: %v", err)
			}
			return
		}
		out := formatJAAS(got)
		again, err := ParseJAAS(strings.NewReader(out))
		if err != nil {
			t.Fatalf("the written form does not parse: %v\n%s", err, out)
		}
		if !reflect.DeepEqual(got, again) {
			t.Fatalf("parse(write(x)) != x:\n got %+v\nwant %+v\n%s", again, got, out)
		}
		for section, modules := range got {
			users, err := ServerUsers(got, section)
			digestOnly := true
			for _, m := range modules {
				digestOnly = digestOnly && m.Class == DigestLoginModule
			}
			if digestOnly != (err == nil) {
				t.Fatalf("ServerUsers(%q): %v; want an error exactly when a module is not %s", section, err, DigestLoginModule)
			}
			want := map[string]string{}
			for _, m := range modules {
				for k, v := range m.Options {
					if name, ok := strings.CutPrefix(k, "user_"); ok {
						want[name] = v
					}
				}
			}
			if err == nil && len(modules) <= 1 && !reflect.DeepEqual(users, want) {
				t.Fatalf("ServerUsers(%q) = %v, want %v", section, users, want)
			}
			for name := range users {
				if _, ok := want[name]; !ok {
					t.Fatalf("ServerUsers(%q) invents user %q", section, name)
				}
			}
		}
	})
}
