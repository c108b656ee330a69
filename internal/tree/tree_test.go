package tree

import (
	"slices"
	"testing"

	"github.com/wardenzk/warden/wire"
)

func TestNewTree(t *testing.T) {
	tr := New(Options{})
	zero := wire.Stat{}
	tests := []struct {
		path string
		stat wire.Stat
		acl  []wire.ACL
	}{
		{"/", wire.Stat{Cversion: -1, NumChildren: 1}, open},
		{"/zookeeper", wire.Stat{Cversion: -2, NumChildren: 2}, open},
		{"/zookeeper/quota", zero, open},
		{"/zookeeper/config", wire.Stat{Aversion: -1}, wire.ReadACLUnsafe},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			st, a, ok := tr.Lookup(tc.path)
			if !ok || st != tc.stat || !slices.Equal(a, tc.acl) {
				t.Fatalf("Lookup = %+v %v %v, want %+v %v", st, a, ok, tc.stat, tc.acl)
			}
			data, _, err := tr.GetData(tc.path, anyone)
			if err != nil || data == nil || len(data) != 0 {
				t.Fatalf("GetData = %q (nil %v) %v, want empty non-nil", data, data == nil, err)
			}
		})
	}
	if n := tr.NodeCount(); n != 4 {
		t.Errorf("NodeCount = %d, want 4", n)
	}
	if n := tr.ApproxDataSize(); n != 44 {
		t.Errorf("ApproxDataSize = %d, want 44", n)
	}
	if n, err := tr.AllChildrenNumber("/", anyone); n != 3 || err != nil {
		t.Errorf("AllChildrenNumber(/) = %d %v, want 3", n, err)
	}
	if kids, _, _ := tr.GetChildren("/zookeeper", anyone); !slices.Equal(kids, []string{"config", "quota"}) {
		t.Errorf("children of /zookeeper = %v", kids)
	}
	// "" names the root, as in ZooKeeper's node map.
	if st, err := tr.Exists("", anyone); err != nil || st.NumChildren != 1 {
		t.Errorf("Exists(\"\") = %+v %v", st, err)
	}
	checkInvariants(t, tr)
}

// TestStatEvolution follows the stat rules of §5 through a sequence of
// writes, checking parent and child after each.
func TestStatEvolution(t *testing.T) {
	tr := New(Options{})
	st := func(p string) wire.Stat {
		s, _, ok := tr.Lookup(p)
		if !ok {
			t.Fatalf("%s missing", p)
		}
		return s
	}
	// create /a at zxid 1
	_, sa, ch, err := tr.Create(CreateOp{Path: "/a", Data: []byte("hello"), ACL: open}, anyone, meta(1))
	if err != nil {
		t.Fatal(err)
	}
	want := wire.Stat{Czxid: 1, Mzxid: 1, Pzxid: 1, Ctime: 1000, Mtime: 1000, DataLength: 5}
	if sa != want || st("/a") != want {
		t.Fatalf("created /a: %+v, want %+v", sa, want)
	}
	if root := st("/"); root.Cversion != 0 || root.Pzxid != 1 || root.Mzxid != 0 || root.NumChildren != 2 {
		t.Fatalf("root after create: %+v", root)
	}
	wantCh := []Change{{wire.EventNodeCreated, "/a", open}, {wire.EventNodeChildrenChanged, "/", open}}
	if !changesEqual(ch, wantCh) {
		t.Fatalf("changes %v, want %v", ch, wantCh)
	}

	// two children at zxid 2, 3
	mustCreate(t, tr, "/a/x", 2)
	mustCreate(t, tr, "/a/y", 3)
	if s := st("/a"); s.Cversion != 2 || s.NumChildren != 2 || s.Pzxid != 3 || s.Mzxid != 1 || s.Version != 0 {
		t.Fatalf("/a after 2 creates: %+v", s)
	}
	// delete /a/x at zxid 4: visible cversion +1, stored unchanged
	ch, err = tr.Delete("/a/x", 0, anyone, meta(4))
	if err != nil {
		t.Fatal(err)
	}
	if s := st("/a"); s.Cversion != 3 || s.NumChildren != 1 || s.Pzxid != 4 {
		t.Fatalf("/a after delete: %+v", s)
	}
	if tr.lookup("/a").cversion() != 2 {
		t.Fatalf("stored cversion %d, want 2", tr.lookup("/a").cversion())
	}
	wantCh = []Change{{wire.EventNodeDeleted, "/a/x", open}, {wire.EventNodeChildrenChanged, "/a", open}}
	if !changesEqual(ch, wantCh) {
		t.Fatalf("changes %v, want %v", ch, wantCh)
	}
	// delete with a lower zxid leaves pzxid alone
	if _, err := tr.Delete("/a/y", -1, anyone, meta(2)); err != nil {
		t.Fatal(err)
	}
	if s := st("/a"); s.Pzxid != 4 || s.Cversion != 4 || s.NumChildren != 0 {
		t.Fatalf("/a after low-zxid delete: %+v", s)
	}
	// setData at zxid 5
	s5, ch, err := tr.SetData("/a", nil, 0, anyone, meta(5))
	if err != nil {
		t.Fatal(err)
	}
	want = wire.Stat{Czxid: 1, Mzxid: 5, Pzxid: 4, Ctime: 1000, Mtime: 5000, Version: 1, Cversion: 4}
	if s5 != want {
		t.Fatalf("after setData: %+v, want %+v", s5, want)
	}
	if d, _, _ := tr.GetData("/a", anyone); d != nil {
		t.Fatalf("nil data read back as %q", d)
	}
	if !changesEqual(ch, []Change{{wire.EventNodeDataChanged, "/a", open}}) {
		t.Fatalf("setData changes %v", ch)
	}
	// setACL at zxid 6: aversion only
	s6, err := tr.SetACL("/a", wire.ReadACLUnsafe, 0, anyone, meta(6))
	if err != nil {
		t.Fatal(err)
	}
	want.Aversion = 1
	if s6 != want {
		t.Fatalf("after setACL: %+v, want %+v", s6, want)
	}
	if _, err := tr.SetACL("/a", open, 0, anyone, meta(7)); err != wire.ErrNoAuth {
		t.Fatalf("setACL without ADMIN: %v", err)
	}
	if _, err := tr.SetACL("/a", open, 1, super, meta(7)); err != nil {
		t.Fatal(err)
	}
	if s := st("/a"); s.Aversion != 2 || s.Mzxid != 5 {
		t.Fatalf("after second setACL: %+v", s)
	}
	checkInvariants(t, tr)
}

func changesEqual(a, b []Change) bool {
	return slices.EqualFunc(a, b, func(x, y Change) bool {
		return x.Type == y.Type && x.Path == y.Path && slices.Equal(x.ACL, y.ACL)
	})
}

func TestVersionWrap(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/v", 1)
	n := tr.lookup("/v")
	n.version = -2
	n.aversion = -2
	s, _, err := tr.SetData("/v", nil, -2, anyone, meta(2))
	if err != nil || s.Version != 0 {
		t.Fatalf("setData at -2: %+v %v, want version 0", s, err)
	}
	s, err = tr.SetACL("/v", open, -2, anyone, meta(3))
	if err != nil || s.Aversion != 0 {
		t.Fatalf("setACL at -2: %+v %v, want aversion 0", s, err)
	}
	n.version = 1<<31 - 1
	s, _, err = tr.SetData("/v", nil, 1<<31-1, anyone, meta(4))
	if err != nil || s.Version != -1<<31 {
		t.Fatalf("setData at MaxInt32: %+v %v, want MinInt32", s, err)
	}
}

// TestCreateErrors checks every create error, and which wins when several
// apply (§2.3 steps 5–12).
func TestCreateErrors(t *testing.T) {
	setup := func() *Tree {
		tr := New(Options{})
		mustCreate(t, tr, "/p", 1)
		mustCreate(t, tr, "/p/exists", 2)
		if _, _, _, err := tr.Create(CreateOp{Path: "/locked", ACL: acl(wire.PermAll&^wire.PermCreate, "world", "anyone")}, anyone, meta(3)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: "/locked/kid", ACL: open}, super, meta(3)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: "/eph", ACL: open, Kind: KindEphemeral}, anyone, meta(4)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: "/cont", ACL: open, Kind: KindContainer}, anyone, meta(5)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: "/ttl", ACL: open, Kind: KindTTL, TTL: 100}, anyone, meta(6)); err != nil {
			t.Fatal(err)
		}
		return tr
	}
	bad := acl(wire.PermAll, "foo", "x")
	tests := []struct {
		name string
		op   CreateOp
		want error
		path string
	}{
		{"ok", CreateOp{Path: "/p/new", ACL: open}, nil, "/p/new"},
		{"no slash", CreateOp{Path: "p", ACL: bad}, wire.ErrBadArguments, ""},
		{"empty path", CreateOp{Path: "", ACL: open}, wire.ErrBadArguments, ""},
		{"nul beats acl", CreateOp{Path: "/p/a\x00", ACL: bad}, wire.ErrBadArguments, ""},
		{"acl beats missing parent", CreateOp{Path: "/nope/a", ACL: bad}, wire.ErrInvalidACL, ""},
		{"empty acl", CreateOp{Path: "/p/a", ACL: nil}, wire.ErrInvalidACL, ""},
		{"missing parent beats bad path", CreateOp{Path: "/nope/a/", ACL: open}, wire.ErrNoNode, ""},
		{"missing parent", CreateOp{Path: "/nope/a", ACL: open}, wire.ErrNoNode, ""},
		{"double slash parent", CreateOp{Path: "/p//a", ACL: open}, wire.ErrNoNode, ""},
		{"noauth beats bad path", CreateOp{Path: "/locked/.", ACL: open}, wire.ErrNoAuth, ""},
		{"noauth beats exists", CreateOp{Path: "/locked/kid", ACL: open}, wire.ErrNoAuth, ""},
		{"trailing slash", CreateOp{Path: "/p/", ACL: open}, wire.ErrBadArguments, ""},
		{"dot segment", CreateOp{Path: "/p/.", ACL: open}, wire.ErrBadArguments, ""},
		{"bad char", CreateOp{Path: "/p/\u0001", ACL: open}, wire.ErrBadArguments, ""},
		{"trailing slash sequential ok", CreateOp{Path: "/p/", ACL: open, Sequential: true}, nil, "/p/0000000001"},
		{"bad path beats exists", CreateOp{Path: "/p/exists/.", ACL: open}, wire.ErrBadArguments, ""},
		{"exists", CreateOp{Path: "/p/exists", ACL: open}, wire.ErrNodeExists, ""},
		{"root exists", CreateOp{Path: "/", ACL: open}, wire.ErrNodeExists, ""},
		{"exists beats ephemeral parent", CreateOp{Path: "/eph", ACL: open}, wire.ErrNodeExists, ""},
		{"ephemeral parent", CreateOp{Path: "/eph/a", ACL: open}, wire.ErrNoChildrenForEphemerals, ""},
		{"container parent ok", CreateOp{Path: "/cont/a", ACL: open}, nil, "/cont/a"},
		{"ttl parent ok", CreateOp{Path: "/ttl/a", ACL: open}, nil, "/ttl/a"},
		{"root child", CreateOp{Path: "/q", ACL: open}, nil, "/q"},
		{"under /zookeeper", CreateOp{Path: "/zookeeper/mine", ACL: open}, nil, "/zookeeper/mine"},
		{"under config: no create perm", CreateOp{Path: "/zookeeper/config/x", ACL: open}, wire.ErrNoAuth, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := setup()
			before := dump(tr)
			path, _, ch, err := tr.Create(tc.op, anyone, meta(10))
			if err != tc.want {
				t.Fatalf("Create(%q) = %v, want %v", tc.op.Path, err, tc.want)
			}
			if err != nil {
				if d := dump(tr); d != before || ch != nil {
					t.Fatalf("failed create changed the tree:\n%s\n%s", before, d)
				}
				return
			}
			if path != tc.path {
				t.Fatalf("path %q, want %q", path, tc.path)
			}
			checkInvariants(t, tr)
		})
	}
}

func TestCreateKinds(t *testing.T) {
	tr := New(Options{})
	m := Meta{Zxid: 7, Time: 7000, Session: 0x1234}
	tests := []struct {
		op        CreateOp
		owner     int64 // stored
		wireOwner int64
	}{
		{CreateOp{Path: "/per", Kind: KindPersistent}, 0, 0},
		{CreateOp{Path: "/eph", Kind: KindEphemeral}, 0x1234, 0x1234},
		{CreateOp{Path: "/con", Kind: KindContainer}, ContainerOwner, 0},
		{CreateOp{Path: "/ttl", Kind: KindTTL, TTL: 0xFFFFFFFFFF}, -1<<56 | 0xFFFFFFFFFF, 0},
	}
	for _, tc := range tests {
		t.Run(tc.op.Path, func(t *testing.T) {
			tc.op.ACL = open
			_, st, _, err := tr.Create(tc.op, anyone, m)
			if err != nil {
				t.Fatal(err)
			}
			if got := tr.lookup(tc.op.Path).owner(); got != tc.owner {
				t.Fatalf("stored owner %x, want %x", got, tc.owner)
			}
			if st.EphemeralOwner != tc.wireOwner {
				t.Fatalf("wire owner %x, want %x", st.EphemeralOwner, tc.wireOwner)
			}
		})
	}
	if got := TTLOwner(5); uint64(got) != 0xFF00000000000005 {
		t.Fatalf("TTLOwner(5) = %x", got)
	}
	if tr.EphemeralCount() != 1 || !slices.Equal(tr.Ephemerals(0x1234, "/"), []string{"/eph"}) {
		t.Fatalf("ephemerals: %d %v", tr.EphemeralCount(), tr.Ephemerals(0x1234, "/"))
	}
	checkInvariants(t, tr)
}

func TestSequentialNames(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/q", 1)
	seq := func(path string, zxid int64) string {
		t.Helper()
		p, _, _, err := tr.Create(CreateOp{Path: path, ACL: open, Sequential: true}, anyone, meta(zxid))
		if err != nil {
			t.Fatalf("create %s: %v", path, err)
		}
		return p
	}
	if p := seq("/q/n-", 2); p != "/q/n-0000000000" {
		t.Fatalf("first: %s", p)
	}
	if p := seq("/q/n-", 3); p != "/q/n-0000000001" {
		t.Fatalf("second: %s", p)
	}
	mustCreate(t, tr, "/q/plain", 4) // non-sequential creates count too
	if _, err := tr.Delete("/q/n-0000000001", -1, anyone, meta(5)); err != nil {
		t.Fatal(err)
	}
	if _, err := tr.Delete("/q/n-0000000000", -1, anyone, meta(6)); err != nil {
		t.Fatal(err)
	}
	// deletes do not reuse numbers
	if p := seq("/q/n-", 7); p != "/q/n-0000000003" {
		t.Fatalf("after deletes: %s", p)
	}
	// the root's counter does not count the reserved /zookeeper: /q was 0
	if p := seq("/", 8); p != "/0000000001" {
		t.Fatalf("under root: %s", p)
	}
	// within a transaction
	tr.Begin()
	a, b := seq("/q/t-", 9), seq("/q/t-", 9)
	tr.Rollback()
	if a != "/q/t-0000000004" || b != "/q/t-0000000005" {
		t.Fatalf("in txn: %s %s", a, b)
	}
	// rolled back: the numbers are free again
	if p := seq("/q/t-", 10); p != "/q/t-0000000004" {
		t.Fatalf("after rollback: %s", p)
	}
	// a negative counter formats as Java's %010d does; the counter sticks
	// at MaxInt32 rather than wrapping (DataTree only moves it forward)
	tr.ownDir(tr.lookup("/q")).cversion = -5
	if p := seq("/q/neg-", 11); p != "/q/neg--000000005" {
		t.Fatalf("negative counter: %s", p)
	}
	tr.ownDir(tr.lookup("/q")).cversion = 1<<31 - 1
	if p := seq("/q/max-", 12); p != "/q/max-2147483647" {
		t.Fatalf("max counter: %s", p)
	}
	if c := tr.lookup("/q").cversion(); c != 1<<31-1 {
		t.Fatalf("counter wrapped to %d", c)
	}
	checkInvariants(t, tr)
}

func TestDeleteErrors(t *testing.T) {
	setup := func() *Tree {
		tr := New(Options{})
		mustCreate(t, tr, "/p", 1)
		mustCreate(t, tr, "/p/kid", 2)
		mustCreate(t, tr, "/p/kid/grand", 3)
		mustCreate(t, tr, "/p/leaf", 4)
		if _, _, _, err := tr.Create(CreateOp{Path: "/locked", ACL: acl(wire.PermAll&^wire.PermDelete, "world", "anyone")}, anyone, meta(5)); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, tr, "/locked/kid", 6)
		return tr
	}
	tests := []struct {
		name    string
		path    string
		version int32
		want    error
	}{
		{"ok", "/p/leaf", -1, nil},
		{"ok version", "/p/leaf", 0, nil},
		{"no slash", "p", -1, wire.ErrBadArguments},
		{"empty", "", -1, wire.ErrBadArguments},
		{"nul", "/p/leaf\x00", -1, wire.ErrBadArguments},
		{"root", "/", -1, wire.ErrBadArguments},
		{"/zookeeper", "/zookeeper", -1, wire.ErrBadArguments},
		{"/zookeeper/quota", "/zookeeper/quota", -1, wire.ErrBadArguments},
		{"/zookeeper/config", "/zookeeper/config", 5, wire.ErrBadArguments},
		{"missing parent", "/nope/a", -1, wire.ErrNoNode},
		{"noauth beats missing node", "/locked/none", -1, wire.ErrNoAuth},
		{"noauth", "/locked/kid", -1, wire.ErrNoAuth},
		{"missing node", "/p/none", -1, wire.ErrNoNode},
		{"trailing slash: missing", "/p/", -1, wire.ErrNoNode},
		{"bad version", "/p/leaf", 3, wire.ErrBadVersion},
		{"bad version beats not empty", "/p/kid", 7, wire.ErrBadVersion},
		{"not empty", "/p/kid", -1, wire.ErrNotEmpty},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr := setup()
			before := dump(tr)
			_, err := tr.Delete(tc.path, tc.version, anyone, meta(10))
			if err != tc.want {
				t.Fatalf("Delete(%q) = %v, want %v", tc.path, err, tc.want)
			}
			if err != nil && dump(tr) != before {
				t.Fatal("failed delete changed the tree")
			}
			checkInvariants(t, tr)
		})
	}
}

func TestDeleteContainer(t *testing.T) {
	setup := func() *Tree {
		tr := New(Options{})
		if _, _, _, err := tr.Create(CreateOp{Path: "/c", ACL: wire.ReadACLUnsafe, Kind: KindContainer}, anyone, meta(1)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: "/full", ACL: open, Kind: KindContainer}, anyone, meta(2)); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, tr, "/full/kid", 3)
		if _, _, _, err := tr.Create(CreateOp{Path: "/eph", ACL: open, Kind: KindEphemeral}, anyone, meta(4)); err != nil {
			t.Fatal(err)
		}
		if _, _, _, err := tr.Create(CreateOp{Path: "/ttl", ACL: open, Kind: KindTTL, TTL: 5}, anyone, meta(5)); err != nil {
			t.Fatal(err)
		}
		mustCreate(t, tr, "/plain", 6)
		return tr
	}
	tests := []struct {
		path string
		want error
	}{
		{"/c", nil}, // no ACL check: the ACL grants only READ
		{"/ttl", nil},
		{"/plain", nil},
		{"/full", wire.ErrNotEmpty},
		{"/eph", wire.ErrBadVersion},
		{"/none", wire.ErrNoNode},
		{"/zookeeper", wire.ErrBadArguments},
		{"/", wire.ErrBadArguments},
		{"x", wire.ErrBadArguments},
	}
	for _, tc := range tests {
		t.Run(tc.path, func(t *testing.T) {
			tr := setup()
			ch, err := tr.DeleteContainer(tc.path, meta(10))
			if err != tc.want {
				t.Fatalf("DeleteContainer(%q) = %v, want %v", tc.path, err, tc.want)
			}
			if err == nil {
				if _, _, ok := tr.Lookup(tc.path); ok || len(ch) != 2 {
					t.Fatalf("node still there or changes %v", ch)
				}
				if s, _, _ := tr.Lookup("/"); s.Pzxid != 10 {
					t.Fatalf("root pzxid %d", s.Pzxid)
				}
			}
			checkInvariants(t, tr)
		})
	}
}

func TestSetDataErrors(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/p", 1)
	if _, _, _, err := tr.Create(CreateOp{Path: "/ro", ACL: wire.ReadACLUnsafe}, anyone, meta(2)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		version int32
		want    error
	}{
		{"ok", "/p", 0, nil},
		{"bad path beats missing", "/none/", -1, wire.ErrBadArguments},
		{"relative", "p", -1, wire.ErrBadArguments},
		{"missing", "/none", -1, wire.ErrNoNode},
		{"noauth beats bad version", "/ro", 9, wire.ErrNoAuth},
		{"bad version", "/p", 9, wire.ErrBadVersion},
		{"config is read-only", "/zookeeper/config", -1, wire.ErrNoAuth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(tr)
			_, _, err := tr.SetData(tc.path, []byte("x"), tc.version, anyone, meta(10))
			if err != tc.want {
				t.Fatalf("SetData(%q) = %v, want %v", tc.path, err, tc.want)
			}
			if err != nil && dump(tr) != before {
				t.Fatal("failed setData changed the tree")
			}
		})
	}
}

func TestSetACLErrors(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/p", 1)
	if _, _, _, err := tr.Create(CreateOp{Path: "/ro", ACL: wire.ReadACLUnsafe}, anyone, meta(2)); err != nil {
		t.Fatal(err)
	}
	bad := acl(wire.PermAll, "foo", "x")
	tests := []struct {
		name    string
		path    string
		acl     []wire.ACL
		version int32
		want    error
	}{
		{"bad path beats bad acl", "/p/", bad, -1, wire.ErrBadArguments},
		{"bad acl beats missing", "/none", bad, -1, wire.ErrInvalidACL},
		{"empty acl", "/p", nil, -1, wire.ErrInvalidACL},
		{"missing", "/none", open, -1, wire.ErrNoNode},
		{"noauth beats bad version", "/ro", open, 9, wire.ErrNoAuth},
		{"bad version is aversion", "/p", open, 1, wire.ErrBadVersion},
		{"ok", "/p", open, 0, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := dump(tr)
			_, err := tr.SetACL(tc.path, tc.acl, tc.version, anyone, meta(10))
			if err != tc.want {
				t.Fatalf("SetACL(%q) = %v, want %v", tc.path, err, tc.want)
			}
			if err != nil && dump(tr) != before {
				t.Fatal("failed setACL changed the tree")
			}
		})
	}
	checkInvariants(t, tr)
}

func TestCheck(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/p", 1)
	if _, _, _, err := tr.Create(CreateOp{Path: "/wo", ACL: acl(wire.PermWrite, "world", "anyone")}, anyone, meta(2)); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name    string
		path    string
		version int32
		want    error
	}{
		{"any version", "/p", -1, nil},
		{"exact version", "/p", 0, nil},
		{"bad path", "/p/", 0, wire.ErrBadArguments},
		{"missing", "/none", 0, wire.ErrNoNode},
		{"noauth beats version", "/wo", 5, wire.ErrNoAuth},
		{"bad version", "/p", 1, wire.ErrBadVersion},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tr.Check(tc.path, tc.version, anyone); err != tc.want {
				t.Fatalf("Check(%q, %d) = %v, want %v", tc.path, tc.version, err, tc.want)
			}
		})
	}
}

func TestReads(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/p", 1)
	for _, k := range []string{"c", "a", "b"} {
		mustCreate(t, tr, "/p/"+k, 2)
	}
	mustCreate(t, tr, "/p/a/deep", 3)
	if _, _, _, err := tr.Create(CreateOp{Path: "/secret", Data: []byte{}, ACL: acl(wire.PermAll, "digest", bobID.ID)}, anyone, meta(4)); err != nil {
		t.Fatal(err)
	}
	kids, st, err := tr.GetChildren("/p", anyone)
	if err != nil || !slices.Equal(kids, []string{"a", "b", "c"}) || st.NumChildren != 3 {
		t.Fatalf("GetChildren = %v %+v %v", kids, st, err)
	}
	if n, err := tr.AllChildrenNumber("/p", anyone); n != 4 || err != nil {
		t.Fatalf("AllChildrenNumber(/p) = %d %v", n, err)
	}
	if n, _ := tr.AllChildrenNumber("/", anyone); n != 9 {
		t.Fatalf("AllChildrenNumber(/) = %d", n)
	}
	tests := []struct {
		name string
		run  func() error
		want error
	}{
		{"exists missing", func() error { _, err := tr.Exists("/none", anyone); return err }, wire.ErrNoNode},
		{"exists nul", func() error { _, err := tr.Exists("/p\x00", anyone); return err }, wire.ErrBadArguments},
		{"exists noauth", func() error { _, err := tr.Exists("/secret", anyone); return err }, wire.ErrNoAuth},
		{"exists auth", func() error { _, err := tr.Exists("/secret", bob); return err }, nil},
		{"exists invalid path is just missing", func() error { _, err := tr.Exists("/p/", anyone); return err }, wire.ErrNoNode},
		{"getData missing", func() error { _, _, err := tr.GetData("/none", anyone); return err }, wire.ErrNoNode},
		{"getData noauth", func() error { _, _, err := tr.GetData("/secret", anyone); return err }, wire.ErrNoAuth},
		{"getChildren missing", func() error { _, _, err := tr.GetChildren("/none", anyone); return err }, wire.ErrNoNode},
		{"getChildren noauth", func() error { _, _, err := tr.GetChildren("/secret", anyone); return err }, wire.ErrNoAuth},
		{"getACL missing", func() error { _, _, err := tr.GetACL("/none", anyone); return err }, wire.ErrNoNode},
		{"allChildren missing", func() error { _, err := tr.AllChildrenNumber("/none", anyone); return err }, wire.ErrNoNode},
		{"allChildren noauth", func() error { _, err := tr.AllChildrenNumber("/secret", anyone); return err }, wire.ErrNoAuth},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := tc.run(); err != tc.want {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	d, _, _ := tr.GetData("/secret", bob)
	if d == nil || len(d) != 0 {
		t.Fatalf("empty data read back as %v (nil %v)", d, d == nil)
	}
	_, a, _ := tr.Lookup("/secret")
	if tr.CanRead(a, anyone) || !tr.CanRead(a, bob) || !New(Options{SkipACL: true}).CanRead(a, anyone) {
		t.Fatal("CanRead wrong")
	}
}

func TestEphemeralsAndCloseSession(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/a", 1)
	mustCreate(t, tr, "/b", 2)
	mk := func(path string, session int64, zxid int64) {
		t.Helper()
		if _, _, _, err := tr.Create(CreateOp{Path: path, ACL: open, Kind: KindEphemeral}, anyone, Meta{Zxid: zxid, Session: session}); err != nil {
			t.Fatal(err)
		}
	}
	mk("/b/e2", 1, 3)
	mk("/a/e1", 1, 4)
	mk("/a/other", 2, 5)
	mk("/ab", 1, 6)
	if got := tr.Ephemerals(1, ""); !slices.Equal(got, []string{"/a/e1", "/ab", "/b/e2"}) {
		t.Fatalf("Ephemerals(1) = %v", got)
	}
	if got := tr.Ephemerals(1, "/a"); !slices.Equal(got, []string{"/a/e1", "/ab"}) {
		t.Fatalf("raw prefix /a = %v", got)
	}
	if got := tr.Ephemerals(1, " / "); len(got) != 3 {
		t.Fatalf("blank-ish / prefix = %v", got)
	}
	if got := tr.Ephemerals(3, ""); got != nil {
		t.Fatalf("unknown session = %v", got)
	}
	if tr.EphemeralCount() != 4 {
		t.Fatalf("EphemeralCount = %d", tr.EphemeralCount())
	}
	ch := tr.CloseSession(1, Meta{Zxid: 10, Time: 1})
	var paths []string
	for _, c := range ch {
		paths = append(paths, c.Path)
	}
	if want := []string{"/a/e1", "/a", "/ab", "/", "/b/e2", "/b"}; !slices.Equal(paths, want) {
		t.Fatalf("CloseSession changes %v, want %v", paths, want)
	}
	for _, p := range []string{"/a", "/b", "/"} {
		if s, _, _ := tr.Lookup(p); s.Pzxid != 10 {
			t.Fatalf("%s pzxid %d", p, s.Pzxid)
		}
	}
	if got := tr.EphemeralsBySession(); len(got) != 1 || !slices.Equal(got[2], []string{"/a/other"}) {
		t.Fatalf("EphemeralsBySession = %v", got)
	}
	if ch := tr.CloseSession(1, Meta{Zxid: 11}); ch != nil {
		t.Fatalf("second close: %v", ch)
	}
	checkInvariants(t, tr)
}

func TestExpiryCandidates(t *testing.T) {
	tr := New(Options{})
	create := func(path string, kind Kind, ttl int64, time int64) {
		t.Helper()
		if _, _, _, err := tr.Create(CreateOp{Path: path, ACL: open, Kind: kind, TTL: ttl}, anyone, Meta{Zxid: time, Time: time}); err != nil {
			t.Fatal(err)
		}
	}
	create("/used", KindContainer, 0, 100)    // had a child, now empty
	create("/used/k", KindPersistent, 0, 101) //
	if _, err := tr.Delete("/used/k", -1, anyone, Meta{Zxid: 102, Time: 102}); err != nil {
		t.Fatal(err)
	}
	create("/busy", KindContainer, 0, 100) // has a child
	create("/busy/k", KindPersistent, 0, 100)
	create("/never", KindContainer, 0, 100) // never had a child
	create("/ttl", KindTTL, 50, 100)
	create("/ttlkids", KindTTL, 50, 100)
	create("/ttlkids/k", KindPersistent, 0, 100)
	create("/ttlnew", KindTTL, 50, 140)
	create("/plain", KindPersistent, 0, 0)

	tests := []struct {
		now, maxNeverUsed int64
		want              []string
	}{
		{100, 0, []string{"/used"}},
		{150, 0, []string{"/used"}}, // ttl: 150-100 = 50, not > 50
		{151, 0, []string{"/ttl", "/used"}},
		{151, 51, []string{"/ttl", "/used"}}, // never: 51 not > 51
		{152, 51, []string{"/never", "/ttl", "/used"}},
		{191, 0, []string{"/ttl", "/ttlnew", "/used"}},
	}
	for _, tc := range tests {
		if got := tr.ExpiryCandidates(tc.now, tc.maxNeverUsed); !slices.Equal(got, tc.want) {
			t.Errorf("ExpiryCandidates(%d, %d) = %v, want %v", tc.now, tc.maxNeverUsed, got, tc.want)
		}
	}
	// setData resets the TTL timer
	if _, _, err := tr.SetData("/ttl", nil, -1, anyone, Meta{Zxid: 200, Time: 200}); err != nil {
		t.Fatal(err)
	}
	if got := tr.ExpiryCandidates(220, 0); slices.Contains(got, "/ttl") {
		t.Errorf("TTL node after setData still a candidate: %v", got)
	}
}
