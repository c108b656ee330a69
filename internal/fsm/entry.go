package fsm

import (
	"errors"
	"fmt"

	"github.com/wardenzk/warden/wire"
)

// Entry is one write as it travels through the log: the request as the
// client sent it plus what only the proposing server knows. Every server
// applies the same entries in the same order and reaches the same state.
//
// Encoding (jute, big-endian):
//
//	+---------+--------+--------+---------+-----+-------+------+------------+------+
//	| version | op     | origin | session | xid | reqID | time | auth ids   | body |
//	| byte    | int32  | int64  | int64   | i32 | int64 | i64  | vector<Id> | buf  |
//	+---------+--------+--------+---------+-----+-------+------+------------+------+
//
// version is the entry version of the op (entryOps): the oldest version
// whose readers know the op, so that a member older than the op refuses
// the entry by its first byte and says which version it needs, instead of
// applying it differently from the others. See EntryVersion.
//
// From version 3 on, one more byte follows the version: the flags; bit 0
// is Local. An entry is written with the version of its op, or version 3
// when Local is set, so entries of version-1 ops without flags stay
// readable by members that predate version 3.
type Entry struct {
	// Op is the request's opcode, or OpCreateSession / OpCloseSession /
	// OpDeleteContainer for server-generated entries.
	Op wire.OpCode
	// Origin is the id of the server that proposed the entry; only that
	// server answers the client.
	Origin int64
	// Session is the session the request belongs to (0 for server-generated
	// deleteContainer entries).
	Session SessionID
	// Xid is the client's request id, echoed in the reply.
	Xid int32
	// ReqID identifies the proposer's waiter for this entry.
	ReqID int64
	// Time is the proposer's wall clock in Unix milliseconds; it becomes
	// ctime/mtime of nodes the entry touches.
	Time int64
	// Auth holds the connection's authenticated ids when it was proposed;
	// ACL checks at apply time use them.
	Auth []wire.ID
	// Body is the request record as received (for createSession: a
	// SessionRecord). A decoded entry's Body shares the bytes it was
	// decoded from (see DecodeEntries): decode what is kept out of it.
	Body []byte
	// Local marks a write of a local session (localSessionsEnabled): a
	// session only its proposer knows, so Apply does not require Session
	// to exist, and refuses an ephemeral create with
	// EPHEMERALONLOCALSESSION (the proposer upgrades the session first
	// when localSessionsUpgradingEnabled).
	Local bool
}

// Entry versions: the first byte of an encoded Entry. An entry version
// is a set of ops; each version adds ops and keeps the layout above, and
// every build reads every version up to its EntryVersion.
//
// To add an op (a new kind of log entry): give the next free version a
// constant (3, then 4, ...; 2 is batchVersion and never an entry's),
// make EntryVersion that constant, map the op to it in entryOps, and apply
// it in Apply. Entries of the new op then carry the new version, and a
// member built before it stops at the first one with ErrNewerEntry, which
// names the version it needs, rather than apply it as something else:
// every member must run the new build before the op is used. Then add a
// golden data directory of the new version (internal/node's
// TestGoldenDataDirs says how), keeping the older ones.
const (
	// entryVersion1 holds the ops of the first release.
	entryVersion1 = 1
	// entryVersion3 adds the flags byte (local sessions) and dynamic
	// reconfiguration: a reconfig entry's body becomes a ReconfigRecord,
	// and OpReconfigCommit, OpReconfigAbort and OpInitialMembership are
	// new.
	entryVersion3 = 3
	// EntryVersion is the newest entry version this build reads and
	// applies.
	EntryVersion = entryVersion3

	// entryFlagLocal is Entry.Local in the flags byte.
	entryFlagLocal = 1 << 0
)

// entryOps maps each op a log entry can carry to the entry version that
// introduced it. DecodeEntries refuses an op not in it.
var entryOps = map[wire.OpCode]byte{
	wire.OpCreate:          entryVersion1,
	wire.OpCreate2:         entryVersion1,
	wire.OpCreateContainer: entryVersion1,
	wire.OpCreateTTL:       entryVersion1,
	wire.OpDelete:          entryVersion1,
	wire.OpDeleteContainer: entryVersion1,
	wire.OpSetData:         entryVersion1,
	wire.OpSetACL:          entryVersion1,
	wire.OpMulti:           entryVersion1,
	wire.OpReconfig:        entryVersion3,
	wire.OpSync:            entryVersion1,
	wire.OpCreateSession:   entryVersion1,
	wire.OpCloseSession:    entryVersion1,
	wire.OpPing:            entryVersion1, // a touch (TouchRecord)
	OpRejoin:               entryVersion1,
	OpAttach:               entryVersion1,
	OpReconfigCommit:       entryVersion3,
	OpReconfigAbort:        entryVersion3,
	OpInitialMembership:    entryVersion3,
}

// ErrNewerEntry is wrapped by the error of DecodeEntries for an entry of a
// version newer than EntryVersion: a member running a newer Warden
// proposed it, and this member cannot apply it. The server must stop (it
// cannot skip an entry the others apply) and be upgraded.
var ErrNewerEntry = errors.New("fsm: log entry written by a newer version of Warden")

// Encode implements wire.Record. An op missing from entryOps (only tests
// encode one) is written with EntryVersion; DecodeEntries refuses it.
func (e *Entry) Encode(enc *wire.Encoder) { e.encode(enc, e.version()) }

// encode writes e with version v (e.version()).
func (e *Entry) encode(enc *wire.Encoder, v byte) {
	enc.Byte(v)
	if v >= entryVersion3 {
		var flags byte
		if e.Local {
			flags |= entryFlagLocal
		}
		enc.Byte(flags)
	}
	enc.Int32(int32(e.Op))
	enc.Int64(e.Origin)
	enc.Int64(int64(e.Session))
	enc.Int32(e.Xid)
	enc.Int64(e.ReqID)
	enc.Int64(e.Time)
	enc.Int32(int32(len(e.Auth)))
	for i := range e.Auth {
		e.Auth[i].Encode(enc)
	}
	enc.Buffer(e.Body)
}

// version is the entry version e is written with.
func (e *Entry) version() byte {
	v, ok := entryOps[e.Op]
	if !ok {
		v = EntryVersion
	}
	if e.Local {
		v = max(v, entryVersion3)
	}
	return v
}

// Marshal returns e encoded, in one allocation of the encoding's size
// (wire.Marshal would grow it from nothing, copying it several times).
func (e *Entry) Marshal() []byte {
	const fixed = 1 + 4 + 8 + 8 + 4 + 8 + 8 + 4 + 4 // version, fields, the two lengths
	v := e.version()
	size := fixed + len(e.Body)
	if v >= entryVersion3 {
		size++ // flags
	}
	for _, id := range e.Auth {
		size += 4 + len(id.Scheme) + 4 + len(id.ID)
	}
	enc := wire.NewEncoder(make([]byte, 0, size))
	e.encode(enc, v)
	return enc.Bytes()
}

// Decode implements wire.Record. It refuses an entry whose version is
// newer than EntryVersion (wrapping ErrNewerEntry), and one whose op is
// not that of its version.
func (e *Entry) Decode(d *wire.Decoder) {
	v := d.Byte()
	switch {
	case d.Err() != nil:
		return
	case v > EntryVersion:
		d.Fail(fmt.Errorf("%w: the entry is of version %d and this build applies versions up to %d; "+
			"upgrade this member to the Warden release of the other members (every member must run it before the feature that writes such entries is used)",
			ErrNewerEntry, v, EntryVersion))
		return
	case v < entryVersion1 || v == batchVersion:
		d.Fail(fmt.Errorf("fsm: unknown entry version %d", v))
		return
	}
	e.Local = false
	if v >= entryVersion3 {
		flags := d.Byte()
		if flags&^entryFlagLocal != 0 && d.Err() == nil {
			d.Fail(fmt.Errorf("fsm: unknown entry flags %#x", flags))
			return
		}
		e.Local = flags&entryFlagLocal != 0
	}
	e.Op = wire.OpCode(d.Int32())
	if since, ok := entryOps[e.Op]; d.Err() == nil && (!ok || since > v) {
		d.Fail(fmt.Errorf("fsm: entry of version %d carries op %d, which is not an op of that version", v, e.Op))
		return
	}
	e.Origin = d.Int64()
	e.Session = SessionID(d.Int64())
	e.Xid = d.Int32()
	e.ReqID = d.Int64()
	e.Time = d.Int64()
	n := d.VectorLen(8)
	e.Auth = nil
	for i := 0; i < n; i++ {
		var id wire.ID
		id.Decode(d)
		e.Auth = append(e.Auth, id)
	}
	e.Body = d.BufferShared()
}

// SessionRecord is the body of a createSession entry: what the proposer
// chose for the new session.
type SessionRecord struct {
	// Timeout is the negotiated session timeout in milliseconds.
	Timeout int32
	// Passwd is the session's 16-byte password.
	Passwd []byte
}

// Encode implements wire.Record.
func (s *SessionRecord) Encode(e *wire.Encoder) { e.Int32(s.Timeout); e.Buffer(s.Passwd) }

// Decode implements wire.Record.
func (s *SessionRecord) Decode(d *wire.Decoder) { s.Timeout = d.Int32(); s.Passwd = d.Buffer() }

// batchVersion marks a raft entry that carries several Entries (proposal
// batching: many client writes per raft entry).
//
//	+---------+----------------+-----------------------------+
//	| 2 byte  | count int32    | count × (length int32, Entry) |
//	+---------+----------------+-----------------------------+
//
// A raft entry that starts with entryVersion holds exactly one Entry (the
// format before batching, still read).
const batchVersion = 2

// maxBatchEntries bounds the Entries of one batch when decoding.
const maxBatchEntries = 1 << 20

// EncodeBatch joins encoded Entries (each from wire.Marshal) into the data
// of one raft entry. A single entry is returned as it is.
func EncodeBatch(entries [][]byte) []byte {
	if len(entries) == 1 {
		return entries[0]
	}
	size := 5
	for _, e := range entries {
		size += 4 + len(e)
	}
	enc := wire.NewEncoder(make([]byte, 0, size))
	enc.Byte(batchVersion)
	enc.Int32(int32(len(entries)))
	for _, e := range entries {
		enc.Buffer(e)
	}
	return enc.Bytes()
}

// DecodeEntries returns the Entries held in the data of one raft entry,
// batched or not. maxBuffer bounds each field as in wire.Unmarshal. The
// entries' Bodies share data, which must not change while they are used.
func DecodeEntries(data []byte, maxBuffer int) ([]Entry, error) {
	if len(data) > 0 && data[0] == batchVersion {
		d := wire.NewDecoder(data[1:], len(data))
		n := int(d.Int32())
		// Each entry takes at least its 4-byte length: a count the data
		// cannot hold is refused before it sizes anything.
		if d.Err() != nil || n < 0 || n > maxBatchEntries || n > d.Remaining()/4 {
			return nil, fmt.Errorf("fsm: bad batch header (count %d): %w", n, d.Err())
		}
		out := make([]Entry, n)
		for i := range out {
			b := d.BufferShared()
			if d.Err() != nil {
				return nil, fmt.Errorf("fsm: batch entry %d of %d: %w", i, n, d.Err())
			}
			if err := wire.Unmarshal(b, &out[i], maxBuffer); err != nil {
				return nil, fmt.Errorf("fsm: batch entry %d of %d: %w", i, n, err)
			}
		}
		if d.Offset() != len(data)-1 {
			return nil, fmt.Errorf("fsm: %d bytes after the last entry of a batch", len(data)-1-d.Offset())
		}
		return out, nil
	}
	var e Entry
	if err := wire.Unmarshal(data, &e, maxBuffer); err != nil {
		return nil, err
	}
	return []Entry{e}, nil
}

// OpRejoin is the op of an entry a member proposes when it finds that it
// lost log entries it had acknowledged (its data directory was wiped): the
// leader then resets what it knows of the member's log, and catches it up
// by snapshot. It changes no replicated state and takes no zxid.
const OpRejoin wire.OpCode = -1000

// OpAttach is the op of an entry a server proposes when a client
// re-attaches its session there while another server owns it: the
// session moves (Session.Owner), and writes the old server still proposes
// for it get SESSIONMOVED. It takes no zxid.
const OpAttach wire.OpCode = -1001

// TouchRecord is the body of a touch entry (Op wire.OpPing): the sessions
// whose clients a member heard from since its last touch. Only the leader
// acts on it (session liveness); it changes no replicated state and takes
// no zxid.
type TouchRecord struct {
	Sessions []SessionID
}

// Encode implements wire.Record.
func (t *TouchRecord) Encode(e *wire.Encoder) {
	e.Int32(int32(len(t.Sessions)))
	for _, id := range t.Sessions {
		e.Int64(int64(id))
	}
}

// Decode implements wire.Record.
func (t *TouchRecord) Decode(d *wire.Decoder) {
	n := d.VectorLen(8)
	t.Sessions = make([]SessionID, 0, n)
	for i := 0; i < n; i++ {
		t.Sessions = append(t.Sessions, SessionID(d.Int64()))
	}
}
