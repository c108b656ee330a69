package tree

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// aclEntry is an interned ACL list shared by every node that uses it. It
// is immutable, so clones of a tree share it; each tree counts its users
// in its own aclUse.
type aclEntry struct {
	key string
	acl []wire.ACL
	// leaf is the interned ext of the nodes with this ACL and no owner
	// that never had a child: most nodes.
	leaf *ext
}

// ownedKey names the interned ext of the childless nodes with one ACL and
// one owner (a session's ephemerals, containers, the TTL nodes of one
// TTL).
type ownedKey struct {
	acl   *aclEntry
	owner int64
}

// ownedUse is a tree's interned ext for one ownedKey and its user count.
type ownedUse struct {
	x    *ext
	refs int // Invariant: number of this tree's nodes whose ext is interned for this key (x or an equal one)
}

// aclUse is a tree's interned entry for one ACL list and its user count.
type aclUse struct {
	e    *aclEntry
	refs int // Invariant: number of this tree's nodes whose ACL has e's key; 0 only between internACL and acquire
}

// aclKey is a unique text for an ACL list.
func aclKey(acl []wire.ACL) string {
	var b strings.Builder
	for _, a := range acl {
		b.WriteString(strconv.Itoa(int(a.Perms)))
		b.WriteByte(0)
		b.WriteString(strconv.Itoa(len(a.ID.Scheme)))
		b.WriteByte(0)
		b.WriteString(a.ID.Scheme)
		b.WriteString(a.ID.ID)
		b.WriteByte(0)
	}
	return b.String()
}

// internACL returns the shared entry for acl, not yet referenced.
func (t *Tree) internACL(acl []wire.ACL) *aclEntry {
	if e := t.lastACL; e != nil && slices.Equal(e.acl, acl) {
		return e // an entry no longer in t.acls is added back by acquire
	}
	k := aclKey(acl)
	e := t.acls[k].e
	if e == nil {
		e = newACLEntry(k, acl)
		t.acls[k] = aclUse{e: e}
	}
	t.lastACL = e
	return e
}

// newACLEntry returns an entry for acl, whose key is k.
func newACLEntry(k string, acl []wire.ACL) *aclEntry {
	e := &aclEntry{key: k, acl: append([]wire.ACL(nil), acl...)}
	e.leaf = &ext{acl: e}
	return e
}

// leafExt returns the interned ext of childless nodes with ACL e and the
// given owner, not yet counted (acquireNode counts it).
func (t *Tree) leafExt(e *aclEntry, owner int64) *ext {
	if owner == 0 {
		return e.leaf
	}
	if u, ok := t.owned[ownedKey{e, owner}]; ok {
		return u.x
	}
	return &ext{acl: e, owner: owner}
}

// acquireNode counts n, just linked in, as a user of its ACL entry and
// interned ext.
func (t *Tree) acquireNode(n *node) {
	t.acquire(n.acl())
	t.acquireExt(n.ext)
}

// releaseNode undoes acquireNode for n, just unlinked.
func (t *Tree) releaseNode(n *node) {
	t.release(n.acl())
	t.releaseExt(n.ext)
}

// acquireExt counts one more user of x if it is an interned ext with an
// owner (one without lives as long as its ACL entry).
func (t *Tree) acquireExt(x *ext) {
	if x.gen != 0 || x.owner == 0 {
		return
	}
	k := ownedKey{x.acl, x.owner}
	u := t.owned[k]
	u.x = x
	u.refs++
	t.owned[k] = u
}

// releaseExt undoes acquireExt.
func (t *Tree) releaseExt(x *ext) {
	if x.gen != 0 || x.owner == 0 {
		return
	}
	k := ownedKey{x.acl, x.owner}
	u := t.owned[k]
	if u.refs--; u.refs <= 0 {
		delete(t.owned, k)
		return
	}
	t.owned[k] = u
}

func (t *Tree) acquire(e *aclEntry) {
	u, ok := t.acls[e.key]
	if !ok {
		u.e = e
	}
	u.refs++
	t.acls[e.key] = u
}

func (t *Tree) release(e *aclEntry) {
	u := t.acls[e.key]
	if u.refs--; u.refs <= 0 {
		delete(t.acls, e.key)
		return
	}
	t.acls[e.key] = u
}

// own returns the node at path (canonical, present; "" and "/" name the
// root) for changing in place: a node this tree shares with a clone is
// copied first and the copy takes its place in its parent's children,
// which the parent, owned in turn, then holds privately (so the first
// change after a Clone copies the path from the root down). Its own dir
// stays shared until ownDir.
func (t *Tree) own(path string) *node {
	if path == "" || path == "/" {
		if t.root.gen != t.gen {
			t.root = t.copyNode(t.root)
		}
		return t.root
	}
	n := t.lookup(path)
	if n.gen == t.gen {
		return n
	}
	parent, _ := splitParent(path)
	d := t.ownDir(t.own(parent))
	c := t.copyNode(n)
	d.kids.put(path[len(parent)+1:], c)
	return c
}

// copyNode returns a copy of n owned by t, sharing n's ext.
func (t *Tree) copyNode(n *node) *node {
	c := *n
	c.gen = t.gen
	return &c
}

// ownDir returns n's ext (n owned by t) ready to be changed: private to n,
// made from its interned one (pzxid = czxid, cversion 0, no children) if
// n never had a child.
func (t *Tree) ownDir(n *node) *ext {
	switch x := n.ext; {
	case x.gen == 0:
		n.ext = &ext{acl: x.acl, owner: x.owner, pzxid: n.czxid, gen: t.gen}
		t.releaseExt(x)
	case x.gen != t.gen:
		d := *x
		d.kids = d.kids.clone()
		d.gen = t.gen
		n.ext = &d
	}
	return n.ext
}

// modify returns the node at path ready for changing its own fields: owned
// by t (see own), with an undo action recorded (see saveNode).
func (t *Tree) modify(path string) *node {
	n := t.own(path)
	t.saveNode(n)
	return n
}

// record appends an undo action when a transaction is open.
func (t *Tree) record(f func()) {
	if t.inTxn {
		t.undo = append(t.undo, f)
	}
}

// insert links n in at path (canonical, parent present) and updates the
// indexes. It does not touch the parent's counters.
func (t *Tree) insert(path string, n *node) {
	parent, _ := splitParent(path)
	t.ownDir(t.own(parent)).kids.put(path[len(parent)+1:], n)
	t.count++
	t.acquireNode(n)
	t.index(path, n)
	t.record(func() { t.remove(path) })
}

// index adds the node n, just linked in at path, to the data size and to
// the ephemeral, container and TTL indexes.
func (t *Tree) index(path string, n *node) {
	t.dataSize += int64(len(path) + n.dataSize())
	switch owner := n.owner(); kindOfOwner(owner) {
	case ownerNormal:
		s := t.ephemerals[owner]
		if s == nil {
			s = make(map[string]struct{})
			t.ephemerals[owner] = s
		}
		s[path] = struct{}{}
		t.ephCount++
	case ownerContainer:
		t.containers[path] = struct{}{}
	case ownerTTL:
		t.ttls[path] = struct{}{}
	}
}

// remove unlinks the childless node at path and updates the indexes. It
// does not touch the parent's counters.
func (t *Tree) remove(path string) {
	n := t.lookup(path)
	parent, _ := splitParent(path)
	t.ownDir(t.own(parent)).kids.del(path[len(parent)+1:])
	t.count--
	t.releaseNode(n)
	t.dataSize -= int64(len(path) + n.dataSize())
	switch owner := n.owner(); kindOfOwner(owner) {
	case ownerNormal:
		s := t.ephemerals[owner]
		delete(s, path)
		if len(s) == 0 {
			delete(t.ephemerals, owner)
		}
		t.ephCount--
	case ownerContainer:
		delete(t.containers, path)
	case ownerTTL:
		delete(t.ttls, path)
	}
	t.record(func() { t.insert(path, n) })
}

// saveNode records an undo action restoring n's own fields, pzxid and
// cversion included (not its children), to their current values. Call
// it, on a node owned by t, before changing them.
func (t *Tree) saveNode(n *node) {
	if !t.inTxn {
		return
	}
	old, acl, pzxid, cversion := *n, n.acl(), n.pzxid(), n.cversion()
	t.undo = append(t.undo, func() {
		t.dataSize += int64(old.dataSize() - n.dataSize())
		x := n.ext
		*n = old
		n.ext = x // the ext now (a child may have given n one of its own)
		t.setNodeACL(n, acl)
		// An ext of n's own that differs from the saved values was
		// changed, so it is owned; one that does not may still be shared,
		// and is left alone.
		if d := n.dir(); d != nil && (d.pzxid != pzxid || d.cversion != cversion) {
			d.pzxid, d.cversion = pzxid, cversion
		}
	})
}

// setNodeACL replaces n's ACL entry (n owned by t), keeping reference
// counts: a childless node takes the interned ext of its new ACL, one
// that has had children changes its own.
func (t *Tree) setNodeACL(n *node, e *aclEntry) {
	if n.acl() == e {
		return
	}
	t.acquire(e)
	t.release(n.acl())
	if x := n.ext; x.gen == 0 {
		n.ext = t.leafExt(e, x.owner)
		t.acquireExt(n.ext)
		t.releaseExt(x)
		return
	}
	t.ownDir(n).acl = e
}

// setNodeData replaces n's data, keeping the data size.
func (t *Tree) setNodeData(n *node, data []byte) {
	t.dataSize += int64(len(data) - n.dataSize())
	n.setData(data)
}

// Begin opens a transaction: until Commit or Rollback every mutation is
// recorded so that Rollback can undo it. Transactions do not nest.
func (t *Tree) Begin() {
	t.inTxn = true
	t.undo = t.undo[:0]
	t.quotaRootsBase, t.quotaDataBase = nil, nil
}

// Commit keeps every change made since Begin and closes the transaction.
func (t *Tree) Commit() {
	t.inTxn = false
	clear(t.undo)
	t.undo = t.undo[:0]
	t.quotaRootsBase, t.quotaDataBase = nil, nil
}

// Rollback undoes every change made since Begin (data, stats, children,
// parent counters, ACLs, indexes, quota roots and quota stats) and closes
// the transaction.
func (t *Tree) Rollback() {
	t.inTxn = false
	for i := len(t.undo) - 1; i >= 0; i-- {
		t.undo[i]()
	}
	clear(t.undo)
	t.undo = t.undo[:0]
	t.quotaRootsBase, t.quotaDataBase = nil, nil
}
