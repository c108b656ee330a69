package fsm

import (
	"cmp"
	"slices"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// A reconfig travels through the log in two steps, so that every member
// validates it identically and the raft membership change commits
// atomically with /zookeeper/config:
//
//  1. The client's reconfig entry (Op wire.OpReconfig, body a
//     ReconfigRecord) is validated at apply time: reconfigEnabled, the
//     session, no change in progress, the fromConfig version, the new
//     servers, the voter count, WRITE on /zookeeper/config. A valid one
//     becomes the pending reconfig and gets no reply yet (Output.Deferred).
//  2. The leader, seeing a pending reconfig, checks what only it knows (a
//     synced quorum of the new configuration) and proposes either a raft
//     ConfChangeV2 whose context is an OpReconfigCommit entry (a normal
//     entry when only addresses change), or an OpReconfigAbort entry. Both
//     carry the client entry's origin and request id, so its server
//     answers the client when they are applied.

// OpReconfigCommit is the op of the entry that commits a pending reconfig:
// the context of the raft conf change that changes the membership, or a
// normal entry when the voters and observers stay the same. Its body is a
// MembershipRecord, the whole new membership; its zxid becomes the
// configuration's version.
const OpReconfigCommit wire.OpCode = -1002

// OpReconfigAbort is the op of the entry with which the leader fails a
// pending reconfig; its body is an AbortRecord. It takes no zxid.
const OpReconfigAbort wire.OpCode = -1003

// OpInitialMembership is the op of the entry with which the first leader
// of an ensemble with reconfigEnabled puts its server lines into the log,
// as ZooKeeper's first leader gives the initial configuration a version
// (ZOOKEEPER-1783): the version is the leader's first zxid of its epoch
// (epoch<<32, counter 0), and /zookeeper/config gets it without a change
// of its mzxid. Its body is a MembershipRecord. It takes no zxid, and does
// nothing once the log holds a membership.
const OpInitialMembership wire.OpCode = -1004

// ReconfigRecord is the body of a client's reconfig entry: the request as
// the client sent it, and the membership its proposer serves, the base of
// an incremental change while the log holds no membership yet (the static
// server lines, whose spelling may differ between members).
type ReconfigRecord struct {
	Request []byte
	Base    string
}

// Encode implements wire.Record.
func (r *ReconfigRecord) Encode(e *wire.Encoder) { e.Buffer(r.Request); e.String(r.Base) }

// Decode implements wire.Record.
func (r *ReconfigRecord) Decode(d *wire.Decoder) { r.Request = d.Buffer(); r.Base = d.String() }

// MembershipRecord is the body of an OpReconfigCommit entry.
type MembershipRecord struct {
	Servers []config.Server
}

// Encode implements wire.Record.
func (r *MembershipRecord) Encode(e *wire.Encoder) { encodeServers(e, r.Servers) }

// Decode implements wire.Record.
func (r *MembershipRecord) Decode(d *wire.Decoder) { r.Servers = decodeServers(d) }

// AbortRecord is the body of an OpReconfigAbort entry: the error the
// reconfig's client gets.
type AbortRecord struct {
	Code wire.Code
}

// Encode implements wire.Record.
func (r *AbortRecord) Encode(e *wire.Encoder) { e.Int32(int32(r.Code)) }

// Decode implements wire.Record.
func (r *AbortRecord) Decode(d *wire.Decoder) { r.Code = wire.Code(d.Int32()) }

func encodeServers(e *wire.Encoder, servers []config.Server) {
	e.Int32(int32(len(servers)))
	for _, s := range servers {
		e.Int64(s.ID)
		e.String(s.Host)
		e.Int32(int32(s.PeerPort))
		e.Int32(int32(s.ElectionPort))
		e.Bool(s.Observer)
		e.String(s.ClientHost)
		e.Int32(int32(s.ClientPort))
	}
}

func decodeServers(d *wire.Decoder) []config.Server {
	n := d.VectorLen(29)
	out := make([]config.Server, 0, n)
	for i := 0; i < n; i++ {
		var s config.Server
		s.ID = d.Int64()
		s.Host = d.String()
		s.PeerPort = int(d.Int32())
		s.ElectionPort = int(d.Int32())
		s.Observer = d.Bool()
		s.ClientHost = d.String()
		s.ClientPort = int(d.Int32())
		out = append(out, s)
	}
	return out
}

// Membership is the ensemble's configuration as the log last set it.
type Membership struct {
	// Version is the zxid of the reconfig that made it (hex in
	// /zookeeper/config's "version=" line).
	Version Zxid
	// Servers are the members, in id order.
	Servers []config.Server
}

// Text is the membership as /zookeeper/config holds it.
func (m *Membership) Text() string { return config.FormatMembership(m.Servers, int64(m.Version)) }

// PendingReconfig is a reconfig the state machine accepted and the leader
// has yet to commit or abort.
type PendingReconfig struct {
	// Origin and ReqID identify the client entry (and its waiter).
	Origin, ReqID int64
	// Session is the client's session.
	Session SessionID
	// Servers is the membership the reconfig asks for.
	Servers []config.Server
}

// Membership returns the membership the log holds, nil while it holds none
// (no reconfig yet: each member serves its static server lines).
func (f *FSM) Membership() *Membership { return f.members }

// PendingReconfig returns the reconfig waiting for the leader, or nil.
func (f *FSM) PendingReconfig() *PendingReconfig { return f.pending }

// SetJoint records whether the raft membership is in a joint
// configuration (a change of several voters not yet completed); no new
// reconfig is accepted meanwhile. The host calls it, in log order, for
// every applied raft conf change.
func (f *FSM) SetJoint(joint bool) { f.joint = joint }

// applyReconfig is step 1: a client's reconfig entry.
func (f *FSM) applyReconfig(e *Entry) Output {
	out := Output{Zxid: f.lastZxid}
	if !f.opts.ReconfigEnabled {
		out.Err = wire.ErrReconfigDisabled
		return out
	}
	if code := f.checkSession(e); code != wire.CodeOK {
		out.Err = code
		return out
	}
	if !f.opts.Ensemble {
		out.Err = wire.ErrUnimplemented
		return out
	}
	var rec ReconfigRecord
	var req wire.ReconfigRequest
	if wire.Unmarshal(e.Body, &rec, f.opts.MaxBuffer) != nil || wire.Unmarshal(rec.Request, &req, f.opts.MaxBuffer) != nil {
		out.Err = wire.ErrMarshallingError
		return out
	}
	if f.pending != nil || f.joint {
		out.Err = wire.ErrReconfigInProgress
		return out
	}
	base, version := f.members, Zxid(0)
	if base != nil {
		version = base.Version
	}
	if req.CurConfigID != -1 && req.CurConfigID != int64(version) {
		out.Err = wire.ErrBadVersion
		return out
	}
	var current []config.Server
	if base != nil {
		current = base.Servers
	} else {
		var err error
		if current, err = config.ParseMembers(rec.Base); err != nil {
			out.Err = wire.ErrBadArguments
			return out
		}
	}
	next, ok := NextMembers(current, &req)
	if !ok {
		out.Err = wire.ErrBadArguments
		return out
	}
	voters := 0
	for _, s := range next {
		if !s.Observer {
			voters++
		}
	}
	if voters < 1 || (f.opts.StandaloneEnabled && voters < 2) {
		out.Err = wire.ErrBadArguments
		return out
	}
	if _, acl, ok := f.tree.Lookup(tree.ConfigPath); ok && !tree.MatchACL(acl, wire.PermWrite, tree.Caller{IDs: e.Auth}, f.opts.SkipACL) {
		out.Err = wire.ErrNoAuth
		return out
	}
	f.pending = &PendingReconfig{Origin: e.Origin, ReqID: e.ReqID, Session: e.Session, Servers: next}
	out.Deferred = true
	return out
}

// NextMembers computes the membership a reconfig request asks for from
// the current one, as ZooKeeper's leader does: newMembers replaces it
// (servers separated by commas or newlines); otherwise leavingServers (ids,
// comma-separated) are removed and joiningServers (server.N=spec lines,
// comma-separated, each with a client port) added or replaced. It reports
// false for a malformed request or two servers sharing an address.
func NextMembers(current []config.Server, req *wire.ReconfigRequest) ([]config.Server, bool) {
	if req.NewMembers != "" {
		next, err := config.ParseMembers(req.NewMembers)
		if err != nil || config.ConflictingAddress(next) != "" {
			return nil, false
		}
		return next, true
	}
	next := slices.Clone(current)
	for _, f := range splitList(req.LeavingServers) {
		id, err := strconv.ParseInt(f, 10, 64)
		if err != nil {
			return nil, false
		}
		next = slices.DeleteFunc(next, func(s config.Server) bool { return s.ID == id })
	}
	for _, f := range splitList(req.JoiningServers) {
		s, err := config.ParseServerLine(f)
		if err != nil || s.ClientPort == 0 {
			return nil, false
		}
		next = slices.DeleteFunc(next, func(o config.Server) bool { return o.ID == s.ID })
		for _, o := range next {
			if config.ConflictingAddress([]config.Server{o, s}) != "" {
				return nil, false
			}
		}
		next = append(next, s)
	}
	slices.SortFunc(next, func(x, y config.Server) int { return cmp.Compare(x.ID, y.ID) })
	return next, true
}

func splitList(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// ApplyConfChange applies the OpReconfigCommit entry carried by a raft
// conf change (its context), which raft has applied: the membership
// changes whether or not it is the pending reconfig's, so the state
// machine's membership always follows raft's.
func (f *FSM) ApplyConfChange(term uint64, e *Entry) Output {
	if e.Op != OpReconfigCommit {
		return Output{Zxid: f.lastZxid, Err: wire.ErrMarshallingError}
	}
	return f.applyReconfigCommit(term, e, true)
}

// applyReconfigCommit is step 2, success: the membership changes, with a
// zxid that becomes its version, and /zookeeper/config with it. An
// ordinary entry (force false) commits only the pending reconfig it names:
// a second copy the leader proposed again changes nothing.
func (f *FSM) applyReconfigCommit(term uint64, e *Entry, force bool) Output {
	p := f.pending
	matches := p != nil && p.Origin == e.Origin && p.ReqID == e.ReqID
	if !matches && !force {
		return Output{Zxid: f.lastZxid, Err: wire.ErrReconfigInProgress}
	}
	var rec MembershipRecord
	if err := wire.Unmarshal(e.Body, &rec, f.opts.MaxBuffer); err != nil {
		return Output{Zxid: f.lastZxid, Err: wire.ErrMarshallingError}
	}
	zxid := f.nextZxid(term)
	f.members = &Membership{Version: zxid, Servers: rec.Servers}
	if matches {
		f.pending = nil
	}
	data := []byte(f.members.Text())
	st, changes := f.tree.ApplyConfig(data, tree.Meta{Zxid: int64(zxid), Time: e.Time, Session: int64(e.Session)})
	return Output{Zxid: zxid, Resp: &wire.GetDataResponse{Data: data, Stat: st}, Changes: changes}
}

// applyInitialMembership applies an OpInitialMembership entry.
func (f *FSM) applyInitialMembership(term uint64, e *Entry) Output {
	if f.members != nil {
		return Output{Zxid: f.lastZxid}
	}
	var rec MembershipRecord
	if err := wire.Unmarshal(e.Body, &rec, f.opts.MaxBuffer); err != nil {
		return Output{Zxid: f.lastZxid, Err: wire.ErrMarshallingError}
	}
	f.advanceTerm(term)
	f.members = &Membership{Version: f.lastZxid, Servers: rec.Servers}
	f.tree.SetConfig([]byte(f.members.Text()), e.Time)
	return Output{Zxid: f.lastZxid}
}

// applyReconfigAbort is step 2, failure.
func (f *FSM) applyReconfigAbort(e *Entry) Output {
	var rec AbortRecord
	if err := wire.Unmarshal(e.Body, &rec, f.opts.MaxBuffer); err != nil {
		return Output{Zxid: f.lastZxid, Err: wire.ErrMarshallingError}
	}
	if p := f.pending; p != nil && p.Origin == e.Origin && p.ReqID == e.ReqID {
		f.pending = nil
	}
	return Output{Zxid: f.lastZxid, Err: rec.Code}
}
