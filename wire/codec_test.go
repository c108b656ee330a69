package wire

import (
	"bytes"
	"errors"
	"fmt"
	"testing"
)

func TestEncoderLenReset(t *testing.T) {
	e := NewEncoder(make([]byte, 0, 8))
	e.Int32(1)
	e.Byte(2)
	if e.Len() != 5 {
		t.Fatalf("Len = %d, want 5", e.Len())
	}
	e.Reset()
	if e.Len() != 0 || cap(e.Bytes()) != 8 {
		t.Errorf("after Reset: len %d cap %d", e.Len(), cap(e.Bytes()))
	}
}

func TestDecoderOffsetAndStickyError(t *testing.T) {
	d := NewDecoder(unhex(t, "00000001 02"), 0)
	if d.Int32() != 1 || d.Offset() != 4 {
		t.Fatalf("offset %d", d.Offset())
	}
	if d.Int64() != 0 || !errors.Is(d.Err(), ErrShortRecord) {
		t.Fatalf("err = %v", d.Err())
	}
	if d.Byte() != 0 || d.Offset() != 4 {
		t.Errorf("read after an error consumed input: offset %d", d.Offset())
	}
	if d.VectorLen(1) != 0 {
		t.Error("VectorLen after an error is not 0")
	}
}

func TestDecoderSinceAndSkipIf(t *testing.T) {
	d := NewDecoder(unhex(t, "00000001 00000002 00000001 07"), 0)
	start := d.Offset()
	d.Int32()
	d.Int32()
	seen := bytes.Clone(d.Since(start))
	if !bytes.Equal(seen, unhex(t, "00000001 00000002")) {
		t.Fatalf("Since = %x", seen)
	}
	if d.SkipIf(seen) || d.Offset() != 8 {
		t.Fatalf("SkipIf consumed bytes that differ: offset %d", d.Offset())
	}
	if !d.SkipIf(unhex(t, "00000001")) || d.Offset() != 12 {
		t.Fatalf("SkipIf did not consume matching bytes: offset %d", d.Offset())
	}
	if d.SkipIf(unhex(t, "0708")) || d.Offset() != 12 {
		t.Fatalf("SkipIf consumed past the end: offset %d", d.Offset())
	}
	if d.Byte() != 7 || d.Err() != nil {
		t.Fatalf("after SkipIf: %v", d.Err())
	}
}

func TestCodeError(t *testing.T) {
	tests := []struct {
		code Code
		want string
	}{
		{ErrNoNode, "zk: KeeperErrorCode = NoNode"},
		{ErrNotEmpty, "zk: KeeperErrorCode = Directory not empty"},
		{Code(-999), "zk: unknown error -999"},
	}
	for _, tc := range tests {
		t.Run(tc.want, func(t *testing.T) {
			if got := tc.code.Error(); got != tc.want {
				t.Errorf("got %q", got)
			}
		})
	}
}

func TestCodeOf(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Code
	}{
		{"nil", nil, CodeOK},
		{"a code", ErrNodeExists, ErrNodeExists},
		{"a wrapped code", fmt.Errorf("create /a: %w", ErrNoNode), ErrNoNode},
		{"doubly wrapped", fmt.Errorf("x: %w", fmt.Errorf("y: %w", ErrBadVersion)), ErrBadVersion},
		{"anything else", errors.New("disk on fire"), ErrMarshallingError},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := CodeOf(tc.err); got != tc.want {
				t.Errorf("CodeOf(%v) = %d, want %d", tc.err, got, tc.want)
			}
			if tc.err != nil && tc.want != ErrMarshallingError && !errors.Is(tc.err, tc.want) {
				t.Errorf("errors.Is(%v, %d) is false", tc.err, tc.want)
			}
		})
	}
}

func TestCreateModePredicates(t *testing.T) {
	tests := []struct {
		mode                                         CreateMode
		valid, ephemeral, sequential, ttl, container bool
	}{
		{ModePersistent, true, false, false, false, false},
		{ModeEphemeral, true, true, false, false, false},
		{ModePersistentSequential, true, false, true, false, false},
		{ModeEphemeralSequential, true, true, true, false, false},
		{ModeContainer, true, false, false, false, true},
		{ModePersistentWithTTL, true, false, false, true, false},
		{ModePersistentSequentialWithTTL, true, false, true, true, false},
		{CreateMode(7), false, false, false, false, false},
		{CreateMode(-1), false, false, false, false, false},
	}
	for _, tc := range tests {
		t.Run(fmt.Sprint(int32(tc.mode)), func(t *testing.T) {
			m := tc.mode
			got := [5]bool{m.Valid(), m.Ephemeral(), m.Sequential(), m.TTL(), m.Container()}
			want := [5]bool{tc.valid, tc.ephemeral, tc.sequential, tc.ttl, tc.container}
			if got != want {
				t.Errorf("valid/ephemeral/sequential/ttl/container = %v, want %v", got, want)
			}
		})
	}
}

func TestIDDecodeAllocatesOnlyUnknownStrings(t *testing.T) {
	e := NewEncoder(nil)
	(&ID{Scheme: "world", ID: "anyone"}).Encode(e)
	known := bytes.Clone(e.Bytes())
	e.Reset()
	(&ID{Scheme: "digest", ID: "bob:x"}).Encode(e)
	other := bytes.Clone(e.Bytes())
	var id ID
	if a := testing.AllocsPerRun(100, func() { id.Decode(NewDecoder(known, 0)) }); a != 0 || id != (ID{"world", "anyone"}) {
		t.Fatalf("world:anyone: %v, %v allocations", id, a)
	}
	if a := testing.AllocsPerRun(100, func() { id.Decode(NewDecoder(other, 0)) }); a != 1 || id != (ID{"digest", "bob:x"}) {
		t.Fatalf("digest:bob:x: %v, %v allocations", id, a)
	}
}
