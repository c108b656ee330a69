package tree

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/wardenzk/warden/wire"
)

var (
	anyone = Caller{IDs: []wire.ID{{Scheme: "ip", ID: "127.0.0.1"}}}
	bobID  = wire.ID{Scheme: "digest", ID: Digest("bob:secret")}
	bob    = Caller{IDs: []wire.ID{{Scheme: "ip", ID: "127.0.0.1"}, bobID}}
	super  = Caller{IDs: []wire.ID{{Scheme: "ip", ID: "127.0.0.1"}, {Scheme: "super", ID: ""}}}
	open   = wire.OpenACLUnsafe
)

func meta(zxid int64) Meta { return Meta{Zxid: zxid, Time: 1000 * zxid, Session: 0x42} }

func acl(perms wire.Perm, scheme, id string) []wire.ACL {
	return []wire.ACL{{Perms: perms, ID: wire.ID{Scheme: scheme, ID: id}}}
}

// mustCreate creates a persistent node with open ACL.
func mustCreate(t *testing.T, tr *Tree, path string, zxid int64) string {
	t.Helper()
	p, _, _, err := tr.Create(CreateOp{Path: path, Data: []byte("d"), ACL: open}, anyone, meta(zxid))
	if err != nil {
		t.Fatalf("create %s: %v", path, err)
	}
	return p
}

// reachable returns every node of the tree by path, walking the children
// from the root, and the number of times a node was reached through a
// second path (0 in a sound tree).
func reachable(tr *Tree) (map[string]*node, int) {
	out := map[string]*node{"/": tr.root}
	seen := map[*node]bool{tr.root: true}
	dups := 0
	var walk func(path string, n *node)
	walk = func(path string, n *node) {
		for k, c := range n.kids().all() {
			if seen[c] {
				dups++
			}
			seen[c] = true
			out[path+"/"+k] = c
			walk(path+"/"+k, c)
		}
	}
	walk("", tr.root)
	return out, dups
}

// allNodes is reachable for a test, which fails if a node is reached
// twice or the tree's count is off.
func allNodes(t testing.TB, tr *Tree) map[string]*node {
	t.Helper()
	out, dups := reachable(tr)
	if dups > 0 || len(out) != tr.count {
		t.Fatalf("%d nodes reachable (%d through a second path), count %d", len(out), dups, tr.count)
	}
	return out
}

// dump renders the whole state of the tree, indexes included, for exact
// before/after comparisons.
func dump(tr *Tree) string {
	var b strings.Builder
	nodes, dups := reachable(tr)
	fmt.Fprintf(&b, "count=%d reachable=%d shared=%d\n", tr.count, len(nodes), dups)
	paths := make([]string, 0, len(nodes))
	for p := range nodes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	for _, p := range paths {
		n := nodes[p]
		kids := n.kids().names()
		data := "nil"
		if n.data() != nil {
			data = fmt.Sprintf("%q", n.data())
		}
		fmt.Fprintf(&b, "%s data=%s acl=%v refs=%d kids=%v czxid=%d mzxid=%d pzxid=%d ctime=%d mtime=%d v=%d cv=%d av=%d owner=%x\n",
			p, data, n.acl().acl, tr.acls[n.acl().key].refs, kids, n.czxid, n.mzxid, n.pzxid(), n.ctime, n.mtime, n.version, n.cversion(), n.aversion, n.owner())
	}
	fmt.Fprintf(&b, "ephemerals=%v count=%d\n", tr.EphemeralsBySession(), tr.ephCount)
	fmt.Fprintf(&b, "containers=%v ttls=%v size=%d\n", sortedKeys(tr.containers), sortedKeys(tr.ttls), tr.dataSize)
	keys := make([]string, 0, len(tr.acls))
	for _, u := range tr.acls {
		keys = append(keys, fmt.Sprintf("%v:%d", u.e.acl, u.refs))
	}
	slices.Sort(keys)
	fmt.Fprintf(&b, "acls=%v\n", keys)
	keys = keys[:0]
	for k, u := range tr.owned {
		keys = append(keys, fmt.Sprintf("%v/%x:%d", k.acl.acl, k.owner, u.refs))
	}
	slices.Sort(keys)
	fmt.Fprintf(&b, "owned=%v\n", keys)
	fmt.Fprintf(&b, "quotaRoots=%v base=%v/%v\n", sortedKeys(tr.quotaRoots), tr.quotaRootsBase, len(tr.quotaDataBase))
	return b.String()
}

func sortedKeys(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// checkInvariants verifies the indexes and counters against the nodes.
func checkInvariants(t *testing.T, tr *Tree) {
	t.Helper()
	size := int64(0)
	refs := map[string]int{}
	owned := map[ownedKey]int{}
	eph := 0
	nodes := allNodes(t, tr)
	for p, n := range nodes {
		size += int64(len(p) + n.dataSize())
		refs[n.acl().key]++
		switch x := n.ext; {
		case x.gen != 0:
		case x.kids.len() != 0 || x.pzxid != 0 || x.cversion != 0:
			t.Fatalf("%s: an interned ext holds children, pzxid or cversion", p)
		case x.owner == 0 && x != x.acl.leaf:
			t.Fatalf("%s: an ext without owner that is not its ACL's leaf ext", p)
		case x.owner != 0:
			owned[ownedKey{x.acl, x.owner}]++
		}
		if p != "/" {
			parent, _ := splitParent(p)
			pn := tr.get(parent)
			if pn == nil {
				t.Fatalf("%s: parent missing", p)
			}
			if pn.kids().get(p[len(parent)+1:]) != n {
				t.Fatalf("%s: not in parent's kids", p)
			}
		}
		for k, c := range n.kids().all() {
			if c == nil || tr.lookup(strings.TrimSuffix(p, "/")+"/"+k) != c {
				t.Fatalf("%s: kid %s has no node", p, k)
			}
		}
		switch kindOfOwner(n.owner()) {
		case ownerNormal:
			eph++
			if _, ok := tr.ephemerals[n.owner()][p]; !ok {
				t.Fatalf("%s: missing from ephemerals", p)
			}
		case ownerContainer:
			if _, ok := tr.containers[p]; !ok {
				t.Fatalf("%s: missing from containers", p)
			}
		case ownerTTL:
			if _, ok := tr.ttls[p]; !ok {
				t.Fatalf("%s: missing from ttls", p)
			}
		}
	}
	if size != tr.dataSize {
		t.Fatalf("dataSize %d, want %d", tr.dataSize, size)
	}
	if eph != tr.ephCount {
		t.Fatalf("ephCount %d, want %d", tr.ephCount, eph)
	}
	for k, n := range refs {
		u, ok := tr.acls[k]
		if !ok {
			t.Fatalf("acl %q not interned", k)
		}
		if u.refs != n {
			t.Fatalf("acl %v refs %d, want %d", u.e.acl, u.refs, n)
		}
	}
	for k, u := range tr.acls {
		if refs[k] == 0 {
			t.Fatalf("acl %v interned with no users", u.e.acl)
		}
	}
	if len(owned) != len(tr.owned) {
		t.Fatalf("%d interned exts with an owner, want %d", len(tr.owned), len(owned))
	}
	for k, n := range owned {
		if u := tr.owned[k]; u.refs != n {
			t.Fatalf("ext %v/%x refs %d, want %d", k.acl.acl, k.owner, u.refs, n)
		}
	}
}
