// Package proc runs `warden server` processes for process-level tests
// (test/crash, test/ensemble): it builds the binary once, starts a server
// with its output appended to a log file, waits until it answers ruok,
// and stops (SIGTERM), kills (SIGKILL), pauses (SIGSTOP) and resumes
// (SIGCONT) it, waiting each time until the kernel shows the change. Every wait is bounded; a
// test binary killed by -timeout leaves no server behind (Pdeathsig).
package proc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds of the process handling. Every wait is bounded by one of these.
const (
	BuildDeadline  = 3 * time.Minute  // go build ./cmd/warden
	ReadyDeadline  = 15 * time.Second // from exec to ruok answering imok
	ExitDeadline   = 10 * time.Second // from SIGKILL (or SIGTERM) to the process being reaped
	SignalDeadline = 5 * time.Second  // from SIGSTOP/SIGCONT to /proc showing it
	pollInterval   = 10 * time.Millisecond
	logTail        = 24 << 10 // bytes of a log printed on failure
)

var (
	buildOnce sync.Once
	buildDir  string
	buildBin  string
	buildErr  error
)

// Warden builds ./cmd/warden once per test binary, without -race whatever
// the test binary was built with (the servers are the system under test,
// not the code being raced), and returns its path. RemoveBuild deletes it.
func Warden(tb testing.TB) string {
	tb.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "warden-proc-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "warden")
		ctx, cancel := context.WithTimeout(context.Background(), BuildDeadline)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", buildBin, "./cmd/warden")
		_, file, _, _ := runtime.Caller(0)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		tb.Fatal(buildErr)
	}
	return buildBin
}

// RemoveBuild deletes the binary Warden built; call it from TestMain.
func RemoveBuild() {
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
}

// Server is one `warden server CONFIG` process, started, killed, paused
// and restarted any number of times. Its methods are called from one
// goroutine.
type Server struct {
	// Name names the server in failures and logs ("server.2").
	Name string
	// Bin is the warden binary; Config its zoo.cfg.
	Bin, Config string
	// Log collects the output of every run, appended.
	Log string
	// Addr is the client address ruok is asked on.
	Addr string
	// Argv, when set, is the whole command line instead of
	// `Bin server Config`: another server (ZooKeeper), or warden run
	// through a wrapper such as `ip netns exec`. It must exec the server
	// in place, so that signals reach the server itself.
	Argv []string

	// Invariant: cmd is nil when no process runs; exited is closed when
	// cmd was reaped; paused means SIGSTOP was delivered and no SIGCONT.
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
}

// Running reports whether the process was started and not killed (a
// paused process is running).
func (s *Server) Running() bool { return s.cmd != nil }

// Paused reports whether the process is stopped by Pause.
func (s *Server) Paused() bool { return s.paused }

// Exited reports whether the started process has ended without Reap
// having been called: it died by itself, or a kill is not yet reaped.
func (s *Server) Exited() bool {
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return true
	default:
		return false
	}
}

// Pid returns the running process's id, 0 when none runs.
func (s *Server) Pid() int {
	if s.cmd == nil {
		return 0
	}
	return s.cmd.Process.Pid
}

// Start runs the server and returns how long it took to answer ruok,
// which it does as soon as it listens, serving or not.
func (s *Server) Start(tb testing.TB) time.Duration {
	tb.Helper()
	d, err := s.TryStart()
	if err != nil {
		tb.Fatal(err)
	}
	return d
}

// TryStart is Start returning its failure instead of failing the test: a
// server that exited during start-up is reaped (Running is false
// again); one that did not answer in time is left running.
func (s *Server) TryStart() (time.Duration, error) {
	if s.cmd != nil {
		return 0, fmt.Errorf("%s: start while pid %d runs", s.Name, s.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(s.Log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return 0, err
	}
	fmt.Fprintf(logf, "==== test: start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(s.Bin, "server", s.Config)
	if len(s.Argv) > 0 {
		cmd = exec.Command(s.Argv[0], s.Argv[1:]...)
	}
	cmd.Stdout, cmd.Stderr = logf, logf
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		return 0, err
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	s.cmd, s.exited, s.paused = cmd, exited, false

	deadline := time.NewTimer(ReadyDeadline)
	defer deadline.Stop()
	for {
		if out, err := FourLetterWord(s.Addr, "ruok", time.Second); err == nil && out == "imok" {
			return time.Since(begin), nil
		}
		select {
		case <-exited:
			s.cmd = nil
			return 0, fmt.Errorf("%s exited during start-up: %v", s.Name, cmd.ProcessState)
		case <-deadline.C:
			return 0, fmt.Errorf("%s at %s did not answer ruok within %v", s.Name, s.Addr, ReadyDeadline)
		case <-time.After(pollInterval):
		}
	}
}

// SignalKill sends SIGKILL to the process group without waiting; Reap
// waits for it. Killing several servers "at once" is SignalKill on each,
// then Reap on each.
func (s *Server) SignalKill() {
	if s.cmd != nil {
		_ = syscall.Kill(-s.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// Reap waits until the killed process is gone; it does nothing when none
// runs.
func (s *Server) Reap(tb testing.TB) {
	tb.Helper()
	if s.cmd == nil {
		return
	}
	select {
	case <-s.exited:
	case <-time.After(ExitDeadline):
		tb.Errorf("%s: pid %d survived SIGKILL for %v", s.Name, s.cmd.Process.Pid, ExitDeadline)
	}
	s.cmd, s.paused = nil, false
}

// Kill9 kills the process with SIGKILL and waits until it is reaped; it
// does nothing when none runs.
func (s *Server) Kill9(tb testing.TB) {
	tb.Helper()
	s.SignalKill()
	s.Reap(tb)
}

// Stop asks the server to shut down with SIGTERM, as an init system does,
// waits until it has exited and returns how it ended. A server still
// running after ExitDeadline fails the test (and is killed).
func (s *Server) Stop(tb testing.TB) *os.ProcessState {
	tb.Helper()
	if s.cmd == nil || s.paused {
		tb.Fatalf("%s: stop while not running", s.Name)
	}
	if err := syscall.Kill(s.cmd.Process.Pid, syscall.SIGTERM); err != nil {
		tb.Fatalf("%s: SIGTERM: %v", s.Name, err)
	}
	select {
	case <-s.exited:
	case <-time.After(ExitDeadline):
		pid := s.cmd.Process.Pid
		s.Kill9(tb)
		tb.Fatalf("%s: pid %d still running %v after SIGTERM (killed)", s.Name, pid, ExitDeadline)
	}
	st := s.cmd.ProcessState // set by Wait before exited was closed
	s.cmd = nil
	return st
}

// Pause stops the process with SIGSTOP and waits until the kernel shows
// it stopped.
func (s *Server) Pause(tb testing.TB) {
	tb.Helper()
	if s.cmd == nil || s.paused {
		tb.Fatalf("%s: pause while not running", s.Name)
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		tb.Fatalf("%s: SIGSTOP: %v", s.Name, err)
	}
	s.paused = true
	s.waitState(tb, func(state byte) bool { return state == 'T' }, "stopped")
}

// Resume continues a paused process with SIGCONT and waits until the
// kernel shows it running again.
func (s *Server) Resume(tb testing.TB) {
	tb.Helper()
	if !s.paused {
		tb.Fatalf("%s: resume while not paused", s.Name)
	}
	if err := syscall.Kill(-s.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		tb.Fatalf("%s: SIGCONT: %v", s.Name, err)
	}
	s.paused = false
	s.waitState(tb, func(state byte) bool { return state != 'T' }, "running")
}

func (s *Server) waitState(tb testing.TB, ok func(byte) bool, want string) {
	tb.Helper()
	path := fmt.Sprintf("/proc/%d/stat", s.cmd.Process.Pid)
	deadline := time.Now().Add(SignalDeadline)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			tb.Fatalf("%s: %v", s.Name, err)
		}
		// "pid (comm) S ...": the state follows the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			tb.Fatalf("%s: cannot parse %s: %q", s.Name, path, b)
		}
		if ok(b[i+2]) {
			return
		}
		if time.Now().After(deadline) {
			tb.Fatalf("%s: not %s within %v (state %c)", s.Name, want, SignalDeadline, b[i+2])
		}
		time.Sleep(pollInterval)
	}
}

// DumpLog prints the tail of the server's log.
func (s *Server) DumpLog(tb testing.TB) { DumpFile(tb, s.Name, s.Log) }

// DumpFile prints the tail of a log file.
func DumpFile(tb testing.TB, name, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Logf("%s log: %v", name, err)
		return
	}
	if len(b) > logTail {
		b = b[len(b)-logTail:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	tb.Logf("---- %s log %s (last %d bytes) ----\n%s", name, path, len(b), b)
}

// FourLetterWord sends a four-letter word to addr and returns the whole
// answer. A server that closes the connection without answering, or does
// not finish within timeout, gives an error.
func FourLetterWord(addr, cmd string, timeout time.Duration) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(timeout))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		return "", err
	}
	b, err := io.ReadAll(conn)
	if err != nil && !errors.Is(err, io.EOF) {
		return "", err
	}
	if len(b) == 0 {
		return "", fmt.Errorf("%s: empty answer to %s", addr, cmd)
	}
	return string(b), nil
}
