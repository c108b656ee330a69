package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const testDir = "/data/wal"

func ent(index, term uint64, data string) *raftpb.Entry {
	return &raftpb.Entry{Index: proto.Uint64(index), Term: proto.Uint64(term), Data: []byte(data)}
}

func hardState(term, vote, commit uint64) *raftpb.HardState {
	return &raftpb.HardState{Term: proto.Uint64(term), Vote: proto.Uint64(vote), Commit: proto.Uint64(commit)}
}

func snapMeta(index, term uint64) *raftpb.SnapshotMetadata {
	return &raftpb.SnapshotMetadata{Index: proto.Uint64(index), Term: proto.Uint64(term),
		ConfState: &raftpb.ConfState{Voters: []uint64{1}}}
}

// ents returns entries lo..hi (inclusive) of term with data "e<index>-t<term>".
func ents(lo, hi, term uint64) []*raftpb.Entry {
	var out []*raftpb.Entry
	for i := lo; i <= hi; i++ {
		out = append(out, ent(i, term, fmt.Sprintf("e%d-t%d", i, term)))
	}
	return out
}

// testLogger returns a logger writing into the returned buffer.
func testLogger() (*slog.Logger, *bytes.Buffer) {
	var buf bytes.Buffer
	return slog.New(slog.NewTextHandler(&buf, nil)), &buf
}

func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func mustOpenWAL(t testing.TB, fs FS, opts WALOptions) *WAL {
	t.Helper()
	if opts.Logger == nil {
		opts.Logger = quietLogger()
	}
	w, err := OpenWAL(fs, testDir, opts)
	if err != nil {
		t.Fatalf("OpenWAL: %v", err)
	}
	t.Cleanup(func() { w.Close() })
	return w
}

func mustReadAll(t testing.TB, w *WAL) (*raftpb.SnapshotMetadata, *raftpb.HardState, []*raftpb.Entry) {
	t.Helper()
	snap, hs, es, err := w.ReadAll()
	if err != nil {
		t.Fatalf("ReadAll: %v", err)
	}
	return snap, hs, es
}

func mustSave(t testing.TB, w *WAL, hs *raftpb.HardState, es []*raftpb.Entry) {
	t.Helper()
	if err := w.Save(hs, es, true); err != nil {
		t.Fatalf("Save: %v", err)
	}
}

// reopen closes w and opens the WAL again.
func reopen(t testing.TB, fs FS, w *WAL, opts WALOptions) *WAL {
	t.Helper()
	w.Close()
	return mustOpenWAL(t, fs, opts)
}

func equalEntries(t testing.TB, got, want []*raftpb.Entry) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d entries %v, want %d %v", len(got), describe(got), len(want), describe(want))
	}
	for i := range got {
		if !proto.Equal(got[i], want[i]) {
			t.Fatalf("entry %d: got %v, want %v", i, got[i], want[i])
		}
	}
}

func describe(es []*raftpb.Entry) string {
	var b bytes.Buffer
	for _, e := range es {
		fmt.Fprintf(&b, "%d/%d ", e.GetIndex(), e.GetTerm())
	}
	return b.String()
}

// segmentPaths lists the WAL's segment files.
func segmentPaths(t testing.TB, fs FS) []string {
	t.Helper()
	segs, err := listSegments(fs, testDir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, s := range segs {
		out = append(out, filepath.Join(testDir, s.String()))
	}
	return out
}

// records returns the records of the WAL, per segment path.
func records(t testing.TB, fs FS) map[string][]WALRecord {
	t.Helper()
	out := map[string][]WALRecord{}
	if err := ScanWAL(fs, testDir, func(s WALSegment, recs []WALRecord) error {
		out[s.Path] = recs
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	return out
}

func readFile(t testing.TB, fs FS, path string) []byte {
	t.Helper()
	b, release, err := segmentBytes(fs, path)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	return bytes.Clone(b)
}

// writeFile replaces path's contents, durably.
func writeFile(t testing.TB, fs FS, path string, data []byte) {
	t.Helper()
	f, err := fs.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, 0); err != nil {
		t.Fatal(err)
	}
	if err := f.Sync(); err != nil {
		t.Fatal(err)
	}
	if err := fs.SyncDir(filepath.Dir(path)); err != nil {
		t.Fatal(err)
	}
}

func asCorrupt(t testing.TB, err error) *CorruptError {
	t.Helper()
	var ce *CorruptError
	if !errors.As(err, &ce) {
		t.Fatalf("got error %v, want a *CorruptError", err)
	}
	return ce
}

// versionRecord returns a version record of version v, framed as every
// version frames it.
func versionRecord(v uint32) []byte {
	rec := []byte{5, 0, 0, 0, 0, 0, 0, 0, byte(RecordVersion), 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(rec[9:], v)
	binary.LittleEndian.PutUint32(rec[4:], recordCRC(rec[:4], rec[8:]))
	return rec
}

// salted returns a version-2 segment of the given salt whose first record
// holds body (type byte and payload), framed with the salt.
func salted(t testing.TB, salt uint64, body []byte) []byte {
	t.Helper()
	seg := appendSegmentHeader(nil, salt)
	hdr := make([]byte, record2HeaderSize)
	binary.LittleEndian.PutUint32(hdr, uint32(len(body)))
	binary.LittleEndian.PutUint64(hdr[8:], salt)
	binary.LittleEndian.PutUint32(hdr[4:], record2CRC(hdr, body))
	return append(append(seg, hdr...), body...)
}

// pad returns b with zero bytes up to n bytes.
func pad(b []byte, n int) []byte { return append(b, make([]byte, max(0, n-len(b)))...) }

// framedSize returns the bytes a version-2 record at r.Offset of data takes
// without the padding after it: its header and body.
func framedSize(data []byte, r WALRecord) int {
	return record2HeaderSize + int(binary.LittleEndian.Uint32(data[r.Offset:]))
}

// appendRecord frames m as a version-1 record of type typ at the end of
// buf: what builds before format 2 wrote.
func appendRecord(buf []byte, typ RecordType, m proto.Message) ([]byte, error) {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(typ))
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return buf[:start], err
	}
	return sealRecord(buf, start, typ)
}
