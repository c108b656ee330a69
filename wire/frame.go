package wire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// ErrFrameTooLarge is wrapped by the error ReadFrame and ReadPayload
// return for a length prefix that is negative or above the limit. The
// connection cannot be resynchronised after it and must be closed, as
// ZooKeeper does ("Len error").
var ErrFrameTooLarge = errors.New("wire: frame length out of range")

// readChunk bounds how much ReadPayload allocates ahead of the bytes that
// have actually arrived, so a peer announcing a large frame and then
// stalling pins at most this much memory beyond what it sent.
const readChunk = 64 << 10

// ReadFrame reads one frame from r: a big-endian int32 length, then that
// many payload bytes. It accepts lengths in [0, maxLen] (DefaultMaxBuffer
// when maxLen <= 0) and otherwise fails with an error wrapping ErrFrameTooLarge.
// The payload is read into buf when it fits buf's capacity, so the result
// may alias buf; it is valid until buf is reused. A clean end of stream
// before the first length byte returns io.EOF; a stream ending mid-frame
// returns io.ErrUnexpectedEOF.
func ReadFrame(r io.Reader, maxLen int, buf []byte) ([]byte, error) {
	var hdr [4]byte
	if _, err := io.ReadFull(r, hdr[:]); err != nil {
		return nil, err
	}
	return ReadPayload(r, int32(binary.BigEndian.Uint32(hdr[:])), maxLen, buf)
}

// ReadPayload reads the n-byte payload of a frame whose length prefix the
// caller has already consumed (the server reads the first 4 bytes itself
// to look for a four-letter word). Limits, buffer reuse and errors are as
// for ReadFrame, except that a stream ending before the first payload
// byte is io.ErrUnexpectedEOF too.
func ReadPayload(r io.Reader, n int32, maxLen int, buf []byte) ([]byte, error) {
	if maxLen <= 0 {
		maxLen = DefaultMaxBuffer
	}
	if n < 0 || int64(n) > int64(maxLen) {
		return nil, fmt.Errorf("%w: length %d, limit %d (raise jute.maxbuffer if legitimate)", ErrFrameTooLarge, n, maxLen)
	}
	size := int(n)
	if size <= cap(buf) {
		p := buf[:size]
		if _, err := io.ReadFull(r, p); err != nil {
			return nil, eofIsUnexpected(err)
		}
		return p, nil
	}
	// Grow with the data rather than trusting the announced length.
	p := buf[:0]
	for len(p) < size {
		step := min(size-len(p), max(readChunk, len(p)))
		start := len(p)
		p = append(p, make([]byte, step)...)
		if _, err := io.ReadFull(r, p[start:]); err != nil {
			return nil, eofIsUnexpected(err)
		}
	}
	return p, nil
}

func eofIsUnexpected(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// AppendFrame appends one frame to dst: it reserves the 4-byte length,
// lets body encode the payload after it, then patches the length in. It
// returns the extended slice.
func AppendFrame(dst []byte, body func(*Encoder)) []byte {
	start := len(dst)
	e := NewEncoder(append(dst, 0, 0, 0, 0))
	body(e)
	out := e.Bytes()
	binary.BigEndian.PutUint32(out[start:], uint32(len(out)-start-4))
	return out
}

// AppendRecords appends one frame holding the given records back to back,
// typically a header and a body: AppendRecords(buf, &hdr, &resp). Nil
// records are skipped, so a header-only reply is AppendRecords(buf, &hdr,
// nil).
func AppendRecords(dst []byte, recs ...Record) []byte {
	return AppendFrame(dst, func(e *Encoder) {
		for _, r := range recs {
			if r != nil {
				r.Encode(e)
			}
		}
	})
}

// AppendReply appends one reply frame: h, then resp unless it is nil. It
// is AppendRecords(dst, &h, resp) with one allocation fewer, as the
// header is encoded in place (a server sends one per request).
func AppendReply(dst []byte, h ReplyHeader, resp Record) []byte {
	start := len(dst)
	hdr := Encoder{buf: append(dst, 0, 0, 0, 0)}
	h.Encode(&hdr)
	dst = hdr.buf
	if resp != nil {
		e := NewEncoder(dst)
		resp.Encode(e)
		dst = e.buf
	}
	binary.BigEndian.PutUint32(dst[start:], uint32(len(dst)-start-4))
	return dst
}

// fourLetterWords are the commands of reference §11.1.
var fourLetterWords = map[string]bool{
	"conf": true, "cons": true, "crst": true, "dirs": true, "dump": true, "envi": true,
	"gtmk": true, "ruok": true, "stmk": true, "srst": true, "srvr": true, "stat": true,
	"wchc": true, "wchp": true, "wchs": true, "mntr": true, "isro": true, "hash": true,
}

// FourLetterWord reports whether the first four bytes of a connection
// that has not yet sent a ConnectRequest name a four-letter-word command,
// and which. Any other value is the length prefix of a ConnectRequest.
func FourLetterWord(first4 [4]byte) (string, bool) {
	if !fourLetterWords[string(first4[:])] {
		return "", false
	}
	return string(first4[:]), true
}
