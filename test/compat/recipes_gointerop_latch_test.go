//go:build compat

package compat

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

// latchInteropWait bounds each step of the interop test (a Java latch start,
// an election).
const latchInteropWait = 20 * time.Second

// TestLeaderLatchGoCuratorInterop puts Go recipe.LeaderLatch participants and
// Apache Curator LeaderLatch participants (curator/LatchInterop.java) in one
// election, interleaved in the queue. Round by round, the participant with
// the lowest node must be the only one holding leadership on either side,
// both libraries must agree on the leader and the queue, and closing the
// leader must hand over to the next, Go or Java.
func TestLeaderLatchGoCuratorInterop(t *testing.T) {
	cp := compileLatchInterop(t)
	for _, kind := range serverKinds() {
		t.Run(kind, func(t *testing.T) {
			s := startKind(t, kind, nil)
			runLatchInterop(t, s, cp)
		})
	}
}

func runLatchInterop(t *testing.T, s *Server, cp string) {
	const path = "/interop/latch"
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	defer cancel()
	j := startLatchInterop(t, cp, s.Addr, path)

	observer, err := client.Connect(ctx, s.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer observer.Close()
	view := recipe.NewLeaderLatch(observer, path, "observer") // never started: only reads

	order := []string{"j0", "g0", "j1", "g1", "g2", "j2"}
	goLatches := map[string]*recipe.LeaderLatch{}
	for _, id := range order {
		if strings.HasPrefix(id, "j") {
			if reply := j.call(t, "add "+id, "added "+id); !strings.Contains(reply, "-latch-") {
				t.Fatalf("Curator node %q is not a latch node", reply)
			}
			continue
		}
		c, err := client.Connect(ctx, s.Addr)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		l := recipe.NewLeaderLatch(c, path, id)
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		defer l.Close(context.Background())
		goLatches[id] = l
	}

	remaining := slices.Clone(order)
	for round := 0; len(remaining) > 0; round++ {
		want := remaining[0]
		ps, err := view.Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var queue []string
		for _, p := range ps {
			queue = append(queue, p.ID)
		}
		if !slices.Equal(queue, remaining) {
			t.Fatalf("round %d: Go sees queue %v, want %v", round, queue, remaining)
		}

		if l, ok := goLatches[want]; ok {
			if _, err := l.Await(ctx); err != nil {
				t.Fatalf("round %d: Go leader %s: %v", round, want, err)
			}
		} else {
			j.awaitElected(t, want)
		}

		var goLeaders []string
		for id, l := range goLatches {
			if l.IsLeader() {
				goLeaders = append(goLeaders, id)
			}
		}
		reply := j.call(t, "leaders", "leaders ")
		f := strings.Fields(reply)
		javaLeaders := f[1]
		curatorLeader := strings.TrimPrefix(f[2], "leader=")
		curatorQueue := strings.TrimPrefix(f[3], "queue=")
		t.Logf("round %d: want %s; Go leaders %v; Curator: %s", round, want, goLeaders, reply)
		all := goLeaders
		if javaLeaders != "-" {
			all = append(all, strings.Split(javaLeaders, ",")...)
		}
		if len(all) != 1 || all[0] != want {
			t.Errorf("round %d: leaders %v, want exactly [%s]", round, all, want)
		}
		if curatorLeader != "-" && curatorLeader != want {
			t.Errorf("round %d: Curator's getLeader = %s, want %s", round, curatorLeader, want)
		}
		if curatorQueue != "-" && curatorQueue != strings.Join(remaining, ",") {
			t.Errorf("round %d: Curator's getParticipants = %s, want %s", round, curatorQueue, strings.Join(remaining, ","))
		}

		if l, ok := goLatches[want]; ok {
			if err := l.Close(ctx); err != nil {
				t.Fatal(err)
			}
			delete(goLatches, want)
		} else {
			j.call(t, "close "+want, "closed "+want)
		}
		remaining = remaining[1:]
	}
	j.call(t, "quit", "bye")
}

// compileLatchInterop compiles curator/LatchInterop.java into a temporary
// directory and returns the classpath that runs it.
func compileLatchInterop(t *testing.T) string {
	t.Helper()
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not installed (scripts/install-test-deps.sh)")
	}
	dir := t.TempDir()
	cp := javaClasspath(curatorJars...)
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-d", dir, "-cp", cp,
		filepath.Join("curator", "LatchInterop.java")).CombinedOutput()
	if err != nil {
		t.Fatalf("javac LatchInterop.java: %v\n%s", err, out)
	}
	return dir + ":" + cp
}

// latchInterop drives a running LatchInterop JVM.
type latchInterop struct {
	stdin   io.WriteCloser
	replies chan string // command replies, in order
	elected chan string // ids from "elected <id>" lines
}

// startLatchInterop starts LatchInterop against addr; at cleanup its stdin is
// closed (it then exits) and it is killed after recipeDeadline at the latest.
func startLatchInterop(t *testing.T, cp, addr, path string) *latchInterop {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	cmd := exec.CommandContext(ctx, "java", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp, "LatchInterop", addr, path)
	cmd.WaitDelay = 5 * time.Second
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr strings.Builder
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		cancel()
		t.Fatal(err)
	}
	j := &latchInterop{stdin: stdin, replies: make(chan string, 64), elected: make(chan string, 64)}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			line := sc.Text()
			switch {
			case strings.HasPrefix(line, "elected "):
				j.elected <- strings.TrimPrefix(line, "elected ")
			case strings.HasPrefix(line, "deposed "):
			default:
				j.replies <- line
			}
		}
		close(j.replies)
	}()
	t.Cleanup(func() {
		defer cancel()
		stdin.Close()
		if err := cmd.Wait(); err != nil && !t.Failed() {
			t.Errorf("LatchInterop: %v", err)
		}
		if t.Failed() {
			t.Logf("LatchInterop stderr:\n%s", stderr.String())
		}
	})
	return j
}

// call sends a command and returns its reply, which must start with want.
func (j *latchInterop) call(t *testing.T, cmd, want string) string {
	t.Helper()
	if _, err := fmt.Fprintln(j.stdin, cmd); err != nil {
		t.Fatalf("LatchInterop %q: %v", cmd, err)
	}
	select {
	case reply, ok := <-j.replies:
		if !ok {
			t.Fatalf("LatchInterop exited during %q", cmd)
		}
		if !strings.HasPrefix(reply, want) {
			t.Fatalf("LatchInterop %q replied %q, want %q...", cmd, reply, want)
		}
		return reply
	case <-time.After(latchInteropWait):
		t.Fatalf("LatchInterop %q: no reply in %v", cmd, latchInteropWait)
	}
	return ""
}

// awaitElected waits for the Java participant id to report leadership; any
// other Java participant being elected first is a failure.
func (j *latchInterop) awaitElected(t *testing.T, id string) {
	t.Helper()
	select {
	case got := <-j.elected:
		if got != id {
			t.Fatalf("Curator participant %s elected, want %s", got, id)
		}
	case <-time.After(latchInteropWait):
		t.Fatalf("Curator participant %s never elected", id)
	}
}
