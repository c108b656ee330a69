package ensemble

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
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// Bounds of the process handling. Every wait is bounded by one of these.
const (
	buildDeadline  = 3 * time.Minute        // go build ./cmd/warden
	readyDeadline  = 15 * time.Second       // from exec to ruok answering imok
	exitDeadline   = 10 * time.Second       // from SIGKILL to the process being reaped
	signalDeadline = 5 * time.Second        // from SIGSTOP/SIGCONT to /proc showing it
	fourLWTimeout  = 500 * time.Millisecond // one four-letter word, dial to last byte
	pollInterval   = 10 * time.Millisecond
	logTail        = 24 << 10 // bytes of each member's log printed on failure
)

// notServing is srvr's whole answer from a member without a leader.
const notServing = "This ZooKeeper instance is not currently serving requests\n"

var (
	buildOnce sync.Once
	buildDir  string // removed by TestMain
	buildBin  string
	buildErr  error
)

// TestMain removes the binary built by wardenBinary.
func TestMain(m *testing.M) {
	code := m.Run()
	if buildDir != "" {
		os.RemoveAll(buildDir)
	}
	os.Exit(code)
}

// wardenBinary builds ./cmd/warden once per test binary, without -race
// whatever the test binary was built with: the servers are the system
// under test, not the code being raced.
func wardenBinary(t *testing.T) string {
	t.Helper()
	buildOnce.Do(func() {
		buildDir, buildErr = os.MkdirTemp("", "warden-ensemble-")
		if buildErr != nil {
			return
		}
		buildBin = filepath.Join(buildDir, "warden")
		ctx, cancel := context.WithTimeout(context.Background(), buildDeadline)
		defer cancel()
		cmd := exec.CommandContext(ctx, "go", "build", "-o", buildBin, "./cmd/warden")
		_, file, _, _ := runtime.Caller(0)
		cmd.Dir = filepath.Join(filepath.Dir(file), "..", "..")
		if out, err := cmd.CombinedOutput(); err != nil {
			buildErr = fmt.Errorf("go build ./cmd/warden: %v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatal(buildErr)
	}
	return buildBin
}

// member is one `warden server` child process on a fixed address, data
// directory and zoo.cfg, started, killed, paused and restarted any number
// of times. Its methods are called from the test goroutine only.
type member struct {
	id      int    // myid
	host    string // the member's own loopback address
	addr    string // client address, host:2181
	bin     string
	cfg     string // zoo.cfg
	log     string // stdout and stderr of every run, appended
	dataDir string

	// Invariant: cmd is nil when no process runs; exited is closed when
	// cmd was reaped; paused means SIGSTOP was delivered and no SIGCONT.
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
}

// running reports whether the member's process was started and not
// killed (a paused member is running).
func (m *member) running() bool { return m.cmd != nil }

// live reports whether the member is meant to answer: running and not
// paused.
func (m *member) live() bool { return m.cmd != nil && !m.paused }

func (m *member) String() string { return fmt.Sprintf("server.%d", m.id) }

// start runs the member and returns how long it took to answer ruok,
// which it does as soon as it listens, serving or not.
func (m *member) start(t *testing.T) time.Duration {
	t.Helper()
	if m.cmd != nil {
		t.Fatalf("%v: start while pid %d runs", m, m.cmd.Process.Pid)
	}
	logf, err := os.OpenFile(m.log, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "==== test: start %s\n", time.Now().Format(time.RFC3339Nano))
	cmd := exec.Command(m.bin, "server", m.cfg)
	cmd.Stdout, cmd.Stderr = logf, logf
	// Pdeathsig: a test binary killed by -timeout leaves no server behind,
	// not even a stopped one.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		logf.Close()
		close(exited)
	}()
	m.cmd, m.exited, m.paused = cmd, exited, false

	deadline := time.NewTimer(readyDeadline)
	defer deadline.Stop()
	for {
		if out, err := fourLetterWord(m.addr, "ruok"); err == nil && out == "imok" {
			return time.Since(begin)
		}
		select {
		case <-exited:
			t.Fatalf("%v exited during start-up: %v", m, cmd.ProcessState)
		case <-deadline.C:
			t.Fatalf("%v at %s did not answer ruok within %v", m, m.addr, readyDeadline)
		case <-time.After(pollInterval):
		}
	}
}

// signalKill sends SIGKILL to the member's process group without waiting;
// reap waits for it. Killing several members "at once" is signalKill on
// each, then reap on each.
func (m *member) signalKill() {
	if m.cmd != nil {
		_ = syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	}
}

// reap waits until the killed process is gone; it does nothing when the
// member is not running.
func (m *member) reap(t *testing.T) {
	t.Helper()
	if m.cmd == nil {
		return
	}
	select {
	case <-m.exited:
	case <-time.After(exitDeadline):
		t.Errorf("%v: pid %d survived SIGKILL for %v", m, m.cmd.Process.Pid, exitDeadline)
	}
	m.cmd, m.paused = nil, false
}

// kill9 kills the member with SIGKILL and waits until it is reaped.
func (m *member) kill9(t *testing.T) {
	t.Helper()
	m.signalKill()
	m.reap(t)
}

// pause stops the member with SIGSTOP and waits until the kernel shows it
// stopped.
func (m *member) pause(t *testing.T) {
	t.Helper()
	if !m.live() {
		t.Fatalf("%v: pause while not live", m)
	}
	if err := syscall.Kill(-m.cmd.Process.Pid, syscall.SIGSTOP); err != nil {
		t.Fatalf("%v: SIGSTOP: %v", m, err)
	}
	m.paused = true
	m.waitProcState(t, func(state byte) bool { return state == 'T' }, "stopped")
}

// resume continues a paused member with SIGCONT and waits until the kernel
// shows it running again.
func (m *member) resume(t *testing.T) {
	t.Helper()
	if !m.paused {
		t.Fatalf("%v: resume while not paused", m)
	}
	if err := syscall.Kill(-m.cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatalf("%v: SIGCONT: %v", m, err)
	}
	m.paused = false
	m.waitProcState(t, func(state byte) bool { return state != 'T' }, "running")
}

func (m *member) waitProcState(t *testing.T, ok func(byte) bool, want string) {
	t.Helper()
	path := fmt.Sprintf("/proc/%d/stat", m.cmd.Process.Pid)
	deadline := time.Now().Add(signalDeadline)
	for {
		b, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v: %v", m, err)
		}
		// "pid (comm) S ...": the state follows the last ')'.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			t.Fatalf("%v: cannot parse %s: %q", m, path, b)
		}
		if ok(b[i+2]) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%v: not %s within %v (state %c)", m, want, signalDeadline, b[i+2])
		}
		time.Sleep(pollInterval)
	}
}

// memberStatus is what srvr says about a member.
type memberStatus struct {
	serving bool
	mode    string // leader, follower, observer; "" when not serving
	zxid    uint64
}

func (s memberStatus) String() string {
	if !s.serving {
		return "not serving"
	}
	return fmt.Sprintf("%s at zxid %#x", s.mode, s.zxid)
}

// status asks the member for srvr. An error means no (complete) answer:
// the process is down, paused, or starting.
func (m *member) status() (memberStatus, error) {
	out, err := fourLetterWord(m.addr, "srvr")
	if err != nil {
		return memberStatus{}, err
	}
	if out == notServing {
		return memberStatus{}, nil
	}
	st := memberStatus{serving: true}
	var haveZxid bool
	for _, line := range strings.Split(out, "\n") {
		switch k, v, _ := strings.Cut(line, ": "); k {
		case "Mode":
			st.mode = v
		case "Zxid":
			st.zxid, err = strconv.ParseUint(strings.TrimPrefix(v, "0x"), 16, 64)
			haveZxid = err == nil
		}
	}
	if st.mode == "" || !haveZxid {
		return memberStatus{}, fmt.Errorf("%v: srvr answer without Mode and Zxid: %q", m, out)
	}
	return st, nil
}

// dumpLog prints the tail of the member's log.
func (m *member) dumpLog(t *testing.T) { dumpFile(t, m.String(), m.log) }

// dumpFile prints the tail of a log file.
func dumpFile(t *testing.T, name, path string) {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Logf("%s log: %v", name, err)
		return
	}
	if len(b) > logTail {
		b = b[len(b)-logTail:]
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			b = b[i+1:]
		}
	}
	t.Logf("---- %s log %s (last %d bytes) ----\n%s", name, path, len(b), b)
}

// fourLetterWord sends a four-letter word and returns the whole answer.
// A member that closes the connection early, or does not finish within
// fourLWTimeout, gives an error.
func fourLetterWord(addr, cmd string) (string, error) {
	conn, err := net.DialTimeout("tcp", addr, fourLWTimeout)
	if err != nil {
		return "", err
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(fourLWTimeout))
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
