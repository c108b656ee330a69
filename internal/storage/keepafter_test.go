package storage

import (
	"errors"
	"strings"
	"testing"
)

// A recovery that falls back to an older snapshot gets every entry after
// it, although a newer marker covers them.
func TestKeepAfterReturnsEntriesBehindNewerMarker(t *testing.T) {
	fs := NewMemFS()
	opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
	w := mustOpenWAL(t, fs, opts)
	mustReadAll(t, w)
	mustSave(t, w, hardState(1, 1, 30), ents(1, 30, 1))
	if err := w.SaveSnapshot(snapMeta(20, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}

	keep := opts
	keep.KeepAfter = 10
	w = mustOpenWAL(t, fs, keep)
	snap, _, got := mustReadAll(t, w)
	if snap.GetIndex() != 20 {
		t.Fatalf("newest marker = %d, want 20", snap.GetIndex())
	}
	equalEntries(t, got, ents(11, 30, 1))
	w.Close()

	// Without KeepAfter the marker decides.
	w = mustOpenWAL(t, fs, opts)
	_, _, got = mustReadAll(t, w)
	equalEntries(t, got, ents(21, 30, 1))
	w.Close()
}

func TestKeepAfterFailsWhenEntriesWereReleased(t *testing.T) {
	fs := NewMemFS()
	opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
	w := mustOpenWAL(t, fs, opts)
	mustReadAll(t, w)
	// Enough entries for several 4 KiB segments.
	for i := uint64(1); i <= 600; i += 10 {
		mustSave(t, w, hardState(1, 1, i+9), ents(i, i+9, 1))
	}
	if err := w.SaveSnapshot(snapMeta(580, 1)); err != nil {
		t.Fatal(err)
	}
	if err := w.ReleaseTo(580); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if segs := segmentPaths(t, fs); strings.HasSuffix(segs[0], "-0000000000000001.wal") {
		t.Fatalf("the first segment survived ReleaseTo: %v", segs)
	}

	keep := opts
	keep.KeepAfter = 5
	_, err := OpenWAL(fs, testDir, keep)
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("OpenWAL with released entries = %v, want a *CorruptError", err)
	}
}
