package zkimport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/adler32"
	"io"
	"slices"

	"github.com/wardenzk/warden/wire"
)

// ErrCorrupt is wrapped by every error about a damaged or unparseable
// ZooKeeper file.
var ErrCorrupt = errors.New("zkimport: corrupt ZooKeeper file")

// streamReader reads jute values from a stream (a snapshot, which may be
// larger than memory allows to hold twice) while keeping the Adler-32 of
// every byte read. Errors are sticky like wire.Decoder's: after the first
// failure reads return zero values and err reports it.
type streamReader struct {
	r      *bufio.Reader
	sum    hash.Hash32
	off    int64 // bytes consumed (of the decompressed stream)
	maxLen int   // bound on buffer and string lengths
	err    error
	buf    [8]byte
}

func newStreamReader(r io.Reader, maxLen int) *streamReader {
	return &streamReader{r: bufio.NewReaderSize(r, 1<<16), sum: adler32.New(), maxLen: maxLen}
}

func (s *streamReader) fail(err error) {
	if s.err == nil {
		s.err = err
	}
}

// full reads exactly len(p) bytes into p and adds them to the checksum.
func (s *streamReader) full(p []byte) bool {
	if s.err != nil {
		return false
	}
	n, err := io.ReadFull(s.r, p)
	return s.consumed(p[:n], err)
}

// consumed adds p, just read, to the checksum and records err.
func (s *streamReader) consumed(p []byte, err error) bool {
	s.sum.Write(p)
	s.off += int64(len(p))
	if err != nil {
		if errors.Is(err, io.EOF) {
			err = io.ErrUnexpectedEOF
		}
		s.fail(fmt.Errorf("%w: at offset %d: %w", ErrCorrupt, s.off, err))
		return false
	}
	return true
}

func (s *streamReader) int32() int32 {
	if !s.full(s.buf[:4]) {
		return 0
	}
	return int32(binary.BigEndian.Uint32(s.buf[:4]))
}

func (s *streamReader) int64() int64 {
	if !s.full(s.buf[:8]) {
		return 0
	}
	return int64(binary.BigEndian.Uint64(s.buf[:8]))
}

// length reads a length prefix; -1 (null) is reported as null.
func (s *streamReader) length(what string) (n int, null bool) {
	v := s.int32()
	if s.err != nil {
		return 0, false
	}
	if v == -1 {
		return 0, true
	}
	if v < 0 || int(v) > s.maxLen {
		s.fail(fmt.Errorf("%w: %s length %d at offset %d (jute.maxbuffer is %d)", ErrCorrupt, what, v, s.off-4, s.maxLen))
		return 0, false
	}
	return int(v), false
}

// buffer reads a jute buffer: nil for null, non-nil (maybe empty) otherwise.
func (s *streamReader) buffer() []byte {
	n, null := s.length("buffer")
	if null || s.err != nil {
		return nil
	}
	p, err := readN(s.r, n)
	if !s.consumed(p, err) {
		return nil
	}
	return p
}

// readN reads exactly n bytes from r into a new slice. It allocates as
// the bytes arrive, not n up front, so that a corrupt length costs no
// more memory than the input holds. A short read returns the bytes read
// with io.EOF when there were none, else io.ErrUnexpectedEOF.
func readN(r io.Reader, n int) ([]byte, error) {
	p := make([]byte, 0, min(n, 64<<10))
	for len(p) < n {
		if len(p) == cap(p) {
			p = slices.Grow(p, min(n-len(p), len(p)))
		}
		m, err := io.ReadFull(r, p[len(p):min(n, cap(p))])
		p = p[:len(p)+m]
		if err != nil {
			if errors.Is(err, io.EOF) && len(p) > 0 {
				err = io.ErrUnexpectedEOF
			}
			return p, err
		}
	}
	return p, nil
}

// string reads a jute ustring; null reads as "".
func (s *streamReader) string() string {
	return string(s.buffer())
}

// acls reads a vector<ACL>.
func (s *streamReader) acls() []wire.ACL {
	n := s.int32()
	if s.err != nil || n == -1 {
		return nil
	}
	if n < 0 || int(n) > s.maxLen/12 {
		s.fail(fmt.Errorf("%w: ACL count %d at offset %d", ErrCorrupt, n, s.off-4))
		return nil
	}
	out := make([]wire.ACL, 0, min(n, 16)) // n is not yet known to be there
	for i := int32(0); i < n && s.err == nil; i++ {
		perms := wire.Perm(s.int32())
		scheme := s.string()
		id := s.string()
		out = append(out, wire.ACL{Perms: perms, ID: wire.ID{Scheme: scheme, ID: id}})
	}
	return out
}

// checksum returns the Adler-32 of the bytes read so far.
func (s *streamReader) checksum() uint32 { return s.sum.Sum32() }

// atEOF reports whether the stream has no more bytes (without consuming any).
func (s *streamReader) atEOF() bool {
	if s.err != nil {
		return false
	}
	_, err := s.r.Peek(1)
	return errors.Is(err, io.EOF)
}
