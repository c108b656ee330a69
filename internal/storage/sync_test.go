package storage

import (
	"math/rand/v2"
	"os"
	"strings"
	"sync"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// syncCounts counts the syncs that reached the FS seam, by kind.
type syncCounts struct {
	sync, datasync, syncDir int
}

// countingFS is an FS that counts the syncs made through it.
type countingFS struct {
	FS
	mu sync.Mutex
	n  syncCounts
}

func (c *countingFS) count(f func(*syncCounts)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	f(&c.n)
}

// reset returns the counts so far and starts counting again from zero.
func (c *countingFS) reset() syncCounts {
	c.mu.Lock()
	defer c.mu.Unlock()
	n := c.n
	c.n = syncCounts{}
	return n
}

func (c *countingFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := c.FS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &countingFile{File: f, fs: c}, nil
}

func (c *countingFS) SyncDir(dir string) error {
	c.count(func(n *syncCounts) { n.syncDir++ })
	return c.FS.SyncDir(dir)
}

// countingFile counts a file's syncs. (Wrapped, an OSFS file is
// preallocated by Truncate rather than fallocate: a sparse file.)
type countingFile struct {
	File
	fs *countingFS
}

func (f *countingFile) Sync() error {
	f.fs.count(func(n *syncCounts) { n.sync++ })
	return f.File.Sync()
}

func (f *countingFile) Datasync() error {
	f.fs.count(func(n *syncCounts) { n.datasync++ })
	return f.File.Datasync()
}

// saveCall is the arguments of one WAL.Save.
type saveCall struct {
	hs       *raftpb.HardState
	es       []*raftpb.Entry
	mustSync bool
}

// TestWALSaveSyncCount counts the syncs of Save in the steady state (no
// new segment): one fdatasync per Save that must sync, none otherwise, and
// never an fsync or a directory sync.
func TestWALSaveSyncCount(t *testing.T) {
	const n = 20
	tests := []struct {
		name   string
		noSync bool
		step   func(i uint64) []saveCall // the Saves of step i, 1 <= i <= n
		want   syncCounts
	}{
		{
			name: "one entry per Save with mustSync",
			step: func(i uint64) []saveCall { return []saveCall{{hardState(1, 1, i-1), ents(i, i, 1), true}} },
			want: syncCounts{datasync: n},
		},
		{
			name: "a lone raft member: the entry, then its commit without mustSync",
			step: func(i uint64) []saveCall {
				return []saveCall{{nil, ents(i, i, 1), true}, {hardState(1, 1, i), nil, false}}
			},
			want: syncCounts{datasync: n},
		},
		{
			name: "commit-only Saves without mustSync",
			step: func(i uint64) []saveCall { return []saveCall{{hardState(1, 1, i), nil, false}} },
			want: syncCounts{},
		},
		{
			name: "entries are synced even without mustSync",
			step: func(i uint64) []saveCall { return []saveCall{{nil, ents(i, i, 1), false}} },
			want: syncCounts{datasync: n},
		},
		{
			name: "a new term is synced even without mustSync",
			step: func(i uint64) []saveCall { return []saveCall{{hardState(i+1, 0, 0), nil, false}} },
			want: syncCounts{datasync: n},
		},
		{
			name:   "NoSync",
			noSync: true,
			step:   func(i uint64) []saveCall { return []saveCall{{hardState(1, 1, i-1), ents(i, i, 1), true}} },
			want:   syncCounts{},
		},
	}
	filesystems := []struct {
		name string
		new  func(t *testing.T) (FS, string)
	}{
		{"MemFS", func(t *testing.T) (FS, string) { return NewMemFS(), testDir }},
		{"OSFS", func(t *testing.T) (FS, string) { return OSFS, t.TempDir() + "/wal" }},
	}
	for _, fsys := range filesystems {
		for _, tt := range tests {
			t.Run(fsys.name+"/"+tt.name, func(t *testing.T) {
				inner, dir := fsys.new(t)
				fs := &countingFS{FS: inner}
				w, err := OpenWAL(fs, dir, WALOptions{SegmentSize: 1 << 20, NoSync: tt.noSync, Logger: quietLogger()})
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				mustReadAll(t, w)
				mustSave(t, w, hardState(1, 1, 0), nil)
				fs.reset()
				for i := uint64(1); i <= n; i++ {
					for _, c := range tt.step(i) {
						if err := w.Save(c.hs, c.es, c.mustSync); err != nil {
							t.Fatal(err)
						}
					}
				}
				if got := fs.reset(); got != tt.want {
					t.Fatalf("%d steps cost %+v, want %+v", n, got, tt.want)
				}
			})
		}
	}
}

// TestWALSaveWithoutSyncPowerCut saves entries as a lone raft member does
// (each entry synced, then its commit without mustSync, across several
// segments) and cuts the power: recovery succeeds, every entry is there,
// and only the last, unsynced commit may be lost.
func TestWALSaveWithoutSyncPowerCut(t *testing.T) {
	const n = 40
	kept := 0 // torn cuts that kept the last commit
	for _, torn := range []bool{false, true} {
		for seed := range uint64(50) {
			fs := NewMemFS()
			opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
			w := mustOpenWAL(t, fs, opts)
			mustReadAll(t, w)
			mustSave(t, w, hardState(1, 1, 0), nil)
			var saved []*raftpb.Entry
			for i := uint64(1); i <= n; i++ {
				e := ent(i, 1, strings.Repeat("v", int(i*53%600)))
				mustSave(t, w, nil, []*raftpb.Entry{e})
				saved = append(saved, e)
				if err := w.Save(hardState(1, 1, i), nil, false); err != nil {
					t.Fatal(err)
				}
			}
			if len(segmentPaths(t, fs)) < 3 {
				t.Fatal("the entries fit in fewer than 3 segments: make them larger")
			}
			w.Close()
			if torn {
				fs.CrashTorn(rand.New(rand.NewPCG(seed, 3)))
			} else {
				fs.Crash()
			}
			w = mustOpenWAL(t, fs, opts)
			_, hs, es := mustReadAll(t, w)
			equalEntries(t, es, saved)
			// The Save of entry n synced the commit of entry n-1; the commit of
			// entry n was never synced: a clean cut loses it, a torn one may not.
			switch {
			case proto.Equal(hs, hardState(1, 1, n-1)):
			case torn && proto.Equal(hs, hardState(1, 1, n)):
				kept++
			default:
				t.Fatalf("torn=%v seed %d: hard state %v, want commit %d (or %d if torn)", torn, seed, hs, n-1, n)
			}
			w.Close()
			if !torn {
				break // a clean cut does not depend on the seed
			}
		}
	}
	if kept == 0 || kept == 50 {
		t.Errorf("the last commit survived %d of 50 torn cuts: the test should see both outcomes", kept)
	}
}

// TestWALUnsyncedHardStateTornAtEveryByte cuts a HardState saved without
// mustSync, the last record of the log, at every byte: recovery always
// succeeds, with the entries before it and the previous HardState.
func TestWALUnsyncedHardStateTornAtEveryByte(t *testing.T) {
	fs := NewMemFS()
	w := mustOpenWAL(t, fs, WALOptions{SegmentSize: 4096})
	mustReadAll(t, w)
	mustSave(t, w, hardState(1, 1, 0), ents(1, 5, 1))
	if err := w.Save(hardState(1, 1, 5), nil, false); err != nil {
		t.Fatal(err)
	}
	w.Close()
	path := segmentPaths(t, fs)[0]
	recs := records(t, fs)[path]
	last := recs[len(recs)-1]
	if last.Type != RecordHardState || last.HardState.GetCommit() != 5 {
		t.Fatalf("last record is %v", last)
	}
	orig := readFile(t, fs, path)
	whole := framedSize(orig, last) // the padding after it is not the record's
	for cut := 0; cut <= whole; cut++ {
		data := append([]byte(nil), orig...)
		clear(data[last.Offset+int64(cut):])
		fs := NewMemFS()
		if err := MkdirAllDurable(fs, testDir); err != nil {
			t.Fatal(err)
		}
		writeFile(t, fs, path, data)
		w, err := OpenWAL(fs, testDir, WALOptions{SegmentSize: 4096, Logger: quietLogger()})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		_, hs, es, _ := w.ReadAll()
		equalEntries(t, es, ents(1, 5, 1))
		want := hardState(1, 1, 0)
		if cut == whole {
			want = hardState(1, 1, 5)
		}
		if !proto.Equal(hs, want) {
			t.Fatalf("cut at %d: hard state %v, want %v", cut, hs, want)
		}
		w.Close()
	}
}

// TestWALReadAllClampsCommit: a HardState whose commit is beyond the end
// of the log (it outlived the entries or the marker its commit relies on)
// is returned with its commit lowered to the last index, term and vote
// kept, and a warning.
func TestWALReadAllClampsCommit(t *testing.T) {
	tests := []struct {
		name     string
		save     func(t *testing.T, w *WAL)
		wantHS   *raftpb.HardState
		wantWarn bool
	}{
		{
			name: "commit beyond the last entry",
			save: func(t *testing.T, w *WAL) {
				mustSave(t, w, hardState(2, 1, 0), ents(1, 5, 2))
				if err := w.Save(hardState(2, 1, 9), nil, false); err != nil {
					t.Fatal(err)
				}
			},
			wantHS:   hardState(2, 1, 5),
			wantWarn: true,
		},
		{
			name: "commit beyond the marker, no entry after it",
			save: func(t *testing.T, w *WAL) {
				if err := w.SaveSnapshot(snapMeta(10, 1)); err != nil {
					t.Fatal(err)
				}
				if err := w.Save(hardState(2, 1, 12), nil, true); err != nil {
					t.Fatal(err)
				}
			},
			wantHS:   hardState(2, 1, 10),
			wantWarn: true,
		},
		{
			name: "commit within the log",
			save: func(t *testing.T, w *WAL) {
				mustSave(t, w, hardState(2, 1, 0), ents(1, 5, 2))
				if err := w.Save(hardState(2, 1, 5), nil, false); err != nil {
					t.Fatal(err)
				}
			},
			wantHS: hardState(2, 1, 5),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewMemFS()
			w := mustOpenWAL(t, fs, WALOptions{SegmentSize: 4096})
			mustReadAll(t, w)
			tt.save(t, w)
			w.Close()
			log, logs := testLogger()
			w = mustOpenWAL(t, fs, WALOptions{SegmentSize: 4096, Logger: log})
			_, hs, _ := mustReadAll(t, w)
			if !proto.Equal(hs, tt.wantHS) {
				t.Errorf("hard state %v, want %v", hs, tt.wantHS)
			}
			if warned := strings.Contains(logs.String(), "beyond the last entry"); warned != tt.wantWarn {
				t.Errorf("warning logged: %v, want %v: %q", warned, tt.wantWarn, logs.String())
			}
		})
	}
}
