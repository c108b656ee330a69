package fsm

import (
	"fmt"

	"github.com/wardenzk/warden/wire"
)

// Entry is one write as it travels through the log: the request as the
// client sent it plus what only the proposing server knows. Every server
// applies the same entries in the same order and reaches the same state.
//
// Encoding (jute, big-endian), version 1:
//
//	+---------+--------+--------+---------+-----+-------+------+------------+------+
//	| version | op     | origin | session | xid | reqID | time | auth ids   | body |
//	| byte    | int32  | int64  | int64   | i32 | int64 | i64  | vector<Id> | buf  |
//	+---------+--------+--------+---------+-----+-------+------+------------+------+
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
	// SessionRecord).
	Body []byte
}

const entryVersion = 1

// Encode implements wire.Record.
func (e *Entry) Encode(enc *wire.Encoder) {
	enc.Byte(entryVersion)
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

// Decode implements wire.Record.
func (e *Entry) Decode(d *wire.Decoder) {
	if v := d.Byte(); v != entryVersion && d.Err() == nil {
		d.Fail(fmt.Errorf("fsm: unknown entry version %d", v))
		return
	}
	e.Op = wire.OpCode(d.Int32())
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
	e.Body = d.Buffer()
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
// batched or not. maxBuffer bounds each field as in wire.Unmarshal.
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
			b := d.Buffer()
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
