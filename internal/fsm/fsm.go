package fsm

import (
	"bytes"
	"log/slog"
	"math"
	"sort"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// maxTTL is the largest TTL a node may have: 40 bits of milliseconds.
const maxTTL = 0xFFFFFFFFFF

// Options are the replicated-behaviour settings; every server of an
// ensemble must use the same values.
type Options struct {
	// ExtendedTypes enables TTL nodes (zookeeper.extendedTypesEnabled).
	ExtendedTypes bool
	// SkipACL disables every permission check (zookeeper.skipACL).
	SkipACL bool
	// EnforceQuota makes hard quota limits fail writes
	// (zookeeper.enforceQuota).
	EnforceQuota bool
	// ReconfigEnabled allows reconfig (reconfigEnabled); without it a
	// reconfig gets RECONFIGDISABLED.
	ReconfigEnabled bool
	// Ensemble is set for the members of an ensemble; a standalone
	// server's reconfig gets UNIMPLEMENTED, as ZooKeeper's.
	Ensemble bool
	// StandaloneEnabled (standaloneEnabled) makes a reconfig that would
	// leave fewer than two voters fail, as in ZooKeeper.
	StandaloneEnabled bool
	// MaxBuffer bounds decoded string and buffer fields (jute.maxbuffer).
	MaxBuffer int
	// Logger receives the "Quota exceeded" warnings of EnforceQuota, the
	// only thing the state machine logs. Default (nil) slog.Default().
	// Unlike the fields above it is local to each server.
	Logger *slog.Logger
}

// Session is a replicated session: what every server knows of it.
type Session struct {
	// Timeout is the negotiated timeout in milliseconds.
	Timeout int32
	// Passwd is the 16-byte password a reconnecting client must present.
	Passwd []byte
	// Owner is the member id of the server the session's client is
	// attached to (the origin of its createSession or latest attach
	// entry); NoOwner when not known (a session restored from a version-1
	// snapshot or imported), which any server may use. Writes proposed by
	// another server get SESSIONMOVED, as in ZooKeeper.
	Owner int64
}

// NoOwner is Session.Owner when no server is known to hold the session.
const NoOwner = -1

// Output is the effect of applying one entry.
type Output struct {
	// Zxid is the transaction id the entry was given.
	Zxid Zxid
	// Err is the reply's error code (CodeOK for a multi, even a failed one).
	Err wire.Code
	// Resp is the response body to send when Err is CodeOK, or nil.
	Resp wire.Record
	// Changes are the watch triggers the entry caused, in order; their
	// notifications carry Zxid.
	Changes []tree.Change
	// ClosedSession is the id of a session the entry closed, or 0; the
	// server closes connections still bound to it.
	ClosedSession SessionID
	// Touched lists the live sessions of a touch entry, whose clients a
	// member heard from; the leader extends their deadlines.
	Touched []SessionID
	// Moved is the id of a session an attach entry moved to the entry's
	// origin, or 0; the server that held it closes its connection.
	Moved SessionID
	// Deferred is set when the entry's reply comes with a later entry (a
	// reconfig accepted and pending): its proposer must keep waiting.
	Deferred bool
}

// FSM is the replicated state machine: the tree, the session table and the
// zxid state. Apply must be called with entries in log order, by one
// goroutine at a time; reads may run concurrently with each other but not
// with Apply (the caller provides the locking).
type FSM struct {
	opts Options
	tree *tree.Tree

	// Invariant: every id in sessions was created by an applied
	// createSession entry and not yet closed. A *Session never changes
	// once stored (Clone shares them): replace it instead.
	sessions map[SessionID]*Session

	// zxid state (DESIGN.md §5): epoch advances when the raft term grows.
	epoch    uint32
	lastTerm uint64
	counter  uint32
	// Invariant: lastZxid == epoch<<32 | counter of the last applied write.
	lastZxid Zxid

	// quotaLog rate-limits the quota warnings, as ZooKeeper's RateLogger.
	quotaLog quotaLog

	// members is the membership the log set (nil before the first
	// reconfig); pending the reconfig waiting for the leader; joint is set
	// while raft's membership is joint (membership.go).
	members *Membership
	pending *PendingReconfig
	joint   bool
}

// New returns the state machine of an empty database.
func New(opts Options) *FSM {
	return &FSM{
		opts:     opts,
		tree:     tree.New(tree.Options{SkipACL: opts.SkipACL, EnforceQuota: opts.EnforceQuota}),
		sessions: make(map[SessionID]*Session),
	}
}

// Tree returns the data tree for reads. The caller must not mutate it.
func (f *FSM) Tree() *tree.Tree { return f.tree }

// LastZxid returns the zxid of the last applied write.
func (f *FSM) LastZxid() Zxid { return f.lastZxid }

// Session returns the session with the given id.
func (f *FSM) Session(id SessionID) (*Session, bool) {
	s, ok := f.sessions[id]
	return s, ok
}

// SessionIDs returns the ids of all live sessions, sorted.
func (f *FSM) SessionIDs() []SessionID {
	ids := make([]SessionID, 0, len(f.sessions))
	for id := range f.sessions {
		ids = append(ids, id)
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// nextZxid derives the zxid of the next write from the raft term of its
// entry: a higher term starts a new epoch; a full counter rolls the epoch.
func (f *FSM) nextZxid(term uint64) Zxid {
	f.advanceTerm(term)
	if f.counter == math.MaxUint32 {
		f.epoch++
		f.counter = 0
	}
	f.counter++
	f.lastZxid = Zxid(int64(f.epoch)<<32 | int64(f.counter))
	return f.lastZxid
}

// advanceTerm starts a new epoch (counter 0) when term is above the last
// one a write was seen in.
func (f *FSM) advanceTerm(term uint64) {
	if term > f.lastTerm {
		f.lastTerm = term
		f.epoch++
		f.counter = 0
		f.lastZxid = Zxid(int64(f.epoch) << 32)
	}
}

// Apply applies one committed entry of the given raft term and returns its
// effects. Validation happens here, identically on every server. With
// Options.EnforceQuota, the quota limits a create or setData of the entry
// exceeded are logged to Options.Logger (see quotaLog): on every server,
// and again when a restarting server replays its log.
func (f *FSM) Apply(term uint64, e *Entry) Output {
	out := f.apply(term, e)
	for _, q := range f.tree.TakeQuotaExceeded() {
		f.quotaLog.log(f.logger(), q, e.Time)
	}
	return out
}

func (f *FSM) logger() *slog.Logger {
	if f.opts.Logger != nil {
		return f.opts.Logger
	}
	return slog.Default()
}

// apply is Apply without the quota warnings.
func (f *FSM) apply(term uint64, e *Entry) Output {
	if e.Op == wire.OpSync {
		// sync is ordered through the log so that its reply follows every
		// write proposed before it, from any session; like ZooKeeper's it
		// changes nothing and takes no zxid.
		var req wire.SyncRequest
		if err := wire.Unmarshal(e.Body, &req, f.opts.MaxBuffer); err != nil {
			return Output{Zxid: f.lastZxid, Err: wire.ErrMarshallingError}
		}
		return Output{Zxid: f.lastZxid, Resp: &wire.SyncResponse{Path: req.Path}}
	}
	if e.Op == OpRejoin {
		return Output{Zxid: f.lastZxid}
	}
	if e.Op == OpAttach {
		// A client re-attached its session on the entry's origin: the
		// session moves there. No state a client sees changes; no zxid.
		out := Output{Zxid: f.lastZxid}
		if s, ok := f.sessions[e.Session]; ok {
			moved := *s
			moved.Owner = e.Origin
			f.sessions[e.Session] = &moved
			out.Moved = e.Session
		} else {
			out.Err = wire.ErrSessionExpired
		}
		return out
	}
	switch e.Op {
	case wire.OpReconfig:
		return f.applyReconfig(e)
	case OpReconfigCommit:
		return f.applyReconfigCommit(term, e, false)
	case OpReconfigAbort:
		return f.applyReconfigAbort(e)
	case OpInitialMembership:
		return f.applyInitialMembership(term, e)
	}
	if e.Op == wire.OpPing {
		// A touch: liveness news for the leader, no state change, no zxid.
		var rec TouchRecord
		if err := wire.Unmarshal(e.Body, &rec, f.opts.MaxBuffer); err != nil {
			return Output{Zxid: f.lastZxid, Err: wire.ErrMarshallingError}
		}
		out := Output{Zxid: f.lastZxid}
		for _, id := range rec.Sessions {
			if _, ok := f.sessions[id]; ok {
				out.Touched = append(out.Touched, id)
			}
		}
		return out
	}
	zxid := f.nextZxid(term)
	out := Output{Zxid: zxid}
	meta := tree.Meta{Zxid: int64(zxid), Time: e.Time, Session: int64(e.Session)}
	caller := tree.Caller{IDs: e.Auth}

	switch e.Op {
	case wire.OpCreateSession:
		var rec SessionRecord
		if err := wire.Unmarshal(e.Body, &rec, f.opts.MaxBuffer); err != nil {
			out.Err = wire.ErrMarshallingError
			return out
		}
		f.sessions[e.Session] = &Session{Timeout: rec.Timeout, Passwd: rec.Passwd, Owner: e.Origin}
		return out
	case wire.OpCloseSession:
		if _, ok := f.sessions[e.Session]; ok {
			out.Changes = f.tree.CloseSession(int64(e.Session), meta)
			delete(f.sessions, e.Session)
		}
		out.ClosedSession = e.Session
		return out
	case wire.OpDeleteContainer:
		// Server-generated (container/TTL expiry) or client-sent: no
		// session or ACL check, as in ZooKeeper.
		var req wire.DeleteContainerRequest
		if err := wire.Unmarshal(e.Body, &req, f.opts.MaxBuffer); err != nil {
			out.Err = wire.ErrMarshallingError
			return out
		}
		ch, err := f.tree.DeleteContainer(req.Path, meta)
		out.Err, out.Changes = wire.CodeOf(err), ch
		return out
	}

	if e.Local && CreatesEphemeral(e.Op, e.Body, f.opts.MaxBuffer) {
		// A local session is known only to its proposer: no ephemeral,
		// which nothing would ever delete.
		out.Err = wire.ErrEphemeralOnLocalSession
		return out
	}
	if code := f.checkSession(e); code != wire.CodeOK {
		out.Err = code
		return out
	}
	if e.Op == wire.OpMulti {
		var req wire.MultiRequest
		if err := wire.Unmarshal(e.Body, &req, f.opts.MaxBuffer); err != nil {
			out.Err = wire.ErrMarshallingError
			return out
		}
		for _, op := range req.Ops {
			if !isMultiWrite(op.Type) {
				// ZooKeeper cannot turn a read op into a transaction and
				// fails the whole request, without a multi body.
				out.Err = wire.ErrMarshallingError
				return out
			}
		}
		out.Resp, out.Changes = f.applyMulti(req.Ops, caller, meta)
		return out
	}
	req, ok := wire.RequestFor(e.Op)
	if !ok {
		out.Err = wire.ErrUnimplemented
		return out
	}
	if err := wire.Unmarshal(e.Body, req, f.opts.MaxBuffer); err != nil {
		out.Err = wire.ErrMarshallingError
		return out
	}
	res, err := f.applyOp(e.Op, req, caller, meta)
	if err != nil {
		out.Err = wire.CodeOf(err)
		return out
	}
	out.Resp, out.Changes = res.resp, res.changes
	return out
}

// checkSession is the session check of a client's write: the session must
// live and be owned by the entry's origin, unless it is a local session.
func (f *FSM) checkSession(e *Entry) wire.Code {
	if e.Local {
		return wire.CodeOK // known only to its proposer (localSessionsEnabled)
	}
	s, ok := f.sessions[e.Session]
	switch {
	case !ok:
		return wire.ErrSessionExpired
	case s.Owner != NoOwner && s.Owner != e.Origin:
		return wire.ErrSessionMoved
	}
	return wire.CodeOK
}

type opResult struct {
	resp    wire.Record
	changes []tree.Change
	// multi result fields
	resultType wire.OpCode
	path       string
	stat       *wire.Stat
}

// applyOp applies one write operation (alone or inside a multi).
func (f *FSM) applyOp(op wire.OpCode, req wire.Record, c tree.Caller, m tree.Meta) (opResult, error) {
	switch r := req.(type) {
	case *wire.CreateRequest:
		return f.create(op, r.Path, r.Data, r.ACL, r.Flags, -1, c, m)
	case *wire.CreateTTLRequest:
		return f.create(op, r.Path, r.Data, r.ACL, r.Flags, r.TTL, c, m)
	case *wire.DeleteRequest:
		ch, err := f.tree.Delete(r.Path, r.Version, c, m)
		return opResult{changes: ch, resultType: wire.OpDelete}, err
	case *wire.SetDataRequest:
		st, ch, err := f.tree.SetData(r.Path, r.Data, r.Version, c, m)
		return opResult{resp: &wire.SetDataResponse{Stat: st}, changes: ch, resultType: wire.OpSetData, stat: &st}, err
	case *wire.SetACLRequest:
		st, err := f.tree.SetACL(r.Path, r.ACL, r.Version, c, m)
		return opResult{resp: &wire.SetACLResponse{Stat: st}, resultType: wire.OpSetACL, stat: &st}, err
	case *wire.CheckVersionRequest:
		if err := tree.ValidatePath(r.Path); err != nil {
			return opResult{}, err
		}
		return opResult{resultType: wire.OpCheck}, f.tree.Check(r.Path, r.Version, c)
	}
	return opResult{}, wire.ErrUnimplemented
}

// create maps opcode + flags to a node kind with ZooKeeper's checks, in
// PrepRequestProcessor's order, then creates the node.
func (f *FSM) create(op wire.OpCode, path string, data []byte, acl []wire.ACL, flags int32, ttl int64, c tree.Caller, m tree.Meta) (opResult, error) {
	mode := wire.CreateMode(flags)
	if !mode.Valid() {
		return opResult{}, wire.ErrBadArguments
	}
	if mode.TTL() && !f.opts.ExtendedTypes {
		return opResult{}, wire.ErrUnimplemented
	}
	if mode.TTL() {
		if ttl <= 0 || ttl > maxTTL {
			return opResult{}, wire.ErrBadArguments
		}
	} else if ttl >= 0 {
		return opResult{}, wire.ErrBadArguments
	}
	kind := tree.KindPersistent
	switch {
	case op == wire.OpCreateContainer:
		kind = tree.KindContainer
	case mode.TTL():
		kind = tree.KindTTL
	case mode.Ephemeral():
		kind = tree.KindEphemeral
	}
	p, st, ch, err := f.tree.Create(tree.CreateOp{
		Path: path, Data: data, ACL: acl, Kind: kind, Sequential: mode.Sequential(), TTL: ttl,
	}, c, m)
	if err != nil {
		return opResult{}, err
	}
	res := opResult{changes: ch, path: p, stat: &st}
	if op == wire.OpCreate {
		res.resp, res.resultType = &wire.CreateResponse{Path: p}, wire.OpCreate
	} else {
		res.resp, res.resultType = &wire.Create2Response{Path: p, Stat: st}, wire.OpCreate2
	}
	return res, nil
}

// applyMulti applies the ops of a multi atomically. On the first failure
// everything is rolled back and every result is an error result: OK before
// the failing op, its code, RuntimeInconsistency after (ZooKeeper's form).
func (f *FSM) applyMulti(ops []wire.MultiOp, c tree.Caller, m tree.Meta) (wire.Record, []tree.Change) {
	f.tree.Begin()
	var changes []tree.Change
	results := make([]wire.MultiResult, 0, len(ops))
	for i, op := range ops {
		res, err := f.applyOp(op.Type, op.Req, c, m)
		if err != nil {
			f.tree.Rollback()
			return wire.FailedMultiResponse(len(ops), i, wire.CodeOf(err)), nil
		}
		changes = append(changes, res.changes...)
		results = append(results, wire.MultiResult{Type: res.resultType, Path: res.path, Stat: res.stat})
	}
	f.tree.Commit()
	return &wire.MultiResponse{Results: results}, changes
}

// isMultiWrite reports whether op may appear in a multi transaction.
func isMultiWrite(op wire.OpCode) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2, wire.OpCreateContainer, wire.OpCreateTTL,
		wire.OpDelete, wire.OpSetData, wire.OpCheck:
		return true
	}
	return false
}

// CreatesEphemeral reports whether a create, create2 or multi request
// body asks for an ephemeral node (ZooKeeper's test for upgrading a local
// session: containers and TTL nodes are not ephemeral). A body that does
// not decode creates nothing.
func CreatesEphemeral(op wire.OpCode, body []byte, maxBuffer int) bool {
	switch op {
	case wire.OpCreate, wire.OpCreate2:
		var req wire.CreateRequest
		return wire.Unmarshal(body, &req, maxBuffer) == nil && wire.CreateMode(req.Flags).Ephemeral()
	case wire.OpMulti:
		var req wire.MultiRequest
		if wire.Unmarshal(body, &req, maxBuffer) != nil {
			return false
		}
		for _, op := range req.Ops {
			if c, ok := op.Req.(*wire.CreateRequest); ok && (op.Type == wire.OpCreate || op.Type == wire.OpCreate2) &&
				wire.CreateMode(c.Flags).Ephemeral() {
				return true
			}
		}
	}
	return false
}

// CheckPassword reports whether passwd opens session id.
func (f *FSM) CheckPassword(id SessionID, passwd []byte) bool {
	s, ok := f.sessions[id]
	return ok && id != 0 && bytes.Equal(s.Passwd, passwd)
}

// SetMembership sets the data of /zookeeper/config (tree.SetConfig).
func (f *FSM) SetMembership(data []byte, mtime int64) { f.tree.SetConfig(data, mtime) }
