package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"sort"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/wardenzk/warden/internal/fakeclock"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/wire"
)

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// startServer starts an in-process standalone server on a loopback port
// with timers off and a fake clock.
func startServer(t testing.TB, mutate func(*Config)) (*Server, *fakeclock.Clock) {
	t.Helper()
	return startServerOpts(t, mutate, Options{})
}

func startServerOpts(t testing.TB, mutate func(*Config), opts Options) (*Server, *fakeclock.Clock) {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	if mutate != nil {
		mutate(&cfg)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	clock := fakeclock.New(time.Now())
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	opts.Now = clock.Now
	opts.Listener = ln
	opts.DisableTimers = true
	srv, err := Start(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv, clock
}

// connect opens a go-zookeeper client session and waits until it is
// established.
func connect(t *testing.T, srv *Server) *zk.Conn {
	t.Helper()
	c, events, err := zk.Connect([]string{srv.Addr().String()}, 30*time.Second,
		zk.WithLogger(quietLogger{}), zk.WithLogInfo(false))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	deadline := time.After(10 * time.Second)
	for {
		select {
		case ev := <-events:
			if ev.State == zk.StateHasSession {
				go drain(events)
				return c
			}
		case <-deadline:
			t.Fatal("no session within 10s")
		}
	}
}

func drain(ch <-chan zk.Event) {
	for range ch {
	}
}

func waitEvent(t *testing.T, ch <-chan zk.Event) zk.Event {
	t.Helper()
	select {
	case ev := <-ch:
		return ev
	case <-time.After(10 * time.Second):
		t.Fatal("no watch event within 10s")
		return zk.Event{}
	}
}

func TestCreateGetSetDelete(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	acl := zk.WorldACL(zk.PermAll)

	p, err := c.Create("/a", []byte("one"), 0, acl)
	if err != nil || p != "/a" {
		t.Fatalf("create = %q, %v", p, err)
	}
	if _, err := c.Create("/a", nil, 0, acl); !errors.Is(err, zk.ErrNodeExists) {
		t.Fatalf("second create: %v, want node exists", err)
	}
	if _, err := c.Create("/missing/child", nil, 0, acl); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("create under missing parent: %v, want no node", err)
	}
	data, st, err := c.Get("/a")
	if err != nil || string(data) != "one" || st.Version != 0 || st.DataLength != 3 {
		t.Fatalf("get = %q %+v %v", data, st, err)
	}
	if st.Czxid != st.Mzxid || st.Czxid != st.Pzxid || st.Czxid == 0 {
		t.Fatalf("fresh node zxids: %+v", st)
	}
	if _, err := c.Set("/a", []byte("two"), 5); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("set with wrong version: %v", err)
	}
	st2, err := c.Set("/a", []byte("two"), 0)
	if err != nil || st2.Version != 1 || st2.Mzxid <= st.Mzxid || st2.Czxid != st.Czxid {
		t.Fatalf("set = %+v, %v", st2, err)
	}
	if _, err := c.Create("/a/b", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete("/a", -1); !errors.Is(err, zk.ErrNotEmpty) {
		t.Fatalf("delete non-empty: %v", err)
	}
	_, parent, _ := c.Get("/a")
	if parent.NumChildren != 1 || parent.Cversion != 1 || parent.Pzxid <= st2.Mzxid {
		t.Fatalf("parent stat after child create: %+v", parent)
	}
	if err := c.Delete("/a/b", 3); !errors.Is(err, zk.ErrBadVersion) {
		t.Fatalf("delete with wrong version: %v", err)
	}
	if err := c.Delete("/a/b", 0); err != nil {
		t.Fatal(err)
	}
	_, parent, _ = c.Get("/a")
	if parent.NumChildren != 0 || parent.Cversion != 2 {
		t.Fatalf("parent stat after child delete: %+v", parent)
	}
	if err := c.Delete("/a", -1); err != nil {
		t.Fatal(err)
	}
	if ok, _, err := c.Exists("/a"); ok || err != nil {
		t.Fatalf("exists after delete = %v, %v", ok, err)
	}
	kids, _, err := c.Children("/")
	if err != nil || len(kids) != 1 || kids[0] != "zookeeper" {
		t.Fatalf("children of / = %v, %v", kids, err)
	}
	if err := c.Delete("/zookeeper", -1); !errors.Is(err, zk.ErrBadArguments) {
		t.Fatalf("delete /zookeeper: %v", err)
	}
}

func TestSequentialNamesAndEphemerals(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	acl := zk.WorldACL(zk.PermAll)
	if _, err := c.Create("/q", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	var names []string
	for i := 0; i < 3; i++ {
		p, err := c.Create("/q/item-", nil, zk.FlagSequence, acl)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, p)
		if i == 0 {
			if err := c.Delete(p, -1); err != nil {
				t.Fatal(err)
			}
		}
	}
	want := []string{"/q/item-0000000000", "/q/item-0000000001", "/q/item-0000000002"}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("sequential names = %v, want %v", names, want)
		}
	}
	p, err := c.Create("/q/eph", nil, zk.FlagEphemeral, acl)
	if err != nil {
		t.Fatal(err)
	}
	_, st, _ := c.Get(p)
	if st.EphemeralOwner != c.SessionID() {
		t.Fatalf("ephemeralOwner = %x, want session %x", st.EphemeralOwner, c.SessionID())
	}
	if _, err := c.Create("/q/eph/child", nil, 0, acl); !errors.Is(err, zk.ErrNoChildrenForEphemerals) {
		t.Fatalf("child of ephemeral: %v", err)
	}
}

func TestWatchesFireInOrderBeforeLaterReplies(t *testing.T) {
	srv, _ := startServer(t, nil)
	watcher := connect(t, srv)
	writer := connect(t, srv)
	acl := zk.WorldACL(zk.PermAll)

	_, _, created, err := watcher.ExistsW("/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Create("/w", []byte("x"), 0, acl); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, created); ev.Type != zk.EventNodeCreated || ev.Path != "/w" {
		t.Fatalf("exists watch: %+v", ev)
	}
	_, _, changed, err := watcher.GetW("/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kids, err := watcher.ChildrenW("/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := writer.Set("/w", []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, changed); ev.Type != zk.EventNodeDataChanged {
		t.Fatalf("data watch: %+v", ev)
	}
	if _, err := writer.Create("/w/c", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, kids); ev.Type != zk.EventNodeChildrenChanged || ev.Path != "/w" {
		t.Fatalf("child watch: %+v", ev)
	}
	// One-shot: a second change fires nothing on the old registration, and
	// a delete reaches a fresh data watch.
	_, _, gone, err := watcher.GetW("/w/c")
	if err != nil {
		t.Fatal(err)
	}
	if err := writer.Delete("/w/c", -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, gone); ev.Type != zk.EventNodeDeleted || ev.Path != "/w/c" {
		t.Fatalf("delete watch: %+v", ev)
	}
}

func TestMultiIsAtomic(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	acl := zk.WorldACL(zk.PermAll)
	res, err := c.Multi(
		&zk.CreateRequest{Path: "/m", Data: []byte("d"), Acl: acl},
		&zk.CreateRequest{Path: "/m/1", Acl: acl},
		&zk.SetDataRequest{Path: "/m", Data: []byte("e"), Version: 0},
		&zk.CheckVersionRequest{Path: "/m", Version: 1},
	)
	if err != nil || len(res) != 4 || res[0].String != "/m" || res[1].String != "/m/1" {
		t.Fatalf("multi = %+v, %v", res, err)
	}
	res, err = c.Multi(
		&zk.CreateRequest{Path: "/m/2", Acl: acl},
		&zk.DeleteRequest{Path: "/nope", Version: -1},
		&zk.CreateRequest{Path: "/m/3", Acl: acl},
	)
	if !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("failing multi error = %v", err)
	}
	// go-zookeeper has no name for RuntimeInconsistency (-2): it reports
	// an unknown error for the ops after the failing one.
	if len(res) != 3 || res[0].Error != nil || !errors.Is(res[1].Error, zk.ErrNoNode) || res[2].Error == nil {
		t.Fatalf("failing multi results = %+v", res)
	}
	if ok, _, _ := c.Exists("/m/2"); ok {
		t.Fatal("failed multi left /m/2 behind")
	}
}

func TestDigestACL(t *testing.T) {
	srv, _ := startServer(t, nil)
	owner := connect(t, srv)
	other := connect(t, srv)
	if err := owner.AddAuth("digest", []byte("bob:secret")); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create("/private", []byte("s"), 0, zk.AuthACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Get("/private"); !errors.Is(err, zk.ErrNoAuth) {
		t.Fatalf("get without auth: %v", err)
	}
	if _, err := other.Create("/p2", nil, 0, zk.AuthACL(zk.PermAll)); !errors.Is(err, zk.ErrInvalidACL) {
		t.Fatalf("auth ACL without identities: %v", err)
	}
	acl, _, err := other.GetACL("/private")
	if err != nil {
		// READ is needed for getACL; no ADMIN → NoAuth here.
		if !errors.Is(err, zk.ErrNoAuth) {
			t.Fatal(err)
		}
	} else {
		t.Fatalf("getACL without permission returned %v", acl)
	}
	acl, _, err = owner.GetACL("/private")
	if err != nil || len(acl) != 1 || acl[0].Scheme != "digest" || acl[0].ID != "bob:fyVmFCwVbTJYrznoSu1koqYEYF0=" {
		t.Fatalf("owner getACL = %+v, %v", acl, err)
	}
}

func TestSessionExpiryDeletesEphemeralsAndFiresWatches(t *testing.T) {
	srv, clock := startServer(t, func(c *Config) { c.TickTime = 2000 })
	doomed := connect(t, srv)
	observer := connect(t, srv)
	if _, err := doomed.Create("/lease", nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	_, _, gone, err := observer.GetW("/lease")
	if err != nil {
		t.Fatal(err)
	}
	// Move past the doomed session's deadline; the observer sends a request
	// at the new time, so only the doomed one has been silent.
	now := clock.Advance(2 * time.Minute)
	if _, _, err := observer.Exists("/"); err != nil {
		t.Fatal(err)
	}
	srv.ExpireSessions(now)
	if ev := waitEvent(t, gone); ev.Type != zk.EventNodeDeleted || ev.Path != "/lease" {
		t.Fatalf("event = %+v", ev)
	}
	if ok, _, _ := observer.Exists("/lease"); ok {
		t.Fatal("ephemeral survived its session")
	}
	srv.node.RLock()
	_, alive := srv.node.FSM().Session(fsm.SessionID(doomed.SessionID()))
	_, observerAlive := srv.node.FSM().Session(fsm.SessionID(observer.SessionID()))
	srv.node.RUnlock()
	if alive || !observerAlive {
		t.Fatalf("sessions after expiry: doomed alive=%v, observer alive=%v", alive, observerAlive)
	}
}

func TestFourLetterWords(t *testing.T) {
	srv, _ := startServer(t, nil)
	connect(t, srv)
	ok := zk.FLWRuok([]string{srv.Addr().String()}, 5*time.Second)
	if len(ok) != 1 || !ok[0] {
		t.Fatalf("ruok = %v", ok)
	}
	stats, fine := zk.FLWSrvr([]string{srv.Addr().String()}, 5*time.Second)
	if !fine || stats[0].Error != nil {
		t.Fatalf("srvr did not parse: %+v", stats[0])
	}
	if stats[0].Mode != zk.ModeStandalone || stats[0].NodeCount != 5 || stats[0].Connections != 2 { // the client and the srvr connection itself
		t.Fatalf("srvr = %+v", stats[0])
	}
	// cons is not in the default whitelist.
	out := fourLetter(t, srv, "cons")
	if out != "cons is not executed because it is not in the whitelist.\n" {
		t.Fatalf("cons = %q", out)
	}
}

func fourLetter(t *testing.T, srv *Server, cmd string) string {
	t.Helper()
	nc, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := io.WriteString(nc, cmd); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(nc)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// rawSession performs a handshake by hand and returns the connection.
func rawSession(t *testing.T, srv *Server) net.Conn {
	t.Helper()
	nc, resp, ok := dialConnect(t, srv, 0, nil)
	if !ok || resp.SessionID == 0 || len(resp.Passwd) != 16 {
		t.Fatalf("connect response %+v, %v", resp, ok)
	}
	return nc
}

func TestUnknownOpcodeGetsUnimplementedThenClose(t *testing.T) {
	srv, _ := startServer(t, nil)
	for _, op := range []wire.OpCode{wire.OpCheck, 42, wire.OpNotification} {
		nc := rawSession(t, srv)
		h := wire.RequestHeader{Xid: 7, Type: op}
		nc.Write(wire.AppendFrame(nil, h.Encode))
		body, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
		if err != nil {
			t.Fatalf("op %d: %v", op, err)
		}
		var rh wire.ReplyHeader
		if err := wire.Unmarshal(body, &rh, 0); err != nil || rh.Xid != 7 || rh.Err != wire.ErrUnimplemented || rh.Zxid != -1 {
			t.Fatalf("op %d: reply %+v, %v", op, rh, err)
		}
		if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err == nil {
			t.Fatalf("op %d: connection still open", op)
		}
	}
}

func TestOversizedFrameClosesOnlyThatConnection(t *testing.T) {
	srv, _ := startServer(t, nil)
	good := connect(t, srv)
	nc := rawSession(t, srv)
	nc.Write([]byte{0x00, 0x20, 0x00, 0x00}) // 2 MiB > jute.maxbuffer
	if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err == nil {
		t.Fatal("oversized frame did not close the connection")
	}
	if _, err := good.Create("/still-fine", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("other client affected: %v", err)
	}
}

func TestMaxClientCnxnsPerAddress(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.MaxClientCnxns = 2 })
	a, b := rawSession(t, srv), rawSession(t, srv)
	_, _ = a, b
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := nc.Read(make([]byte, 1)); err == nil {
		t.Fatal("third connection from one address was accepted")
	}
}

func TestReattachWithWrongPasswordIsExpired(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := wire.ConnectRequest{TimeOut: 30000, SessionID: c.SessionID(), Passwd: make([]byte, 16), HasReadOnly: true}
	nc.Write(wire.AppendFrame(nil, req.Encode))
	body, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
	if err != nil {
		t.Fatal(err)
	}
	var resp wire.ConnectResponse
	if err := wire.Unmarshal(body, &resp, 0); err != nil {
		t.Fatal(err)
	}
	if resp.TimeOut != 0 || resp.SessionID != 0 || len(resp.Passwd) != 16 {
		t.Fatalf("response = %+v", resp)
	}
}

func TestClientAheadOfServerIsRefused(t *testing.T) {
	srv, _ := startServer(t, nil)
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	req := wire.ConnectRequest{TimeOut: 30000, LastZxidSeen: 1 << 40, Passwd: make([]byte, 16)}
	nc.Write(wire.AppendFrame(nil, req.Encode))
	if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err == nil {
		t.Fatal("got a response to a connect from the future")
	}
}

func TestEphemeralsList(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	for _, p := range []string{"/e1", "/e2"} {
		if _, err := c.Create(p, nil, zk.FlagEphemeral, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	srv.node.RLock()
	got := srv.node.FSM().Tree().Ephemerals(c.SessionID(), "/")
	srv.node.RUnlock()
	sort.Strings(got)
	if len(got) != 2 || got[0] != "/e1" || got[1] != "/e2" {
		t.Fatalf("ephemerals = %v", got)
	}
}

func TestContainersAndTTLNodesExpire(t *testing.T) {
	srv, clock := startServer(t, func(c *Config) { c.ExtendedTypesEnabled = true })
	c := connect(t, srv)
	acl := zk.WorldACL(zk.PermAll)
	if _, err := c.CreateContainer("/box", nil, zk.FlagContainer, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create("/box/item", nil, 0, acl); err != nil {
		t.Fatal(err)
	}
	if _, err := c.CreateTTL("/ttl", nil, zk.FlagTTL, acl, time.Minute); err != nil {
		t.Fatal(err)
	}
	_, _, boxGone, err := c.ExistsW("/box")
	if err != nil {
		t.Fatal(err)
	}
	// A container with a child stays; a young TTL node stays.
	srv.ExpireContainers(clock.Now())
	if ok, _, _ := c.Exists("/ttl"); !ok {
		t.Fatal("TTL node removed before its TTL")
	}
	if err := c.Delete("/box/item", -1); err != nil {
		t.Fatal(err)
	}
	srv.ExpireContainers(clock.Now())
	if ev := waitEvent(t, boxGone); ev.Type != zk.EventNodeDeleted || ev.Path != "/box" {
		t.Fatalf("container event = %+v", ev)
	}
	_, _, ttlGone, err := c.ExistsW("/ttl")
	if err != nil {
		t.Fatal(err)
	}
	srv.ExpireContainers(clock.Advance(2 * time.Minute))
	if ev := waitEvent(t, ttlGone); ev.Type != zk.EventNodeDeleted || ev.Path != "/ttl" {
		t.Fatalf("TTL event = %+v", ev)
	}
}

func TestManyIdleConnectionsDoNotDisturbOthers(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.MaxClientCnxns = 0 })
	const idle = 2000
	conns := make([]net.Conn, 0, idle)
	defer func() {
		for _, nc := range conns {
			nc.Close()
		}
	}()
	for i := 0; i < idle; i++ {
		nc, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
		if err != nil {
			t.Fatalf("connection %d: %v", i, err)
		}
		conns = append(conns, nc)
	}
	// Half of them hold sessions and then go quiet.
	for _, nc := range conns[:idle/2] {
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		req := wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}
		if _, err := nc.Write(wire.AppendFrame(nil, req.Encode)); err != nil {
			t.Fatal(err)
		}
		if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err != nil {
			t.Fatal(err)
		}
	}
	c := connect(t, srv)
	if _, err := c.Create("/busy", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatalf("client among idle connections: %v", err)
	}
	srv.node.RLock()
	sessions := len(srv.node.FSM().SessionIDs())
	srv.node.RUnlock()
	if sessions != idle/2+1 {
		t.Fatalf("sessions = %d, want %d", sessions, idle/2+1)
	}
}

func TestMalformedRequestBodyGetsMarshallingError(t *testing.T) {
	srv, _ := startServer(t, nil)
	nc := rawSession(t, srv)
	// getData whose path length runs past the frame.
	frame := wire.AppendFrame(nil, func(e *wire.Encoder) {
		(&wire.RequestHeader{Xid: 3, Type: wire.OpGetData}).Encode(e)
		e.Int32(100)
		e.Byte('/')
	})
	nc.Write(frame)
	body, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
	if err != nil {
		t.Fatal(err)
	}
	var rh wire.ReplyHeader
	if err := wire.Unmarshal(body, &rh, 0); err != nil || rh.Xid != 3 || rh.Err != wire.ErrMarshallingError {
		t.Fatalf("reply = %+v, %v", rh, err)
	}
	// The connection still works.
	ping := wire.RequestHeader{Xid: wire.XidPing, Type: wire.OpPing}
	nc.Write(wire.AppendFrame(nil, ping.Encode))
	body, err = wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wire.Unmarshal(body, &rh, 0); err != nil || rh.Xid != wire.XidPing || rh.Err != 0 {
		t.Fatalf("ping reply = %+v, %v", rh, err)
	}
}

func TestClientThatNeverReadsIsDisconnected(t *testing.T) {
	srv, _ := startServerOpts(t, nil, Options{MaxQueuedBytes: 1 << 20})
	good := connect(t, srv)
	big := make([]byte, 512<<10)
	if _, err := good.Create("/big", big, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	nc := rawSession(t, srv)
	nc.SetDeadline(time.Now().Add(20 * time.Second))
	// Ask for the 512 KiB node over and over without reading a byte: the
	// socket buffers fill, then the server's queue, and the server hangs up.
	req := wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/big"})
	var writeErr error
	for i := 0; i < 400 && writeErr == nil; i++ {
		_, writeErr = nc.Write(req)
	}
	// Whether or not the writes failed yet, reading now must end in EOF or
	// reset after the replies the kernel held, never in a timeout.
	buf := make([]byte, 1<<20)
	for {
		if _, err := nc.Read(buf); err != nil {
			if ne, ok := err.(net.Error); ok && ne.Timeout() {
				t.Fatal("server kept the non-reading client's connection open")
			}
			break
		}
	}
	if _, _, err := good.Get("/big"); err != nil {
		t.Fatalf("other client affected: %v", err)
	}
}
