package tree

import (
	"fmt"
	"strings"

	"github.com/wardenzk/warden/internal/quota"
	"github.com/wardenzk/warden/wire"
)

// quotaPrefix returns the part of parentPath after "/zookeeper/quota" (a
// string prefix, as Quotas.trimQuotaPath) and whether parentPath starts
// with it at all.
func quotaPrefix(parentPath string) (string, bool) {
	if !strings.HasPrefix(parentPath, quotaPath) {
		return "", false
	}
	return parentPath[len(quotaPath):], true
}

// normalizeRoot is the path ZooKeeper's PathTrie gives prefix: its
// '/'-separated components joined under "/", leaving out those that are
// empty or all white space (Java's trim().isEmpty()); "" when none is left.
func normalizeRoot(prefix string) string {
	var b strings.Builder
	for _, c := range strings.Split(prefix, "/") {
		if !blank(c) {
			b.WriteByte('/')
			b.WriteString(c)
		}
	}
	return b.String()
}

// blank reports whether Java's String.trim would leave nothing of c (every
// byte a control character or a space).
func blank(c string) bool {
	for i := 0; i < len(c); i++ {
		if c[i] > ' ' {
			return false
		}
	}
	return true
}

// hasBlankComponent reports whether the valid path p has a component that
// normalizeRoot would leave out.
func hasBlankComponent(p string) bool {
	start := 1
	for i := 1; i <= len(p); i++ {
		if i == len(p) || p[i] == '/' {
			if blank(p[start:i]) {
				return true
			}
			start = i + 1
		}
	}
	return false
}

func statsPath(root string) string  { return quota.StatsPath(root) }
func limitsPath(root string) string { return quota.LimitsPath(root) }

// quotaRootOf returns the deepest registered quota root that is path or an
// ancestor of it (getMaxPrefixWithQuota), or "" when there is none. path
// is a valid znode path. With committed set, it answers for the tree as
// it was at Begin.
func (t *Tree) quotaRootOf(path string, committed bool) string {
	if len(t.quotaRoots) == 0 && len(t.quotaRootsBase) == 0 {
		return ""
	}
	if path != "/" && hasBlankComponent(path) {
		// PathTrie.findMaxPrefix skips such components of path too.
		path = normalizeRoot(path)
	}
	for p := path; p != ""; p = p[:strings.LastIndexByte(p, '/')] {
		if t.isQuotaRoot(p, committed) {
			return p
		}
	}
	return ""
}

func (t *Tree) isQuotaRoot(root string, committed bool) bool {
	if committed {
		if was, ok := t.quotaRootsBase[root]; ok {
			return was
		}
	}
	_, ok := t.quotaRoots[root]
	return ok
}

// setQuotaRoot registers (on) or unregisters root, recording the undo and
// the pre-transaction state.
func (t *Tree) setQuotaRoot(root string, on bool) {
	_, was := t.quotaRoots[root]
	if was == on {
		return
	}
	if t.inTxn {
		if _, seen := t.quotaRootsBase[root]; !seen {
			if t.quotaRootsBase == nil {
				t.quotaRootsBase = make(map[string]bool)
			}
			t.quotaRootsBase[root] = was
		}
	}
	if on {
		t.quotaRoots[root] = struct{}{}
	} else {
		delete(t.quotaRoots, root)
	}
	t.record(func() { t.setQuotaRoot(root, was) })
}

// baseData is a quota node's data before the transaction began.
type baseData struct {
	data   []byte
	exists bool
}

// noteQuotaNode remembers the data path had at Begin, before the first
// change to it in a transaction, so that checkQuota can read the committed
// tree as ZooKeeper's PrepRequestProcessor does. Only nodes under
// /zookeeper/quota are tracked.
func (t *Tree) noteQuotaNode(path string) {
	if !t.inTxn || !strings.HasPrefix(path, quotaPath) {
		return
	}
	if _, seen := t.quotaDataBase[path]; seen {
		return
	}
	if t.quotaDataBase == nil {
		t.quotaDataBase = make(map[string]baseData)
	}
	var b baseData
	if n := t.lookup(path); n != nil {
		b = baseData{data: n.data(), exists: true}
	}
	t.quotaDataBase[path] = b
}

// committedData returns the data of path as it was at Begin (or now,
// outside a transaction).
func (t *Tree) committedData(path string) ([]byte, bool) {
	if b, ok := t.quotaDataBase[path]; ok {
		return b.data, b.exists
	}
	if n := t.lookup(path); n != nil {
		return n.data(), true
	}
	return nil, false
}

// QuotaExceeded is what ZooKeeper logs when a quota check (run only with
// Options.EnforceQuota) finds that a create or setData takes a quota root
// past a limit: the hard limit when the limits node has one for that
// measure, else the soft limit. A hard limit also refuses the change.
type QuotaExceeded struct {
	// Root is the quota root, the deepest one above the changed node.
	Root string
	// Bytes tells which measure: the data size (else the node count).
	Bytes bool
	// Hard tells which limit: countHardLimit or byteHardLimit (else count
	// or bytes, the soft limits).
	Hard bool
	// Current is the usage the change would give; Limit the limit.
	Current, Limit int64
}

// String is ZooKeeper's message for q, for example
// "Quota exceeded: /app [current count=4, hardCountLimit=3]".
func (q QuotaExceeded) String() string {
	kind, measure := "soft", "count"
	if q.Hard {
		kind = "hard"
	}
	if q.Bytes {
		measure = "bytes"
	}
	limit := "CountLimit"
	if q.Bytes {
		limit = "ByteLimit"
	}
	return fmt.Sprintf("Quota exceeded: %s [current %s=%d, %s%s=%d]", q.Root, measure, q.Current, kind, limit, q.Limit)
}

// maxQuotaExceeded bounds the QuotaExceeded reports kept for
// TakeQuotaExceeded; later ones are dropped until they are taken.
const maxQuotaExceeded = 1024

// TakeQuotaExceeded returns the quota checks that found a limit exceeded
// since the last call, oldest first (at most 1024 are kept), and forgets
// them. They are reported whether the change was refused or not, and a
// rolled-back transaction keeps its reports: ZooKeeper logs at the check.
// The caller owns the returned slice. Like a write, it must not run
// concurrently with any other call.
func (t *Tree) TakeQuotaExceeded() []QuotaExceeded {
	q := t.quotaExceeded
	t.quotaExceeded = nil
	return q
}

func (t *Tree) reportQuota(q QuotaExceeded) {
	if len(t.quotaExceeded) < maxQuotaExceeded {
		t.quotaExceeded = append(t.quotaExceeded, q)
	}
}

// checkQuota is ZooKeeperServer.checkQuota, run only with
// Options.EnforceQuota: for the deepest quota root above path, when the
// change (countDiff nodes, bytesDiff bytes) takes the stats past the
// limit of a measure that changes — the hard limit if the limits node has
// one, else the soft one — it reports a QuotaExceeded, and a hard limit
// fails with ErrQuotaExceeded. The count is checked before the bytes. It
// reads the committed tree: earlier ops of the same multi are not counted.
// Quota text ZooKeeper cannot parse gives ErrMarshallingError.
func (t *Tree) checkQuota(path string, bytesDiff, countDiff int64) error {
	if !t.opts.EnforceQuota {
		return nil
	}
	root := t.quotaRootOf(path, true)
	if root == "" {
		return nil
	}
	data, ok := t.committedData(limitsPath(root))
	if !ok {
		return nil
	}
	limits, err := quota.Parse(data)
	if err != nil {
		return wire.ErrMarshallingError
	}
	checkCount := countDiff != 0 && (limits.Get(quota.KeyCount) > -1 || limits.Get(quota.KeyCountHardLimit) > -1)
	checkBytes := bytesDiff != 0 && (limits.Get(quota.KeyBytes) > -1 || limits.Get(quota.KeyByteHardLimit) > -1)
	if !checkCount && !checkBytes {
		return nil
	}
	if data, ok = t.committedData(statsPath(root)); !ok {
		return nil
	}
	current, err := quota.Parse(data)
	if err != nil {
		return wire.ErrMarshallingError
	}
	check := func(bytes bool, soft, hard string, diff int64) error {
		q := QuotaExceeded{Root: root, Bytes: bytes, Current: current.Get(soft) + diff, Limit: limits.Get(soft)}
		if h := limits.Get(hard); h > -1 {
			q.Hard, q.Limit = true, h
		}
		if q.Current <= q.Limit {
			return nil
		}
		t.reportQuota(q)
		if q.Hard {
			return wire.ErrQuotaExceeded
		}
		return nil
	}
	if checkCount {
		if err := check(false, quota.KeyCount, quota.KeyCountHardLimit, countDiff); err != nil {
			return err
		}
	}
	if checkBytes {
		return check(true, quota.KeyBytes, quota.KeyByteHardLimit, bytesDiff)
	}
	return nil
}

// quotaCreated does what DataTree.createNode does for quotas after
// linking in the node at path (its parent parentPath): a zookeeper_limits
// child of /zookeeper/quota<prefix> registers the root <prefix>, a
// zookeeper_stats child recomputes <prefix>'s usage into itself; then the
// deepest root above path gains one node and len(data) bytes.
func (t *Tree) quotaCreated(path, parentPath string, data []byte) {
	if prefix, ok := quotaPrefix(parentPath); ok {
		switch path[len(parentPath)+1:] {
		case quota.LimitsNode:
			// ZooKeeper 3.8 fails on an empty prefix; later versions skip it.
			if root := normalizeRoot(prefix); root != "" {
				t.setQuotaRoot(root, true)
			}
		case quota.StatsNode:
			t.recountQuota(prefix)
		}
	}
	if root := t.quotaRootOf(path, false); root != "" {
		t.updateQuotaStats(root, int64(len(data)), 1)
	}
}

// quotaDeleted does what DataTree.deleteNode does for quotas after
// unlinking the node at path that held data: deleting a zookeeper_limits
// node unregisters its root, and the deepest root above path loses one
// node and len(data) bytes.
//
// ZooKeeper 3.8 takes the root of a deleted zookeeper_limits node under
// any parent that starts with "/zookeeper" (not only "/zookeeper/quota"),
// as that parent minus its first 16 bytes: deleting
// /zookeeper/abcdefgh/zookeeper_limits unregisters /fgh. Warden does the
// same. Where the parent is 16 bytes or shorter ZooKeeper throws while
// applying the transaction and stops (and fails again replaying its log);
// Warden deletes the node and unregisters nothing.
func (t *Tree) quotaDeleted(path, parentPath string, data []byte) {
	if strings.HasPrefix(parentPath, procPath) && len(parentPath) > len(quotaPath) && path[len(parentPath)+1:] == quota.LimitsNode {
		if root := normalizeRoot(parentPath[len(quotaPath):]); root != "" {
			t.setQuotaRoot(root, false)
		}
	}
	if root := t.quotaRootOf(path, false); root != "" {
		t.updateQuotaStats(root, -int64(len(data)), -1)
	}
}

// quotaDataChanged charges the deepest root above path with the change of
// data length (always rewriting its stats, as ZooKeeper does).
func (t *Tree) quotaDataChanged(path string, oldLen, newLen int) {
	if root := t.quotaRootOf(path, false); root != "" {
		t.updateQuotaStats(root, int64(newLen-oldLen), 0)
	}
}

// recountQuota is updateQuotaForPath: it counts the subtree at prefix (the
// raw text after /zookeeper/quota; "" counts the whole tree) and writes
// "count=<n>,bytes=<n>" into /zookeeper/quota<prefix>/zookeeper_stats.
func (t *Tree) recountQuota(prefix string) {
	var count, size int64
	var walk func(path string)
	walk = func(path string) {
		n := t.get(path)
		if n == nil {
			return
		}
		count++
		size += int64(n.dataSize())
		for k := range n.kids().all() {
			walk(path + "/" + k)
		}
	}
	walk(prefix)
	t.writeQuotaStats(statsPath(prefix), quota.Stats{quota.KeyCount: count, quota.KeyBytes: size})
}

// updateQuotaStats is updateQuotaStat: it adds the differences to the
// stats node of root. A missing stats node, or one whose text ZooKeeper
// could not parse (it would fail the transaction), is left alone.
func (t *Tree) updateQuotaStats(root string, bytesDiff, countDiff int64) {
	n := t.lookup(statsPath(root))
	if n == nil {
		return
	}
	s, err := quota.Parse(n.data())
	if err != nil {
		return
	}
	s[quota.KeyCount] = s.Get(quota.KeyCount) + countDiff
	s[quota.KeyBytes] = s.Get(quota.KeyBytes) + bytesDiff
	t.writeQuotaStats(statsPath(root), s)
}

// writeQuotaStats replaces the data of the stats node at path in place:
// its version, mzxid and mtime stay as they are.
func (t *Tree) writeQuotaStats(path string, s quota.Stats) {
	if t.lookup(path) == nil {
		return
	}
	t.noteQuotaNode(path)
	t.setNodeData(t.modify(path), s.Bytes())
}
