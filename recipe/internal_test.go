package recipe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"regexp"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
)

// startLockServer starts an in-process Warden with its expiry timers off
// and a fake clock: sessions expire only when a test calls ExpireSessions.
func startLockServer(t testing.TB) *servertest.Server {
	t.Helper()
	return servertest.Start(t)
}

// lockConn opens a session to srv, closed at cleanup.
func lockConn(t testing.TB, srv *servertest.Server, opts ...client.Option) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, srv.Addr().String(), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// testCtx bounds a test's blocking calls.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func TestSequenceOf(t *testing.T) {
	for _, tc := range []struct {
		name string
		seq  int64
		ok   bool
	}{
		{"lock-0000000042", 42, true},
		{"_c_0f8d3e6a-1b2c-4d5e-8f90-123456789abc-__WRIT__0000000007", 7, true},
		{"lock-", 0, false},
		{"short", 0, false},
		{"lock-00000000x1", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			seq, ok := sequenceOf(tc.name)
			if seq != tc.seq || ok != tc.ok {
				t.Errorf("sequenceOf(%q) = %d, %v; want %d, %v", tc.name, seq, ok, tc.seq, tc.ok)
			}
		})
	}
}

func TestSortBySequence(t *testing.T) {
	names := []string{
		"_c_b-__READ__0000000003",
		"plain",
		"_c_a-__WRIT__0000000001",
		"_c_c-lock-0000000010",
		"_c_d-__READ__0000000002",
	}
	sortBySequence(names)
	want := []string{
		"_c_a-__WRIT__0000000001",
		"_c_d-__READ__0000000002",
		"_c_b-__READ__0000000003",
		"_c_c-lock-0000000010",
		"plain",
	}
	if fmt.Sprint(names) != fmt.Sprint(want) {
		t.Errorf("sorted = %v, want %v", names, want)
	}
}

func TestEnsureParentsAndProtectedCreate(t *testing.T) {
	srv := startLockServer(t)
	c := lockConn(t, srv)
	ctx := testCtx(t)

	p, err := protectedCreate(ctx, c, "/a/b/c", "lock-", []byte("x"), client.EphemeralSequential, client.OpenACL)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile(`^/a/b/c/_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-lock-[0-9]{10}$`)
	if !re.MatchString(p) {
		t.Errorf("protected path %q does not match Curator's layout", p)
	}
	for _, dir := range []string{"/a", "/a/b", "/a/b/c"} {
		st, ok, err := c.Exists(ctx, dir)
		if err != nil || !ok || st.EphemeralOwner != 0 {
			t.Errorf("parent %s: exists=%v err=%v stat=%+v, want a persistent container", dir, ok, err, st)
		}
	}
	// findProtected recognises the node by its UUID prefix, as after a
	// connection loss.
	prefix := p[len("/a/b/c/") : len("/a/b/c/")+len("_c_")+36+1]
	got, _, found, err := findProtected(ctx, c, "/a/b/c", prefix)
	if err != nil || !found || got != p {
		t.Errorf("findProtected = %q, %v, %v; want %q", got, found, err, p)
	}
	if _, _, found, _ := findProtected(ctx, c, "/a/b/c", "_c_"+newUUID()+"-"); found {
		t.Error("findProtected found a node for a fresh UUID")
	}
	if err := ensureParents(ctx, c, "/a/b/c"); err != nil {
		t.Errorf("ensureParents on existing path: %v", err)
	}
}

func TestWaitDeleted(t *testing.T) {
	srv := startLockServer(t)
	c := lockConn(t, srv)
	ctx := testCtx(t)
	if err := waitDeleted(ctx, c, "/missing"); err != nil {
		t.Fatalf("waitDeleted(missing) = %v", err)
	}
	if _, err := c.Create(ctx, "/n", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- waitDeleted(ctx, c, "/n") }()
	// A data change must not end the wait.
	if _, err := c.Set(ctx, "/n", []byte("v"), -1); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/n", -1); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatalf("waitDeleted = %v", err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := c.Create(ctx, "/m", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if err := waitDeleted(short, c, "/m"); !errors.Is(err, context.Canceled) {
		t.Errorf("waitDeleted(cancelled) = %v, want context.Canceled", err)
	}
}

// cutConn passes traffic through until armed; then it writes the next
// create request, closes the connection and hides anything read after
// that, so the create reaches the server but its reply is lost
// (ErrConnectionLoss). It follows the frames of the stream (the first is
// the connect request) whatever the write boundaries.
type cutConn struct {
	net.Conn
	armed   *atomic.Bool
	cut     atomic.Bool
	pending []byte // written bytes not yet forming a whole frame
	frames  int
}

func (c *cutConn) Read(b []byte) (int, error) {
	n, err := c.Conn.Read(b)
	if c.cut.Load() {
		return 0, net.ErrClosed
	}
	return n, err
}

func (c *cutConn) Write(b []byte) (int, error) {
	c.pending = append(c.pending, b...)
	for len(c.pending) >= 4 {
		size := int(binary.BigEndian.Uint32(c.pending))
		if len(c.pending) < 4+size {
			break
		}
		frame := c.pending[4 : 4+size]
		c.pending = c.pending[4+size:]
		c.frames++
		if c.frames == 1 || len(frame) < 8 || !c.armed.Load() {
			continue
		}
		op := wire.OpCode(binary.BigEndian.Uint32(frame[4:8]))
		if op == wire.OpCreate || op == wire.OpCreate2 {
			c.armed.Store(false)
			c.cut.Store(true)
		}
	}
	n, err := c.Conn.Write(b)
	if c.cut.Load() {
		c.Conn.Close()
	}
	return n, err
}

// TestProtectedCreateAfterConnectionLoss: the reply to a sequential
// create is lost; the retry must find the node by its UUID rather than
// create a second one.
func TestProtectedCreateAfterConnectionLoss(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	var armed atomic.Bool
	var d net.Dialer
	c := lockConn(t, srv, client.WithBackoff(time.Millisecond, 10*time.Millisecond),
		client.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
			nc, err := d.DialContext(ctx, network, addr)
			if err != nil {
				return nil, err
			}
			return &cutConn{Conn: nc, armed: &armed}, nil
		}))
	if err := ensureParents(ctx, c, "/pc"); err != nil {
		t.Fatal(err)
	}
	armed.Store(true)
	p, err := protectedCreate(ctx, c, "/pc", "lock-", nil, client.EphemeralSequential, client.OpenACL)
	if err != nil {
		t.Fatal(err)
	}
	if armed.Load() {
		t.Fatal("the connection was never cut")
	}
	kids, _, err := c.Children(ctx, "/pc")
	if err != nil || len(kids) != 1 || joinPath("/pc", kids[0]) != p {
		t.Fatalf("children after a lost create reply = %v, %v; want only %s", kids, err, p)
	}
}
