package tree

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/quota"
	"github.com/wardenzk/warden/wire"
)

// randomOps applies steps random writes (every node kind, quotas, some
// multis rolled back) to tr, drawing from rng, and returns a log of every
// result so that two trees fed the same seed can be compared.
func randomOps(tr *Tree, rng *rand.Rand, firstZxid int64, steps int) string {
	var log strings.Builder
	names := []string{"a", "b", "c", "zookeeper", "quota", quota.LimitsNode, quota.StatsNode}
	pick := func() string {
		parts := []string{""}
		for d := rng.IntN(4) + 1; d > 0; d-- {
			parts = append(parts, names[rng.IntN(len(names))])
		}
		return strings.Join(parts, "/")
	}
	datas := [][]byte{nil, {}, []byte("x"), []byte("count=1,bytes=2"), []byte("countHardLimit=3")}
	acls := [][]wire.ACL{open, wire.ReadACLUnsafe, acl(wire.PermAll, "digest", bobID.ID), wire.CreatorAllACL}
	for i := 0; i < steps; i++ {
		m := Meta{Zxid: firstZxid + int64(i), Time: 10 * (firstZxid + int64(i)), Session: int64(rng.IntN(3) + 1)}
		c := []Caller{anyone, bob}[rng.IntN(2)]
		txn := rng.IntN(8) == 0
		if txn {
			tr.Begin()
		}
		var err error
		switch op := rng.IntN(20); {
		case op < 11:
			var p string
			p, _, _, err = tr.Create(CreateOp{Path: pick(), Data: datas[rng.IntN(len(datas))], ACL: acls[rng.IntN(len(acls))],
				Kind: Kind(rng.IntN(4)), Sequential: rng.IntN(5) == 0, TTL: int64(rng.IntN(50) + 1)}, c, m)
			fmt.Fprintf(&log, "create %s %v\n", p, err)
		case op < 15:
			_, err = tr.Delete(pick(), -1, c, m)
			fmt.Fprintf(&log, "delete %v\n", err)
		case op < 17:
			var st wire.Stat
			st, _, err = tr.SetData(pick(), datas[rng.IntN(len(datas))], -1, c, m)
			fmt.Fprintf(&log, "setData %+v %v\n", st, err)
		case op < 19:
			_, err = tr.SetACL(pick(), acls[rng.IntN(len(acls))], -1, c, m)
			fmt.Fprintf(&log, "setACL %v\n", err)
		default:
			fmt.Fprintf(&log, "close %v\n", tr.CloseSession(m.Session, m))
		}
		if txn {
			if err != nil || rng.IntN(2) == 0 {
				tr.Rollback()
			} else {
				tr.Commit()
			}
		}
	}
	fmt.Fprintf(&log, "expiry %v\n", tr.ExpiryCandidates(1<<20, 5))
	return log.String()
}

// withQuotas returns a tree with nested quota roots /a and /a/b (limits
// and stats nodes) and an EnforceQuota setting.
func withQuotas(t *testing.T) *Tree {
	tr := New(Options{EnforceQuota: true})
	for _, p := range []string{"/a", "/a/b", "/zookeeper/quota/a", "/zookeeper/quota/a/b"} {
		mustCreate(t, tr, p, 1)
	}
	for _, q := range []struct{ root, limits string }{{"/a", "countHardLimit=40"}, {"/a/b", "byteHardLimit=30"}} {
		for _, n := range []struct{ name, data string }{{quota.LimitsNode, q.limits}, {quota.StatsNode, ""}} {
			if _, _, _, err := tr.Create(CreateOp{Path: quotaPath + q.root + "/" + n.name, Data: []byte(n.data), ACL: open}, anyone, meta(2)); err != nil {
				t.Fatal(err)
			}
		}
	}
	return tr
}

func records(t *testing.T, tr *Tree) []NodeRecord {
	t.Helper()
	var out []NodeRecord
	if err := tr.Records(func(r NodeRecord) error { out = append(out, r); return nil }); err != nil {
		t.Fatal(err)
	}
	return out
}

func fromSlice(recs []NodeRecord) func(func(NodeRecord) error) error {
	return func(yield func(NodeRecord) error) error {
		for _, r := range recs {
			if err := yield(r); err != nil {
				return err
			}
		}
		return nil
	}
}

// TestRecordsRoundTrip rebuilds random trees from their records: the
// rebuilt tree is identical inside (nodes, children, indexes, ACL counts,
// quota roots), lists the same records, and then behaves identically
// under the same further writes.
func TestRecordsRoundTrip(t *testing.T) {
	for seed := uint64(1); seed <= 6; seed++ {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			tr := New(Options{})
			if seed%2 == 0 {
				tr = withQuotas(t)
			}
			randomOps(tr, rand.New(rand.NewPCG(seed, 1)), 10, 400)
			recs := records(t, tr)
			for i, r := range recs[1:] {
				parent, _ := splitParent(r.Path)
				if !strings.HasPrefix(r.Path, parent) || tr.get(parent) == nil {
					t.Fatalf("record %d %q: bad parent", i+1, r.Path)
				}
			}
			got, err := FromRecords(tr.opts, fromSlice(recs))
			if err != nil {
				t.Fatal(err)
			}
			if a, b := dump(got), dump(tr); a != b {
				t.Fatalf("rebuilt tree differs:\n%s\nwant:\n%s", a, b)
			}
			checkInvariants(t, got)
			if again := records(t, got); !reflect.DeepEqual(again, recs) {
				t.Fatal("records of the rebuilt tree differ")
			}
			la := randomOps(tr, rand.New(rand.NewPCG(seed, 2)), 1000, 400)
			lb := randomOps(got, rand.New(rand.NewPCG(seed, 2)), 1000, 400)
			if la != lb {
				t.Fatalf("behaviour differs after rebuild:\n%s\nwant:\n%s", lb, la)
			}
			if a, b := dump(got), dump(tr); a != b {
				t.Fatalf("trees differ after the same writes:\n%s\nwant:\n%s", a, b)
			}
		})
	}
}

func TestRecordsOrder(t *testing.T) {
	tr := New(Options{})
	for _, p := range []string{"/a-b", "/a", "/a/b", "/b", "/a/a"} {
		mustCreate(t, tr, p, 2)
	}
	var paths []string
	for _, r := range records(t, tr) {
		paths = append(paths, r.Path)
	}
	want := []string{"/", "/a", "/a/a", "/a/b", "/a-b", "/b", "/zookeeper", "/zookeeper/config", "/zookeeper/quota"}
	if !reflect.DeepEqual(paths, want) {
		t.Fatalf("order %v, want %v", paths, want)
	}
	stop := errors.New("stop")
	n := 0
	if err := tr.Records(func(NodeRecord) error { n++; return stop }); err != stop || n != 1 {
		t.Fatalf("Records after an error: %v, %d calls", err, n)
	}
}

func TestFromRecordsErrors(t *testing.T) {
	base := records(t, New(Options{}))
	rec := func(path string, owner int64) NodeRecord {
		return NodeRecord{Path: path, Data: []byte{}, ACL: open, EphemeralOwner: owner}
	}
	without := func(path string) []NodeRecord {
		var out []NodeRecord
		for _, r := range base {
			if r.Path != path {
				out = append(out, r)
			}
		}
		return out
	}
	tests := []struct {
		name string
		recs []NodeRecord
		want string
	}{
		{"empty", nil, "reserved node / is missing"},
		{"root not first", append([]NodeRecord{rec("/a", 0)}, base...), `first record is "/a"`},
		{"owned root", append([]NodeRecord{rec("/", 5)}, base[1:]...), "root has ephemeralOwner"},
		{"twice", append(base, rec("/zookeeper", 0)), `"/zookeeper" appears twice`},
		{"root twice", append(base, rec("/", 0)), `"/" appears twice`},
		{"bad path", append(base, rec("/a/", 0)), `"/a/" is not a valid path`},
		{"no slash", append(base, rec("a", 0)), `"a" is not a valid path`},
		{"orphan", append(base, rec("/x/y", 0)), `"/x/y" comes before its parent "/x"`},
		{"child of ephemeral", append(base, rec("/e", 7), rec("/e/c", 0)), `"/e/c" is a child of the ephemeral "/e"`},
		{"no config", without(configPath), "reserved node /zookeeper/config is missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := FromRecords(Options{}, fromSlice(tt.recs))
			if !errors.Is(err, ErrBadRecords) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v, want ErrBadRecords with %q", err, tt.want)
			}
		})
	}
	boom := errors.New("read failed")
	if _, err := FromRecords(Options{}, func(func(NodeRecord) error) error { return boom }); err != boom {
		t.Fatalf("recs error = %v, want it returned as is", err)
	}
}

// TestFromRecordsIndexes checks what FromRecords derives: the kinds'
// indexes, the quota roots (and that stats nodes keep their recorded
// text rather than being recounted).
func TestFromRecordsIndexes(t *testing.T) {
	recs := records(t, New(Options{}))
	recs = append(recs,
		NodeRecord{Path: "/c", Data: []byte{}, ACL: open, EphemeralOwner: ContainerOwner, StoredCversion: 1},
		NodeRecord{Path: "/e", Data: []byte("xy"), ACL: open, EphemeralOwner: 9},
		NodeRecord{Path: "/t", ACL: open, EphemeralOwner: TTLOwner(5), Mtime: 10},
		NodeRecord{Path: "/zookeeper/quota/e", Data: []byte{}, ACL: open},
		NodeRecord{Path: "/zookeeper/quota/e/zookeeper_limits", Data: []byte("countHardLimit=1"), ACL: open},
		NodeRecord{Path: "/zookeeper/quota/e/zookeeper_stats", Data: []byte("count=7,bytes=0"), ACL: open},
	)
	tr, err := FromRecords(Options{EnforceQuota: true}, fromSlice(recs))
	if err != nil {
		t.Fatal(err)
	}
	checkInvariants(t, tr)
	if got := tr.Ephemerals(9, ""); !reflect.DeepEqual(got, []string{"/e"}) {
		t.Fatalf("ephemerals of 9 = %v", got)
	}
	if got := tr.ExpiryCandidates(100, 0); !reflect.DeepEqual(got, []string{"/c", "/t"}) {
		t.Fatalf("expiry candidates = %v", got)
	}
	if _, ok := tr.quotaRoots["/e"]; !ok || len(tr.quotaRoots) != 1 {
		t.Fatalf("quota roots = %v", tr.quotaRoots)
	}
	if d, _, _ := tr.GetData(statsPath("/e"), super); string(d) != "count=7,bytes=0" {
		t.Fatalf("stats = %q: recounted on load", d)
	}
	// count 7 already exceeds the hard limit of 1.
	if _, _, err := tr.SetData("/e", []byte("xyz"), -1, anyone, meta(3)); err != nil {
		t.Fatalf("setData under the root (bytes are not limited): %v", err)
	}
	if d, _, _ := tr.GetData(statsPath("/e"), super); string(d) != "count=7,bytes=1" {
		t.Fatalf("stats after setData = %q", d)
	}
}

// TestCloneIsolation changes both a tree and its clone in every way and
// checks that neither sees the other's changes.
func TestCloneIsolation(t *testing.T) {
	tr := withQuotas(t)
	randomOps(tr, rand.New(rand.NewPCG(7, 1)), 10, 300)
	before := dump(tr)
	c := tr.Clone()
	if got := dump(c); got != before {
		t.Fatalf("clone differs:\n%s\nwant:\n%s", got, before)
	}
	randomOps(tr, rand.New(rand.NewPCG(7, 2)), 1000, 300)
	if got := dump(c); got != before {
		t.Fatalf("clone changed with the original:\n%s\nwant:\n%s", got, before)
	}
	after := dump(tr)
	randomOps(c, rand.New(rand.NewPCG(7, 3)), 1000, 300)
	if got := dump(tr); got != after {
		t.Fatalf("original changed with the clone:\n%s\nwant:\n%s", got, after)
	}
	checkInvariants(t, tr)
	checkInvariants(t, c)
}

func TestCloneInTransactionPanics(t *testing.T) {
	tr := New(Options{})
	tr.Begin()
	defer func() {
		if recover() == nil {
			t.Fatal("Clone inside a transaction did not panic")
		}
	}()
	tr.Clone()
}

// bigTree returns a tree of n nodes: 1000 directories holding the rest.
func bigTree(b *testing.B, n int) *Tree {
	tr := New(Options{})
	for i := 0; tr.count < n; i++ {
		p := fmt.Sprintf("/d%d", i)
		if i >= 1000 {
			p = fmt.Sprintf("/d%d/n%d", i%1000, i)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: p, Data: []byte("hello world"), ACL: open}, anyone, meta(2)); err != nil {
			b.Fatal(err)
		}
	}
	return tr
}

// BenchmarkClone measures Clone of a million-node tree, the time the
// server holds its write lock for a snapshot. A collection runs between
// iterations (untimed) so that each Clone pays for itself, not for the
// garbage of the previous ones.
func BenchmarkClone(b *testing.B) {
	tr := bigTree(b, 1_000_000)
	var c *Tree
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		c = nil
		runtime.GC()
		b.StartTimer()
		c = tr.Clone()
	}
	_ = c
}

// BenchmarkRecords walks a million-node tree.
func BenchmarkRecords(b *testing.B) {
	tr := bigTree(b, 1_000_000)
	b.ResetTimer()
	for b.Loop() {
		if err := tr.Records(func(NodeRecord) error { return nil }); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkMemoryPerZnode reports the live heap a tree of a million
// znodes holds, per znode, in the layout of warden bench's scale workload
// (64-byte data, 1000 per parent): bytes/znode is the figure to compare
// with docs/performance.md's memory per znode (which is RSS, so GC slack
// comes on top).
func BenchmarkMemoryPerZnode(b *testing.B) {
	const n = 1_000_000
	data := make([]byte, 64)
	for b.Loop() {
		runtime.GC()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		tr := New(Options{})
		tr.Create(CreateOp{Path: "/bench", ACL: open}, anyone, meta(2))
		tr.Create(CreateOp{Path: "/bench/scale", ACL: open}, anyone, meta(2))
		for i := range n {
			if i%1000 == 0 {
				tr.Create(CreateOp{Path: fmt.Sprintf("/bench/scale/b%d", i/1000), ACL: open}, anyone, meta(2))
			}
			p := fmt.Sprintf("/bench/scale/b%d/n%d", i/1000, i%1000)
			if _, _, _, err := tr.Create(CreateOp{Path: p, Data: bytes.Clone(data), ACL: open}, anyone, meta(2)); err != nil {
				b.Fatal(err)
			}
		}
		runtime.GC()
		runtime.ReadMemStats(&after)
		b.ReportMetric(float64(after.HeapAlloc-before.HeapAlloc)/n, "bytes/znode")
		runtime.KeepAlive(tr)
	}
}
