package cli

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// splitLine splits a command line into arguments as zkCli.sh does: white
// space separates, and a word in single or double quotes is one argument
// with the quotes removed. An unterminated quote runs to the end of the line.
func splitLine(line string) []string {
	var args []string
	i := 0
	for i < len(line) {
		for i < len(line) && isSpace(line[i]) {
			i++
		}
		if i >= len(line) {
			break
		}
		if q := line[i]; q == '"' || q == '\'' {
			end := strings.IndexByte(line[i+1:], q)
			if end < 0 {
				args = append(args, line[i+1:])
				break
			}
			args = append(args, line[i+1:i+1+end])
			i += end + 2
			continue
		}
		start := i
		for i < len(line) && !isSpace(line[i]) {
			i++
		}
		args = append(args, line[start:i])
	}
	return args
}

func isSpace(c byte) bool { return c == ' ' || c == '\t' || c == '\n' || c == '\r' }

// invocation is one parsed command: its flags and positional arguments.
type invocation struct {
	name  string
	flags map[string]string // flag name -> value ("" for a boolean flag)
	args  []string          // positional arguments, in order
	rest  []string          // arguments after "--" (lock, elect)
	json  bool              // --json was given
}

func (inv *invocation) has(flag string) bool { _, ok := inv.flags[flag]; return ok }

// errUnrecognized is commons-cli's message for an unknown option, which
// zkCli.sh prints verbatim.
type errUnrecognized string

func (e errUnrecognized) Error() string {
	return "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: " + string(e)
}

// parseArgs separates flags from positional arguments the way zkCli.sh's
// option parser does: options may appear anywhere, one-letter boolean
// options may be bundled (-sw), a value option takes the next argument,
// negative numbers are arguments, and "--" ends the options.
func parseArgs(cmd *command, argv []string) (*invocation, error) {
	inv := &invocation{name: cmd.name, flags: map[string]string{}}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		switch {
		case a == "--":
			inv.rest = argv[i+1:]
			return inv, nil
		case a == "--json" && cmd.json:
			inv.json = true
		case len(a) < 2 || a[0] != '-' || isNumber(a):
			inv.args = append(inv.args, a)
		default:
			name := strings.TrimLeft(a, "-")
			if v, ok := cmd.valueFlag(name); ok {
				if i+1 >= len(argv) {
					return nil, fmt.Errorf("Missing argument for option: %s", v)
				}
				i++
				inv.flags[v] = argv[i]
				continue
			}
			if a[1] == '-' {
				return nil, errUnrecognized(a)
			}
			for _, c := range name {
				if !strings.ContainsRune(cmd.bools, c) {
					return nil, errUnrecognized(a)
				}
				inv.flags[string(c)] = ""
			}
		}
	}
	return inv, nil
}

func isNumber(s string) bool {
	_, err := strconv.ParseFloat(s, 64)
	return err == nil
}

// validatePath applies ZooKeeper's path rules (PathUtils.validatePath),
// with its messages. A sequential create may end in "/".
func validatePath(p string, sequential bool) error {
	if sequential {
		p += "1"
	}
	switch {
	case p == "":
		return errors.New("Path length must be > 0")
	case p[0] != '/':
		return errors.New("Path must start with / character")
	case p == "/":
		return nil
	case p[len(p)-1] == '/':
		return errors.New("Path must not end with / character")
	}
	at := 1 // offset of seg in p
	for _, seg := range strings.Split(p[1:], "/") {
		switch {
		case seg == "":
			return fmt.Errorf("Invalid path string \"%s\" caused by empty node name specified @%d", p, at)
		case seg == "." || seg == "..":
			return fmt.Errorf("Invalid path string \"%s\" caused by relative paths not allowed @%d", p, at)
		case strings.ContainsRune(seg, 0):
			return fmt.Errorf("Invalid path string \"%s\" caused by null character not allowed @%d", p, at)
		}
		at += len(seg) + 1
	}
	return nil
}
