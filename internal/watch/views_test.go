package watch

import (
	"maps"
	"slices"
	"testing"
)

// fourLetterSetup registers data, child, persistent and recursive watches of
// three connections; connection 3 has child watches only.
func fourLetterSetup() *Registry {
	r := NewRegistry()
	r.AddData("/z", 1)
	r.AddData("/a", 1)
	r.AddPersistent("/a", 1, false) // same data entry as the exists watch
	r.AddChild("/a", 1)
	r.AddPersistent("/", 2, true)
	r.AddData("/a", 2)
	r.AddChild("/c", 3)
	return r
}

func TestDataViewsListDataTableOnly(t *testing.T) {
	r := fourLetterSetup()

	byWatcher := r.DataPathsByWatcher()
	wantByWatcher := map[WatcherID][]string{1: {"/a", "/z"}, 2: {"/", "/a"}}
	if !maps.EqualFunc(byWatcher, wantByWatcher, slices.Equal) {
		t.Errorf("DataPathsByWatcher = %v, want %v", byWatcher, wantByWatcher)
	}

	byPath := r.DataWatchersByPath()
	wantByPath := map[string][]WatcherID{"/": {2}, "/a": {1, 2}, "/z": {1}}
	if !maps.EqualFunc(byPath, wantByPath, slices.Equal) {
		t.Errorf("DataWatchersByPath = %v, want %v", byPath, wantByPath)
	}

	if w, p, n := r.DataSummary(); w != 2 || p != 3 || n != 4 {
		t.Errorf("DataSummary = %d, %d, %d; want 2, 3, 4", w, p, n)
	}
	// data: (/z,1) (/a,1) (/,2) (/a,2); child: (/a,1) (/c,3).
	if r.Count() != 6 {
		t.Errorf("Count = %d, want 6", r.Count())
	}

	// The views are copies: changing them leaves the registry alone.
	byWatcher[1][0] = "/changed"
	byPath["/a"][0] = 99
	if got := r.DataPathsByWatcher()[1]; !slices.Equal(got, []string{"/a", "/z"}) {
		t.Errorf("registry changed through a view: %v", got)
	}
}

func TestDataViewsEmpty(t *testing.T) {
	r := NewRegistry()
	r.AddChild("/c", 1)
	if got := r.DataPathsByWatcher(); len(got) != 0 {
		t.Errorf("DataPathsByWatcher = %v, want empty", got)
	}
	if got := r.DataWatchersByPath(); len(got) != 0 {
		t.Errorf("DataWatchersByPath = %v, want empty", got)
	}
	if w, p, n := r.DataSummary(); w != 0 || p != 0 || n != 0 {
		t.Errorf("DataSummary = %d, %d, %d; want zeros", w, p, n)
	}
}

func TestWatchedPaths(t *testing.T) {
	r := fourLetterSetup()
	r.AddPersistent("/b", 1, true)
	r.AddPersistent("/a", 1, true)
	tests := []struct {
		w                                  WatcherID
		data, child, persistent, recursive []string
	}{
		{1, []string{"/a", "/z"}, []string{"/a"}, []string{"/a"}, []string{"/a", "/b"}},
		{2, []string{"/a"}, nil, nil, []string{"/"}},
		{3, nil, []string{"/c"}, nil, nil},
		{4, nil, nil, nil, nil},
	}
	for _, tt := range tests {
		d, c, p, rec := r.WatchedPaths(tt.w)
		if !slices.Equal(d, tt.data) || !slices.Equal(c, tt.child) ||
			!slices.Equal(p, tt.persistent) || !slices.Equal(rec, tt.recursive) {
			t.Errorf("WatchedPaths(%d) = %v %v %v %v, want %v %v %v %v",
				tt.w, d, c, p, rec, tt.data, tt.child, tt.persistent, tt.recursive)
		}
	}
}
