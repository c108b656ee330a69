package watch

// table is one watch table (data or child): path → watcher → modes, plus the
// reverse index watcher → paths that makes RemoveWatcher cost O(its watches).
//
// Invariant: w ∈ byPath[p] ⇔ p ∈ byWatcher[w]; byPath[p][w] != 0.
// Invariant: no inner map is empty (an emptied one is deleted at once).
// Invariant: size == Σ len(byPath[p]) == Σ len(byWatcher[w]).
// Invariant: recursive == number of (p, w) with byPath[p][w]&ModePersistentRecursive != 0.
type table struct {
	byPath    map[string]map[WatcherID]Mode
	byWatcher map[WatcherID]map[string]struct{}
	size      int
	recursive int
}

func newTable() table {
	return table{
		byPath:    make(map[string]map[WatcherID]Mode),
		byWatcher: make(map[WatcherID]map[string]struct{}),
	}
}

// mode returns the modes w holds on path (0 if none).
func (t *table) mode(path string, w WatcherID) Mode {
	return t.byPath[path][w]
}

// add ORs m into w's modes on path.
func (t *table) add(path string, w WatcherID, m Mode) {
	ws := t.byPath[path]
	if ws == nil {
		ws = make(map[WatcherID]Mode, 1)
		t.byPath[path] = ws
	}
	old, ok := ws[w]
	if !ok {
		ps := t.byWatcher[w]
		if ps == nil {
			ps = make(map[string]struct{})
			t.byWatcher[w] = ps
		}
		ps[path] = struct{}{}
		t.size++
	}
	if old&ModePersistentRecursive == 0 && m&ModePersistentRecursive != 0 {
		t.recursive++
	}
	ws[w] = old | m
}

// clear removes the modes m from w's entry on path, dropping the entry (and
// any map it empties) when no mode is left. It reports whether any mode was
// removed.
func (t *table) clear(path string, w WatcherID, m Mode) bool {
	ws := t.byPath[path]
	old := ws[w]
	if old&m == 0 {
		return false
	}
	if old&m&ModePersistentRecursive != 0 {
		t.recursive--
	}
	if left := old &^ m; left != 0 {
		ws[w] = left
		return true
	}
	delete(ws, w)
	if len(ws) == 0 {
		delete(t.byPath, path)
	}
	ps := t.byWatcher[w]
	delete(ps, path)
	if len(ps) == 0 {
		delete(t.byWatcher, w)
	}
	t.size--
	return true
}

// fireExact appends every watcher on path to ids and strips their STANDARD
// mode (one-shot); persistent and recursive modes stay.
func (t *table) fireExact(path string, ids []WatcherID) []WatcherID {
	ws := t.byPath[path]
	for w, m := range ws {
		ids = append(ids, w)
		if m&ModeStandard != 0 {
			t.clear(path, w, ModeStandard)
		}
	}
	return ids
}

// fireAncestors appends the watchers holding PERSISTENT_RECURSIVE on each
// proper ancestor of path, up to and including "/".
func (t *table) fireAncestors(path string, ids []WatcherID) []WatcherID {
	for p := path; p != "/"; {
		p = parent(p)
		for w, m := range t.byPath[p] {
			if m&ModePersistentRecursive != 0 {
				ids = append(ids, w)
			}
		}
	}
	return ids
}

// dropWatcher removes every entry of w.
func (t *table) dropWatcher(w WatcherID) {
	for p := range t.byWatcher[w] {
		t.clear(p, w, ModeAll)
	}
}

// parent returns the parent of an absolute path; the parent of a top-level
// node (and of anything without a slash) is "/".
func parent(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
