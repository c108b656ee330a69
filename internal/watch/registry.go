package watch

import (
	"slices"

	"github.com/wardenzk/warden/wire"
)

// WatcherID identifies one watcher: a client connection (not a session; a
// session that reconnects is a new watcher and re-arms with SetWatches).
type WatcherID uint64

// Mode is a set of watch modes. A watcher's entry for one path in one table
// holds the union of the modes it registered there, so one connection can
// hold STANDARD and PERSISTENT on the same path at once.
type Mode uint8

// Watch modes (server-side WatcherMode).
const (
	// ModeStandard is a one-shot watch set by exists, getData or
	// getChildren; it is removed when it fires.
	ModeStandard Mode = 1 << iota
	// ModePersistent is addWatch mode PERSISTENT: it stays after firing and
	// lives in both tables.
	ModePersistent
	// ModePersistentRecursive is addWatch mode PERSISTENT_RECURSIVE: it stays
	// after firing, lives in the data table only and also fires for changes
	// of every descendant (except NodeChildrenChanged).
	ModePersistentRecursive

	// ModeAll is every mode.
	ModeAll = ModeStandard | ModePersistent | ModePersistentRecursive
)

// Registry is the watch registry of one server: the data table (exists,
// getData, persistent and recursive watches) and the child table
// (getChildren and persistent watches).
//
// A Registry is not safe for concurrent use; callers serialise all calls.
// Paths are absolute znode paths already validated by the caller.
type Registry struct {
	data table
	// Invariant: child.recursive == 0.
	// Invariant: w holds ModePersistent on p in child iff it does in data.
	child table
}

// NewRegistry returns an empty registry.
func NewRegistry() *Registry {
	return &Registry{data: newTable(), child: newTable()}
}

// AddData registers a STANDARD watch of w in the data table (exists or
// getData with watch=true). Registering it again is a no-op.
func (r *Registry) AddData(path string, w WatcherID) {
	r.data.add(path, w, ModeStandard)
}

// AddChild registers a STANDARD watch of w in the child table (getChildren
// with watch=true). Registering it again is a no-op.
func (r *Registry) AddChild(path string, w WatcherID) {
	r.child.add(path, w, ModeStandard)
}

// AddPersistent registers an addWatch watch: PERSISTENT in both tables, or,
// if recursive, PERSISTENT_RECURSIVE in the data table only. Registering it
// again is a no-op.
func (r *Registry) AddPersistent(path string, w WatcherID, recursive bool) {
	if recursive {
		r.data.add(path, w, ModePersistentRecursive)
		return
	}
	r.data.add(path, w, ModePersistent)
	r.child.add(path, w, ModePersistent)
}

// Delivery is one notification to send: event Type on Path to Watcher.
type Delivery struct {
	Watcher WatcherID
	Type    wire.EventType
	Path    string
}

// Trigger fires the watches that a change of type t on path sets off,
// removes the one-shot (STANDARD) watches that fired, and returns the
// notifications, at most one per watcher, sorted by watcher. Every Delivery
// carries t and path (also for recursive watches registered on an ancestor).
//
//   - NodeCreated, NodeDataChanged: every data watch on path, plus
//     PERSISTENT_RECURSIVE watches on each ancestor of path up to "/".
//   - NodeDeleted: as above, plus every child watch on path; a watcher with
//     both is notified once and loses its STANDARD watch in both tables.
//   - NodeChildrenChanged: every child watch on path (the caller passes the
//     parent of the created or deleted node). Recursive watches never get it.
//   - Any other type fires nothing and returns nil.
//
// The caller applies any per-watcher filter (such as the READ permission
// check of ZOOKEEPER-4799) to the result; the watches have been consumed
// either way, as in ZooKeeper. The returned slice belongs to the caller.
func (r *Registry) Trigger(t wire.EventType, path string) []Delivery {
	var ids []WatcherID
	switch t {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		ids = r.fireData(path, ids)
	case wire.EventNodeDeleted:
		ids = r.fireData(path, ids)
		ids = r.child.fireExact(path, ids)
	case wire.EventNodeChildrenChanged:
		ids = r.child.fireExact(path, ids)
	default:
		return nil
	}
	if len(ids) == 0 {
		return nil
	}
	slices.Sort(ids)
	ids = slices.Compact(ids)
	out := make([]Delivery, len(ids))
	for i, w := range ids {
		out[i] = Delivery{Watcher: w, Type: t, Path: path}
	}
	return out
}

// fireData fires the data table on path and, only when some recursive watch
// exists, the recursive watches on its ancestors.
func (r *Registry) fireData(path string, ids []WatcherID) []WatcherID {
	ids = r.data.fireExact(path, ids)
	if r.data.recursive > 0 {
		ids = r.data.fireAncestors(path, ids)
	}
	return ids
}

// Check reports whether w holds a watch of type t on path (checkWatches,
// opcode 17; false means the reply is NOWATCHER):
//
//   - WatcherChildren: STANDARD in the child table.
//   - WatcherData: STANDARD in the data table.
//   - WatcherPersistent: PERSISTENT in the data table.
//   - WatcherPersistentRecursive: PERSISTENT_RECURSIVE in the data table.
//   - WatcherAny: any mode in either table.
//
// Any other type reports false; the caller rejects it beforehand with
// MARSHALLINGERROR.
func (r *Registry) Check(path string, w WatcherID, t wire.WatcherType) bool {
	switch t {
	case wire.WatcherChildren:
		return r.child.mode(path, w)&ModeStandard != 0
	case wire.WatcherData:
		return r.data.mode(path, w)&ModeStandard != 0
	case wire.WatcherPersistent:
		return r.data.mode(path, w)&ModePersistent != 0
	case wire.WatcherPersistentRecursive:
		return r.data.mode(path, w)&ModePersistentRecursive != 0
	case wire.WatcherAny:
		return r.child.mode(path, w)|r.data.mode(path, w) != 0
	default:
		return false
	}
}

// Remove removes w's watches of type t on path (removeWatches, opcode 18)
// and reports whether anything was removed (false means NOWATCHER):
//
//   - WatcherChildren: STANDARD from the child table.
//   - WatcherData: STANDARD from the data table.
//   - WatcherPersistent: PERSISTENT from both tables.
//   - WatcherPersistentRecursive: PERSISTENT_RECURSIVE from the data table.
//   - WatcherAny: every mode from both tables.
//
// Any other type removes nothing and reports false; the caller rejects it
// beforehand with MARSHALLINGERROR.
func (r *Registry) Remove(path string, w WatcherID, t wire.WatcherType) bool {
	switch t {
	case wire.WatcherChildren:
		return r.child.clear(path, w, ModeStandard)
	case wire.WatcherData:
		return r.data.clear(path, w, ModeStandard)
	case wire.WatcherPersistent:
		c := r.child.clear(path, w, ModePersistent)
		d := r.data.clear(path, w, ModePersistent)
		return c || d
	case wire.WatcherPersistentRecursive:
		return r.data.clear(path, w, ModePersistentRecursive)
	case wire.WatcherAny:
		c := r.child.clear(path, w, ModeAll)
		d := r.data.clear(path, w, ModeAll)
		return c || d
	default:
		return false
	}
}

// RemoveWatcher drops every watch of w (its connection closed). It costs
// O(number of paths w watches).
func (r *Registry) RemoveWatcher(w WatcherID) {
	r.data.dropWatcher(w)
	r.child.dropWatcher(w)
}

// Modes returns the modes w holds on path in the data and the child table.
func (r *Registry) Modes(path string, w WatcherID) (data, child Mode) {
	return r.data.mode(path, w), r.child.mode(path, w)
}

// Count returns the number of (path, watcher) entries in the data table
// plus those in the child table (mntr zk_watch_count). An entry counts once
// whatever its modes; a PERSISTENT watch counts once in each table.
func (r *Registry) Count() int {
	return r.data.size + r.child.size
}
