package transport

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func TestFrameRoundTrip(t *testing.T) {
	h := hello{version: protocolVersion, from: 3, to: 1<<63 + 5, ensemble: "sha256:abc"}
	m := msg(3, 1, 42)
	mb, err := proto.Marshal(m)
	if err != nil {
		t.Fatal(err)
	}
	frames := []struct {
		kind    frameKind
		payload []byte
	}{
		{kindHello, h.encode()},
		{kindReply, reply{accepted: true}.encode()},
		{kindReply, reply{reason: "no"}.encode()},
		{kindMsg, mb},
		{kindChunk, bytes.Repeat([]byte{7}, 100000)},
		{kindSnapEnd, nil},
		{kindSnapAck, snapAck{stored: false, index: 9, reason: "disk full"}.encode()},
	}
	var stream bytes.Buffer
	for _, f := range frames {
		if err := writeFrame(&stream, f.kind, f.payload); err != nil {
			t.Fatal(err)
		}
	}
	// One byte at a time: frames do not depend on how reads are cut.
	fr := newFrameReader(iotest.OneByteReader(&stream), maxFrame)
	for i, want := range frames {
		kind, payload, err := fr.next()
		if err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		if kind != want.kind || !bytes.Equal(payload, want.payload) {
			t.Fatalf("frame %d: got %s of %d bytes, want %s of %d bytes", i, kind, len(payload), want.kind, len(want.payload))
		}
		switch kind {
		case kindHello:
			if got, err := decodeHello(payload); err != nil || got != h {
				t.Fatalf("hello: got %+v, %v; want %+v", got, err, h)
			}
		case kindMsg:
			got := new(raftpb.Message)
			if err := proto.Unmarshal(payload, got); err != nil || !proto.Equal(got, m) {
				t.Fatalf("message: got %v, %v", got, err)
			}
		}
	}
	if _, _, err := fr.next(); err != io.EOF {
		t.Fatalf("after the last frame: %v, want io.EOF", err)
	}
	if a, err := decodeSnapAck(frames[6].payload); err != nil || a != (snapAck{index: 9, reason: "disk full"}) {
		t.Fatalf("ack: %+v, %v", a, err)
	}
	if r, err := decodeReply(frames[2].payload); err != nil || r != (reply{reason: "no"}) {
		t.Fatalf("reply: %+v, %v", r, err)
	}
}

func TestFrameReaderRejects(t *testing.T) {
	hdr := func(n uint32, rest ...byte) []byte {
		return append([]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}, rest...)
	}
	tests := []struct {
		name  string
		in    []byte
		limit int
		want  string // in the error; "" for errors that are not protocol errors
		isErr error
	}{
		{"empty stream", nil, 100, "", io.EOF},
		{"zero length", hdr(0), 100, "frame of length 0", nil},
		{"over the limit", hdr(101), 100, "frame of 101 bytes exceeds the limit of 100 bytes", nil},
		{"largest length", hdr(0xffffffff), maxFrame, "frame of 4294967295 bytes exceeds the limit", nil},
		{"cut in the header", []byte{0, 0}, 100, "", io.ErrUnexpectedEOF},
		{"cut before the kind", hdr(3), 100, "", io.ErrUnexpectedEOF},
		{"cut in the payload", hdr(3, 1, 2), 100, "", io.ErrUnexpectedEOF},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, _, err := newFrameReader(bytes.NewReader(tt.in), tt.limit).next()
			if tt.isErr != nil {
				if err != tt.isErr {
					t.Fatalf("got %v, want %v", err, tt.isErr)
				}
				return
			}
			if !errors.Is(err, errProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a protocol error containing %q", err, tt.want)
			}
		})
	}
}

func TestDecodeHelloRejects(t *testing.T) {
	good := hello{version: 1, from: 1, to: 2, ensemble: "e"}.encode()
	tests := []struct {
		name    string
		payload []byte
		want    string
	}{
		{"empty", nil, "without the magic"},
		{"other magic", append([]byte("WRDNPEEX"), good[8:]...), "without the magic"},
		{"short", good[:20], "shorter than 26"},
		{"long ensemble", hello{ensemble: strings.Repeat("x", maxEnsembleLen+1)}.encode(), "longer than 1024"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := decodeHello(tt.payload)
			if !errors.Is(err, errProtocol) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want a protocol error containing %q", err, tt.want)
			}
		})
	}
}

// FuzzReadFrame feeds arbitrary bytes, in pieces, to the frame reader and
// to the decoder of each kind: nothing may panic, and what decodes must
// encode back to the same bytes.
func FuzzReadFrame(f *testing.F) {
	mb, _ := proto.Marshal(snapMsg(1, 2, 7))
	var seed bytes.Buffer
	writeFrame(&seed, kindHello, hello{version: 1, from: 1, to: 2, ensemble: "test-ensemble"}.encode())
	writeFrame(&seed, kindMsg, mb)
	writeFrame(&seed, kindChunk, []byte("body"))
	writeFrame(&seed, kindSnapEnd, nil)
	f.Add(seed.Bytes())
	f.Add(frameBytes(kindReply, reply{reason: "unknown member id 7"}.encode()))
	f.Add(frameBytes(kindSnapAck, snapAck{stored: true, index: 7}.encode()))
	f.Add([]byte{0xff, 0xff, 0xff, 0xff, 1})
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte("GET / HTTP/1.1\r\n\r\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		fr := newFrameReader(iotest.HalfReader(bytes.NewReader(data)), maxHandshakeFrame)
		read := 0
		for {
			kind, payload, err := fr.next()
			if err != nil {
				if err != io.EOF && err != io.ErrUnexpectedEOF && !errors.Is(err, errProtocol) {
					t.Fatalf("unexpected error class: %v", err)
				}
				if err == io.EOF && read != len(data) {
					t.Fatalf("io.EOF after %d of %d bytes", read, len(data))
				}
				return
			}
			read += frameHeaderSize + len(payload)
			if len(payload)+1 > maxHandshakeFrame {
				t.Fatalf("frame of %d bytes passed the limit", len(payload)+1)
			}
			switch kind {
			case kindHello:
				if h, err := decodeHello(payload); err == nil && !bytes.Equal(h.encode(), payload) {
					t.Fatalf("hello %+v does not encode back to its bytes", h)
				}
			case kindReply:
				if r, err := decodeReply(payload); err == nil && len(payload) <= maxReasonLen+1 && !bytes.Equal(r.encode(), payload) {
					t.Fatalf("reply %+v does not encode back to its bytes", r)
				}
			case kindSnapAck:
				if a, err := decodeSnapAck(payload); err == nil && len(payload) <= maxReasonLen+9 && !bytes.Equal(a.encode(), payload) {
					t.Fatalf("ack %+v does not encode back to its bytes", a)
				}
			case kindMsg:
				proto.Unmarshal(payload, new(raftpb.Message))
			}
		}
	})
}
