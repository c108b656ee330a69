package server

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// readFrames reads n replies (skipping nothing) from a raw connection.
func readReply(t *testing.T, c *rawClient) (wire.ReplyHeader, *wire.Decoder) {
	t.Helper()
	body, err := wire.ReadFrame(c.nc, wire.DefaultMaxBuffer, nil)
	if err != nil {
		t.Fatal(err)
	}
	d := wire.NewDecoder(body, 0)
	var h wire.ReplyHeader
	h.Decode(d)
	return h, d
}

// A read pipelined before a write must not see the write.
func TestPipelinedReadDoesNotSeeLaterWrite(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := newRawClient(t, srv)
	c.do(wire.OpCreate, &wire.CreateRequest{Path: "/rw", ACL: wire.OpenACLUnsafe}, nil)
	for i := 0; i < 300; i++ {
		batch := wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1000, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/rw"})
		batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: 1001, Type: wire.OpSetData}, &wire.SetDataRequest{Path: "/rw", Version: -1})
		c.nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.nc.Write(batch); err != nil {
			t.Fatal(err)
		}
		h, d := readReply(t, c)
		var gd wire.GetDataResponse
		gd.Decode(d)
		if h.Xid != 1000 || gd.Stat.Version != int32(i) {
			t.Fatalf("round %d: getData reply xid %d saw version %d, want %d", i, h.Xid, gd.Stat.Version, i)
		}
		h2, _ := readReply(t, c)
		if h2.Xid != 1001 || h2.Zxid <= h.Zxid {
			t.Fatalf("round %d: setData reply %+v after read zxid %#x", i, h2, h.Zxid)
		}
	}
}

// A watch event must never reach the client before the reply of the
// request that set the watch (clients attach the watcher on the reply and
// would drop the event, losing the watch).
func TestWatchEventNeverOvertakesItsReply(t *testing.T) {
	srv, _ := startServer(t, nil)
	watcher := newRawClient(t, srv)
	writer := newRawClient(t, srv)
	writer.do(wire.OpCreate, &wire.CreateRequest{Path: "/hot", ACL: wire.OpenACLUnsafe}, nil)

	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		w := newRawClient(t, srv)
		for {
			select {
			case <-stop:
				return
			default:
			}
			w.xid++
			w.nc.SetDeadline(time.Now().Add(10 * time.Second))
			w.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: w.xid, Type: wire.OpSetData},
				&wire.SetDataRequest{Path: "/hot", Version: -1}))
			if _, err := wire.ReadFrame(w.nc, 0, nil); err != nil {
				return
			}
		}
	}()
	defer func() { close(stop); wg.Wait() }()

	armed := false // a watch is registered and its reply has arrived
	for i := 0; i < 2000; i++ {
		xid := int32(i + 1)
		watcher.nc.SetDeadline(time.Now().Add(10 * time.Second))
		watcher.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: xid, Type: wire.OpGetData},
			&wire.GetDataRequest{Path: "/hot", Watch: true}))
		for {
			h, _ := readReply(t, watcher)
			if h.Xid == wire.XidNotification {
				if !armed {
					t.Fatalf("round %d: event arrived before the reply that armed its watch", i)
				}
				armed = false
				continue
			}
			if h.Xid != xid {
				t.Fatalf("reply xid %d, want %d", h.Xid, xid)
			}
			armed = true
			break
		}
	}
}

// A request sent before addauth is checked without the identity addauth
// adds, even when all three are pipelined in one write.
func TestAuthAppliesOnlyToLaterRequests(t *testing.T) {
	srv, _ := startServer(t, nil)
	owner := newRawClient(t, srv)
	owner.do(wire.OpAuth, &wire.AuthPacket{Scheme: "digest", Auth: []byte("bob:secret")}, nil)
	owner.do(wire.OpCreate, &wire.CreateRequest{Path: "/secret", ACL: wire.CreatorAllACL}, nil)

	c := newRawClient(t, srv)
	batch := wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/secret"})
	batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: wire.XidAuth, Type: wire.OpAuth}, &wire.AuthPacket{Scheme: "digest", Auth: []byte("bob:secret")})
	batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: 2, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/secret"})
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	c.nc.Write(batch)
	want := []struct {
		xid int32
		err wire.Code
	}{{1, wire.ErrNoAuth}, {wire.XidAuth, wire.CodeOK}, {2, wire.CodeOK}}
	for _, w := range want {
		h, _ := readReply(t, c)
		if h.Xid != w.xid || h.Err != w.err {
			t.Fatalf("reply %+v, want xid %d err %v", h, w.xid, w.err)
		}
	}
}

// Statistics stay sane after a session expires under an open connection.
func TestExpiryKeepsLatencyStatsSane(t *testing.T) {
	srv, clock := startServer(t, nil)
	c := newRawClient(t, srv)
	c.do(wire.OpExists, &wire.ExistsRequest{Path: "/"}, nil)
	srv.ExpireSessions(clock.Advance(time.Hour))
	if _, err := wire.ReadFrame(c.nc, 0, nil); err == nil {
		t.Fatal("connection of an expired session stayed open")
	}
	_, _, max := srv.stats.lat.get()
	if max > int64(time.Minute/time.Millisecond) {
		t.Fatalf("max latency %d ms after an expiry", max)
	}
}

// Every reply is counted in the latency statistics before it leaves: a
// client holding a reply (of a read, a write, setWatches) finds it counted.
func TestRepliesCountedBeforeTheyLeave(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := newRawClient(t, srv)
	count := func() int64 {
		srv.stats.lat.mu.Lock()
		defer srv.stats.lat.mu.Unlock()
		return srv.stats.lat.count
	}
	for i := 0; i < 300; i++ {
		before := count()
		switch i % 3 {
		case 0:
			c.do(wire.OpExists, &wire.ExistsRequest{Path: "/"}, nil)
		case 1:
			c.do(wire.OpSetData, &wire.SetDataRequest{Path: "/", Version: -1}, nil)
		case 2:
			c.do(wire.OpSetWatches, &wire.SetWatches{}, nil)
		}
		if got := count(); got != before+1 {
			t.Fatalf("request %d: %d replies counted after it, want %d", i, got, before+1)
		}
	}
}

// A read between two pipelined writes sees the first and not the second,
// and the three replies come back in order (the read follows the first
// write's apply while the second is already proposed).
func TestReadBetweenPipelinedWrites(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := newRawClient(t, srv)
	c.do(wire.OpCreate, &wire.CreateRequest{Path: "/wrw", ACL: wire.OpenACLUnsafe}, nil)
	for i := 0; i < 200; i++ {
		batch := wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1, Type: wire.OpSetData}, &wire.SetDataRequest{Path: "/wrw", Version: -1})
		batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: 2, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/wrw"})
		batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: 3, Type: wire.OpSetData}, &wire.SetDataRequest{Path: "/wrw", Version: -1})
		c.nc.SetDeadline(time.Now().Add(10 * time.Second))
		if _, err := c.nc.Write(batch); err != nil {
			t.Fatal(err)
		}
		h1, d1 := readReply(t, c)
		var s1 wire.SetDataResponse
		s1.Decode(d1)
		h2, d2 := readReply(t, c)
		var g wire.GetDataResponse
		g.Decode(d2)
		h3, _ := readReply(t, c)
		if h1.Xid != 1 || h2.Xid != 2 || h3.Xid != 3 {
			t.Fatalf("round %d: replies out of order: %d %d %d", i, h1.Xid, h2.Xid, h3.Xid)
		}
		if g.Stat.Version != s1.Stat.Version {
			t.Fatalf("round %d: the read saw version %d, the write before it made %d", i, g.Stat.Version, s1.Stat.Version)
		}
		if h3.Zxid <= h2.Zxid {
			t.Fatalf("round %d: second write zxid %#x not after the read's %#x", i, h3.Zxid, h2.Zxid)
		}
	}
}

// Pipelined requests each keep their own body: pings and reads are read
// into the connection's reused frame buffer, writes into frames of their
// own that must survive the reads read after them, and a read too large
// for the reused buffer gets one of its own.
func TestPipelinedRequestsKeepTheirOwnBodies(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := newRawClient(t, srv)
	for i := 0; i < 10; i++ {
		c.do(wire.OpCreate, &wire.CreateRequest{Path: fmt.Sprintf("/r%d", i), Data: []byte(fmt.Sprintf("data of r%d", i)), ACL: wire.OpenACLUnsafe}, nil)
	}
	c.do(wire.OpCreate, &wire.CreateRequest{Path: "/w", ACL: wire.OpenACLUnsafe}, nil)
	long := "/" + strings.Repeat("x", reusedFrameMax)
	const n = 300
	var batch []byte
	for i := int32(0); i < n; i++ {
		switch i % 4 {
		case 0:
			batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: i, Type: wire.OpCreate},
				&wire.CreateRequest{Path: fmt.Sprintf("/w/c%d", i), Data: []byte(fmt.Sprintf("created by %d", i)), ACL: wire.OpenACLUnsafe})
		case 1:
			batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: wire.XidPing, Type: wire.OpPing})
		case 2:
			batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: i, Type: wire.OpExists}, &wire.ExistsRequest{Path: long})
		default:
			batch = wire.AppendRecords(batch, &wire.RequestHeader{Xid: i, Type: wire.OpGetData}, &wire.GetDataRequest{Path: fmt.Sprintf("/r%d", i%10)})
		}
	}
	c.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := c.nc.Write(batch); err != nil {
		t.Fatal(err)
	}
	for i := int32(0); i < n; i++ {
		h, d := readReply(t, c)
		switch i % 4 {
		case 0:
			var resp wire.CreateResponse
			resp.Decode(d)
			if want := fmt.Sprintf("/w/c%d", i); h.Xid != i || h.Err != wire.CodeOK || resp.Path != want {
				t.Fatalf("reply %d: %+v path %q, want %s created", i, h, resp.Path, want)
			}
		case 1:
			if h.Xid != wire.XidPing {
				t.Fatalf("reply %d: %+v, want a ping's", i, h)
			}
		case 2:
			if h.Xid != i || h.Err != wire.ErrNoNode {
				t.Fatalf("reply %d: %+v, want NONODE for the long path", i, h)
			}
		default:
			var resp wire.GetDataResponse
			resp.Decode(d)
			if want := fmt.Sprintf("data of r%d", i%10); h.Xid != i || string(resp.Data) != want {
				t.Fatalf("reply %d: %+v data %q, want %q", i, h, resp.Data, want)
			}
		}
	}
	for i := int32(0); i < n; i += 4 {
		var resp wire.GetDataResponse
		if code := c.do(wire.OpGetData, &wire.GetDataRequest{Path: fmt.Sprintf("/w/c%d", i)}, &resp); code != wire.CodeOK || string(resp.Data) != fmt.Sprintf("created by %d", i) {
			t.Fatalf("/w/c%d: %v %q", i, code, resp.Data)
		}
	}
}
