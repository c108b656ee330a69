package watch

import (
	"maps"
	"slices"
)

// The 4lw commands wchs, wchc and wchp (and the AdminServer equivalents) show
// the data table only, as ZooKeeper does: child watches are never listed.

// DataPathsByWatcher returns, for each watcher with a data-table entry, the
// paths it watches, sorted (wchc). The result belongs to the caller.
func (r *Registry) DataPathsByWatcher() map[WatcherID][]string {
	out := make(map[WatcherID][]string, len(r.data.byWatcher))
	for w, ps := range r.data.byWatcher {
		out[w] = slices.Sorted(maps.Keys(ps))
	}
	return out
}

// DataWatchersByPath returns, for each path in the data table, its watchers,
// sorted (wchp). The result belongs to the caller.
func (r *Registry) DataWatchersByPath() map[string][]WatcherID {
	out := make(map[string][]WatcherID, len(r.data.byPath))
	for p, ws := range r.data.byPath {
		out[p] = slices.Sorted(maps.Keys(ws))
	}
	return out
}

// DataSummary returns the wchs figures: the number of watchers with a data
// watch, the number of watched paths and the number of (path, watcher)
// entries in the data table.
func (r *Registry) DataSummary() (watchers, paths, total int) {
	return len(r.data.byWatcher), len(r.data.byPath), r.data.size
}

// WatchedPaths returns the paths of w's watches by kind, each sorted: data
// (STANDARD in the data table: exists and getData watches), child (STANDARD
// in the child table), persistent (PERSISTENT) and recursive
// (PERSISTENT_RECURSIVE). These are the lists SetWatches2 would carry.
func (r *Registry) WatchedPaths(w WatcherID) (data, child, persistent, recursive []string) {
	for p := range r.data.byWatcher[w] {
		m := r.data.mode(p, w)
		if m&ModeStandard != 0 {
			data = append(data, p)
		}
		if m&ModePersistent != 0 {
			persistent = append(persistent, p)
		}
		if m&ModePersistentRecursive != 0 {
			recursive = append(recursive, p)
		}
	}
	for p := range r.child.byWatcher[w] {
		if r.child.mode(p, w)&ModeStandard != 0 {
			child = append(child, p)
		}
	}
	slices.Sort(data)
	slices.Sort(child)
	slices.Sort(persistent)
	slices.Sort(recursive)
	return data, child, persistent, recursive
}
