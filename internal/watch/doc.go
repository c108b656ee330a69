// Package watch is the watch registry of one server: which connection watches
// which znode, and who must be notified when a write changes the tree.
//
// It is pure: no goroutines, no IO, no locks. The server calls it while it
// applies a transaction, from the one goroutine that applies them (or under
// its own lock), and queues the returned notifications on each connection
// before the reply to the write, which gives ZooKeeper's ordering guarantee.
//
// # Tables
//
// Like ZooKeeper the registry keeps two tables, each mapping
// path → watcher → modes with a reverse index watcher → paths:
//
//	call                          table         mode
//	exists / getData  (watch)     data          STANDARD
//	getChildren       (watch)     child         STANDARD
//	addWatch PERSISTENT           data + child  PERSISTENT
//	addWatch PERSISTENT_RECURSIVE data          PERSISTENT_RECURSIVE
//
// A watcher is a connection (WatcherID), not a session. Registering the same
// (path, watcher, mode) twice is one watch; one watcher may hold several
// modes on one path. Whether a node must exist for a watch to be set
// (getData: yes, exists: no) is the caller's decision.
//
// # Triggering
//
// For each change the caller calls Trigger once per event:
//
//	create P   Trigger(NodeCreated, P);     Trigger(NodeChildrenChanged, parent(P))
//	delete P   Trigger(NodeDeleted, P);     Trigger(NodeChildrenChanged, parent(P))
//	setData P  Trigger(NodeDataChanged, P)
//	setACL P   nothing
//
// On P itself every watch fires and STANDARD watches are consumed. On the
// ancestors of P (up to "/", walked only while a recursive watch exists)
// only PERSISTENT_RECURSIVE watches fire, and never for NodeChildrenChanged.
// NodeDeleted also fires P's child watches; a connection gets at most one
// notification per Trigger call.
//
// # Introspection
//
// Check and Remove implement checkWatches and removeWatches per WatcherType;
// Count is mntr's zk_watch_count; DataSummary, DataPathsByWatcher and
// DataWatchersByPath feed wchs, wchc and wchp, which list the data table
// only.
package watch
