package server

import (
	"context"
	"io"
	"math/rand/v2"
	"net"
	"slices"
	"strconv"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/wire"
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

// defaultTraceMask is ZooKeeper's default trace mask (gtmk).
const defaultTraceMask = 306

// TraceMask returns the trace mask (gtmk); Warden keeps it for the
// commands that report it but its logs do not depend on it.
func (s *Server) TraceMask() int64 { return s.traceMask.Load() }

// SetTraceMask sets the trace mask (stmk).
func (s *Server) SetTraceMask(m int64) { s.traceMask.Store(m) }

// BufferSizes are the last, smallest and largest sizes in bytes of a
// kind of message, -1 each before the first (ZooKeeper's BufferStats).
type BufferSizes struct {
	Last, Min, Max int
}

// ResponseSizes returns the sizes of the packets sent to clients (replies
// and watch events, without their length prefix) since start or srst.
func (s *Server) ResponseSizes() BufferSizes {
	var b BufferSizes
	b.Last, b.Min, b.Max = s.stats.responses.get()
	return b
}

// ProposalSizes returns, on an ensemble's leader, the sizes of the log
// entries it replicated (-1 each before the first).
func (s *Server) ProposalSizes() BufferSizes {
	var b BufferSizes
	b.Last, b.Min, b.Max = s.node.ProposalSizes()
	return b
}

// SessionExpiry returns the sessions whose liveness this member tracks,
// grouped by deadline (Unix ms), each group sorted: dump's session sets.
func (s *Server) SessionExpiry() map[int64][]int64 {
	out := map[int64][]int64{}
	s.sessMu.Lock()
	for id, ls := range s.live {
		k := ls.expireAt.UnixMilli()
		out[k] = append(out[k], int64(id))
	}
	s.sessMu.Unlock()
	for _, ids := range out {
		slices.Sort(ids)
	}
	return out
}

// Ephemerals returns the ephemeral paths of every session that has some,
// each list sorted.
func (s *Server) Ephemerals() map[int64][]string {
	s.node.RLock()
	defer s.node.RUnlock()
	return s.node.FSM().Tree().EphemeralsBySession()
}

// LastSnapshot returns the zxid and time of the newest snapshot this
// server wrote, installed or started from; false before any.
func (s *Server) LastSnapshot() (zxid int64, at time.Time, ok bool) {
	m, ok := s.node.LastSnapshot()
	return int64(m.Zxid), m.Time, ok
}

// WriteSnapshot writes a snapshot file of the whole replicated state to
// w, in the format of the member's own snapshot files (`warden snapshot
// inspect` reads it, and a standalone server started on an empty dataDir
// holding it in version-2 under the name SnapshotFileName gives recovers
// from it). It returns the zxid of the last write it holds and the file's
// name. The state is copied between two applies; writing it takes no lock.
// An error is ctx's, the node's (stopping) or w's.
func (s *Server) WriteSnapshot(ctx context.Context, w io.Writer) (zxid int64, name string, err error) {
	meta, clone, err := s.node.CloneState(ctx)
	if err != nil {
		return 0, "", err
	}
	name = storage.SnapshotFileName(meta.GetTerm(), meta.GetIndex())
	return int64(clone.LastZxid()), name, storage.WriteSnapshot(w, meta, clone.WriteSnapshot)
}

// ACL returns the ACL of a znode, without any permission check (for
// the AdminServer's authorisation of snapshot and restore); false when
// the znode does not exist.
func (s *Server) ACL(path string) ([]wire.ACL, bool) {
	s.node.RLock()
	defer s.node.RUnlock()
	_, acl, ok := s.node.FSM().Tree().Lookup(path)
	return acl, ok
}

// ZabPhase names what ZooKeeper's zabstate reports from this member's
// role: "election" while it knows no leader, "broadcast" once it serves
// under one. Warden's raft has no separate discovery or synchronisation
// phases; a member catching up from the leader is already following.
func (s *Server) ZabPhase() string {
	if s.node.Role() == node.Looking || s.stalled() {
		return "election"
	}
	return "broadcast"
}

// ObserverInfo is one observer as the leader sees it.
type ObserverInfo struct {
	// ID is its myid.
	ID int64
	// Addr is its quorum address from its server line.
	Addr string
	// Synced is set while the leader streams entries to it.
	Synced bool
}

// Observers returns, on the leader, the observers of the ensemble; nil on
// other members.
func (s *Server) Observers() []ObserverInfo {
	if s.node.Role() != node.Leading {
		return nil
	}
	var out []ObserverInfo
	for _, p := range s.node.Peers() {
		if !p.Learner {
			continue
		}
		oi := ObserverInfo{ID: int64(p.ID), Synced: p.Synced}
		for _, m := range s.servers() {
			if m.ID == int64(p.ID) {
				oi.Addr = net.JoinHostPort(m.Host, strconv.Itoa(m.PeerPort))
			}
		}
		out = append(out, oi)
	}
	slices.SortFunc(out, func(a, b ObserverInfo) int { return int(a.ID - b.ID) })
	return out
}

// ShedConnections closes about percent% of the client connections (at
// least one when percent > 0 and any is open), chosen at random, and
// returns how many it closed. Their clients reconnect, possibly to
// another member.
func (s *Server) ShedConnections(percent int) int {
	list := s.connList()
	n := len(list) * min(max(percent, 0), 100) / 100
	if percent > 0 && n == 0 && len(list) > 0 {
		n = 1
	}
	rand.Shuffle(len(list), func(i, j int) { list[i], list[j] = list[j], list[i] })
	for _, c := range list[:n] {
		c.close("shed by the AdminServer's shed_connections")
	}
	return n
}

// Stats are the figures of srvr and stat (ZooKeeper's ServerStats).
type Stats struct {
	// MinLatency, AvgLatency and MaxLatency are request latencies in ms
	// since start or the last srst.
	MinLatency int64
	AvgLatency float64
	MaxLatency int64
	// Outstanding counts requests received and not yet answered.
	Outstanding int
	// LastZxid is the zxid of the last write applied.
	LastZxid int64
	// Received and Sent count packets since start or the last srst.
	Received, Sent int64
	// Mode is srvr's "Mode:" value: standalone, leader, follower,
	// observer or looking.
	Mode string
	// Connections counts the open client connections.
	Connections int
	// Uptime is the time since the server started.
	Uptime time.Duration
	// AuthFailed counts failed authentications.
	AuthFailed int64
	// NonMTLSRemote and NonMTLSLocal count the connections accepted on a
	// plaintext-only client port from other hosts and from loopback.
	NonMTLSRemote, NonMTLSLocal int64
	// NodeCount is srvr's "Node count:" (the root counted twice, as in
	// ZooKeeper).
	NodeCount int
	// Leader is set on an ensemble's leader.
	Leader bool
}

// Stats returns what srvr and stat report, in structured form.
func (s *Server) Stats() Stats {
	st := Stats{
		Received:      s.stats.received.Load(),
		Sent:          s.stats.sent.Load(),
		Outstanding:   s.outstanding(),
		LastZxid:      s.lastZxid.Load(),
		Mode:          s.Mode(),
		Connections:   len(s.connList()),
		Uptime:        s.now().Sub(s.started),
		AuthFailed:    s.stats.authFailed.Load(),
		NonMTLSRemote: s.stats.nonMTLSRemote.Load(),
		NonMTLSLocal:  s.stats.nonMTLSLocal.Load(),
		Leader:        s.node.Role() == node.Leading,
	}
	st.MinLatency, st.AvgLatency, st.MaxLatency = s.stats.lat.get()
	s.node.RLock()
	st.NodeCount = s.node.FSM().Tree().NodeCount() + 1
	s.node.RUnlock()
	return st
}

// ResetStats zeroes the latency, packet and response-size counters, as
// srst does.
func (s *Server) ResetStats() { s.stats.reset() }

// ResetConnStats zeroes every connection's counters, as crst does.
func (s *Server) ResetConnStats() {
	for _, c := range s.connList() {
		c.stats.reset()
	}
}

// ConnInfo describes one client connection, as cons prints it.
type ConnInfo struct {
	// Remote is the client's address, "ip:port".
	Remote string
	// Interest is Java NIO's interest ops cons shows: 1 for a connection
	// with a session, 0 for one answering a four-letter word.
	Interest int
	// Queued counts its requests not yet answered.
	Queued int
	// Received and Sent count its packets.
	Received, Sent int64
	// Session is its session id, 0 before the handshake; the fields below
	// are meaningful only with a session.
	Session int64
	// LastOp is the abbreviation of its last operation ("NA" before any).
	LastOp string
	// Established is when the connection was accepted.
	Established time.Time
	// Timeout is the negotiated session timeout in ms.
	Timeout int32
	// LastCxid and LastZxid are those of its last request (-1 before any).
	LastCxid int32
	LastZxid int64
	// LastResponse is when it was last answered, Unix ms (0 before).
	LastResponse int64
	// LastLatency, MinLatency, AvgLatency and MaxLatency are in ms;
	// AvgLatency is truncated, as ZooKeeper 3.8 computes it.
	LastLatency, MinLatency, AvgLatency, MaxLatency int64
}

// Connections returns every open client connection, in the order cons
// lists them.
func (s *Server) Connections() []ConnInfo {
	list := s.connList()
	out := make([]ConnInfo, 0, len(list))
	for _, c := range list {
		out = append(out, c.info())
	}
	return out
}

// info is the connection's ConnInfo.
func (c *conn) info() ConnInfo {
	ci := ConnInfo{
		Remote:       c.nc.RemoteAddr().String(),
		Queued:       len(c.replies),
		Received:     c.stats.received.Load(),
		Sent:         c.stats.sent.Load(),
		Session:      int64(c.sessionID()),
		Established:  c.established,
		Timeout:      c.timeout.Load(),
		LastCxid:     c.stats.lastCxid.Load(),
		LastZxid:     c.stats.lastZxid.Load(),
		LastResponse: c.stats.lastResponse.Load(),
		LastLatency:  c.stats.lastLatency.Load(),
	}
	if ci.Session != 0 {
		ci.Interest = 1
	}
	ci.LastOp = opShort(wire.OpCode(c.stats.lastOp.Load()))
	var avg float64
	ci.MinLatency, avg, ci.MaxLatency = c.stats.lat.get()
	ci.AvgLatency = int64(avg)
	return ci
}

// WatchReport is the data-watch table of the clients connected to this
// member, as wchc, wchp and wchs show it (child watches are not listed, as
// in ZooKeeper).
type WatchReport struct {
	// BySession maps a session id to the paths it watches, sorted.
	BySession map[int64][]string
	// ByPath maps a path to the ids of the sessions watching it, sorted.
	ByPath map[string][]int64
	// Connections, Paths and Total are wchs's figures: connections with a
	// watch, watched paths and (path, connection) pairs.
	Connections, Paths, Total int
}

// Watches returns the data-watch table of the clients connected here.
func (s *Server) Watches() WatchReport {
	s.wmu.Lock()
	byWatcher := s.watches.DataPathsByWatcher()
	byPath := s.watches.DataWatchersByPath()
	conns, paths, total := s.watches.DataSummary()
	s.wmu.Unlock()
	r := WatchReport{
		BySession:   make(map[int64][]string, len(byWatcher)),
		ByPath:      make(map[string][]int64, len(byPath)),
		Connections: conns, Paths: paths, Total: total,
	}
	s.connMu.Lock()
	for w, ps := range byWatcher {
		if c := s.conns[w]; c != nil {
			r.BySession[int64(c.sessionID())] = ps
		}
	}
	for p, ws := range byPath {
		ids := make([]int64, 0, len(ws))
		for _, w := range ws {
			if c := s.conns[w]; c != nil {
				ids = append(ids, int64(c.sessionID()))
			}
		}
		slices.Sort(ids)
		r.ByPath[p] = ids
	}
	s.connMu.Unlock()
	return r
}

// DirSizes returns the bytes used under dataDir and dataLogDir (dirs).
func (s *Server) DirSizes() (data, log int64) { return s.dirSizes() }

// Config returns the configuration the server runs with. The caller must
// not modify its maps and slices.
//
// Its Servers are the current membership: after a reconfig, the one the
// log holds (with its version in MembershipVersion), not zoo.cfg's lines.
func (s *Server) Config() Config {
	c := s.cfg
	if m := s.members.Load(); m != nil {
		c.Servers, c.MembershipVersion = m.Servers, int64(m.Version)
	}
	return c
}

// servers returns the current membership (see Config).
func (s *Server) servers() []config.Server {
	if m := s.members.Load(); m != nil {
		return m.Servers
	}
	return s.cfg.Servers
}

// participants counts the voting members of the current membership.
func (s *Server) participants() int {
	n := 0
	for _, m := range s.servers() {
		if !m.Observer {
			n++
		}
	}
	return n
}

// LeaderInfo is what the leader command reports on an ensemble member.
type LeaderInfo struct {
	// IsLeader is set on the leader.
	IsLeader bool
	// LeaderID is the leader's myid, -1 when none is known.
	LeaderID int64
	// LeaderHost is the host of the leader's server line, "" when none is
	// known.
	LeaderHost string
}

// Leader returns who leads this member's ensemble; false on a standalone
// server.
func (s *Server) Leader() (LeaderInfo, bool) {
	if s.node.Standalone() {
		return LeaderInfo{}, false
	}
	li := LeaderInfo{IsLeader: s.node.Role() == node.Leading, LeaderID: -1}
	if id, ok := s.node.Leader(); ok && s.Serving() {
		li.LeaderID = int64(id)
		for _, m := range s.servers() {
			if m.ID == int64(id) {
				li.LeaderHost = m.Host
			}
		}
	}
	return li, true
}
