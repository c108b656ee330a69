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

// Usage is `warden cli`'s synopsis; the flags follow it in the help.
const Usage = `Usage:
  warden cli [flags]                     interactive shell
  warden cli [flags] <command> [args]    run one command and exit
  warden cli [flags] -c <file>           run a script ("-" for stdin)
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
	fs.Usage = func() { fmt.Fprint(stderr, Usage+"\nFlags:\n"); fs.PrintDefaults() }
	run := Flags(fs)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return 2
	}
	return run(fs.Args(), stdin, stdout, stderr, version)
}

// Flags defines `warden cli`'s flags on fs and returns the function that
// runs the shell once fs has parsed them: args are the arguments left
// after the flags (a command and its arguments, or none), and the result
// is the exit status. It lets cmd/warden parse the flags itself, for its
// help and shell completion.
func Flags(fs *flag.FlagSet) func(args []string, stdin io.Reader, stdout, stderr io.Writer, version string) int {
	f := &mainFlags{}
	fs.StringVar(&f.servers, "server", "127.0.0.1:2181", "servers to connect to, `host:port,...[/chroot]`")
	fs.StringVar(&f.timeout, "timeout", "30000", "session timeout: milliseconds, or a Go duration such as 10s")
	fs.Var(&f.auth, "auth", "authenticate as `scheme:credentials` (repeatable), e.g. digest:alice:secret")
	fs.StringVar(&f.script, "c", "", "run the commands of `file` (\"-\": stdin), stopping at the first failure")
	fs.StringVar(&f.history, "history", defaultHistory(), "history `file` of the interactive shell (\"\": none)")
	return f.run
}

// mainFlags are the values of `warden cli`'s flags.
type mainFlags struct {
	servers, timeout, script, history string
	auth                              multiFlag
}

func (f *mainFlags) run(args []string, stdin io.Reader, stdout, stderr io.Writer, version string) int {
	d, err := parseTimeout(f.timeout)
	if err != nil {
		fmt.Fprintf(stderr, "warden cli: -timeout %q: %v\n", f.timeout, err)
		return 2
	}
	sh := New(Config{
		Servers: f.servers, Timeout: d, Auth: f.auth, Out: stdout, Err: stderr,
		Color: isTerminal(stdout) && os.Getenv("NO_COLOR") == "", Version: version,
	})
	defer sh.Close()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	interactive := len(args) == 0 && f.script == "" && isTerminal(stdin)
	if interactive {
		sh.sessionEvents = true
		fmt.Fprintf(stdout, "Connecting to %s\n", f.servers)
	}
	if err := sh.Connect(ctx, ""); err != nil {
		fmt.Fprintln(stderr, err)
		if !interactive {
			return ExitFailed
		}
	}
	switch {
	case len(args) > 0:
		return exitStatus(sh.Run(ctx, args))
	case f.script != "":
		r := stdin
		if f.script != "-" {
			f, err := os.Open(f.script)
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
		return exitStatus(sh.Interactive(f.history))
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
