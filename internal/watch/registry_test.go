package watch

import (
	"slices"
	"testing"

	"github.com/wardenzk/warden/wire"
)

const (
	created  = wire.EventNodeCreated
	deleted  = wire.EventNodeDeleted
	changed  = wire.EventNodeDataChanged
	children = wire.EventNodeChildrenChanged
)

type event struct {
	typ  wire.EventType
	path string
}

// The tree changes of §4, as the server turns them into Trigger calls.
func createOf(p string) []event  { return []event{{created, p}, {children, parent(p)}} }
func deleteOf(p string) []event  { return []event{{deleted, p}, {children, parent(p)}} }
func setDataOf(p string) []event { return []event{{changed, p}} }

// TestEventTable checks every row of the "which change fires what" table.
func TestEventTable(t *testing.T) {
	const w1 = WatcherID(1)
	tests := []struct {
		name   string
		setup  func(r *Registry)
		change []event
		want   []Delivery
	}{
		// create P
		{"create/exists watch on P", func(r *Registry) { r.AddData("/a/b", w1) },
			createOf("/a/b"), to(created, "/a/b", w1)},
		{"create/persistent on P", func(r *Registry) { r.AddPersistent("/a/b", w1, false) },
			createOf("/a/b"), to(created, "/a/b", w1)},
		{"create/recursive on P", func(r *Registry) { r.AddPersistent("/a/b", w1, true) },
			createOf("/a/b"), to(created, "/a/b", w1)},
		{"create/recursive on parent gets NodeCreated only", func(r *Registry) { r.AddPersistent("/a", w1, true) },
			createOf("/a/b"), to(created, "/a/b", w1)},
		{"create/recursive on root", func(r *Registry) { r.AddPersistent("/", w1, true) },
			createOf("/a/b"), to(created, "/a/b", w1)},
		{"create/child watch on parent", func(r *Registry) { r.AddChild("/a", w1) },
			createOf("/a/b"), to(children, "/a", w1)},
		{"create/persistent on parent", func(r *Registry) { r.AddPersistent("/a", w1, false) },
			createOf("/a/b"), to(children, "/a", w1)},
		{"create/child watch on root for top-level node", func(r *Registry) { r.AddChild("/", w1) },
			createOf("/a"), to(children, "/", w1)},
		{"create/child watch on P", func(r *Registry) { r.AddChild("/a/b", w1) },
			createOf("/a/b"), nil},
		{"create/data watch on parent", func(r *Registry) { r.AddData("/a", w1) },
			createOf("/a/b"), nil},
		{"create/persistent on grandparent", func(r *Registry) { r.AddPersistent("/", w1, false) },
			createOf("/a/b"), nil},
		{"create/sibling with common prefix", func(r *Registry) { r.AddPersistent("/a/b", w1, true) },
			createOf("/a/bc"), nil},

		// delete P
		{"delete/data watch on P", func(r *Registry) { r.AddData("/a/b", w1) },
			deleteOf("/a/b"), to(deleted, "/a/b", w1)},
		{"delete/child watch on P", func(r *Registry) { r.AddChild("/a/b", w1) },
			deleteOf("/a/b"), to(deleted, "/a/b", w1)},
		{"delete/data and child watch on P: once", func(r *Registry) { r.AddData("/a/b", w1); r.AddChild("/a/b", w1) },
			deleteOf("/a/b"), to(deleted, "/a/b", w1)},
		{"delete/persistent on P: once", func(r *Registry) { r.AddPersistent("/a/b", w1, false) },
			deleteOf("/a/b"), to(deleted, "/a/b", w1)},
		{"delete/recursive on P", func(r *Registry) { r.AddPersistent("/a/b", w1, true) },
			deleteOf("/a/b"), to(deleted, "/a/b", w1)},
		{"delete/recursive on ancestor", func(r *Registry) { r.AddPersistent("/", w1, true) },
			deleteOf("/a/b"), to(deleted, "/a/b", w1)},
		{"delete/child watch on parent", func(r *Registry) { r.AddChild("/a", w1) },
			deleteOf("/a/b"), to(children, "/a", w1)},
		{"delete/persistent on parent", func(r *Registry) { r.AddPersistent("/a", w1, false) },
			deleteOf("/a/b"), to(children, "/a", w1)},
		{"delete/data watch on parent", func(r *Registry) { r.AddData("/a", w1) },
			deleteOf("/a/b"), nil},

		// setData P
		{"setData/data watch on P", func(r *Registry) { r.AddData("/a/b", w1) },
			setDataOf("/a/b"), to(changed, "/a/b", w1)},
		{"setData/persistent on P", func(r *Registry) { r.AddPersistent("/a/b", w1, false) },
			setDataOf("/a/b"), to(changed, "/a/b", w1)},
		{"setData/recursive on ancestor", func(r *Registry) { r.AddPersistent("/a", w1, true) },
			setDataOf("/a/b/c"), to(changed, "/a/b/c", w1)},
		{"setData/child watch on P", func(r *Registry) { r.AddChild("/a/b", w1) },
			setDataOf("/a/b"), nil},
		{"setData/child watch on parent", func(r *Registry) { r.AddChild("/a", w1) },
			setDataOf("/a/b"), nil},
		{"setData/standard watch on ancestor", func(r *Registry) { r.AddData("/a", w1); r.AddPersistent("/x", 2, true) },
			setDataOf("/a/b"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			tt.setup(r)
			var got []Delivery
			for _, e := range tt.change {
				got = append(got, r.Trigger(e.typ, e.path)...)
			}
			if !slices.Equal(got, tt.want) {
				t.Fatalf("deliveries = %v, want %v", got, tt.want)
			}
			checkInvariants(t, r)
		})
	}
}

func TestStandardWatchFiresOnce(t *testing.T) {
	tests := []struct {
		name string
		add  func(r *Registry)
		typ  wire.EventType
	}{
		{"data", func(r *Registry) { r.AddData("/a", 7) }, changed},
		{"exists", func(r *Registry) { r.AddData("/a", 7) }, created},
		{"child", func(r *Registry) { r.AddChild("/a", 7) }, children},
		{"data on delete", func(r *Registry) { r.AddData("/a", 7) }, deleted},
		{"child on delete", func(r *Registry) { r.AddChild("/a", 7) }, deleted},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := NewRegistry()
			tt.add(r)
			if got, want := r.Trigger(tt.typ, "/a"), to(tt.typ, "/a", 7); !slices.Equal(got, want) {
				t.Fatalf("first trigger = %v, want %v", got, want)
			}
			if got := r.Trigger(tt.typ, "/a"); got != nil {
				t.Fatalf("second trigger = %v, want nil", got)
			}
			if r.Count() != 0 {
				t.Fatalf("Count = %d after one-shot fired", r.Count())
			}
			checkInvariants(t, r)
		})
	}
}

func TestPersistentWatchesStay(t *testing.T) {
	r := NewRegistry()
	r.AddPersistent("/p", 1, false)
	r.AddPersistent("/", 2, true)
	for i := range 3 {
		for _, typ := range []wire.EventType{created, changed, deleted} {
			if got, want := r.Trigger(typ, "/p"), to(typ, "/p", 1, 2); !slices.Equal(got, want) {
				t.Fatalf("round %d %v: got %v, want %v", i, typ, got, want)
			}
		}
		if got, want := r.Trigger(children, "/p"), to(children, "/p", 1); !slices.Equal(got, want) {
			t.Fatalf("round %d children: got %v, want %v", i, got, want)
		}
	}
	if r.Count() != 3 {
		t.Fatalf("Count = %d, want 3 (persistent in both tables + recursive)", r.Count())
	}
	checkInvariants(t, r)
}

func TestStandardAndPersistentOnSamePath(t *testing.T) {
	r := NewRegistry()
	r.AddData("/a", 1)
	r.AddPersistent("/a", 1, false)
	r.AddPersistent("/a", 1, true)
	if d, _ := r.Modes("/a", 1); d != ModeAll {
		t.Fatalf("data modes = %b, want %b", d, ModeAll)
	}
	if got, want := r.Trigger(changed, "/a"), to(changed, "/a", 1); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v (one notification)", got, want)
	}
	if d, c := r.Modes("/a", 1); d != ModePersistent|ModePersistentRecursive || c != ModePersistent {
		t.Fatalf("modes after trigger = %b/%b, want STANDARD stripped only", d, c)
	}
	if got, want := r.Trigger(changed, "/a"), to(changed, "/a", 1); !slices.Equal(got, want) {
		t.Fatalf("second trigger got %v, want %v", got, want)
	}
	checkInvariants(t, r)
}

func TestRecursiveWatches(t *testing.T) {
	r := NewRegistry()
	r.AddPersistent("/", 1, true)
	r.AddPersistent("/a", 2, true)
	r.AddPersistent("/a/b/c", 3, true)
	r.AddPersistent("/b", 4, true)
	r.AddChild("/a/b", 5)
	tests := []struct {
		typ  wire.EventType
		path string
		want []WatcherID
	}{
		{created, "/a/b/c/d", []WatcherID{1, 2, 3}},
		{changed, "/a/b/c", []WatcherID{1, 2, 3}},
		{deleted, "/a/b", []WatcherID{1, 2, 5}},
		{changed, "/a", []WatcherID{1, 2}},
		{changed, "/", []WatcherID{1}},
		{created, "/bb", []WatcherID{1}},
		{changed, "/b/x", []WatcherID{1, 4}},
		// Recursive watchers never get NodeChildrenChanged, on the path or above.
		{children, "/", nil},
		{children, "/a", nil},
		{children, "/a/b/c", nil},
	}
	for _, tt := range tests {
		got := r.Trigger(tt.typ, tt.path)
		if want := to(tt.typ, tt.path, tt.want...); !slices.Equal(got, want) {
			t.Errorf("Trigger(%v, %q) = %v, want %v", tt.typ, tt.path, got, want)
		}
	}
	checkInvariants(t, r)
}

func TestDeleteSuppression(t *testing.T) {
	r := NewRegistry()
	r.AddData("/n", 1)
	r.AddChild("/n", 1)
	r.AddChild("/n", 2)
	r.AddData("/n", 3)
	r.AddPersistent("/n", 4, false)
	r.AddData("/n", 4)
	r.AddChild("/n", 4)
	r.AddPersistent("/", 4, true)
	got := r.Trigger(deleted, "/n")
	if want := to(deleted, "/n", 1, 2, 3, 4); !slices.Equal(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	d, c := r.Modes("/n", 4)
	if d != ModePersistent || c != ModePersistent {
		t.Fatalf("watcher 4 modes = %b/%b, want STANDARD gone from both tables", d, c)
	}
	if r.Count() != 3 {
		t.Fatalf("Count = %d, want 3", r.Count())
	}
	checkInvariants(t, r)
}

func TestAddDeduplicates(t *testing.T) {
	r := NewRegistry()
	for range 3 {
		r.AddData("/a", 1)
		r.AddChild("/a", 1)
		r.AddPersistent("/b", 1, false)
		r.AddPersistent("/c", 1, true)
	}
	// data: /a /b /c; child: /a /b.
	if r.Count() != 5 {
		t.Fatalf("Count = %d, want 5", r.Count())
	}
	if r.data.recursive != 1 {
		t.Fatalf("recursive count = %d, want 1", r.data.recursive)
	}
	checkInvariants(t, r)
}

func TestTriggerIgnoresOtherEventTypes(t *testing.T) {
	r := NewRegistry()
	r.AddData("/a", 1)
	r.AddChild("/a", 1)
	for _, typ := range []wire.EventType{wire.EventNone, wire.EventDataWatchRemoved,
		wire.EventChildWatchRemoved, wire.EventPersistentWatchRemoved, 0, 99} {
		if got := r.Trigger(typ, "/a"); got != nil {
			t.Errorf("Trigger(%v) = %v, want nil", typ, got)
		}
	}
	if r.Count() != 2 {
		t.Fatalf("Count = %d, want 2 (nothing consumed)", r.Count())
	}
}

func TestCheckAndRemove(t *testing.T) {
	const p = "/w"
	regs := map[string]func(r *Registry){
		"none":       func(*Registry) {},
		"data":       func(r *Registry) { r.AddData(p, 1) },
		"child":      func(r *Registry) { r.AddChild(p, 1) },
		"persistent": func(r *Registry) { r.AddPersistent(p, 1, false) },
		"recursive":  func(r *Registry) { r.AddPersistent(p, 1, true) },
		"data+pers":  func(r *Registry) { r.AddData(p, 1); r.AddPersistent(p, 1, false) },
		"all": func(r *Registry) {
			r.AddData(p, 1)
			r.AddChild(p, 1)
			r.AddPersistent(p, 1, false)
			r.AddPersistent(p, 1, true)
		},
		"other conn": func(r *Registry) {
			r.AddData(p, 2)
			r.AddChild(p, 2)
			r.AddPersistent(p, 2, false)
			r.AddPersistent(p, 2, true)
		},
		"other path": func(r *Registry) {
			r.AddData("/v", 1)
			r.AddChild("/v", 1)
			r.AddPersistent("/v", 1, false)
			r.AddPersistent("/", 1, true)
		},
		"child+recur": func(r *Registry) { r.AddChild(p, 1); r.AddPersistent(p, 1, true) },
	}
	const (
		S = ModeStandard
		P = ModePersistent
		R = ModePersistentRecursive
	)
	tests := []struct {
		reg string
		typ wire.WatcherType
		ok  bool // Check result == Remove result (false = NOWATCHER)
		// modes of watcher 1 on p after Remove
		data, child Mode
	}{
		{"none", wire.WatcherChildren, false, 0, 0},
		{"none", wire.WatcherData, false, 0, 0},
		{"none", wire.WatcherAny, false, 0, 0},
		{"none", wire.WatcherPersistent, false, 0, 0},
		{"none", wire.WatcherPersistentRecursive, false, 0, 0},

		{"data", wire.WatcherChildren, false, S, 0},
		{"data", wire.WatcherData, true, 0, 0},
		{"data", wire.WatcherAny, true, 0, 0},
		{"data", wire.WatcherPersistent, false, S, 0},
		{"data", wire.WatcherPersistentRecursive, false, S, 0},

		{"child", wire.WatcherChildren, true, 0, 0},
		{"child", wire.WatcherData, false, 0, S},
		{"child", wire.WatcherAny, true, 0, 0},
		{"child", wire.WatcherPersistent, false, 0, S},
		{"child", wire.WatcherPersistentRecursive, false, 0, S},

		{"persistent", wire.WatcherChildren, false, P, P},
		{"persistent", wire.WatcherData, false, P, P},
		{"persistent", wire.WatcherAny, true, 0, 0},
		{"persistent", wire.WatcherPersistent, true, 0, 0},
		{"persistent", wire.WatcherPersistentRecursive, false, P, P},

		{"recursive", wire.WatcherChildren, false, R, 0},
		{"recursive", wire.WatcherData, false, R, 0},
		{"recursive", wire.WatcherAny, true, 0, 0},
		{"recursive", wire.WatcherPersistent, false, R, 0},
		{"recursive", wire.WatcherPersistentRecursive, true, 0, 0},

		{"data+pers", wire.WatcherData, true, P, P},
		{"data+pers", wire.WatcherPersistent, true, S, 0},
		{"data+pers", wire.WatcherAny, true, 0, 0},

		{"all", wire.WatcherChildren, true, S | P | R, P},
		{"all", wire.WatcherData, true, P | R, S | P},
		{"all", wire.WatcherPersistent, true, S | R, S},
		{"all", wire.WatcherPersistentRecursive, true, S | P, S | P},
		{"all", wire.WatcherAny, true, 0, 0},

		{"child+recur", wire.WatcherAny, true, 0, 0},
		{"child+recur", wire.WatcherPersistentRecursive, true, 0, S},

		{"other conn", wire.WatcherChildren, false, 0, 0},
		{"other conn", wire.WatcherData, false, 0, 0},
		{"other conn", wire.WatcherAny, false, 0, 0},
		{"other conn", wire.WatcherPersistent, false, 0, 0},
		{"other conn", wire.WatcherPersistentRecursive, false, 0, 0},

		// A recursive watch on "/" covers /w for events but is not a watch on /w.
		{"other path", wire.WatcherChildren, false, 0, 0},
		{"other path", wire.WatcherData, false, 0, 0},
		{"other path", wire.WatcherAny, false, 0, 0},
		{"other path", wire.WatcherPersistent, false, 0, 0},
		{"other path", wire.WatcherPersistentRecursive, false, 0, 0},

		// Unknown types: the server answers MARSHALLINGERROR before calling.
		{"all", 0, false, S | P | R, S | P},
		{"all", 6, false, S | P | R, S | P},
		{"all", -1, false, S | P | R, S | P},
	}
	for _, tt := range tests {
		t.Run(tt.reg+"/"+typeName(tt.typ), func(t *testing.T) {
			r := NewRegistry()
			regs[tt.reg](r)
			before := r.Count()
			if got := r.Check(p, 1, tt.typ); got != tt.ok {
				t.Fatalf("Check = %v, want %v", got, tt.ok)
			}
			if r.Count() != before {
				t.Fatalf("Check changed Count %d → %d", before, r.Count())
			}
			if got := r.Remove(p, 1, tt.typ); got != tt.ok {
				t.Fatalf("Remove = %v, want %v", got, tt.ok)
			}
			if d, c := r.Modes(p, 1); d != tt.data || c != tt.child {
				t.Fatalf("modes after Remove = %b/%b, want %b/%b", d, c, tt.data, tt.child)
			}
			if r.Remove(p, 1, tt.typ) {
				t.Fatalf("second Remove reported success")
			}
			if r.Check(p, 1, tt.typ) {
				t.Fatalf("Check after Remove reported a watch")
			}
			checkInvariants(t, r)
		})
	}
}

func typeName(t wire.WatcherType) string {
	switch t {
	case wire.WatcherChildren:
		return "Children"
	case wire.WatcherData:
		return "Data"
	case wire.WatcherAny:
		return "Any"
	case wire.WatcherPersistent:
		return "Persistent"
	case wire.WatcherPersistentRecursive:
		return "PersistentRecursive"
	}
	return "invalid"
}

func TestRemoveWatcherLeavesNoTrace(t *testing.T) {
	r := NewRegistry()
	for _, w := range []WatcherID{1, 2} {
		r.AddData("/a", w)
		r.AddData("/missing", w)
		r.AddChild("/a", w)
		r.AddPersistent("/a", w, false)
		r.AddPersistent("/b", w, false)
		r.AddPersistent("/", w, true)
	}
	r.AddChild("/only1", 1)
	r.AddPersistent("/only1/x", 1, true)

	r.RemoveWatcher(1)
	checkInvariants(t, r)
	if len(r.data.byWatcher) != 1 || len(r.child.byWatcher) != 1 {
		t.Fatalf("reverse indexes hold %d/%d watchers, want 1/1", len(r.data.byWatcher), len(r.child.byWatcher))
	}
	if _, ok := r.child.byPath["/only1"]; ok {
		t.Fatalf("empty path entry /only1 kept")
	}
	if r.data.recursive != 1 {
		t.Fatalf("recursive count = %d, want 1", r.data.recursive)
	}
	if got := r.Trigger(changed, "/a"); !slices.Equal(got, to(changed, "/a", 2)) {
		t.Fatalf("after RemoveWatcher(1): %v", got)
	}

	r.RemoveWatcher(2)
	r.RemoveWatcher(3) // unknown watcher: no-op
	checkInvariants(t, r)
	if r.Count() != 0 {
		t.Fatalf("Count = %d, want 0", r.Count())
	}
	for name, n := range map[string]int{
		"data.byPath": len(r.data.byPath), "data.byWatcher": len(r.data.byWatcher),
		"child.byPath": len(r.child.byPath), "child.byWatcher": len(r.child.byWatcher),
		"data.recursive": r.data.recursive, "data.size": r.data.size, "child.size": r.child.size,
	} {
		if n != 0 {
			t.Errorf("%s = %d, want 0", name, n)
		}
	}
}

// TestTriggerUnwatchedPathIsFree checks the common case of a write nobody
// watches: no ancestor walk without recursive watches, and no allocation.
func TestTriggerUnwatchedPathIsFree(t *testing.T) {
	r := NewRegistry()
	for w := range WatcherID(100) {
		r.AddData("/other", w)
		r.AddChild("/other", w)
		r.AddPersistent("/", w, false)
	}
	allocs := testing.AllocsPerRun(100, func() {
		if got := r.Trigger(changed, "/a/b/c"); got != nil {
			t.Fatalf("Trigger = %v, want nil", got)
		}
	})
	if allocs != 0 {
		t.Fatalf("Trigger on an unwatched path allocated %v times", allocs)
	}
}
