package fsm

import (
	"reflect"
	"testing"

	"github.com/wardenzk/warden/internal/fuzzcheck"
	"github.com/wardenzk/warden/wire"
)

// FuzzDecodeEntries decodes arbitrary raft entry data, single or batched,
// as a member does with what its leader replicates: no panic,
// allocations in proportion to the data, and entries that encode
// (EncodeBatch) and decode back to themselves.
func FuzzDecodeEntries(f *testing.F) {
	create := wire.Marshal(&Entry{Op: wire.OpCreate, Origin: 1, Session: 7, Xid: 3, ReqID: 9, Time: 1000,
		Auth: []wire.ID{{Scheme: "digest", ID: "u:x"}},
		Body: wire.Marshal(&wire.CreateRequest{Path: "/a", ACL: wire.OpenACLUnsafe})})
	session := wire.Marshal(&Entry{Op: wire.OpCreateSession, Session: 8,
		Body: wire.Marshal(&SessionRecord{Timeout: 30000, Passwd: make([]byte, 16)})})
	touch := wire.Marshal(&Entry{Op: wire.OpPing, Body: wire.Marshal(&TouchRecord{Sessions: []SessionID{7, 8}})})
	f.Add(create)
	f.Add(EncodeBatch([][]byte{create, session, touch}))
	f.Add(EncodeBatch([][]byte{session, session}))
	f.Add([]byte{batchVersion, 0, 0, 0, 0})
	f.Fuzz(func(t *testing.T, data []byte) {
		var entries []Entry
		var err error
		fuzzcheck.AllocBound(t, 64*len(data)+fuzzcheck.Slack, func() { entries, err = DecodeEntries(data, 1<<12) })
		if err != nil {
			return
		}
		enc := make([][]byte, len(entries))
		for i := range entries {
			enc[i] = wire.Marshal(&entries[i])
		}
		again, err := DecodeEntries(EncodeBatch(enc), 1<<12)
		if err != nil {
			t.Fatalf("re-encoded entries do not decode: %v", err)
		}
		if !reflect.DeepEqual(again, entries) {
			t.Fatalf("decode(encode(entries)) differs:\n got %+v\nwant %+v", again, entries)
		}
	})
}
