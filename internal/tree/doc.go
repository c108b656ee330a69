// Package tree is the znode tree with ZooKeeper's exact semantics: paths
// and their validation, data, the stat of every node, sequential names,
// ephemeral, container and TTL nodes, ACL checks and the order in which a
// write's checks run (which decides the error a client sees when several
// apply).
//
// The package is pure: no goroutines, clocks or IO, and no locking — the
// caller (the state machine) serialises every call. Time and zxid come in
// with each write as a Meta. Nothing observable depends on map iteration
// order: every list returned is sorted.
//
// # Writes
//
// Create, Delete, DeleteContainer, SetData, SetACL and CloseSession apply
// one operation and return the watch triggers (Change) it causes; Check
// only validates. A failing write changes nothing. A multi runs as
//
//	t.Begin()
//	for each op { if err := apply(op); err != nil { t.Rollback(); return } }
//	t.Commit()
//
// Between Begin and Commit every mutation records its inverse, so Rollback
// restores data, stats, children, parent counters, ACLs and the ephemeral,
// container and TTL indexes exactly. Later ops of a multi see the effects
// of earlier ones (a sequential create after another gets the next number).
//
// # Stat
//
// Nodes store ZooKeeper's StatPersisted. The stored cversion counts child
// creations; the client sees 2·cversion − numChildren, which rises by one
// on every child create and delete. Sequential suffixes are the stored
// counter formatted %010d. ephemeralOwner is reported only for session
// ephemerals: containers store ContainerOwner and TTL nodes TTLOwner(ttl),
// both shown as 0.
//
// # ACLs
//
// MatchACL is ZooKeeper's checkACL; FixupACL validates and expands the
// lists given to create and setACL; Digest computes digest-scheme ids.
// Reads check READ (GetACL: READ or ADMIN, masking digest hashes without
// ADMIN); Exists checks READ only when the node exists.
//
// # Quotas
//
// The tree keeps ZooKeeper's quota accounting. Creating a node named
// zookeeper_limits under /zookeeper/quota<p> registers <p> as a quota
// root; deleting it unregisters <p>. Creating zookeeper_stats there
// counts the subtree <p> (nodes including <p>, and the sum of their data
// lengths) into that node's data as "count=<n>,bytes=<n>". From then on
// every create, delete (CloseSession and DeleteContainer included) and
// setData under a root rewrites the stats node of the deepest root above
// it, in place: its version, mzxid and mtime do not move, and no watch
// fires. The text format is StatsTrack's: "count=<n>,bytes=<n>" and, when
// other keys exist, "=" then ";key=value" in sorted key order.
//
// With Options.EnforceQuota, a create (one node, len(data) bytes) or
// setData (the change in length) that would take the deepest root past
// the countHardLimit or byteHardLimit of its limits node fails with
// wire.ErrQuotaExceeded; soft limits (count, bytes) never fail. Like
// ZooKeeper's PrepRequestProcessor, the check reads the tree as it was at
// Begin: earlier ops of the same multi are not counted against it. Every
// limit the check finds exceeded, soft or hard, is reported as a
// QuotaExceeded, which the caller takes with TakeQuotaExceeded and logs
// (ZooKeeper logs "Quota exceeded: ..." at the check); deletes and
// setACL are never checked. Roots are matched as ZooKeeper's PathTrie
// matches them: path components that are empty or all white space are
// left out (a quota set on "/a/ " is a quota on "/a").
//
// # Memory
//
// Nodes are reached from the root through their parents' children, one
// path segment at a time: there is no index by full path, and each name is
// stored once. A node is 64 bytes besides its data. Its ACL (an interned,
// reference-counted list) and owner are in an ext that a node without
// children shares with every such node of the same ACL and owner; a node
// that has had children has an ext of its own, holding them, with its
// pzxid and cversion: by name, in a slice sorted by name up to 1024 of
// them and in a map beyond.
//
// # Snapshots
//
// Clone makes a consistent copy in constant time, besides the ephemeral,
// container and TTL indexes: the two trees share every node, and whichever
// changes one first copies it and the nodes on its path from the root
// (copy on write).
// Records walks a tree as NodeRecords, parents first, in an order that
// depends only on content; FromRecords rebuilds an identical tree from
// them, indexes and quota roots included.
package tree
