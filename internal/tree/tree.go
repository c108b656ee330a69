package tree

import (
	"math"
	"slices"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// Paths of the reserved nodes every tree holds.
const (
	procPath   = "/zookeeper"
	quotaPath  = "/zookeeper/quota"
	configPath = ConfigPath
)

// ConfigPath is the node holding the ensemble's configuration.
const ConfigPath = "/zookeeper/config"

// ContainerOwner is the ephemeralOwner a container node stores
// (EphemeralType.CONTAINER_EPHEMERAL_OWNER). Clients see 0.
const ContainerOwner int64 = math.MinInt64

// ttlTag is the high byte marking a TTL node's ephemeralOwner.
const ttlTag = uint64(0xFF) << 56

// TTLOwner returns the ephemeralOwner a TTL node with the given ttl (ms,
// 1..2^40-1) stores: 0xFF00000000000000 | ttl. Clients see 0.
func TTLOwner(ttl int64) int64 { return int64(ttlTag | uint64(ttl)) }

// Options configures a Tree.
type Options struct {
	// SkipACL disables every permission check (zookeeper.skipACL=yes).
	// Default false.
	SkipACL bool
	// EnforceQuota makes creates and setData that would take a quota root
	// past a hard limit (countHardLimit, byteHardLimit) fail with
	// wire.ErrQuotaExceeded (zookeeper.enforceQuota). Default false: quota
	// usage is tracked but never enforced.
	EnforceQuota bool
}

// Meta is what a write transaction carries besides its request: the zxid
// it was assigned, its time (ms since the epoch, the proposer's wall clock)
// and the session that issued it.
type Meta struct {
	Zxid    int64
	Time    int64
	Session int64
}

// Change is a watch trigger produced by a write: NodeCreated, NodeDeleted
// or NodeDataChanged on the changed node (ACL = that node's ACL, as it was
// for a delete), or NodeChildrenChanged on its parent (ACL = the parent's
// ACL; the root's path is "/"). The ACL slice is shared and read-only.
type Change struct {
	Type wire.EventType
	Path string
	ACL  []wire.ACL
}

// ownerKind classifies a stored ephemeralOwner (EphemeralType.get).
type ownerKind uint8

const (
	ownerVoid ownerKind = iota
	ownerNormal
	ownerContainer
	ownerTTL
)

func kindOfOwner(owner int64) ownerKind {
	switch {
	case owner == 0:
		return ownerVoid
	case owner == ContainerOwner:
		return ownerContainer
	case uint64(owner)&ttlTag == ttlTag:
		return ownerTTL
	}
	return ownerNormal
}

// ttlOf returns the ttl of a TTL node's owner (the low 40 bits).
func ttlOf(owner int64) int64 { return owner & (1<<40 - 1) }

// Tree is the znode tree. It is not safe for concurrent use: the caller
// serialises every call (reads included, unless no write can run).
//
// Slices the Tree returns (data, ACLs, Change.ACL) are shared with the tree
// and must not be modified; slices it is given (CreateOp.Data, SetData's
// data) are kept, so the caller must not modify them afterwards either.
type Tree struct {
	opts Options

	// root is the root znode; every other node is reached through its
	// parents' kids, one path segment at a time. There is no index by
	// full path: each name is stored once, and a Clone shares the whole
	// structure (copy on write) instead of copying an index.
	root  *node
	count int // nodes, the root included

	// Indexes kept in step with the nodes.
	ephemerals map[int64]map[string]struct{} // session → paths of its NORMAL ephemerals
	containers map[string]struct{}
	ttls       map[string]struct{}
	dataSize   int64 // Σ len(path)+len(data)
	ephCount   int

	acls map[string]aclUse // interned ACL lists by aclKey, with this tree's user counts
	// owned holds the interned exts of childless nodes with an owner
	// (ephemeral, container, TTL), with this tree's user counts.
	owned map[ownedKey]ownedUse

	// quotaRoots holds the quota roots (ZooKeeper's PathTrie), each the
	// normalised <p> of a /zookeeper/quota<p>/zookeeper_limits node
	// created and not yet deleted.
	quotaRoots map[string]struct{}

	// Pre-transaction quota state, for checkQuota; nil outside one.
	// Invariant: an entry exists only for a root, or a node under
	// /zookeeper/quota, changed since Begin, and holds its value at Begin.
	quotaRootsBase map[string]bool
	quotaDataBase  map[string]baseData

	// quotaExceeded holds the reports of checkQuota not yet taken by
	// TakeQuotaExceeded. Invariant: at most maxQuotaExceeded entries.
	quotaExceeded []QuotaExceeded

	inTxn bool
	undo  []func() // inverse actions since Begin, applied in reverse by Rollback

	// gen marks the nodes and exts this tree may change in place (see
	// node.gen and ext.gen); Clone gives both trees new generations, so
	// every node and dir they then share is copied on write.
	gen uint32

	// lastACL is the ACL entry interned last (nil before the first), so
	// that a run of nodes with one ACL interns it without building its key.
	lastACL *aclEntry
}

// empty returns a tree with no nodes at all and its indexes ready; New
// and FromRecords fill it.
func empty(opts Options) *Tree {
	return &Tree{
		opts:       opts,
		ephemerals: make(map[int64]map[string]struct{}),
		containers: make(map[string]struct{}),
		ttls:       make(map[string]struct{}),
		acls:       make(map[string]aclUse),
		owned:      make(map[ownedKey]ownedUse),
		quotaRoots: make(map[string]struct{}),
		gen:        newGen(),
	}
}

// New returns a tree holding the nodes of a fresh ZooKeeper server: "/",
// "/zookeeper" and "/zookeeper/quota" (all-zero stat, empty data,
// world:anyone ALL) and "/zookeeper/config" (empty data, world:anyone READ,
// aversion -1).
func New(opts Options) *Tree {
	t := empty(opts)
	reserved := func(acl []wire.ACL, aversion int32) *node {
		n := &node{ext: t.leafExt(t.internACL(acl), 0), aversion: aversion, gen: t.gen}
		n.setData([]byte{})
		return n
	}
	root := reserved(wire.OpenACLUnsafe, 0)
	t.acquireNode(root)
	t.root, t.count = root, 1
	t.dataSize = 1
	t.insert(procPath, reserved(wire.OpenACLUnsafe, 0))
	t.insert(quotaPath, reserved(wire.OpenACLUnsafe, 0))
	t.insert(configPath, reserved(wire.ReadACLUnsafe, -1))
	return t
}

// get returns the node at path as ZooKeeper's DataTree.getNode does: ""
// also names the root.
func (t *Tree) get(path string) *node {
	if path == "" {
		return t.root
	}
	return t.lookup(path)
}

// lookup returns the node at path, or nil: "/" is the root, and a path
// that does not start with '/' (the empty one included) names no node.
// It walks from the root, one map lookup per segment.
func (t *Tree) lookup(path string) *node {
	if path == "/" {
		return t.root
	}
	if path == "" || path[0] != '/' {
		return nil
	}
	n, rest := t.root, path[1:]
	for {
		i := strings.IndexByte(rest, '/')
		if i < 0 {
			return n.kids().get(rest)
		}
		if n = n.kids().get(rest[:i]); n == nil {
			return nil
		}
		rest = rest[i+1:]
	}
}

func (t *Tree) allowed(n *node, perm wire.Perm, c Caller) bool {
	return MatchACL(n.acl().acl, perm, c, t.opts.SkipACL)
}

// Exists returns the stat of path: wire.ErrBadArguments if path contains
// '\0', wire.ErrNoNode if it is missing, wire.ErrNoAuth if the caller lacks
// READ on it.
func (t *Tree) Exists(path string, c Caller) (wire.Stat, error) {
	if strings.IndexByte(path, 0) >= 0 {
		return wire.Stat{}, wire.ErrBadArguments
	}
	n, err := t.readable(path, wire.PermRead, c)
	if err != nil {
		return wire.Stat{}, err
	}
	return n.stat(), nil
}

// readable looks path up and checks perm: ErrNoNode, then ErrNoAuth.
func (t *Tree) readable(path string, perm wire.Perm, c Caller) (*node, error) {
	n := t.get(path)
	if n == nil {
		return nil, wire.ErrNoNode
	}
	if !t.allowed(n, perm, c) {
		return nil, wire.ErrNoAuth
	}
	return n, nil
}

// GetData returns the data (nil if the node was created with null data)
// and stat of path: wire.ErrNoNode, then wire.ErrNoAuth without READ.
func (t *Tree) GetData(path string, c Caller) ([]byte, wire.Stat, error) {
	n, err := t.readable(path, wire.PermRead, c)
	if err != nil {
		return nil, wire.Stat{}, err
	}
	return n.data(), n.stat(), nil
}

// GetChildren returns the sorted child names and the stat of path:
// wire.ErrNoNode, then wire.ErrNoAuth without READ. The slice is new.
func (t *Tree) GetChildren(path string, c Caller) ([]string, wire.Stat, error) {
	n, err := t.readable(path, wire.PermRead, c)
	if err != nil {
		return nil, wire.Stat{}, err
	}
	names := n.kids().names()
	if names == nil {
		names = []string{}
	}
	return names, n.stat(), nil
}

// GetACL returns the ACL and stat of path: wire.ErrNoNode, then
// wire.ErrNoAuth unless the caller has READ or ADMIN. Without ADMIN every
// digest id comes back masked as "user:x".
func (t *Tree) GetACL(path string, c Caller) ([]wire.ACL, wire.Stat, error) {
	n, err := t.readable(path, wire.PermRead|wire.PermAdmin, c)
	if err != nil {
		return nil, wire.Stat{}, err
	}
	acl := n.acl().acl
	if !t.allowed(n, wire.PermAdmin, c) {
		acl = maskACL(acl)
	}
	return acl, n.stat(), nil
}

// AllChildrenNumber returns the number of descendants of path (the node
// itself excluded; for "/" every node but the root, so 3 on a fresh tree):
// wire.ErrNoNode, then wire.ErrNoAuth without READ. It walks the subtree.
func (t *Tree) AllChildrenNumber(path string, c Caller) (int32, error) {
	n, err := t.readable(path, wire.PermRead, c)
	if err != nil {
		return 0, err
	}
	if path == "/" {
		return int32(t.count - 1), nil
	}
	if path == "" { // ZooKeeper counts keys starting with "/": the root too
		return int32(t.count), nil
	}
	return int32(countDescendants(n)), nil
}

func countDescendants(n *node) int {
	total := 0
	for _, c := range n.kids().all() {
		total += 1 + countDescendants(c)
	}
	return total
}

// Ephemerals returns the sorted paths of session's ephemeral nodes that
// start with prefix (a raw string prefix, not a path prefix); a blank
// prefix or "/" returns all of them (getEphemerals).
func (t *Tree) Ephemerals(session int64, prefix string) []string {
	all := strings.TrimSpace(prefix) == "" || strings.TrimSpace(prefix) == "/"
	var out []string
	for p := range t.ephemerals[session] {
		if all || strings.HasPrefix(p, prefix) {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// Lookup returns the stat and ACL of path without any permission check, for
// watch catch-up and event filtering. The ACL is shared and read-only.
func (t *Tree) Lookup(path string) (st wire.Stat, acl []wire.ACL, ok bool) {
	n := t.get(path)
	if n == nil {
		return wire.Stat{}, nil, false
	}
	return n.stat(), n.acl().acl, true
}

// CanRead reports whether c may read a node with the given ACL; watch
// events are delivered only to connections that can.
func (t *Tree) CanRead(acl []wire.ACL, c Caller) bool {
	return MatchACL(acl, wire.PermRead, c, t.opts.SkipACL)
}

// NodeCount returns the number of znodes, the root included (4 on a fresh
// tree; ZooKeeper's zk_znode_count also counts the root's second key "").
func (t *Tree) NodeCount() int { return t.count }

// ApproxDataSize returns Σ len(path)+len(data) over all znodes
// (zk_approximate_data_size); 44 on a fresh tree.
func (t *Tree) ApproxDataSize() int64 { return t.dataSize }

// EphemeralCount returns the number of ephemeral nodes
// (zk_ephemerals_count).
func (t *Tree) EphemeralCount() int { return t.ephCount }

// EphemeralsBySession returns every session that owns ephemerals with the
// sorted paths of its nodes (for the dump 4lw). The result is new.
func (t *Tree) EphemeralsBySession() map[int64][]string {
	out := make(map[int64][]string, len(t.ephemerals))
	for s := range t.ephemerals {
		out[s] = t.Ephemerals(s, "")
	}
	return out
}
