package storage

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// RecordType says what a WAL record holds.
type RecordType uint8

// The WAL record types. Numbers are part of the on-disk format.
const (
	RecordEntry     RecordType = 1 // a raftpb.Entry
	RecordHardState RecordType = 2 // a raftpb.HardState
	RecordSnapshot  RecordType = 3 // a raftpb.SnapshotMetadata: a snapshot marker
	RecordVersion   RecordType = 4 // the segment's format version, uint32 little-endian; first in a segment
	RecordSalt      RecordType = 5 // the segment's salt, uint64 little-endian; second in a version-2 segment
)

// WAL format versions: what a segment's version record says. A segment
// without one (written before versions were recorded) is of version 1.
//
// To change the format (a new record type, a new meaning of a field):
// add the next version's constant and make walVersion that constant.
// Segments then start with the new version; scanSegment still reads every
// older one (their records keep their meaning) and refuses a segment of a
// version above walVersion with a *VersionError. Whatever the version, a
// segment starts with its version record framed as in version 1, so that
// any build can tell it is newer. Then add a golden data directory of the
// new version (internal/node's TestGoldenDataDirs says how), keeping the
// older ones.
const (
	walVersion1 = 1
	// walVersion2 frames records with the segment's salt and aligns them
	// to 8 bytes, so that a released segment file can be written over
	// (see the package documentation).
	walVersion2 = 2
	// walVersion is the version this build writes, the newest it reads.
	walVersion = walVersion2
)

// WALVersion is the WAL format version this build writes, the newest it
// reads.
const WALVersion = walVersion

func (t RecordType) String() string {
	switch t {
	case RecordEntry:
		return "entry"
	case RecordHardState:
		return "hardstate"
	case RecordSnapshot:
		return "snapshot"
	case RecordVersion:
		return "version"
	case RecordSalt:
		return "salt"
	}
	return fmt.Sprintf("RecordType(%d)", uint8(t))
}

const (
	// recordHeaderSize is the framing before a version-1 record's body:
	// length (4 bytes) and CRC32C (4 bytes).
	recordHeaderSize = 8
	// record2HeaderSize is the framing before a version-2 record's body:
	// length (4 bytes), CRC32C (4 bytes) and the segment's salt (8 bytes).
	record2HeaderSize = 16
	// saltRecordOffset is where a version-2 segment's salt record starts:
	// after the version record (13 bytes), aligned.
	saltRecordOffset = 16
	// segment2DataStart is where a version-2 segment's salted records
	// start: after the salt record (17 bytes), aligned.
	segment2DataStart = 40
	// maxRecordBody bounds a record's length field; larger is corruption.
	maxRecordBody = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordCRC is the checksum of a version-1 record: CRC32C over the length
// field and the body (type byte and payload).
func recordCRC(lenField, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(lenField, castagnoli), castagnoli, body)
}

// appendSegmentHeader appends the start of a new segment with the given
// salt: its version record and its salt record, both framed as in version
// 1 (so that every build can read the version), each padded to 8 bytes.
func appendSegmentHeader(buf []byte, salt uint64) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(RecordVersion))
	buf = binary.LittleEndian.AppendUint32(buf, walVersion)
	buf, _ = sealRecord(buf, start, RecordVersion) // 5 bytes of body: within every limit
	buf = pad8(buf, start)
	rec := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(RecordSalt))
	buf = binary.LittleEndian.AppendUint64(buf, salt)
	buf, _ = sealRecord(buf, rec, RecordSalt)
	return pad8(buf, start)
}

// pad8 appends zero bytes to buf until its length from start is a
// multiple of 8.
func pad8(buf []byte, start int) []byte {
	for (len(buf)-start)%8 != 0 {
		buf = append(buf, 0)
	}
	return buf
}

// align8 rounds n up to a multiple of 8.
func align8(n int64) int64 { return (n + 7) &^ 7 }

// appendRecord2 frames m as a version-2 record of type typ, in a segment
// of the given salt, at the end of buf, padded to 8 bytes.
func appendRecord2(buf []byte, salt uint64, typ RecordType, m proto.Message) ([]byte, error) {
	start := len(buf)
	buf = append(buf, make([]byte, record2HeaderSize)...)
	buf = append(buf, byte(typ))
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return buf[:start], fmt.Errorf("storage: encoding %s record: %w", typ, err)
	}
	body := buf[start+record2HeaderSize:]
	if len(body) > maxRecordBody {
		return buf[:start], fmt.Errorf("storage: %s record of %d bytes is larger than the limit of %d", typ, len(body), maxRecordBody)
	}
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(body)))
	binary.LittleEndian.PutUint64(buf[start+8:], salt)
	binary.LittleEndian.PutUint32(buf[start+4:], record2CRC(buf[start:start+record2HeaderSize], body))
	return pad8(buf, start), nil
}

// record2CRC is the checksum of a version-2 record: CRC32C over the length
// field, the salt and the body. hdr is the record's header; its checksum
// field is skipped.
func record2CRC(hdr, body []byte) uint32 {
	c := crc32.Checksum(hdr[:4], castagnoli)
	c = crc32.Update(c, castagnoli, hdr[8:record2HeaderSize])
	return crc32.Update(c, castagnoli, body)
}

// sealRecord fills in the length and checksum of the version-1 record of
// type typ that starts at buf[start] and runs to the end of buf.
func sealRecord(buf []byte, start int, typ RecordType) ([]byte, error) {
	body := buf[start+recordHeaderSize:]
	if len(body) > maxRecordBody {
		return buf[:start], fmt.Errorf("storage: %s record of %d bytes is larger than the limit of %d", typ, len(body), maxRecordBody)
	}
	binary.LittleEndian.PutUint32(buf[start:], uint32(len(body)))
	binary.LittleEndian.PutUint32(buf[start+4:], recordCRC(buf[start:start+4], body))
	return buf, nil
}

// WALRecord is one record read back from a segment.
type WALRecord struct {
	Offset    int64      // byte offset of the record's header in its segment
	Size      int        // bytes the record occupies, framing included
	Type      RecordType // which of the fields below is set
	Entry     *raftpb.Entry
	HardState *raftpb.HardState
	Snapshot  *raftpb.SnapshotMetadata
	Version   uint32 // of a version record
	Salt      uint64 // of a salt record
}

// segmentScan is what scanSegment found in one segment.
type segmentScan struct {
	version uint32 // the segment's format version
	salt    uint64 // a version-2 segment's salt (0 in version 1)
	records []WALRecord
	end     int64 // bytes of valid records; everything after is zero (or torn)
	torn    bool  // bytes after end are a torn write (only in the last segment)
}

// scanSegment decodes the records of a segment's contents. name is used in
// errors. In the last segment (last), a damaged record followed only by zero
// bytes is a torn write and ends the data; anywhere else damage is a
// *CorruptError. Records decoded before the damage are returned with it.
//
// A segment of a format version newer than walVersion is a *VersionError,
// found at its first record.
func scanSegment(name string, buf []byte, last bool) (segmentScan, error) {
	s := segmentScan{version: walVersion1}
	size := int64(len(buf))
	off := int64(0)
	for {
		s.end = off
		if size-off < recordHeaderSize {
			if allZero(buf[off:]) {
				return s, nil
			}
			return s.damaged(name, buf, off, size, last, "trailing bytes too short for a record")
		}
		n := int64(binary.LittleEndian.Uint32(buf[off:]))
		if n == 0 {
			if allZero(buf[off:]) {
				return s, nil // the end of the data: the rest is preallocated zeros
			}
			return s.damaged(name, buf, off, off+recordHeaderSize, last, "zero record length followed by non-zero bytes")
		}
		end := off + recordHeaderSize + n
		if n > maxRecordBody || end > size {
			return s.damaged(name, buf, off, off+recordHeaderSize, last, fmt.Sprintf("record length %d runs past the end of the segment", n))
		}
		body := buf[off+recordHeaderSize : end]
		if got, want := recordCRC(buf[off:off+4], body), binary.LittleEndian.Uint32(buf[off+4:]); got != want {
			return s.damaged(name, buf, off, end, last, fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", want, got))
		}
		rec, err := decodeRecord(body)
		if err != nil {
			// The checksum matched: this is not a torn write.
			return s, &CorruptError{File: name, Offset: off, Reason: err.Error()}
		}
		if rec.Type == RecordVersion {
			switch {
			case off != 0:
				return s, &CorruptError{File: name, Offset: off, Reason: "a version record after the start of the segment"}
			case rec.Version > walVersion:
				return s, &VersionError{File: name, Format: "write-ahead log segment", Version: rec.Version, Newest: walVersion}
			case rec.Version < walVersion1:
				return s, &CorruptError{File: name, Offset: off, Reason: fmt.Sprintf("format version %d does not exist", rec.Version)}
			}
			s.version = rec.Version
		}
		if rec.Type == RecordSalt {
			return s, &CorruptError{File: name, Offset: off, Reason: "a salt record in a version-1 segment"}
		}
		rec.Offset, rec.Size = off, int(end-off)
		s.records = append(s.records, rec)
		if rec.Type == RecordVersion && rec.Version >= walVersion2 {
			return s.scan2(name, buf, last)
		}
		off = end
	}
}

// scan2 reads the rest of a version-2 segment, whose version record
// scanSegment has read: the salt record, then the salted records. The
// bytes after the data are zero or whatever an earlier use of the file
// left there, records of other salts among them: the data ends at the
// first record that is not of this segment's salt. Where a record of this
// salt is damaged, or the data ends, but a valid record of this salt
// follows anywhere later, records are missing: a *CorruptError. Otherwise
// a damaged record is a torn write in the last segment, corruption in any
// other.
func (s segmentScan) scan2(name string, buf []byte, last bool) (segmentScan, error) {
	size := int64(len(buf))
	off := int64(saltRecordOffset)
	s.end = min(off, size)
	s.records[0].Size = int(s.end) // the version record and its padding
	const saltRecordSize = recordHeaderSize + 1 + 8
	if size < segment2DataStart || binary.LittleEndian.Uint32(buf[off:]) != saltRecordSize-recordHeaderSize ||
		recordCRC(buf[off:off+4], buf[off+recordHeaderSize:off+saltRecordSize]) != binary.LittleEndian.Uint32(buf[off+4:]) ||
		RecordType(buf[off+recordHeaderSize]) != RecordSalt {
		return s, &CorruptError{File: name, Offset: off, Reason: "the version record is not followed by a valid salt record"}
	}
	s.salt = binary.LittleEndian.Uint64(buf[off+recordHeaderSize+1:])
	if s.salt == 0 {
		return s, &CorruptError{File: name, Offset: off, Reason: "the segment's salt is zero"}
	}
	s.records = append(s.records, WALRecord{Offset: off, Size: segment2DataStart - saltRecordOffset, Type: RecordSalt, Salt: s.salt})
	off = segment2DataStart
	for {
		s.end = off
		if size-off < record2HeaderSize {
			return s, nil // no room for another record
		}
		if binary.LittleEndian.Uint64(buf[off+8:]) != s.salt {
			if at, ok := liveRecordAfter(buf, off+8, s.salt); ok {
				return s, &CorruptError{File: name, Offset: off,
					Reason: fmt.Sprintf("the segment's records stop here, but one of them follows at offset %d", at)}
			}
			return s, nil // the end of the data
		}
		end, problem := record2Problem(buf, off)
		if problem != "" {
			return s.damaged2(name, buf, off, last, problem)
		}
		rec, err := decodeRecord(buf[off+record2HeaderSize : end])
		if err != nil {
			// The checksum matched: this is not a torn write.
			return s, &CorruptError{File: name, Offset: off, Reason: err.Error()}
		}
		if rec.Type == RecordVersion || rec.Type == RecordSalt {
			return s, &CorruptError{File: name, Offset: off, Reason: fmt.Sprintf("a %s record after the start of the segment", rec.Type)}
		}
		next := min(align8(end), size)
		rec.Offset, rec.Size = off, int(next-off)
		s.records = append(s.records, rec)
		off = next
	}
}

// damaged2 classifies a damaged record of this segment's salt at off in a
// version-2 segment: corruption if a valid record of the segment follows
// it, or if this is not the last segment; otherwise a torn write.
func (s segmentScan) damaged2(name string, buf []byte, off int64, last bool, reason string) (segmentScan, error) {
	if at, ok := liveRecordAfter(buf, off+8, s.salt); ok {
		return s, &CorruptError{File: name, Offset: off, Reason: fmt.Sprintf("%s, and a valid record follows at offset %d", reason, at)}
	}
	if last {
		s.torn = true
		return s, nil
	}
	return s, &CorruptError{File: name, Offset: off, Reason: reason}
}

// liveRecordAfter returns the offset of the first valid record of the
// given salt at an 8-byte-aligned offset at or after from, if any. Only a
// writer that knows the salt (random, and never a client's to choose) can
// have put one there, so stale records of an earlier use of the file, and
// client bytes within records, never match.
func liveRecordAfter(buf []byte, from int64, salt uint64) (int64, bool) {
	size := int64(len(buf))
	for p := align8(from); p+record2HeaderSize <= size; p += 8 {
		if binary.LittleEndian.Uint64(buf[p+8:]) != salt {
			continue
		}
		if _, problem := record2Problem(buf, p); problem == "" {
			return p, true
		}
	}
	return 0, false
}

// record2Problem checks the length and checksum of the version-2 record
// whose header starts at off, record2HeaderSize bytes or more before the
// end of buf. It returns where the record's body ends, and "" when both
// are right or else what is wrong.
func record2Problem(buf []byte, off int64) (end int64, problem string) {
	n := int64(binary.LittleEndian.Uint32(buf[off:]))
	end = off + record2HeaderSize + n
	if n == 0 || n > maxRecordBody || end > int64(len(buf)) {
		return end, fmt.Sprintf("record length %d is zero or runs past the end of the segment", n)
	}
	if got, want := record2CRC(buf[off:off+record2HeaderSize], buf[off+record2HeaderSize:end]), binary.LittleEndian.Uint32(buf[off+4:]); got != want {
		return end, fmt.Sprintf("checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	return end, ""
}

// damaged classifies a record at off that can't be read. The record's bytes
// extend to extent (as far as its length field can be believed). A torn
// write leaves the start of a record followed by the zeros of the
// preallocated segment: if only zeros follow extent in the last segment, no
// acknowledged record can follow, and the tail is torn.
func (s segmentScan) damaged(name string, buf []byte, off, extent int64, last bool, reason string) (segmentScan, error) {
	if last && allZero(buf[min(extent, int64(len(buf))):]) {
		s.torn = true
		return s, nil
	}
	return s, &CorruptError{File: name, Offset: off, Reason: reason}
}

func decodeRecord(body []byte) (WALRecord, error) {
	rec := WALRecord{Type: RecordType(body[0])}
	var m proto.Message
	switch rec.Type {
	case RecordEntry:
		rec.Entry = &raftpb.Entry{}
		m = rec.Entry
	case RecordHardState:
		rec.HardState = &raftpb.HardState{}
		m = rec.HardState
	case RecordSnapshot:
		rec.Snapshot = &raftpb.SnapshotMetadata{}
		m = rec.Snapshot
	case RecordVersion:
		if len(body) != 1+4 {
			return rec, fmt.Errorf("version record of %d bytes, want 4", len(body)-1)
		}
		rec.Version = binary.LittleEndian.Uint32(body[1:])
		return rec, nil
	case RecordSalt:
		if len(body) != 1+8 {
			return rec, fmt.Errorf("salt record of %d bytes, want 8", len(body)-1)
		}
		rec.Salt = binary.LittleEndian.Uint64(body[1:])
		return rec, nil
	default:
		return rec, fmt.Errorf("unknown record type %d (written by a newer version?)", body[0])
	}
	if err := proto.Unmarshal(body[1:], m); err != nil {
		return rec, fmt.Errorf("undecodable %s record: %v", rec.Type, err)
	}
	return rec, nil
}

func allZero(b []byte) bool {
	for len(b) >= 8 {
		if binary.LittleEndian.Uint64(b) != 0 {
			return false
		}
		b = b[8:]
	}
	for _, c := range b {
		if c != 0 {
			return false
		}
	}
	return true
}
