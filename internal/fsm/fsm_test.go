package fsm

import (
	"math"
	"testing"

	"github.com/wardenzk/warden/wire"
)

const sess = 0x100

func newWithSession(t *testing.T, opts Options) *FSM {
	t.Helper()
	f := New(opts)
	out := f.Apply(1, &Entry{Op: wire.OpCreateSession, Session: sess,
		Body: wire.Marshal(&SessionRecord{Timeout: 30000, Passwd: make([]byte, 16)})})
	if out.Err != wire.CodeOK {
		t.Fatalf("createSession: %v", out.Err)
	}
	return f
}

func apply(f *FSM, term uint64, op wire.OpCode, req wire.Record) Output {
	return f.Apply(term, &Entry{Op: op, Session: sess, Time: 1000, Body: wire.Marshal(req)})
}

func createReq(path string, flags int32) *wire.CreateRequest {
	return &wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe, Flags: flags}
}

func TestZxidDerivation(t *testing.T) {
	f := newWithSession(t, Options{})
	if f.LastZxid() != 1<<32|1 {
		t.Fatalf("first zxid = %#x, want epoch 1 counter 1", f.LastZxid())
	}
	out := apply(f, 1, wire.OpCreate, createReq("/a", 0))
	if out.Zxid != 1<<32|2 {
		t.Fatalf("zxid = %#x", out.Zxid)
	}
	// A failed write consumes a zxid too, as ZooKeeper's error txns do.
	out = apply(f, 1, wire.OpCreate, createReq("/a", 0))
	if out.Err != wire.ErrNodeExists || out.Zxid != 1<<32|3 {
		t.Fatalf("failed create = %v at %#x", out.Err, out.Zxid)
	}
	// A higher raft term starts a new epoch.
	out = apply(f, 5, wire.OpSetData, &wire.SetDataRequest{Path: "/a", Version: -1})
	if out.Zxid != 2<<32|1 {
		t.Fatalf("new-term zxid = %#x, want epoch 2 counter 1", out.Zxid)
	}
	// A full counter rolls into the next epoch instead of wrapping.
	f.counter = math.MaxUint32
	out = apply(f, 5, wire.OpSetData, &wire.SetDataRequest{Path: "/a", Version: -1})
	if out.Zxid != 3<<32|1 {
		t.Fatalf("rolled zxid = %#x, want epoch 3 counter 1", out.Zxid)
	}
}

func TestRequestsOfUnknownSessionsAreExpired(t *testing.T) {
	f := New(Options{})
	out := f.Apply(1, &Entry{Op: wire.OpCreate, Session: 42, Body: wire.Marshal(createReq("/x", 0))})
	if out.Err != wire.ErrSessionExpired {
		t.Fatalf("err = %v", out.Err)
	}
}

func TestCreateModes(t *testing.T) {
	cases := []struct {
		name  string
		op    wire.OpCode
		flags int32
		ttl   int64
		ext   bool
		want  wire.Code
		owner int64
	}{
		{"persistent", wire.OpCreate, 0, -1, false, wire.CodeOK, 0},
		{"ephemeral", wire.OpCreate2, 1, -1, false, wire.CodeOK, sess},
		{"bad flags", wire.OpCreate, 7, -1, false, wire.ErrBadArguments, 0},
		{"ttl disabled", wire.OpCreateTTL, 5, 100, false, wire.ErrUnimplemented, 0},
		{"ttl enabled", wire.OpCreateTTL, 5, 100, true, wire.CodeOK, 0},
		{"ttl zero", wire.OpCreateTTL, 5, 0, true, wire.ErrBadArguments, 0},
		{"ttl too big", wire.OpCreateTTL, 5, maxTTL + 1, true, wire.ErrBadArguments, 0},
		{"ttl on plain mode", wire.OpCreateTTL, 0, 100, true, wire.ErrBadArguments, 0},
		{"ttl flag via create", wire.OpCreate, 5, -1, true, wire.ErrBadArguments, 0},
		{"container", wire.OpCreateContainer, 4, -1, false, wire.CodeOK, 0},
		{"container flag via create is persistent", wire.OpCreate, 4, -1, false, wire.CodeOK, 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			f := newWithSession(t, Options{ExtendedTypes: tc.ext})
			var req wire.Record = createReq("/n", tc.flags)
			if tc.op == wire.OpCreateTTL {
				req = &wire.CreateTTLRequest{Path: "/n", ACL: wire.OpenACLUnsafe, Flags: tc.flags, TTL: tc.ttl}
			}
			out := apply(f, 1, tc.op, req)
			if out.Err != tc.want {
				t.Fatalf("err = %v, want %v", out.Err, tc.want)
			}
			if out.Err != wire.CodeOK {
				return
			}
			st, _, ok := f.Tree().Lookup("/n")
			if !ok || st.EphemeralOwner != tc.owner {
				t.Fatalf("node %+v ok=%v, want owner %#x", st, ok, tc.owner)
			}
			switch tc.op {
			case wire.OpCreate:
				if _, isPlain := out.Resp.(*wire.CreateResponse); !isPlain {
					t.Fatalf("create replied %T", out.Resp)
				}
			default:
				if _, is2 := out.Resp.(*wire.Create2Response); !is2 {
					t.Fatalf("%v replied %T", tc.op, out.Resp)
				}
			}
		})
	}
}

func TestMultiRollsBackAndReportsPerOpErrors(t *testing.T) {
	f := newWithSession(t, Options{})
	apply(f, 1, wire.OpCreate, createReq("/p", 0))
	before, _, _ := f.Tree().Lookup("/p")
	out := apply(f, 1, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: createReq("/p/a", 2)},
		{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/p", Data: []byte("x"), Version: -1}},
		{Type: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: "/p", Version: 7}},
		{Type: wire.OpDelete, Req: &wire.DeleteRequest{Path: "/p", Version: -1}},
	}})
	if out.Err != wire.CodeOK || len(out.Changes) != 0 {
		t.Fatalf("failed multi: err %v, %d changes", out.Err, len(out.Changes))
	}
	res := out.Resp.(*wire.MultiResponse).Results
	want := []wire.Code{wire.CodeOK, wire.CodeOK, wire.ErrBadVersion, wire.ErrRuntimeInconsistency}
	for i, r := range res {
		if r.Type != wire.OpError || r.Err != want[i] {
			t.Fatalf("result %d = %+v, want error result %v", i, r, want[i])
		}
	}
	after, _, _ := f.Tree().Lookup("/p")
	if after != before {
		t.Fatalf("rolled-back parent stat changed:\n%+v\n%+v", before, after)
	}
	// The sequence counter was rolled back too: the next sequential child
	// is number 0.
	out = apply(f, 1, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: createReq("/p/a", 2)},
		{Type: wire.OpCreate2, Req: createReq("/p/b", 2)},
		{Type: wire.OpCheck, Req: &wire.CheckVersionRequest{Path: "/p", Version: 0}},
	}})
	res = out.Resp.(*wire.MultiResponse).Results
	if res[0].Type != wire.OpCreate || res[0].Path != "/p/a0000000000" ||
		res[1].Type != wire.OpCreate2 || res[1].Path != "/p/b0000000001" || res[1].Stat == nil ||
		res[2].Type != wire.OpCheck {
		t.Fatalf("multi results = %+v", res)
	}
	if res[1].Stat.Czxid != int64(out.Zxid) {
		t.Fatalf("multi ops share the multi's zxid: czxid %#x, zxid %#x", res[1].Stat.Czxid, out.Zxid)
	}
}

func TestCloseSessionDeletesEphemerals(t *testing.T) {
	f := newWithSession(t, Options{})
	apply(f, 1, wire.OpCreate, createReq("/e", 1))
	out := f.Apply(1, &Entry{Op: wire.OpCloseSession, Session: sess})
	if out.ClosedSession != sess || len(out.Changes) == 0 {
		t.Fatalf("close = %+v", out)
	}
	if _, _, ok := f.Tree().Lookup("/e"); ok {
		t.Fatal("ephemeral survived closeSession")
	}
	if _, ok := f.Session(sess); ok {
		t.Fatal("session survived closeSession")
	}
}

func TestReconfigInStandalone(t *testing.T) {
	for _, enabled := range []bool{false, true} {
		f := newWithSession(t, Options{ReconfigEnabled: enabled})
		out := apply(f, 1, wire.OpReconfig, &wire.ReconfigRequest{CurConfigID: -1})
		want := wire.ErrReconfigDisabled
		if enabled {
			want = wire.ErrUnimplemented
		}
		if out.Err != want {
			t.Fatalf("reconfig (enabled=%v) = %v, want %v", enabled, out.Err, want)
		}
	}
}

func TestEntryRoundTrip(t *testing.T) {
	e := Entry{Op: wire.OpSetData, Origin: 3, Session: 9, Xid: 4, ReqID: 77, Time: 123,
		Auth: []wire.ID{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "digest", ID: "a:b"}}, Body: []byte{1, 2}}
	var got Entry
	if err := wire.Unmarshal(wire.Marshal(&e), &got, 0); err != nil {
		t.Fatal(err)
	}
	if got.Op != e.Op || got.Origin != 3 || got.Session != 9 || got.Xid != 4 || got.ReqID != 77 ||
		got.Time != 123 || len(got.Auth) != 2 || got.Auth[1] != e.Auth[1] || string(got.Body) != string(e.Body) {
		t.Fatalf("round trip = %+v", got)
	}
	bad := wire.Marshal(&e)
	bad[0] = 9
	if err := wire.Unmarshal(bad, &got, 0); err == nil {
		t.Fatal("unknown entry version decoded")
	}
}

func TestMultiWithReadOpsIsMarshallingError(t *testing.T) {
	f := newWithSession(t, Options{})
	before := f.LastZxid()
	out := apply(f, 1, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpGetData, Req: &wire.GetDataRequest{Path: "/"}},
	}})
	if out.Err != wire.ErrMarshallingError || out.Resp != nil {
		t.Fatalf("multi with a read op = %v, %T", out.Err, out.Resp)
	}
	if out.Zxid != before+1 {
		t.Fatalf("zxid %#x after %#x: the failed request still consumes one", out.Zxid, before)
	}
}

func TestSyncTakesNoZxid(t *testing.T) {
	f := newWithSession(t, Options{})
	before := f.LastZxid()
	out := apply(f, 7, wire.OpSync, &wire.SyncRequest{Path: "/x"})
	if out.Err != wire.CodeOK || out.Zxid != before || f.LastZxid() != before {
		t.Fatalf("sync = %+v; zxid moved from %#x to %#x", out, before, f.LastZxid())
	}
	if r, ok := out.Resp.(*wire.SyncResponse); !ok || r.Path != "/x" {
		t.Fatalf("sync response = %#v", out.Resp)
	}
}
