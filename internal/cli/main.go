package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

const mainUsage = `Usage:
  warden cli [flags]                     interactive shell
  warden cli [flags] <command> [args]    run one command and exit
  warden cli [flags] -c <file>           run a script ("-" for stdin)

Flags:
`

// multiFlag collects a repeatable string flag.
type multiFlag []string

func (m *multiFlag) String() string     { return strings.Join(*m, ",") }
func (m *multiFlag) Set(v string) error { *m = append(*m, v); return nil }

// Main is `warden cli`: it parses args (without the "cli" word), runs the
// interactive shell, one command or a script, and returns the exit status.
// version is what the version command prints.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer, version string) int {
	fs := flag.NewFlagSet("warden cli", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() { fmt.Fprint(stderr, mainUsage); fs.PrintDefaults() }
	servers := fs.String("server", "127.0.0.1:2181", "servers to connect to, `host:port,...[/chroot]`")
	timeout := fs.String("timeout", "30000", "session timeout: milliseconds, or a Go duration such as 10s")
	var auth multiFlag
	fs.Var(&auth, "auth", "authenticate as `scheme:credentials` (repeatable), e.g. digest:alice:secret")
	script := fs.String("c", "", "run the commands of `file` (\"-\": stdin), stopping at the first failure")
	history := fs.String("history", defaultHistory(), "history `file` of the interactive shell (\"\": none)")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return 2
	}
	d, err := parseTimeout(*timeout)
	if err != nil {
		fmt.Fprintf(stderr, "warden cli: -timeout %q: %v\n", *timeout, err)
		return 2
	}
	sh := New(Config{
		Servers: *servers, Timeout: d, Auth: auth, Out: stdout, Err: stderr,
		Color: isTerminal(stdout) && os.Getenv("NO_COLOR") == "", Version: version,
	})
	defer sh.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	interactive := fs.NArg() == 0 && *script == "" && isTerminal(stdin)
	if interactive {
		sh.sessionEvents = true
		fmt.Fprintf(stdout, "Connecting to %s\n", *servers)
	}
	if err := sh.Connect(ctx, ""); err != nil {
		fmt.Fprintln(stderr, err)
		if !interactive {
			return ExitFailed
		}
	}
	switch {
	case fs.NArg() > 0:
		return exitStatus(sh.Run(ctx, fs.Args()))
	case *script != "":
		r := stdin
		if *script != "-" {
			f, err := os.Open(*script)
			if err != nil {
				fmt.Fprintln(stderr, err)
				return ExitFailed
			}
			defer f.Close()
			r = f
		}
		return exitStatus(sh.Script(ctx, r))
	case interactive:
		stop() // Ctrl-C belongs to the line editor (and to watch/lock/elect)
		return exitStatus(sh.Interactive(*history))
	default:
		return exitStatus(sh.lines(ctx, stdin))
	}
}

// lines runs the lines of a non-terminal stdin as zkCli.sh does: every
// line, whatever fails; the status is the last command's.
func (s *Shell) lines(ctx context.Context, r io.Reader) error {
	sc := bufio.NewScanner(r)
	var last error
	for sc.Scan() {
		err := s.Exec(ctx, sc.Text())
		if errors.Is(err, ErrQuit) {
			return nil
		}
		if strings.TrimSpace(sc.Text()) != "" {
			last = err
		}
	}
	return last
}

func exitStatus(err error) int {
	var ee *ExitError
	switch {
	case err == nil || errors.Is(err, ErrQuit):
		return ExitOK
	case errors.As(err, &ee):
		return ee.Code
	}
	return ExitFailed
}

// parseTimeout accepts zkCli.sh's milliseconds or a Go duration.
func parseTimeout(s string) (time.Duration, error) {
	if ms, err := strconv.Atoi(s); err == nil {
		if ms <= 0 {
			return 0, errors.New("must be positive")
		}
		return time.Duration(ms) * time.Millisecond, nil
	}
	d, err := time.ParseDuration(s)
	if err == nil && d <= 0 {
		err = errors.New("must be positive")
	}
	return d, err
}

func defaultHistory() string {
	home, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return filepath.Join(home, ".warden_history")
}

// isTerminal reports whether v is a character device (a terminal).
func isTerminal(v any) bool {
	f, ok := v.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0 && f.Name() != os.DevNull
}
