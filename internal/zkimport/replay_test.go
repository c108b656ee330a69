package zkimport

import (
	"testing"

	"github.com/wardenzk/warden/wire"
)

// txnBody encodes a transaction body with the wire encoder.
func txnBody(f func(e *wire.Encoder)) []byte {
	var e wire.Encoder
	f(&e)
	return e.Bytes()
}

func createBody(path string, ephemeral bool, parentCVersion int32) []byte {
	return txnBody(func(e *wire.Encoder) {
		e.String(path)
		e.Buffer([]byte("d"))
		wire.EncodeACLs(e, wire.OpenACLUnsafe)
		e.Bool(ephemeral)
		e.Int32(parentCVersion)
	})
}

func pathBody(path string) []byte { return txnBody(func(e *wire.Encoder) { e.String(path) }) }

// TestReplayFuzzyRules replays transactions that a fuzzy snapshot already
// holds, or partly holds, and checks DataTree.processTxn's outcome.
func TestReplayFuzzyRules(t *testing.T) {
	const sess = 0x42
	rec := func(typ int32, zxid int64, body []byte) logRecord {
		return logRecord{Header: TxnHeader{ClientID: sess, Zxid: zxid, Time: 1000 + zxid, Type: typ}, Body: body}
	}
	tests := []struct {
		name  string
		setup []logRecord // applied to a fresh database first
		txns  []logRecord
		check func(t *testing.T, db *DB)
	}{
		{
			name:  "create of an existing node raises the parent's cversion and pzxid",
			setup: []logRecord{rec(opCreate, 1, createBody("/a", false, 1))},
			txns:  []logRecord{rec(opCreate, 5, createBody("/a", false, 3))},
			check: func(t *testing.T, db *DB) {
				root := db.Nodes["/"].Stat
				if root.Cversion != 3 || root.Pzxid != 5 || db.Nodes["/a"].Stat.Czxid != 1 {
					t.Errorf("root cversion=%d pzxid=%d, /a czxid=%d", root.Cversion, root.Pzxid, db.Nodes["/a"].Stat.Czxid)
				}
			},
		},
		{
			name:  "create2 of an existing node changes nothing",
			setup: []logRecord{rec(opCreate, 1, createBody("/a", false, 1))},
			txns:  []logRecord{rec(opCreate2, 5, createBody("/a", false, 3))},
			check: func(t *testing.T, db *DB) {
				if root := db.Nodes["/"].Stat; root.Cversion != 1 || root.Pzxid != 1 {
					t.Errorf("root cversion=%d pzxid=%d", root.Cversion, root.Pzxid)
				}
			},
		},
		{
			name:  "a lower parentCVersion does not move the parent back",
			setup: []logRecord{rec(opCreate, 1, createBody("/a", false, 4))},
			txns:  []logRecord{rec(opCreate, 2, createBody("/b", false, 2))},
			check: func(t *testing.T, db *DB) {
				if root := db.Nodes["/"].Stat; root.Cversion != 4 || root.Pzxid != 1 || db.Nodes["/b"] == nil {
					t.Errorf("root cversion=%d pzxid=%d, /b %v", root.Cversion, root.Pzxid, db.Nodes["/b"])
				}
			},
		},
		{
			name: "delete of a missing node still moves the parent's pzxid forward",
			txns: []logRecord{rec(opDelete, 7, pathBody("/gone"))},
			check: func(t *testing.T, db *DB) {
				if root := db.Nodes["/"].Stat; root.Pzxid != 7 {
					t.Errorf("root pzxid=%d", root.Pzxid)
				}
			},
		},
		{
			name: "setData stores the logged version",
			setup: []logRecord{rec(opCreate, 1, createBody("/a", false, 1)),
				rec(opSetData, 2, txnBody(func(e *wire.Encoder) { e.String("/a"); e.Buffer([]byte("x")); e.Int32(1) }))},
			txns: []logRecord{rec(opSetData, 2, txnBody(func(e *wire.Encoder) { e.String("/a"); e.Buffer([]byte("x")); e.Int32(1) }))},
			check: func(t *testing.T, db *DB) {
				if st := db.Nodes["/a"].Stat; st.Version != 1 || st.Mzxid != 2 {
					t.Errorf("/a version=%d mzxid=%d", st.Version, st.Mzxid)
				}
			},
		},
		{
			name:  "closeSession without a path list deletes the session's ephemerals",
			setup: []logRecord{rec(opCreateSession, 1, txnBody(func(e *wire.Encoder) { e.Int32(30000) })), rec(opCreate, 2, createBody("/e", true, 1))},
			txns:  []logRecord{rec(opCloseSession, 3, nil)},
			check: func(t *testing.T, db *DB) {
				if db.Nodes["/e"] != nil || len(db.Sessions) != 0 || db.Nodes["/"].Stat.Pzxid != 3 {
					t.Errorf("/e %v sessions %v root pzxid %d", db.Nodes["/e"], db.Sessions, db.Nodes["/"].Stat.Pzxid)
				}
			},
		},
		{
			name: "a failed multi applies nothing",
			txns: []logRecord{rec(opMulti, 4, txnBody(func(e *wire.Encoder) {
				e.Int32(2)
				e.Int32(opCreate)
				e.Buffer(createBody("/m", false, 1))
				e.Int32(opError)
				e.Buffer(txnBody(func(e *wire.Encoder) { e.Int32(int32(wire.ErrNoNode)) }))
			}))},
			check: func(t *testing.T, db *DB) {
				if db.Nodes["/m"] != nil || db.LastZxid != 4 {
					t.Errorf("/m %v last zxid %d", db.Nodes["/m"], db.LastZxid)
				}
			},
		},
		{
			name:  "dead sessions lose their ephemerals at the last zxid",
			setup: []logRecord{rec(opCreate, 9, createBody("/orphan", true, 1))},
			check: func(t *testing.T, db *DB) {
				if db.Nodes["/orphan"] != nil || db.Nodes["/"].Stat.Pzxid != 9 {
					t.Errorf("/orphan %v root pzxid %d", db.Nodes["/orphan"], db.Nodes["/"].Stat.Pzxid)
				}
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			db := newDB()
			r := newReplayer(db, DefaultMaxBuffer)
			for _, rc := range append(tc.setup, tc.txns...) {
				if err := r.apply(rc); err != nil {
					t.Fatal(err)
				}
			}
			r.killDeadSessions()
			tc.check(t, db)
		})
	}
}
