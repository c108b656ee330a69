package storage

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// asVersion returns err as a *VersionError, failing the test otherwise.
func asVersion(t testing.TB, err error) *VersionError {
	t.Helper()
	var ve *VersionError
	if !errors.As(err, &ve) {
		t.Fatalf("got error %v, want a *VersionError", err)
	}
	return ve
}

// bigEnts is ents with 200 bytes of data each: a few fill a test segment.
func bigEnts(lo, hi, term uint64) []*raftpb.Entry {
	es := ents(lo, hi, term)
	for _, e := range es {
		e.Data = append(e.Data, strings.Repeat("x", 200)...)
	}
	return es
}

// TestWALSegmentWithoutVersionRecord: a segment written before segments
// recorded their version (header records, then entries) is read as
// version 1, and the log goes on in a new segment that records it.
func TestWALSegmentWithoutVersionRecord(t *testing.T) {
	fs := NewMemFS()
	if err := MkdirAllDurable(fs, testDir); err != nil {
		t.Fatal(err)
	}
	seg, err := appendRecord(nil, RecordSnapshot, snapMeta(1, 1))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents(2, 5, 1) {
		if seg, err = appendRecord(seg, RecordEntry, e); err != nil {
			t.Fatal(err)
		}
	}
	if seg, err = appendRecord(seg, RecordHardState, hardState(1, 1, 5)); err != nil {
		t.Fatal(err)
	}
	old := filepath.Join(testDir, segmentName{seq: 0, firstIndex: 1}.String())
	writeFile(t, fs, old, append(seg, make([]byte, 4096)...))

	opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
	w := mustOpenWAL(t, fs, opts)
	snap, hs, es := mustReadAll(t, w)
	if snap.GetIndex() != 1 || !proto.Equal(hs, hardState(1, 1, 5)) {
		t.Fatalf("marker %v, hard state %v", snap, hs)
	}
	equalEntries(t, es, ents(2, 5, 1))
	// Fill the old segment so that the log rolls to a new one.
	mustSave(t, w, hardState(1, 1, 5), bigEnts(6, 60, 1))
	w = reopen(t, fs, w, opts)
	_, _, es = mustReadAll(t, w)
	equalEntries(t, es, append(ents(2, 5, 1), bigEnts(6, 60, 1)...))
	w.Close()

	var versions []uint32
	if err := ScanWAL(fs, testDir, func(s WALSegment, recs []WALRecord) error {
		versions = append(versions, s.Version)
		if s.Path != old && (len(recs) == 0 || recs[0].Type != RecordVersion) {
			return fmt.Errorf("%s: the new segment does not start with a version record", s.Path)
		}
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if len(versions) < 2 || versions[0] != walVersion1 || versions[len(versions)-1] != walVersion {
		t.Fatalf("segment versions %v, want 1 for the old one and %d for the last", versions, walVersion)
	}
}

// TestWALNewerVersion: a segment of a version this build does not know
// stops OpenWAL and ScanWAL with a *VersionError naming the file, and is
// left as it is (a newer build reads it).
func TestWALNewerVersion(t *testing.T) {
	for _, which := range []string{"first", "last"} {
		t.Run(which, func(t *testing.T) {
			fs := NewMemFS()
			opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
			w := mustOpenWAL(t, fs, opts)
			mustSave(t, w, hardState(1, 1, 60), bigEnts(1, 60, 1))
			w.Close()
			paths := segmentPaths(t, fs)
			if len(paths) < 2 {
				t.Fatalf("%d segments, want several", len(paths))
			}
			path := paths[0]
			if which == "last" {
				path = paths[len(paths)-1]
			}
			// A newer build's segment: its version record says a newer
			// version, and what follows is anything that build writes.
			data := readFile(t, fs, path)
			binary.LittleEndian.PutUint32(data[recordHeaderSize+1:], walVersion+1)
			binary.LittleEndian.PutUint32(data[4:], recordCRC(data[:4], data[recordHeaderSize:recordHeaderSize+5]))
			data[recordHeaderSize+5] ^= 0xff // the next record would be unreadable
			writeFile(t, fs, path, data)

			_, err := OpenWAL(fs, testDir, opts)
			ve := asVersion(t, err)
			if ve.File != path || ve.Version != walVersion+1 || ve.Newest != walVersion {
				t.Fatalf("VersionError %+v, want file %s, version %d, newest %d", ve, path, walVersion+1, walVersion)
			}
			for _, want := range []string{path, fmt.Sprintf("format version %d", walVersion+1), "a newer Warden wrote it", "do not delete the file"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("error %q does not say %q", err, want)
				}
			}
			if !bytes.Equal(readFile(t, fs, path), data) {
				t.Fatal("OpenWAL changed the newer segment")
			}
			asVersion(t, ScanWAL(fs, testDir, func(WALSegment, []WALRecord) error { return nil }))
		})
	}
}

// TestWALVersionRecordMisplaced: a version record after the start of a
// segment, or of version 0, is damage.
func TestWALVersionRecordMisplaced(t *testing.T) {
	zero := []byte{5, 0, 0, 0, 0, 0, 0, 0, byte(RecordVersion), 0, 0, 0, 0}
	binary.LittleEndian.PutUint32(zero[4:], recordCRC(zero[:4], zero[8:]))
	for _, tt := range []struct {
		name string
		seg  []byte
		off  int64
		want string
	}{
		{"twice", append(versionRecord(walVersion1), versionRecord(walVersion1)...), 13, "a version record after the start of the segment"},
		{"among salted records", salted(t, 99, versionRecord(walVersion2)[recordHeaderSize:]), segment2DataStart, "a version record after the start of the segment"},
		{"salt among salted records", salted(t, 99, appendSegmentHeader(nil, 5)[saltRecordOffset+recordHeaderSize:saltRecordOffset+recordHeaderSize+9]), segment2DataStart, "a salt record after the start of the segment"},
		{"salt in version 1", append(versionRecord(walVersion1), appendSegmentHeader(nil, 5)[saltRecordOffset:]...), 13, "a salt record in a version-1 segment"},
		{"no salt record", pad(versionRecord(walVersion2), segment2DataStart), saltRecordOffset, "not followed by a valid salt record"},
		{"zero salt", appendSegmentHeader(nil, 0), saltRecordOffset, "salt is zero"},
		{"version 0", zero, 0, "format version 0 does not exist"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			seg := append(tt.seg, make([]byte, 64)...)
			_, err := scanSegment("seg", seg, false)
			if ce := asCorrupt(t, err); ce.Offset != tt.off || !strings.Contains(ce.Reason, tt.want) {
				t.Fatalf("CorruptError %+v, want offset %d and %q", ce, tt.off, tt.want)
			}
		})
	}
}

// TestSnapshotNewerVersion: a snapshot file of a newer version is not
// skipped as damaged for an older one: LoadNewest stops with a
// *VersionError naming it, and leaves every file in place.
func TestSnapshotNewerVersion(t *testing.T) {
	fs := NewMemFS()
	s := NewSnapshotter(fs, snapDir, 3, quietLogger())
	mustSaveSnap(t, s, 10)
	mustSaveSnap(t, s, 20)
	path := filepath.Join(snapDir, snapName(1, 20))
	data := readFile(t, fs, path)
	binary.LittleEndian.PutUint32(data[8:], snapVersion+1)
	crc := binary.LittleEndian.AppendUint32(nil, crc32.Checksum(data[:len(data)-snapTrailer], castagnoli))
	copy(data[len(data)-snapTrailer:], crc)
	writeFile(t, fs, path, data)

	_, _, err := loadNewest(s)
	if ve := asVersion(t, err); ve.File != path || ve.Version != snapVersion+1 || ve.Newest != snapVersion {
		t.Fatalf("VersionError %+v", ve)
	}
	infos, err := s.List()
	if err != nil || len(infos) != 2 {
		t.Fatalf("snapshots left: %v, %v; want both", infos, err)
	}
}

// TestSnapshotReadErrorNamesFile: an error of the caller's reader (the
// state machine refusing the body) comes back naming the file, wrapped.
func TestSnapshotReadErrorNamesFile(t *testing.T) {
	fs := NewMemFS()
	s := NewSnapshotter(fs, snapDir, 3, quietLogger())
	mustSaveSnap(t, s, 10)
	refused := errors.New("a stream of a newer version")
	_, err := s.LoadNewest(func(*raftpb.SnapshotMetadata, io.Reader) error { return refused })
	if !errors.Is(err, refused) || !strings.Contains(err.Error(), filepath.Join(snapDir, snapName(1, 10))) {
		t.Fatalf("err = %v; want the reader's error, naming the file", err)
	}
}
