package tree

import (
	"sync/atomic"
	"unsafe"

	"github.com/wardenzk/warden/wire"
)

// node is one znode. It stores ZooKeeper's StatPersisted; the wire Stat is
// derived by stat(). A million znodes hold a million of these, so it is
// packed into 80 bytes (a size class of Go's allocator): the data as a
// pointer and a 32-bit length rather than a slice header, the ownership
// mark as a 32-bit generation, and what only a parent needs (its
// children, pzxid and stored cversion) in a dir of its own.
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

	acl *aclEntry // interned, never nil
	dir *dir      // nil until the node first has a child (or a loaded record needs one)

	czxid, mzxid int64
	ctime, mtime int64
	owner        int64 // stored ephemeralOwner: 0, a session, ContainerOwner or a TTLOwner
	version      int32
	aversion     int32
}

// dir is what a node that has, or had, children holds besides its own
// fields: its children, pzxid and stored cversion. A node without a dir has
// no children, pzxid = czxid and cversion 0.
type dir struct {
	kids     children
	pzxid    int64
	cversion int32 // Invariant: counts child creations only (ZooKeeper's stored cversion).

	// gen is the generation of the tree that may change this dir in place;
	// a dir shared with a clone is copied first (Tree.ownDir).
	gen uint32
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
	if n.dir == nil {
		return nil
	}
	return &n.dir.kids
}

// pzxid returns the zxid of the last change to the node's children.
func (n *node) pzxid() int64 {
	if n.dir == nil {
		return n.czxid
	}
	return n.dir.pzxid
}

// cversion returns the stored cversion (child creations).
func (n *node) cversion() int32 {
	if n.dir == nil {
		return 0
	}
	return n.dir.cversion
}

func (n *node) stat() wire.Stat {
	nk := int32(n.kids().len())
	owner := n.owner
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

// newGen returns a generation no tree has had. It would repeat only after
// 2^32 trees and clones (one clone per snapshot), and then only matter for
// a node left untouched through all of them.
func newGen() uint32 { return lastGen.Add(1) }
