package watch

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/wardenzk/warden/wire"
)

// model is the naive registry: a flat set of (table, path, watcher) → modes,
// scanned in full for every question.
type model map[modelKey]Mode

type modelKey struct {
	child bool
	path  string
	w     WatcherID
}

func (m model) add(child bool, path string, w WatcherID, mode Mode) {
	m[modelKey{child, path, w}] |= mode
}

// clear removes mode bits and reports whether any was set.
func (m model) clear(child bool, path string, w WatcherID, mode Mode) bool {
	k := modelKey{child, path, w}
	old := m[k]
	if old&mode == 0 {
		return false
	}
	if old&^mode == 0 {
		delete(m, k)
	} else {
		m[k] = old &^ mode
	}
	return true
}

func isAncestor(a, p string) bool {
	if a == p {
		return false
	}
	return a == "/" || strings.HasPrefix(p, a+"/")
}

func (m model) trigger(t wire.EventType, path string) []Delivery {
	var dataTable, childTable bool
	switch t {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		dataTable = true
	case wire.EventNodeDeleted:
		dataTable, childTable = true, true
	case wire.EventNodeChildrenChanged:
		childTable = true
	default:
		return nil
	}
	hit := map[WatcherID]bool{}
	for k, mode := range m {
		if (k.child && !childTable) || (!k.child && !dataTable) {
			continue
		}
		switch {
		case k.path == path:
			hit[k.w] = true
			m.clear(k.child, k.path, k.w, ModeStandard)
		case !k.child && mode&ModePersistentRecursive != 0 && isAncestor(k.path, path):
			hit[k.w] = true
		}
	}
	var out []Delivery
	for _, w := range slices.Sorted(maps.Keys(hit)) {
		out = append(out, Delivery{Watcher: w, Type: t, Path: path})
	}
	return out
}

func (m model) check(path string, w WatcherID, t wire.WatcherType) bool {
	d, c := m[modelKey{false, path, w}], m[modelKey{true, path, w}]
	switch t {
	case wire.WatcherChildren:
		return c&ModeStandard != 0
	case wire.WatcherData:
		return d&ModeStandard != 0
	case wire.WatcherPersistent:
		return d&ModePersistent != 0
	case wire.WatcherPersistentRecursive:
		return d&ModePersistentRecursive != 0
	case wire.WatcherAny:
		return d|c != 0
	}
	return false
}

func (m model) remove(path string, w WatcherID, t wire.WatcherType) bool {
	switch t {
	case wire.WatcherChildren:
		return m.clear(true, path, w, ModeStandard)
	case wire.WatcherData:
		return m.clear(false, path, w, ModeStandard)
	case wire.WatcherPersistent:
		c := m.clear(true, path, w, ModePersistent)
		return m.clear(false, path, w, ModePersistent) || c
	case wire.WatcherPersistentRecursive:
		return m.clear(false, path, w, ModePersistentRecursive)
	case wire.WatcherAny:
		c := m.clear(true, path, w, ModeAll)
		return m.clear(false, path, w, ModeAll) || c
	}
	return false
}

func (m model) removeWatcher(w WatcherID) {
	for k := range m {
		if k.w == w {
			delete(m, k)
		}
	}
}

func (m model) dataByWatcher() map[WatcherID][]string {
	out := map[WatcherID][]string{}
	for k := range m {
		if !k.child {
			out[k.w] = append(out[k.w], k.path)
		}
	}
	for _, ps := range out {
		slices.Sort(ps)
	}
	return out
}

func (m model) dataByPath() map[string][]WatcherID {
	out := map[string][]WatcherID{}
	for k := range m {
		if !k.child {
			out[k.path] = append(out[k.path], k.w)
		}
	}
	for _, ws := range out {
		slices.Sort(ws)
	}
	return out
}

func (m model) watched(w WatcherID) (data, child, persistent, recursive []string) {
	for k, mode := range m {
		if k.w != w {
			continue
		}
		switch {
		case k.child && mode&ModeStandard != 0:
			child = append(child, k.path)
		case !k.child:
			if mode&ModeStandard != 0 {
				data = append(data, k.path)
			}
			if mode&ModePersistent != 0 {
				persistent = append(persistent, k.path)
			}
			if mode&ModePersistentRecursive != 0 {
				recursive = append(recursive, k.path)
			}
		}
	}
	for _, s := range [][]string{data, child, persistent, recursive} {
		slices.Sort(s)
	}
	return data, child, persistent, recursive
}

// TestRegistryMatchesModel runs random operation sequences against Registry
// and model and compares every answer and the full observable state.
func TestRegistryMatchesModel(t *testing.T) {
	// "/a/bc" shares a string prefix with "/a/b" without being its child.
	paths := []string{"/", "/a", "/a/b", "/a/b/c", "/a/bc", "/b", "/zookeeper"}
	const (
		seeds    = 40
		steps    = 1500
		watchers = 4
	)
	for seed := range uint64(seeds) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 0x77a7c4))
			r, m := NewRegistry(), model{}
			for step := range steps {
				path := paths[rng.IntN(len(paths))]
				w := WatcherID(1 + rng.IntN(watchers))
				var op string
				switch n := rng.IntN(100); {
				case n < 20:
					op = fmt.Sprintf("AddData(%q, %d)", path, w)
					r.AddData(path, w)
					m.add(false, path, w, ModeStandard)
				case n < 32:
					op = fmt.Sprintf("AddChild(%q, %d)", path, w)
					r.AddChild(path, w)
					m.add(true, path, w, ModeStandard)
				case n < 40:
					rec := rng.IntN(2) == 0
					op = fmt.Sprintf("AddPersistent(%q, %d, %v)", path, w, rec)
					r.AddPersistent(path, w, rec)
					if rec {
						m.add(false, path, w, ModePersistentRecursive)
					} else {
						m.add(false, path, w, ModePersistent)
						m.add(true, path, w, ModePersistent)
					}
				case n < 75:
					typ := wire.EventType(rng.IntN(6)) // includes 0 and 5: fire nothing
					op = fmt.Sprintf("Trigger(%v, %q)", typ, path)
					got, want := r.Trigger(typ, path), m.trigger(typ, path)
					if !slices.Equal(got, want) {
						t.Fatalf("step %d %s = %v, model %v", step, op, got, want)
					}
				case n < 85:
					typ := wire.WatcherType(rng.IntN(7))
					op = fmt.Sprintf("Check(%q, %d, %v)", path, w, typ)
					if got, want := r.Check(path, w, typ), m.check(path, w, typ); got != want {
						t.Fatalf("step %d %s = %v, model %v", step, op, got, want)
					}
				case n < 97:
					typ := wire.WatcherType(rng.IntN(7))
					op = fmt.Sprintf("Remove(%q, %d, %v)", path, w, typ)
					if got, want := r.Remove(path, w, typ), m.remove(path, w, typ); got != want {
						t.Fatalf("step %d %s = %v, model %v", step, op, got, want)
					}
				default:
					op = fmt.Sprintf("RemoveWatcher(%d)", w)
					r.RemoveWatcher(w)
					m.removeWatcher(w)
				}
				checkInvariants(t, r)
				compareState(t, r, m, paths, watchers, fmt.Sprintf("after step %d %s", step, op))
			}
		})
	}
}

func compareState(t *testing.T, r *Registry, m model, paths []string, watchers int, when string) {
	t.Helper()
	if r.Count() != len(m) {
		t.Fatalf("%s: Count = %d, model %d", when, r.Count(), len(m))
	}
	mw, mp := m.dataByWatcher(), m.dataByPath()
	if got := r.DataPathsByWatcher(); !maps.EqualFunc(got, mw, slices.Equal) {
		t.Fatalf("%s: DataPathsByWatcher = %v, model %v", when, got, mw)
	}
	if got := r.DataWatchersByPath(); !maps.EqualFunc(got, mp, slices.Equal) {
		t.Fatalf("%s: DataWatchersByPath = %v, model %v", when, got, mp)
	}
	total := 0
	for _, ps := range mw {
		total += len(ps)
	}
	if w, p, n := r.DataSummary(); w != len(mw) || p != len(mp) || n != total {
		t.Fatalf("%s: DataSummary = %d %d %d, model %d %d %d", when, w, p, n, len(mw), len(mp), total)
	}
	for w := WatcherID(1); w <= WatcherID(watchers); w++ {
		d, c, p, rec := r.WatchedPaths(w)
		md, mc, mpers, mrec := m.watched(w)
		if !slices.Equal(d, md) || !slices.Equal(c, mc) || !slices.Equal(p, mpers) || !slices.Equal(rec, mrec) {
			t.Fatalf("%s: WatchedPaths(%d) = %v %v %v %v, model %v %v %v %v",
				when, w, d, c, p, rec, md, mc, mpers, mrec)
		}
		for _, path := range paths {
			d, c := r.Modes(path, w)
			if d != m[modelKey{false, path, w}] || c != m[modelKey{true, path, w}] {
				t.Fatalf("%s: Modes(%q, %d) = %b/%b, model %b/%b", when, path, w, d, c,
					m[modelKey{false, path, w}], m[modelKey{true, path, w}])
			}
		}
	}
}
