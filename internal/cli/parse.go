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

// parseError is a commons-cli ParseException, which zkCli.sh prints as
// the exception's class name and message.
type parseError struct{ class, msg string }

func (e parseError) Error() string { return "org.apache.commons.cli." + e.class + ": " + e.msg }

func errUnrecognized(token string) error {
	return parseError{"UnrecognizedOptionException", "Unrecognized option: " + token}
}

func errMissingArgument(name string) error {
	return parseError{"MissingArgumentException", "Missing argument for option: " + name}
}

// parseArgs separates flags from positional arguments the way zkCli.sh's
// option parser (commons-cli's DefaultParser) does: options may appear
// anywhere; one-letter options may be bundled (-sw), and a one-letter
// value option takes the rest of its token (-v5, -v=5) or else the next
// token unless that is an option (a negative number is not: -v -1); an
// option given twice keeps its first value; "-5" with no option waiting
// for a value is an unknown option; "--" ends the options (what follows
// is positional, or the command to run for lock and elect). Of the options
// in cmd.group at most one may be given, and one must when
// cmd.groupRequired. --json is Warden's, for commands that take it.
func parseArgs(cmd *command, argv []string) (*invocation, error) {
	inv := &invocation{name: cmd.name, flags: map[string]string{}}
	pending := ""  // a value option waiting for its value
	selected := "" // the option of cmd.group given
	setFlag := func(name, value string) {
		if _, ok := inv.flags[name]; !ok {
			inv.flags[name] = value
		}
	}
	// handle is DefaultParser.handleOption: the option waiting for a
	// value misses it; the group admits one option.
	handle := func(name string) error {
		if pending != "" {
			return errMissingArgument(pending)
		}
		if strings.Contains(cmd.group, name) && len(name) == 1 {
			if selected != "" && selected != name {
				return parseError{"AlreadySelectedException", "The option '" + name +
					"' was specified but an option from this group has already been selected: '" + selected + "'"}
			}
			selected = name
		}
		return nil
	}
	for i := 0; i < len(argv); i++ {
		a := argv[i]
		if pending != "" && (!cmd.isOption(a) || isNumber(a)) {
			setFlag(pending, a)
			pending = ""
			continue
		}
		switch {
		case a == "--":
			if cmd.command {
				inv.rest = argv[i+1:]
			} else {
				inv.args = append(inv.args, argv[i+1:]...)
			}
			i = len(argv)
		case a == "--json" && cmd.json:
			inv.json = true
		case len(a) < 2 || a[0] != '-':
			inv.args = append(inv.args, a)
		case a[1] == '-':
			return nil, errUnrecognized(a)
		default:
			t := a[1:]
			name, value, eq := strings.Cut(t, "=")
			switch {
			case !eq && cmd.known(t):
				if err := handle(t); err != nil {
					return nil, err
				}
				if _, ok := cmd.valueFlag(t); ok {
					pending = t
				} else {
					setFlag(t, "")
				}
			case eq && len(name) == 1:
				if _, ok := cmd.valueFlag(name); !ok {
					return nil, errUnrecognized(a)
				}
				if err := handle(name); err != nil {
					return nil, err
				}
				setFlag(name, value)
			case eq:
				return nil, errUnrecognized(a)
			default:
				// Bundled one-letter options; a value option takes the
				// rest of the token.
				for j := 1; j < len(a); j++ {
					c := a[j : j+1]
					if !cmd.known(c) {
						return nil, errUnrecognized(a)
					}
					if err := handle(c); err != nil {
						return nil, err
					}
					if _, ok := cmd.valueFlag(c); !ok {
						setFlag(c, "")
						continue
					}
					if j+1 < len(a) {
						setFlag(c, a[j+1:])
					} else {
						pending = c
					}
					break
				}
			}
		}
	}
	if pending != "" {
		return nil, errMissingArgument(pending)
	}
	if cmd.groupRequired && selected == "" {
		return nil, parseError{"MissingOptionException", "Missing required option: [" + cmd.groupUsage + "]"}
	}
	return inv, nil
}

// isNumber is DefaultParser.isNegativeNumber's test (Double.parseDouble):
// such a token is a value even where it looks like an option.
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
