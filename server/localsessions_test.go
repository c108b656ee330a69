package server_test

import (
	"bufio"
	"errors"
	"io"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
)

// wireSession is a client connection spoken by hand: the Go client has no
// read-only mode and hides its password.
type wireSession struct {
	t      *testing.T
	nc     net.Conn
	br     *bufio.Reader
	xid    int32
	resp   wire.ConnectResponse
	events []wire.WatcherEvent
}

// dialWire connects to addr for session id (0: a new one) with the
// ConnectRequest's readOnly flag; ok is false when the server closed the
// connection instead of answering.
func dialWire(t *testing.T, addr string, id int64, passwd []byte, readOnly bool) (s *wireSession, ok bool) {
	t.Helper()
	nc, err := net.DialTimeout("tcp", addr, 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { nc.Close() })
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := wire.ConnectRequest{TimeOut: 10000, SessionID: id, Passwd: passwd, ReadOnly: readOnly, HasReadOnly: true}
	if _, err := nc.Write(wire.AppendRecords(nil, &req)); err != nil {
		t.Fatal(err)
	}
	s = &wireSession{t: t, nc: nc, br: bufio.NewReader(nc)}
	frame, err := wire.ReadFrame(s.br, 0, nil)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		t.Fatalf("connect to %s: no ConnectResponse and no close within 10s", addr)
	}
	if err != nil {
		return nil, false
	}
	if err := wire.Unmarshal(frame, &s.resp, 0); err != nil {
		t.Fatal(err)
	}
	return s, true
}

// mustDialWire connects and fails the test unless a live session results.
func mustDialWire(t *testing.T, addr string, id int64, passwd []byte, readOnly bool) *wireSession {
	t.Helper()
	s, ok := dialWire(t, addr, id, passwd, readOnly)
	if !ok {
		t.Fatalf("connect to %s (session %#x, readOnly %v): connection closed", addr, id, readOnly)
	}
	if s.resp.SessionID == 0 {
		t.Fatalf("connect to %s (session %#x): session expired", addr, id)
	}
	return s
}

// call sends one request and returns the reply's header and body,
// keeping notifications that arrive first.
func (s *wireSession) call(op wire.OpCode, req wire.Record) (wire.ReplyHeader, *wire.Decoder) {
	s.t.Helper()
	s.xid++
	xid := s.xid
	if op == wire.OpPing {
		xid = wire.XidPing
	}
	s.nc.SetDeadline(time.Now().Add(10 * time.Second))
	if _, err := s.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: xid, Type: op}, req)); err != nil {
		s.t.Fatalf("op %d: %v", op, err)
	}
	for {
		body, err := wire.ReadFrame(s.br, wire.DefaultMaxBuffer, nil)
		if err != nil {
			s.t.Fatalf("op %d: %v", op, err)
		}
		d := wire.NewDecoder(body, 0)
		var h wire.ReplyHeader
		h.Decode(d)
		if h.Xid == wire.XidNotification {
			var ev wire.WatcherEvent
			ev.Decode(d)
			s.events = append(s.events, ev)
			continue
		}
		if h.Xid != xid {
			s.t.Fatalf("reply xid %d, want %d", h.Xid, xid)
		}
		return h, d
	}
}

// code calls op and returns the reply's error code.
func (s *wireSession) code(op wire.OpCode, req wire.Record) wire.Code {
	s.t.Helper()
	h, _ := s.call(op, req)
	return h.Err
}

// waitEvent reads until a notification arrives.
func (s *wireSession) waitEvent() wire.WatcherEvent {
	s.t.Helper()
	if len(s.events) > 0 {
		ev := s.events[0]
		s.events = s.events[1:]
		return ev
	}
	s.nc.SetDeadline(time.Now().Add(10 * time.Second))
	body, err := wire.ReadFrame(s.br, wire.DefaultMaxBuffer, nil)
	if err != nil {
		s.t.Fatalf("waiting for a notification: %v", err)
	}
	d := wire.NewDecoder(body, 0)
	var h wire.ReplyHeader
	h.Decode(d)
	if h.Xid != wire.XidNotification {
		s.t.Fatalf("got reply xid %d while waiting for a notification", h.Xid)
	}
	var ev wire.WatcherEvent
	ev.Decode(d)
	return ev
}

// waitClosed waits until the server closes the connection.
func (s *wireSession) waitClosed() {
	s.t.Helper()
	s.nc.SetReadDeadline(time.Now().Add(10 * time.Second))
	_, err := io.Copy(io.Discard, s.br)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		s.t.Fatal("the server did not close the connection within 10s")
	}
}

func createReq(path string, mode wire.CreateMode) *wire.CreateRequest {
	return &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: int32(mode)}
}

// mntrValue returns one key of a member's mntr output.
func mntrValue(t *testing.T, addr, key string) string {
	t.Helper()
	for _, line := range strings.Split(fourLetter(t, addr, "mntr"), "\n") {
		if k, v, ok := strings.Cut(line, "\t"); ok && k == "zk_"+key {
			return v
		}
	}
	t.Fatalf("mntr of %s has no zk_%s", addr, key)
	return ""
}

func localSessions(upgrading bool) servertest.EnsembleOption {
	return servertest.WithMemberConfig(func(c *server.Config) {
		c.LocalSessionsEnabled = true
		c.LocalSessionsUpgradingEnabled = upgrading
	})
}

func TestLocalSessionLivesOnlyOnItsMember(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3, localSessions(false))
	l := e.Leader()
	f, other := e.Followers()[0], e.Followers()[1]
	e.WaitApplied()
	index := e.Member(l).AppliedIndex()

	s := mustDialWire(t, e.Addr(f), 0, nil, false)
	if top := s.resp.SessionID >> 56; top != int64(f+1) {
		t.Fatalf("session id %#x: top byte %d, want the member id %d", s.resp.SessionID, top, f+1)
	}
	if code := s.code(wire.OpPing, nil); code != wire.CodeOK {
		t.Fatalf("ping: %v", code)
	}
	for _, i := range e.All() {
		want := "0"
		if i == f {
			want = "1"
		}
		if got := mntrValue(t, e.Addr(i), "local_sessions"); got != want {
			t.Errorf("member %d: local_sessions %s, want %s", i+1, got, want)
		}
		if got := mntrValue(t, e.Addr(i), "global_sessions"); got != "0" {
			t.Errorf("member %d: global_sessions %s, want 0", i+1, got)
		}
	}
	e.WaitApplied() // whatever a member applied, the leader has too
	if got := e.Member(l).AppliedIndex(); got != index {
		t.Fatalf("creating a local session took log entries: index %d -> %d", index, got)
	}

	// Writes go through the log and are seen everywhere; watches work.
	if code := s.code(wire.OpCreate, createReq("/local", wire.ModePersistent)); code != wire.CodeOK {
		t.Fatalf("create from a local session: %v", code)
	}
	if code := s.code(wire.OpGetData, &wire.GetDataRequest{Path: "/local", Watch: true}); code != wire.CodeOK {
		t.Fatalf("getData: %v", code)
	}
	writer := connectTo(t, e, other)
	if _, err := writer.Set(ctxT(t), "/local", []byte("v"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := s.waitEvent(); ev.Type != wire.EventNodeDataChanged || ev.Path != "/local" {
		t.Fatalf("event %+v", ev)
	}
	if code := s.code(wire.OpSetData, &wire.SetDataRequest{Path: "/local", Data: []byte("w"), Version: -1}); code != wire.CodeOK {
		t.Fatalf("setData from a local session: %v", code)
	}
	if got := get(t, writer, "/local"); got != "w" {
		t.Fatalf("/local = %q on another member", got)
	}

	// No ephemerals without upgrading, alone or in a multi; nothing is
	// created.
	if code := s.code(wire.OpCreate, createReq("/eph", wire.ModeEphemeral)); code != wire.ErrEphemeralOnLocalSession {
		t.Fatalf("ephemeral create: %v, want EPHEMERALONLOCALSESSION", code)
	}
	multi := &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: createReq("/m", wire.ModePersistent)},
		{Type: wire.OpCreate, Req: createReq("/m/eph", wire.ModeEphemeralSequential)},
	}}
	if code := s.code(wire.OpMulti, multi); code != wire.ErrEphemeralOnLocalSession {
		t.Fatalf("multi with an ephemeral create: %v, want EPHEMERALONLOCALSESSION", code)
	}
	if _, ok, _ := writer.Exists(ctxT(t), "/m"); ok {
		t.Fatal("the refused multi created /m")
	}
	// Containers are not ephemeral.
	if code := s.code(wire.OpCreateContainer, createReq("/c", wire.ModeContainer)); code != wire.CodeOK {
		t.Fatalf("container create from a local session: %v", code)
	}

	// Another member does not know the session: expired there.
	if s2, ok := dialWire(t, e.Addr(other), s.resp.SessionID, s.resp.Passwd, false); !ok || s2.resp.SessionID != 0 || s2.resp.TimeOut != 0 {
		t.Fatalf("reconnect on another member: closed=%v, want an expired-session answer", !ok)
	}
	// Its own member does, with the right password only.
	if s3, ok := dialWire(t, e.Addr(f), s.resp.SessionID, make([]byte, 16), false); !ok || s3.resp.SessionID != 0 {
		t.Fatal("reconnect with a wrong password was accepted")
	}
	again := mustDialWire(t, e.Addr(f), s.resp.SessionID, s.resp.Passwd, false)
	s.waitClosed() // the older connection of the session
	e.WaitApplied()
	index = e.Member(l).AppliedIndex()
	if code := again.code(wire.OpCloseSession, nil); code != wire.CodeOK {
		t.Fatalf("closeSession: %v", code)
	}
	again.waitClosed()
	if got := mntrValue(t, e.Addr(f), "local_sessions"); got != "0" {
		t.Fatalf("local_sessions %s after close", got)
	}
	e.WaitApplied()
	if got := e.Member(l).AppliedIndex(); got != index {
		t.Fatalf("closing a local session took log entries: index %d -> %d", index, got)
	}
	if s4, ok := dialWire(t, e.Addr(f), again.resp.SessionID, again.resp.Passwd, false); !ok || s4.resp.SessionID != 0 {
		t.Fatal("a closed local session could be resumed")
	}
}

func TestLocalSessionExpiresOnItsOwnMember(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3, localSessions(false))
	f := e.Followers()[0]
	s := mustDialWire(t, e.Addr(f), 0, nil, false)
	live := mustDialWire(t, e.Addr(f), 0, nil, false)
	expired := mntrValue(t, e.Addr(f), "session_expired_count")
	now := e.Clock.Advance(time.Minute)
	// The leader does not expire another member's local sessions.
	e.Member(e.Leader()).ExpireSessions(now)
	if got := mntrValue(t, e.Addr(f), "local_sessions"); got != "2" {
		t.Fatalf("local_sessions %s after the leader's expiry run, want 2", got)
	}
	if code := live.code(wire.OpPing, nil); code != wire.CodeOK { // heard from: a new deadline
		t.Fatalf("ping: %v", code)
	}
	e.Member(f).ExpireSessions(now)
	s.waitClosed()
	if got := mntrValue(t, e.Addr(f), "local_sessions"); got != "1" {
		t.Fatalf("local_sessions %s after expiry, want 1", got)
	}
	if got, _ := strconv.Atoi(mntrValue(t, e.Addr(f), "session_expired_count")); strconv.Itoa(got-1) != expired {
		t.Fatalf("session_expired_count %d, was %s", got, expired)
	}
	if s2, ok := dialWire(t, e.Addr(f), s.resp.SessionID, s.resp.Passwd, false); !ok || s2.resp.SessionID != 0 {
		t.Fatal("an expired local session could be resumed")
	}
	if code := live.code(wire.OpExists, &wire.ExistsRequest{Path: "/"}); code != wire.CodeOK {
		t.Fatalf("the live local session after the expiry run: %v", code)
	}
}

func TestLocalSessionUpgradesForItsFirstEphemeral(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3, localSessions(true))
	f, other := e.Followers()[0], e.Followers()[1]
	s := mustDialWire(t, e.Addr(f), 0, nil, false)
	if code := s.code(wire.OpCreate, createReq("/p", wire.ModePersistent)); code != wire.CodeOK {
		t.Fatalf("persistent create: %v", code)
	}
	if got := mntrValue(t, e.Addr(e.Leader()), "global_sessions"); got != "0" {
		t.Fatalf("global_sessions %s before any ephemeral", got)
	}
	if code := s.code(wire.OpCreate, createReq("/p/eph", wire.ModeEphemeral)); code != wire.CodeOK {
		t.Fatalf("ephemeral create with upgrading: %v", code)
	}
	e.WaitCaughtUp()
	for _, i := range e.All() {
		if got := mntrValue(t, e.Addr(i), "global_sessions"); got != "1" {
			t.Errorf("member %d: global_sessions %s after the upgrade, want 1", i+1, got)
		}
	}
	if got := mntrValue(t, e.Addr(f), "local_sessions"); got != "0" {
		t.Errorf("local_sessions %s after the upgrade, want 0", got)
	}
	// Global now: the session moves to another member, keeping its
	// ephemeral, and closing it deletes the ephemeral everywhere.
	moved := mustDialWire(t, e.Addr(other), s.resp.SessionID, s.resp.Passwd, false)
	s.waitClosed()
	if code := moved.code(wire.OpCreate, createReq("/p/eph2", wire.ModeEphemeral)); code != wire.CodeOK {
		t.Fatalf("ephemeral create on the member the session moved to: %v", code)
	}
	watcher := connectTo(t, e, f)
	if _, ok, err := watcher.Exists(ctxT(t), "/p/eph"); err != nil || !ok {
		t.Fatalf("/p/eph: exists=%v err=%v", ok, err)
	}
	if code := moved.code(wire.OpCloseSession, nil); code != wire.CodeOK {
		t.Fatalf("closeSession: %v", code)
	}
	moved.waitClosed()
	if err := watcher.Sync(ctxT(t), "/p"); err != nil {
		t.Fatal(err)
	}
	if kids, _, err := watcher.Children(ctxT(t), "/p"); err != nil || len(kids) != 0 {
		t.Fatalf("children of /p after the session closed: %v %v", kids, err)
	}
}
