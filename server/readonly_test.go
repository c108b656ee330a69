package server_test

import (
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
)

func readOnlyMode() servertest.EnsembleOption {
	return servertest.WithMemberConfig(func(c *server.Config) { c.ReadOnlyModeEnabled = true })
}

func TestReadOnlyModeServesReadOnlyClientsOfACutOffMember(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3, readOnlyMode())
	f := e.Followers()[0]
	c := connectTo(t, e, f)
	mustCreate(t, c, "/data", "before")
	global := mustDialWire(t, e.Addr(f), 0, nil, false)
	e.WaitCaughtUp()

	// While the member is connected, a client that accepts read-only
	// servers gets an ordinary session.
	rw := mustDialWire(t, e.Addr(f), 0, nil, true)
	if rw.resp.ReadOnly {
		t.Fatal("a serving member answered readOnly=1")
	}
	if got := fourLetter(t, e.Addr(f), "isro"); got != "rw" {
		t.Fatalf("isro on a serving member = %q", got)
	}

	e.Net.Isolate(e.RaftID(f))
	e.WaitNotServing(f)
	rw.waitClosed() // a member that loses its leader drops its clients
	// Within the grace period (an election may be under way) it serves no
	// one, as ZooKeeper starts its read-only server only after it.
	if _, ok := dialWire(t, e.Addr(f), 0, nil, true); ok {
		t.Fatal("a member that just lost its leader accepted a read-only client")
	}
	if got := fourLetter(t, e.Addr(f), "isro"); got != "null" {
		t.Fatalf("isro within the grace period = %q", got)
	}
	e.Clock.Advance(2 * time.Second)
	if got := e.Member(f).Mode(); got != "read-only" {
		t.Fatalf("mode after the grace period = %q", got)
	}
	if got := fourLetter(t, e.Addr(f), "isro"); got != "ro" {
		t.Fatalf("isro = %q, want ro", got)
	}
	srvr := fourLetter(t, e.Addr(f), "srvr")
	if !strings.Contains(srvr, "\nREAD-ONLY mode; serving only read-only clients\n") || !strings.Contains(srvr, "\nMode: read-only\n") {
		t.Fatalf("srvr in read-only mode:\n%s", srvr)
	}
	if got := mntrValue(t, e.Addr(f), "server_state"); got != "read-only" {
		t.Fatalf("mntr server_state = %q", got)
	}

	// A client that did not ask for read-only is refused; so is a global
	// session's client (it tries another member).
	if _, ok := dialWire(t, e.Addr(f), 0, nil, false); ok {
		t.Fatal("a read-only member answered a client that did not ask for read-only")
	}
	if _, ok := dialWire(t, e.Addr(f), global.resp.SessionID, global.resp.Passwd, true); ok {
		t.Fatal("a read-only member answered the reconnect of a global session")
	}

	ro := mustDialWire(t, e.Addr(f), 0, nil, true)
	if !ro.resp.ReadOnly {
		t.Fatal("ConnectResponse readOnly = 0 in read-only mode")
	}
	if top := ro.resp.SessionID >> 56; top != int64(f+1) {
		t.Fatalf("read-only session %#x: top byte %d, want member id %d", ro.resp.SessionID, top, f+1)
	}
	if got := mntrValue(t, e.Addr(f), "local_sessions"); got != "1" {
		t.Fatalf("local_sessions = %s with one read-only session", got)
	}
	// Reads answer from the member's tree; watches are armed.
	h, d := ro.call(wire.OpGetData, &wire.GetDataRequest{Path: "/data", Watch: true})
	var gd wire.GetDataResponse
	gd.Decode(d)
	if h.Err != wire.CodeOK || string(gd.Data) != "before" {
		t.Fatalf("getData in read-only mode: %v %q", h.Err, gd.Data)
	}
	for _, op := range []wire.OpCode{wire.OpExists, wire.OpGetChildren2} {
		var req wire.Record = &wire.ExistsRequest{Path: "/data"}
		if op == wire.OpGetChildren2 {
			req = &wire.GetChildren2Request{Path: "/"}
		}
		if code := ro.code(op, req); code != wire.CodeOK {
			t.Fatalf("op %d in read-only mode: %v", op, code)
		}
	}
	if code := ro.code(wire.OpPing, nil); code != wire.CodeOK {
		t.Fatalf("ping: %v", code)
	}
	// Writes, check and sync: NOTREADONLY.
	refused := []struct {
		op  wire.OpCode
		req wire.Record
	}{
		{wire.OpCreate, createReq("/new", wire.ModePersistent)},
		{wire.OpCreate2, createReq("/new", wire.ModeEphemeral)},
		{wire.OpCreateContainer, createReq("/new", wire.ModeContainer)},
		{wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/new", ACL: wire.OpenACLUnsafe, Flags: int32(wire.ModePersistentWithTTL), TTL: 1000}},
		{wire.OpDelete, &wire.DeleteRequest{Path: "/data", Version: -1}},
		{wire.OpDeleteContainer, &wire.DeleteContainerRequest{Path: "/data"}},
		{wire.OpSetData, &wire.SetDataRequest{Path: "/data", Data: []byte("x"), Version: -1}},
		{wire.OpSetACL, &wire.SetACLRequest{Path: "/data", ACL: wire.OpenACLUnsafe, Version: -1}},
		{wire.OpSync, &wire.SyncRequest{Path: "/data"}},
		{wire.OpCheck, &wire.CheckVersionRequest{Path: "/data", Version: 0}},
		{wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/data", Version: -1}}}}},
		{wire.OpReconfig, &wire.ReconfigRequest{CurConfigID: -1}},
	}
	for _, r := range refused {
		if code := ro.code(r.op, r.req); code != wire.ErrNotReadOnly {
			t.Errorf("op %d in read-only mode: %v, want NOTREADONLY", r.op, code)
		}
	}

	// The quorum goes on without the member.
	majority := []int{}
	for _, i := range e.All() {
		if i != f {
			majority = append(majority, i)
		}
	}
	w := connectTo(t, e, majority...)
	if _, err := w.Set(ctxT(t), "/data", []byte("after"), -1); err != nil {
		t.Fatal(err)
	}

	// Healed: the member serves normally again and drops its read-only
	// clients, whose sessions are gone.
	e.Net.Heal()
	e.WaitServing(f)
	ro.waitClosed()
	if got := fourLetter(t, e.Addr(f), "isro"); got != "rw" {
		t.Fatalf("isro after healing = %q", got)
	}
	if gone, ok := dialWire(t, e.Addr(f), ro.resp.SessionID, ro.resp.Passwd, true); !ok || gone.resp.SessionID != 0 {
		t.Fatal("a read-only session survived the end of read-only mode")
	}
	back := mustDialWire(t, e.Addr(f), 0, nil, false)
	e.WaitCaughtUp()
	h, d = back.call(wire.OpGetData, &wire.GetDataRequest{Path: "/data"})
	gd = wire.GetDataResponse{}
	gd.Decode(d)
	if h.Err != wire.CodeOK || string(gd.Data) != "after" {
		t.Fatalf("getData after healing: %v %q", h.Err, gd.Data)
	}
	if code := back.code(wire.OpSetData, &wire.SetDataRequest{Path: "/data", Data: []byte("again"), Version: -1}); code != wire.CodeOK {
		t.Fatalf("write after healing: %v", code)
	}
}

func TestReadOnlyModeIsOffByDefault(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3)
	f := e.Followers()[0]
	e.Net.Isolate(e.RaftID(f))
	e.WaitNotServing(f)
	e.Clock.Advance(time.Minute)
	if _, ok := dialWire(t, e.Addr(f), 0, nil, true); ok {
		t.Fatal("a cut-off member without readonlymode.enabled accepted a read-only client")
	}
	if got := fourLetter(t, e.Addr(f), "srvr"); !strings.HasPrefix(got, "This ZooKeeper instance is not currently serving requests") {
		t.Fatalf("srvr = %q", got)
	}
}
