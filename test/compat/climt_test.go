//go:build compat

package compat

import (
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"
)

// cliMtPath is the C client's interactive shell (Debian's zookeeper-bin).
const cliMtPath = "/usr/lib/zookeeper/bin/cli_mt"

// cliMtBatch is the command list of TestCliMtBatch, each run as `cli_mt -c CMD` (batch
// mode: one session per command, deterministic output). ls is only used on nodes with
// at most one child: ZooKeeper returns children in hash-set order, which is not part of
// the contract. exists is not here: it is synchronous in cli_mt, and batch mode only
// exits from an asynchronous completion (it is in cliMtSession instead).
var cliMtBatch = []string{
	"create /x",
	"create /x",
	"create /nope/child",
	"create +e /x/e",
	"create2 +s /x/s",
	"create +es /eseq",
	"create +c /c",
	"create +t=5000 /t",
	"set /x hello",
	"get /x",
	"get /nothing",
	"set /nothing a",
	"ls /c",
	"create /c/only",
	"ls /c",
	"ls2 /c",
	"delete /x",
	"delete /nothing",
	"delete /c/only",
	"sync /x",
	"config",
	"reconfig -add 5=127.0.0.1:1:2;3",
}

// cliMtSession is the stdin script of TestCliMtSession: one session, one command at a
// time; until is text that ends the command's reply. cli_mt prints from two threads (the
// input loop and the completion thread), so the next command is only written once the
// whole reply is in; stdin stays open until then (at EOF cli_mt exits at once).
var cliMtSession = []struct{ cmd, until string }{
	{"create /s", "name = /s\n"},
	{"create +e /s/e", "name = /s/e\n"},
	{"get /s/e", "ephemeralOwner = "},
	{"exists /s", ""}, // synchronous; prints only errors
	{"exists /nothing", "Error -101 for /nothing\n"},
	{"wexists /s/w", "Error -101 for /s/w\n"},
	{"create /s/w", "name = /s/w\n"},
	{"addauth digest u:p", ""},
	{"create /s/after-auth", "name = /s/after-auth\n"},
	{"sync /s", "[/s]: rc = 0\n\tname = /s\n"},
	{"delete /s/w", "/s/w: rc = 0\n"},
	{"quit", "Quitting...\n"},
}

// syncBuffer is an output buffer a test can wait on.
type syncBuffer struct {
	mu      sync.Mutex
	b       strings.Builder
	changed chan struct{}
}

func newSyncBuffer() *syncBuffer { return &syncBuffer{changed: make(chan struct{})} }

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.b.Write(p)
	close(s.changed)
	s.changed = make(chan struct{})
	return len(p), nil
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// waitFor blocks until the output contains substr, or fails the test after deadline.
func (s *syncBuffer) waitFor(t *testing.T, substr string, deadline time.Duration) {
	t.Helper()
	timeout := time.After(deadline)
	for {
		s.mu.Lock()
		found := strings.Contains(s.b.String(), substr)
		ch := s.changed
		s.mu.Unlock()
		if found {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("no %q in output within %v; output:\n%s", substr, deadline, s.String())
		}
	}
}

var (
	cliMtTime      = regexp.MustCompile(`(?m)^time = -?\d+ msec\n`) // latency (sometimes negative: a cli_mt bug)
	cliMtStatTime  = regexp.MustCompile(`(?m)^(\t[cm]time ?= ?).*$`)
	cliMtStatZxid  = regexp.MustCompile(`(?m)^(\t[cm]zxid=)([0-9a-f]+)$`) // printed in hex without 0x
	cliMtSessionID = regexp.MustCompile(`(session Id = |ephemeralOwner = )([0-9a-f]+)`)
)

// cliMtRewrite makes cli_mt's output normalisable: drop latencies, give hex numbers
// printed without 0x their prefix, and times their whole line.
func cliMtRewrite(text string) string {
	text = cliMtTime.ReplaceAllString(text, "")
	text = cliMtSessionID.ReplaceAllString(text, "${1}0x$2")
	text = cliMtStatTime.ReplaceAllString(text, "${1}<time>")
	text = cliMtStatZxid.ReplaceAllString(text, "${1}0x$2")
	return text
}

// TestCliMtBatch runs each command of cliMtBatch in cli_mt's batch mode.
func TestCliMtBatch(t *testing.T) {
	t.Parallel()
	extra := map[string]string{"extendedTypesEnabled": "true"}
	differential(t, extra, func(t *testing.T, s *Server) string {
		var tr strings.Builder
		for _, c := range cliMtBatch {
			out := runScript(t, eventDeadline, []byte{}, cliMtPath, "-h", s.Addr, "-c", c)
			fmt.Fprintf(&tr, "%s", cliMtRewrite(out))
		}
		return tr.String()
	})
}

// TestCliMtSession drives cli_mt's interactive shell over stdin in lockstep (see
// cliMtSession): ephemerals and watches live in its one session.
func TestCliMtSession(t *testing.T) {
	t.Parallel()
	differential(t, nil, func(t *testing.T, s *Server) string {
		// stdbuf: cli_mt prints synchronous results (exists) on stdout, which is
		// block-buffered on a pipe; line-buffer it so replies appear as they happen.
		cmd := exec.Command("stdbuf", "-oL", cliMtPath, "-h", s.Addr)
		out := newSyncBuffer()
		cmd.Stdout = out
		cmd.Stderr = out
		stdin, err := cmd.StdinPipe()
		if err != nil {
			t.Fatal(err)
		}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		var waitErr error
		exited := make(chan struct{})
		go func() {
			waitErr = cmd.Wait()
			close(exited)
		}()
		t.Cleanup(func() {
			select {
			case <-exited:
			default:
				_ = cmd.Process.Kill()
				<-exited
			}
		})
		out.waitFor(t, "Got a new session id", eventDeadline)
		for _, c := range cliMtSession {
			if _, err := io.WriteString(stdin, c.cmd+"\n"); err != nil {
				t.Fatalf("write %q: %v", c.cmd, err)
			}
			if c.until != "" {
				out.waitFor(t, c.until, eventDeadline)
			}
		}
		stdin.Close()
		select {
		case <-exited:
			if waitErr != nil {
				t.Errorf("cli_mt: %v", waitErr)
			}
		case <-time.After(eventDeadline):
			t.Fatalf("cli_mt did not exit within %v after end of input", eventDeadline)
		}
		return cliMtRewrite(out.String())
	})
}
