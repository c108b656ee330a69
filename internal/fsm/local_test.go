package fsm

import (
	"bytes"
	"testing"

	"github.com/wardenzk/warden/wire"
)

func TestLocalEntryRoundTripsAndPlainEntriesKeepVersion1(t *testing.T) {
	plain := &Entry{Op: wire.OpCreate, Session: 7, Body: []byte("x")}
	if b := wire.Marshal(plain); b[0] != entryVersion1 {
		t.Fatalf("an entry without flags is written as version %d, want %d", b[0], entryVersion1)
	}
	local := &Entry{Op: wire.OpSetData, Origin: 2, Session: 7, Xid: 3, Auth: []wire.ID{{Scheme: "ip", ID: "1.2.3.4"}}, Body: []byte("y"), Local: true}
	b := wire.Marshal(local)
	if b[0] != entryVersion3 || b[1] != entryFlagLocal {
		t.Fatalf("a local entry starts % x, want version %d and flag %d", b[:2], entryVersion3, entryFlagLocal)
	}
	got, err := DecodeEntries(b, 0)
	if err != nil {
		t.Fatal(err)
	}
	if e := got[0]; !e.Local || e.Op != local.Op || e.Session != 7 || e.Xid != 3 || !bytes.Equal(e.Body, local.Body) || len(e.Auth) != 1 {
		t.Fatalf("decoded %+v", e)
	}
	// Flags this version does not know are refused, not ignored.
	b[1] |= 0x80
	if _, err := DecodeEntries(b, 0); err == nil {
		t.Fatal("an entry with unknown flags decoded")
	}
}

func TestLocalSessionWritesApplyWithoutASessionButNoEphemerals(t *testing.T) {
	f := New(Options{})
	const local = 0x0200000000000001 // a session no createSession made
	put := func(op wire.OpCode, req wire.Record) Output {
		return f.Apply(1, &Entry{Op: op, Origin: 2, Session: local, Body: wire.Marshal(req), Local: true})
	}
	if out := put(wire.OpCreate, createReq("/p", 0)); out.Err != wire.CodeOK {
		t.Fatalf("persistent create of a local session: %v", out.Err)
	}
	if out := put(wire.OpSetData, &wire.SetDataRequest{Path: "/p", Data: []byte("v"), Version: -1}); out.Err != wire.CodeOK {
		t.Fatalf("setData of a local session: %v", out.Err)
	}
	for _, mode := range []wire.CreateMode{wire.ModeEphemeral, wire.ModeEphemeralSequential} {
		if out := put(wire.OpCreate2, createReq("/e", int32(mode))); out.Err != wire.ErrEphemeralOnLocalSession {
			t.Fatalf("ephemeral (mode %d) create of a local session: %v, want EPHEMERALONLOCALSESSION", mode, out.Err)
		}
	}
	multi := &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: createReq("/m1", 0)},
		{Type: wire.OpCreate, Req: createReq("/m2", int32(wire.ModeEphemeral))},
	}}
	if out := put(wire.OpMulti, multi); out.Err != wire.ErrEphemeralOnLocalSession {
		t.Fatalf("multi with an ephemeral create of a local session: %v", out.Err)
	}
	if _, _, ok := f.Tree().Lookup("/m1"); ok {
		t.Fatal("a refused multi created a node")
	}
	// The same write without the flag: the session is unknown.
	out := f.Apply(1, &Entry{Op: wire.OpCreate, Origin: 2, Session: local, Body: wire.Marshal(createReq("/q", 0))})
	if out.Err != wire.ErrSessionExpired {
		t.Fatalf("unflagged write of an unknown session: %v", out.Err)
	}
}
