package server

import (
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/wire"
)

// nodeConfig maps zoo.cfg onto the state machine's host.
func (s *Server) nodeConfig(fsmOpts fsm.Options, opts Options) node.Config {
	cfg := s.cfg
	fs := opts.FS
	if fs == nil {
		fs = storage.OSFS
	}
	nc := node.Config{
		FS:         fs,
		DataDir:    cfg.DataDir,
		DataLogDir: cfg.DataLogDir,
		ForceSync:  cfg.ForceSync,
		SnapRetain: cfg.AutopurgeSnapRetainCount,
		SnapCount:  uint64(max(cfg.SnapCount, 1)),
		SnapBytes:  uint64(max(cfg.SnapSizeLimitInKb, 0)) * 1024,
		// preAllocSize: at least the WAL's minimum, at most 4 GiB.
		WALSegmentSize: min(max(cfg.PreAllocSizeKB, 4), 4<<20) * 1024,
		FSM:            fsmOpts,
		Hooks: node.Hooks{
			Applied:            s.applied,
			Installed:          s.installed,
			RoleChanged:        s.roleChanged,
			RaftMembersChanged: s.raftMembersChanged,
		},
		Logger: s.log,
		Fatal:  opts.Fatal,
	}
	nc.ID, nc.Members = Membership(cfg)
	if nc.Members == nil {
		return nc
	}
	if cfg.ReconfigEnabled {
		nc.InitialMembership = cfg.Servers
	}
	nc.Tick, nc.ElectionTicks = RaftTiming(cfg.TickTime, cfg.SyncLimit)
	nc.HeartbeatTicks = 1
	if opts.RaftTick > 0 {
		nc.Tick = opts.RaftTick
	}
	// A write not applied within a few election timeouts will not be:
	// its client is told ConnectionLoss and moves on, as it would from a
	// ZooKeeper follower that lost its leader.
	nc.ProposeTimeout = max(5*time.Second, 4*2*time.Duration(nc.ElectionTicks)*nc.Tick)
	s.leaderGrace = time.Duration(nc.ElectionTicks) * nc.Tick / 2
	nc.Transport = opts.Transport
	if nc.Transport == nil {
		nc.Transport = s.tcpTransport
	}
	return nc
}

// Membership returns this server's member id and the ensemble its
// configuration describes (nil members: standalone). The member id is
// myid, or 0 for a standalone server without one.
func Membership(cfg Config) (node.MemberID, []node.Member) {
	self := node.MemberID(max(cfg.MyID, 0))
	if cfg.Standalone() {
		return self, nil
	}
	members := make([]node.Member, 0, len(cfg.Servers))
	for _, m := range cfg.Servers {
		members = append(members, node.Member{ID: node.MemberID(m.ID), Observer: m.Observer})
	}
	return self, members
}

// RaftTiming maps ZooKeeper's timing keys onto raft: raft ticks every
// tickTime/20 (clamped to 5–100 ms; 100 ms for the usual tickTime=2000),
// a leader heartbeats every raft tick, and a follower that hears nothing
// for 2×syncLimit raft ticks (at least 10, randomised up to twice that by
// raft) starts an election. With tickTime=2000 and syncLimit=5 that is an
// election timeout of 1–2 s: a dead leader is replaced within about 2 s,
// and a leader that cannot reach a quorum for that long steps down
// (CheckQuorum).
func RaftTiming(tickTimeMs, syncLimit int) (tick time.Duration, electionTicks int) {
	tick = time.Duration(tickTimeMs) * time.Millisecond / 20
	tick = min(max(tick, 5*time.Millisecond), 100*time.Millisecond)
	return tick, max(10, 2*syncLimit)
}

// EnsembleIdentity names an ensemble for the peer handshake: its members'
// ids and roles. Members whose server lines name different ensembles
// refuse each other. Host spellings may differ between members (0.0.0.0
// for oneself is common), so addresses are not part of it.
func EnsembleIdentity(servers []config.Server) string {
	parts := make([]string, 0, len(servers))
	for _, m := range servers {
		role := "participant"
		if m.Observer {
			role = "observer"
		}
		parts = append(parts, strconv.FormatInt(m.ID, 10)+":"+role)
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// roleChanged is the node's RoleChanged hook. A member that lost its
// leader stops serving: its clients are disconnected and try another
// member, as ZooKeeper's do. A new leader gives every session a fresh
// timeout, since it cannot know when their clients were last heard.
func (s *Server) roleChanged(r node.Role) {
	if r == node.Leading {
		// Duties start only once every session has its fresh timeout:
		// until then the deadlines here are a follower's, never extended.
		s.reviveSessions()
	}
	s.leading.Store(r == node.Leading || r == node.Standalone)
	gen := s.roleGen.Add(1)
	switch {
	case r == node.Looking && s.node.LeaderMoving():
		// A leadership hand-over (a reconfig removing the leader) finds
		// the next leader within a round trip: clients stay connected
		// unless the member is still without one after leaderGrace.
		time.AfterFunc(s.leaderGrace, func() {
			if s.roleGen.Load() == gen && s.node.Role() == node.Looking {
				s.closeAllAfterFlush("this member lost its leader")
			}
		})
	case r == node.Looking:
		s.closeAllAfterFlush("this member lost its leader")
	}
	s.readOnlyRoleChanged(r)
}

// installed is the node's Installed hook, under the state lock: the state
// jumped ahead by a snapshot from the leader, so every client reconnects
// and catches its watches up with SetWatches, as after a ZooKeeper SNAP
// sync.
func (s *Server) installed() {
	f := s.node.FSM()
	if m := f.Membership(); m != nil {
		s.membershipChanged(m)
	} else {
		f.SetMembership([]byte(s.cfg.MembershipText()), s.started.UnixMilli())
	}
	s.lastZxid.Store(int64(f.LastZxid()))
	now := s.now()
	s.sessMu.Lock()
	for id, ls := range s.live {
		if _, ok := f.Session(id); !ok && ls.conn == nil && !ls.local {
			delete(s.live, id)
		}
	}
	for _, id := range f.SessionIDs() {
		if _, ok := s.live[id]; !ok {
			sess, _ := f.Session(id)
			t := time.Duration(sess.Timeout) * time.Millisecond
			s.live[id] = &liveSession{timeout: t, expireAt: s.roundToTick(now.Add(t))}
		}
	}
	s.sessMu.Unlock()
	go s.closeAll("this member installed a snapshot from the leader")
}

// awaitZxid waits, for at most leaderGrace, until this member has applied
// zxid, and reports whether it has. A client that saw a write on the
// leader a moment ago (a reconfig that moved it here, say) is so served
// by a follower a few milliseconds behind, where ZooKeeper would refuse it
// at once and send it to try another server; a member further behind
// still refuses it.
func (s *Server) awaitZxid(zxid int64) bool {
	return s.withinGrace(func() bool { return s.lastZxid.Load() >= zxid }, func() bool { return !s.Serving() })
}

// awaitServing waits, for at most leaderGrace, until this member serves
// when leadership is being handed over (a reconfig that removed the
// leader): it takes new clients once the next leader is known instead of
// sending them away. A member that lost its leader otherwise, is removed
// or out of disk refuses them at once, as ZooKeeper.
func (s *Server) awaitServing() bool {
	if s.stalled() || !s.node.LeaderMoving() {
		return false
	}
	return s.withinGrace(s.Serving, s.removed.Load)
}

// withinGrace polls done every millisecond, for at most leaderGrace or
// until hopeless holds, and reports whether done came to hold.
func (s *Server) withinGrace(done, hopeless func() bool) bool {
	deadline := time.Now().Add(s.leaderGrace)
	for !done() {
		if hopeless() || time.Now().After(deadline) {
			return false
		}
		time.Sleep(time.Millisecond)
	}
	return true
}

// closeAll closes every client connection.
func (s *Server) closeAll(reason string) {
	for _, c := range s.connList() {
		c.close(reason)
	}
}

// closeAllAfterFlush closes every client connection once the replies
// queued for it are written.
func (s *Server) closeAllAfterFlush(reason string) {
	for _, c := range s.connList() {
		c.closeAfterFlush(reason)
	}
}

// sessionCreated runs under the state lock when a createSession entry is
// applied: every member tracks every session, so whichever becomes leader
// can expire it.
func (s *Server) sessionCreated(e *fsm.Entry) {
	var rec fsm.SessionRecord
	if wire.Unmarshal(e.Body, &rec, 0) != nil {
		return
	}
	t := time.Duration(rec.Timeout) * time.Millisecond
	s.sessMu.Lock()
	if _, ok := s.live[e.Session]; !ok {
		s.live[e.Session] = &liveSession{timeout: t, expireAt: s.roundToTick(s.now().Add(t))}
	}
	s.sessMu.Unlock()
}

// touchedElsewhere runs under the state lock when a touch entry is
// applied: on the leader, the sessions' deadlines move.
func (s *Server) touchedElsewhere(ids []fsm.SessionID) {
	if !s.leads() {
		return
	}
	for _, id := range ids {
		s.extend(id)
	}
}

// leads reports whether this member runs the leader's duties: session
// expiry, container and TTL reaping.
func (s *Server) leads() bool { return s.leading.Load() }

// forwardTouches proposes a touch entry with the sessions this member
// heard from since the last one, so the leader extends them. The leader
// itself needs none. With wait, it returns once the entry is applied here.
func (s *Server) forwardTouches(wait bool) error {
	s.touchMu.Lock()
	if len(s.touched) == 0 || s.leads() {
		clear(s.touched)
		s.touchMu.Unlock()
		return nil
	}
	ids := make([]fsm.SessionID, 0, len(s.touched))
	for id := range s.touched {
		ids = append(ids, id)
	}
	clear(s.touched)
	s.touchMu.Unlock()
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	e := &fsm.Entry{Op: wire.OpPing, Body: wire.Marshal(&fsm.TouchRecord{Sessions: ids})}
	var err error
	if wait {
		_, err = s.proposeAndWait(e)
	} else {
		err = s.propose(e, nil)
	}
	if err != nil {
		s.log.Debug("session touches not forwarded", "sessions", len(ids), "err", err)
	}
	return err
}

// Mode returns what this server is doing, as srvr's "Mode:" line says it:
// leader, follower, observer or standalone; "read-only" in read-only mode
// (readonly.go); "looking" while an ensemble member knows no leader
// otherwise (srvr then answers that it is not serving).
func (s *Server) Mode() string {
	if s.stalled() || s.removed.Load() {
		return node.Looking.Mode()
	}
	if s.ReadOnly() {
		return "read-only"
	}
	return s.node.Role().Mode()
}

// Serving reports whether the server serves clients: standalone, or an
// ensemble member that knows its leader and can write its log.
func (s *Server) Serving() bool {
	return s.node.Role().Serving() && !s.stalled() && !s.removed.Load()
}

// stalled reports whether this ensemble member cannot write its log (a
// full disk): it then serves no client, so they move to a member that
// can; the others elect a new leader if it led. A standalone server keeps
// serving reads and refuses writes instead.
func (s *Server) stalled() bool { return !s.node.Standalone() && s.node.Paused() }

// InSync reports whether this member knows its leader and has applied an
// entry of the leader's term, so holds every write committed before the
// leader took over (and, with reconfigEnabled, the membership a new
// ensemble's first leader logs).
func (s *Server) InSync() bool { return s.node.InSync() }

// AppliedIndex returns the index of the last log entry this server
// applied (entries that take no zxid, such as session touches, count).
func (s *Server) AppliedIndex() uint64 { return s.node.Applied() }

// LastZxid returns the zxid of the last write this server applied.
func (s *Server) LastZxid() int64 { return s.lastZxid.Load() }

// ForwardTouches sends the leader, through the log, the sessions whose
// clients this member heard from since the last call, and returns once
// this member has applied that entry (so the leader has too, or is no
// longer leader). The timer loop calls it every half tick; tests with
// timers off call it themselves. On the leader it does nothing.
func (s *Server) ForwardTouches() error { return s.forwardTouches(true) }

// attach moves a session to this member through the log and reports
// whether it is here now (false: it expired meanwhile); an error means the
// outcome is unknown (no leader, leader change) and the client should try
// again.
func (s *Server) attach(id fsm.SessionID) (bool, error) {
	out, err := s.proposeAndWait(&fsm.Entry{Op: fsm.OpAttach, Session: id})
	return err == nil && out.Err == wire.CodeOK, err
}

// sessionMoved runs under the state lock when a session moved to another
// member: a connection still holding it here is closed, as ZooKeeper's
// old server drops a client that reconnected elsewhere.
func (s *Server) sessionMoved(id fsm.SessionID) {
	s.sessMu.Lock()
	var c *conn
	if ls, ok := s.live[id]; ok {
		c, ls.conn = ls.conn, nil
	}
	s.sessMu.Unlock()
	if c != nil {
		go c.close("session moved to another server")
	}
}
