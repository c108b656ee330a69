package wire

import (
	"bytes"
	"errors"
	"reflect"
	"strings"
	"testing"
)

// statHex is sampleStat's 68-byte encoding.
const statHex = "0102030405060708 0000000000000002 0000000000000003 0000000000000004" +
	" 00000005 00000006 00000007 0000000000000008 00000009 0000000a 000000000000000b"

const terminatorHex = "ffffffff 01 ffffffff"

func TestMultiRequestEncoding(t *testing.T) {
	tests := []struct {
		name string
		req  MultiRequest
		hex  string
	}{
		{"empty", MultiRequest{}, terminatorHex},
		{"create and delete", MultiRequest{Ops: []MultiOp{
			{Type: OpCreate, Req: &CreateRequest{Path: "/a", Data: []byte("x"), ACL: OpenACLUnsafe}},
			{Type: OpDelete, Req: &DeleteRequest{Path: "/b", Version: -1}},
		}}, "00000001 00 ffffffff" + // header: create, not done, err -1
			" 00000002 2f61 00000001 78 00000001 0000001f 00000005 776f726c64 00000006 616e796f6e65 00000000" +
			" 00000002 00 ffffffff 00000002 2f62 ffffffff " + terminatorHex},
		{"check and setData", MultiRequest{Ops: []MultiOp{
			{Type: OpCheck, Req: &CheckVersionRequest{Path: "/c", Version: 3}},
			{Type: OpSetData, Req: &SetDataRequest{Path: "/c", Data: nil, Version: 3}},
		}}, "0000000d 00 ffffffff 00000002 2f63 00000003" +
			" 00000005 00 ffffffff 00000002 2f63 ffffffff 00000003 " + terminatorHex},
		{"multiRead", MultiRequest{Ops: []MultiOp{
			{Type: OpGetData, Req: &GetDataRequest{Path: "/d"}},
			{Type: OpGetChildren, Req: &GetChildrenRequest{Path: "/d", Watch: true}},
		}}, "00000004 00 ffffffff 00000002 2f64 00" +
			" 00000008 00 ffffffff 00000002 2f64 01 " + terminatorHex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			if got := Marshal(&tc.req); !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got %x\nwant %x", got, want)
			}
			var got MultiRequest
			if err := Unmarshal(want, &got, 0); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.req) {
				t.Errorf("decode: got %+v, want %+v", got, tc.req)
			}
		})
	}
}

func TestMultiResponseEncoding(t *testing.T) {
	tests := []struct {
		name string
		resp *MultiResponse
		hex  string
	}{
		{"empty", &MultiResponse{}, terminatorHex},
		{"success", &MultiResponse{Results: []MultiResult{
			{Type: OpCreate, Path: "/a"},
			{Type: OpCreate2, Path: "/b", Stat: &sampleStat},
			{Type: OpDelete},
			{Type: OpSetData, Stat: &sampleStat},
			{Type: OpCheck},
		}}, "00000001 00 00000000 00000002 2f61" +
			" 0000000f 00 00000000 00000002 2f62 " + statHex +
			" 00000002 00 00000000" +
			" 00000005 00 00000000 " + statHex +
			" 0000000d 00 00000000 " + terminatorHex},
		{"multiRead with a per-op error", &MultiResponse{Results: []MultiResult{
			{Type: OpGetData, Data: nil, Stat: &sampleStat},
			{Type: OpError, Err: ErrNoNode},
			{Type: OpGetChildren, Children: []string{"k"}},
		}}, "00000004 00 00000000 ffffffff " + statHex +
			" ffffffff 00 ffffff9b ffffff9b" +
			" 00000008 00 00000000 00000001 00000001 6b " + terminatorHex},
		// Reference §7: on failure every result is an error result; before
		// the failing op err 0, the failing op its code, after it -2.
		{"failure", FailedMultiResponse(3, 1, ErrNoNode),
			"ffffffff 00 00000000 00000000" +
				" ffffffff 00 ffffff9b ffffff9b" +
				" ffffffff 00 fffffffe fffffffe " + terminatorHex},
		{"failure of the first op", FailedMultiResponse(2, 0, ErrNodeExists),
			"ffffffff 00 ffffff92 ffffff92" +
				" ffffffff 00 fffffffe fffffffe " + terminatorHex},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			want := unhex(t, tc.hex)
			if got := Marshal(tc.resp); !bytes.Equal(got, want) {
				t.Fatalf("encode:\n got %x\nwant %x", got, want)
			}
			var got MultiResponse
			if err := Unmarshal(want, &got, 0); err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(&got, tc.resp) {
				t.Errorf("decode: got %+v, want %+v", got, tc.resp)
			}
		})
	}
}

func TestMultiResponseNilStatEncodesZero(t *testing.T) {
	got := Marshal(&MultiResponse{Results: []MultiResult{{Type: OpSetData}}})
	want := unhex(t, "00000005 00 00000000 "+strings.Repeat("00", 68)+" "+terminatorHex)
	if !bytes.Equal(got, want) {
		t.Errorf("got %x, want %x", got, want)
	}
}

func TestMultiResponseEncodePanicsOnBadType(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("no panic for result type 3")
		}
	}()
	Marshal(&MultiResponse{Results: []MultiResult{{Type: OpExists}}})
}

func TestMultiDecodeErrors(t *testing.T) {
	tests := []struct {
		name string
		rec  Record
		hex  string
		want error
	}{
		{"request: unknown op type", &MultiRequest{}, "00000003 00 ffffffff 00000002 2f61 00 " + terminatorHex, ErrBadMultiOp},
		{"request: terminator type is not an op", &MultiRequest{}, "ffffffff 00 ffffffff " + terminatorHex, ErrBadMultiOp},
		{"request: read after write", &MultiRequest{}, "00000002 00 ffffffff 00000002 2f61 ffffffff" +
			" 00000004 00 ffffffff 00000002 2f61 00 " + terminatorHex, ErrMixedMulti},
		{"request: write after read", &MultiRequest{}, "00000008 00 ffffffff 00000002 2f61 00" +
			" 0000000d 00 ffffffff 00000002 2f61 ffffffff " + terminatorHex, ErrMixedMulti},
		{"request: no terminator", &MultiRequest{}, "00000002 00 ffffffff 00000002 2f61 ffffffff", ErrShortRecord},
		{"request: empty input", &MultiRequest{}, "", ErrShortRecord},
		{"response: unknown result type", &MultiResponse{}, "00000003 00 00000000 " + terminatorHex, ErrBadMultiOp},
		{"response: no terminator", &MultiResponse{}, "00000002 00 00000000", ErrShortRecord},
		{"response: bad children count", &MultiResponse{}, "00000008 00 00000000 7fffffff " + terminatorHex, ErrBadLength},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if err := Unmarshal(unhex(t, tc.hex), tc.rec, 0); !errors.Is(err, tc.want) {
				t.Errorf("got %v, want %v", err, tc.want)
			}
		})
	}
}

func TestMultiRequestTerminatorFieldsIgnored(t *testing.T) {
	// ZooKeeper stops at done == true whatever the type and err say.
	var m MultiRequest
	b := unhex(t, "00000002 00 ffffffff 00000002 2f61 ffffffff 00000000 01 00000000")
	if err := Unmarshal(b, &m, 0); err != nil {
		t.Fatal(err)
	}
	if len(m.Ops) != 1 || m.Ops[0].Type != OpDelete {
		t.Errorf("got %+v", m)
	}
}

func TestMultiRequestReadOnly(t *testing.T) {
	tests := []struct {
		name string
		ops  []MultiOp
		want bool
	}{
		{"empty", nil, false},
		{"reads", []MultiOp{{Type: OpGetData, Req: &GetDataRequest{}}, {Type: OpGetChildren, Req: &GetChildrenRequest{}}}, true},
		{"writes", []MultiOp{{Type: OpCheck, Req: &CheckVersionRequest{}}}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			m := MultiRequest{Ops: tc.ops}
			if got := m.ReadOnly(); got != tc.want {
				t.Errorf("ReadOnly() = %v, want %v", got, tc.want)
			}
		})
	}
}
