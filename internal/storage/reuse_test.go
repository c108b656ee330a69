package storage

import (
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// spareFiles returns the names of the spare files in the WAL directory.
func spareFiles(t testing.TB, fs FS) []string {
	t.Helper()
	return spareFilesIn(t, fs, testDir)
}

// spareFilesIn returns the names of the spare files in dir.
func spareFilesIn(t testing.TB, fs FS, dir string) []string {
	t.Helper()
	names, err := fs.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, n := range names {
		if strings.HasSuffix(n, spareSuffix) {
			out = append(out, n)
		}
	}
	return out
}

// reusedSegments counts the segments that hold bytes other than zero after
// the end of their data: files written over after an earlier use.
func reusedSegments(t testing.TB, fs FS) int {
	t.Helper()
	return reusedSegmentsIn(t, fs, testDir)
}

// reusedSegmentsIn is reusedSegments for the WAL in dir.
func reusedSegmentsIn(t testing.TB, fs FS, dir string) int {
	t.Helper()
	n := 0
	if err := ScanWAL(fs, dir, func(s WALSegment, _ []WALRecord) error {
		if !allZero(readFile(t, fs, s.Path)[s.End:]) {
			n++
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return n
}

// walWithSpares opens a WAL in dir of fs with 4 KiB segments and room
// for two spares, saves entries 1..100, a snapshot marker at 90, and
// releases the log behind it: two spares, and more segments released than
// that. It returns the WAL and its options.
func walWithSpares(t *testing.T, fs FS, dir string) (*WAL, WALOptions) {
	t.Helper()
	opts := WALOptions{SegmentSize: 4096, Spares: 2, Logger: quietLogger()}
	w, err := OpenWAL(fs, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	mustReadAll(t, w)
	saveHundredPadded(t, w)
	if err := w.SaveSnapshot(snapMeta(90, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleaseTo(90); err != nil {
		t.Fatal(err)
	}
	if got := spareFilesIn(t, fs, dir); len(got) != 2 {
		t.Fatalf("spares %v after the release, want 2", got)
	}
	return w, opts
}

// saveTwoSegments saves entries 101..130 of term 2, 200 bytes of data
// each, five at a time: two 4 KiB segments' worth. It returns them.
func saveTwoSegments(t *testing.T, w *WAL) []*raftpb.Entry {
	t.Helper()
	es := bigEnts(101, 130, 2)
	for i := 0; i < len(es); i += 5 {
		mustSave(t, w, hardState(2, 1, es[i+4].GetIndex()), es[i:i+5])
	}
	return es
}

// Released segments become spares (no more than Spares of them), new
// segments are written over them, and the log reads back the same after a
// reopen and after a crash: the earlier use's records after the end of the
// data are not taken for the log's.
func TestWALReusesReleasedSegments(t *testing.T) {
	fs := NewMemFS()
	w, opts := walWithSpares(t, fs, testDir)
	first, ok := parseSegmentName(filepath.Base(segmentPaths(t, fs)[0]))
	if !ok || first.seq <= 2 {
		t.Fatalf("the oldest segment left is %+v: the test needs more than 2 released", first)
	}
	if names, _ := fs.ReadDir(testDir); len(names) != len(segmentPaths(t, fs))+2 {
		t.Fatalf("directory holds %v: the released segments beyond the spares are not deleted", names)
	}

	// Two more segments' worth of entries: both spares are written over.
	want := saveTwoSegments(t, w)
	if got := spareFiles(t, fs); len(got) != 0 {
		t.Fatalf("spares %v left after the log rolled twice", got)
	}
	if n := reusedSegments(t, fs); n != 2 {
		t.Fatalf("%d segments hold an earlier use's bytes after their data, want 2", n)
	}
	check := func(how string, w *WAL) {
		t.Helper()
		snap, hs, es := mustReadAll(t, w)
		if snap.GetIndex() != 90 || hs.GetCommit() != 130 {
			t.Fatalf("%s: marker %d, commit %d; want 90, 130", how, snap.GetIndex(), hs.GetCommit())
		}
		equalEntries(t, es[len(es)-len(want):], want)
		if es[0].GetIndex() != 91 {
			t.Fatalf("%s: entries start at %d, want 91", how, es[0].GetIndex())
		}
	}
	w = reopen(t, fs, w, opts)
	check("reopened", w)
	w.Close()
	fs.Crash()
	w = mustOpenWAL(t, fs, opts)
	check("after a crash", w)
	w.Close()
}

// Stale bytes after the end of a segment's data — records of another
// salt, as an earlier use of the file leaves them — are not damage, in
// the last segment or any other: the log reads the same.
func TestWALStaleBytesAfterEnd(t *testing.T) {
	fs := NewMemFS()
	opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
	w := mustOpenWAL(t, fs, opts)
	mustReadAll(t, w)
	saveHundredPadded(t, w)
	w.Close()
	paths := segmentPaths(t, fs)
	recs := records(t, fs)
	for _, p := range []string{paths[1], paths[len(paths)-1]} {
		last := recs[p][len(recs[p])-1]
		end := last.Offset + int64(last.Size)
		data := readFile(t, fs, p)
		other := readFile(t, fs, paths[0]) // valid records, of another salt
		copy(data[end:], other[segment2DataStart:])
		if allZero(data[end:]) {
			t.Fatal("nothing stale after the end")
		}
		writeFile(t, fs, p, data)
	}
	w = mustOpenWAL(t, fs, opts)
	_, _, es := mustReadAll(t, w)
	w.Close()
	if len(es) != 100 || es[0].GetIndex() != 1 || es[99].GetIndex() != 100 {
		t.Fatalf("entries %s, want 1..100", describe(es))
	}
	// Appending goes on over the stale bytes, and reads back.
	w = mustOpenWAL(t, fs, opts)
	mustReadAll(t, w)
	mustSave(t, w, hardState(1, 1, 101), ents(101, 101, 1))
	w = reopen(t, fs, w, opts)
	_, _, es = mustReadAll(t, w)
	w.Close()
	if got := es[len(es)-1].GetIndex(); got != 101 {
		t.Fatalf("last entry %d after appending over stale bytes, want 101", got)
	}
}

// A spare is written over whatever it holds; OpenWAL keeps the spares of
// segment size and deletes the others.
func TestWALSpareOfAnyContent(t *testing.T) {
	fs := NewMemFS()
	opts := WALOptions{SegmentSize: 4096, Spares: 1, Logger: quietLogger()}
	if err := MkdirAllDurable(fs, testDir); err != nil {
		t.Fatal(err)
	}
	// A spare full of junk: not records of any salt.
	junk := []byte(strings.Repeat(fmt.Sprintf("%016x", uint64(0xfeedface)), 4096/16))
	writeFile(t, fs, testDir+"/0000000000000007-0000000000000009.wal"+spareSuffix, junk)
	// And one of the wrong size, which OpenWAL deletes.
	writeFile(t, fs, testDir+"/0000000000000008-0000000000000009.wal"+spareSuffix, junk[:1000])
	w := mustOpenWAL(t, fs, opts) // a new log: its first segment is the spare
	mustReadAll(t, w)
	if got := spareFiles(t, fs); len(got) != 0 {
		t.Fatalf("spares %v left, want the one of segment size taken and the other deleted", got)
	}
	saveHundredPadded(t, w)
	w = reopen(t, fs, w, opts)
	_, _, es := mustReadAll(t, w)
	w.Close()
	if len(es) != 100 || es[99].GetIndex() != 100 {
		t.Fatalf("entries %s, want 1..100", describe(es))
	}
	if n := reusedSegments(t, fs); n != 1 {
		t.Fatalf("%d segments written over a spare, want 1", n)
	}
}

// The same on a real file system: the spares' size after fallocate, the
// renames and the writes over a spare's start are those of the OS.
func TestWALReusesSegmentsOnDisk(t *testing.T) {
	dir := t.TempDir() + "/wal"
	w, opts := walWithSpares(t, OSFS, dir)
	want := saveTwoSegments(t, w)
	w.Close()
	if n := reusedSegmentsIn(t, OSFS, dir); n != 2 {
		t.Fatalf("%d segments written over a spare, want 2", n)
	}
	w, err := OpenWAL(OSFS, dir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	snap, _, es := mustReadAll(t, w)
	if snap.GetIndex() != 90 || len(es) < len(want) {
		t.Fatalf("marker %d, entries %s", snap.GetIndex(), describe(es))
	}
	equalEntries(t, es[len(es)-len(want):], want)
}

// A full disk gives the spares' space back: a write that fails for it
// drops them, and so does DropSpares (which the node calls when a
// snapshot did not fit); the log goes on in new files.
func TestWALDropsSparesOnAFullDisk(t *testing.T) {
	for _, how := range []string{"a failed write", "DropSpares"} {
		t.Run(how, func(t *testing.T) {
			fs := NewMemFS()
			w, opts := walWithSpares(t, fs, testDir)
			if how == "DropSpares" {
				w.DropSpares()
			} else {
				fs.InjectFault(OpWrite, 1, syscall.ENOSPC)
				if err := w.Save(hardState(1, 1, 100), ents(101, 101, 1), true); !errors.Is(err, ErrDiskFull) {
					t.Fatalf("Save on a full disk: %v, want ErrDiskFull", err)
				}
			}
			if got := spareFiles(t, fs); len(got) != 0 {
				t.Fatalf("spares %v left on a full disk", got)
			}
			want := saveTwoSegments(t, w)
			w = reopen(t, fs, w, opts)
			_, _, es := mustReadAll(t, w)
			w.Close()
			equalEntries(t, es[len(es)-len(want):], want)
			if n := reusedSegments(t, fs); n != 0 {
				t.Fatalf("%d segments written over a dropped spare", n)
			}
		})
	}
}

// By default the spares hold at most DefaultSpareBytes, but at least one
// segment is kept whatever its size.
func TestDefaultSpares(t *testing.T) {
	for _, c := range []struct {
		segSize int64
		want    int
	}{
		{16 << 10, DefaultSpares},
		{DefaultSegmentSize, 4},
		{128 << 20, 2},
		{200 << 20, 1},
		{1 << 30, 1},
		{4 << 30, 1},
	} {
		if got := defaultSpares(c.segSize); got != c.want {
			t.Errorf("defaultSpares(%d MiB) = %d, want %d", c.segSize>>20, got, c.want)
		}
	}
}
