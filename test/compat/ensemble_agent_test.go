//go:build compat

package compat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// agentDeadline bounds one agent command's reply (a client call, which may wait for a
// reconnection) and one wait for an agent event.
const agentDeadline = 20 * time.Second

// agent drives a client program that speaks the line protocol of the ensemble tests'
// helpers (kazoo_ensemble/agent.py, curator/EnsembleRecipes.java): the test writes one
// command per line on its stdin; the program answers each with exactly one line, "ok ..."
// or "error ...", in order; asynchronous lines ("event ...") may come at any time and are
// kept in a log the test waits on.
type agent struct {
	name    string
	stdin   io.WriteCloser
	replies chan string // "ok"/"error" lines, in order; closed at EOF

	mu      sync.Mutex
	events  []string      // "event " lines without the prefix
	changed chan struct{} // closed and replaced on every event
	stderr  strings.Builder
}

// startAgent runs name args as an agent. At cleanup its stdin is closed (the programs
// then exit) and it is killed if still running after agentDeadline; its stderr is shown
// when the test failed.
func startAgent(t *testing.T, label, name string, args ...string) *agent {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	a := &agent{name: label, stdin: stdin, replies: make(chan string, 64), changed: make(chan struct{})}
	cmd.Stderr = agentStderr{a}
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start %s: %v", label, err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			line := sc.Text()
			if ev, ok := strings.CutPrefix(line, "event "); ok {
				a.mu.Lock()
				a.events = append(a.events, ev)
				close(a.changed)
				a.changed = make(chan struct{})
				a.mu.Unlock()
				continue
			}
			a.replies <- line
		}
		close(a.replies)
	}()
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		defer cancel()
		stdin.Close()
		select {
		case err := <-exited:
			if err != nil && !t.Failed() {
				t.Errorf("%s: %v", label, err)
			}
		case <-time.After(agentDeadline):
			t.Errorf("%s did not exit within %v after end of input; killed", label, agentDeadline)
			cancel()
			<-exited
		}
		if t.Failed() {
			a.mu.Lock()
			t.Logf("%s events: %q\n%s stderr (tail):\n%s", label, a.events, label, tail(a.stderr.String(), 16<<10))
			a.mu.Unlock()
		}
	})
	return a
}

type agentStderr struct{ a *agent }

func (w agentStderr) Write(p []byte) (int, error) {
	w.a.mu.Lock()
	defer w.a.mu.Unlock()
	w.a.stderr.Write(p)
	return len(p), nil
}

func tail(s string, n int) string {
	if len(s) > n {
		return s[len(s)-n:]
	}
	return s
}

// call sends one command and returns its reply without the leading "ok " (an "error"
// reply, no reply within agentDeadline or the agent's exit fails the test).
func (a *agent) call(t *testing.T, format string, args ...any) string {
	t.Helper()
	cmd := fmt.Sprintf(format, args...)
	if _, err := fmt.Fprintln(a.stdin, cmd); err != nil {
		t.Fatalf("%s %q: %v", a.name, cmd, err)
	}
	select {
	case reply, ok := <-a.replies:
		if !ok {
			t.Fatalf("%s exited during %q", a.name, cmd)
		}
		rest, ok := strings.CutPrefix(reply, "ok")
		if !ok {
			t.Fatalf("%s %q: %s", a.name, cmd, reply)
		}
		return strings.TrimPrefix(rest, " ")
	case <-time.After(agentDeadline):
		t.Fatalf("%s %q: no reply within %v", a.name, cmd, agentDeadline)
	}
	return ""
}

// mark returns the number of events so far, to wait for events after it.
func (a *agent) mark() int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.events)
}

// eventsSince returns the events from index from on.
func (a *agent) eventsSince(from int) []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.events[from:]...)
}

// waitEvent waits (bounded by agentDeadline) for an event at or after index from equal
// to want, and returns the index after it.
func (a *agent) waitEvent(t *testing.T, from int, want string) int {
	t.Helper()
	deadline := time.After(agentDeadline)
	for {
		a.mu.Lock()
		for i := from; i < len(a.events); i++ {
			if a.events[i] == want {
				a.mu.Unlock()
				return i + 1
			}
		}
		ch := a.changed
		a.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s: no event %q within %v; events since %d: %q", a.name, want, agentDeadline, from, a.eventsSince(from))
		}
	}
}

// compileJava compiles one Java source of this package (e.g. curator/EnsembleRecipes.java)
// against the ZooKeeper and Curator jars into a temporary directory and returns the
// classpath that runs it.
func compileJava(t *testing.T, source string) string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not installed (scripts/install-test-deps.sh)")
	}
	dir := t.TempDir()
	cp := javaClasspath(curatorJars...)
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-d", dir, "-cp", cp, filepath.FromSlash(source)).CombinedOutput()
	if err != nil {
		t.Fatalf("javac %s: %v\n%s", source, err, out)
	}
	return dir + ":" + cp
}
