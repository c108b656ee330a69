package server

import (
	"sync/atomic"
	"time"

	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/wire"
)

// Read-only mode (readonlymode.enabled), as ZooKeeper's
// ReadOnlyZooKeeperServer.
//
// An ensemble member that has had no leader for readOnlyGrace (ZooKeeper's
// max(2 s, tickTime)) serves the clients whose ConnectRequest says
// readOnly=true, and only those: their ConnectResponse says readOnly=1,
// reads answer from the member's own tree, and the ops of
// refusedReadOnly get NOTREADONLY. Sessions created then are local to the
// member (never proposed: there is no quorum); a global session's client
// is refused, so it tries another member. When the member finds a leader
// again, the read-only connections are closed and their sessions
// forgotten, as ZooKeeper shuts its read-only server down: clients come
// back to a member that serves writes.

// readOnlyState is what read-only mode needs to know of the member's
// role. The zero value is a member that is looking since it started.
type readOnlyState struct {
	// led is set while the member knows a leader.
	led atomic.Bool
	// lookingSince is when the member last lost its leader (Unix ms); 0
	// means since the server started.
	lookingSince atomic.Int64
}

// readOnlyGrace is how long a member waits without a leader before it
// serves read-only clients: ZooKeeper's max(2000 ms, tickTime), so that an
// ordinary election does not flip clients into read-only mode.
func (s *Server) readOnlyGrace() time.Duration {
	return max(2*time.Second, time.Duration(s.cfg.TickTime)*time.Millisecond)
}

// ReadOnly reports whether this member serves read-only clients now:
// readonlymode.enabled, an ensemble member, no leader for the grace period,
// and a log it can write (a member with a full disk serves no one).
func (s *Server) ReadOnly() bool {
	if !s.cfg.ReadOnlyModeEnabled || s.node.Standalone() || s.node.Role() != node.Looking || s.stalled() {
		return false
	}
	since := s.ro.lookingSince.Load()
	if since == 0 {
		since = s.started.UnixMilli()
	}
	return s.now().Sub(time.UnixMilli(since)) >= s.readOnlyGrace()
}

// Running reports whether the server answers clients at all: it serves
// (Serving) or it is in read-only mode. Four-letter words and the
// AdminServer answer while it runs, as ZooKeeper's do while a server
// (read-only or not) is up.
func (s *Server) Running() bool { return s.Serving() || s.ReadOnly() }

// readOnlyRoleChanged follows the member into and out of having a leader.
// Losing it starts the grace period and forgets the local sessions (the
// connections are closed by roleChanged); finding it again ends read-only
// mode: its connections are closed and its sessions forgotten.
func (s *Server) readOnlyRoleChanged(r node.Role) {
	led := r != node.Looking
	if s.ro.led.Swap(led) == led {
		return
	}
	if !led {
		s.ro.lookingSince.Store(s.now().UnixMilli())
		s.dropLocalSessions(false)
		return
	}
	s.dropLocalSessions(true)
	for _, c := range s.connList() {
		if c.readOnly.Load() {
			c.close("this member found its leader again; read-only clients move to a read-write server")
		}
	}
}

// admitReadOnly decides the ConnectRequest of a member that does not
// serve: it reports whether the connection is served in read-only mode.
func (c *conn) admitReadOnly(req *wire.ConnectRequest) bool {
	// Marked before the mode is checked: a member that finds its leader
	// right after the check closes this connection (readOnlyRoleChanged).
	c.readOnly.Store(true)
	if !c.srv.ReadOnly() {
		c.log.Debug("refusing a session: this member has no leader and does not serve")
		return false
	}
	if !req.ReadOnly {
		// ZooKeeper's words.
		c.log.Info("Refusing session request for not-read-only client " + c.nc.RemoteAddr().String())
		return false
	}
	return true
}

// refusedReadOnly reports whether op gets NOTREADONLY in read-only mode
// (ZooKeeper's ReadOnlyRequestProcessor): every write, check and sync.
func refusedReadOnly(op wire.OpCode) bool {
	switch op {
	case wire.OpSync, wire.OpCreate, wire.OpCreate2, wire.OpCreateTTL, wire.OpCreateContainer,
		wire.OpDelete, wire.OpDeleteContainer, wire.OpSetData, wire.OpReconfig, wire.OpSetACL,
		wire.OpMulti, wire.OpCheck:
		return true
	}
	return false
}
