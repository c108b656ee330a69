package zkimport

import (
	"errors"
	"fmt"
	"strings"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// Transaction types (ZooDefs.OpCode) found in logs.
const (
	opError           = int32(wire.OpError)
	opCreate          = int32(wire.OpCreate)
	opDelete          = int32(wire.OpDelete)
	opSetData         = int32(wire.OpSetData)
	opSetACL          = int32(wire.OpSetACL)
	opCheck           = int32(wire.OpCheck)
	opMulti           = int32(wire.OpMulti)
	opCreate2         = int32(wire.OpCreate2)
	opReconfig        = int32(wire.OpReconfig)
	opCreateContainer = int32(wire.OpCreateContainer)
	opDeleteContainer = int32(wire.OpDeleteContainer)
	opCreateTTL       = int32(wire.OpCreateTTL)
	opCreateSession   = int32(wire.OpCreateSession)
	opCloseSession    = int32(wire.OpCloseSession)
)

// Outcomes of applying one transaction to the tree. As in DataTree, a
// failed transaction changes nothing (beyond the documented cversion
// fix-up) and is not an error of the load: fuzzy snapshots make them
// expected.
var (
	errNoNode     = errors.New("no node")
	errNodeExists = errors.New("node exists")
)

// createTxn is CreateTxn, CreateContainerTxn or CreateTTLTxn, with the
// ephemeralOwner already worked out from the type.
type createTxn struct {
	path           string
	data           []byte
	acl            []wire.ACL
	owner          int64
	parentCVersion int32
}

// decodeCreate decodes the body of a create-type transaction.
func decodeCreate(typ int32, clientID int64, body []byte, maxLen int) (createTxn, error) {
	d := wire.NewDecoder(body, maxLen)
	c := createTxn{path: d.String(), data: d.Buffer(), acl: wire.DecodeACLs(d)}
	switch typ {
	case opCreate, opCreate2:
		if d.Bool() {
			c.owner = clientID
		}
		c.parentCVersion = d.Int32()
		if errors.Is(d.Err(), wire.ErrShortRecord) && typ == opCreate {
			// CreateTxnV0 (ZooKeeper 3.3) has no parentCVersion: -1 asks
			// createNode to increment the parent's.
			d = wire.NewDecoder(body, maxLen)
			c = createTxn{path: d.String(), data: d.Buffer(), acl: wire.DecodeACLs(d), parentCVersion: -1}
			if d.Bool() {
				c.owner = clientID
			}
		}
	case opCreateContainer:
		c.owner = tree.ContainerOwner
		c.parentCVersion = d.Int32()
	case opCreateTTL:
		c.parentCVersion = d.Int32()
		c.owner = tree.TTLOwner(d.Int64())
	}
	return c, d.Err()
}

// replayer applies log transactions to a DB with DataTree.processTxn's
// rules (see doc.go, Loading).
type replayer struct {
	db     *DB
	maxLen int
	// ephemerals indexes session ephemerals by owner, as DataTree does.
	// Invariant: ephemerals[s] holds exactly the paths whose owner is s,
	// except for sessions already killed (their entry is gone).
	ephemerals map[int64]map[string]struct{}
}

func newReplayer(db *DB, maxLen int) *replayer {
	r := &replayer{db: db, maxLen: maxLen, ephemerals: map[int64]map[string]struct{}{}}
	for p, n := range db.Nodes {
		if ownerIsSession(n.Stat.EphemeralOwner) {
			r.index(n.Stat.EphemeralOwner, p)
		}
	}
	return r
}

func (r *replayer) index(owner int64, path string) {
	set := r.ephemerals[owner]
	if set == nil {
		set = map[string]struct{}{}
		r.ephemerals[owner] = set
	}
	set[path] = struct{}{}
}

// apply applies one logged transaction (FileTxnSnapLog.processTransaction
// and DataTree.processTxn). It returns an error only for a record that
// cannot be decoded, on which ZooKeeper refuses to start too.
func (r *replayer) apply(rec logRecord) error {
	h := rec.Header
	body := rec.Body
	switch h.Type {
	case opCreateSession:
		d := wire.NewDecoder(body, r.maxLen)
		timeout := d.Int32()
		if err := d.Err(); err != nil {
			return fmt.Errorf("createSession: %w", err)
		}
		r.db.Sessions[h.ClientID] = timeout
	case opCloseSession:
		delete(r.db.Sessions, h.ClientID)
		d := wire.NewDecoder(body, r.maxLen)
		paths := d.Strings()
		hasList := d.Err() == nil
		if d.Err() != nil && !errors.Is(d.Err(), wire.ErrShortRecord) {
			return fmt.Errorf("closeSession: %w", d.Err())
		}
		if !hasList {
			paths = nil // a closeSession written before 3.6 has no body
		}
		r.killSession(h.ClientID, h.Zxid, paths, hasList)
	case opError, opCheck:
		// Nothing to apply (a top-level check is never logged; accept it).
	case opMulti:
		if err := r.multi(h, body); err != nil {
			return err
		}
	default:
		if _, err := r.applyOne(h.Type, h, body); err != nil {
			return err
		}
	}
	if h.Zxid > r.db.LastZxid {
		r.db.LastZxid = h.Zxid
	}
	return nil
}

// applyOne applies a create, delete, setData, setACL or reconfig (top
// level or inside a multi). It returns the tree outcome (ignored by the
// caller, as ZooKeeper ignores it) and a decoding error.
func (r *replayer) applyOne(typ int32, h TxnHeader, body []byte) (outcome error, err error) {
	switch typ {
	case opCreate, opCreate2, opCreateContainer, opCreateTTL:
		c, err := decodeCreate(typ, h.ClientID, body, r.maxLen)
		if err != nil {
			return nil, fmt.Errorf("create: %w", err)
		}
		outcome = r.createNode(c, h.Zxid, h.Time)
		if typ == opCreate && errors.Is(outcome, errNodeExists) {
			// processTxn's fix-up for a node deleted and re-created around
			// the fuzzy snapshot: the parent still takes the logged cversion.
			parent, _ := split(c.path)
			r.setCversionPzxid(parent, c.parentCVersion, h.Zxid)
		}
		return outcome, nil
	case opDelete, opDeleteContainer:
		d := wire.NewDecoder(body, r.maxLen)
		path := d.String()
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("delete: %w", err)
		}
		return r.deleteNode(path, h.Zxid), nil
	case opSetData, opReconfig:
		d := wire.NewDecoder(body, r.maxLen)
		path, data, version := d.String(), d.Buffer(), d.Int32()
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("setData: %w", err)
		}
		n, ok := r.db.Nodes[path]
		if !ok {
			return errNoNode, nil
		}
		n.Data, n.Stat.Mtime, n.Stat.Mzxid, n.Stat.Version = data, h.Time, h.Zxid, version
		return nil, nil
	case opSetACL:
		d := wire.NewDecoder(body, r.maxLen)
		path, acl, version := d.String(), wire.DecodeACLs(d), d.Int32()
		if err := d.Err(); err != nil {
			return nil, fmt.Errorf("setACL: %w", err)
		}
		n, ok := r.db.Nodes[path]
		if !ok {
			return errNoNode, nil
		}
		n.ACL, n.Stat.Aversion = acl, version
		return nil, nil
	case opError, opCheck:
		return nil, nil
	}
	return nil, fmt.Errorf("unsupported transaction type %d", typ)
}

// multi applies a MultiTxn: nothing when any sub-transaction is an error
// (the multi failed), else each one in order with the multi's header.
func (r *replayer) multi(h TxnHeader, body []byte) error {
	d := wire.NewDecoder(body, r.maxLen)
	n := d.VectorLen(8)
	type sub struct {
		typ  int32
		data []byte
	}
	subs := make([]sub, 0, max(n, 0))
	for i := 0; i < n && d.Err() == nil; i++ {
		subs = append(subs, sub{typ: d.Int32(), data: d.Buffer()})
	}
	if err := d.Err(); err != nil {
		return fmt.Errorf("multi: %w", err)
	}
	for _, s := range subs {
		if s.typ == opError {
			return nil
		}
	}
	for _, s := range subs {
		switch s.typ {
		case opCreate, opCreateTTL, opCreateContainer, opDelete, opDeleteContainer, opSetData, opCheck:
		default:
			// ZooKeeper 3.8's processTxn throws on any other type (create2
			// included) and stops the multi there, keeping what it applied.
			return nil
		}
		if _, err := r.applyOne(s.typ, h, s.data); err != nil {
			return nil // an undecodable sub-record stops the multi the same way
		}
	}
	return nil
}

// createNode is DataTree.createNode.
func (r *replayer) createNode(c createTxn, zxid, time int64) error {
	if c.path == "/" || tree.ValidatePath(c.path) != nil {
		return errNoNode // as ZooKeeper's request checks would have refused it
	}
	parentPath, name := split(c.path)
	parent, ok := r.db.Nodes[parentPath]
	if !ok {
		return errNoNode
	}
	if _, ok := parent.kids[name]; ok {
		return errNodeExists
	}
	cv := c.parentCVersion
	if cv == -1 {
		cv = parent.Stat.Cversion + 1
	}
	if cv > parent.Stat.Cversion {
		parent.Stat.Cversion = cv
		parent.Stat.Pzxid = zxid
	}
	parent.addKid(name)
	acl := c.acl
	if acl == nil {
		acl = wire.OpenACLUnsafe // ReferenceCountedACLCache.convertAcls(null) is the open ACL
	}
	r.db.Nodes[c.path] = &Node{Data: c.data, ACL: acl, Stat: StatPersisted{
		Czxid: zxid, Mzxid: zxid, Pzxid: zxid, Ctime: time, Mtime: time, EphemeralOwner: c.owner,
	}}
	if ownerIsSession(c.owner) {
		r.index(c.owner, c.path)
	}
	return nil
}

// deleteNode is DataTree.deleteNode: the parent loses the child name and
// moves its pzxid forward (never back) even when the child is already gone.
func (r *replayer) deleteNode(path string, zxid int64) error {
	if !strings.HasPrefix(path, "/") || path == "/" {
		return errNoNode
	}
	parentPath, name := split(path)
	parent, ok := r.db.Nodes[parentPath]
	if !ok {
		return errNoNode
	}
	delete(parent.kids, name)
	if zxid > parent.Stat.Pzxid {
		parent.Stat.Pzxid = zxid
	}
	n, ok := r.db.Nodes[path]
	if !ok {
		return errNoNode
	}
	r.remove(path, n)
	return nil
}

// remove drops a node from the map and the ephemeral index. ZooKeeper
// never deletes a node with children in a consistent history; should a log
// do it, ZooKeeper would keep the orphans in memory but lose them from its
// next snapshot, so they are dropped here too.
func (r *replayer) remove(path string, n *Node) {
	for kid := range n.kids {
		if k, ok := r.db.Nodes[path+"/"+kid]; ok {
			r.remove(path+"/"+kid, k)
		}
	}
	delete(r.db.Nodes, path)
	if owner := n.Stat.EphemeralOwner; ownerIsSession(owner) {
		if set := r.ephemerals[owner]; set != nil {
			delete(set, path)
		}
	}
}

// setCversionPzxid is DataTree.setCversionPzxid.
func (r *replayer) setCversionPzxid(path string, cversion int32, zxid int64) {
	n, ok := r.db.Nodes[path]
	if !ok {
		return
	}
	if cversion == -1 {
		cversion = n.Stat.Cversion + 1
	}
	if cversion > n.Stat.Cversion {
		n.Stat.Cversion = cversion
		n.Stat.Pzxid = zxid
	}
}

// killSession is DataTree.killSession: the paths the closeSession logged
// first (3.6+), then any other ephemeral the session still owns.
func (r *replayer) killSession(session, zxid int64, logged []string, hasList bool) {
	local := r.ephemerals[session]
	delete(r.ephemerals, session)
	if hasList {
		for _, p := range logged {
			_ = r.deleteNode(p, zxid)
			delete(local, p)
		}
	}
	for p := range local {
		_ = r.deleteNode(p, zxid)
	}
}

// killDeadSessions is ZooKeeperServer.loadData's clean-up: every session
// that owns ephemerals but is not in the session table is killed at the
// database's zxid.
func (r *replayer) killDeadSessions() {
	for s := range r.ephemerals {
		if _, live := r.db.Sessions[s]; !live {
			r.killSession(s, r.db.LastZxid, nil, false)
		}
	}
}

// recountQuotas is DataTree.setupQuota: for every leaf
// /zookeeper/quota<p>/zookeeper_limits with p non-empty, the sibling
// zookeeper_stats node (when present) gets the count and byte total of the
// subtree at p, in StatsTrack's format; its stat does not change.
func (r *replayer) recountQuotas() {
	const quota, limits, stats = "/zookeeper/quota", "/zookeeper_limits", "/zookeeper_stats"
	for p, n := range r.db.Nodes {
		if !strings.HasPrefix(p, quota+"/") || !strings.HasSuffix(p, limits) || len(n.kids) > 0 {
			continue
		}
		root := p[len(quota) : len(p)-len(limits)]
		if root == "" {
			continue
		}
		st, ok := r.db.Nodes[quota+root+stats]
		if !ok {
			continue
		}
		count, bytes := r.count(root)
		st.Data = fmt.Appendf(nil, "count=%d,bytes=%d", count, bytes)
	}
}

// count returns the number of nodes and total data length of the subtree
// at path (0, 0 when it does not exist).
func (r *replayer) count(path string) (int64, int64) {
	n, ok := r.db.Nodes[path]
	if !ok {
		return 0, 0
	}
	c, b := int64(1), int64(len(n.Data))
	for kid := range n.kids {
		kc, kb := r.count(strings.TrimSuffix(path, "/") + "/" + kid)
		c, b = c+kc, b+kb
	}
	return c, b
}
