package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

var snapOpts = Options{ExtendedTypes: true, EnforceQuota: true}

// termEntry is an entry with the raft term it is applied in.
type termEntry struct {
	term uint64
	e    *Entry
}

// randomEntries returns n random entries: sessions opening and closing,
// creates of every kind (ephemeral, sequential, container, TTL), quota
// nodes, setData, setACL, deletes, multis and deleteContainer, with the
// raft term rising now and then.
func randomEntries(rng *rand.Rand, term uint64, n int) []termEntry {
	names := []string{"a", "b", "c", "zookeeper", "quota", "zookeeper_limits", "zookeeper_stats"}
	pick := func() string {
		parts := []string{""}
		for d := rng.IntN(4) + 1; d > 0; d-- {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		return strings.Join(parts, "/")
	}
	datas := [][]byte{nil, {}, []byte("x"), []byte("count=1,bytes=2"), []byte("countHardLimit=6")}
	acls := [][]wire.ACL{wire.OpenACLUnsafe, wire.ReadACLUnsafe, wire.CreatorAllACL}
	auths := [][]wire.ID{{{Scheme: "ip", ID: "127.0.0.1"}}, {{Scheme: "digest", ID: "bob:x"}}}
	create := func() (wire.OpCode, wire.Record) {
		path, data, acl := pick(), datas[rng.IntN(len(datas))], acls[rng.IntN(len(acls))]
		switch rng.IntN(6) {
		case 0:
			return wire.OpCreateContainer, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: int32(wire.ModeContainer)}
		case 1:
			return wire.OpCreateTTL, &wire.CreateTTLRequest{Path: path, Data: data, ACL: acl,
				Flags: int32(wire.ModePersistentWithTTL) + int32(rng.IntN(2)), TTL: int64(rng.IntN(100) + 1)}
		}
		return wire.OpCreate2, &wire.CreateRequest{Path: path, Data: data, ACL: acl, Flags: int32(rng.IntN(4))}
	}
	var out []termEntry
	for i := 0; i < n; i++ {
		if rng.IntN(100) == 0 {
			term++
		}
		e := &Entry{Session: SessionID(rng.IntN(4) + 1), Time: int64(1000 + i), Auth: auths[rng.IntN(len(auths))]}
		var req wire.Record
		switch k := rng.IntN(40); {
		case k < 3:
			e.Op, req = wire.OpCreateSession, &SessionRecord{Timeout: int32(1000 * (rng.IntN(30) + 1)), Passwd: []byte(fmt.Sprintf("pw%014d", i))}
		case k < 4:
			e.Op = wire.OpCloseSession
		case k < 20:
			e.Op, req = create()
		case k < 25:
			e.Op, req = wire.OpSetData, &wire.SetDataRequest{Path: pick(), Data: datas[rng.IntN(len(datas))], Version: -1}
		case k < 27:
			e.Op, req = wire.OpSetACL, &wire.SetACLRequest{Path: pick(), ACL: acls[rng.IntN(len(acls))], Version: -1}
		case k < 33:
			e.Op, req = wire.OpDelete, &wire.DeleteRequest{Path: pick(), Version: -1}
		case k < 35:
			e.Op, req = wire.OpDeleteContainer, &wire.DeleteContainerRequest{Path: pick()}
		default:
			op1, r1 := create()
			if op1 == wire.OpCreate2 {
				op1 = wire.OpCreate
			}
			e.Op, req = wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
				{Type: op1, Req: r1},
				{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: pick(), Data: []byte("m"), Version: -1}},
				{Type: wire.OpDelete, Req: &wire.DeleteRequest{Path: pick(), Version: -1}},
			}}
		}
		if req != nil {
			e.Body = wire.Marshal(req)
		}
		out = append(out, termEntry{term, e})
	}
	return out
}

// quotaEntries sets up nested quotas on /a and /a/b for session 1.
func quotaEntries() []termEntry {
	var out []termEntry
	add := func(op wire.OpCode, req wire.Record) {
		out = append(out, termEntry{1, &Entry{Op: op, Session: 1, Time: 1, Body: wire.Marshal(req)}})
	}
	add(wire.OpCreateSession, &SessionRecord{Timeout: 30000, Passwd: make([]byte, 16)})
	for _, p := range []string{"/a", "/a/b", "/zookeeper/quota/a", "/zookeeper/quota/a/b"} {
		add(wire.OpCreate, &wire.CreateRequest{Path: p, Data: []byte{}, ACL: wire.OpenACLUnsafe})
	}
	for _, q := range []struct{ root, limits string }{{"/a", "countHardLimit=12"}, {"/a/b", "byteHardLimit=5"}} {
		add(wire.OpCreate, &wire.CreateRequest{Path: "/zookeeper/quota" + q.root + "/zookeeper_limits", Data: []byte(q.limits), ACL: wire.OpenACLUnsafe})
		add(wire.OpCreate, &wire.CreateRequest{Path: "/zookeeper/quota" + q.root + "/zookeeper_stats", Data: []byte{}, ACL: wire.OpenACLUnsafe})
	}
	return out
}

// applyAll applies entries and renders every output.
func applyAll(t testing.TB, f *FSM, entries []termEntry) string {
	var b strings.Builder
	for _, te := range entries {
		out := f.Apply(te.term, te.e)
		var resp []byte
		if out.Resp != nil {
			resp = wire.Marshal(out.Resp)
		}
		fmt.Fprintf(&b, "%#x %v %x %v %#x\n", out.Zxid, out.Err, resp, out.Changes, out.ClosedSession)
	}
	return b.String()
}

// state renders everything a snapshot must keep: zxid state, sessions and
// every node record.
func state(t testing.TB, f *FSM) string {
	t.Helper()
	var b strings.Builder
	fmt.Fprintf(&b, "epoch=%d counter=%d lastTerm=%d lastZxid=%#x\n", f.epoch, f.counter, f.lastTerm, f.lastZxid)
	for _, id := range f.SessionIDs() {
		s := f.sessions[id]
		fmt.Fprintf(&b, "session %#x %d %x\n", id, s.Timeout, s.Passwd)
	}
	err := f.tree.Records(func(r tree.NodeRecord) error {
		fmt.Fprintf(&b, "%+v nil=%v\n", r, r.Data == nil)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(&b, "ephemerals=%v count=%d size=%d\n", f.tree.EphemeralsBySession(), f.tree.EphemeralCount(), f.tree.ApproxDataSize())
	fmt.Fprintf(&b, "expiry=%v\n", f.tree.ExpiryCandidates(1<<20, 10))
	return b.String()
}

// randomFSM returns a state machine after a random history.
func randomFSM(t testing.TB, seed uint64, n int) *FSM {
	f := New(snapOpts)
	var entries []termEntry
	if seed%2 == 0 {
		entries = quotaEntries()
	}
	entries = append(entries, randomEntries(rand.New(rand.NewPCG(seed, 1)), 1, n)...)
	applyAll(t, f, entries)
	return f
}

func snapshot(t testing.TB, f *FSM) []byte {
	t.Helper()
	var buf bytes.Buffer
	if err := f.WriteSnapshot(&buf); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// TestSnapshotRoundTrip restores random histories from their snapshots:
// the restored state machine holds the same state and, given the same
// further entries, produces the same outputs and state as the original.
func TestSnapshotRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 8; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			f := randomFSM(t, seed, 600)
			if f.tree.EphemeralCount() == 0 && seed%2 == 1 {
				t.Log("no ephemerals in this history")
			}
			snap := snapshot(t, f)
			g, err := Restore(snapOpts, iotest.HalfReader(bytes.NewReader(snap)))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := state(t, g), state(t, f); a != b {
				t.Fatalf("restored state differs:\n%s\nwant:\n%s", a, b)
			}
			if again := snapshot(t, g); !bytes.Equal(again, snap) {
				t.Fatal("snapshot of the restored state machine differs")
			}
			more := randomEntries(rand.New(rand.NewPCG(seed, 2)), f.lastTerm, 600)
			if a, b := applyAll(t, g, more), applyAll(t, f, more); a != b {
				t.Fatalf("outputs differ after restore:\n%s\nwant:\n%s", a, b)
			}
			if a, b := state(t, g), state(t, f); a != b {
				t.Fatalf("states differ after the same entries:\n%s\nwant:\n%s", a, b)
			}
		})
	}
}

// TestRandomHistoriesCoverKinds guards the round-trip test's value: its
// histories hold every kind of node and quota root.
func TestRandomHistoriesCoverKinds(t *testing.T) {
	f := randomFSM(t, 2, 600)
	var buf bytes.Buffer
	sum, err := InspectSnapshot(bytes.NewReader(snapshot(t, f)))
	if err != nil {
		t.Fatal(err)
	}
	if sum.Ephemerals == 0 || sum.Containers == 0 || sum.TTLs == 0 || sum.Sessions == 0 {
		t.Fatalf("history too poor: %+v", sum)
	}
	if err := DumpSnapshot(bytes.NewReader(snapshot(t, f)), &buf); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), "/zookeeper/quota/a/b/zookeeper_stats\n") {
		t.Fatal("no quota stats node in the history")
	}
}

// TestCloneIsolation applies entries to a state machine after cloning it:
// the clone's state and snapshot stay as they were.
func TestCloneIsolation(t *testing.T) {
	f := randomFSM(t, 4, 400)
	before, snapBefore := state(t, f), snapshot(t, f)
	c := f.Clone()
	applyAll(t, f, randomEntries(rand.New(rand.NewPCG(4, 3)), f.lastTerm+1, 400))
	if got := state(t, c); got != before {
		t.Fatalf("clone changed:\n%s\nwant:\n%s", got, before)
	}
	if !bytes.Equal(snapshot(t, c), snapBefore) {
		t.Fatal("clone's snapshot changed")
	}
	after := state(t, f)
	applyAll(t, c, randomEntries(rand.New(rand.NewPCG(4, 4)), c.lastTerm+1, 400))
	if got := state(t, f); got != after {
		t.Fatal("original changed with its clone")
	}
}

// TestCloneWrittenConcurrently writes a clone's snapshot on another
// goroutine while the original keeps applying entries, as the server
// does (run with -race).
func TestCloneWrittenConcurrently(t *testing.T) {
	f := randomFSM(t, 8, 400)
	want := snapshot(t, f)
	c := f.Clone()
	done := make(chan []byte)
	go func() {
		var buf bytes.Buffer
		if err := c.WriteSnapshot(&buf); err != nil {
			panic(err)
		}
		done <- buf.Bytes()
	}()
	applyAll(t, f, randomEntries(rand.New(rand.NewPCG(8, 5)), f.lastTerm, 400))
	if got := <-done; !bytes.Equal(got, want) {
		t.Fatal("snapshot of the clone differs from the state at Clone")
	}
}

func TestNewFromState(t *testing.T) {
	f := randomFSM(t, 6, 300)
	tr, err := tree.FromRecords(treeOptions(snapOpts), f.tree.Records)
	if err != nil {
		t.Fatal(err)
	}
	sessions := map[SessionID]Session{}
	for id, s := range f.sessions {
		sessions[id] = *s
	}
	g := NewFromState(snapOpts, tr, sessions, f.epoch, f.counter, f.lastTerm)
	if a, b := state(t, g), state(t, f); a != b {
		t.Fatalf("NewFromState differs:\n%s\nwant:\n%s", a, b)
	}
}

// stream builds a snapshot stream by hand for the error tests.
type stream struct {
	buf     bytes.Buffer
	sw      *snapWriter
	version uint32
}

func newStream(magic string, version uint32) *stream {
	st := &stream{version: version}
	st.buf.WriteString(magic)
	st.buf.Write(binary.BigEndian.AppendUint32(nil, version))
	st.sw = &snapWriter{w: bufio.NewWriter(&st.buf)}
	return st
}

func (st *stream) frame(fill func(e *wire.Encoder)) *stream {
	if err := st.sw.frame(fill); err != nil {
		panic(err)
	}
	return st
}

func (st *stream) header(h snapHeader) *stream { return st.frame(h.encode) }

func (st *stream) session(id int64) *stream {
	return st.frame(func(e *wire.Encoder) { encodeSession(e, id, &Session{Timeout: 1, Passwd: []byte("p")}) })
}

func (st *stream) node(r tree.NodeRecord) *stream {
	return st.frame(func(e *wire.Encoder) { encodeNode(e, &r) })
}

// reserved adds the four nodes of a fresh tree.
func (st *stream) reserved() *stream {
	if err := tree.New(tree.Options{}).Records(func(r tree.NodeRecord) error { st.node(r); return nil }); err != nil {
		panic(err)
	}
	return st
}

// end adds the end frame, after an empty membership frame from version 3.
func (st *stream) end(sessions, nodes int64) *stream {
	if st.version >= snapVersionMembership {
		st.frame(New(Options{}).encodeMembers)
	}
	return st.frame(func(e *wire.Encoder) { e.Byte(kindEnd); e.Int64(sessions); e.Int64(nodes) })
}

func (st *stream) bytes() []byte {
	if err := st.sw.w.Flush(); err != nil {
		panic(err)
	}
	return st.buf.Bytes()
}

func hdr(sessions, nodes int64) snapHeader {
	return snapHeader{epoch: 1, counter: 2, lastTerm: 3, lastZxid: 1<<32 | 2, sessions: sessions, nodes: nodes}
}

// TestRestoreErrors feeds damaged streams: each is refused with an error
// wrapping ErrBadSnapshot that says what is wrong and where.
// TestSnapshotRoundTripManyBuffers restores a snapshot many times the
// reader's buffer, delivered a few bytes per read: frames that straddle
// the buffer's refills come back whole.
func TestSnapshotRoundTripManyBuffers(t *testing.T) {
	f := benchFSM(t, 5000)
	snap := snapshot(t, f)
	if len(snap) < 4*64<<10 {
		t.Fatalf("snapshot of %d bytes: too small to cross the reader's buffer", len(snap))
	}
	g, err := Restore(Options{}, &fewBytesReader{r: bytes.NewReader(snap)})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(snapshot(t, g), snap) {
		t.Fatal("snapshot of the restored state machine differs")
	}
}

// fewBytesReader returns 1 to 7 bytes per read.
type fewBytesReader struct {
	r *bytes.Reader
	n int
}

func (f *fewBytesReader) Read(p []byte) (int, error) {
	f.n = f.n%7 + 1
	return f.r.Read(p[:min(len(p), f.n)])
}

func TestRestoreErrors(t *testing.T) {
	valid := newStream(snapMagic, snapVersion).header(hdr(1, 4)).session(7).reserved().end(1, 4).bytes()
	if _, err := Restore(Options{}, bytes.NewReader(valid)); err != nil {
		t.Fatalf("the valid base stream: %v", err)
	}
	flipped := bytes.Clone(valid)
	flipped[40] ^= 1
	huge := bytes.Clone(valid[:12])
	huge = append(huge, 0x7f, 0xff, 0xff, 0xff)
	orphan := tree.NodeRecord{Path: "/x/y", ACL: wire.OpenACLUnsafe}
	// A node frame with a byte after its record, after good nodes of
	// dataLen bytes: enough of them, and it lands in a later batch.
	leftover := func(good, dataLen int) []byte {
		st := newStream(snapMagic, snapVersion).header(hdr(0, int64(4+good+1))).reserved()
		for i := range good {
			st.node(tree.NodeRecord{Path: fmt.Sprintf("/n%d", i), Data: make([]byte, dataLen), ACL: wire.OpenACLUnsafe})
		}
		return st.frame(func(e *wire.Encoder) {
			encodeNode(e, &tree.NodeRecord{Path: "/bad", ACL: wire.OpenACLUnsafe})
			e.Byte(0)
		}).bytes()
	}
	tests := []struct {
		name string
		in   []byte
		want string
	}{
		{"empty", nil, "at byte 0: stream ends inside the preamble"},
		{"magic", newStream("ZKSNAP00", snapVersion).bytes(), "not a Warden snapshot stream"},
		{"version", newStream(snapMagic, 0).bytes(), "at byte 8: snapshot format version 0 is not supported"},
		{"checksum", flipped, "checksum mismatch"},
		{"huge frame", huge, "at byte 12: frame 0 (the header): length 2147483647 is outside"},
		{"zxid state", newStream(snapMagic, snapVersion).header(snapHeader{epoch: 1, counter: 2, lastZxid: 5, nodes: 4}).bytes(), "lastZxid 0x5 does not match epoch 1 and counter 2"},
		{"too few nodes", newStream(snapMagic, snapVersion).header(hdr(0, 3)).bytes(), "impossible counts"},
		{"header leftovers", newStream(snapMagic, snapVersion).frame(func(e *wire.Encoder) { h := hdr(0, 4); h.encode(e); e.Byte(0) }).bytes(), "frame 0 (the header): 1 bytes left over"},
		{"short header", newStream(snapMagic, snapVersion).frame(func(e *wire.Encoder) { e.Byte(kindHeader); e.Int32(1) }).bytes(), "frame 0 (the header): wire: record is truncated"},
		{"sessions order", newStream(snapMagic, snapVersion).header(hdr(2, 4)).session(9).session(3).bytes(), "session 0x3 (frame 2): ids not in increasing order"},
		{"node for session", newStream(snapMagic, snapVersion).header(hdr(2, 4)).session(9).reserved().bytes(), "frame 2 (session 2 of 2): kind 'N', want 'S'"},
		{"node missing", newStream(snapMagic, snapVersion).header(hdr(0, 5)).reserved().end(0, 5).bytes(), "frame 5 (node 5 of 5): kind 'M', want 'N'"},
		{"missing config", newStream(snapMagic, snapVersion).header(hdr(0, 4)).node(tree.NodeRecord{Path: "/"}).node(tree.NodeRecord{Path: "/zookeeper"}).
			node(tree.NodeRecord{Path: "/zookeeper/quota"}).node(tree.NodeRecord{Path: "/zookeeper/other"}).end(0, 4).bytes(), "reserved node /zookeeper/config is missing"},
		{"orphan", newStream(snapMagic, snapVersion).header(hdr(0, 5)).reserved().node(orphan).bytes(), `node "/x/y" (frame 5): tree: invalid node records: "/x/y" comes before its parent "/x"`},
		{"node leftovers", leftover(0, 0), `node "/bad" (frame 5): 1 bytes left over in the frame`},
		{"node leftovers in a later batch", leftover(1100, 0), `node "/bad" (frame 1105): 1 bytes left over in the frame`},
		{"node leftovers after batches cut by size", leftover(5, 700<<10), `node "/bad" (frame 10): 1 bytes left over in the frame`},
		{"no reserved", newStream(snapMagic, snapVersion).header(hdr(0, 4)).node(tree.NodeRecord{Path: "/"}).node(tree.NodeRecord{Path: "/a"}).node(tree.NodeRecord{Path: "/b"}).node(tree.NodeRecord{Path: "/c"}).end(0, 4).bytes(), "reserved node /zookeeper is missing"},
		{"end counts", newStream(snapMagic, snapVersion).header(hdr(1, 4)).session(7).reserved().end(0, 4).bytes(), "the end frame counts 0 sessions and 4 nodes, the header 1 and 4"},
		{"trailing", append(bytes.Clone(valid), 0), fmt.Sprintf("at byte %d: bytes after the end frame", len(valid))},
		{"truncated", valid[:len(valid)-3], "frame 7 (the end): the snapshot is truncated"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Restore(Options{}, bytes.NewReader(tt.in))
			if !errors.Is(err, ErrBadSnapshot) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant ErrBadSnapshot with %q", err, tt.want)
			}
			if _, err := InspectSnapshot(bytes.NewReader(tt.in)); err == nil && tt.name != "orphan" && tt.name != "no reserved" && tt.name != "missing config" {
				t.Fatal("InspectSnapshot accepted it")
			}
		})
	}
}

// TestRestoreEveryPrefixAndFlip cuts a snapshot at every length and flips
// every byte: Restore always fails cleanly. (The preamble has no
// checksum: a flip in the version makes a version this build does not
// know, refused as written by a newer Warden; in a snapshot file, the
// file's checksum catches the flip first.)
func TestRestoreEveryPrefixAndFlip(t *testing.T) {
	snap := snapshot(t, randomFSM(t, 3, 60))
	for n := 0; n < len(snap); n++ {
		if _, err := Restore(snapOpts, bytes.NewReader(snap[:n])); !errors.Is(err, ErrBadSnapshot) {
			t.Fatalf("prefix of %d/%d bytes: err = %v", n, len(snap), err)
		}
	}
	for i := range snap {
		bad := bytes.Clone(snap)
		bad[i] ^= 0x40
		_, err := Restore(snapOpts, bytes.NewReader(bad))
		if !errors.Is(err, ErrBadSnapshot) && !(i >= 8 && i < 12 && errors.Is(err, ErrNewerSnapshot)) {
			t.Fatalf("byte %d flipped: err = %v", i, err)
		}
	}
}

func TestRestoreReaderError(t *testing.T) {
	boom := errors.New("disk on fire")
	snap := snapshot(t, New(Options{}))
	_, err := Restore(Options{}, io.MultiReader(bytes.NewReader(snap[:20]), iotest.ErrReader(boom)))
	if !errors.Is(err, boom) || errors.Is(err, ErrBadSnapshot) {
		t.Fatalf("err = %v, want the reader's error", err)
	}
}

func TestRestoreFieldLimit(t *testing.T) {
	f := newWithSession(t, Options{})
	apply(f, 1, wire.OpCreate, &wire.CreateRequest{Path: "/big", Data: make([]byte, 5000), ACL: wire.OpenACLUnsafe})
	snap := snapshot(t, f)
	if _, err := Restore(Options{MaxBuffer: 1000}, bytes.NewReader(snap)); !errors.Is(err, ErrBadSnapshot) ||
		!strings.Contains(err.Error(), "jute.maxbuffer") {
		t.Fatalf("err = %v, want a frame over the limit", err)
	}
	if _, err := Restore(Options{MaxBuffer: 5000}, bytes.NewReader(snap)); err != nil {
		t.Fatal(err)
	}
}

func TestDumpSnapshot(t *testing.T) {
	f := newWithSession(t, Options{ExtendedTypes: true})
	apply(f, 1, wire.OpCreate, &wire.CreateRequest{Path: "/e", Data: []byte("hello"), ACL: wire.OpenACLUnsafe, Flags: int32(wire.ModeEphemeral)})
	apply(f, 1, wire.OpCreateTTL, &wire.CreateTTLRequest{Path: "/t", ACL: wire.ReadACLUnsafe, Flags: int32(wire.ModePersistentWithTTL), TTL: 500})
	apply(f, 1, wire.OpCreateContainer, &wire.CreateRequest{Path: "/c", Data: bytes.Repeat([]byte("z"), 100), ACL: wire.OpenACLUnsafe, Flags: int32(wire.ModeContainer)})
	var out bytes.Buffer
	if err := DumpSnapshot(bytes.NewReader(snapshot(t, f)), &out); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"lastZxid 0x100000004 (epoch 1, counter 4), lastTerm 1\n",
		"1 sessions, 7 nodes\n",
		"  0x100 timeout 30000ms passwd 16 bytes\n",
		"/e\n  czxid 0x100000002  ctime 1000 (1970-01-01T00:00:01.000Z)\n",
		"  ephemeral of session 0x100\n  data 5 bytes: \"hello\"\n  acl world:anyone:cdrwa\n",
		"/t\n", "  ttl 500ms (stored ephemeralOwner 0xff000000000001f4)\n  data null\n  acl world:anyone:r\n",
		"  container (stored ephemeralOwner 0x8000000000000000)\n  data 100 bytes: \"" + strings.Repeat("z", 64) + "\"...\n",
		"/zookeeper/config\n", "  version 0  cversion 0 (stored: child creations)  aversion -1\n",
		"\nend: 1 sessions, 7 nodes, ",
	} {
		if !strings.Contains(out.String(), want) {
			t.Fatalf("dump lacks %q:\n%s", want, out.String())
		}
	}
	sum, err := InspectSnapshot(bytes.NewReader(snapshot(t, f)))
	if err != nil {
		t.Fatal(err)
	}
	want := SnapshotSummary{Version: snapVersion, Epoch: 1, Counter: 4, LastTerm: 1, LastZxid: 1<<32 | 4, Sessions: 1, Nodes: 7,
		Ephemerals: 1, Containers: 1, TTLs: 1, DataBytes: 105, StreamBytes: int64(len(snapshot(t, f)))}
	if !reflect.DeepEqual(sum, want) {
		t.Fatalf("summary = %+v\nwant %+v", sum, want)
	}
}

// chunkReader returns its bytes in chunks whose sizes cycle through
// sizes, to feed decoders as a network or decompressor would.
type chunkReader struct {
	b     []byte
	sizes []byte
	i     int
}

func (c *chunkReader) Read(p []byte) (int, error) {
	if len(c.b) == 0 {
		return 0, io.EOF
	}
	n := 1
	if len(c.sizes) > 0 {
		n = int(c.sizes[c.i%len(c.sizes)])%64 + 1
		c.i++
	}
	n = min(n, len(p), len(c.b))
	copy(p, c.b[:n])
	c.b = c.b[n:]
	return n, nil
}

// FuzzRestore feeds arbitrary streams, in arbitrary chunks, to Restore:
// it never panics, and whatever it accepts snapshots and restores again
// to the same bytes.
func FuzzRestore(f *testing.F) {
	f.Add(snapshot(f, New(Options{})), []byte{3})
	f.Add(snapshot(f, randomFSM(f, 2, 40)), []byte{1, 7, 60})
	f.Add(newStream(snapMagic, snapVersion).header(hdr(1, 4)).session(7).reserved().end(1, 4).bytes(), []byte{})
	f.Fuzz(func(t *testing.T, data, chunks []byte) {
		opts := Options{ExtendedTypes: true, MaxBuffer: 1 << 12}
		g, err := Restore(opts, &chunkReader{b: data, sizes: chunks})
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error without ErrBadSnapshot: %v", err)
			}
			return
		}
		snap := snapshot(t, g)
		h, err := Restore(opts, bytes.NewReader(snap))
		if err != nil {
			t.Fatalf("snapshot of an accepted stream is refused: %v", err)
		}
		if again := snapshot(t, h); !bytes.Equal(again, snap) {
			t.Fatal("snapshot differs after a second round trip")
		}
	})
}

// bodies splits a snapshot stream into its frame bodies, each prefixed
// with a 2-byte length: the input form of FuzzRestoreFrames.
func bodies(snap []byte) []byte {
	var out []byte
	for b := snap[12:]; len(b) >= 8; {
		n := binary.BigEndian.Uint32(b)
		out = binary.BigEndian.AppendUint16(out, uint16(n))
		out = append(out, b[4:4+n]...)
		b = b[4+n+4:]
	}
	return out
}

// FuzzRestoreFrames fuzzes the frame bodies with valid checksums around
// them, so that the fuzzer reaches the decoding of each record and the
// checks of the tree: data is a list of bodies, each after a 2-byte length.
func FuzzRestoreFrames(f *testing.F) {
	f.Add(bodies(snapshot(f, New(Options{}))))
	f.Add(bodies(snapshot(f, randomFSM(f, 2, 40))))
	f.Add(bodies(newStream(snapMagic, snapVersion).header(hdr(1, 4)).session(7).reserved().end(1, 4).bytes()))
	f.Fuzz(func(t *testing.T, data []byte) {
		st := newStream(snapMagic, snapVersion)
		for len(data) >= 2 {
			n := min(int(binary.BigEndian.Uint16(data)), len(data)-2)
			body := data[2 : 2+n]
			data = data[2+n:]
			st.frame(func(e *wire.Encoder) {
				for _, c := range body {
					e.Byte(c)
				}
			})
		}
		opts := Options{ExtendedTypes: true, MaxBuffer: 1 << 12}
		g, err := Restore(opts, bytes.NewReader(st.bytes()))
		if err != nil {
			if !errors.Is(err, ErrBadSnapshot) {
				t.Fatalf("error without ErrBadSnapshot: %v", err)
			}
			return
		}
		snap := snapshot(t, g)
		if _, err := Restore(opts, bytes.NewReader(snap)); err != nil {
			t.Fatalf("snapshot of an accepted stream is refused: %v", err)
		}
		if err := DumpSnapshot(bytes.NewReader(snap), io.Discard); err != nil {
			t.Fatalf("dump of an accepted stream fails: %v", err)
		}
	})
}

// benchFSM returns a state machine of about n nodes: 100 directories of
// 64-byte nodes, a tenth of them ephemeral, and 1000 sessions.
func benchFSM(b testing.TB, n int) *FSM {
	f := New(Options{})
	var entries []termEntry
	for s := int64(1); s <= 1000; s++ {
		entries = append(entries, termEntry{1, &Entry{Op: wire.OpCreateSession, Session: SessionID(s),
			Body: wire.Marshal(&SessionRecord{Timeout: 30000, Passwd: make([]byte, 16)})}})
	}
	data := bytes.Repeat([]byte("d"), 64)
	for i := 0; i < n; i++ {
		p, flags := fmt.Sprintf("/d%d", i), int32(0)
		if i >= 100 {
			p = fmt.Sprintf("/d%d/n%d", i%100, i)
			if i%10 == 0 {
				flags = int32(wire.ModeEphemeral)
			}
		}
		entries = append(entries, termEntry{1, &Entry{Op: wire.OpCreate, Session: SessionID(i%1000 + 1), Time: int64(i),
			Body: wire.Marshal(&wire.CreateRequest{Path: p, Data: data, ACL: wire.OpenACLUnsafe, Flags: flags})}})
	}
	for _, te := range entries {
		if out := f.Apply(te.term, te.e); out.Err != wire.CodeOK {
			b.Fatalf("setup: %v", out.Err)
		}
	}
	return f
}

func BenchmarkWriteSnapshot100k(b *testing.B) {
	f := benchFSM(b, 100_000)
	var buf bytes.Buffer
	for b.Loop() {
		buf.Reset()
		if err := f.WriteSnapshot(&buf); err != nil {
			b.Fatal(err)
		}
	}
	b.SetBytes(int64(buf.Len()))
}

func BenchmarkRestore100k(b *testing.B) {
	var buf bytes.Buffer
	if err := benchFSM(b, 100_000).WriteSnapshot(&buf); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(buf.Len()))
	for b.Loop() {
		if _, err := Restore(Options{}, bytes.NewReader(buf.Bytes())); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkClone100k(b *testing.B) {
	f := benchFSM(b, 100_000)
	for b.Loop() {
		f.Clone()
	}
}

// TestRestoreVersion1 reads a stream written before sessions had an
// owner: its sessions belong to no server, so any may use them.
func TestRestoreVersion1(t *testing.T) {
	v1 := newStream(snapMagic, 1).header(hdr(1, 4)).frame(func(e *wire.Encoder) {
		e.Byte(kindSession)
		e.Int64(7)
		e.Int32(1)
		e.Buffer([]byte("p"))
	}).reserved().end(1, 4).bytes()
	f, err := Restore(Options{}, bytes.NewReader(v1))
	if err != nil {
		t.Fatal(err)
	}
	s, ok := f.Session(7)
	if !ok || s.Owner != NoOwner || s.Timeout != 1 {
		t.Fatalf("session 7 = %+v, %v; want timeout 1, no owner", s, ok)
	}
}

// TestSessionOwnerAndMove: a session belongs to the server that created
// it; an attach entry moves it; writes proposed by another server get
// SESSIONMOVED; the owner survives a snapshot.
func TestSessionOwnerAndMove(t *testing.T) {
	f := New(Options{})
	create := func(origin int64, path string) wire.Code {
		body := wire.Marshal(&wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe})
		return f.Apply(1, &Entry{Op: wire.OpCreate, Origin: origin, Session: 5, Body: body}).Err
	}
	f.Apply(1, &Entry{Op: wire.OpCreateSession, Origin: 1, Session: 5, Body: wire.Marshal(&SessionRecord{Timeout: 1000, Passwd: []byte("p")})})
	if got := create(1, "/a"); got != wire.CodeOK {
		t.Fatalf("create by the owner: %v", got)
	}
	if got := create(2, "/b"); got != wire.ErrSessionMoved {
		t.Fatalf("create by another server: %v, want SESSIONMOVED", got)
	}
	zxid := f.LastZxid()
	out := f.Apply(1, &Entry{Op: OpAttach, Origin: 2, Session: 5})
	if out.Moved != 5 || out.Err != wire.CodeOK || f.LastZxid() != zxid {
		t.Fatalf("attach: %+v (zxid %#x → %#x); want moved 5 and no zxid", out, zxid, f.LastZxid())
	}
	if got := create(1, "/c"); got != wire.ErrSessionMoved {
		t.Fatalf("create by the old owner: %v, want SESSIONMOVED", got)
	}
	if got := create(2, "/d"); got != wire.CodeOK {
		t.Fatalf("create by the new owner: %v", got)
	}
	var b bytes.Buffer
	if err := f.WriteSnapshot(&b); err != nil {
		t.Fatal(err)
	}
	g, err := Restore(Options{}, &b)
	if err != nil {
		t.Fatal(err)
	}
	if s, _ := g.Session(5); s.Owner != 2 {
		t.Fatalf("owner after restore = %d, want 2", s.Owner)
	}
	if out := f.Apply(1, &Entry{Op: OpAttach, Origin: 3, Session: 99}); out.Err != wire.ErrSessionExpired {
		t.Fatalf("attach of an unknown session: %v", out.Err)
	}
}
