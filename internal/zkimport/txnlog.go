package zkimport

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"os"
)

// TxnHeader is the header of a logged transaction (jute TxnHeader).
type TxnHeader struct {
	ClientID int64 // the session that issued it
	Cxid     int32
	Zxid     int64
	Time     int64 // ms since the epoch, the leader's clock
	Type     int32 // an OpCode (create 1, ..., createSession -10, closeSession -11, error -1)
}

// logRecord is one record of a transaction log: the header and the raw
// body (the bytes after the header, digest included).
type logRecord struct {
	Header TxnHeader
	Body   []byte
	Offset int64 // of the record in its file
}

// logReader iterates over the records of one transaction log file.
type logReader struct {
	name   string
	r      *bufio.Reader
	off    int64
	maxLen int
}

// openLog opens a log file and checks its FileHeader.
func openLog(name string, maxLen int) (*logReader, io.Closer, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, nil, err
	}
	lr := &logReader{name: name, r: bufio.NewReaderSize(f, 1<<16), maxLen: maxLen}
	var h [16]byte
	if _, err := io.ReadFull(lr.r, h[:]); err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: log file header: %w", ErrCorrupt, name, err)
	}
	lr.off = 16
	if m := binary.BigEndian.Uint32(h[0:4]); m != logMagic {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: bad log magic %#x (want \"ZKLG\")", ErrCorrupt, name, m)
	}
	if v := int32(binary.BigEndian.Uint32(h[4:8])); v != 2 {
		f.Close()
		return nil, nil, fmt.Errorf("%w: %s: unsupported log version %d (want 2)", ErrCorrupt, name, v)
	}
	return lr, f, nil
}

// next returns the next record, or io.EOF at the end of the log: the real
// end of the file, the zero padding, or a torn last record (as
// FileTxnIterator stops there). A checksum mismatch is an error.
func (lr *logReader) next() (logRecord, error) {
	start := lr.off
	var h [12]byte
	n, err := io.ReadFull(lr.r, h[:])
	lr.off += int64(n)
	if err != nil {
		return logRecord{}, io.EOF // nothing more, or a torn checksum/length
	}
	sum := binary.BigEndian.Uint64(h[0:8])
	length := int32(binary.BigEndian.Uint32(h[8:12]))
	if length == 0 {
		return logRecord{}, io.EOF // preallocated zeros
	}
	if length < 0 || int(length) > lr.maxLen {
		return logRecord{}, fmt.Errorf("%w: %s: transaction at offset %d has length %d (limit %d)", ErrCorrupt, lr.name, start, length, lr.maxLen)
	}
	txn, err := readN(lr.r, int(length)+1) // txn bytes and the 'B' end marker
	lr.off += int64(len(txn))
	if err != nil || txn[length] != 'B' {
		return logRecord{}, io.EOF // partial last transaction
	}
	txn = txn[:length]
	if got := uint64(adler32.Checksum(txn)); got != sum {
		return logRecord{}, fmt.Errorf("%w: %s: transaction at offset %d fails its checksum (stored %#x, computed %#x); "+
			"ZooKeeper would not start on this log either: restore the file or remove it and the logs after it (losing their transactions)",
			ErrCorrupt, lr.name, start, sum, got)
	}
	if len(txn) < 32 {
		return logRecord{}, fmt.Errorf("%w: %s: transaction at offset %d is %d bytes, shorter than its header", ErrCorrupt, lr.name, start, len(txn))
	}
	rec := logRecord{Offset: start, Body: txn[32:]}
	rec.Header = TxnHeader{
		ClientID: int64(binary.BigEndian.Uint64(txn[0:8])),
		Cxid:     int32(binary.BigEndian.Uint32(txn[8:12])),
		Zxid:     int64(binary.BigEndian.Uint64(txn[12:20])),
		Time:     int64(binary.BigEndian.Uint64(txn[20:28])),
		Type:     int32(binary.BigEndian.Uint32(txn[28:32])),
	}
	return rec, nil
}
