package fsm

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"maps"
	"slices"
	"sync"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// ErrBadSnapshot is wrapped by every error Restore, DumpSnapshot and
// InspectSnapshot return for a stream that is not a valid snapshot (as
// opposed to an error of the reader itself).
var ErrBadSnapshot = errors.New("fsm: invalid snapshot")

// ErrNewerSnapshot is wrapped by the error Restore, DumpSnapshot and
// InspectSnapshot return for a stream of a version newer than this build
// reads: a newer Warden wrote it. It is not damage; it needs that newer
// build.
var ErrNewerSnapshot = errors.New("fsm: snapshot written by a newer version of Warden")

// Snapshot stream constants (see the package doc for the format).
//
// To change the format (a new kind of frame, a new field): add the next
// version's constant, make snapVersion that constant, write the change
// only in it, and read it only when sr.version is at least it, keeping
// every older version's path: a build reads every version from 1 to
// snapVersion, and refuses a newer one with ErrNewerSnapshot. Then add a
// golden data directory of the new version (internal/node's
// TestGoldenDataDirs says how), keeping the older ones.
const (
	snapMagic = "WRDNSNAP"
	// snapVersion1 is the first version: sessions without an owner.
	snapVersion1 = 1
	// snapVersionOwner adds the owner of each session.
	snapVersionOwner = 2
	// snapVersionMembership adds the members frame (the replicated
	// membership of dynamic reconfiguration).
	snapVersionMembership = 3
	// snapVersion is the version written, the newest this build reads.
	snapVersion = snapVersionMembership

	kindHeader  = 'H'
	kindSession = 'S'
	kindNode    = 'N'
	kindMembers = 'M'
	kindEnd     = 'E'

	frameOverhead = 8    // length + crc
	frameSlack    = 4096 // fixed-size fields of a node frame, with room to spare
)

// SnapshotVersion is the snapshot stream version this build writes, the
// newest it reads.
const SnapshotVersion = snapVersion

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// treeOptions are the tree settings that follow from opts.
func treeOptions(opts Options) tree.Options {
	return tree.Options{SkipACL: opts.SkipACL, EnforceQuota: opts.EnforceQuota}
}

// Clone returns a copy of the state machine that later Apply calls on f
// do not affect, for WriteSnapshot to serialise without any lock. It needs
// the caller's exclusive lock (no Apply running) and is brief: the tree is
// copied on write (see tree.Tree.Clone: constant time but for the
// ephemeral, container and TTL indexes) and the session table's map is
// copied (sessions themselves are immutable and shared).
func (f *FSM) Clone() *FSM {
	c := *f
	c.tree = f.tree.Clone()
	c.sessions = maps.Clone(f.sessions)
	return &c
}

// NewFromState returns a state machine holding t, the given sessions and
// zxid state (lastZxid = epoch<<32 | counter), as import-zk builds it.
// t must have been built with the tree options opts implies (SkipACL,
// EnforceQuota); the state machine owns t and the sessions' Passwd slices
// from now on.
func NewFromState(opts Options, t *tree.Tree, sessions map[SessionID]Session, epoch uint32, counter uint32, lastTerm uint64) *FSM {
	f := &FSM{
		opts:     opts,
		tree:     t,
		sessions: make(map[SessionID]*Session, len(sessions)),
		epoch:    epoch,
		counter:  counter,
		lastTerm: lastTerm,
		lastZxid: Zxid(int64(epoch)<<32 | int64(counter)),
	}
	for id, s := range sessions {
		f.sessions[id] = &Session{Timeout: s.Timeout, Passwd: s.Passwd, Owner: NoOwner}
	}
	return f
}

// snapHeader is the header frame: the zxid state and the counts.
type snapHeader struct {
	epoch, counter uint32
	lastTerm       uint64
	lastZxid       int64
	sessions       int64
	nodes          int64
}

func (h *snapHeader) encode(e *wire.Encoder) {
	e.Byte(kindHeader)
	e.Int32(int32(h.epoch))
	e.Int32(int32(h.counter))
	e.Int64(int64(h.lastTerm))
	e.Int64(h.lastZxid)
	e.Int64(h.sessions)
	e.Int64(h.nodes)
}

func (h *snapHeader) decode(d *wire.Decoder) {
	h.epoch = uint32(d.Int32())
	h.counter = uint32(d.Int32())
	h.lastTerm = uint64(d.Int64())
	h.lastZxid = d.Int64()
	h.sessions = d.Int64()
	h.nodes = d.Int64()
}

// check validates the header's own consistency.
func (h *snapHeader) check() error {
	if want := int64(h.epoch)<<32 | int64(h.counter); h.lastZxid != want {
		return fmt.Errorf("lastZxid %#x does not match epoch %d and counter %d (want %#x)", h.lastZxid, h.epoch, h.counter, want)
	}
	if h.sessions < 0 || h.nodes < 4 {
		return fmt.Errorf("impossible counts: %d sessions, %d nodes (at least the 4 reserved nodes)", h.sessions, h.nodes)
	}
	return nil
}

func encodeSession(e *wire.Encoder, id int64, s *Session) {
	e.Byte(kindSession)
	e.Int64(id)
	e.Int32(s.Timeout)
	e.Buffer(s.Passwd)
	e.Int64(s.Owner)
}

func encodeNode(e *wire.Encoder, r *tree.NodeRecord) {
	e.Byte(kindNode)
	e.String(r.Path)
	e.Buffer(r.Data)
	wire.EncodeACLs(e, r.ACL)
	e.Int64(r.Czxid)
	e.Int64(r.Mzxid)
	e.Int64(r.Ctime)
	e.Int64(r.Mtime)
	e.Int32(r.Version)
	e.Int32(r.StoredCversion)
	e.Int32(r.Aversion)
	e.Int64(r.EphemeralOwner)
	e.Int64(r.Pzxid)
}

func decodeNode(d *wire.Decoder, last *lastACL) tree.NodeRecord {
	var r tree.NodeRecord
	r.Path = d.String()
	r.Data = d.Buffer()
	if last.acl != nil && d.SkipIf(last.raw) {
		r.ACL = last.acl
	} else {
		start := d.Offset()
		n := d.VectorLen(12) // perms + two empty strings
		for i := 0; i < n && d.Err() == nil; i++ {
			var a wire.ACL
			a.Decode(d)
			r.ACL = append(r.ACL, a)
		}
		if d.Err() == nil {
			last.raw, last.acl = bytes.Clone(d.Since(start)), r.ACL
		}
	}
	r.Czxid = d.Int64()
	r.Mzxid = d.Int64()
	r.Ctime = d.Int64()
	r.Mtime = d.Int64()
	r.Version = d.Int32()
	r.StoredCversion = d.Int32()
	r.Aversion = d.Int32()
	r.EphemeralOwner = d.Int64()
	r.Pzxid = d.Int64()
	return r
}

// lastACL is the last ACL list decodeNode decoded, and its encoding: the
// nodes of a snapshot mostly share a few ACLs, and a record whose ACL is
// encoded as the last one's shares its slice (read-only) instead of
// allocating its own.
type lastACL struct {
	raw []byte
	acl []wire.ACL
}

// snapWriter writes frames to a buffered writer, one record at a time.
type snapWriter struct {
	w   *bufio.Writer
	enc wire.Encoder
}

// frame encodes one frame body with fill and writes it framed.
func (sw *snapWriter) frame(fill func(e *wire.Encoder)) error {
	sw.enc.Reset()
	sw.enc.Int32(0) // length, patched below
	fill(&sw.enc)
	b := sw.enc.Bytes()
	body := b[4:]
	binary.BigEndian.PutUint32(b, uint32(len(body)))
	sw.enc.Int32(int32(crc32.Checksum(body, castagnoli)))
	_, err := sw.w.Write(sw.enc.Bytes())
	return err
}

// WriteSnapshot writes all replicated state (zxid state, sessions, every
// node) to w in the snapshot format of the package doc. It streams: memory
// use is one record plus a small buffer, whatever the tree's size. f must
// not change meanwhile: call it on a Clone to write without holding the
// server's lock. An error is w's.
func (f *FSM) WriteSnapshot(w io.Writer) error {
	sw := &snapWriter{w: bufio.NewWriterSize(w, 64<<10)}
	if _, err := sw.w.WriteString(snapMagic); err != nil {
		return err
	}
	if err := binary.Write(sw.w, binary.BigEndian, uint32(snapVersion)); err != nil {
		return err
	}
	h := snapHeader{
		epoch: f.epoch, counter: f.counter, lastTerm: f.lastTerm, lastZxid: int64(f.lastZxid),
		sessions: int64(len(f.sessions)), nodes: int64(f.tree.NodeCount()),
	}
	if err := sw.frame(h.encode); err != nil {
		return err
	}
	for _, id := range slices.Sorted(maps.Keys(f.sessions)) {
		if err := sw.frame(func(e *wire.Encoder) { encodeSession(e, int64(id), f.sessions[id]) }); err != nil {
			return err
		}
	}
	err := f.tree.Records(func(r tree.NodeRecord) error {
		return sw.frame(func(e *wire.Encoder) { encodeNode(e, &r) })
	})
	if err != nil {
		return err
	}
	if err := sw.frame(func(e *wire.Encoder) { f.encodeMembers(e) }); err != nil {
		return err
	}
	err = sw.frame(func(e *wire.Encoder) {
		e.Byte(kindEnd)
		e.Int64(h.sessions)
		e.Int64(h.nodes)
	})
	if err != nil {
		return err
	}
	return sw.w.Flush()
}

// snapReader reads and checks frames from a snapshot stream.
type snapReader struct {
	r        *bufio.Reader
	maxField int          // longest string or buffer field accepted
	maxFrame int64        // longest frame body accepted
	off      int64        // stream bytes consumed
	frames   int          // frames read (the header is frame 0)
	cur      int          // number of the frame being read or last read
	buf      bytes.Buffer // frames over smallFrame bytes
	hdr      snapHeader
	// members receives the membership frame's state.
	members FSM
	version uint32 // of the stream, from the preamble
}

// smallFrame is the largest frame (length prefix excluded, checksum
// included) that snapReader.next checks in its reader's buffer.
const smallFrame = 4 << 10

func newSnapReader(r io.Reader, maxField int) *snapReader {
	if maxField <= 0 {
		maxField = wire.DefaultMaxBuffer
	}
	return &snapReader{r: bufio.NewReaderSize(r, 64<<10), maxField: maxField, maxFrame: 4*int64(maxField) + frameSlack}
}

// fail returns an ErrBadSnapshot error located at the stream offset off.
func (sr *snapReader) fail(off int64, format string, args ...any) error {
	return fmt.Errorf("%w: at byte %d: %s", ErrBadSnapshot, off, fmt.Sprintf(format, args...))
}

// readErr turns an error of the underlying reader into one that says
// where it happened; running out of bytes is a truncated snapshot.
func (sr *snapReader) readErr(what string, err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return sr.fail(sr.off, "stream ends inside %s: the snapshot is truncated", what)
	}
	return fmt.Errorf("fsm: reading snapshot %s at byte %d: %w", what, sr.off, err)
}

// preamble reads the magic and version.
func (sr *snapReader) preamble() error {
	var p [12]byte
	if _, err := io.ReadFull(sr.r, p[:]); err != nil {
		return sr.readErr("the preamble", err)
	}
	if string(p[:8]) != snapMagic {
		return sr.fail(0, "not a Warden snapshot stream (magic %q)", p[:8])
	}
	v := binary.BigEndian.Uint32(p[8:])
	if v > snapVersion {
		return fmt.Errorf("%w: at byte 8: the stream is of format version %d and this build reads versions 1 to %d; "+
			"run the Warden release that wrote it, or a later one", ErrNewerSnapshot, v, snapVersion)
	}
	if v < snapVersion1 {
		return sr.fail(8, "snapshot format version %d is not supported (this build reads versions 1 to %d)", v, snapVersion)
	}
	sr.version = v
	sr.off = 12
	return nil
}

// frameName names the current frame, expected to be of the given kind,
// for errors.
func (sr *snapReader) frameName(kind byte) string {
	switch kind {
	case kindHeader:
		return "frame 0 (the header)"
	case kindSession:
		return fmt.Sprintf("frame %d (session %d of %d)", sr.cur, sr.cur, sr.hdr.sessions)
	case kindNode:
		return fmt.Sprintf("frame %d (node %d of %d)", sr.cur, int64(sr.cur)-sr.hdr.sessions, sr.hdr.nodes)
	case kindMembers:
		return fmt.Sprintf("frame %d (the membership)", sr.cur)
	}
	return fmt.Sprintf("frame %d (the end)", sr.cur)
}

// next reads the next frame, checks its checksum and kind, and returns a
// decoder positioned after the kind byte. finish must be called after the
// fields are decoded.
func (sr *snapReader) next(kind byte) (*wire.Decoder, int64, error) {
	body, start, err := sr.nextBody(kind)
	if err != nil {
		return nil, start, err
	}
	return wire.NewDecoder(body, sr.maxField), start, nil
}

// nextBody is next without the decoder: the frame's body after its kind
// byte, valid until the next call, and the frame's byte offset.
func (sr *snapReader) nextBody(kind byte) ([]byte, int64, error) {
	start := sr.off
	sr.cur = sr.frames
	// The frame's name is only formatted for an error: a snapshot holds
	// a frame per node.
	name := func() string { return sr.frameName(kind) }
	var lb [4]byte
	if _, err := io.ReadFull(sr.r, lb[:]); err != nil {
		return nil, start, sr.readErr(name(), err)
	}
	n := int64(binary.BigEndian.Uint32(lb[:]))
	if n < 1 || n > sr.maxFrame {
		return nil, start, sr.fail(start, "%s: length %d is outside 1..%d; if the server's jute.maxbuffer was larger when the snapshot was written, raise it", name(), n, sr.maxFrame)
	}
	var b []byte
	if n+4 <= smallFrame {
		// Most frames (a node's) are small: they are checked where they
		// lie in the reader's buffer, not copied out of it (the buffer
		// holds more than smallFrame, and nothing reads before the next
		// call).
		var err error
		if b, err = sr.r.Peek(int(n + 4)); err != nil {
			sr.off = start + 4 + int64(len(b))
			return nil, start, sr.readErr(name(), err)
		}
		sr.r.Discard(len(b))
	} else {
		sr.buf.Reset()
		// CopyN grows the buffer as bytes arrive: a damaged length cannot
		// make us allocate more than the stream holds.
		if _, err := io.CopyN(&sr.buf, sr.r, n+4); err != nil {
			sr.off = start + 4 + int64(sr.buf.Len())
			return nil, start, sr.readErr(name(), err)
		}
		b = sr.buf.Bytes()
	}
	sr.off = start + 4 + n + 4
	body := b[:n]
	if got, want := crc32.Checksum(body, castagnoli), binary.BigEndian.Uint32(b[n:]); got != want {
		return nil, start, sr.fail(start, "%s: checksum mismatch (stored %08x, computed %08x)", name(), want, got)
	}
	sr.frames++
	if body[0] != kind {
		return nil, start, sr.fail(start, "%s: kind %q, want %q", name(), body[0], kind)
	}
	return body[1:], start, nil
}

// finish checks that d decoded its frame exactly; what names the frame
// in an error.
func (sr *snapReader) finish(d *wire.Decoder, start int64, what func() string) error {
	if err := d.Err(); err != nil {
		hint := ""
		if errors.Is(err, wire.ErrBadLength) {
			hint = " (if the server's jute.maxbuffer was larger when the snapshot was written, raise it)"
		}
		return sr.fail(start, "%s: %v%s", what(), err, hint)
	}
	if d.Remaining() != 0 {
		return sr.fail(start, "%s: %d bytes left over in the frame", what(), d.Remaining())
	}
	return nil
}

// header reads the preamble and header frame.
func (sr *snapReader) header() error {
	if err := sr.preamble(); err != nil {
		return err
	}
	d, start, err := sr.next(kindHeader)
	if err != nil {
		return err
	}
	sr.hdr.decode(d)
	if err := sr.finish(d, start, func() string { return "frame 0 (the header)" }); err != nil {
		return err
	}
	if err := sr.hdr.check(); err != nil {
		return sr.fail(start, "frame 0 (the header): %v", err)
	}
	return nil
}

// sessions reads every session frame, calling fn with each.
func (sr *snapReader) sessions(fn func(id int64, s Session) error) error {
	var last int64
	for i := int64(0); i < sr.hdr.sessions; i++ {
		d, start, err := sr.next(kindSession)
		if err != nil {
			return err
		}
		id := d.Int64()
		s := Session{Timeout: d.Int32(), Passwd: d.Buffer(), Owner: NoOwner}
		if sr.version >= snapVersionOwner {
			s.Owner = d.Int64()
		}
		name := fmt.Sprintf("session %#x (frame %d)", id, sr.cur)
		if err := sr.finish(d, start, func() string { return name }); err != nil {
			return err
		}
		if i > 0 && id <= last {
			return sr.fail(start, "%s: ids not in increasing order (after %#x)", name, last)
		}
		last = id
		if err := fn(id, s); err != nil {
			return err
		}
	}
	return nil
}

// nodes reads every node frame, calling fn with each. Two goroutines of
// their own work a batch ahead of fn (which builds the tree): one reads
// and checks the frames (decompression, checksums), the other decodes
// them into records (the copies of paths and data). On two cores this
// took a start-up at a million znodes from 1.1 s to 0.9 s, against one
// goroutine doing both.
func (sr *snapReader) nodes(fn func(tree.NodeRecord) error) error {
	frames := make(chan frameBatch, 4)
	records := make(chan recordBatch, 4)
	spare := make(chan []byte, 8) // frame buffers the decoder is done with
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer close(frames)
		sr.readNodeFrames(frames, spare, stop)
	}()
	go func() {
		defer wg.Done()
		defer close(records)
		sr.decodeNodeFrames(frames, records, spare, stop)
	}()
	defer func() {
		close(stop)
		wg.Wait() // the reader is the goroutines' until they return
	}()
	for b := range records {
		for i, r := range b.recs {
			if err := fn(r); err != nil {
				return fmt.Errorf("%w: at byte %d: node %q (frame %d): %w", ErrBadSnapshot, b.starts[i], r.Path, b.frame+i, err)
			}
		}
		if b.err != nil {
			return b.err
		}
	}
	return nil
}

// frameBatch is consecutive node frames read and checked, not decoded:
// frame i's body (after its kind byte) is buf[ends[i-1]:ends[i]].
type frameBatch struct {
	buf    []byte
	ends   []int
	starts []int64 // byte offset of each frame
	frame  int     // frame number of the first
	err    error   // after the frames
}

// recordBatch is consecutive node records, decoded.
type recordBatch struct {
	recs   []tree.NodeRecord
	starts []int64 // byte offset of each record's frame
	frame  int     // frame number of recs[0]
	err    error   // after recs
}

// Bounds of a batch of node frames: a snapshot of small znodes goes in
// batches of nodeBatch frames, one of large znodes in batches of about
// nodeBatchBytes, so that what is in flight between the goroutines stays
// small whatever the data.
const (
	nodeBatch      = 512
	nodeBatchBytes = 1 << 20
)

// readNodeFrames reads the node frames in batches into frames, the last
// one carrying the error that ended them, if any; it returns early when
// stop is closed. It reuses the buffers the decoder hands back on spare.
func (sr *snapReader) readNodeFrames(frames chan<- frameBatch, spare <-chan []byte, stop <-chan struct{}) {
	newBatch := func() frameBatch {
		b := frameBatch{ends: make([]int, 0, nodeBatch), starts: make([]int64, 0, nodeBatch)}
		select {
		case b.buf = <-spare:
		default:
		}
		return b
	}
	b := newBatch()
	send := func() bool {
		select {
		case frames <- b:
			b = newBatch()
			return true
		case <-stop:
			return false
		}
	}
	for i := int64(0); i < sr.hdr.nodes; i++ {
		body, start, err := sr.nextBody(kindNode)
		if err != nil {
			b.err = err
			send()
			return
		}
		if len(b.ends) == 0 {
			b.frame = sr.cur
		}
		b.buf = append(b.buf, body...)
		b.ends = append(b.ends, len(b.buf))
		b.starts = append(b.starts, start)
		if (len(b.ends) == nodeBatch || len(b.buf) >= nodeBatchBytes) && !send() {
			return
		}
	}
	if len(b.ends) > 0 {
		send()
	}
}

// decodeNodeFrames decodes the batches of frames into batches of records
// until frames is closed, a frame does not decode (its batch then ends
// there, with the error) or stop is closed. Records copy what they keep,
// so each frame buffer goes back to the reader on spare.
func (sr *snapReader) decodeNodeFrames(frames <-chan frameBatch, records chan<- recordBatch, spare chan<- []byte, stop <-chan struct{}) {
	var acl lastACL
	for fb := range frames {
		rb := recordBatch{recs: make([]tree.NodeRecord, 0, len(fb.ends)), starts: fb.starts, frame: fb.frame, err: fb.err}
		prev := 0
		for i, end := range fb.ends {
			d := wire.NewDecoder(fb.buf[prev:end], sr.maxField)
			prev = end
			r := decodeNode(d, &acl)
			if err := sr.finish(d, fb.starts[i], func() string { return fmt.Sprintf("node %q (frame %d)", r.Path, fb.frame+i) }); err != nil {
				rb.starts, rb.err = rb.starts[:i], err
				break
			}
			rb.recs = append(rb.recs, r)
		}
		if cap(fb.buf) <= 2*nodeBatchBytes { // one that held a huge frame is dropped
			select {
			case spare <- fb.buf[:0]:
			default:
			}
		}
		select {
		case records <- rb:
		case <-stop:
			return
		}
		if rb.err != nil {
			return
		}
	}
}

// end reads the membership frame (snapVersionMembership on), then the end frame, and
// checks that the stream ends there.
func (sr *snapReader) end() error {
	if sr.version >= snapVersionMembership {
		d, start, err := sr.next(kindMembers)
		if err != nil {
			return err
		}
		sr.members.decodeMembers(d)
		if err := sr.finish(d, start, func() string { return sr.frameName(kindMembers) }); err != nil {
			return err
		}
	}
	d, start, err := sr.next(kindEnd)
	if err != nil {
		return err
	}
	sessions, nodes := d.Int64(), d.Int64()
	if err := sr.finish(d, start, func() string { return sr.frameName(kindEnd) }); err != nil {
		return err
	}
	if sessions != sr.hdr.sessions || nodes != sr.hdr.nodes {
		return sr.fail(start, "the end frame counts %d sessions and %d nodes, the header %d and %d", sessions, nodes, sr.hdr.sessions, sr.hdr.nodes)
	}
	if _, err := sr.r.ReadByte(); err == nil {
		return sr.fail(sr.off, "bytes after the end frame")
	} else if err != io.EOF {
		return sr.readErr("the end of the stream", err)
	}
	return nil
}

// MoveToNewLog prepares a restored state machine for a new raft log that
// starts at term 1 (a backup restored into fresh data directories): the
// zxid epoch stays, and the first write of the new log's first elected
// term starts the next epoch, so zxids keep growing past the backup's.
func (f *FSM) MoveToNewLog() { f.lastTerm = 1 }

// Restore reads a snapshot written by WriteSnapshot and returns the state
// machine it holds. It streams: memory beyond the state itself is one
// frame (at most 4×opts.MaxBuffer + 4 KiB). Any damage is an error
// wrapping ErrBadSnapshot that says what and where (see the package doc);
// an error of r is returned wrapped.
func Restore(opts Options, r io.Reader) (*FSM, error) {
	sr := newSnapReader(r, opts.MaxBuffer)
	if err := sr.header(); err != nil {
		return nil, err
	}
	f := &FSM{
		opts:     opts,
		sessions: make(map[SessionID]*Session, min(sr.hdr.sessions, 1<<16)), // the count is not trusted yet
		epoch:    sr.hdr.epoch,
		counter:  sr.hdr.counter,
		lastTerm: sr.hdr.lastTerm,
		lastZxid: Zxid(sr.hdr.lastZxid),
	}
	err := sr.sessions(func(id int64, s Session) error {
		f.sessions[SessionID(id)] = &s
		return nil
	})
	if err != nil {
		return nil, err
	}
	t, err := tree.FromRecords(treeOptions(opts), sr.nodes)
	if err != nil {
		if errors.Is(err, tree.ErrBadRecords) && !errors.Is(err, ErrBadSnapshot) {
			err = fmt.Errorf("%w: %w", ErrBadSnapshot, err)
		}
		return nil, err
	}
	if err := sr.end(); err != nil {
		return nil, err
	}
	f.tree = t
	f.members, f.pending, f.joint = sr.members.members, sr.members.pending, sr.members.joint
	return f, nil
}

// encodeMembers writes the membership frame: 'M' | has membership bool |
// [version int64 | servers] | joint bool | has pending bool | [origin
// int64 | reqID int64 | session int64 | servers], servers being a vector
// of (id int64 | host ustring | quorumPort int32 | electionPort int32 |
// observer bool | clientHost ustring | clientPort int32).
func (f *FSM) encodeMembers(e *wire.Encoder) {
	e.Byte(kindMembers)
	e.Bool(f.members != nil)
	if f.members != nil {
		e.Int64(int64(f.members.Version))
		encodeServers(e, f.members.Servers)
	}
	e.Bool(f.joint)
	e.Bool(f.pending != nil)
	if p := f.pending; p != nil {
		e.Int64(p.Origin)
		e.Int64(p.ReqID)
		e.Int64(int64(p.Session))
		encodeServers(e, p.Servers)
	}
}

// decodeMembers reads what encodeMembers wrote (after the kind byte) into
// f's membership fields.
func (f *FSM) decodeMembers(d *wire.Decoder) {
	if d.Bool() {
		f.members = &Membership{Version: Zxid(d.Int64()), Servers: decodeServers(d)}
	}
	f.joint = d.Bool()
	if d.Bool() {
		f.pending = &PendingReconfig{Origin: d.Int64(), ReqID: d.Int64(), Session: SessionID(d.Int64()), Servers: decodeServers(d)}
	}
}
