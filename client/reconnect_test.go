package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/wire"
)

func TestPipelining(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	const n = 1000
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			p := fmt.Sprintf("/n%04d", i)
			data := []byte(p)
			if _, err := c.Create(ctx, p, data, Persistent, OpenACL); err != nil {
				errs <- err
				return
			}
			got, _, err := c.Get(ctx, p)
			if err != nil || string(got) != p {
				errs <- fmt.Errorf("get %s = %q, %v", p, got, err)
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	if n2, err := c.AllChildrenNumber(ctx, "/"); err != nil || n2 < n {
		t.Fatalf("descendants = %d, %v", n2, err)
	}
}

func TestCancelMidFlight(t *testing.T) {
	srv := startServer(t, "", nil)
	d := &cutDialer{}
	c := connect(t, srv.Addr().String(), WithDialer(d.dial))
	nc := d.last()
	nc.pause() // replies stay in the socket until resume
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "/")
		done <- err
	}()
	waitInFlight(t, c) // the request is on the wire
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled get = %v", err)
	}
	nc.resume()
	// The abandoned reply is consumed in order; the next request matches.
	if _, ok, err := c.Exists(ctxT(t), "/zookeeper"); err != nil || !ok {
		t.Fatalf("exists after cancel = %v %v", ok, err)
	}
	if n := d.count(); n != 1 {
		t.Fatalf("reconnected %d times; cancellation must not drop the connection", n-1)
	}
	// An already-cancelled context never sends.
	if _, _, err := c.Get(ctx, "/"); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with dead ctx = %v", err)
	}
}

func TestCutConnectionReconnectsAndRearmsWatches(t *testing.T) {
	srv := startServer(t, "", nil)
	d := &cutDialer{}
	c := connect(t, srv.Addr().String(), WithDialer(d.dial), WithBackoff(time.Millisecond, 10*time.Millisecond))
	events := sessionWatcher{t, c.SessionEvents()}
	first := events.waitFor(StateConnected)
	other := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(c.Create(ctx, "/w", nil, Persistent, OpenACL))
	must[string](t)(c.Create(ctx, "/kids", nil, Persistent, OpenACL))
	must[string](t)(c.Create(ctx, "/p", nil, Persistent, OpenACL))
	must[string](t)(c.Create(ctx, "/eph", nil, Ephemeral, OpenACL))
	_, _, dataW, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, childW, err := c.ChildrenW(ctx, "/kids")
	if err != nil {
		t.Fatal(err)
	}
	_, _, existW, err := c.ExistsW(ctx, "/later")
	if err != nil {
		t.Fatal(err)
	}
	_, _, quietW, err := c.GetW(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := c.AddWatch(ctx, "/p", false)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := c.AddWatch(ctx, "/", true)
	if err != nil {
		t.Fatal(err)
	}

	// A request in flight when the connection is cut gets ErrConnectionLoss.
	nc := d.last()
	nc.pause()
	inflight := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "/w")
		inflight <- err
	}()
	waitInFlight(t, c)
	d.holdDials()
	nc.Close()
	nc.resume()
	if err := <-inflight; !errors.Is(err, ErrConnectionLoss) {
		t.Fatalf("in-flight get = %v", err)
	}
	events.waitFor(StateDisconnected)
	if c.State() != StateDisconnected {
		t.Fatalf("state = %v", c.State())
	}

	// A request made while disconnected waits for the reconnect.
	waiting := make(chan error, 1)
	var after wire.Stat
	go func() {
		var err error
		after, err = c.Set(ctx, "/p", []byte("after"), -1)
		waiting <- err
	}()
	// Changes while disconnected.
	must[wire.Stat](t)(other.Set(ctx, "/w", []byte("changed"), -1))
	must[string](t)(other.Create(ctx, "/kids/k", nil, Persistent, OpenACL))
	must[string](t)(other.Create(ctx, "/later", nil, Persistent, OpenACL))
	d.releaseDials()

	again := events.waitFor(StateConnected)
	if again.SessionID != first.SessionID {
		t.Fatalf("session changed: %x → %x", first.SessionID, again.SessionID)
	}
	if err := <-waiting; err != nil {
		t.Fatalf("set while disconnected = %v", err)
	}
	// Catch-up events follow no one write: the server sends zxid -1.
	if ev := waitEvent(t, dataW); ev.Type != wire.EventNodeDataChanged || ev.Path != "/w" || ev.Zxid != NoZxid {
		t.Fatalf("missed data event: %+v", ev)
	}
	if ev := waitEvent(t, childW); ev.Type != wire.EventNodeChildrenChanged || ev.Path != "/kids" || ev.Zxid != NoZxid {
		t.Fatalf("missed child event: %+v", ev)
	}
	if ev := waitEvent(t, existW); ev.Type != wire.EventNodeCreated || ev.Path != "/later" || ev.Zxid != NoZxid {
		t.Fatalf("missed create event: %+v", ev)
	}
	// The session survived: the ephemeral is still ours.
	st, ok, err := other.Exists(ctx, "/eph")
	if err != nil || !ok || st.EphemeralOwner != first.SessionID {
		t.Fatalf("ephemeral after reconnect: %v %v %+v", ok, err, st)
	}
	// The one-shot watch on /p was re-armed and fires for the set made by
	// the waiting request; the persistent watches too.
	if ev := waitEvent(t, quietW); ev.Type != wire.EventNodeDataChanged || ev.Path != "/p" || ev.Zxid != after.Mzxid {
		t.Fatalf("re-armed data watch: %+v, want zxid %#x", ev, after.Mzxid)
	}
	if ev := waitEvent(t, pw.Events()); ev.Type != wire.EventNodeDataChanged || ev.Path != "/p" || ev.Zxid != after.Mzxid {
		t.Fatalf("persistent watch after reconnect: %+v, want zxid %#x", ev, after.Mzxid)
	}
	// The recursive watch gets no catch-up of its own, but it shares the
	// catch-up events of the one-shot watches on this connection (as in
	// ZooKeeper's client), then sees /p's change.
	for ev := waitEvent(t, rw.Events()); ev.Path != "/p"; ev = waitEvent(t, rw.Events()) {
		if ev.Path != "/w" && ev.Path != "/later" {
			t.Fatalf("recursive watch after reconnect: %+v", ev)
		}
	}
	must[wire.Stat](t)(other.Set(ctx, "/kids/k", []byte("x"), -1))
	if ev := waitEvent(t, rw.Events()); ev.Type != wire.EventNodeDataChanged || ev.Path != "/kids/k" {
		t.Fatalf("recursive watch: %+v", ev)
	}
}

func TestServerRestartExpiresSession(t *testing.T) {
	mutate := func(c *server.Config) { c.TickTime = 100 }
	srv := startServer(t, "", mutate)
	c := connect(t, srv.Addr().String(), WithSessionTimeout(time.Second), WithBackoff(time.Millisecond, 50*time.Millisecond))
	events := sessionWatcher{t, c.SessionEvents()}
	events.waitFor(StateConnected)
	ctx := ctxT(t)
	must[string](t)(c.Create(ctx, "/gone", nil, Persistent, OpenACL))
	_, _, w, err := c.GetW(ctx, "/gone")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := c.AddWatch(ctx, "/", true)
	if err != nil {
		t.Fatal(err)
	}
	srv.Close()
	events.waitFor(StateDisconnected)
	startServer(t, srv.Addr().String(), mutate) // same port, empty state
	expired := events.waitFor(StateExpired)
	if expired.SessionID == 0 {
		t.Fatal("expired event without session id")
	}
	late := c.SessionEvents()
	if ev, ok := <-late; !ok || ev.State != StateExpired {
		t.Fatalf("late subscription's first event = %+v, %v; want the terminal Expired", ev, ok)
	}
	if _, ok := <-late; ok {
		t.Fatal("session events not closed after expiry")
	}
	if _, _, err := c.Get(ctx, "/"); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("get after expiry = %v", err)
	}
	if ev := waitEvent(t, w); !errors.Is(ev.Err, ErrSessionExpired) {
		t.Fatalf("one-shot watch after expiry = %+v", ev)
	}
	if ev := waitEvent(t, pw.Events()); !errors.Is(ev.Err, ErrSessionExpired) {
		t.Fatalf("persistent watch after expiry = %+v", ev)
	}
	if _, ok := <-pw.Events(); ok {
		t.Fatal("persistent watch channel not closed")
	}
}

func TestServerExpiresSession(t *testing.T) {
	srv := startServer(t, "", nil)
	d := &cutDialer{}
	c := connect(t, srv.Addr().String(), WithDialer(d.dial), WithBackoff(time.Millisecond, 10*time.Millisecond))
	events := sessionWatcher{t, c.SessionEvents()}
	events.waitFor(StateConnected)
	// The server expires the session while the client is cut off; the
	// re-attach is answered with timeout 0.
	d.holdDials()
	d.last().Close()
	events.waitFor(StateDisconnected)
	srv.ExpireSessions(srv.Clock.Advance(time.Hour))
	d.releaseDials()
	events.waitFor(StateExpired)
	if _, err := c.Create(ctxT(t), "/x", nil, Persistent, OpenACL); !errors.Is(err, ErrSessionExpired) {
		t.Fatalf("create after expiry = %v", err)
	}
}

func TestConnectFailsWhenCtxEnds(t *testing.T) {
	d := &cutDialer{}
	d.holdDials()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if _, err := Connect(ctx, "127.0.0.1:1", WithDialer(d.dial)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("connect = %v", err)
	}
}

func TestMultipleServersAndBadMember(t *testing.T) {
	srv := startServer(t, "", nil)
	// A dead member is skipped; which one is tried first is random.
	c := connect(t, "127.0.0.1:1,"+srv.Addr().String(), WithBackoff(time.Millisecond, 5*time.Millisecond))
	if _, _, err := c.Get(ctxT(t), "/"); err != nil {
		t.Fatal(err)
	}
}

func TestAuthResentOnReconnect(t *testing.T) {
	srv := startServer(t, "", nil)
	d := &cutDialer{}
	c := connect(t, srv.Addr().String(), WithDialer(d.dial), WithBackoff(time.Millisecond, 10*time.Millisecond),
		WithAuth("digest", []byte("ann:pw")))
	events := sessionWatcher{t, c.SessionEvents()}
	events.waitFor(StateConnected)
	ctx := ctxT(t)
	if err := c.AddAuth(ctx, "digest", []byte("bob:pw")); err != nil {
		t.Fatal(err)
	}
	d.last().Close()
	events.waitFor(StateDisconnected)
	events.waitFor(StateConnected)
	who, err := c.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	users := map[string]bool{}
	for _, ci := range who {
		users[ci.AuthScheme+":"+ci.User] = true
	}
	if !users["digest:ann"] || !users["digest:bob"] {
		t.Fatalf("whoAmI after reconnect = %+v", who)
	}
}

func TestCloseInterruptsSilentServer(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		nc, err := ln.Accept()
		if err == nil {
			accepted <- nc
		}
		close(accepted)
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	if _, err := Connect(ctx, ln.Addr().String()); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("connect = %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Fatalf("Connect took %v to give up on a silent server", d)
	}
	ln.Close()
	for nc := range accepted {
		nc.Close()
	}
}
