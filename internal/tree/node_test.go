package tree

import (
	"testing"
	"unsafe"

	"github.com/wardenzk/warden/wire"
)

// A million znodes hold a million nodes: the struct must stay in Go's
// 64-byte size class.
func TestNodeIs64Bytes(t *testing.T) {
	if s := unsafe.Sizeof(node{}); s != 64 {
		t.Fatalf("node is %d bytes, want 64", s)
	}
}

func TestNodeDataKeepsNilEmptyAndBytes(t *testing.T) {
	var n node
	for _, tc := range []struct {
		in   []byte
		size int
	}{{nil, 0}, {[]byte{}, 0}, {[]byte("abc"), 3}} {
		n.setData(tc.in)
		got := n.data()
		if (got == nil) != (tc.in == nil) || string(got) != string(tc.in) || n.dataSize() != tc.size {
			t.Fatalf("setData(%#v): data %#v, size %d", tc.in, got, n.dataSize())
		}
	}
}

// Childless nodes share their ext: every node of one ACL without an owner
// the ACL's own, a session's ephemerals of one ACL one interned for them,
// dropped with the last of them. A node that has a child gets one of its
// own, and a new ACL never changes a shared one.
func TestChildlessNodesShareExt(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/a", 1)
	mustCreate(t, tr, "/b", 2)
	a, b := tr.lookup("/a"), tr.lookup("/b")
	if a.ext != b.ext || a.ext != a.acl().leaf || a.dir() != nil {
		t.Fatalf("/a and /b do not share their ACL's leaf ext")
	}
	for i, p := range []string{"/e1", "/e2"} {
		if _, _, _, err := tr.Create(CreateOp{Path: p, ACL: open, Kind: KindEphemeral}, anyone, Meta{Zxid: int64(3 + i), Session: 9}); err != nil {
			t.Fatal(err)
		}
	}
	e1, e2 := tr.lookup("/e1"), tr.lookup("/e2")
	if e1.ext != e2.ext || e1.ext == a.ext || e1.owner() != 9 || len(tr.owned) != 1 {
		t.Fatalf("a session's ephemerals do not share one ext (%d interned)", len(tr.owned))
	}
	mustCreate(t, tr, "/a/c", 5)
	if a = tr.lookup("/a"); a.dir() == nil || a.ext == b.ext || b.ext != b.acl().leaf {
		t.Fatal("/a has no ext of its own after its first child")
	}
	if _, err := tr.SetACL("/b", wire.ReadACLUnsafe, -1, anyone, meta(6)); err != nil {
		t.Fatal(err)
	}
	if b = tr.lookup("/b"); b.ext == a.ext || b.acl().acl[0].Perms != wire.PermRead || a.acl().acl[0].Perms != wire.PermAll {
		t.Fatal("setACL on /b changed another node's ACL or kept the shared ext")
	}
	tr.CloseSession(9, meta(7))
	if len(tr.owned) != 0 {
		t.Fatalf("%d interned exts left after the session's ephemerals are gone", len(tr.owned))
	}
	checkInvariants(t, tr)
}
