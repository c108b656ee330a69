package storage

import (
	"encoding/binary"
	"hash/crc32"
	"testing"

	"google.golang.org/protobuf/proto"
)

// FuzzWALSegment feeds arbitrary bytes to the segment reader, as the last
// segment and as an earlier one: it must not panic, and what it accepts must
// be consistent.
func FuzzWALSegment(f *testing.F) {
	for _, version := range []uint32{walVersion1, walVersion2} {
		var seg []byte
		add := func(typ RecordType, m proto.Message) {
			var err error
			if version == walVersion1 {
				seg, err = appendRecord(seg, typ, m)
			} else {
				seg, err = appendRecord2(seg, 7, typ, m)
			}
			if err != nil {
				f.Fatal(err)
			}
		}
		if version == walVersion2 {
			seg = appendSegmentHeader(nil, 7)
		}
		for _, e := range ents(1, 3, 1) {
			add(RecordEntry, e)
		}
		add(RecordHardState, hardState(1, 1, 3))
		add(RecordSnapshot, snapMeta(2, 1))
		f.Add(append(seg, make([]byte, 64)...))
		f.Add(seg[:len(seg)-3])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, last := range []bool{false, true} {
			s, err := scanSegment("fuzz.wal", data, last)
			if s.end > int64(len(data)) {
				t.Fatalf("end %d past %d bytes", s.end, len(data))
			}
			off := int64(0)
			for _, r := range s.records {
				if r.Offset != off || r.Size <= recordHeaderSize {
					t.Fatalf("record at %d size %d, expected offset %d", r.Offset, r.Size, off)
				}
				off = r.Offset + int64(r.Size)
			}
			if err == nil && !s.torn {
				if s.version == walVersion1 && !allZero(data[s.end:]) {
					t.Fatalf("accepted non-zero bytes after the end of data at %d", s.end)
				}
				if at, ok := liveRecordAfter(data, s.end, s.salt); s.version == walVersion2 && ok {
					t.Fatalf("accepted a record of the segment at %d after the end of data at %d", at, s.end)
				}
			}
			var b logBuilder
			b.snap, b.hs = snapMeta(0, 0), hardState(0, 0, 0)
			for _, r := range s.records {
				if b.add("fuzz.wal", r) != nil {
					break
				}
			}
		}
	})
}

// FuzzSnapshotFile feeds arbitrary bytes to the snapshot reader; with fix
// set, the trailing checksum is made valid so the header and decompressor
// are reached.
func FuzzSnapshotFile(f *testing.F) {
	fs := NewMemFS()
	s := NewSnapshotter(fs, snapDir, 3, quietLogger())
	mustSaveSnap(f, s, 7)
	good := readFile(f, fs, snapDir+"/"+snapName(1, 7))
	f.Add(good, false)
	f.Add(good[:len(good)/2], true)
	f.Add([]byte("WDNSNAP\x00"), true)
	f.Fuzz(func(t *testing.T, data []byte, fix bool) {
		if fix && len(data) >= 4 {
			binary.LittleEndian.PutUint32(data[len(data)-4:], crc32.Checksum(data[:len(data)-4], castagnoli))
		}
		fs := NewMemFS()
		if err := MkdirAllDurable(fs, snapDir); err != nil {
			t.Fatal(err)
		}
		path := snapDir + "/" + snapName(1, 7)
		writeFile(t, fs, path, data)
		_, rc, err := OpenSnapshotFile(fs, path)
		if err != nil {
			return
		}
		defer rc.Close()
		// Bounded output, whatever the stream claims; a reader that makes no
		// progress would hang io.Copy.
		buf := make([]byte, 32<<10)
		for total, empty := 0, 0; total < 16<<20; {
			n, err := rc.Read(buf)
			if err != nil {
				return
			}
			if n == 0 {
				if empty++; empty > 100 {
					t.Fatal("snapshot reader returns no data and no error")
				}
			}
			total += n
		}
	})
}
