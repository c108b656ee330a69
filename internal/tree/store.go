package tree

import (
	"strconv"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// aclEntry is an interned ACL list shared by every node that uses it.
type aclEntry struct {
	key  string
	acl  []wire.ACL
	refs int // Invariant: number of nodes pointing here; 0 means dropped from Tree.acls
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
	k := aclKey(acl)
	if e := t.acls[k]; e != nil {
		return e
	}
	e := &aclEntry{key: k, acl: append([]wire.ACL(nil), acl...)}
	t.acls[k] = e
	return e
}

func (t *Tree) acquire(e *aclEntry) {
	e.refs++
	if _, ok := t.acls[e.key]; !ok {
		t.acls[e.key] = e
	}
}

func (t *Tree) release(e *aclEntry) {
	e.refs--
	if e.refs == 0 && t.acls[e.key] == e {
		delete(t.acls, e.key)
	}
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
	p := t.get(parent)
	if p.kids == nil {
		p.kids = make(map[string]struct{})
	}
	p.kids[path[len(parent)+1:]] = struct{}{}
	t.nodes[path] = n
	t.acquire(n.acl)
	t.dataSize += int64(len(path) + len(n.data))
	switch kindOfOwner(n.owner) {
	case ownerNormal:
		s := t.ephemerals[n.owner]
		if s == nil {
			s = make(map[string]struct{})
			t.ephemerals[n.owner] = s
		}
		s[path] = struct{}{}
		t.ephCount++
	case ownerContainer:
		t.containers[path] = struct{}{}
	case ownerTTL:
		t.ttls[path] = struct{}{}
	}
	t.record(func() { t.remove(path) })
}

// remove unlinks the childless node at path and updates the indexes. It
// does not touch the parent's counters.
func (t *Tree) remove(path string) {
	n := t.nodes[path]
	parent, _ := splitParent(path)
	p := t.get(parent)
	delete(p.kids, path[len(parent)+1:])
	if len(p.kids) == 0 {
		p.kids = nil
	}
	delete(t.nodes, path)
	t.release(n.acl)
	t.dataSize -= int64(len(path) + len(n.data))
	switch kindOfOwner(n.owner) {
	case ownerNormal:
		s := t.ephemerals[n.owner]
		delete(s, path)
		if len(s) == 0 {
			delete(t.ephemerals, n.owner)
		}
		t.ephCount--
	case ownerContainer:
		delete(t.containers, path)
	case ownerTTL:
		delete(t.ttls, path)
	}
	t.record(func() { t.insert(path, n) })
}

// saveNode records an undo action restoring n's own fields (not its
// children) to their current values. Call it before changing them.
func (t *Tree) saveNode(n *node) {
	if !t.inTxn {
		return
	}
	old := *n
	t.undo = append(t.undo, func() {
		t.dataSize += int64(len(old.data) - len(n.data))
		if n.acl != old.acl {
			t.acquire(old.acl)
			t.release(n.acl)
		}
		kids := n.kids
		*n = old
		n.kids = kids
	})
}

// setNodeACL replaces n's ACL entry, keeping reference counts.
func (t *Tree) setNodeACL(n *node, e *aclEntry) {
	if n.acl == e {
		return
	}
	t.acquire(e)
	t.release(n.acl)
	n.acl = e
}

// setNodeData replaces n's data, keeping the data size.
func (t *Tree) setNodeData(n *node, data []byte) {
	t.dataSize += int64(len(data) - len(n.data))
	n.data = data
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
