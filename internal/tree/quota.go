package tree

import (
	"slices"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// Names of the nodes that hold a quota under /zookeeper/quota/<root>.
const (
	quotaLimitsName = "zookeeper_limits"
	quotaStatsName  = "zookeeper_stats"
)

// Keys of the quota text (StatsTrack).
const (
	keyCount          = "count"
	keyBytes          = "bytes"
	keyCountHardLimit = "countHardLimit"
	keyByteHardLimit  = "byteHardLimit"
)

// statsTrack is ZooKeeper's StatsTrack: the key=value text of a limits or
// stats node. A missing key reads as -1 ("no limit").
type statsTrack map[string]int64

// parseStatsTrack parses quota text as StatsTrack does: pairs separated by
// runs of ',' and ';', each split on '=' (trailing empty parts dropped, a
// present but empty value reads -1, a later key wins). ok is false where
// ZooKeeper throws: nil data, a pair with fewer than two parts (no value,
// or a leading separator), a value that is not a decimal int64.
func parseStatsTrack(data []byte) (s statsTrack, ok bool) {
	if data == nil {
		return nil, false
	}
	s = statsTrack{}
	pairs := splitJava(string(data), func(c byte) bool { return c == ',' || c == ';' }, true)
	for _, pair := range pairs {
		kv := splitJava(pair, func(c byte) bool { return c == '=' }, false)
		if len(kv) < 2 {
			return nil, false
		}
		v := int64(-1)
		if kv[1] != "" {
			n, err := strconv.ParseInt(kv[1], 10, 64)
			if err != nil {
				return nil, false
			}
			v = n
		}
		s[kv[0]] = v
	}
	return s, true
}

// splitJava splits s as Java's String.split does: the parts between
// separators, a leading empty part kept, trailing empty parts dropped.
// With runs set, a run of separators counts as one (a "[x]+" pattern).
func splitJava(s string, isSep func(byte) bool, runs bool) []string {
	var parts []string
	start := 0
	for i := 0; i < len(s); i++ {
		if !isSep(s[i]) {
			continue
		}
		parts = append(parts, s[start:i])
		for runs && i+1 < len(s) && isSep(s[i+1]) {
			i++
		}
		start = i + 1
	}
	parts = append(parts, s[start:])
	for len(parts) > 0 && parts[len(parts)-1] == "" {
		parts = parts[:len(parts)-1]
	}
	return parts
}

func (s statsTrack) get(key string) int64 {
	if v, ok := s[key]; ok {
		return v
	}
	return -1
}

// bytes renders s as StatsTrack.toString: "count=<n>,bytes=<n>" and, when
// other keys exist, "=" followed by ";key=value" for each in sorted order.
func (s statsTrack) bytes() []byte {
	b := []byte(keyCount + "=")
	b = strconv.AppendInt(b, s.get(keyCount), 10)
	b = append(b, ","+keyBytes+"="...)
	b = strconv.AppendInt(b, s.get(keyBytes), 10)
	var extra []string
	for k := range s {
		if k != keyCount && k != keyBytes {
			extra = append(extra, k)
		}
	}
	if len(extra) == 0 {
		return b
	}
	slices.Sort(extra)
	b = append(b, '=')
	for _, k := range extra {
		b = append(b, ';')
		b = append(b, k...)
		b = append(b, '=')
		b = strconv.AppendInt(b, s[k], 10)
	}
	return b
}

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
// non-empty '/'-separated components joined under "/"; "" when it has none.
func normalizeRoot(prefix string) string {
	var b strings.Builder
	for _, c := range strings.Split(prefix, "/") {
		if c != "" {
			b.WriteByte('/')
			b.WriteString(c)
		}
	}
	return b.String()
}

func statsPath(root string) string  { return quotaPath + root + "/" + quotaStatsName }
func limitsPath(root string) string { return quotaPath + root + "/" + quotaLimitsName }

// quotaRootOf returns the deepest registered quota root that is path or an
// ancestor of it (getMaxPrefixWithQuota), or "" when there is none. path
// is a valid znode path. With committed set, it answers for the tree as
// it was at Begin.
func (t *Tree) quotaRootOf(path string, committed bool) string {
	if len(t.quotaRoots) == 0 && len(t.quotaRootsBase) == 0 {
		return ""
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
	if n := t.nodes[path]; n != nil {
		b = baseData{data: n.data, exists: true}
	}
	t.quotaDataBase[path] = b
}

// committedData returns the data of path as it was at Begin (or now,
// outside a transaction).
func (t *Tree) committedData(path string) ([]byte, bool) {
	if b, ok := t.quotaDataBase[path]; ok {
		return b.data, b.exists
	}
	if n := t.nodes[path]; n != nil {
		return n.data, true
	}
	return nil, false
}

// checkQuota is ZooKeeperServer.checkQuota, run only with
// Options.EnforceQuota: for the deepest quota root above path it fails
// with ErrQuotaExceeded when the change (countDiff nodes, bytesDiff bytes)
// would take the stats past a hard limit of the limits node. Soft limits
// never fail. It reads the committed tree: earlier ops of the same multi
// are not counted. Quota text ZooKeeper cannot parse gives
// ErrMarshallingError.
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
	limits, ok := parseStatsTrack(data)
	if !ok {
		return wire.ErrMarshallingError
	}
	checkCount := countDiff != 0 && (limits.get(keyCount) > -1 || limits.get(keyCountHardLimit) > -1)
	checkBytes := bytesDiff != 0 && (limits.get(keyBytes) > -1 || limits.get(keyByteHardLimit) > -1)
	if !checkCount && !checkBytes {
		return nil
	}
	if data, ok = t.committedData(statsPath(root)); !ok {
		return nil
	}
	current, ok := parseStatsTrack(data)
	if !ok {
		return wire.ErrMarshallingError
	}
	if hard := limits.get(keyCountHardLimit); checkCount && hard > -1 && current.get(keyCount)+countDiff > hard {
		return wire.ErrQuotaExceeded
	}
	if hard := limits.get(keyByteHardLimit); checkBytes && hard > -1 && current.get(keyBytes)+bytesDiff > hard {
		return wire.ErrQuotaExceeded
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
		case quotaLimitsName:
			// ZooKeeper 3.8 fails on an empty prefix; later versions skip it.
			if root := normalizeRoot(prefix); root != "" {
				t.setQuotaRoot(root, true)
			}
		case quotaStatsName:
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
func (t *Tree) quotaDeleted(path, parentPath string, data []byte) {
	if prefix, ok := quotaPrefix(parentPath); ok && path[len(parentPath)+1:] == quotaLimitsName {
		if root := normalizeRoot(prefix); root != "" {
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
		size += int64(len(n.data))
		for k := range n.kids {
			walk(path + "/" + k)
		}
	}
	walk(prefix)
	t.writeQuotaStats(statsPath(prefix), statsTrack{keyCount: count, keyBytes: size})
}

// updateQuotaStats is updateQuotaStat: it adds the differences to the
// stats node of root. A missing stats node, or one whose text ZooKeeper
// could not parse (it would fail the transaction), is left alone.
func (t *Tree) updateQuotaStats(root string, bytesDiff, countDiff int64) {
	n := t.nodes[statsPath(root)]
	if n == nil {
		return
	}
	s, ok := parseStatsTrack(n.data)
	if !ok {
		return
	}
	s[keyCount] = s.get(keyCount) + countDiff
	s[keyBytes] = s.get(keyBytes) + bytesDiff
	t.writeQuotaStats(statsPath(root), s)
}

// writeQuotaStats replaces the data of the stats node at path in place:
// its version, mzxid and mtime stay as they are.
func (t *Tree) writeQuotaStats(path string, s statsTrack) {
	if t.nodes[path] == nil {
		return
	}
	t.noteQuotaNode(path)
	t.setNodeData(t.modify(path), s.bytes())
}
