package zkimport

import (
	"slices"
	"strings"

	"github.com/wardenzk/warden/internal/tree"

	"github.com/wardenzk/warden/wire"
)

// StatPersisted is a znode's stored stat, as ZooKeeper keeps it: Cversion
// counts child creations (not deletions) and EphemeralOwner is the raw
// stored value (a session, tree.ContainerOwner or a tree.TTLOwner).
type StatPersisted struct {
	Czxid, Mzxid, Ctime, Mtime int64
	Version, Cversion          int32
	Aversion                   int32
	EphemeralOwner             int64
	Pzxid                      int64
}

// Node is one znode of a loaded database.
type Node struct {
	// Data is nil for a node created with null data, and distinct from empty.
	Data []byte
	ACL  []wire.ACL
	Stat StatPersisted

	// Invariant: kids holds the last path element of every node whose
	// parent is this node.
	kids map[string]struct{}
}

// DB is a ZooKeeper database as ZooKeeper's start-up would leave it: the
// snapshot with the logs replayed over it.
type DB struct {
	// Nodes maps every path ("/" for the root) to its node.
	Nodes map[string]*Node
	// Sessions maps every live session id to its timeout (ms).
	Sessions map[int64]int32
	// SnapshotZxid is the zxid in the name of the snapshot that was loaded
	// (0 when the directory held only logs).
	SnapshotZxid int64
	// LastZxid is the zxid of the database: the highest of SnapshotZxid and
	// every replayed transaction's.
	LastZxid int64
	// Snapshot is the path of the snapshot file loaded, or "".
	Snapshot string
	// Logs are the log files that were read, oldest first.
	Logs []string
	// Replayed counts the log transactions applied after the snapshot.
	Replayed int
}

// newDB returns the database ZooKeeper starts from when there is no
// snapshot: the root, /zookeeper, /zookeeper/quota, and /zookeeper/config
// (world:anyone READ), all with zero stats.
func newDB() *DB {
	db := &DB{Nodes: map[string]*Node{}, Sessions: map[int64]int32{}}
	for _, p := range []string{"/", "/zookeeper", "/zookeeper/quota", "/zookeeper/config"} {
		n := &Node{Data: []byte{}, ACL: wire.OpenACLUnsafe}
		if p == "/zookeeper/config" {
			n.ACL = wire.ReadACLUnsafe
		}
		db.Nodes[p] = n
		if p != "/" {
			parent, name := split(p)
			db.Nodes[parent].addKid(name)
		}
	}
	return db
}

func (n *Node) addKid(name string) {
	if n.kids == nil {
		n.kids = map[string]struct{}{}
	}
	n.kids[name] = struct{}{}
}

// split returns the parent path and last element of a path other than "/".
// The root's children have parent "/".
func split(path string) (parent, name string) {
	i := strings.LastIndexByte(path, '/')
	parent = path[:i]
	if parent == "" {
		parent = "/"
	}
	return parent, path[i+1:]
}

// ownerIsSession reports whether a stored ephemeralOwner names a session
// (EphemeralType NORMAL): not 0, not the container marker, not a TTL.
func ownerIsSession(owner int64) bool {
	const ttlMask = -1 << 56 // 0xFF00000000000000: EphemeralType's extended marker
	return owner != 0 && owner != tree.ContainerOwner && owner&ttlMask != ttlMask
}

// Paths returns every path, sorted (so parents come before children).
func (db *DB) Paths() []string {
	paths := make([]string, 0, len(db.Nodes))
	for p := range db.Nodes {
		paths = append(paths, p)
	}
	slices.Sort(paths)
	return paths
}

// Stat returns the stat a client would see for the node at path: the
// stored cversion turned into ZooKeeper's client cversion, and the
// ephemeralOwner of containers and TTL nodes shown as 0.
func (db *DB) Stat(path string) (wire.Stat, bool) {
	n, ok := db.Nodes[path]
	if !ok {
		return wire.Stat{}, false
	}
	nk := int32(len(n.kids))
	owner := n.Stat.EphemeralOwner
	if !ownerIsSession(owner) {
		owner = 0
	}
	return wire.Stat{
		Czxid: n.Stat.Czxid, Mzxid: n.Stat.Mzxid, Ctime: n.Stat.Ctime, Mtime: n.Stat.Mtime,
		Version: n.Stat.Version, Cversion: n.Stat.Cversion*2 - nk, Aversion: n.Stat.Aversion,
		EphemeralOwner: owner, DataLength: int32(len(n.Data)), NumChildren: nk, Pzxid: n.Stat.Pzxid,
	}, true
}
