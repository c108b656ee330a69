package fsm

import (
	"bytes"
	"testing"

	"github.com/wardenzk/warden/wire"
)

// Entry.Marshal gives the bytes wire.Marshal does, in a buffer of exactly
// their size, for entries with and without auth ids, the flags byte and
// a body.
func TestEntryMarshalIsSizedExactly(t *testing.T) {
	body := wire.Marshal(&wire.CreateRequest{Path: "/a/b", Data: make([]byte, 64), ACL: wire.OpenACLUnsafe})
	for _, e := range []*Entry{
		{Op: wire.OpCreate, Origin: 1, Session: 7, Xid: 3, ReqID: 9, Time: 1000, Body: body},
		{Op: wire.OpCreate, Session: 7, Auth: []wire.ID{{Scheme: "digest", ID: "bob:x"}, {Scheme: "ip", ID: "10.0.0.1"}}, Body: body},
		{Op: wire.OpSetData, Session: 7, Local: true, Body: body},
		{Op: wire.OpCloseSession, Session: 7},
	} {
		got := e.Marshal()
		if want := wire.Marshal(e); !bytes.Equal(got, want) {
			t.Fatalf("%+v: Marshal = %x, want %x", e, got, want)
		}
		if cap(got) != len(got) {
			t.Fatalf("%+v: Marshal's buffer holds %d bytes in %d", e, len(got), cap(got))
		}
	}
}

// A decoded entry's Body shares the decoded bytes, and an append to it
// does not write over what follows it there.
func TestDecodedBodySharesTheData(t *testing.T) {
	a := wire.Marshal(&Entry{Op: wire.OpCreate, Session: 7, Body: []byte("first")})
	b := wire.Marshal(&Entry{Op: wire.OpCreate, Session: 7, Body: []byte("second")})
	data := EncodeBatch([][]byte{a, b})
	entries, err := DecodeEntries(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	body := entries[0].Body
	if string(body) != "first" || !bytes.Contains(data, body) {
		t.Fatalf("Body %q", body)
	}
	i := bytes.Index(data, body)
	if &data[i] != &body[0] {
		t.Fatal("Body is a copy")
	}
	_ = append(body, "XXXXXXXXXXXXXXXX"...)
	again, err := DecodeEntries(data, 0)
	if err != nil || string(again[1].Body) != "second" {
		t.Fatalf("after an append to the first Body: %v, %q", err, again[1].Body)
	}
}
