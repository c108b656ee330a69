package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func frameOf(payload []byte) []byte {
	return AppendFrame(nil, func(e *Encoder) {
		for _, b := range payload {
			e.Byte(b)
		}
	})
}

func TestReadFrame(t *testing.T) {
	big := bytes.Repeat([]byte{0xab}, 3*readChunk+17)
	tests := []struct {
		name    string
		input   []byte
		max     int
		want    []byte
		wantErr error
	}{
		{"small", unhex(t, "00000003 616263"), 0, []byte("abc"), nil},
		{"empty payload", unhex(t, "00000000"), 0, []byte{}, nil},
		{"exactly the limit", unhex(t, "00000004 01020304"), 4, []byte{1, 2, 3, 4}, nil},
		{"larger than one read chunk", frameOf(big), 0, big, nil},
		{"over the limit", unhex(t, "00000005 0102030405"), 4, nil, ErrFrameTooLarge},
		{"over the default limit", unhex(t, "00100000"), 0, nil, ErrFrameTooLarge},
		{"negative length", unhex(t, "ffffffff"), 0, nil, ErrFrameTooLarge},
		{"four-letter word as a length", []byte("ruok"), 0, nil, ErrFrameTooLarge},
		{"clean end of stream", nil, 0, nil, io.EOF},
		{"partial length", unhex(t, "0000"), 0, nil, io.ErrUnexpectedEOF},
		{"no payload", unhex(t, "00000003"), 0, nil, io.ErrUnexpectedEOF},
		{"partial payload", unhex(t, "00000003 6162"), 0, nil, io.ErrUnexpectedEOF},
		{"announced large, sent little", unhex(t, "000fffff 6162"), 0, nil, io.ErrUnexpectedEOF},
	}
	readers := []struct {
		name string
		wrap func(io.Reader) io.Reader
	}{
		{"whole", func(r io.Reader) io.Reader { return r }},
		{"one byte at a time", iotest.OneByteReader},
		{"half reads", iotest.HalfReader},
	}
	for _, tc := range tests {
		for _, rd := range readers {
			t.Run(tc.name+"/"+rd.name, func(t *testing.T) {
				got, err := ReadFrame(rd.wrap(bytes.NewReader(tc.input)), tc.max, nil)
				if !errors.Is(err, tc.wantErr) {
					t.Fatalf("err = %v, want %v", err, tc.wantErr)
				}
				if !bytes.Equal(got, tc.want) {
					t.Errorf("payload = %x, want %x", got, tc.want)
				}
			})
		}
	}
}

func TestFrameTooLargeMessage(t *testing.T) {
	_, err := ReadFrame(bytes.NewReader(unhex(t, "00000800")), 1024, nil)
	if !errors.Is(err, ErrFrameTooLarge) {
		t.Fatalf("err = %v", err)
	}
	for _, s := range []string{"2048", "1024"} {
		if !strings.Contains(err.Error(), s) {
			t.Errorf("%q does not mention %s", err, s)
		}
	}
}

func TestReadFrameReusesBuffer(t *testing.T) {
	buf := make([]byte, 0, 16)
	got, err := ReadFrame(bytes.NewReader(unhex(t, "00000003 616263")), 0, buf)
	if err != nil {
		t.Fatal(err)
	}
	if &got[0] != &buf[:1][0] {
		t.Error("payload does not alias the buffer it fits in")
	}
}

func TestReadFrameSequence(t *testing.T) {
	var stream []byte
	stream = AppendRecords(stream, &RequestHeader{Xid: XidPing, Type: OpPing})
	stream = AppendRecords(stream, &RequestHeader{Xid: 1, Type: OpSync}, &SyncRequest{Path: "/s"})
	r := bytes.NewReader(stream)
	var buf []byte
	var hdrs []RequestHeader
	for range 3 {
		p, err := ReadFrame(r, 0, buf)
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		var h RequestHeader
		d := NewDecoder(p, 0)
		h.Decode(d)
		hdrs = append(hdrs, h)
		buf = p[:0]
	}
	want := []RequestHeader{{XidPing, OpPing}, {1, OpSync}}
	if len(hdrs) != 2 || hdrs[0] != want[0] || hdrs[1] != want[1] {
		t.Errorf("headers = %v, want %v", hdrs, want)
	}
}

func TestReadPayloadAfterPeek(t *testing.T) {
	conn := bytes.NewReader(unhex(t, "00000002 2f61"))
	var first4 [4]byte
	if _, err := io.ReadFull(conn, first4[:]); err != nil {
		t.Fatal(err)
	}
	if _, ok := FourLetterWord(first4); ok {
		t.Fatal("a length was taken for a four-letter word")
	}
	p, err := ReadPayload(conn, int32(binary.BigEndian.Uint32(first4[:])), 0, nil)
	if err != nil || string(p) != "/a" {
		t.Errorf("got %q, %v", p, err)
	}
}

func TestAppendFrame(t *testing.T) {
	prefix := []byte("keep")
	got := AppendFrame(prefix, func(e *Encoder) { e.Int32(7); e.String("x") })
	want := append([]byte("keep"), unhex(t, "00000009 00000007 00000001 78")...)
	if !bytes.Equal(got, want) {
		t.Errorf("got %x, want %x", got, want)
	}
	if got := AppendFrame(nil, func(*Encoder) {}); !bytes.Equal(got, []byte{0, 0, 0, 0}) {
		t.Errorf("empty frame = %x", got)
	}
	if got := AppendRecords(nil, &ReplyHeader{Xid: 3, Zxid: 4}, nil); !bytes.Equal(got, unhex(t, "00000010 00000003 0000000000000004 00000000")) {
		t.Errorf("header-only reply = %x", got)
	}
}

func TestAppendReplyMatchesAppendRecords(t *testing.T) {
	h := ReplyHeader{Xid: 9, Zxid: 1<<32 | 5, Err: ErrNoNode}
	for _, resp := range []Record{nil, &GetDataResponse{Data: []byte("data"), Stat: Stat{Version: 3, DataLength: 4}}} {
		want := AppendRecords([]byte("keep"), &h, resp)
		if got := AppendReply([]byte("keep"), h, resp); !bytes.Equal(got, want) {
			t.Errorf("AppendReply(%T) = %x, want %x", resp, got, want)
		}
	}
}

func TestFourLetterWord(t *testing.T) {
	known := []string{"conf", "cons", "crst", "dirs", "dump", "envi", "gtmk", "ruok", "stmk",
		"srst", "srvr", "stat", "wchc", "wchp", "wchs", "mntr", "isro", "hash"}
	for _, w := range known {
		t.Run(w, func(t *testing.T) {
			got, ok := FourLetterWord([4]byte([]byte(w)))
			if !ok || got != w {
				t.Errorf("FourLetterWord(%q) = %q, %v", w, got, ok)
			}
			if n := binary.BigEndian.Uint32([]byte(w)); n <= DefaultMaxBuffer {
				t.Errorf("%q = %d collides with a legal frame length", w, n)
			}
		})
	}
	for _, w := range []string{"RUOK", "ruo\n", "\x00\x00\x00\x2d", "xxxx", "\xff\xf4\xff\xfd"} {
		if got, ok := FourLetterWord([4]byte([]byte(w))); ok {
			t.Errorf("FourLetterWord(%q) = %q, true", w, got)
		}
	}
}
