package server

import (
	"bytes"
	"sort"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/wire"
)

// Local sessions, as ZooKeeper's LocalSessionTracker and
// UpgradeableSessionTracker keep them.
//
// With localSessionsEnabled, an ensemble member (leader, follower or
// observer; a standalone server ignores the key, as ZooKeeper's does)
// creates every new session locally: it lives only in this member's
// liveness table (liveSession.local), with its password, and costs no log
// entry to create, to keep alive or to close. Its id has the member's id in
// the top byte like any other. Its writes go through the log marked
// fsm.Entry.Local, so the state machine does not look the session up.
//
// A local session cannot own ephemerals. Its first ephemeral create (in a
// create, create2 or multi) either upgrades it to a global session, with
// localSessionsUpgradingEnabled (a createSession entry with the same id,
// password and timeout is proposed right before the create), or is refused
// with EPHEMERALONLOCALSESSION.
//
// A client that reconnects to another member with a local session finds it
// unknown there, and is told its session expired. A member forgets its
// local sessions when it loses its leader, as a ZooKeeper member's session
// tracker is rebuilt from the global sessions whenever it restarts its
// server.

// localSessions reports whether new sessions are local: localSessionsEnabled
// on an ensemble member.
func (s *Server) localSessions() bool {
	return s.cfg.LocalSessionsEnabled && !s.node.Standalone()
}

// createLocal creates a local session bound to c and returns its id and
// password. readOnly marks a session of read-only mode.
func (s *Server) createLocal(c *conn, timeout int32, readOnly bool) (fsm.SessionID, []byte) {
	id := s.newSessionID()
	passwd := newPassword()
	t := time.Duration(timeout) * time.Millisecond
	s.sessMu.Lock()
	s.live[id] = &liveSession{
		timeout: t, expireAt: s.roundToTick(s.now().Add(t)), conn: c,
		local: true, readOnly: readOnly, passwd: passwd,
	}
	s.sessMu.Unlock()
	return id, passwd
}

// reattachLocal binds a reconnecting client to its local session. found
// reports whether id is a local session of this member in the same mode
// (read-only or not) as the connection; ok whether the password matched
// and the connection is bound. A connection still holding the session is
// closed.
func (s *Server) reattachLocal(id fsm.SessionID, passwd []byte, c *conn, timeout time.Duration, readOnly bool) (found, ok bool) {
	s.sessMu.Lock()
	ls, found := s.live[id]
	if !found || !ls.local {
		s.sessMu.Unlock()
		return false, false
	}
	if ls.closing || ls.readOnly != readOnly || !bytes.Equal(ls.passwd, passwd) {
		s.sessMu.Unlock()
		return true, false
	}
	old := ls.conn
	ls.conn = c
	ls.timeout = timeout
	ls.expireAt = s.roundToTick(s.now().Add(timeout))
	writes := &ls.writes
	s.sessMu.Unlock()
	if old != nil && old != c {
		old.close("client reconnected on another connection")
	}
	// As for a global session: writes sent on the earlier connection
	// apply before this one's requests run.
	select {
	case <-writes.idle():
		return true, true
	case <-s.closed:
		return true, false
	case <-time.After(handshakeTimeout):
		s.log.Warn("earlier writes of a re-attaching session did not apply in time", "session", sessionHex(id))
		return true, false
	}
}

// isLocal reports whether id is a local session of this member.
func (s *Server) isLocal(id fsm.SessionID) bool {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	ls, ok := s.live[id]
	return ok && ls.local
}

// closeLocal forgets a local session whose client closed it. It reports
// whether id was local.
func (s *Server) closeLocal(id fsm.SessionID) bool {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	if ls, ok := s.live[id]; ok && ls.local {
		delete(s.live, id)
		return true
	}
	return false
}

// upgradeEntry turns local session id into a global one and returns the
// createSession entry that makes it so, with the session's id, password and
// timeout; nil when the session is not local (any more).
func (s *Server) upgradeEntry(id fsm.SessionID) *fsm.Entry {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	ls, ok := s.live[id]
	if !ok || !ls.local || ls.readOnly {
		return nil
	}
	rec := fsm.SessionRecord{Timeout: int32(ls.timeout.Milliseconds()), Passwd: ls.passwd}
	ls.local, ls.passwd = false, nil
	return &fsm.Entry{Op: wire.OpCreateSession, Session: id, Body: wire.Marshal(&rec)}
}

// expireLocal closes the local sessions whose deadline is not after now:
// no log entry, the connection still bound is closed.
func (s *Server) expireLocal(now time.Time) {
	var expired []fsm.SessionID
	var conns []*conn
	s.sessMu.Lock()
	for id, ls := range s.live {
		if ls.local && !ls.expireAt.After(now) {
			delete(s.live, id)
			expired = append(expired, id)
			if ls.conn != nil {
				conns = append(conns, ls.conn)
			}
		}
	}
	s.sessMu.Unlock()
	sort.Slice(expired, func(i, j int) bool { return expired[i] < expired[j] })
	for _, id := range expired {
		s.log.Info("local session expired", "session", sessionHex(id))
		s.stats.expired.Add(1)
	}
	for _, c := range conns {
		c.closeAfterPending()
	}
}

// dropLocalSessions forgets this member's local sessions (only those of
// read-only mode with readOnlyOnly), as a ZooKeeper member's session
// tracker forgets them when its server restarts. Their connections are
// closed by the caller.
func (s *Server) dropLocalSessions(readOnlyOnly bool) {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for id, ls := range s.live {
		if ls.local && (ls.readOnly || !readOnlyOnly) {
			delete(s.live, id)
		}
	}
}

// localSessionCount returns the number of local sessions of this member
// (mntr's local_sessions).
func (s *Server) localSessionCount() int {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	n := 0
	for _, ls := range s.live {
		if ls.local {
			n++
		}
	}
	return n
}

// localWrite decides how a write of a local session is handled before the
// log. It returns exec, the request's answer when it is not proposed (the
// session's closeSession, which costs no entry; an ephemeral create
// refused with EPHEMERALONLOCALSESSION), or else whether the entry is
// marked local and whether the session must be upgraded first.
func (c *conn) localWrite(r *reply) (exec func() []byte, local, upgrade bool) {
	sid := c.sessionID()
	if !c.srv.isLocal(sid) {
		return nil, false, false
	}
	switch {
	case r.op == wire.OpCloseSession:
		return func() []byte {
			c.srv.closeLocal(sid)
			c.log.Debug("local session closed by its client", "session", sessionHex(sid))
			return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.CodeOK, nil)
		}, false, false
	case fsm.CreatesEphemeral(r.op, r.body, c.srv.maxBuffer):
		if !c.srv.cfg.LocalSessionsUpgradingEnabled {
			return func() []byte {
				return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrEphemeralOnLocalSession, nil)
			}, false, false
		}
		return nil, false, true
	}
	return nil, true, false
}

// upgrade proposes the createSession entry that makes local session sid
// global, before the ephemeral create that needs it; the log keeps the
// two in order. It reports false (the connection closed) when the entry
// could not be proposed.
func (c *conn) upgrade(sid fsm.SessionID) bool {
	e := c.srv.upgradeEntry(sid)
	if e == nil {
		return true // already global: the create goes as it is
	}
	c.log.Debug("upgrading a local session to a global one for its first ephemeral", "session", sessionHex(sid))
	writes := c.srv.sessionWrites(sid)
	if writes != nil {
		writes.add()
	}
	err := c.srv.propose(e, func(out fsm.Output, err error) {
		if writes != nil {
			writes.done()
		}
		if err != nil {
			c.log.Info("session upgrade outcome unknown; closing the connection", "session", sessionHex(sid), "err", err)
			c.close("session upgrade lost: " + err.Error())
		}
	})
	if err != nil {
		if writes != nil {
			writes.done()
		}
		c.close("session upgrade refused: " + err.Error())
		return false
	}
	return true
}

// isGlobal reports whether id is a session of the state machine.
func (s *Server) isGlobal(id fsm.SessionID) bool {
	s.node.RLock()
	defer s.node.RUnlock()
	_, ok := s.node.FSM().Session(id)
	return ok
}
