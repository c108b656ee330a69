package server

import (
	"errors"
	"sort"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// touch records that the session's client is alive: its deadline moves to
// now + timeout, rounded up to the next tick as ZooKeeper's expiry buckets
// do.
// A member that is not the leader also forwards the touch of a global
// session to the leader with its next touch entry.
func (s *Server) touch(id fsm.SessionID) {
	if id == 0 {
		return
	}
	if local := s.extend(id); !local && !s.node.Standalone() {
		s.touchMu.Lock()
		s.touched[id] = struct{}{}
		s.touchMu.Unlock()
	}
}

// extend moves a session's deadline to now + timeout. It reports whether
// the session is local (localsessions.go).
func (s *Server) extend(id fsm.SessionID) (local bool) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	ls, ok := s.live[id]
	if ok && !ls.closing {
		ls.expireAt = s.roundToTick(s.now().Add(ls.timeout))
	}
	return ok && ls.local
}

// dropLive forgets a session whose creation failed.
func (s *Server) dropLive(id fsm.SessionID) {
	s.sessMu.Lock()
	delete(s.live, id)
	s.sessMu.Unlock()
}

// reviveSessions gives every session of the state machine a fresh full
// timeout, as a new ZooKeeper leader does: clients have that long to be
// heard from, and any expiry this member proposed before is decided anew.
// It runs at start-up and when this member becomes leader.
func (s *Server) reviveSessions() {
	now := s.now()
	s.node.RLock()
	f := s.node.FSM()
	ids := f.SessionIDs()
	timeouts := make([]int32, len(ids))
	for i, id := range ids {
		sess, _ := f.Session(id)
		timeouts[i] = sess.Timeout
	}
	s.node.RUnlock()
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for i, id := range ids {
		t := time.Duration(timeouts[i]) * time.Millisecond
		ls, ok := s.live[id]
		if !ok {
			ls = &liveSession{}
			s.live[id] = ls
		}
		ls.timeout = t
		ls.expireAt = s.roundToTick(now.Add(t))
		// A session still in the state machine is alive, whatever this
		// member proposed for it before: a closeSession it proposed as an
		// earlier leader (or for a client that closed) may have been lost
		// with that leadership. Left marked closing, the session would
		// never expire here and its ephemerals would outlive it.
		ls.closing = false
	}
}

func (s *Server) roundToTick(t time.Time) time.Time {
	tick := time.Duration(s.cfg.TickTime) * time.Millisecond
	if tick <= 0 {
		return t
	}
	ms := t.UnixMilli()
	tk := tick.Milliseconds()
	return time.UnixMilli((ms/tk + 1) * tk)
}

// checkSession looks up a reconnecting client's session and reports
// whether passwd is its password. In an ensemble, a session this member
// does not know may be one whose creation it has not applied yet: the
// client heard of it from a member ahead (the leader commits before it
// applies, and members apply at their own pace). A sync through the log,
// ordered after every entry committed before it, then settles it before
// the client is told its session expired, as ZooKeeper's follower asks
// the leader to revalidate the session. An error means the outcome is
// unknown (no leader): the client should try again.
func (s *Server) checkSession(id fsm.SessionID, passwd []byte) (*fsm.Session, bool, error) {
	lookup := func() (sess *fsm.Session, known, ok bool) {
		s.node.RLock()
		defer s.node.RUnlock()
		f := s.node.FSM()
		sess, known = f.Session(id)
		return sess, known, f.CheckPassword(id, passwd)
	}
	sess, known, ok := lookup()
	if known || id == 0 || s.node.Standalone() {
		return sess, ok, nil
	}
	if _, err := s.proposeAndWait(&fsm.Entry{Op: wire.OpSync, Body: wire.Marshal(&wire.SyncRequest{Path: "/"})}); err != nil {
		return nil, false, err
	}
	sess, _, ok = lookup()
	return sess, ok, nil
}

// errMovedAway: a reconnecting client's session was moved to another
// member while it attached here; the connection is dropped unanswered so
// that the client tries again.
var errMovedAway = errors.New("the session moved to another member while it attached here")

// reattach binds a reconnecting client to its session, closing any other
// connection that still holds it. It reports false if the session is
// closing (gone), and errMovedAway if another member took the session
// meanwhile.
func (s *Server) reattach(id fsm.SessionID, c *conn, timeout time.Duration) (bool, error) {
	if !s.node.Standalone() {
		// The session must still be owned here. Another member's attach
		// (one its proposer gave up on, which the log kept) may have
		// applied since ours; the client would then get SESSIONMOVED for
		// every write on a connection nothing closes. The state lock makes
		// such an attach apply either before this check (the client is
		// refused and tries another member) or after the connection is
		// registered below (sessionMoved closes it).
		s.node.RLock()
		sess, ok := s.node.FSM().Session(id)
		if !ok || (sess.Owner != s.id && sess.Owner != fsm.NoOwner) {
			s.node.RUnlock()
			return false, errMovedAway
		}
	}
	s.sessMu.Lock()
	ls, ok := s.live[id]
	if !ok {
		// Known to the state machine but not to this server's liveness
		// table (e.g. after a leader change): start a fresh full timeout.
		ls = &liveSession{}
		s.live[id] = ls
	}
	if ls.closing {
		s.sessMu.Unlock()
		s.unlockState()
		return false, nil
	}
	old := ls.conn
	ls.conn = c
	ls.timeout = timeout
	ls.expireAt = s.roundToTick(s.now().Add(timeout))
	s.sessMu.Unlock()
	s.unlockState()
	if old != nil && old != c {
		old.close("client reconnected on another connection")
	}
	// Writes the client sent on an earlier connection may still be in the
	// log: let them apply before this connection's requests run, so a
	// client that lost a reply finds its write when it looks (Curator's
	// protected creates depend on it).
	select {
	case <-ls.writes.idle():
		return true, nil
	case <-s.closed:
		return false, nil
	case <-time.After(handshakeTimeout):
		s.log.Warn("earlier writes of a re-attaching session did not apply in time", "session", sessionHex(id))
		return false, nil
	}
}

// unlockState releases the state lock reattach holds in an ensemble.
func (s *Server) unlockState() {
	if !s.node.Standalone() {
		s.node.RUnlock()
	}
}

// sessionWrites returns the in-flight write counter of a live session, or
// nil.
func (s *Server) sessionWrites(id fsm.SessionID) *pendingWrites {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if ls, ok := s.live[id]; ok {
		return &ls.writes
	}
	return nil
}

// markClosing stops a session from being re-attached: its closeSession
// has been proposed.
func (s *Server) markClosing(id fsm.SessionID) {
	s.sessMu.Lock()
	if ls, ok := s.live[id]; ok {
		ls.closing = true
	}
	s.sessMu.Unlock()
}

// ExpireSessions proposes closeSession for every session whose deadline
// is not after now. The timer loop calls it every tick; tests call it with
// a fake clock.
//
// Only the leader expires global sessions; every member expires its local
// sessions (localsessions.go), which takes no log entry.
func (s *Server) ExpireSessions(now time.Time) {
	s.expireLocal(now)
	if !s.leads() {
		return
	}
	var expired []fsm.SessionID
	s.sessMu.Lock()
	for id, ls := range s.live {
		if !ls.local && !ls.closing && !ls.expireAt.IsZero() && !ls.expireAt.After(now) {
			ls.closing = true
			expired = append(expired, id)
		}
	}
	s.sessMu.Unlock()
	sort.Slice(expired, func(i, j int) bool { return expired[i] < expired[j] })
	for _, id := range expired {
		s.log.Info("session expired", "session", sessionHex(id))
		s.stats.expired.Add(1)
		if err := s.propose(&fsm.Entry{Op: wire.OpCloseSession, Session: id, Time: now.UnixMilli()}, nil); err != nil {
			return
		}
	}
}

// sessionClosed runs after a closeSession entry is applied: the session is
// forgotten and a connection still bound to it is closed, without a reply
// (the closing client itself gets its reply from the processor).
func (s *Server) sessionClosed(id fsm.SessionID) {
	s.sessMu.Lock()
	ls := s.live[id]
	delete(s.live, id)
	s.sessMu.Unlock()
	if ls != nil && ls.conn != nil {
		ls.conn.closeAfterPending()
	}
}

// closeAfterPending closes the connection once replies already queued for
// it are written.
func (c *conn) closeAfterPending() {
	// An internal marker: no start time, so it is not measured.
	r := &reply{exec: func() []byte { return nil }, closeAfter: true}
	select {
	case c.replies <- r:
	default:
		c.close("session closed")
	}
}

// ExpireContainers proposes deleteContainer for empty containers and
// expired TTL nodes (ZooKeeper's ContainerManager), at most
// znode.container.maxPerMinute per run.
//
// Only the leader reaps; elsewhere it does nothing.
func (s *Server) ExpireContainers(now time.Time) {
	if !s.leads() {
		return
	}
	s.node.RLock()
	paths := s.node.FSM().Tree().ExpiryCandidates(now.UnixMilli(), int64(s.cfg.ContainerMaxNeverUsedIntervalMs))
	s.node.RUnlock()
	if max := s.cfg.ContainerMaxPerMinute; max > 0 && len(paths) > max {
		paths = paths[:max]
	}
	for _, p := range paths {
		body := wire.Marshal(&wire.DeleteContainerRequest{Path: p})
		if err := s.propose(&fsm.Entry{Op: wire.OpDeleteContainer, Time: now.UnixMilli(), Body: body}, nil); err != nil {
			return
		}
	}
}

// timerLoop drives session expiry every tick and container expiry every
// znode.container.checkIntervalMs.
func (s *Server) timerLoop() {
	defer s.wg.Done()
	tick := time.Duration(s.cfg.TickTime) * time.Millisecond
	if tick <= 0 {
		tick = time.Second
	}
	sessions := time.NewTicker(tick / 2)
	defer sessions.Stop()
	interval := time.Duration(s.cfg.ContainerCheckIntervalMs) * time.Millisecond
	if interval <= 0 {
		interval = time.Minute
	}
	containers := time.NewTicker(interval)
	defer containers.Stop()
	for {
		select {
		case <-sessions.C:
			if s.stalled() {
				s.closeAll("this member's disk is full; its clients move to another member")
			}
			s.ExpireSessions(s.now())
			s.forwardTouches(false)
		case <-containers.C:
			s.ExpireContainers(s.now())
		case <-s.closed:
			return
		}
	}
}

// fireWatches delivers the events of the changes of the transaction zxid
// to local connections allowed to read the node; each notification
// carries zxid. The caller holds s.mu exclusively, so the events are
// queued before any later read runs or reply is sent.
func (s *Server) fireWatches(zxid fsm.Zxid, changes []tree.Change) {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	t := s.node.FSM().Tree()
	for _, ch := range changes {
		deliveries := s.watches.Trigger(ch.Type, ch.Path)
		if len(deliveries) == 0 {
			continue
		}
		s.connMu.Lock()
		for _, d := range deliveries {
			c := s.connByID(d.Watcher)
			if c == nil {
				continue
			}
			if !t.CanRead(ch.ACL, c.caller()) {
				continue
			}
			s.stats.watchEvents.Add(1)
			c.send(eventFrame(zxid, d.Type, d.Path))
		}
		s.connMu.Unlock()
	}
}
