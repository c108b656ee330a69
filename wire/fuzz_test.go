package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"testing"
	"testing/iotest"
)

// fuzzMax is the string/buffer/frame limit the fuzz targets decode with;
// small so that length checks are exercised.
const fuzzMax = 1 << 12

// checkReencode decodes b into rec; if that succeeds, re-encoding and
// decoding again must give an equal record and stable bytes.
func checkReencode(t *testing.T, b []byte, fresh func() Record) {
	rec := fresh()
	d := NewDecoder(b, fuzzMax)
	rec.Decode(d)
	if d.Err() != nil {
		return
	}
	b2 := Marshal(rec)
	rec2 := fresh()
	if err := Unmarshal(b2, rec2, fuzzMax); err != nil {
		t.Fatalf("%T: re-encoded record does not decode: %v\n%x", rec, err, b2)
	}
	if !reflect.DeepEqual(rec, rec2) {
		t.Fatalf("%T: decode(encode(r)) != r:\n got %+v\nwant %+v", rec, rec2, rec)
	}
	if b3 := Marshal(rec2); !bytes.Equal(b2, b3) {
		t.Fatalf("%T: encoding is not stable:\n%x\n%x", rec, b2, b3)
	}
}

func FuzzReadFrame(f *testing.F) {
	f.Add([]byte{})
	f.Add(unhex(f, "00000008 fffffffe 0000000b"))
	f.Add(unhex(f, "00000011 00000001 00000004 00000004 2f666f6f 01 00000000"))
	f.Add(unhex(f, "ffffffff"))
	f.Add(unhex(f, "00001001 00"))
	f.Add([]byte("ruok"))
	f.Fuzz(func(t *testing.T, stream []byte) {
		type frame struct {
			payload []byte
			err     error
		}
		read := func(r io.Reader) []frame {
			var out []frame
			var buf []byte
			// Every successful frame consumes at least 4 bytes.
			for range len(stream)/4 + 1 {
				p, err := ReadFrame(r, fuzzMax, buf)
				out = append(out, frame{bytes.Clone(p), err})
				if err != nil {
					break
				}
				if len(p) > fuzzMax {
					t.Fatalf("payload of %d bytes exceeds the limit", len(p))
				}
				buf = p[:0]
			}
			return out
		}
		whole := read(bytes.NewReader(stream))
		last := whole[len(whole)-1].err
		if last == nil {
			t.Fatal("reading did not end in an error")
		}
		if !errors.Is(last, io.EOF) && !errors.Is(last, io.ErrUnexpectedEOF) && !errors.Is(last, ErrFrameTooLarge) {
			t.Fatalf("unexpected error %v", last)
		}
		chunked := read(iotest.OneByteReader(bytes.NewReader(stream)))
		if len(chunked) != len(whole) {
			t.Fatalf("%d frames whole, %d one byte at a time", len(whole), len(chunked))
		}
		for i := range whole {
			if !bytes.Equal(whole[i].payload, chunked[i].payload) || fmt.Sprint(whole[i].err) != fmt.Sprint(chunked[i].err) {
				t.Fatalf("frame %d: whole %x/%v, chunked %x/%v", i, whole[i].payload, whole[i].err, chunked[i].payload, chunked[i].err)
			}
		}
	})
}

func FuzzDecodeRequest(f *testing.F) {
	for _, s := range allRecords() {
		for op := OpCode(-12); op <= OpWhoAmI; op++ {
			if r, ok := RequestFor(op); ok && reflect.TypeOf(r) == reflect.TypeOf(s.rec) {
				f.Add(int32(op), Marshal(s.rec))
			}
		}
	}
	f.Add(int32(OpMultiRead), Marshal(&MultiRequest{Ops: []MultiOp{{Type: OpGetData, Req: &GetDataRequest{Path: "/x"}}}}))
	f.Add(int32(OpGetChildren), unhex(f, "7fffffff"))
	f.Add(int32(OpSetWatches), unhex(f, "0000000000000000 7fffffff"))
	f.Fuzz(func(t *testing.T, op int32, body []byte) {
		r, ok := RequestFor(OpCode(op))
		if !ok {
			return
		}
		typ := reflect.TypeOf(r).Elem()
		checkReencode(t, body, func() Record { return reflect.New(typ).Interface().(Record) })
	})
}

// FuzzDecodeRecord covers the decoders RequestFor does not reach:
// handshake, headers and responses.
func FuzzDecodeRecord(f *testing.F) {
	recs := allRecords()
	for i, s := range recs {
		f.Add(uint8(i), Marshal(s.rec))
	}
	f.Fuzz(func(t *testing.T, which uint8, body []byte) {
		checkReencode(t, body, recs[int(which)%len(recs)].fresh)
	})
}

func FuzzMultiRequest(f *testing.F) {
	for _, s := range allRecords() {
		switch s.rec.(type) {
		case *MultiRequest, *MultiResponse:
			f.Add(Marshal(s.rec))
		}
	}
	f.Add(Marshal(FailedMultiResponse(3, 1, ErrBadVersion)))
	f.Add(unhex(f, terminatorHex))
	f.Add(unhex(f, "00000008 00 ffffffff 00000002 2f61 01 "+terminatorHex))
	f.Fuzz(func(t *testing.T, body []byte) {
		checkReencode(t, body, func() Record { return &MultiRequest{} })
		checkReencode(t, body, func() Record { return &MultiResponse{} })
	})
}
