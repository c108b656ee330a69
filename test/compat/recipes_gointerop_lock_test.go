//go:build compat

package compat

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

// curatorLockNode is the name Curator's InterProcessMutex gives its lock nodes, and so
// must recipe.Lock: protected ("_c_" + UUID + "-") "lock-" + ten-digit sequence.
var curatorLockNode = regexp.MustCompile(`^_c_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}-lock-[0-9]{10}$`)

// TestLockInteropCurator: a Go recipe.Lock and a Curator InterProcessMutex (in a JVM
// running curator/LockInterop.java) share one lock path, against each server. The lock
// passes from Curator to Go and from Go to Curator while the other waits; then both
// processes, with several sessions each, add 1 to a counter node K times under the lock
// at the same time. The total must be exact, and an ephemeral "holder" node created in
// every critical section must never already exist (never two holders).
func TestLockInteropCurator(t *testing.T) {
	if _, err := exec.LookPath("javac"); err != nil {
		t.Skip("javac not installed (scripts/install-test-deps.sh)")
	}
	dir := t.TempDir()
	cp := javaClasspath(curatorJars...)
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	out, err := exec.CommandContext(ctx, "javac", "-nowarn", "-d", dir, "-cp", cp,
		filepath.Join("curator", "LockInterop.java")).CombinedOutput()
	cancel()
	if err != nil {
		t.Fatalf("javac LockInterop.java: %v\n%s", err, out)
	}
	cp = dir + ":" + cp
	for _, kind := range serverKinds() {
		t.Run(kind, func(t *testing.T) {
			lockInterop(t, startKind(t, kind, nil), cp)
		})
	}
}

func lockInterop(t *testing.T, s *Server, cp string) {
	const (
		goSessions, javaThreads, k = 3, 3, 30
		lockPath                   = "/interop/lock"
		counterPath                = "/interop/counter"
		holderPath                 = "/interop/holder"
	)
	ctx, cancel := context.WithTimeout(context.Background(), recipeDeadline)
	defer cancel()
	admin := interopConn(t, ctx, s)
	if _, err := admin.Create(ctx, "/interop", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.Create(ctx, counterPath, []byte("0"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	j := startJavaPeer(t, "java", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp,
		"LockInterop", s.Addr, lockPath, counterPath, holderPath)
	j.expect(ctx, "ready")

	// Curator holds; Go queues behind it and gets the lock when Curator releases.
	goLock := recipe.NewLock(interopConn(t, ctx, s), lockPath)
	j.send("hold")
	j.expect(ctx, "held")
	res := make(chan error, 1)
	go func() {
		_, err := goLock.Acquire(ctx)
		res <- err
	}()
	names := waitChildren(t, ctx, admin, lockPath, 2)
	for _, n := range names {
		if !curatorLockNode.MatchString(n) {
			t.Errorf("lock node %q does not have Curator's layout", n)
		}
	}
	select {
	case err := <-res:
		t.Fatalf("Go acquired while Curator holds the lock (err %v)", err)
	default:
	}
	j.send("release")
	j.expect(ctx, "released")
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("Go Acquire after Curator released: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("Go never got the lock Curator released")
	}

	// Go holds; Curator queues behind it.
	j.send("acquire")
	waitChildren(t, ctx, admin, lockPath, 2)
	j.expectNothing("Curator acquired while Go holds the lock")
	if err := goLock.Release(ctx); err != nil {
		t.Fatal(err)
	}
	j.expect(ctx, "acquired")
	j.send("release")
	j.expect(ctx, "released")

	// Both at once: Go and Curator sessions count under the lock.
	j.send(fmt.Sprintf("count %d %d", javaThreads, k))
	var wg sync.WaitGroup
	errs := make(chan error, goSessions)
	for range goSessions {
		c := interopConn(t, ctx, s)
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs <- countUnderLock(ctx, c, recipe.NewLock(c, lockPath), counterPath, holderPath, k)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	j.expect(ctx, "counted ok")
	data, _, err := admin.Get(ctx, counterPath)
	if want := strconv.Itoa((goSessions + javaThreads) * k); err != nil || string(data) != want {
		t.Errorf("counter = %q, %v; want %s", data, err, want)
	}
	if kids, _, err := admin.Children(ctx, lockPath); err != nil || len(kids) != 0 {
		t.Errorf("lock nodes left: %v, %v", kids, err)
	}
	j.quit(ctx)
}

// countUnderLock takes l k times; inside, it creates the ephemeral holder node (which
// must not exist), adds 1 to counter and deletes the holder node.
func countUnderLock(ctx context.Context, c *client.Conn, l *recipe.Lock, counter, holder string, k int) error {
	for range k {
		if _, err := l.Acquire(ctx); err != nil {
			return fmt.Errorf("go acquire: %w", err)
		}
		err := incrementAsHolder(ctx, c, counter, holder)
		if rerr := l.Release(ctx); err == nil {
			err = rerr
		}
		if err != nil {
			return err
		}
	}
	return nil
}

func incrementAsHolder(ctx context.Context, c *client.Conn, counter, holder string) error {
	if _, err := c.Create(ctx, holder, nil, client.Ephemeral, client.OpenACL); errors.Is(err, client.ErrNodeExists) {
		return errors.New("two holders at once: the holder node already exists")
	} else if err != nil {
		return err
	}
	data, _, err := c.Get(ctx, counter)
	if err != nil {
		return err
	}
	v, err := strconv.Atoi(string(data))
	if err != nil {
		return err
	}
	if _, err := c.Set(ctx, counter, []byte(strconv.Itoa(v+1)), -1); err != nil {
		return err
	}
	return c.Delete(ctx, holder, -1)
}

func interopConn(t *testing.T, ctx context.Context, s *Server) *client.Conn {
	t.Helper()
	c, err := client.Connect(ctx, s.Addr, client.WithSessionTimeout(15*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// waitChildren returns p's children once there are n of them, waiting on child watches.
func waitChildren(t *testing.T, ctx context.Context, c *client.Conn, p string, n int) []string {
	t.Helper()
	for {
		kids, _, ch, err := c.ChildrenW(ctx, p)
		if err != nil && !errors.Is(err, client.ErrNoNode) {
			t.Fatalf("children of %s: %v", p, err)
		}
		if len(kids) == n {
			return kids
		}
		if errors.Is(err, client.ErrNoNode) {
			// No child watch on a missing node: wait for it to appear.
			_, ok, ech, err := c.ExistsW(ctx, p)
			if err != nil {
				t.Fatal(err)
			}
			if ok {
				continue
			}
			ch = ech
		}
		select {
		case <-ch:
		case <-ctx.Done():
			t.Fatalf("%s never had %d children (last %v)", p, n, kids)
		}
	}
}

// javaPeer is a JVM driven line by line over its standard input and output.
type javaPeer struct {
	t      *testing.T
	stdin  io.WriteCloser
	lines  chan string
	exited chan error
	stderr *bytes.Buffer
}

func startJavaPeer(t *testing.T, name string, args ...string) *javaPeer {
	t.Helper()
	cmd := exec.Command(name, args...)
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	j := &javaPeer{t: t, stdin: stdin, lines: make(chan string, 64), exited: make(chan error, 1), stderr: &bytes.Buffer{}}
	cmd.Stderr = j.stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			j.lines <- sc.Text()
		}
		close(j.lines)
		j.exited <- cmd.Wait()
	}()
	t.Cleanup(func() {
		cmd.Process.Kill()
		select {
		case <-j.exited:
		case <-time.After(stopDeadline):
		}
		if t.Failed() {
			t.Logf("java stderr:\n%s", j.stderr.String())
		}
	})
	return j
}

func (j *javaPeer) send(line string) {
	j.t.Helper()
	if _, err := io.WriteString(j.stdin, line+"\n"); err != nil {
		j.t.Fatalf("send %q to java: %v", line, err)
	}
}

func (j *javaPeer) expect(ctx context.Context, want string) {
	j.t.Helper()
	select {
	case got, ok := <-j.lines:
		if !ok {
			j.t.Fatalf("java exited while %q was expected", want)
		}
		if got != want {
			j.t.Fatalf("java said %q, want %q", got, want)
		}
	case <-ctx.Done():
		j.t.Fatalf("java never said %q", want)
	}
}

// expectNothing fails if java has already said something.
func (j *javaPeer) expectNothing(why string) {
	j.t.Helper()
	select {
	case got := <-j.lines:
		j.t.Fatalf("%s: java said %q", why, got)
	default:
	}
}

func (j *javaPeer) quit(ctx context.Context) {
	j.t.Helper()
	j.send("quit")
	for {
		select {
		case line, ok := <-j.lines:
			if ok {
				j.t.Errorf("java said %q after quit", strings.TrimSpace(line))
				continue
			}
			select {
			case err := <-j.exited:
				if err != nil {
					j.t.Errorf("java exit: %v", err)
				}
				j.exited <- err
			case <-ctx.Done():
				j.t.Error("java did not exit after quit")
			}
			return
		case <-ctx.Done():
			j.t.Error("java did not exit after quit")
			return
		}
	}
}
