package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime/debug"
	"strings"
	"testing"
)

// commandPaths returns every command's words, parents before subs.
func commandPaths() [][]string {
	var paths [][]string
	var walk func(prefix []string, cmds []*command)
	walk = func(prefix []string, cmds []*command) {
		for _, c := range cmds {
			p := append(append([]string(nil), prefix...), c.name)
			paths = append(paths, p)
			walk(p, c.subs)
		}
	}
	walk(nil, commands)
	return paths
}

func run(args ...string) (code int, stdout, stderr string) {
	var out, errb bytes.Buffer
	code = dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

// TestHelp: every command, nested ones too, answers -h, -help, --help and
// `warden help <command>` with its usage on stdout and status 0.
func TestHelp(t *testing.T) {
	for _, flag := range []string{"-h", "-help", "--help"} {
		code, out, errs := run(flag)
		if code != 0 || !strings.Contains(out, "Usage: warden <command>") || errs != "" {
			t.Errorf("warden %s: exit %d, stdout %q, stderr %q", flag, code, out, errs)
		}
	}
	if code, out, _ := run("help"); code != 0 || !strings.Contains(out, "Commands:") {
		t.Errorf("warden help: exit %d, stdout %q", code, out)
	}
	for _, path := range commandPaths() {
		name := strings.Join(path, " ")
		want := "Usage: warden " + name + " "
		for _, args := range [][]string{
			append(path[:len(path):len(path)], "-h"),
			append(path[:len(path):len(path)], "-help"),
			append(path[:len(path):len(path)], "--help"),
			append([]string{"help"}, path...),
		} {
			t.Run(strings.Join(args, " "), func(t *testing.T) {
				code, out, errs := run(args...)
				if code != 0 || errs != "" {
					t.Fatalf("exit %d, stderr %q; want 0 and nothing", code, errs)
				}
				if !strings.HasPrefix(out, want) {
					t.Fatalf("stdout does not start with %q:\n%s", want, out)
				}
			})
		}
	}
}

// TestBadUsage: a bad flag, an unknown command or a missing subcommand
// exits 2 with the usage on stderr and nothing on stdout.
func TestBadUsage(t *testing.T) {
	cases := [][]string{{}, {"no-such-command"}, {"help", "no-such-command"}, {"snapshot", "peek"}}
	for _, path := range commandPaths() {
		cases = append(cases, append(path[:len(path):len(path)], "-no-such-flag"))
	}
	for _, args := range cases {
		t.Run(strings.Join(args, " "), func(t *testing.T) {
			code, out, errs := run(args...)
			if code != 2 || out != "" {
				t.Fatalf("exit %d, stdout %q; want 2 and nothing", code, out)
			}
			if !strings.Contains(errs, "warden") {
				t.Fatalf("stderr does not explain: %q", errs)
			}
		})
	}
	// Wrong arguments after valid flags: the command's usage error.
	for _, args := range [][]string{
		{"snapshot", "inspect"}, {"wal", "dump", "a", "b"}, {"import-zk", "one"},
		{"status"}, {"version", "extra"}, {"server", "a.cfg", "b.cfg"},
	} {
		code, out, errs := run(args...)
		if code != 2 || out != "" || !strings.Contains(errs, "Usage: warden "+args[0]) {
			t.Errorf("warden %s: exit %d, stdout %q, stderr %q; want 2 and the usage on stderr",
				strings.Join(args, " "), code, out, errs)
		}
	}
}

func TestVersion(t *testing.T) {
	bi := &debug.BuildInfo{Main: debug.Module{Version: "(devel)"}, Settings: []debug.BuildSetting{
		{Key: "vcs.revision", Value: "0123456789abcdef0123"},
		{Key: "vcs.modified", Value: "true"},
		{Key: "vcs.time", Value: "2026-11-24T01:02:03Z"},
	}}
	v := newBuildVersion(bi)
	if got, want := v.short(), "devel+0123456789ab-dirty"; got != want {
		t.Errorf("short = %q, want %q", got, want)
	}
	var b bytes.Buffer
	v.write(&b)
	for _, want := range []string{
		"warden     devel\n",
		"revision   0123456789abcdef0123 (modified)\n",
		"committed  2026-11-24T01:02:03Z\n",
		"go         go1.", " " + v.OS + "/" + v.Arch + "\n",
		"zookeeper  3.", "Zookeeper version: 3.",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("version output lacks %q:\n%s", want, b.String())
		}
	}
	released := newBuildVersion(&debug.BuildInfo{Main: debug.Module{Version: "v1.2.3"}})
	if got := released.short(); got != "v1.2.3" {
		t.Errorf("released short = %q, want v1.2.3", got)
	}
	if got := newBuildVersion(nil).short(); got != "devel" {
		t.Errorf("no build info: short = %q, want devel", got)
	}
}

// TestCompletion: each script names every command and every flag, and
// parses in its shell where that shell is installed.
func TestCompletion(t *testing.T) {
	nodes := completionTree()
	var checked, missing []string
	for _, sh := range completionShells {
		t.Run(sh.name, func(t *testing.T) {
			var b bytes.Buffer
			sh.write(&b, nodes)
			script := b.String()
			for _, n := range nodes {
				for _, w := range n.subs {
					if !strings.Contains(script, w.word) {
						t.Errorf("script lacks %q (of %s)", w.word, n.path)
					}
				}
				for _, w := range n.flags {
					want := w.word
					if sh.name == "fish" { // fish's old-style option: -o name
						want = "-o '" + strings.TrimPrefix(w.word, "-") + "'"
					}
					if !strings.Contains(script, want) {
						t.Errorf("script lacks %q (of %s)", want, n.path)
					}
				}
				if !strings.Contains(script, n.path) {
					t.Errorf("script lacks the command %q", n.path)
				}
			}
			bin, err := exec.LookPath(sh.name)
			if err != nil {
				missing = append(missing, sh.name)
				return
			}
			file := filepath.Join(t.TempDir(), "warden."+sh.name)
			if err := os.WriteFile(file, b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
			if out, err := exec.Command(bin, "-n", file).CombinedOutput(); err != nil {
				t.Fatalf("%s -n: %v\n%s\nscript:\n%s", sh.name, err, out, script)
			}
			checked = append(checked, sh.name)
		})
	}
	t.Logf("syntax checked with: %v; not installed: %v", checked, missing)
	// Every command of the table is in the tree, with its flags.
	if len(nodes) != len(commandPaths())+1 {
		t.Errorf("completion covers %d commands, the table has %d", len(nodes)-1, len(commandPaths()))
	}
}

// TestCompletionBash drives the bash function as bash's completion would.
func TestCompletionBash(t *testing.T) {
	bash, err := exec.LookPath("bash")
	if err != nil {
		t.Skip("bash not installed")
	}
	var b bytes.Buffer
	writeBashCompletion(&b, completionTree())
	tests := []struct {
		words string
		cword int
		want  string
	}{
		{"warden s", 1, "server status snapshot"},
		{"warden snapshot ''", 2, "inspect dump restore"},
		{"warden bench report -p", 3, "-plot -plot-ref"},
		{"warden status -j", 2, "-json"},
		{"warden cli -server h:1 ''", 3, ""},
	}
	for _, tt := range tests {
		script := b.String() + "\nCOMP_WORDS=(" + tt.words + "); COMP_CWORD=" + string(rune('0'+tt.cword)) +
			"; _warden; echo \"${COMPREPLY[*]}\"\n"
		out, err := exec.Command(bash, "-c", script).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", tt.words, err, out)
		}
		if got := strings.TrimSpace(string(out)); got != tt.want {
			t.Errorf("completing %q: %q, want %q", tt.words, got, tt.want)
		}
	}
}
