package tree

import (
	"slices"
	"testing"

	"github.com/wardenzk/warden/wire"
)

func TestDigest(t *testing.T) {
	if got, want := Digest("super:test"), "super:D/InIHSb7yEEbrWz8b9l71RjZJU="; got != want {
		t.Fatalf("Digest = %q, want %q", got, want)
	}
	if got := Digest("nocolon"); got[:8] != "nocolon:" {
		t.Fatalf("Digest without ':' = %q, want user part to be the whole input", got)
	}
}

func TestMatchACL(t *testing.T) {
	ip := func(a string) Caller { return Caller{IDs: []wire.ID{{Scheme: "ip", ID: a}}} }
	tests := []struct {
		name string
		acl  []wire.ACL
		perm wire.Perm
		c    Caller
		skip bool
		want bool
	}{
		{"world read", acl(wire.PermRead, "world", "anyone"), wire.PermRead, anyone, false, true},
		{"world read wants write", acl(wire.PermRead, "world", "anyone"), wire.PermWrite, anyone, false, false},
		{"any bit of perm", acl(wire.PermAdmin, "world", "anyone"), wire.PermRead | wire.PermAdmin, anyone, false, true},
		{"empty acl allows", nil, wire.PermAdmin, anyone, false, true},
		{"skipACL allows", acl(wire.PermRead, "digest", bobID.ID), wire.PermWrite, anyone, true, true},
		{"super allows", acl(wire.PermRead, "digest", bobID.ID), wire.PermAdmin, super, false, true},
		{"digest match", acl(wire.PermAll, "digest", bobID.ID), wire.PermWrite, bob, false, true},
		{"digest other", acl(wire.PermAll, "digest", Digest("bob:other")), wire.PermWrite, bob, false, false},
		{"digest no auth", acl(wire.PermAll, "digest", bobID.ID), wire.PermWrite, anyone, false, false},
		{"world other id", acl(wire.PermAll, "world", "someone"), wire.PermRead, anyone, false, false},
		{"unknown scheme", acl(wire.PermAll, "foo", "bar"), wire.PermRead, Caller{IDs: []wire.ID{{Scheme: "foo", ID: "bar"}}}, false, false},
		{"ip exact", acl(wire.PermAll, "ip", "127.0.0.1"), wire.PermRead, ip("127.0.0.1"), false, true},
		{"ip other", acl(wire.PermAll, "ip", "127.0.0.2"), wire.PermRead, ip("127.0.0.1"), false, false},
		{"ip cidr 8", acl(wire.PermAll, "ip", "127.0.0.0/8"), wire.PermRead, ip("127.9.8.7"), false, true},
		{"ip cidr 9 miss", acl(wire.PermAll, "ip", "10.128.0.0/9"), wire.PermRead, ip("10.127.0.1"), false, false},
		{"ip cidr 9 hit", acl(wire.PermAll, "ip", "10.128.0.0/9"), wire.PermRead, ip("10.200.0.1"), false, true},
		{"ip cidr 0", acl(wire.PermAll, "ip", "0.0.0.0/0"), wire.PermRead, ip("8.8.8.8"), false, true},
		{"ip leading zeros", acl(wire.PermAll, "ip", "127.000.0.01"), wire.PermRead, ip("127.0.0.1"), false, true},
		{"ipv6 exact", acl(wire.PermAll, "ip", "::1"), wire.PermRead, ip("0:0:0:0:0:0:0:1"), false, true},
		{"ipv6 cidr", acl(wire.PermAll, "ip", "fe80::/10"), wire.PermRead, ip("fe80:0:0:0:1:2:3:4"), false, true},
		{"ipv4 vs ipv6", acl(wire.PermAll, "ip", "0.0.0.0/0"), wire.PermRead, ip("::1"), false, false},
		{"ipv6 vs ipv4", acl(wire.PermAll, "ip", "::/0"), wire.PermRead, ip("127.0.0.1"), false, false},
		{"ip bad bits", acl(wire.PermAll, "ip", "127.0.0.1/33"), wire.PermRead, ip("127.0.0.1"), false, false},
		{"sasl equal", acl(wire.PermAll, "sasl", "alice"), wire.PermRead, Caller{IDs: []wire.ID{{Scheme: "sasl", ID: "alice"}}}, false, true},
		{"sasl super id", acl(wire.PermAll, "sasl", "alice"), wire.PermRead, Caller{IDs: []wire.ID{{Scheme: "sasl", ID: "super"}}}, false, true},
		{"x509 equal", acl(wire.PermAll, "x509", "CN=a"), wire.PermRead, Caller{IDs: []wire.ID{{Scheme: "x509", ID: "CN=a"}}}, false, true},
		{"scheme must agree", acl(wire.PermAll, "sasl", "127.0.0.1"), wire.PermRead, ip("127.0.0.1"), false, false},
		{"second entry grants", append(acl(wire.PermRead, "world", "anyone"), acl(wire.PermWrite, "digest", bobID.ID)...), wire.PermWrite, bob, false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := MatchACL(tc.acl, tc.perm, tc.c, tc.skip); got != tc.want {
				t.Fatalf("MatchACL = %v, want %v", got, tc.want)
			}
		})
	}
}

// TestPermissionTable checks which permission each operation needs (§10):
// a caller holding exactly one bit can do exactly the operations needing it.
func TestPermissionTable(t *testing.T) {
	ops := []struct {
		name string
		need wire.Perm // on /p (the node) unless onParent
		run  func(tr *Tree, c Caller) error
	}{
		{"create child", wire.PermCreate, func(tr *Tree, c Caller) error {
			_, _, _, err := tr.Create(CreateOp{Path: "/p/new", ACL: open}, c, meta(10))
			return err
		}},
		{"delete child", wire.PermDelete, func(tr *Tree, c Caller) error {
			_, err := tr.Delete("/p/kid", -1, c, meta(10))
			return err
		}},
		{"setData", wire.PermWrite, func(tr *Tree, c Caller) error {
			_, _, err := tr.SetData("/p", nil, -1, c, meta(10))
			return err
		}},
		{"setACL", wire.PermAdmin, func(tr *Tree, c Caller) error {
			_, err := tr.SetACL("/p", open, -1, c, meta(10))
			return err
		}},
		{"getData", wire.PermRead, func(tr *Tree, c Caller) error { _, _, err := tr.GetData("/p", c); return err }},
		{"getChildren", wire.PermRead, func(tr *Tree, c Caller) error { _, _, err := tr.GetChildren("/p", c); return err }},
		{"exists", wire.PermRead, func(tr *Tree, c Caller) error { _, err := tr.Exists("/p", c); return err }},
		{"allChildrenNumber", wire.PermRead, func(tr *Tree, c Caller) error { _, err := tr.AllChildrenNumber("/p", c); return err }},
		{"check", wire.PermRead, func(tr *Tree, c Caller) error { return tr.Check("/p", -1, c) }},
		{"getACL", wire.PermRead | wire.PermAdmin, func(tr *Tree, c Caller) error { _, _, err := tr.GetACL("/p", c); return err }},
	}
	for _, op := range ops {
		for bit := wire.PermRead; bit <= wire.PermAdmin; bit <<= 1 {
			t.Run(op.name+"/"+permName(bit), func(t *testing.T) {
				tr := New(Options{})
				mustCreate(t, tr, "/p", 1)
				mustCreate(t, tr, "/p/kid", 2)
				if _, err := tr.SetACL("/p", acl(bit, "digest", bobID.ID), -1, anyone, meta(3)); err != nil {
					t.Fatal(err)
				}
				err := op.run(tr, bob)
				want := error(nil)
				if op.need&bit == 0 {
					want = wire.ErrNoAuth
				}
				if err != want {
					t.Fatalf("with %s: err = %v, want %v", permName(bit), err, want)
				}
				if err := op.run(New(Options{SkipACL: true}), bob); err == wire.ErrNoAuth {
					t.Fatalf("skipACL: NoAuth")
				}
			})
		}
	}
}

func permName(p wire.Perm) string {
	return map[wire.Perm]string{wire.PermRead: "read", wire.PermWrite: "write", wire.PermCreate: "create", wire.PermDelete: "delete", wire.PermAdmin: "admin"}[p]
}

func TestFixupACL(t *testing.T) {
	digest := wire.ID{Scheme: "digest", ID: "bob:hash"}
	sasl := wire.ID{Scheme: "sasl", ID: "alice@EXAMPLE.COM"}
	x509 := wire.ID{Scheme: "x509", ID: "CN=client"}
	ip := wire.ID{Scheme: "ip", ID: "10.0.0.1"}
	all := Caller{IDs: []wire.ID{ip, digest, {Scheme: "super", ID: ""}, sasl, x509}}
	tests := []struct {
		name string
		in   []wire.ACL
		c    Caller
		want []wire.ACL // nil means ErrInvalidACL
	}{
		{"nil", nil, all, nil},
		{"empty", []wire.ACL{}, all, nil},
		{"world anyone", open, anyone, open},
		{"world other", acl(wire.PermAll, "world", "everyone"), anyone, nil},
		{"dedupe", append(acl(wire.PermRead, "world", "anyone"), acl(wire.PermRead, "world", "anyone")...), anyone, acl(wire.PermRead, "world", "anyone")},
		{"same id other perms kept", append(acl(wire.PermRead, "world", "anyone"), acl(wire.PermWrite, "world", "anyone")...), anyone,
			append(acl(wire.PermRead, "world", "anyone"), acl(wire.PermWrite, "world", "anyone")...)},
		{"auth expands", acl(wire.PermAll, "auth", ""), all, []wire.ACL{{Perms: wire.PermAll, ID: digest}, {Perms: wire.PermAll, ID: sasl}, {Perms: wire.PermAll, ID: x509}}},
		{"auth id ignored", acl(wire.PermRead, "auth", "whatever"), bob, []wire.ACL{{Perms: wire.PermRead, ID: bobID}}},
		{"auth ip only", acl(wire.PermAll, "auth", ""), anyone, nil},
		{"auth super only", acl(wire.PermAll, "auth", ""), super, nil},
		{"digest ok", acl(wire.PermAll, "digest", "bob:hash"), anyone, acl(wire.PermAll, "digest", "bob:hash")},
		{"digest leading colon", acl(wire.PermAll, "digest", ":hash"), anyone, acl(wire.PermAll, "digest", ":hash")},
		{"digest trailing colon dropped", acl(wire.PermAll, "digest", "bob:hash:"), anyone, acl(wire.PermAll, "digest", "bob:hash:")},
		{"digest no colon", acl(wire.PermAll, "digest", "bob"), anyone, nil},
		{"digest empty hash", acl(wire.PermAll, "digest", "bob:"), anyone, nil},
		{"digest three parts", acl(wire.PermAll, "digest", "a:b:c"), anyone, nil},
		{"ip ok", acl(wire.PermAll, "ip", "10.0.0.0/8"), anyone, acl(wire.PermAll, "ip", "10.0.0.0/8")},
		{"ipv6 ok", acl(wire.PermAll, "ip", "2001:db8::/32"), anyone, acl(wire.PermAll, "ip", "2001:db8::/32")},
		{"ip bits 32", acl(wire.PermAll, "ip", "10.0.0.1/32"), anyone, acl(wire.PermAll, "ip", "10.0.0.1/32")},
		{"ip bits 33", acl(wire.PermAll, "ip", "10.0.0.1/33"), anyone, nil},
		{"ipv6 bits 129", acl(wire.PermAll, "ip", "::1/129"), anyone, nil},
		{"ip negative bits", acl(wire.PermAll, "ip", "10.0.0.1/-1"), anyone, nil},
		{"ip three parts", acl(wire.PermAll, "ip", "10.0.0"), anyone, nil},
		{"ip 256", acl(wire.PermAll, "ip", "10.0.0.256"), anyone, nil},
		{"ip hostname", acl(wire.PermAll, "ip", "localhost"), anyone, nil},
		{"ipv6 zone", acl(wire.PermAll, "ip", "fe80::1%eth0"), anyone, nil},
		{"sasl ok", acl(wire.PermAll, "sasl", "alice"), anyone, acl(wire.PermAll, "sasl", "alice")},
		{"sasl principal", acl(wire.PermAll, "sasl", "zk/host@REALM"), anyone, acl(wire.PermAll, "sasl", "zk/host@REALM")},
		{"sasl malformed", acl(wire.PermAll, "sasl", "a@b@c"), anyone, nil},
		{"x509 ok", acl(wire.PermAll, "x509", "CN=x"), anyone, acl(wire.PermAll, "x509", "CN=x")},
		{"x509 empty", acl(wire.PermAll, "x509", ""), anyone, nil},
		{"super scheme", acl(wire.PermAll, "super", ""), super, nil},
		{"unknown scheme", acl(wire.PermAll, "foo", "x"), anyone, nil},
		{"one bad spoils all", append(open, acl(wire.PermAll, "foo", "x")...), anyone, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := FixupACL(tc.in, tc.c)
			if tc.want == nil {
				if err != wire.ErrInvalidACL {
					t.Fatalf("FixupACL = %v, %v; want InvalidACL", got, err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) {
				t.Fatalf("FixupACL = %v, %v; want %v", got, err, tc.want)
			}
		})
	}
}

func TestGetACLMasking(t *testing.T) {
	tr := New(Options{})
	list := []wire.ACL{
		{Perms: wire.PermRead, ID: wire.AnyoneID},
		{Perms: wire.PermAdmin, ID: bobID},
		{Perms: wire.PermRead, ID: wire.ID{Scheme: "digest", ID: "eve:hash"}},
	}
	if _, _, _, err := tr.Create(CreateOp{Path: "/m", ACL: list}, anyone, meta(1)); err != nil {
		t.Fatal(err)
	}
	masked, _, err := tr.GetACL("/m", anyone)
	if err != nil {
		t.Fatal(err)
	}
	wantMasked := []wire.ACL{
		{Perms: wire.PermRead, ID: wire.AnyoneID},
		{Perms: wire.PermAdmin, ID: wire.ID{Scheme: "digest", ID: "bob:x"}},
		{Perms: wire.PermRead, ID: wire.ID{Scheme: "digest", ID: "eve:x"}},
	}
	if !slices.Equal(masked, wantMasked) {
		t.Fatalf("without ADMIN: %v, want %v", masked, wantMasked)
	}
	for _, c := range []Caller{bob, super} {
		full, _, err := tr.GetACL("/m", c)
		if err != nil || !slices.Equal(full, list) {
			t.Fatalf("with ADMIN: %v %v, want %v", full, err, list)
		}
	}
	// The stored ACL is untouched by masking.
	if _, a, _ := tr.Lookup("/m"); !slices.Equal(a, list) {
		t.Fatalf("stored ACL changed: %v", a)
	}
	// Admin alone is enough to read the ACL.
	if _, _, _, err := tr.Create(CreateOp{Path: "/adm", ACL: acl(wire.PermAdmin, "digest", bobID.ID)}, anyone, meta(2)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := tr.GetACL("/adm", bob); err != nil {
		t.Fatalf("admin-only GetACL: %v", err)
	}
	if _, _, err := tr.GetACL("/adm", anyone); err != wire.ErrNoAuth {
		t.Fatalf("no perms GetACL: %v, want NoAuth", err)
	}
}

func TestMaskDigest(t *testing.T) {
	// Java's replaceAll(":.*", ":x"): '.' stops at line terminators.
	tests := map[string]string{
		"bob:hash":   "bob:x",
		"bob":        "bob",
		"a:b:c":      "a:x",
		"a:b\nc:d":   "a:x\nc:x",
		":h":         ":x",
		"a:b\u2028c": "a:x\u2028c",
	}
	for in, want := range tests {
		if got := maskDigest(in); got != want {
			t.Errorf("maskDigest(%q) = %q, want %q", in, got, want)
		}
	}
}
