package tree

import (
	"strings"
	"testing"

	"github.com/wardenzk/warden/wire"
)

// TestRollbackRestoresExactly runs every kind of write inside a transaction
// and checks that Rollback leaves a deep dump identical to the one before.
func TestRollbackRestoresExactly(t *testing.T) {
	tr := New(Options{})
	mustCreate(t, tr, "/a", 1)
	mustCreate(t, tr, "/a/b", 2)
	if _, _, _, err := tr.Create(CreateOp{Path: "/a/e", ACL: open, Kind: KindEphemeral}, anyone, Meta{Zxid: 3, Session: 9}); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := tr.Create(CreateOp{Path: "/c", ACL: open, Kind: KindContainer}, anyone, meta(4)); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := tr.Create(CreateOp{Path: "/t", ACL: open, Kind: KindTTL, TTL: 9}, anyone, meta(5)); err != nil {
		t.Fatal(err)
	}
	for i, p := range []string{quotaPath + "/a", quotaPath + "/a/zookeeper_limits", quotaPath + "/a/zookeeper_stats"} {
		mustCreate(t, tr, p, int64(10+i))
	}
	before := dump(tr)
	if !strings.Contains(before, "quotaRoots=[/a]") || !strings.Contains(before, `count=3,bytes=2`) {
		t.Fatalf("quota on /a not set up:\n%s", before)
	}

	tr.Begin()
	m := meta(6)
	steps := []func() error{
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: "/a/s-", ACL: open, Sequential: true}, anyone, m)
			return err
		},
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: "/a/new", Data: nil, ACL: acl(wire.PermAll, "digest", bobID.ID)}, anyone, m)
			return err
		},
		func() error { _, _, err := tr.SetData("/a", []byte("longer data"), -1, anyone, m); return err },
		func() error { _, _, err := tr.SetData("/a/new", []byte{}, -1, bob, m); return err },
		func() error { _, err := tr.SetACL("/a/b", wire.ReadACLUnsafe, -1, anyone, m); return err },
		func() error { _, err := tr.Delete("/a/b", -1, anyone, m); return err },
		func() error { _, err := tr.DeleteContainer("/c", m); return err },
		func() error { _, err := tr.DeleteContainer("/t", m); return err },
		func() error { tr.CloseSession(9, m); return nil },
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: "/c", ACL: open, Kind: KindEphemeral}, anyone, Meta{Zxid: 6, Session: 10})
			return err
		},
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: "/t", ACL: open, Kind: KindContainer}, anyone, m)
			return err
		},
		func() error { _, err := tr.Delete(quotaPath+"/a/zookeeper_limits", -1, anyone, m); return err },
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: "/a/after", Data: []byte("zz"), ACL: open}, anyone, m)
			return err
		},
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: quotaPath + "/t", ACL: open}, anyone, m)
			return err
		},
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: quotaPath + "/t/zookeeper_limits", ACL: open}, anyone, m)
			return err
		},
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: quotaPath + "/t/zookeeper_stats", ACL: open}, anyone, m)
			return err
		},
		func() error {
			_, _, _, err := tr.Create(CreateOp{Path: "/t/x", Data: []byte("x"), ACL: open}, anyone, m)
			return err
		},
		func() error {
			_, err := tr.SetACL("/a", acl(wire.PermAll, "ip", "10.0.0.0/8"), -1, anyone, m)
			return err
		},
	}
	for i, s := range steps {
		if err := s(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	checkInvariants(t, tr)
	if d := dump(tr); d == before || !strings.Contains(d, "quotaRoots=[/t]") || !strings.Contains(d, `count=2,bytes=1`) {
		t.Fatalf("the steps did not do what they should:\n%s", d)
	}
	tr.Rollback()
	if after := dump(tr); after != before {
		t.Fatalf("rollback did not restore:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	checkInvariants(t, tr)

	// Commit keeps changes, and nothing is recorded outside a transaction.
	tr.Begin()
	mustCreate(t, tr, "/kept", 7)
	tr.Commit()
	mustCreate(t, tr, "/also", 8)
	if len(tr.undo) != 0 {
		t.Fatalf("undo log holds %d entries after Commit", len(tr.undo))
	}
	tr.Begin()
	tr.Rollback()
	for _, p := range []string{"/kept", "/also"} {
		if _, _, ok := tr.Lookup(p); !ok {
			t.Fatalf("%s lost", p)
		}
	}
}
