package watch

import (
	"testing"

	"github.com/wardenzk/warden/wire"
)

// checkInvariants verifies every Invariant line of table and Registry.
func checkInvariants(t *testing.T, r *Registry) {
	t.Helper()
	for _, tc := range []struct {
		name string
		tb   *table
	}{{"data", &r.data}, {"child", &r.child}} {
		size, rec := 0, 0
		for p, ws := range tc.tb.byPath {
			if len(ws) == 0 {
				t.Fatalf("%s: empty watcher map kept for %q", tc.name, p)
			}
			for w, m := range ws {
				if m == 0 || m&^ModeAll != 0 {
					t.Fatalf("%s: bad mode %b for %q/%d", tc.name, m, p, w)
				}
				if _, ok := tc.tb.byWatcher[w][p]; !ok {
					t.Fatalf("%s: %q/%d missing from reverse index", tc.name, p, w)
				}
				if m&ModePersistentRecursive != 0 {
					rec++
				}
				size++
			}
		}
		rsize := 0
		for w, ps := range tc.tb.byWatcher {
			if len(ps) == 0 {
				t.Fatalf("%s: empty path set kept for watcher %d", tc.name, w)
			}
			for p := range ps {
				if _, ok := tc.tb.byPath[p][w]; !ok {
					t.Fatalf("%s: reverse entry %d→%q has no forward entry", tc.name, w, p)
				}
			}
			rsize += len(ps)
		}
		if size != tc.tb.size || rsize != tc.tb.size {
			t.Fatalf("%s: size field %d, forward %d, reverse %d", tc.name, tc.tb.size, size, rsize)
		}
		if rec != tc.tb.recursive {
			t.Fatalf("%s: recursive field %d, counted %d", tc.name, tc.tb.recursive, rec)
		}
	}
	if r.child.recursive != 0 {
		t.Fatalf("child table holds %d recursive watches", r.child.recursive)
	}
	for p, ws := range r.data.byPath {
		for w, m := range ws {
			if m&ModePersistent != r.child.mode(p, w)&ModePersistent {
				t.Fatalf("PERSISTENT on %q/%d in data table but not child table", p, w)
			}
		}
	}
	for p, ws := range r.child.byPath {
		for w, m := range ws {
			if m&ModePersistent != r.data.mode(p, w)&ModePersistent {
				t.Fatalf("PERSISTENT on %q/%d in child table but not data table", p, w)
			}
		}
	}
}

// to builds the deliveries of one event to the given watchers, in order.
func to(typ wire.EventType, path string, ws ...WatcherID) []Delivery {
	out := make([]Delivery, 0, len(ws))
	for _, w := range ws {
		out = append(out, Delivery{Watcher: w, Type: typ, Path: path})
	}
	return out
}
