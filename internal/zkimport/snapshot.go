package zkimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"github.com/klauspost/compress/snappy"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// File magics (FileHeader.magic): "ZKSN" for snapshots, "ZKLG" for logs.
const (
	snapMagic = 0x5a4b534e
	logMagic  = 0x5a4b4c47
)

// DefaultMaxBuffer bounds the length of one buffer or string read from a
// ZooKeeper file when Dirs.MaxBuffer is 0: far above jute.maxbuffer's
// default (1 MiB), so that only corrupt lengths are refused.
const DefaultMaxBuffer = 64 << 20

// snapshotCompression is how a snapshot file is stored, by file suffix
// (SnapStream.StreamMode).
type snapshotCompression int

const (
	compressionChecked snapshotCompression = iota // no suffix: plain stream
	compressionGzip                               // .gz
	compressionSnappy                             // .snappy (snappy-java framing)
)

func compressionOf(name string) snapshotCompression {
	switch {
	case strings.HasSuffix(name, ".gz"):
		return compressionGzip
	case strings.HasSuffix(name, ".snappy"):
		return compressionSnappy
	}
	return compressionChecked
}

// readSnapshotFile parses the snapshot at path into db (which must be
// fresh). The caller falls back to an older snapshot on error.
func readSnapshotFile(path string, maxLen int, db *DB) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	var r io.Reader = f
	switch compressionOf(path) {
	case compressionChecked:
		// SnapStream.isValidCheckedStream: a complete plain snapshot ends
		// with the seal's "/" (int 1, byte '/').
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() < 10 {
			return fmt.Errorf("%w: %s: %d bytes is too short for a snapshot", ErrCorrupt, path, st.Size())
		}
		var tail [5]byte
		if _, err := f.ReadAt(tail[:], st.Size()-5); err != nil {
			return err
		}
		if binary.BigEndian.Uint32(tail[:4]) != 1 || tail[4] != '/' {
			return fmt.Errorf("%w: %s does not end with the snapshot seal (incomplete snapshot?)", ErrCorrupt, path)
		}
	case compressionGzip:
		zr, err := gzip.NewReader(bufio.NewReader(f))
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
		}
		defer zr.Close()
		r = zr
	case compressionSnappy:
		sr, err := newSnappyReader(bufio.NewReader(f))
		if err != nil {
			return fmt.Errorf("%w: %s: %w", ErrCorrupt, path, err)
		}
		r = sr
	}
	if err := parseSnapshot(newStreamReader(r, maxLen), db); err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// parseSnapshot reads a decompressed snapshot stream (see doc.go) into db.
func parseSnapshot(s *streamReader, db *DB) error {
	magic, version, _ := s.int32(), s.int32(), s.int64()
	if s.err != nil {
		return s.err
	}
	if magic != snapMagic {
		return fmt.Errorf("%w: bad snapshot magic %#x (want \"ZKSN\")", ErrCorrupt, uint32(magic))
	}
	if version != 2 {
		return fmt.Errorf("%w: unsupported snapshot version %d (want 2)", ErrCorrupt, version)
	}
	count := s.int32()
	for i := int32(0); i < count && s.err == nil; i++ {
		id, timeout := s.int64(), s.int32()
		db.Sessions[id] = timeout
	}

	// ReferenceCountedACLCache: ref → ACL list; -1 is world:anyone ALL.
	acls := map[int64][]wire.ACL{}
	n := s.int32()
	for i := int32(0); i < n && s.err == nil; i++ {
		ref := s.int64()
		list := s.acls()
		if s.err == nil && list == nil {
			s.fail(fmt.Errorf("%w: null ACL list for ref %d in the ACL cache", ErrCorrupt, ref))
		}
		acls[ref] = list
	}

	clear(db.Nodes)
	for s.err == nil {
		path := s.string()
		if s.err != nil || path == "/" {
			break
		}
		node := &Node{Data: s.buffer()}
		ref := s.int64()
		st := &node.Stat
		st.Czxid, st.Mzxid, st.Ctime, st.Mtime = s.int64(), s.int64(), s.int64(), s.int64()
		st.Version, st.Cversion, st.Aversion = s.int32(), s.int32(), s.int32()
		st.EphemeralOwner, st.Pzxid = s.int64(), s.int64()
		if s.err != nil {
			break
		}
		switch list, ok := acls[ref]; {
		case ref == -1:
			node.ACL = slices.Clone(wire.OpenACLUnsafe)
		case ok:
			node.ACL = list
		default:
			return fmt.Errorf("%w: node %q refers to ACL %d, missing from the ACL cache", ErrCorrupt, path, ref)
		}
		if path == "" {
			db.Nodes["/"] = node
			continue
		}
		if tree.ValidatePath(path) != nil { // ZooKeeper never stores one ("//" would make the root its own child)
			return fmt.Errorf("%w: bad node path %q", ErrCorrupt, path)
		}
		parent, name := split(path)
		pn, ok := db.Nodes[parent]
		if !ok {
			return fmt.Errorf("%w: node %q comes before its parent %q", ErrCorrupt, path, parent)
		}
		if _, dup := db.Nodes[path]; dup {
			return fmt.Errorf("%w: node %q appears twice", ErrCorrupt, path)
		}
		pn.addKid(name)
		db.Nodes[path] = node
	}
	if s.err != nil {
		return s.err
	}
	if _, ok := db.Nodes["/"]; !ok {
		return fmt.Errorf("%w: snapshot has no root node", ErrCorrupt)
	}
	if err := checkSeal(s); err != nil {
		return err
	}
	if s.atEOF() {
		return nil // written before 3.6: no digest
	}
	// ZxidDigest (3.6+), then a second seal. Anything later is ignored, as
	// ZooKeeper 3.8 ignores it.
	s.int64() // zxid
	if dv := s.int32(); dv < 2 {
		s.string()
	} else {
		s.int64()
	}
	if s.err != nil {
		return s.err
	}
	return checkSeal(s)
}

// checkSeal reads a seal (adler32 long, "/" ustring) and verifies the
// checksum of everything before it.
func checkSeal(s *streamReader) error {
	want := s.checksum()
	got := s.int64()
	path := s.string()
	if s.err != nil {
		return s.err
	}
	if uint64(got) != uint64(want) || path != "/" {
		return fmt.Errorf("%w: snapshot checksum mismatch at offset %d (stored %#x, computed %#x)", ErrCorrupt, s.off, got, want)
	}
	return nil
}

// snappyMagic opens a snappy-java stream (SnappyCodec's header).
var snappyMagic = []byte{0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0}

// snappyReader decodes the framing of snappy-java's SnappyOutputStream:
// the 8-byte magic, version int, compatible-version int, then blocks of
// (length int, raw snappy block). Several streams may follow each other.
type snappyReader struct {
	r   *bufio.Reader
	buf []byte // decoded bytes not yet returned
	blk []byte
}

func newSnappyReader(r *bufio.Reader) (*snappyReader, error) {
	sr := &snappyReader{r: r}
	if err := sr.header(); err != nil {
		return nil, err
	}
	return sr, nil
}

func (sr *snappyReader) header() error {
	var h [16]byte
	if _, err := io.ReadFull(sr.r, h[:]); err != nil {
		return fmt.Errorf("snappy header: %w", err)
	}
	if !bytes.Equal(h[:8], snappyMagic) {
		return errors.New("not a snappy-java stream (bad magic)")
	}
	return nil
}

func (sr *snappyReader) Read(p []byte) (int, error) {
	for len(sr.buf) == 0 {
		var l [4]byte
		if _, err := io.ReadFull(sr.r, l[:]); err != nil {
			if errors.Is(err, io.EOF) {
				return 0, io.EOF
			}
			return 0, fmt.Errorf("snappy block length: %w", err)
		}
		if bytes.Equal(l[:], snappyMagic[:4]) { // a concatenated stream
			if err := sr.finishHeader(); err != nil {
				return 0, err
			}
			continue
		}
		n := binary.BigEndian.Uint32(l[:])
		if n > 1<<28 {
			return 0, fmt.Errorf("snappy block length %d", n)
		}
		var err error
		if cap(sr.blk) >= int(n) {
			sr.blk = sr.blk[:n]
			_, err = io.ReadFull(sr.r, sr.blk)
		} else {
			sr.blk, err = readN(sr.r, int(n)) // not n bytes before they arrive
		}
		if err != nil {
			return 0, fmt.Errorf("snappy block: %w", io.ErrUnexpectedEOF)
		}
		out, err := snappy.Decode(nil, sr.blk)
		if err != nil {
			return 0, fmt.Errorf("snappy block: %w", err)
		}
		sr.buf = out
	}
	n := copy(p, sr.buf)
	sr.buf = sr.buf[n:]
	return n, nil
}

// finishHeader reads the rest of a header whose first 4 bytes were read.
func (sr *snappyReader) finishHeader() error {
	var h [12]byte
	if _, err := io.ReadFull(sr.r, h[:]); err != nil {
		return fmt.Errorf("snappy header: %w", err)
	}
	if !bytes.Equal(h[:4], snappyMagic[4:]) {
		return errors.New("bad snappy-java stream header")
	}
	return nil
}
