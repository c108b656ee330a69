package transport

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// The frames of the peer protocol; doc.go draws them.

// frameKind is the byte after a frame's length: what the payload holds.
type frameKind byte

const (
	kindHello   frameKind = 1 // dialer → acceptor, first frame: who is calling whom
	kindReply   frameKind = 2 // acceptor → dialer, answer to the hello: accepted or refused
	kindMsg     frameKind = 3 // dialer → acceptor: one raft message (protobuf)
	kindChunk   frameKind = 4 // dialer → acceptor: the next part of a snapshot body
	kindSnapEnd frameKind = 5 // dialer → acceptor: the snapshot body is complete
	kindSnapAck frameKind = 6 // acceptor → dialer: whether the peer stored a snapshot
)

func (k frameKind) String() string {
	switch k {
	case kindHello:
		return "hello"
	case kindReply:
		return "reply"
	case kindMsg:
		return "message"
	case kindChunk:
		return "snapshot chunk"
	case kindSnapEnd:
		return "snapshot end"
	case kindSnapAck:
		return "snapshot ack"
	}
	return fmt.Sprintf("kind %d", byte(k))
}

const (
	// frameHeaderSize is the length and the kind byte.
	frameHeaderSize = 5
	// maxFrame bounds a frame's body (kind and payload) after the
	// handshake. A raft message larger than this cannot be sent.
	maxFrame = 64 << 20
	// maxHandshakeFrame bounds the frames read before a peer has
	// identified itself, and every frame a dialer reads (replies and
	// acks), so a stranger cannot make a member allocate much.
	maxHandshakeFrame = 64 << 10
	// maxEnsembleLen bounds the ensemble identity in a hello.
	maxEnsembleLen = 1024
	// maxReasonLen bounds the reason carried by a reply or an ack; longer
	// reasons are cut.
	maxReasonLen = 1024
	// keepReadBuf is the largest frame buffer a reader keeps for reuse;
	// larger frames get a buffer of their own.
	keepReadBuf = 2 << 20
)

// helloMagic opens every hello: a stranger on the quorum port is told
// apart from a peer by it.
const helloMagic = "WRDNPEER"

// protocolVersion is the version of the peer protocol this code speaks.
const protocolVersion = 1

// helloFixedSize is the hello payload before the ensemble identity.
const helloFixedSize = len(helloMagic) + 2 + 8 + 8

// errProtocol is wrapped by every error caused by bytes that break the
// peer protocol: a stranger, a damaged stream, a peer with a bug. Such a
// connection is logged at Warn and closed.
var errProtocol = errors.New("transport: protocol violation")

func protocolErr(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errProtocol}, args...)...)
}

// frameReader reads frames from a connection.
type frameReader struct {
	r     *bufio.Reader
	limit int // the largest body (kind + payload) accepted
	// buf is reused between frames up to keepReadBuf bytes.
	buf []byte
}

func newFrameReader(r io.Reader, limit int) *frameReader {
	return &frameReader{r: bufio.NewReaderSize(r, 64<<10), limit: limit}
}

// next reads one frame. The payload is valid until the next call. At a
// frame boundary a closed stream gives io.EOF; a stream that ends inside a
// frame gives io.ErrUnexpectedEOF; a length of zero or above the limit
// gives an error wrapping errProtocol, after which the stream is lost.
func (fr *frameReader) next() (frameKind, []byte, error) {
	var hdr [frameHeaderSize]byte
	if _, err := io.ReadFull(fr.r, hdr[:4]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(hdr[:4])
	if n == 0 {
		return 0, nil, protocolErr("frame of length 0 (a frame holds at least its kind byte)")
	}
	if uint64(n) > uint64(fr.limit) {
		return 0, nil, protocolErr("frame of %d bytes exceeds the limit of %d bytes", n, fr.limit)
	}
	if _, err := io.ReadFull(fr.r, hdr[4:]); err != nil {
		return 0, nil, eofInFrame(err)
	}
	size := int(n) - 1
	var payload []byte
	if size <= keepReadBuf {
		if cap(fr.buf) < size {
			fr.buf = make([]byte, size)
		}
		payload = fr.buf[:size]
	} else {
		payload = make([]byte, size)
	}
	if _, err := io.ReadFull(fr.r, payload); err != nil {
		return 0, nil, eofInFrame(err)
	}
	return frameKind(hdr[4]), payload, nil
}

// eofInFrame turns a clean end of stream inside a frame into
// io.ErrUnexpectedEOF.
func eofInFrame(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// appendFrameHeader appends the header of a frame whose payload has size
// bytes.
func appendFrameHeader(b []byte, kind frameKind, size int) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(size+1))
	return append(b, byte(kind))
}

// putFrameHeader fills in the header at the start of frame, whose payload
// follows it.
func putFrameHeader(frame []byte, kind frameKind) {
	binary.BigEndian.PutUint32(frame, uint32(len(frame)-frameHeaderSize+1))
	frame[4] = byte(kind)
}

// frameBytes returns a whole frame.
func frameBytes(kind frameKind, payload []byte) []byte {
	b := appendFrameHeader(make([]byte, 0, frameHeaderSize+len(payload)), kind, len(payload))
	return append(b, payload...)
}

// writeFrame writes one frame.
func writeFrame(w io.Writer, kind frameKind, payload []byte) error {
	if len(payload)+1 > maxFrame {
		return fmt.Errorf("transport: %s frame of %d bytes exceeds the limit of %d bytes", kind, len(payload)+1, maxFrame)
	}
	hdr := appendFrameHeader(make([]byte, 0, frameHeaderSize), kind, len(payload))
	if _, err := w.Write(hdr); err != nil {
		return err
	}
	_, err := w.Write(payload)
	return err
}

// hello is the first frame of a connection: the dialer names the
// ensemble, itself and the member it means to reach.
type hello struct {
	version  uint16
	from, to uint64
	ensemble string
}

func (h hello) encode() []byte {
	b := make([]byte, 0, helloFixedSize+len(h.ensemble))
	b = append(b, helloMagic...)
	b = binary.BigEndian.AppendUint16(b, h.version)
	b = binary.BigEndian.AppendUint64(b, h.from)
	b = binary.BigEndian.AppendUint64(b, h.to)
	return append(b, h.ensemble...)
}

// decodeHello decodes a hello payload. It checks the form only (magic,
// sizes); whether the acceptor takes the peer is up to the acceptor.
func decodeHello(p []byte) (hello, error) {
	if len(p) < len(helloMagic) || string(p[:len(helloMagic)]) != helloMagic {
		return hello{}, protocolErr("hello without the magic %q: not a Warden peer", helloMagic)
	}
	if len(p) < helloFixedSize {
		return hello{}, protocolErr("hello of %d bytes is shorter than %d", len(p), helloFixedSize)
	}
	if len(p)-helloFixedSize > maxEnsembleLen {
		return hello{}, protocolErr("ensemble identity of %d bytes is longer than %d", len(p)-helloFixedSize, maxEnsembleLen)
	}
	q := p[len(helloMagic):]
	return hello{
		version:  binary.BigEndian.Uint16(q),
		from:     binary.BigEndian.Uint64(q[2:]),
		to:       binary.BigEndian.Uint64(q[10:]),
		ensemble: string(q[18:]),
	}, nil
}

// Status bytes of replies and acks.
const (
	statusOK      = 0
	statusRefused = 1
)

// reply is the acceptor's answer to a hello.
type reply struct {
	accepted bool
	reason   string // why it was refused
}

func (r reply) encode() []byte {
	status := byte(statusOK)
	if !r.accepted {
		status = statusRefused
	}
	return append([]byte{status}, cut(r.reason)...)
}

func decodeReply(p []byte) (reply, error) {
	if len(p) < 1 || p[0] > statusRefused {
		return reply{}, protocolErr("malformed handshake reply")
	}
	return reply{accepted: p[0] == statusOK, reason: string(p[1:])}, nil
}

// snapAck tells the dialer whether the snapshot it sent last was stored.
type snapAck struct {
	stored bool
	index  uint64 // the snapshot's index, from its metadata
	reason string // why it was not stored
}

func (a snapAck) encode() []byte {
	status := byte(statusOK)
	if !a.stored {
		status = statusRefused
	}
	b := binary.BigEndian.AppendUint64([]byte{status}, a.index)
	return append(b, cut(a.reason)...)
}

func decodeSnapAck(p []byte) (snapAck, error) {
	if len(p) < 9 || p[0] > statusRefused {
		return snapAck{}, protocolErr("malformed snapshot ack")
	}
	return snapAck{stored: p[0] == statusOK, index: binary.BigEndian.Uint64(p[1:]), reason: string(p[9:])}, nil
}

// cut shortens a reason to maxReasonLen bytes.
func cut(s string) string {
	if len(s) > maxReasonLen {
		return s[:maxReasonLen]
	}
	return s
}
