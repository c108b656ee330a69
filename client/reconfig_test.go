package client

import (
	"errors"
	"net"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/wire"
)

// configServer is a fake ZooKeeper that keeps a /zookeeper/config, answers
// getData (with watches) and reconfig the way a ZooKeeper leader does, and
// records the reconfig requests it got. It serves one connection at a
// time; every goroutine ends at test cleanup.
type configServer struct {
	t  *testing.T
	ln net.Listener

	mu       sync.Mutex
	config   string
	version  int32 // the node's dataVersion
	watchers []net.Conn
	got      []wire.ReconfigRequest
	// answer, when set, decides a reconfig's result (else it succeeds and
	// the config becomes req's NewMembers or JoiningServers).
	answer func(req wire.ReconfigRequest) wire.Code
}

func startConfigServer(t *testing.T, config string) *configServer {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &configServer{t: t, ln: ln, config: config}
	var wg sync.WaitGroup
	var conns []net.Conn
	var cmu sync.Mutex
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			cmu.Lock()
			conns = append(conns, nc)
			cmu.Unlock()
			wg.Add(1)
			go func() {
				defer wg.Done()
				s.serve(nc)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		cmu.Lock()
		for _, c := range conns {
			c.Close()
		}
		cmu.Unlock()
		wg.Wait()
	})
	return s
}

func (s *configServer) addr() string { return s.ln.Addr().String() }

func (s *configServer) write(nc net.Conn, recs ...wire.Record) {
	s.mu.Lock()
	defer s.mu.Unlock()
	nc.Write(wire.AppendRecords(nil, recs...))
}

func (s *configServer) stat() wire.Stat {
	return wire.Stat{Czxid: 0, Mzxid: 0x100000000 + int64(s.version), Version: s.version, DataLength: int32(len(s.config))}
}

func (s *configServer) serve(nc net.Conn) {
	if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err != nil {
		return
	}
	s.write(nc, &wire.ConnectResponse{TimeOut: 10000, SessionID: 7, Passwd: make([]byte, 16)})
	for {
		frame, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil)
		if err != nil {
			return
		}
		d := wire.NewDecoder(frame, 0)
		var h wire.RequestHeader
		h.Decode(d)
		reply := &wire.ReplyHeader{Xid: h.Xid, Zxid: 0x100000000}
		switch h.Type {
		case wire.OpPing:
			s.write(nc, reply)
		case wire.OpGetData:
			var req wire.GetDataRequest
			req.Decode(d)
			if req.Path != ConfigPath {
				reply.Err = wire.ErrNoNode
				s.write(nc, reply)
				continue
			}
			s.mu.Lock()
			if req.Watch {
				s.watchers = append(s.watchers, nc)
			}
			resp := &wire.GetDataResponse{Data: []byte(s.config), Stat: s.stat()}
			s.mu.Unlock()
			s.write(nc, reply, resp)
		case wire.OpReconfig:
			var req wire.ReconfigRequest
			req.Decode(d)
			s.mu.Lock()
			s.got = append(s.got, req)
			code := wire.CodeOK
			if s.answer != nil {
				code = s.answer(req)
			}
			if code != wire.CodeOK {
				s.mu.Unlock()
				reply.Err = code
				s.write(nc, reply)
				continue
			}
			if req.NullMembers {
				s.config = req.JoiningServers + "\nversion=200000001"
			} else {
				s.config = req.NewMembers + "\nversion=200000001"
			}
			s.version++
			resp := &wire.GetDataResponse{Data: []byte(s.config), Stat: s.stat()}
			watchers := s.watchers
			s.watchers = nil
			s.mu.Unlock()
			s.write(nc, reply, resp)
			for _, w := range watchers {
				s.write(w, &wire.ReplyHeader{Xid: wire.XidNotification, Zxid: 0x200000001},
					&wire.WatcherEvent{Type: wire.EventNodeDataChanged, State: 3, Path: ConfigPath})
			}
		case wire.OpCloseSession:
			s.write(nc, reply)
			return
		default:
			reply.Err = wire.ErrUnimplemented
			s.write(nc, reply)
		}
	}
}

func (s *configServer) requests() []wire.ReconfigRequest {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]wire.ReconfigRequest(nil), s.got...)
}

// TestReconfigRequests checks what Reconfig and IncrementalReconfig send:
// the lists comma-joined, the ones not given null (as ZooKeeperAdmin
// sends them; ZooKeeper reads a non-null newMembers as a non-incremental
// reconfig), and fromConfig; and that they return the new configuration
// and its Stat.
func TestReconfigRequests(t *testing.T) {
	srv := startConfigServer(t, "server.1=127.0.0.1:2888:3888:participant;127.0.0.1:2181\nversion=100000000")
	c := connect(t, srv.addr())
	ctx := ctxT(t)

	data, st, err := c.IncrementalReconfig(ctx, []string{"server.4=h4:1:2;3", "server.5=h5:1:2;3"}, []string{"2", "3"}, 0x100000000)
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "server.4=h4:1:2;3,server.5=h5:1:2;3\nversion=200000001" || st.Version != 1 {
		t.Fatalf("IncrementalReconfig = %q, %+v", data, st)
	}
	if _, _, err := c.IncrementalReconfig(ctx, nil, []string{"3"}, AnyConfig); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.IncrementalReconfig(ctx, []string{"server.6=h6:1:2;3"}, nil, AnyConfig); err != nil {
		t.Fatal(err)
	}
	data, _, err = c.Reconfig(ctx, []string{"server.1=a:1:2;3", "server.2=b:1:2;3"}, AnyConfig)
	if err != nil || string(data) != "server.1=a:1:2;3,server.2=b:1:2;3\nversion=200000001" {
		t.Fatalf("Reconfig = %q, %v", data, err)
	}
	want := []wire.ReconfigRequest{
		{JoiningServers: "server.4=h4:1:2;3,server.5=h5:1:2;3", LeavingServers: "2,3", NullMembers: true, CurConfigID: 0x100000000},
		{NullJoining: true, LeavingServers: "3", NullMembers: true, CurConfigID: -1},
		{JoiningServers: "server.6=h6:1:2;3", NullLeaving: true, NullMembers: true, CurConfigID: -1},
		{NullJoining: true, NullLeaving: true, NewMembers: "server.1=a:1:2;3,server.2=b:1:2;3", CurConfigID: -1},
	}
	got := srv.requests()
	if len(got) != len(want) {
		t.Fatalf("server got %d reconfigs, want %d: %+v", len(got), len(want), got)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("reconfig %d sent %+v, want %+v", i, got[i], want[i])
		}
	}
	if _, _, err := c.Reconfig(ctx, nil, AnyConfig); !errors.Is(err, ErrBadArguments) {
		t.Errorf("Reconfig without members = %v, want ErrBadArguments", err)
	}
	if n := len(srv.requests()); n != len(want) {
		t.Errorf("Reconfig without members reached the server")
	}
}

// TestReconfigErrors: the server's codes come back as the client's error
// values.
func TestReconfigErrors(t *testing.T) {
	srv := startConfigServer(t, "")
	c := connect(t, srv.addr())
	ctx := ctxT(t)
	for _, want := range []error{ErrReconfigDisabled, ErrNewConfigNoQuorum, ErrReconfigInProgress, ErrBadVersion, ErrBadArguments, ErrNoAuth, ErrUnimplemented} {
		srv.mu.Lock()
		srv.answer = func(wire.ReconfigRequest) wire.Code { return wire.CodeOf(want) }
		srv.mu.Unlock()
		if _, _, err := c.IncrementalReconfig(ctx, nil, []string{"1"}, AnyConfig); !errors.Is(err, want) {
			t.Errorf("server answered %v; client returned %v", want, err)
		}
	}
	if wire.CodeOf(ErrReconfigDisabled) != -123 || wire.CodeOf(ErrNewConfigNoQuorum) != -13 || wire.CodeOf(ErrReconfigInProgress) != -14 {
		t.Error("reconfig error codes differ from ZooKeeper's")
	}
}

// TestGetConfigWatchUnderChroot: a config watch set under a chroot fires
// for /zookeeper/config, is reported as ConfigPath, and does not fire a
// data watch on the chroot's own /zookeeper/config.
func TestGetConfigWatchUnderChroot(t *testing.T) {
	srv := startConfigServer(t, "server.1=h:1:2;3\nversion=1")
	c := connect(t, srv.addr()+"/app")
	ctx := ctxT(t)
	data, _, ch, err := c.GetConfigW(ctx)
	if err != nil || string(data) != "server.1=h:1:2;3\nversion=1" {
		t.Fatalf("GetConfigW = %q, %v", data, err)
	}
	other := make(chan Event, 1)
	c.watches.addOneShot(kindData, ConfigPath, other) // GetW("/zookeeper/config") under /app
	if _, _, err := c.Reconfig(ctx, []string{"server.2=h:1:2;3"}, AnyConfig); err != nil {
		t.Fatal(err)
	}
	ev := waitEvent(t, ch)
	if ev.Type != wire.EventNodeDataChanged || ev.Path != ConfigPath || ev.Err != nil || ev.Zxid != 0x200000001 {
		t.Fatalf("config event = %+v", ev)
	}
	noEvent(t, other)
	// The registration is gone after firing.
	c.watches.mu.Lock()
	n := len(c.watches.config)
	c.watches.mu.Unlock()
	if n != 0 {
		t.Fatalf("%d config watchers left after the event", n)
	}
}

// TestGetConfigWatchRearmedWithoutChroot: after a reconnect, the config
// watch is re-armed at /zookeeper/config itself, not under the chroot.
func TestGetConfigWatchRearmedWithoutChroot(t *testing.T) {
	srv := startConfigServer(t, "")
	c := connect(t, srv.addr()+"/app")
	if _, _, _, err := c.GetConfigW(ctxT(t)); err != nil {
		t.Fatal(err)
	}
	reqs := c.watches.setWatches(0)
	if len(reqs) != 1 {
		t.Fatalf("%d setWatches requests, want 1", len(reqs))
	}
	sw := reqs[0].body.(*wire.SetWatches)
	if len(sw.DataWatches) != 1 || sw.DataWatches[0] != ConfigPath {
		t.Fatalf("data watches re-armed: %v, want [%s]", sw.DataWatches, ConfigPath)
	}
}

// TestEnsembleTrackingFollowsConfig: with WithEnsembleTracking the Conn
// reads the configuration, takes its client addresses as the server list,
// and follows a reconfig that moves the ensemble to another server: it
// leaves the removed one for the new one.
func TestEnsembleTrackingFollowsConfig(t *testing.T) {
	a := startConfigServer(t, "")
	b := startConfigServer(t, "")
	cfg := func(addr string) string {
		host, port, _ := net.SplitHostPort(addr)
		return "server.1=" + host + ":2888:3888:participant;" + port
	}
	a.config = cfg(a.addr()) + "\nversion=100000000"
	c := connect(t, a.addr(), WithEnsembleTracking())
	// The port-only client address is joined with the quorum host.
	waitServers(t, c, []string{a.addr()})
	if _, _, err := c.Reconfig(ctxT(t), []string{cfg(b.addr())}, AnyConfig); err != nil {
		t.Fatal(err)
	}
	waitServers(t, c, []string{b.addr()})
	deadline := time.Now().Add(wait)
	for c.Server() != b.addr() {
		if time.Now().After(deadline) {
			t.Fatalf("still on %q, want %s", c.Server(), b.addr())
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func waitServers(t *testing.T, c *Conn, want []string) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for {
		got := c.Servers()
		slices.Sort(got)
		if slices.Equal(got, want) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("servers %v, want %v", got, want)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
