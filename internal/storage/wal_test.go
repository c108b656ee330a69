package storage

import (
	"bytes"
	"errors"
	"os"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func TestWALRoundTrip(t *testing.T) {
	type save struct {
		hs *raftpb.HardState
		es []*raftpb.Entry
	}
	tests := []struct {
		name     string
		saves    []save
		wantHS   *raftpb.HardState
		wantEnts []*raftpb.Entry
	}{
		{name: "empty", wantHS: &raftpb.HardState{}},
		{name: "hard state only", saves: []save{{hs: hardState(1, 1, 0)}}, wantHS: hardState(1, 1, 0)},
		{name: "entries only", saves: []save{{es: ents(1, 3, 1)}}, wantHS: &raftpb.HardState{}, wantEnts: ents(1, 3, 1)},
		{
			name:     "several batches",
			saves:    []save{{hardState(1, 1, 0), ents(1, 3, 1)}, {hardState(1, 1, 3), ents(4, 4, 1)}, {hardState(2, 1, 4), nil}},
			wantHS:   hardState(2, 1, 4),
			wantEnts: ents(1, 4, 1),
		},
		{
			name:     "overwritten suffix",
			saves:    []save{{nil, ents(1, 10, 1)}, {hardState(2, 2, 5), ents(6, 8, 2)}},
			wantHS:   hardState(2, 2, 5),
			wantEnts: append(ents(1, 5, 1), ents(6, 8, 2)...),
		},
		{
			name:     "overwrite from the first entry",
			saves:    []save{{nil, ents(1, 4, 1)}, {nil, ents(1, 2, 3)}},
			wantHS:   &raftpb.HardState{},
			wantEnts: ents(1, 2, 3),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewMemFS()
			w := mustOpenWAL(t, fs, WALOptions{})
			mustReadAll(t, w)
			for _, s := range tt.saves {
				mustSave(t, w, s.hs, s.es)
			}
			fs.Crash() // only what was synced counts
			w = mustOpenWAL(t, fs, WALOptions{})
			snap, hs, es := mustReadAll(t, w)
			if snap.GetIndex() != 0 {
				t.Errorf("snapshot index %d, want 0", snap.GetIndex())
			}
			if !proto.Equal(hs, tt.wantHS) {
				t.Errorf("hard state %v, want %v", hs, tt.wantHS)
			}
			equalEntries(t, es, tt.wantEnts)
		})
	}
}

func TestWALReadAllOnce(t *testing.T) {
	w := mustOpenWAL(t, NewMemFS(), WALOptions{})
	mustReadAll(t, w)
	if _, _, _, err := w.ReadAll(); err == nil {
		t.Fatal("second ReadAll succeeded")
	}
}

func TestWALSegmentRollover(t *testing.T) {
	fs := NewMemFS()
	opts := WALOptions{SegmentSize: 4096}
	w := mustOpenWAL(t, fs, opts)
	var want []*raftpb.Entry
	for i := uint64(1); i <= 200; i += 4 {
		batch := ents(i, i+3, 1)
		for _, e := range batch {
			e.Data = append(e.Data, strings.Repeat("x", 100)...)
		}
		want = append(want, batch...)
		mustSave(t, w, hardState(1, 1, i), batch)
	}
	big := ent(201, 1, strings.Repeat("B", 10000)) // larger than a segment
	want = append(want, big)
	mustSave(t, w, hardState(1, 1, 201), []*raftpb.Entry{big})
	mustSave(t, w, nil, ents(202, 202, 1))
	want = append(want, ents(202, 202, 1)...)

	paths := segmentPaths(t, fs)
	if len(paths) < 5 {
		t.Fatalf("%d segments, want several", len(paths))
	}
	w = reopen(t, fs, w, opts)
	_, hs, es := mustReadAll(t, w)
	equalEntries(t, es, want)
	if !proto.Equal(hs, hardState(1, 1, 201)) {
		t.Errorf("hard state %v", hs)
	}
	// Each segment starts with its version and salt records; each after
	// the first then has the hard state of its time.
	for i, p := range paths {
		recs := records(t, fs)[p]
		if len(recs) == 0 || recs[0].Type != RecordVersion || recs[0].Version != walVersion || recs[0].Offset != 0 {
			t.Errorf("%s does not start with a version record of version %d: %+v", p, walVersion, recs[:min(1, len(recs))])
		}
		if len(recs) < 2 || recs[1].Type != RecordSalt || recs[1].Salt == 0 {
			t.Errorf("%s does not have a salt record after its version", p)
		}
		if i > 0 && (len(recs) < 3 || recs[2].Type != RecordHardState) {
			t.Errorf("%s does not have a hard state record after its version and salt", p)
		}
	}
}

// saveHundredPadded saves entries 1..100 of term 1, five per Save, each
// padded to 200 bytes of data: several 4 KiB segments.
func saveHundredPadded(t *testing.T, w *WAL) {
	t.Helper()
	for i := uint64(1); i <= 100; i += 5 {
		batch := ents(i, i+4, 1)
		for _, e := range batch {
			e.Data = append(e.Data, strings.Repeat("x", 200)...)
		}
		mustSave(t, w, hardState(1, 1, i+4), batch)
	}
}

func TestWALSnapshotMarkerAndReleaseTo(t *testing.T) {
	fs := NewMemFS()
	opts := WALOptions{SegmentSize: 4096}
	w := mustOpenWAL(t, fs, opts)
	saveHundredPadded(t, w)
	before := len(segmentPaths(t, fs))
	if err := w.ReleaseTo(90); err != nil { // no marker yet: nothing after index 0 may go
		t.Fatal(err)
	}
	if got := len(segmentPaths(t, fs)); got != before {
		t.Fatalf("ReleaseTo without a snapshot marker removed segments: %d -> %d", before, got)
	}
	if err := w.SaveSnapshot(snapMeta(60, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleaseTo(1000); err != nil { // clamped to the marker: entries 61.. stay
		t.Fatal(err)
	}
	after := len(segmentPaths(t, fs))
	if after >= before {
		t.Fatalf("ReleaseTo removed nothing: %d segments", after)
	}
	fs.Crash()
	w = mustOpenWAL(t, fs, opts)
	snap, hs, es := mustReadAll(t, w)
	if !proto.Equal(snap, snapMeta(60, 1)) {
		t.Errorf("snapshot %v", snap)
	}
	if !proto.Equal(hs, hardState(1, 1, 100)) {
		t.Errorf("hard state %v", hs)
	}
	if len(es) != 40 || es[0].GetIndex() != 61 || es[39].GetIndex() != 100 {
		t.Fatalf("entries %s, want 61..100", describe(es))
	}
}

// TestWALTornTail cuts the last record at every byte and checks that
// recovery drops exactly that record, logs it, and leaves a usable WAL.
func TestWALTornTail(t *testing.T) {
	fs := NewMemFS()
	w := mustOpenWAL(t, fs, WALOptions{SegmentSize: 4096})
	mustSave(t, w, hardState(1, 1, 0), ents(1, 4, 1))
	mustSave(t, w, nil, ents(5, 5, 1))
	w.Close()
	path := segmentPaths(t, fs)[0]
	recs := records(t, fs)[path]
	last := recs[len(recs)-1]
	if last.Type != RecordEntry || last.Entry.GetIndex() != 5 {
		t.Fatalf("last record is %v", last)
	}
	orig := readFile(t, fs, path)
	for cut := 0; cut < framedSize(orig, last); cut++ {
		data := append([]byte(nil), orig...)
		clear(data[last.Offset+int64(cut):])
		fs := NewMemFS()
		if err := MkdirAllDurable(fs, testDir); err != nil {
			t.Fatal(err)
		}
		writeFile(t, fs, path, data)
		log, logs := testLogger()
		w, err := OpenWAL(fs, testDir, WALOptions{SegmentSize: 4096, Logger: log})
		if err != nil {
			t.Fatalf("cut at %d: %v", cut, err)
		}
		_, _, es, _ := w.ReadAll()
		equalEntries(t, es, ents(1, 4, 1))
		// Cut inside the header, before the salt, the record is not yet
		// one of the segment's: the data ends there, as where nothing
		// was written.
		if cut >= record2HeaderSize && (!strings.Contains(logs.String(), "torn") || !strings.Contains(logs.String(), path)) {
			t.Fatalf("cut at %d: no log line naming the torn tail: %q", cut, logs.String())
		}
		// The WAL is usable again and the repair is durable.
		mustSave(t, w, nil, ents(5, 6, 2))
		w.Close()
		fs.Crash()
		w = mustOpenWAL(t, fs, WALOptions{SegmentSize: 4096})
		_, _, es = mustReadAll(t, w)
		equalEntries(t, es, append(ents(1, 4, 1), ents(5, 6, 2)...))
		w.Close()
	}
}

func TestWALCorruption(t *testing.T) {
	// Build a WAL of three segments, then damage copies of it.
	build := func(t *testing.T) (*MemFS, []string, map[string][]WALRecord) {
		fs := NewMemFS()
		w := mustOpenWAL(t, fs, WALOptions{SegmentSize: 4096})
		for i := uint64(1); i <= 120; i += 3 {
			batch := ents(i, i+2, 1)
			for _, e := range batch {
				e.Data = append(e.Data, strings.Repeat("y", 100)...)
			}
			mustSave(t, w, hardState(1, 1, i), batch)
		}
		w.Close()
		paths := segmentPaths(t, fs)
		if len(paths) < 3 {
			t.Fatalf("%d segments, want 3 or more", len(paths))
		}
		return fs, paths, records(t, fs)
	}
	flip := func(t *testing.T, fs FS, path string, off int64) {
		data := readFile(t, fs, path)
		data[off] ^= 0x40
		writeFile(t, fs, path, data)
	}
	tests := []struct {
		name   string
		damage func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (file string, off int64)
	}{
		{"payload of a middle record of the last segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			p := paths[len(paths)-1]
			r := recs[p][len(recs[p])/2]
			flip(t, fs, p, r.Offset+int64(framedSize(readFile(t, fs, p), r))-1)
			return p, r.Offset
		}},
		{"length of a middle record of the last segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			p := paths[len(paths)-1]
			r := recs[p][2]
			flip(t, fs, p, r.Offset)
			return p, r.Offset
		}},
		{"checksum of a record in the first segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			r := recs[paths[0]][3]
			flip(t, fs, paths[0], r.Offset+5)
			return paths[0], r.Offset
		}},
		{"last record of a middle segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			p := paths[1]
			r := recs[p][len(recs[p])-1]
			flip(t, fs, p, r.Offset+int64(framedSize(readFile(t, fs, p), r))-1)
			return p, r.Offset
		}},
		{"salt of a middle record of the last segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			p := paths[len(paths)-1]
			r := recs[p][len(recs[p])/2]
			flip(t, fs, p, r.Offset+9)
			return p, r.Offset
		}},
		{"salt of the next-to-last record of a middle segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			p := paths[1]
			r := recs[p][len(recs[p])-2]
			flip(t, fs, p, r.Offset+15)
			return p, r.Offset
		}},
		{"a record of the segment far after the end of the last segment's data", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			p := paths[len(paths)-1]
			r := recs[p][len(recs[p])-1]
			end := r.Offset + int64(r.Size)
			data := readFile(t, fs, p)
			at := (int64(len(data)) - int64(r.Size)) &^ 7
			if at < end+8 {
				t.Fatalf("no room after the last segment's data (ends at %d of %d)", end, len(data))
			}
			copy(data[at:], data[r.Offset:end])
			writeFile(t, fs, p, data)
			return p, end
		}},
		{"missing segment", func(t *testing.T, fs FS, paths []string, recs map[string][]WALRecord) (string, int64) {
			if err := fs.Remove(paths[1]); err != nil {
				t.Fatal(err)
			}
			return paths[2], 0
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs, paths, recs := build(t)
			file, off := tt.damage(t, fs, paths, recs)
			_, err := OpenWAL(fs, testDir, WALOptions{SegmentSize: 4096, Logger: quietLogger()})
			ce := asCorrupt(t, err)
			if ce.File != file || ce.Offset != off {
				t.Fatalf("CorruptError names %s offset %d, want %s offset %d (%v)", ce.File, ce.Offset, file, off, ce)
			}
			if !strings.Contains(err.Error(), "restore") {
				t.Errorf("error does not say how to recover: %v", err)
			}
		})
	}
}

func TestWALGapInEntries(t *testing.T) {
	fs := NewMemFS()
	w := mustOpenWAL(t, fs, WALOptions{})
	mustSave(t, w, nil, ents(1, 3, 1))
	mustSave(t, w, nil, ents(5, 6, 1))
	w.Close()
	_, err := OpenWAL(fs, testDir, WALOptions{Logger: quietLogger()})
	if ce := asCorrupt(t, err); !strings.Contains(ce.Reason, "missing") {
		t.Fatalf("reason %q", ce.Reason)
	}
}

func TestWALDiskFull(t *testing.T) {
	tests := []struct {
		name string
		op   Op
	}{
		{"write inside a segment", OpWrite},
		{"preallocating a new segment", OpTruncate},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fs := NewMemFS()
			opts := WALOptions{SegmentSize: 4096}
			w := mustOpenWAL(t, fs, opts)
			mustReadAll(t, w)
			mustSave(t, w, hardState(1, 1, 0), ents(1, 2, 1))
			fs.InjectFault(tt.op, 1, syscall.ENOSPC)
			big := ents(3, 40, 1) // needs a new segment
			for _, e := range big {
				e.Data = append(e.Data, strings.Repeat("z", 100)...)
			}
			err := w.Save(hardState(1, 1, 2), big, true)
			if !errors.Is(err, ErrDiskFull) {
				t.Fatalf("Save: %v, want ErrDiskFull", err)
			}
			// Nothing of the failed call is visible, even after a crash.
			fs.Crash()
			w = mustOpenWAL(t, fs, opts)
			_, hs, es := mustReadAll(t, w)
			if len(es) > 2 && len(es) != 40 {
				// Whole segments of the batch may have been synced before the
				// roll failed; they are a valid prefix.
				equalEntries(t, es, append(ents(1, 2, 1), big[:len(es)-2]...))
			} else if len(es) < 2 {
				t.Fatalf("lost acknowledged entries: %s", describe(es))
			}
			_ = hs
			// Space is back: the same Save succeeds and is durable.
			fs.InjectFault(tt.op, 1, syscall.ENOSPC)
			if err := w.Save(hardState(1, 1, 2), big, true); !errors.Is(err, ErrDiskFull) {
				t.Fatalf("second Save: %v, want ErrDiskFull", err)
			}
			mustSave(t, w, hardState(1, 1, 2), big)
			fs.Crash()
			w = mustOpenWAL(t, fs, opts)
			_, hs, es = mustReadAll(t, w)
			equalEntries(t, es, append(ents(1, 2, 1), big...))
			if !proto.Equal(hs, hardState(1, 1, 2)) {
				t.Errorf("hard state %v", hs)
			}
		})
	}
}

func TestWALSyncFailureIsSticky(t *testing.T) {
	fs := NewMemFS()
	w := mustOpenWAL(t, fs, WALOptions{})
	mustSave(t, w, nil, ents(1, 1, 1))
	fs.InjectFault(OpSync, 1, syscall.EIO)
	if err := w.Save(nil, ents(2, 2, 1), true); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Save: %v, want ErrSyncFailed", err)
	}
	if err := w.Save(nil, ents(2, 2, 1), true); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("Save after a failed sync: %v, want ErrSyncFailed", err)
	}
	if err := w.SaveSnapshot(snapMeta(1, 1)); !errors.Is(err, ErrSyncFailed) {
		t.Fatalf("SaveSnapshot after a failed sync: %v, want ErrSyncFailed", err)
	}
}

func TestWALNoSync(t *testing.T) {
	fs := NewMemFS()
	log, logs := testLogger()
	w := mustOpenWAL(t, fs, WALOptions{NoSync: true, Logger: log})
	if !strings.Contains(logs.String(), "forceSync=no") {
		t.Errorf("no warning about forceSync=no: %q", logs.String())
	}
	mustSave(t, w, nil, ents(1, 1, 1))
	fs.Crash() // unsynced: lost, as documented
	w = mustOpenWAL(t, fs, WALOptions{NoSync: true})
	if _, _, es := mustReadAll(t, w); len(es) != 0 {
		t.Fatalf("entries survived an unsynced crash: %s", describe(es))
	}
}

func TestLock(t *testing.T) {
	tests := []struct {
		name string
		fs   FS
		path func(t *testing.T) string
	}{
		{"OSFS", OSFS, func(t *testing.T) string { return t.TempDir() + "/warden.lock" }},
		{"MemFS", NewMemFS(), func(t *testing.T) string { return "/warden.lock" }},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tt.path(t)
			l, err := tt.fs.Lock(p)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tt.fs.Lock(p); !errors.Is(err, ErrLocked) {
				t.Fatalf("second Lock: %v, want ErrLocked", err)
			}
			l.Close()
			l, err = tt.fs.Lock(p)
			if err != nil {
				t.Fatalf("Lock after Close: %v", err)
			}
			l.Close()
		})
	}
}

func TestWALOnOSFS(t *testing.T) {
	dir := t.TempDir() + "/wal"
	opts := WALOptions{SegmentSize: 8192, Logger: quietLogger()}
	w, err := OpenWAL(OSFS, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	for i := uint64(1); i <= 100; i += 10 {
		if err := w.Save(hardState(1, 1, i), ents(i, i+9, 1), true); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	w, err = OpenWAL(OSFS, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	_, _, es, _ := w.ReadAll()
	equalEntries(t, es, ents(1, 100, 1))
}

// Recovery maps a segment of the OS file system instead of reading it
// into memory: opening a log of one large, nearly empty segment allocates
// next to nothing, and what was decoded from the mapping stays valid once
// it is gone.
func TestWALRecoveryMapsSegments(t *testing.T) {
	dir := t.TempDir() + "/wal"
	const segSize = 64 << 20
	opts := WALOptions{SegmentSize: segSize, Logger: quietLogger()}
	w, err := OpenWAL(OSFS, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	mustSave(t, w, hardState(1, 1, 50), ents(1, 50, 1))
	w.Close()

	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	w, err = OpenWAL(OSFS, dir, opts)
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if grew := after.TotalAlloc - before.TotalAlloc; grew > segSize/16 {
		t.Errorf("opening a log of one %d MiB segment allocated %d KiB", segSize>>20, grew>>10)
	}
	_, _, es, _ := w.ReadAll()
	equalEntries(t, es, ents(1, 50, 1))

	n := 0
	runtime.ReadMemStats(&before)
	err = ScanWAL(OSFS, dir, func(seg WALSegment, recs []WALRecord) error {
		if seg.Size != segSize {
			t.Errorf("segment size %d, want %d", seg.Size, segSize)
		}
		n += len(recs)
		return nil
	})
	runtime.ReadMemStats(&after)
	if err != nil {
		t.Fatal(err)
	}
	if grew := after.TotalAlloc - before.TotalAlloc; grew > segSize/16 {
		t.Errorf("scanning a log of one %d MiB segment allocated %d KiB", segSize>>20, grew>>10)
	}
	if want := 2 + 50 + 1; n != want { // version, salt, entries, hard state
		t.Errorf("ScanWAL saw %d records, want %d", n, want)
	}
}

// A read error under a mapping is a memory fault; the scan returns it as
// an error. (A mapped page beyond the end of its file faults the same way:
// the file is cut short under the mapping here.)
func TestScanMappedFaultIsAnError(t *testing.T) {
	path := t.TempDir() + "/seg"
	if err := os.WriteFile(path, bytes.Repeat([]byte{1}, 1<<16), 0o644); err != nil {
		t.Fatal(err)
	}
	buf, release, err := segmentBytes(OSFS, path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if err := os.Truncate(path, 0); err != nil {
		t.Fatal(err)
	}
	_, err = scanMapped(path, buf, true)
	if err == nil || !strings.Contains(err.Error(), "a read error of the disk") {
		t.Fatalf("scanMapped over a vanished file: err = %v, want a read error", err)
	}
}

// removeGate is an FS whose Remove waits for a signal, to hold a
// ReleaseTo in the middle of its deletions.
type removeGate struct {
	FS
	entered chan struct{}
	release chan struct{}
}

func (g removeGate) Remove(path string) error {
	g.entered <- struct{}{}
	<-g.release
	return g.FS.Remove(path)
}

// Writes go on while ReleaseTo deletes segments: the deletions run
// without the lock Save takes.
func TestWALSavesWhileReleaseToDeletes(t *testing.T) {
	mem := NewMemFS()
	g := removeGate{FS: mem, entered: make(chan struct{}), release: make(chan struct{})}
	opts := WALOptions{SegmentSize: 4096, Spares: -1}
	w := mustOpenWAL(t, g, opts)
	saveHundredPadded(t, w)
	if err := w.SaveSnapshot(snapMeta(60, 1)); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, 1)
	go func() { released <- w.ReleaseTo(60) }()
	select {
	case <-g.entered:
	case <-time.After(10 * time.Second):
		t.Fatal("ReleaseTo deleted nothing")
	}
	saved := make(chan error, 1)
	go func() { saved <- w.Save(hardState(1, 1, 105), ents(101, 105, 1), true) }()
	var err error
	blocked := false
	select {
	case err = <-saved:
	case <-time.After(10 * time.Second):
		blocked = true
	}
	close(g.release) // the remaining deletions go through at once
	go func() {
		for range g.entered {
		}
	}()
	if rerr := <-released; rerr != nil {
		t.Fatal(rerr)
	}
	close(g.entered)
	if blocked {
		<-saved
		t.Fatal("Save waited for ReleaseTo's deletions")
	}
	if err != nil {
		t.Fatal(err)
	}
}

// releaseRecorder is an FS that records the sizes released segments are
// truncated to and, with keep, fails their removal (as a crash right
// before it would leave them).
type releaseRecorder struct {
	FS
	keep   bool
	mu     sync.Mutex
	truncs []int64
}

func (r *releaseRecorder) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := r.FS.OpenFile(name, flag, perm)
	if err != nil || !strings.HasSuffix(name, releasedSuffix) {
		return f, err
	}
	return truncRecorder{File: f, r: r}, nil
}

func (r *releaseRecorder) Remove(name string) error {
	if r.keep && strings.HasSuffix(name, releasedSuffix) {
		return errors.New("injected: the process died before the removal")
	}
	return r.FS.Remove(name)
}

type truncRecorder struct {
	File
	r *releaseRecorder
}

func (t truncRecorder) Truncate(size int64) error {
	t.r.mu.Lock()
	t.r.truncs = append(t.r.truncs, size)
	t.r.mu.Unlock()
	return t.File.Truncate(size)
}

// saveBigSegments writes entries 1..4 of 3 MiB each into 5 MiB segments
// (one entry per segment) and a snapshot marker at 3.
func saveBigSegments(t *testing.T, w *WAL) {
	t.Helper()
	for i := uint64(1); i <= 4; i++ {
		batch := ents(i, i, 1)
		batch[0].Data = append(batch[0].Data, bytes.Repeat([]byte{'x'}, 3<<20)...)
		mustSave(t, w, hardState(1, 1, i), batch)
	}
	if err := w.SaveSnapshot(snapMeta(3, 1)); err != nil {
		t.Fatal(err)
	}
}

// ReleaseTo frees a segment's space a step at a time before it removes
// the file, and leaves nothing behind.
func TestWALReleaseShrinksSegmentsGradually(t *testing.T) {
	r := &releaseRecorder{FS: NewMemFS()}
	const segSize = 5 << 20
	w := mustOpenWAL(t, r, WALOptions{SegmentSize: segSize, Spares: -1})
	saveBigSegments(t, w)
	before := len(segmentPaths(t, r))
	if err := w.ReleaseTo(3); err != nil {
		t.Fatal(err)
	}
	if got := len(segmentPaths(t, r)); got >= before {
		t.Fatalf("ReleaseTo removed no segment: %d -> %d", before, got)
	}
	// Each released segment, in turn, from segSize down to 0 in steps.
	prev := int64(0)
	for _, size := range r.truncs {
		if prev == 0 {
			prev = segSize
		}
		if size != max(0, prev-releaseStep) {
			t.Fatalf("truncations %v: want steps of %d from %d down to 0 for each segment", r.truncs, releaseStep, segSize)
		}
		prev = size
	}
	if len(r.truncs) < 3 || prev != 0 {
		t.Fatalf("truncations %v: want steps of %d from %d down to 0 for each segment", r.truncs, releaseStep, segSize)
	}
	names, err := r.ReadDir(testDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if strings.HasSuffix(n, releasedSuffix) {
			t.Fatalf("%s left behind after ReleaseTo", n)
		}
	}
}

// A crash after the release's renames and before the removals leaves
// released files, which the next OpenWAL deletes; the log is intact.
func TestWALCrashMidReleaseRecovers(t *testing.T) {
	mem := NewMemFS()
	r := &releaseRecorder{FS: mem, keep: true}
	opts := WALOptions{SegmentSize: 5 << 20, Spares: -1}
	w := mustOpenWAL(t, r, opts)
	saveBigSegments(t, w)
	if err := w.ReleaseTo(3); err == nil {
		t.Fatal("ReleaseTo succeeded although the removal failed")
	}
	mem.Crash()
	left := 0
	names, _ := mem.ReadDir(testDir)
	for _, n := range names {
		if strings.HasSuffix(n, releasedSuffix) {
			left++
		}
	}
	if left == 0 {
		t.Fatalf("no released file survived the crash: %v (the test needs one)", names)
	}
	w = mustOpenWAL(t, mem, opts)
	snap, _, es := mustReadAll(t, w)
	if snap.GetIndex() != 3 || len(es) != 1 || es[0].GetIndex() != 4 {
		t.Fatalf("after the crash: snapshot %d, entries %s; want snapshot 3 and entry 4", snap.GetIndex(), describe(es))
	}
	names, _ = mem.ReadDir(testDir)
	for _, n := range names {
		if strings.HasSuffix(n, releasedSuffix) {
			t.Fatalf("OpenWAL left %s", n)
		}
	}
}
