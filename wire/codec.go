package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
)

// DefaultMaxBuffer is ZooKeeper's default jute.maxbuffer: the largest frame
// and the largest string or buffer field accepted, in bytes (1 MiB - 1).
const DefaultMaxBuffer = 0xfffff

// ErrShortRecord is returned by a Decoder that ran out of bytes mid-record.
var ErrShortRecord = errors.New("wire: record is truncated")

// ErrBadLength is returned by a Decoder that met a negative (other than -1)
// or oversized length prefix.
var ErrBadLength = errors.New("wire: unreasonable length")

// Encoder appends jute-encoded values to a byte slice. The zero value is
// ready to use. Encoding never fails.
type Encoder struct {
	buf []byte
}

// NewEncoder returns an Encoder that appends to buf (which may be nil).
func NewEncoder(buf []byte) *Encoder { return &Encoder{buf: buf} }

// Bytes returns the encoded bytes. The slice aliases the Encoder's buffer.
func (e *Encoder) Bytes() []byte { return e.buf }

// Len returns the number of bytes encoded so far.
func (e *Encoder) Len() int { return len(e.buf) }

// Reset empties the Encoder, keeping its capacity.
func (e *Encoder) Reset() { e.buf = e.buf[:0] }

// Byte encodes one byte.
func (e *Encoder) Byte(v byte) { e.buf = append(e.buf, v) }

// Bool encodes a boolean as 0x00 or 0x01.
func (e *Encoder) Bool(v bool) {
	if v {
		e.buf = append(e.buf, 1)
	} else {
		e.buf = append(e.buf, 0)
	}
}

// Int32 encodes a big-endian int32.
func (e *Encoder) Int32(v int32) { e.buf = binary.BigEndian.AppendUint32(e.buf, uint32(v)) }

// Int64 encodes a big-endian int64.
func (e *Encoder) Int64(v int64) { e.buf = binary.BigEndian.AppendUint64(e.buf, uint64(v)) }

// String encodes a ustring: int32 length then the bytes.
func (e *Encoder) String(s string) {
	e.Int32(int32(len(s)))
	e.buf = append(e.buf, s...)
}

// NullableString encodes a ustring, or jute's null string (length -1)
// when null is set.
func (e *Encoder) NullableString(s string, null bool) {
	if null {
		e.Int32(-1)
		return
	}
	e.String(s)
}

// Buffer encodes a buffer: int32 length then the bytes; nil encodes as
// length -1 (jute's null buffer).
func (e *Encoder) Buffer(b []byte) {
	if b == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(b)))
	e.buf = append(e.buf, b...)
}

// Strings encodes a vector<ustring>; nil encodes as count -1.
func (e *Encoder) Strings(v []string) {
	if v == nil {
		e.Int32(-1)
		return
	}
	e.Int32(int32(len(v)))
	for _, s := range v {
		e.String(s)
	}
}

// Decoder reads jute-encoded values from a byte slice. Errors are sticky:
// after the first failure every read returns a zero value and Err reports
// the failure, so a record's Decode method can read all its fields and
// check once.
type Decoder struct {
	b   []byte
	off int
	max int
	err error
}

// NewDecoder returns a Decoder over b that accepts string and buffer
// lengths up to maxLen bytes (DefaultMaxBuffer when maxLen <= 0).
func NewDecoder(b []byte, maxLen int) *Decoder {
	d := &Decoder{}
	d.Reset(b, maxLen)
	return d
}

// Reset makes d decode b from its start, as NewDecoder(b, maxLen) would:
// a reader that decodes one record after another reuses one Decoder.
func (d *Decoder) Reset(b []byte, maxLen int) {
	if maxLen <= 0 {
		maxLen = DefaultMaxBuffer
	}
	*d = Decoder{b: b, max: maxLen}
}

// Err returns the first decoding error, or nil.
func (d *Decoder) Err() error { return d.err }

// Remaining returns the number of unread bytes.
func (d *Decoder) Remaining() int { return len(d.b) - d.off }

// Offset returns the number of bytes consumed so far.
func (d *Decoder) Offset() int { return d.off }

// Since returns the bytes consumed from offset off (an earlier Offset) to
// now. They are a view of the decoded slice, not a copy.
func (d *Decoder) Since(off int) []byte { return d.b[off:d.off] }

// SkipIf consumes the next len(p) bytes if they are p, and reports
// whether it did: a caller that decoded the same bytes before can reuse
// what it decoded then.
func (d *Decoder) SkipIf(p []byte) bool {
	if d.err != nil || !bytes.HasPrefix(d.b[d.off:], p) {
		return false
	}
	d.off += len(p)
	return true
}

// Fail records err as the decoder's error unless one is already recorded.
func (d *Decoder) Fail(err error) {
	if d.err == nil {
		d.err = err
	}
}

func (d *Decoder) take(n int) []byte {
	if d.err != nil {
		return nil
	}
	if n > len(d.b)-d.off {
		d.err = ErrShortRecord
		return nil
	}
	p := d.b[d.off : d.off+n]
	d.off += n
	return p
}

// Byte decodes one byte.
func (d *Decoder) Byte() byte {
	p := d.take(1)
	if p == nil {
		return 0
	}
	return p[0]
}

// Bool decodes a boolean; any non-zero byte is true, as in Java.
func (d *Decoder) Bool() bool { return d.Byte() != 0 }

// Int32 decodes a big-endian int32.
func (d *Decoder) Int32() int32 {
	p := d.take(4)
	if p == nil {
		return 0
	}
	return int32(binary.BigEndian.Uint32(p))
}

// Int64 decodes a big-endian int64.
func (d *Decoder) Int64() int64 {
	p := d.take(8)
	if p == nil {
		return 0
	}
	return int64(binary.BigEndian.Uint64(p))
}

// length reads a length prefix; it reports null (-1) separately.
func (d *Decoder) length() (n int, null bool) {
	v := d.Int32()
	if d.err != nil {
		return 0, false
	}
	if v == -1 {
		return 0, true
	}
	if v < 0 || int(v) > d.max {
		d.err = fmt.Errorf("%w = %d", ErrBadLength, v)
		return 0, false
	}
	return int(v), false
}

// String decodes a ustring. A null string (length -1) decodes as "".
func (d *Decoder) String() string {
	s, _ := d.NullableString()
	return s
}

// NullableString decodes a ustring and reports whether it was null.
func (d *Decoder) NullableString() (s string, null bool) {
	n, null := d.length()
	if null || d.err != nil {
		return "", null
	}
	p := d.take(n)
	return string(p), false
}

// idString decodes a string of an ACL's or an auth's id (null decodes as
// ""). The schemes and world's one id come in almost every create and
// setACL: they decode as constants, without an allocation (short-lived
// small strings would share the allocator's 16-byte blocks with the
// names the tree keeps, and keep those blocks alive).
func (d *Decoder) idString() string {
	n, null := d.length()
	if null || d.err != nil {
		return ""
	}
	p := d.take(n)
	switch string(p) {
	case "world":
		return "world"
	case "anyone":
		return "anyone"
	case "auth":
		return "auth"
	case "digest":
		return "digest"
	case "ip":
		return "ip"
	case "x509":
		return "x509"
	case "sasl":
		return "sasl"
	}
	return string(p)
}

// Buffer decodes a buffer; a null buffer (length -1) decodes as nil and an
// empty one as a non-nil empty slice. The result is a copy.
func (d *Decoder) Buffer() []byte {
	p := d.BufferShared()
	if p == nil {
		return nil
	}
	out := make([]byte, len(p))
	copy(out, p)
	return out
}

// BufferShared decodes a buffer as Buffer does, but returns the bytes in
// place, sharing the decoder's input (capped, so an append copies): for a
// field that is decoded further and then dropped, when the input is never
// changed while the result is in use.
func (d *Decoder) BufferShared() []byte {
	n, null := d.length()
	if null || d.err != nil {
		return nil
	}
	p := d.take(n)
	if p == nil {
		return nil
	}
	return p[:n:n]
}

// Strings decodes a vector<ustring>; a null vector decodes as nil.
func (d *Decoder) Strings() []string {
	n := d.Int32()
	if d.err != nil || n == -1 {
		return nil
	}
	if n < 0 || int(n) > d.Remaining()/4 {
		d.Fail(fmt.Errorf("%w = %d (vector)", ErrBadLength, n))
		return nil
	}
	out := make([]string, 0, n)
	for i := int32(0); i < n && d.err == nil; i++ {
		out = append(out, d.String())
	}
	return out
}

// VectorLen decodes a vector's element count, checking that at least
// minElem bytes per element remain. It returns -1 for a null vector.
func (d *Decoder) VectorLen(minElem int) int {
	n := d.Int32()
	if d.err != nil {
		return 0
	}
	if n == -1 {
		return -1
	}
	if minElem < 1 {
		minElem = 1
	}
	if n < 0 || int(n) > d.Remaining()/minElem {
		d.Fail(fmt.Errorf("%w = %d (vector)", ErrBadLength, n))
		return 0
	}
	return int(n)
}

// Record is a jute record: a struct whose fields are encoded in
// declaration order with no tags.
type Record interface {
	Encode(e *Encoder)
	Decode(d *Decoder)
}

// Marshal encodes r into a new byte slice.
func Marshal(r Record) []byte {
	var e Encoder
	r.Encode(&e)
	return e.Bytes()
}

// Unmarshal decodes b into r, accepting fields up to maxLen bytes. Trailing
// bytes are not an error (ZooKeeper ignores them too).
func Unmarshal(b []byte, r Record, maxLen int) error {
	d := NewDecoder(b, maxLen)
	r.Decode(d)
	return d.Err()
}
