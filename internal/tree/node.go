package tree

import (
	"sync/atomic"
	"unsafe"

	"github.com/wardenzk/warden/wire"
)

// node is one znode. It stores ZooKeeper's StatPersisted; the wire Stat is
// derived by stat(). A million znodes hold a million of these, so it is
// packed into 64 bytes (a size class of Go's allocator): the data as a
// pointer and a 32-bit length rather than a slice header, the ownership
// mark as a 32-bit generation, and the ACL and owner, which most nodes
// share with many others, in an ext that leaves share (see ext).
type node struct {
	// dataPtr and dataLen hold the data: dataLen bytes from dataPtr, nil
	// data as dataLen -1 (nil and empty are distinct: nil reads back with
	// length -1). Read and set them through data and setData only.
	dataPtr *byte
	dataLen int32

	// gen is the generation of the one tree that may change this node in
	// place. Invariant: a node whose gen is not its tree's is shared with
	// a clone and never changes again; the tree copies it first (Tree.own).
	gen uint32

	ext *ext // never nil

	czxid, mzxid int64
	ctime, mtime int64
	version      int32
	aversion     int32
}

// ext is what a node holds besides its own fields: its ACL and stored
// ephemeralOwner and, once it has had a child, its children, pzxid and
// stored cversion.
//
// A node that never had a child shares an interned ext (gen 0) with every
// such node of its ACL and owner: it has no children, pzxid = czxid and
// cversion 0, and the ext never changes (a new ACL takes another one; see
// Tree.leafExt). A node that has had a child has an ext of its own (gen
// not 0), copied on write like the node (Tree.ownDir).
type ext struct {
	acl   *aclEntry // interned, never nil
	owner int64     // stored ephemeralOwner: 0, a session, ContainerOwner or a TTLOwner

	kids     children
	pzxid    int64
	cversion int32 // Invariant: counts child creations only (ZooKeeper's stored cversion).

	// gen is 0 for an interned ext; otherwise the generation of the tree
	// that may change this ext in place: one shared with a clone is copied
	// first (Tree.ownDir).
	gen uint32
}

// acl returns the node's interned ACL entry.
func (n *node) acl() *aclEntry { return n.ext.acl }

// owner returns the node's stored ephemeralOwner.
func (n *node) owner() int64 { return n.ext.owner }

// dir returns the node's own ext, nil if it never had a child.
func (n *node) dir() *ext {
	if n.ext.gen == 0 {
		return nil
	}
	return n.ext
}

// emptyData is what data returns for empty, non-nil data.
var emptyData = []byte{}

// data returns the node's data, shared and read-only (nil if the node was
// created with null data).
func (n *node) data() []byte {
	switch {
	case n.dataLen < 0:
		return nil
	case n.dataLen == 0:
		return emptyData
	}
	return unsafe.Slice(n.dataPtr, n.dataLen)
}

// setData makes b the node's data (kept, not copied). Data is at most
// jute.maxbuffer bytes, far below 2 GiB.
func (n *node) setData(b []byte) {
	switch {
	case b == nil:
		n.dataPtr, n.dataLen = nil, -1
	case len(b) == 0:
		n.dataPtr, n.dataLen = nil, 0
	default:
		n.dataPtr, n.dataLen = unsafe.SliceData(b), int32(len(b))
	}
}

// dataSize returns the length of the node's data (0 for nil data).
func (n *node) dataSize() int { return int(max(n.dataLen, 0)) }

// kids returns the node's children; nil (a valid, empty set for reading)
// when it has none.
func (n *node) kids() *children {
	d := n.dir()
	if d == nil {
		return nil
	}
	return &d.kids
}

// pzxid returns the zxid of the last change to the node's children.
func (n *node) pzxid() int64 {
	d := n.dir()
	if d == nil {
		return n.czxid
	}
	return d.pzxid
}

// cversion returns the stored cversion (child creations).
func (n *node) cversion() int32 {
	d := n.dir()
	if d == nil {
		return 0
	}
	return d.cversion
}

func (n *node) stat() wire.Stat {
	nk := int32(n.kids().len())
	owner := n.owner()
	if kindOfOwner(owner) != ownerNormal {
		owner = 0
	}
	return wire.Stat{
		Czxid:          n.czxid,
		Mzxid:          n.mzxid,
		Ctime:          n.ctime,
		Mtime:          n.mtime,
		Version:        n.version,
		Cversion:       n.cversion()*2 - nk,
		Aversion:       n.aversion,
		EphemeralOwner: owner,
		DataLength:     int32(n.dataSize()),
		NumChildren:    nk,
		Pzxid:          n.pzxid(),
	}
}

// lastGen is the last generation handed out; each tree, and each tree
// after a Clone, takes a new one.
var lastGen atomic.Uint32

// newGen returns a generation no tree has had, never 0 (an interned ext's).
// It would repeat only after 2^32 trees and clones (one clone per
// snapshot), and then only matter for a node left untouched through all
// of them.
func newGen() uint32 {
	for {
		if g := lastGen.Add(1); g != 0 {
			return g
		}
	}
}
