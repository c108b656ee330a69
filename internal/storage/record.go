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
)

func (t RecordType) String() string {
	switch t {
	case RecordEntry:
		return "entry"
	case RecordHardState:
		return "hardstate"
	case RecordSnapshot:
		return "snapshot"
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
}

// segmentScan is what scanSegment found in one segment.
type segmentScan struct {
	records []WALRecord
	end     int64 // bytes of valid records; everything after is zero (or torn)
	torn    bool  // bytes after end are a torn write (only in the last segment)
}

// scanSegment decodes the records of a segment's contents. name is used in
// errors. In the last segment (last), a damaged record followed only by zero
// bytes is a torn write and ends the data; anywhere else damage is a
// *CorruptError. Records decoded before the damage are returned with it.
func scanSegment(name string, buf []byte, last bool) (segmentScan, error) {
	var s segmentScan
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
