package tree

import (
	"errors"
	"fmt"
	"maps"
	"slices"

	"github.com/wardenzk/warden/internal/quota"
	"github.com/wardenzk/warden/wire"
)

// ErrBadRecords is wrapped by every error FromRecords returns for records
// that do not form a valid tree.
var ErrBadRecords = errors.New("tree: invalid node records")

// NodeRecord is one znode as a snapshot stores it: its path, data, ACL and
// ZooKeeper's StatPersisted (the stored cversion, which counts child
// creations, and the stored ephemeralOwner: a session, ContainerOwner or a
// TTLOwner). The Data and ACL slices are shared and read-only.
type NodeRecord struct {
	Path                       string
	Data                       []byte // nil and empty are distinct
	ACL                        []wire.ACL
	Czxid, Mzxid, Ctime, Mtime int64
	Version                    int32
	StoredCversion             int32
	Aversion                   int32
	EphemeralOwner             int64
	Pzxid                      int64
}

func (n *node) record(path string) NodeRecord {
	return NodeRecord{
		Path: path, Data: n.data(), ACL: n.acl().acl,
		Czxid: n.czxid, Mzxid: n.mzxid, Ctime: n.ctime, Mtime: n.mtime,
		Version: n.version, StoredCversion: n.cversion(), Aversion: n.aversion,
		EphemeralOwner: n.owner(), Pzxid: n.pzxid(),
	}
}

// Records calls fn with every node, the reserved ones included, depth
// first from the root with siblings in sorted name order: a parent always
// comes before its children and the order depends only on the tree's
// content. It stops at the first error fn returns and returns it. The
// tree must not change during the walk (walk a Clone to serialise without
// holding the caller's lock). Memory beyond fn's is one sorted name list
// per level of the current path.
func (t *Tree) Records(fn func(NodeRecord) error) error {
	type frame struct {
		path  string
		n     *node
		names []string // children still to visit, in order
	}
	if err := fn(t.root.record("/")); err != nil {
		return err
	}
	stack := []frame{{path: "", n: t.root, names: t.root.kids().names()}}
	for len(stack) > 0 {
		top := &stack[len(stack)-1]
		if len(top.names) == 0 {
			stack = stack[:len(stack)-1]
			continue
		}
		path := top.path + "/" + top.names[0]
		n := top.n.kids().get(top.names[0])
		top.names = top.names[1:]
		if err := fn(n.record(path)); err != nil {
			return err
		}
		if n.kids().len() > 0 {
			stack = append(stack, frame{path: path, n: n, names: n.kids().names()})
		}
	}
	return nil
}

// FromRecords builds a tree from node records, as Records produces them:
// recs calls yield once per node, the root first and every parent before
// its children, and returns yield's error if it fails. The tree is the
// one the records were taken from: children sets, the ephemeral,
// container and TTL indexes, the data size and the quota roots (every
// /zookeeper/quota<p>/zookeeper_limits node registers <p>) are rebuilt;
// quota stats nodes keep the data they were recorded with, exactly as the
// live tree held it (ZooKeeper recounts them on load; Warden does not, so
// that a restored replica never diverges). Records' Data is kept (not
// copied): the caller must not modify it afterwards.
//
// Invalid records give an error wrapping ErrBadRecords that names the
// path: a first record that is not "/", an invalid or repeated path, a
// missing parent, a child of a session ephemeral, an owned root, or a
// missing reserved node (/zookeeper, /zookeeper/quota, /zookeeper/config).
// An error from recs itself is returned as is.
func FromRecords(opts Options, recs func(yield func(NodeRecord) error) error) (*Tree, error) {
	t := empty(opts)
	l := loader{t: t}
	if err := recs(l.link); err != nil {
		return nil, err
	}
	l.flush()
	for _, p := range []string{"/", procPath, quotaPath, configPath} {
		if t.lookup(p) == nil {
			return nil, fmt.Errorf("%w: reserved node %s is missing", ErrBadRecords, p)
		}
	}
	return t, nil
}

// loader links records in for FromRecords. Records come parent first
// and siblings together, and most share one ACL: the loader remembers the
// last parent and the last ACL, so that a record usually costs one map
// insert (its parent's children) and no lookup.
type loader struct {
	t *Tree

	parentPath string // of parent, as splitParent gives it
	parent     *node  // the last record's parent; nil before the first child

	acl   []wire.ACL // the last record's ACL
	entry *aclEntry  // acl interned; nil before the first record
	refs  int        // nodes using entry not yet counted in t.acls
}

// internACL returns the entry for acl, counting one more user.
func (l *loader) internACL(acl []wire.ACL) *aclEntry {
	if l.entry == nil || !slices.Equal(acl, l.acl) {
		l.flush()
		l.acl, l.entry = acl, l.t.internACL(acl)
	}
	l.refs++
	return l.entry
}

// flush adds the users counted since the ACL last changed to t.acls.
func (l *loader) flush() {
	if l.refs == 0 {
		return
	}
	u, ok := l.t.acls[l.entry.key]
	if !ok {
		u.e = l.entry
	}
	u.refs += l.refs
	l.t.acls[l.entry.key] = u
	l.refs = 0
}

// link links in one record.
func (l *loader) link(r NodeRecord) error {
	t := l.t
	e := l.internACL(r.ACL)
	n := &node{
		czxid: r.Czxid, mzxid: r.Mzxid,
		ctime: r.Ctime, mtime: r.Mtime,
		version: r.Version, aversion: r.Aversion,
		gen: t.gen,
	}
	n.setData(r.Data)
	if r.Pzxid != r.Czxid || r.StoredCversion != 0 {
		n.ext = &ext{acl: e, owner: r.EphemeralOwner, pzxid: r.Pzxid, cversion: r.StoredCversion, gen: t.gen}
	} else {
		n.ext = t.leafExt(e, r.EphemeralOwner)
		t.acquireExt(n.ext)
	}
	if t.root == nil {
		if r.Path != "/" {
			return fmt.Errorf("%w: first record is %q, want the root \"/\"", ErrBadRecords, r.Path)
		}
		if r.EphemeralOwner != 0 {
			return fmt.Errorf("%w: root has ephemeralOwner %#x, want 0", ErrBadRecords, r.EphemeralOwner)
		}
		t.root, t.count = n, 1
		t.dataSize = int64(1 + len(r.Data))
		return nil
	}
	if r.Path == "/" {
		return fmt.Errorf("%w: %q appears twice", ErrBadRecords, r.Path)
	}
	if err := ValidatePath(r.Path); err != nil {
		return fmt.Errorf("%w: %q is not a valid path", ErrBadRecords, r.Path)
	}
	parentPath, _ := splitParent(r.Path)
	if l.parent == nil || parentPath != l.parentPath {
		parent := t.get(parentPath)
		if parent == nil {
			return fmt.Errorf("%w: %q comes before its parent %q", ErrBadRecords, r.Path, eventPath(parentPath))
		}
		if kindOfOwner(parent.owner()) == ownerNormal {
			return fmt.Errorf("%w: %q is a child of the ephemeral %q", ErrBadRecords, r.Path, eventPath(parentPath))
		}
		l.parent, l.parentPath = parent, parentPath
	}
	// A name already among its parent's children is a repeated path.
	if !t.ownDir(l.parent).kids.put(r.Path[len(parentPath)+1:], n) {
		return fmt.Errorf("%w: %q appears twice", ErrBadRecords, r.Path)
	}
	t.count++
	t.index(r.Path, n)
	if prefix, ok := quotaPrefix(parentPath); ok && r.Path[len(parentPath)+1:] == quota.LimitsNode {
		if root := normalizeRoot(prefix); root != "" {
			t.quotaRoots[root] = struct{}{}
		}
	}
	return nil
}

// Clone returns a copy of the tree that later changes to either tree do
// not affect. It copies the indexes but no node, data or
// ACL: both trees share every node until one of them changes it, which
// copies that node first (copy on write), and the nodes on its path from
// the root, whose children sets then point to the copy. Its cost is a copy
// of the ephemeral, container and TTL indexes; the first change to each
// shared node afterwards costs a small allocation per node on its path
// and a copy of the children set of each parent on it.
//
// Clone must not be called inside a transaction (between Begin and Commit
// or Rollback); it panics if it is. Like every method it needs the
// caller's exclusive lock; the clone may then be read (Records) by another
// goroutine while the original keeps changing.
func (t *Tree) Clone() *Tree {
	if t.inTxn {
		panic("tree: Clone inside a transaction")
	}
	c := &Tree{
		opts:       t.opts,
		root:       t.root,
		count:      t.count,
		ephemerals: make(map[int64]map[string]struct{}, len(t.ephemerals)),
		containers: maps.Clone(t.containers),
		ttls:       maps.Clone(t.ttls),
		dataSize:   t.dataSize,
		ephCount:   t.ephCount,
		acls:       maps.Clone(t.acls),
		owned:      maps.Clone(t.owned),
		quotaRoots: maps.Clone(t.quotaRoots),
		gen:        newGen(),
	}
	for s, paths := range t.ephemerals {
		c.ephemerals[s] = maps.Clone(paths)
	}
	t.gen = newGen()
	return c
}
