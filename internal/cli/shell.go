package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenzk/warden/client"
)

// Config configures a Shell.
type Config struct {
	// Servers is the connect string, "host:port,...[/chroot]". Default
	// "127.0.0.1:2181".
	Servers string
	// Timeout is the requested session timeout, also the bound on
	// connecting and on each request. Default 30s.
	Timeout time.Duration
	// Auth is sent on every (re)connect, as "scheme:credentials" strings
	// (for example "digest:alice:secret").
	Auth []string
	// Out receives command output and watch events; Err receives error
	// messages. Both default to io.Discard. Writes to each are serialised.
	Out, Err io.Writer
	// Color enables ANSI colours (errors in red, watch events in yellow,
	// tree names in blue). Main sets it only when Out is a terminal.
	Color bool
	// Version is what the version command prints after "ZooKeeper CLI
	// version: ". Default "warden".
	Version string
	// Options are extra client options (tests pass dialers here).
	Options []client.Option
}

// Exit statuses, as zkCli.sh's (ExitCode): a command either finished or
// failed; an unknown command is 127.
const (
	ExitOK       = 0
	ExitFailed   = 1
	ExitNotFound = 127
)

// ExitError is a failed command line. Its message has already been
// written to Config.Err; Code is the exit status a one-shot run ends with.
type ExitError struct {
	Code int
	Msg  string
}

func (e *ExitError) Error() string { return e.Msg }

// ErrQuit is returned by Exec for the quit command: the caller ends the
// session loop.
var ErrQuit = errors.New("cli: quit")

// Shell runs command lines against one ZooKeeper session. Exec is called
// from one goroutine at a time; watch events are printed from others.
type Shell struct {
	cfg Config

	// aboveMu serialises the calls of above (which must not hold mu).
	aboveMu sync.Mutex

	// mu serialises every write to Out and Err and guards the fields
	// below it.
	mu sync.Mutex
	// above, when set, prints a message above the line being edited (the
	// interactive line editor sets it while it reads a line).
	above func(string)
	// conn is the current session (nil after close or a failed connect);
	// host is the connect string it was opened with.
	conn *client.Conn
	host string
	// printWatches is zkCli.sh's printwatches switch.
	printWatches bool
	// sessionEvents prints the session's state changes as watch events
	// (interactive mode, as zkCli.sh's default watcher does).
	sessionEvents bool

	// history is zkCli.sh's numbered command history; count is the number
	// of the next command. Only Exec's goroutine touches them.
	history map[int]string
	count   int
}

// New returns a Shell that is not connected yet; call Connect.
func New(cfg Config) *Shell {
	if cfg.Servers == "" {
		cfg.Servers = "127.0.0.1:2181"
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	if cfg.Out == nil {
		cfg.Out = io.Discard
	}
	if cfg.Err == nil {
		cfg.Err = io.Discard
	}
	if cfg.Version == "" {
		cfg.Version = "warden"
	}
	return &Shell{cfg: cfg, host: cfg.Servers, printWatches: true, history: map[int]string{}}
}

// out and errw are Out and Err with every Write under s.mu.
type lockedWriter struct {
	s *Shell
	w func() io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.s.mu.Lock()
	defer l.s.mu.Unlock()
	return l.w().Write(p)
}

func (s *Shell) out() io.Writer { return lockedWriter{s, func() io.Writer { return s.cfg.Out }} }
func (s *Shell) errw() io.Writer {
	return lockedWriter{s, func() io.Writer { return s.cfg.Err }}
}

// notify prints an asynchronous message (a watch event) above the prompt
// when a line is being edited, else on Out.
func (s *Shell) notify(msg string) {
	if s.cfg.Color {
		msg = "\x1b[33m" + msg + "\x1b[0m"
	}
	s.mu.Lock()
	above := s.above
	if above == nil {
		io.WriteString(s.cfg.Out, msg)
	}
	s.mu.Unlock()
	if above != nil {
		// Outside mu: the editor redraws the prompt, which calls Prompt.
		s.aboveMu.Lock()
		above(strings.TrimSuffix(msg, "\n"))
		s.aboveMu.Unlock()
	}
}

// Connect opens a session to servers ("" means the configured servers),
// closing the current one first.
func (s *Shell) Connect(ctx context.Context, servers string) error {
	if servers == "" {
		servers = s.host
	}
	s.closeConn()
	opts := []client.Option{client.WithSessionTimeout(s.cfg.Timeout)}
	for _, a := range s.cfg.Auth {
		scheme, cred, ok := strings.Cut(a, ":")
		if !ok {
			return fmt.Errorf("-auth %q: want scheme:credentials", a)
		}
		opts = append(opts, client.WithAuth(scheme, []byte(cred)))
	}
	opts = append(opts, s.cfg.Options...)
	cctx, cancel := context.WithTimeout(ctx, s.cfg.Timeout)
	defer cancel()
	c, err := client.Connect(cctx, servers, opts...)
	s.mu.Lock()
	s.host = servers
	if err == nil {
		s.conn = c
	}
	follow := s.sessionEvents
	s.mu.Unlock()
	if err != nil {
		return fmt.Errorf("cannot connect to %s: %w", servers, err)
	}
	if follow {
		// The current state comes first: print it now, before a prompt.
		events := c.SessionEvents()
		s.printSession(<-events)
		go func() {
			for ev := range events {
				s.printSession(ev)
			}
		}()
	}
	return nil
}

// printSession prints a session state change as zkCli.sh's default
// watcher does.
func (s *Shell) printSession(ev client.SessionEvent) {
	if ev.State == client.StateConnecting {
		return
	}
	s.mu.Lock()
	show := s.printWatches
	s.mu.Unlock()
	if show {
		s.notify(watchedEvent(stateName(ev.State), "None", "null"))
	}
}

func (s *Shell) closeConn() {
	s.mu.Lock()
	c := s.conn
	s.conn = nil
	s.mu.Unlock()
	if c != nil {
		c.Close()
	}
}

// Close ends the session.
func (s *Shell) Close() error { s.closeConn(); return nil }

// Conn returns the current session, or nil when not connected.
func (s *Shell) Conn() *client.Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.conn
}

// Prompt is zkCli.sh's prompt: "[zk: host(STATE) n] ".
func (s *Shell) Prompt() string {
	s.mu.Lock()
	host, c := s.host, s.conn
	s.mu.Unlock()
	state := "CLOSED"
	if c != nil {
		state = promptState(c.State())
	}
	p := fmt.Sprintf("[zk: %s(%s) %d] ", host, state, s.count)
	if s.cfg.Color {
		p = "\x1b[32m" + p + "\x1b[0m"
	}
	return p
}

// Exec runs one command line: it is recorded in the numbered history, run,
// and its output written. It returns nil, ErrQuit, or an *ExitError whose
// message was already written to Err. Blank lines are ignored.
func (s *Shell) Exec(ctx context.Context, line string) error {
	argv := splitLine(line)
	if len(argv) == 0 {
		return nil
	}
	s.history[s.count] = line
	defer func() { s.count++ }()
	return s.run(ctx, argv)
}

// Run runs one command given as arguments (one-shot mode), without
// recording it in the history.
func (s *Shell) Run(ctx context.Context, argv []string) error {
	if len(argv) == 0 {
		return nil
	}
	return s.run(ctx, argv)
}

func (s *Shell) run(ctx context.Context, argv []string) error {
	cmd, ok := commands[argv[0]]
	if !ok {
		s.usage(s.errw())
		return s.fail(ExitNotFound, "Command not found: Command not found "+argv[0])
	}
	inv, err := parseArgs(cmd, argv[1:])
	if err != nil {
		return s.fail(ExitFailed, err.Error())
	}
	if len(inv.args) < cmd.minArgs {
		return s.fail(ExitFailed, cmd.name+" "+cmd.usage)
	}
	if !cmd.offline && s.Conn() == nil {
		fmt.Fprintln(s.out(), "Not connected")
		return nil
	}
	err = cmd.run(ctx, s, inv)
	switch {
	case err == nil || errors.Is(err, ErrQuit):
		return err
	case errors.As(err, new(*ExitError)):
		return err
	default:
		return s.fail(ExitFailed, err.Error())
	}
}

// fail writes msg to Err and returns it as an *ExitError.
func (s *Shell) fail(code int, msg string) error {
	text := msg
	if s.cfg.Color {
		text = "\x1b[31m" + msg + "\x1b[0m"
	}
	fmt.Fprintln(s.errw(), text)
	return &ExitError{Code: code, Msg: msg}
}

// usage prints zkCli.sh's command summary.
func (s *Shell) usage(w io.Writer) {
	var b strings.Builder
	b.WriteString("ZooKeeper -server host:port -client-configuration properties-file cmd args\n")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(&b, "\t%s %s\n", n, commands[n].usage)
	}
	io.WriteString(w, b.String())
}

// opContext bounds one request by the session timeout.
func (s *Shell) opContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, s.cfg.Timeout)
}

// forward prints the event of a one-shot watch when it fires.
func (s *Shell) forward(ch <-chan client.Event) {
	if ch == nil {
		return
	}
	go func() {
		for ev := range ch {
			s.printEvent(ev)
		}
	}()
}

func (s *Shell) printEvent(ev client.Event) {
	if ev.Err != nil {
		return // the session ended; followSession reports it
	}
	s.mu.Lock()
	show := s.printWatches
	s.mu.Unlock()
	if show {
		s.notify(watchedEvent("SyncConnected", eventTypeName(ev.Type), ev.Path))
	}
}

// Script runs every line of r (a -c script). It stops at the first failing
// command and returns its error; "#" starts a comment line.
func (s *Shell) Script(ctx context.Context, r io.Reader) error {
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	for n, line := range strings.Split(string(b), "\n") {
		line = strings.TrimSpace(line)
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if err := s.Exec(ctx, line); err != nil {
			if errors.Is(err, ErrQuit) {
				return nil
			}
			var ee *ExitError
			if errors.As(err, &ee) {
				ee.Msg = "line " + strconv.Itoa(n+1) + ": " + ee.Msg
			}
			return err
		}
	}
	return nil
}
