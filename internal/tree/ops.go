package tree

import (
	"fmt"
	"slices"

	"github.com/wardenzk/warden/wire"
)

// Kind is the kind of node a create makes. The state machine derives it
// from the opcode and flags (createContainer → KindContainer, createTTL →
// KindTTL, an ephemeral mode → KindEphemeral, else KindPersistent) and
// validates flags, TTL range and session before calling Create.
type Kind int

// Node kinds.
const (
	KindPersistent Kind = iota
	KindEphemeral
	KindContainer
	KindTTL
)

// CreateOp is a create request as the tree needs it.
type CreateOp struct {
	Path       string     // requested path; the sequence suffix is appended when Sequential
	Data       []byte     // kept as given; nil stays nil
	ACL        []wire.ACL // before fixup
	Kind       Kind
	Sequential bool
	TTL        int64 // ms, for KindTTL
}

// Create creates a node, checking in ZooKeeper's order (steps 5–12 of
// pRequest2TxnCreate): path without '/' or with '\0' → ErrBadArguments;
// FixupACL → ErrInvalidACL; missing parent → ErrNoNode; no CREATE on the
// parent → ErrNoAuth; then the sequence suffix (%010d of the parent's
// creation counter) is appended; ValidatePath → ErrBadArguments; existing
// node → ErrNodeExists; parent a session ephemeral →
// ErrNoChildrenForEphemerals; with Options.EnforceQuota, a hard quota limit
// → ErrQuotaExceeded. It returns the actual path, the new node's stat and
// the NodeCreated and NodeChildrenChanged triggers. Quota usage is updated
// (see the package doc).
func (t *Tree) Create(op CreateOp, c Caller, m Meta) (string, wire.Stat, []Change, error) {
	parentPath, ok := splitParent(op.Path)
	if !ok {
		return "", wire.Stat{}, nil, wire.ErrBadArguments
	}
	acl, err := FixupACL(op.ACL, c)
	if err != nil {
		return "", wire.Stat{}, nil, err
	}
	parent := t.get(parentPath)
	if parent == nil {
		return "", wire.Stat{}, nil, wire.ErrNoNode
	}
	if !t.allowed(parent, wire.PermCreate, c) {
		return "", wire.Stat{}, nil, wire.ErrNoAuth
	}
	path := op.Path
	if op.Sequential {
		path += fmt.Sprintf("%010d", parent.cversion())
	}
	if err := ValidatePath(path); err != nil {
		return "", wire.Stat{}, nil, err
	}
	if t.lookup(path) != nil {
		return "", wire.Stat{}, nil, wire.ErrNodeExists
	}
	if kindOfOwner(parent.owner()) == ownerNormal {
		return "", wire.Stat{}, nil, wire.ErrNoChildrenForEphemerals
	}
	if err := t.checkQuota(path, int64(len(op.Data)), 1); err != nil {
		return "", wire.Stat{}, nil, err
	}

	var owner int64
	switch op.Kind {
	case KindEphemeral:
		owner = m.Session
	case KindContainer:
		owner = ContainerOwner
	case KindTTL:
		owner = TTLOwner(op.TTL)
	}
	n := &node{
		ext:   t.leafExt(t.internACL(acl), owner),
		czxid: m.Zxid, mzxid: m.Zxid,
		ctime: m.Time, mtime: m.Time,
		gen: t.gen,
	}
	n.setData(op.Data)
	parent = t.modify(parentPath)
	// DataTree.createNode only moves the counter forward, so it sticks at
	// MaxInt32 instead of wrapping.
	if d := t.ownDir(parent); d.cversion+1 > d.cversion {
		d.cversion++
		d.pzxid = m.Zxid
	}
	t.noteQuotaNode(path)
	t.insert(path, n)
	st := n.stat() // taken before a stats node rewrites its own data, as ZooKeeper does
	t.quotaCreated(path, parentPath, n.data())
	ch := []Change{
		{Type: wire.EventNodeCreated, Path: path, ACL: n.acl().acl},
		{Type: wire.EventNodeChildrenChanged, Path: eventPath(parentPath), ACL: parent.acl().acl},
	}
	return path, st, ch, nil
}

// Delete deletes a node, checking in ZooKeeper's order: path without '/',
// with '\0' or one of "/", "/zookeeper", "/zookeeper/quota",
// "/zookeeper/config" → ErrBadArguments; missing parent → ErrNoNode; no
// DELETE on the parent → ErrNoAuth; missing node → ErrNoNode; version not
// -1 and not the node's → ErrBadVersion; children → ErrNotEmpty. It returns
// the NodeDeleted and NodeChildrenChanged triggers.
func (t *Tree) Delete(path string, version int32, c Caller, m Meta) ([]Change, error) {
	parentPath, ok := splitParent(path)
	if !ok || isSpecialPath(path) {
		return nil, wire.ErrBadArguments
	}
	parent := t.get(parentPath)
	if parent == nil {
		return nil, wire.ErrNoNode
	}
	if !t.allowed(parent, wire.PermDelete, c) {
		return nil, wire.ErrNoAuth
	}
	n := t.lookup(path)
	if n == nil {
		return nil, wire.ErrNoNode
	}
	if version != -1 && version != n.version {
		return nil, wire.ErrBadVersion
	}
	if n.kids().len() > 0 {
		return nil, wire.ErrNotEmpty
	}
	return t.deleteNode(path, parentPath, n, m), nil
}

// DeleteContainer deletes a node for the container manager (or a client
// sending deleteContainer), with no ACL or version check: bad path or
// special path → ErrBadArguments; missing → ErrNoNode; children →
// ErrNotEmpty; a session ephemeral → ErrBadVersion. Persistent, container
// and TTL nodes are all deletable.
func (t *Tree) DeleteContainer(path string, m Meta) ([]Change, error) {
	parentPath, ok := splitParent(path)
	if !ok || isSpecialPath(path) {
		return nil, wire.ErrBadArguments
	}
	n := t.lookup(path)
	if n == nil {
		return nil, wire.ErrNoNode
	}
	if n.kids().len() > 0 {
		return nil, wire.ErrNotEmpty
	}
	if kindOfOwner(n.owner()) == ownerNormal {
		return nil, wire.ErrBadVersion
	}
	return t.deleteNode(path, parentPath, n, m), nil
}

// deleteNode removes the childless node n at path: the parent's pzxid
// moves up to the txn zxid; its creation counter is unchanged.
func (t *Tree) deleteNode(path, parentPath string, n *node, m Meta) []Change {
	parent := t.modify(parentPath)
	if d := t.ownDir(parent); m.Zxid > d.pzxid {
		d.pzxid = m.Zxid
	}
	t.noteQuotaNode(path)
	t.remove(path)
	t.quotaDeleted(path, parentPath, n.data())
	return []Change{
		{Type: wire.EventNodeDeleted, Path: path, ACL: n.acl().acl},
		{Type: wire.EventNodeChildrenChanged, Path: eventPath(parentPath), ACL: parent.acl().acl},
	}
}

// nextVersion is checkAndIncVersion: ErrBadVersion unless expected is -1
// or current; the new version skips -1 when wrapping.
func nextVersion(current, expected int32) (int32, error) {
	if expected != -1 && expected != current {
		return 0, wire.ErrBadVersion
	}
	next := current + 1
	if next == -1 {
		next = 0
	}
	return next, nil
}

// SetData replaces a node's data: ValidatePath → ErrBadArguments; missing
// → ErrNoNode; no WRITE → ErrNoAuth; with Options.EnforceQuota, a hard
// byte limit → ErrQuotaExceeded; version mismatch → ErrBadVersion. The
// node's version goes up by one (skipping -1), mzxid and mtime take the
// txn's. It returns the new stat and the NodeDataChanged trigger.
func (t *Tree) SetData(path string, data []byte, version int32, c Caller, m Meta) (wire.Stat, []Change, error) {
	if err := ValidatePath(path); err != nil {
		return wire.Stat{}, nil, err
	}
	n := t.lookup(path)
	if n == nil {
		return wire.Stat{}, nil, wire.ErrNoNode
	}
	if !t.allowed(n, wire.PermWrite, c) {
		return wire.Stat{}, nil, wire.ErrNoAuth
	}
	if err := t.checkQuota(path, int64(len(data)-n.dataSize()), 0); err != nil {
		return wire.Stat{}, nil, err
	}
	v, err := nextVersion(n.version, version)
	if err != nil {
		return wire.Stat{}, nil, err
	}
	oldLen := n.dataSize()
	t.noteQuotaNode(path)
	n = t.modify(path)
	t.setNodeData(n, data)
	n.version = v
	n.mzxid = m.Zxid
	n.mtime = m.Time
	st := n.stat() // taken before a quota update can rewrite n's own data
	t.quotaDataChanged(path, oldLen, len(data))
	return st, []Change{{Type: wire.EventNodeDataChanged, Path: path, ACL: n.acl().acl}}, nil
}

// SetACL replaces a node's ACL: ValidatePath → ErrBadArguments; FixupACL
// → ErrInvalidACL; missing → ErrNoNode; no ADMIN → ErrNoAuth; version
// (compared with aversion) mismatch → ErrBadVersion. Only aversion changes
// in the stat (mzxid and mtime do not), so the Meta is unused; no watch
// fires.
func (t *Tree) SetACL(path string, acl []wire.ACL, version int32, c Caller, _ Meta) (wire.Stat, error) {
	if err := ValidatePath(path); err != nil {
		return wire.Stat{}, err
	}
	fixed, err := FixupACL(acl, c)
	if err != nil {
		return wire.Stat{}, err
	}
	n := t.lookup(path)
	if n == nil {
		return wire.Stat{}, wire.ErrNoNode
	}
	if !t.allowed(n, wire.PermAdmin, c) {
		return wire.Stat{}, wire.ErrNoAuth
	}
	v, err := nextVersion(n.aversion, version)
	if err != nil {
		return wire.Stat{}, err
	}
	n = t.modify(path)
	t.setNodeACL(n, t.internACL(fixed))
	n.aversion = v
	return n.stat(), nil
}

// Check is the check op of a multi: ValidatePath → ErrBadArguments;
// missing → ErrNoNode; no READ → ErrNoAuth; version not -1 and not the
// node's → ErrBadVersion.
func (t *Tree) Check(path string, version int32, c Caller) error {
	if err := ValidatePath(path); err != nil {
		return err
	}
	n := t.lookup(path)
	if n == nil {
		return wire.ErrNoNode
	}
	if !t.allowed(n, wire.PermRead, c) {
		return wire.ErrNoAuth
	}
	_, err := nextVersion(n.version, version)
	return err
}

// CloseSession deletes every ephemeral node of session, in sorted path
// order, each as a delete (parent pzxid updated), and returns all their
// triggers in that order.
func (t *Tree) CloseSession(session int64, m Meta) []Change {
	var ch []Change
	for _, path := range t.Ephemerals(session, "") {
		parentPath, _ := splitParent(path)
		ch = append(ch, t.deleteNode(path, parentPath, t.lookup(path), m)...)
	}
	return ch
}

// ExpiryCandidates returns, sorted, the nodes the container manager should
// delete at time now (ms): containers without children that once had a
// child (creation counter > 0) or, when maxNeverUsed > 0, whose mtime is
// more than maxNeverUsed ms old; and TTL nodes without children whose
// mtime is more than their ttl old.
func (t *Tree) ExpiryCandidates(now int64, maxNeverUsed int64) []string {
	var out []string
	for p := range t.containers {
		n := t.lookup(p)
		if n.kids().len() > 0 {
			continue
		}
		if n.cversion() > 0 || (maxNeverUsed > 0 && now-n.mtime > maxNeverUsed) {
			out = append(out, p)
		}
	}
	for p := range t.ttls {
		n := t.lookup(p)
		if ttl := ttlOf(n.owner()); n.kids().len() == 0 && ttl != 0 && now-n.mtime > ttl {
			out = append(out, p)
		}
	}
	slices.Sort(out)
	return out
}

// SetConfig replaces the data of /zookeeper/config with the ensemble's
// membership text. Each server sets it from its configuration at start,
// not through the log, as a ZooKeeper quorum peer does: the version
// becomes -1 and mtime the given time (Unix ms), and no watch fires.
func (t *Tree) SetConfig(data []byte, mtime int64) {
	n := t.modify(configPath)
	t.setNodeData(n, data)
	n.version = -1
	n.mtime = mtime
}

// ApplyConfig writes a new ensemble configuration to /zookeeper/config
// as a committed reconfig does in ZooKeeper: data replaced, version -1,
// mzxid and mtime from m; its data watches fire. No ACL or quota check
// (the reconfig was checked before).
func (t *Tree) ApplyConfig(data []byte, m Meta) (wire.Stat, []Change) {
	n := t.modify(configPath)
	t.setNodeData(n, data)
	n.version = -1
	n.mzxid = m.Zxid
	n.mtime = m.Time
	return n.stat(), []Change{{Type: wire.EventNodeDataChanged, Path: configPath, ACL: n.acl().acl}}
}
