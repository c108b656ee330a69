package server

import (
	"time"

	"github.com/wardenzk/warden/internal/fsm"
)

// SessionInfo describes one session of the ensemble as this member sees
// it, for the AdminServer and the web console.
type SessionInfo struct {
	// ID is the session id.
	ID int64
	// Timeout is the negotiated session timeout.
	Timeout time.Duration
	// Owner is the member id of the server the session's client is
	// attached to (0 standalone).
	Owner int64
	// Local reports whether this member tracks the session's liveness
	// (its client is or was attached here); ExpireAt is then its
	// deadline.
	Local    bool
	ExpireAt time.Time
	// Remote is the client's address while it is connected to this
	// member, empty otherwise.
	Remote string
	// Ephemerals are the paths of the session's ephemeral znodes, sorted.
	Ephemerals []string
	// DataWatches, ChildWatches, PersistentWatches and RecursiveWatches
	// are the paths the session watches through its connection to this
	// member, each sorted (watches live on the member a client is
	// connected to, as in ZooKeeper).
	DataWatches, ChildWatches, PersistentWatches, RecursiveWatches []string
}

// Sessions returns every session of the replicated state, in id order,
// with what this member knows of each.
func (s *Server) Sessions() []SessionInfo {
	s.node.RLock()
	f := s.node.FSM()
	ids := f.SessionIDs()
	eph := f.Tree().EphemeralsBySession()
	out := make([]SessionInfo, 0, len(ids))
	for _, id := range ids {
		info := SessionInfo{ID: int64(id), Ephemerals: eph[int64(id)]}
		if se, ok := f.Session(id); ok {
			info.Timeout = time.Duration(se.Timeout) * time.Millisecond
			info.Owner = int64(se.Owner)
		}
		out = append(out, info)
	}
	s.node.RUnlock()

	conns := map[fsm.SessionID]*conn{}
	s.sessMu.Lock()
	for i := range out {
		if ls, ok := s.live[fsm.SessionID(out[i].ID)]; ok {
			out[i].Local, out[i].ExpireAt = true, ls.expireAt
			if ls.conn != nil {
				conns[fsm.SessionID(out[i].ID)] = ls.conn
			}
		}
	}
	s.sessMu.Unlock()

	s.wmu.Lock()
	for i := range out {
		c := conns[fsm.SessionID(out[i].ID)]
		if c == nil {
			continue
		}
		out[i].Remote = c.nc.RemoteAddr().String()
		out[i].DataWatches, out[i].ChildWatches, out[i].PersistentWatches, out[i].RecursiveWatches = s.watches.WatchedPaths(c.id)
	}
	s.wmu.Unlock()
	return out
}
