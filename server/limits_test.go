package server

import (
	"errors"
	"io"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/wire"
)

// limitEvents records the limiter's pauses, resumes and throttler waits.
func limitEvents(srv *Server) <-chan limitEvent {
	ch := make(chan limitEvent, 64)
	srv.limits.hook = func(ev limitEvent) { ch <- ev }
	return ch
}

// nextEvent returns the next event of kind, skipping others, within 10s.
func nextEvent(t *testing.T, ch <-chan limitEvent, kind string) limitEvent {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-ch:
			if ev.kind == kind {
				return ev
			}
		case <-deadline:
			t.Fatalf("no %q event within 10s", kind)
			return limitEvent{}
		}
	}
}

// holdReads makes every read wait: reads take the state lock shared, and
// the test holds it exclusively until the returned func is called.
func holdReads(t *testing.T, srv *Server) (release func()) {
	srv.node.Lock()
	held := true
	release = func() {
		if held {
			held = false
			srv.node.Unlock()
		}
	}
	t.Cleanup(release)
	return release
}

func sendGetData(t *testing.T, nc net.Conn, xid int32, path string) {
	t.Helper()
	req := wire.AppendRecords(nil, &wire.RequestHeader{Xid: xid, Type: wire.OpGetData}, &wire.GetDataRequest{Path: path})
	if _, err := nc.Write(req); err != nil {
		t.Fatal(err)
	}
}

func readReplyHeader(t *testing.T, nc net.Conn) wire.ReplyHeader {
	t.Helper()
	body, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
	if err != nil {
		t.Fatalf("reading a reply: %v", err)
	}
	var rh wire.ReplyHeader
	d := wire.NewDecoder(body, wire.DefaultMaxBuffer)
	rh.Decode(d)
	if d.Err() != nil {
		t.Fatalf("reply header: %v", d.Err())
	}
	return rh
}

// expectClosed reads nc until the server closes it; any reply before is
// ignored.
func expectClosed(t *testing.T, nc net.Conn) {
	t.Helper()
	buf := make([]byte, 4096)
	for {
		if _, err := nc.Read(buf); err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				t.Fatal("the server did not close the connection")
			}
			return
		}
	}
}

func TestOutstandingLimitDividedAsZooKeeper(t *testing.T) {
	for _, c := range []struct {
		role   node.Role
		voters int
		want   int // of globalOutstandingLimit=1000
	}{
		{node.Standalone, 1, 1000},
		{node.Leading, 3, 500},
		{node.Following, 3, 500},
		{node.Following, 5, 250},
		{node.Leading, 2, 1000}, // a divisor only above two voters
		{node.Observing, 3, 1000},
		{node.Looking, 3, 1000},
	} {
		if got := 1000 / outstandingShare(c.role, c.voters); got != c.want {
			t.Errorf("limit on a %v of %d voters = %d, want %d", c.role.Mode(), c.voters, got, c.want)
		}
	}
}

func TestThrottleOutstandingLimitPausesReadingAndResumes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		count int   // globalOutstandingLimit
		bytes int64 // maxOutstandingBytes
	}{
		{"globalOutstandingLimit", 2, maxOutstandingBytes},
		// Each getData of "/" is a 4+8+4+1+1 = 18-byte frame.
		{"bytes", 1000, 40},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv, _ := startServer(t, func(c *Config) { c.GlobalOutstandingLimit = tc.count })
			srv.limits.byteLimit = tc.bytes
			events := limitEvents(srv)
			a, b := rawSession(t, srv), rawSession(t, srv)
			release := holdReads(t, srv)
			for xid := int32(1); xid <= 4; xid++ {
				sendGetData(t, a, xid, "/")
			}
			// Two requests are under the limit, the third passes it: a
			// stops reading with three in flight; the fourth waits in the
			// socket.
			if ev := nextEvent(t, events, "pause"); ev.inFlight != 3 {
				t.Fatalf("a paused with %d requests in flight, want 3", ev.inFlight)
			}
			if n := srv.outstanding(); n != 3 {
				t.Fatalf("outstanding = %d, want 3 while a is paused", n)
			}
			// A connection with nothing in flight may always send one.
			sendGetData(t, b, 1, "/")
			if ev := nextEvent(t, events, "pause"); ev.inFlight != 4 {
				t.Fatalf("b paused with %d requests in flight, want 4", ev.inFlight)
			}
			release()
			for xid := int32(1); xid <= 4; xid++ {
				if rh := readReplyHeader(t, a); rh.Xid != xid || rh.Err != wire.CodeOK {
					t.Fatalf("a: reply %+v, want xid %d OK", rh, xid)
				}
			}
			if rh := readReplyHeader(t, b); rh.Xid != 1 || rh.Err != wire.CodeOK {
				t.Fatalf("b: reply %+v", rh)
			}
			nextEvent(t, events, "resume")
		})
	}
}

func TestThrottleRequestThrottlerStallsThenThrottledOp(t *testing.T) {
	srv, clock := startServer(t, func(c *Config) {
		c.Limits.RequestThrottleMaxRequests = 1
		c.Limits.ThrottledOpWaitTime = 1000
	})
	events := limitEvents(srv)
	a := rawSession(t, srv)
	release := holdReads(t, srv)
	sendGetData(t, a, 1, "/")
	sendGetData(t, a, 2, "/")
	// The first is processed (it waits for the state lock); the second
	// waits in the request throttler.
	if ev := nextEvent(t, events, "throttle"); ev.inFlight != 1 || ev.waiting != 1 {
		t.Fatalf("throttle event %+v, want 1 in processing and 1 waiting", ev)
	}
	sendGetData(t, a, 3, "/")
	// It waits longer than throttled_op_wait_time: answered THROTTLEDOP,
	// in order.
	clock.Advance(2 * time.Second)
	release()
	for _, want := range []struct {
		xid  int32
		code wire.Code
	}{{1, wire.CodeOK}, {2, wire.ErrThrottled}, {3, wire.CodeOK}} {
		if rh := readReplyHeader(t, a); rh.Xid != want.xid || rh.Err != want.code {
			t.Fatalf("reply %+v, want xid %d code %d", rh, want.xid, want.code)
		}
	}
	if n := srv.stats.throttled.Load(); n != 1 {
		t.Errorf("throttled_ops = %d, want 1", n)
	}
	if n := srv.metrics.RequestThrottleWaitCount.Value(); n < 1 {
		t.Errorf("request_throttle_wait_count = %d, want at least 1", n)
	}
	if n := srv.metrics.RequestThrottleQueueTime.Count(); n < 3 {
		t.Errorf("request_throttle_queue_time_ms has %d samples, want 3", n)
	}
}

func TestThrottleStaleRequestsDropped(t *testing.T) {
	t.Run("connection closed", func(t *testing.T) {
		srv, _ := startServer(t, func(c *Config) { c.Limits.RequestThrottleMaxRequests = 1 })
		events := limitEvents(srv)
		a := rawSession(t, srv)
		release := holdReads(t, srv)
		sendGetData(t, a, 1, "/")
		sendGetData(t, a, 2, "/")
		ev := nextEvent(t, events, "throttle")
		// Closing forgets the connection's watches under the state lock:
		// it finishes once the reads are released.
		go ev.c.close("test: the connection goes away")
		nextEvent(t, events, "drop")
		release()
		expectClosed(t, a)
		if n := srv.metrics.StaleRequestsDropped.Value(); n != 1 {
			t.Errorf("stale_requests_dropped = %d, want 1", n)
		}
		if n := srv.outstanding(); n != 0 {
			t.Errorf("outstanding = %d after the connection closed, want 0", n)
		}
	})
	t.Run("older than the session timeout", func(t *testing.T) {
		srv, clock := startServer(t, func(c *Config) {
			c.Limits.RequestThrottleMaxRequests = 1
			c.Limits.RequestStaleLatencyCheck = true
		})
		events := limitEvents(srv)
		a := rawSession(t, srv)
		release := holdReads(t, srv)
		sendGetData(t, a, 1, "/")
		sendGetData(t, a, 2, "/")
		nextEvent(t, events, "throttle")
		// The waiting request checks its age at each stall period.
		clock.Advance(time.Minute)
		nextEvent(t, events, "drop")
		release()
		expectClosed(t, a)
		if n := srv.metrics.StaleRequestsDropped.Value(); n != 1 {
			t.Errorf("stale_requests_dropped = %d, want 1", n)
		}
	})
}

func TestThrottleLargeRequestClosesConnection(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) {
		c.Limits.LargeRequestThreshold = 100
		c.Limits.LargeRequestMaxBytes = 200
	})
	events := limitEvents(srv)
	a, b := rawSession(t, srv), rawSession(t, srv)
	release := holdReads(t, srv)
	long := "/" + strings.Repeat("x", 120) // a 142-byte frame: large
	sendGetData(t, a, 1, long)
	sendGetData(t, a, 2, long) // 284 > 200 bytes of large requests
	nextEvent(t, events, "large")
	release()
	expectClosed(t, a)
	if n := srv.metrics.LargeRequestsRejected.Value(); n != 1 {
		t.Errorf("large_requests_rejected = %d, want 1", n)
	}
	// Small requests are not large, and the closed connection's large
	// request no longer counts.
	sendGetData(t, b, 1, long)
	sendGetData(t, b, 2, "/")
	if n := srv.metrics.LargeRequestsRejected.Value(); n != 1 {
		t.Errorf("large_requests_rejected = %d, want still 1", n)
	}
}

// dialConnect opens a connection and sends a ConnectRequest for session
// (0 = new); it returns the connection and the ConnectResponse, or false
// when the server closed the connection instead.
func dialConnect(t *testing.T, srv *Server, session int64, passwd []byte) (net.Conn, wire.ConnectResponse, bool) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := wire.ConnectRequest{TimeOut: 30000, SessionID: session, Passwd: passwd, HasReadOnly: true}
	if _, err := nc.Write(wire.AppendFrame(nil, req.Encode)); err != nil {
		t.Fatal(err)
	}
	body, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, net.ErrClosed) {
		return nc, wire.ConnectResponse{}, false
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatal("no ConnectResponse and no close within 10s")
	}
	if err != nil {
		return nc, wire.ConnectResponse{}, false // reset
	}
	var resp wire.ConnectResponse
	if err := wire.Unmarshal(body, &resp, 0); err != nil {
		t.Fatal(err)
	}
	return nc, resp, true
}

func TestConnectionThrottleClosesSessionsPastTheBucket(t *testing.T) {
	srv, clock := startServer(t, func(c *Config) {
		c.Limits.Connection.MaxTokens = 2
		c.Limits.Connection.FillTime = 1000
		c.Limits.Connection.FillCount = 1
	})
	for i := range 2 {
		if _, _, ok := dialConnect(t, srv, 0, nil); !ok {
			t.Fatalf("session %d refused with tokens left", i)
		}
	}
	if _, _, ok := dialConnect(t, srv, 0, nil); ok {
		t.Fatal("a third session was established with the bucket empty")
	}
	if n := srv.stats.rejected.Load(); n != 1 {
		t.Errorf("connection_rejected = %d, want 1", n)
	}
	clock.Advance(1001 * time.Millisecond) // one token back
	if _, _, ok := dialConnect(t, srv, 0, nil); !ok {
		t.Fatal("refused after the bucket was refilled")
	}
	if n := srv.metrics.ConnectionRequestCount.Value(); n != 3 {
		t.Errorf("connection_request_count = %d, want 3", n)
	}
	if n := srv.metrics.ConnectionTokenDeficit.Count(); n != 3 {
		t.Errorf("connection_token_deficit has %d samples, want 3", n)
	}
}

func TestConnectionThrottleWeights(t *testing.T) {
	// With weights, the bucket holds 3 × 1 tokens: one new session (3),
	// and then not even a renewal (2).
	srv, clock := startServer(t, func(c *Config) {
		c.Limits.Connection.MaxTokens = 1
		c.Limits.Connection.FillTime = 1000
		c.Limits.ConnectionWeights.Enabled = true
	})
	nc, _, ok := dialConnect(t, srv, 0, nil)
	if !ok {
		t.Fatal("first session refused")
	}
	nc.Close()
	if _, _, ok := dialConnect(t, srv, 0, nil); ok {
		t.Fatal("second new session admitted with the bucket empty")
	}
	clock.Advance(1001 * time.Millisecond) // 1001 ms × 3 / 1000 = 3 tokens, capped at 3
	var sid int64
	srv.node.RLock()
	for _, id := range srv.node.FSM().SessionIDs() {
		sid = int64(id)
	}
	srv.node.RUnlock()
	if _, _, ok := dialConnect(t, srv, sid, make([]byte, 16)); !ok {
		t.Fatal("renewal refused with 3 tokens (it takes 2)")
	}
	if _, _, ok := dialConnect(t, srv, 0, nil); ok {
		t.Fatal("a new session (3 tokens) admitted with 1 left")
	}
	if n := srv.metrics.ConnectionRevalidateCount.Value(); n != 1 {
		t.Errorf("connection_revalidate_count = %d, want 1", n)
	}
}

func TestConnectionDropCountedWhenTheClientCloses(t *testing.T) {
	srv, _ := startServer(t, nil)
	nc := rawSession(t, srv)
	nc.Close()
	deadline := time.Now().Add(10 * time.Second)
	for srv.metrics.ConnectionDropCount.Value() != 1 {
		if time.Now().After(deadline) {
			t.Fatal("connection_drop_count did not reach 1 within 10s")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
