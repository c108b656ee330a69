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
	// walVersion is the version this build writes, the newest it reads.
	walVersion = walVersion1
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
	}
	return fmt.Sprintf("RecordType(%d)", uint8(t))
}

const (
	// recordHeaderSize is the framing before a record's body:
	// length (4 bytes) and CRC32C (4 bytes).
	recordHeaderSize = 8
	// maxRecordBody bounds a record's length field; larger is corruption.
	maxRecordBody = 1 << 30
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recordCRC is the checksum of a record: CRC32C over the length field and
// the body (type byte and payload).
func recordCRC(lenField, body []byte) uint32 {
	return crc32.Update(crc32.Checksum(lenField, castagnoli), castagnoli, body)
}

// appendRecord frames m as a record of type typ at the end of buf.
func appendRecord(buf []byte, typ RecordType, m proto.Message) ([]byte, error) {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(typ))
	buf, err := proto.MarshalOptions{}.MarshalAppend(buf, m)
	if err != nil {
		return buf[:start], fmt.Errorf("storage: encoding %s record: %w", typ, err)
	}
	return sealRecord(buf, start, typ)
}

// appendVersionRecord appends the version record of a new segment.
func appendVersionRecord(buf []byte) []byte {
	start := len(buf)
	buf = append(buf, 0, 0, 0, 0, 0, 0, 0, 0, byte(RecordVersion))
	buf = binary.LittleEndian.AppendUint32(buf, walVersion)
	buf, _ = sealRecord(buf, start, RecordVersion) // 5 bytes of body: within every limit
	return buf
}

// sealRecord fills in the length and checksum of the record of type typ
// that starts at buf[start] and runs to the end of buf.
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
}

// segmentScan is what scanSegment found in one segment.
type segmentScan struct {
	version uint32 // the segment's format version
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
		rec.Offset, rec.Size = off, int(end-off)
		s.records = append(s.records, rec)
		off = end
	}
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
