package client

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait is the upper bound for anything a test waits for.
const wait = 10 * time.Second

// startServer starts an in-process Warden (timers off, fake clock) on addr
// ("" for any loopback port).
func startServer(t *testing.T, addr string, mutate func(*server.Config)) *servertest.Server {
	t.Helper()
	var opts []servertest.Option
	if addr != "" {
		opts = append(opts, servertest.WithAddr(addr))
	}
	if mutate != nil {
		opts = append(opts, servertest.WithConfig(mutate))
	}
	return servertest.Start(t, opts...)
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a Conn to servers and closes it at cleanup.
func connect(t *testing.T, servers string, opts ...Option) *Conn {
	t.Helper()
	c, err := Connect(ctxT(t), servers, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// sessionWatcher collects session events so tests can wait for a state.
type sessionWatcher struct {
	t  *testing.T
	ch <-chan SessionEvent
}

func (w sessionWatcher) waitFor(st State) SessionEvent {
	w.t.Helper()
	timer := time.NewTimer(wait)
	defer timer.Stop()
	for {
		select {
		case ev, ok := <-w.ch:
			if !ok {
				w.t.Fatalf("session events closed while waiting for %v", st)
			}
			if ev.State == st {
				return ev
			}
		case <-timer.C:
			w.t.Fatalf("no %v session event within %v", st, wait)
		}
	}
}

func waitEvent(t *testing.T, ch <-chan Event) Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(wait):
		t.Fatal("no watch event")
		return Event{}
	}
}

func noEvent(t *testing.T, ch <-chan Event) {
	t.Helper()
	select {
	case ev := <-ch:
		t.Fatalf("unexpected event %+v", ev)
	default:
	}
}

func must[T any](t *testing.T) func(T, error) T {
	return func(v T, err error) T {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
}

// cutDialer dials TCP and remembers the connections so a test can cut
// them, pause their reads and hold new dials.
type cutDialer struct {
	mu    sync.Mutex
	conns []*cutConn
	hold  chan struct{} // non-nil: dials wait until it is closed
	dials int
}

type cutConn struct {
	net.Conn
	closed    chan struct{}
	closeOnce sync.Once

	mu     sync.Mutex
	paused chan struct{} // non-nil: read data is held until it is closed
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	hold := d.hold
	d.dials++
	d.mu.Unlock()
	if hold != nil {
		select {
		case <-hold:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	var nd net.Dialer
	nc, err := nd.DialContext(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	cc := &cutConn{Conn: nc, closed: make(chan struct{})}
	d.mu.Lock()
	d.conns = append(d.conns, cc)
	d.mu.Unlock()
	return cc, nil
}

func (d *cutDialer) last() *cutConn {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.conns[len(d.conns)-1]
}

func (d *cutDialer) holdDials() {
	d.mu.Lock()
	d.hold = make(chan struct{})
	d.mu.Unlock()
}

func (d *cutDialer) releaseDials() {
	d.mu.Lock()
	close(d.hold)
	d.hold = nil
	d.mu.Unlock()
}

// Read holds data read while paused (also by a Read already blocked when
// pause was called) until resume or Close.
func (c *cutConn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	paused := c.paused
	c.mu.Unlock()
	if paused != nil {
		select {
		case <-paused:
		case <-c.closed:
			return 0, net.ErrClosed
		}
	}
	return n, err
}

func (c *cutConn) Close() error {
	c.closeOnce.Do(func() { close(c.closed) })
	return c.Conn.Close()
}

func (d *cutDialer) count() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return len(d.conns)
}

func (c *cutConn) pause() {
	c.mu.Lock()
	c.paused = make(chan struct{})
	c.mu.Unlock()
}

func (c *cutConn) resume() {
	c.mu.Lock()
	if c.paused != nil {
		close(c.paused)
		c.paused = nil
	}
	c.mu.Unlock()
}

// waitInFlight waits until c's current connection has a request written
// (or being written) and awaiting its reply. Watching the socket's writes
// instead would take a ping for the request.
func waitInFlight(t *testing.T, c *Conn) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		c.mu.Lock()
		l := c.cur
		c.mu.Unlock()
		if l != nil {
			l.mu.Lock()
			n := len(l.pending)
			l.mu.Unlock()
			if n > 0 {
				return
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("no request in flight")
		}
		time.Sleep(time.Millisecond)
	}
}
