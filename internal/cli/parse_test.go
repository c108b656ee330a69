package cli

import (
	"fmt"
	"testing"
)

// TestParseArgs pins down commons-cli DefaultParser's rules as zkCli.sh
// applies them (each case checked with zkCli.sh 3.8 where it prints).
func TestParseArgs(t *testing.T) {
	tests := []struct {
		cmd, line string
		want      string // flags and args, or the error
	}{
		{"set", "-v 5 /a x", "flags=map[v:5] args=[/a x]"},
		{"set", "-v5 /a x", "flags=map[v:5] args=[/a x]"},
		{"set", "-v=5 /a x", "flags=map[v:5] args=[/a x]"},
		{"set", "/a x -v 1 -v 2", "flags=map[v:1] args=[/a x]"},
		{"set", "-v -1 /a x", "flags=map[v:-1] args=[/a x]"},
		{"set", "-v -x /a", "flags=map[v:-x] args=[/a]"},
		{"set", "/a -1", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -1"},
		{"set", "/a x -v", "org.apache.commons.cli.MissingArgumentException: Missing argument for option: v"},
		{"set", "-v -s /a x", "org.apache.commons.cli.MissingArgumentException: Missing argument for option: v"},
		{"set", "-s -- -v 1", "flags=map[s:] args=[-v 1]"},
		{"set", "--v 1", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: --v"},
		{"ls", "-sw /", "flags=map[s: w:] args=[/]"},
		{"ls", "-sx /", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -sx"},
		{"ls", "- /", "flags=map[] args=[- /]"},
		{"lock", "/l -- echo -v", "flags=map[] args=[/l] rest=[echo -v]"},
		{"setquota", "/q", "org.apache.commons.cli.MissingOptionException: Missing required option: [" + quotaGroup + "]"},
		{"setquota", "-n 1 -b", "org.apache.commons.cli.AlreadySelectedException: The option 'b' was specified but an option from this group has already been selected: 'n'"},
		{"setquota", "-n 1 -n 2 /q", "flags=map[n:1] args=[/q]"},
		{"delquota", "-nn /q", "flags=map[n:] args=[/q]"},
		{"delquota", "-bB /q", "org.apache.commons.cli.AlreadySelectedException: The option 'B' was specified but an option from this group has already been selected: 'b'"},
		{"delquota", "/q", "flags=map[] args=[/q]"},
	}
	for _, tc := range tests {
		t.Run(tc.cmd+" "+tc.line, func(t *testing.T) {
			inv, err := parseArgs(commands[tc.cmd], splitLine(tc.line))
			got := ""
			if err != nil {
				got = err.Error()
			} else {
				got = fmt.Sprintf("flags=%v args=%v", inv.flags, inv.args)
				if inv.rest != nil {
					got += fmt.Sprintf(" rest=%v", inv.rest)
				}
			}
			if got != tc.want {
				t.Errorf("got  %s\nwant %s", got, tc.want)
			}
		})
	}
}
