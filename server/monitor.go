package server

import (
	"github.com/wardenzk/warden/internal/node"
)

// Metric is one value of mntr (and of the AdminServer's monitor command):
// its name without mntr's "zk_" prefix, and its value, a number or a
// string.
type Metric struct {
	Name  string
	Value any
}

// Monitor returns what mntr reports, in mntr's order: the values every
// server has, then a member's peer state and quorum size, then the
// leader's view of its followers, then ZooKeeper's counters and summaries
// (avg_/min_/max_/cnt_/sum_<name>, and p50_/p95_/p99_/p999_<name> for
// the latencies).
func (s *Server) Monitor() []Metric {
	m := s.serverMonitor()
	for _, v := range s.metrics.Monitor() {
		m = append(m, Metric{v.Name, v.Value})
	}
	return m
}

// serverMonitor is the part of mntr that /metrics exports as ZooKeeper's
// gauges, computed at each scrape (Server.exportMetrics).
func (s *Server) serverMonitor() []Metric {
	lmin, lavg, lmax := s.stats.lat.get()
	s.node.RLock()
	t := s.node.FSM().Tree()
	nodes, dataSize, ephemerals := t.NodeCount()+1, t.ApproxDataSize(), t.EphemeralCount()
	sessions := len(s.node.FSM().SessionIDs())
	s.node.RUnlock()
	s.wmu.Lock()
	watchCount := s.watches.Count()
	s.wmu.Unlock()
	m := []Metric{
		{"version", fullVersion()},
		{"server_state", s.Mode()},
		{"avg_latency", javaDouble(lavg)},
		{"max_latency", lmax},
		{"min_latency", lmin},
		{"packets_received", s.stats.received.Load()},
		{"packets_sent", s.stats.sent.Load()},
		{"num_alive_connections", len(s.connList())},
		{"outstanding_requests", s.outstanding()},
		{"uptime", s.now().Sub(s.started).Milliseconds()},
		{"znode_count", nodes},
		{"watch_count", watchCount},
		{"ephemerals_count", ephemerals},
		{"approximate_data_size", dataSize},
		{"global_sessions", sessions},
		{"local_sessions", s.localSessionCount()},
		{"open_file_descriptor_count", countOpenFDs()},
		{"max_file_descriptor_count", maxFDs()},
		{"connection_drop_probability", javaDouble(s.connThrottle.dropChance())},
		{"auth_failed_count", s.stats.authFailed.Load()},
		{"outstanding_tls_handshake", s.handshakes.n.Load()},
		{"non_mtls_remote_conn_count", s.stats.nonMTLSRemote.Load()},
		{"non_mtls_local_conn_count", s.stats.nonMTLSLocal.Load()},
		{"connection_rejected", s.stats.rejected.Load()},
		{"session_expired_count", s.stats.expired.Load()},
		{"watch_events_sent", s.stats.watchEvents.Load()},
		{"throttled_ops", s.stats.throttled.Load()},
		{"last_processed_zxid", s.lastZxid.Load()},
	}
	return append(m, s.quorumMonitor()...)
}

// quorumMonitor is what an ensemble member adds to mntr: its peer state
// and the quorum size, and on the leader its followers.
func (s *Server) quorumMonitor() []Metric {
	if s.node.Standalone() {
		return nil
	}
	role := s.node.Role()
	peer := map[node.Role]string{
		node.Leading: "leading - broadcast", node.Following: "following - broadcast",
		node.Observing: "observing - broadcast", node.Looking: "looking",
	}[role]
	// ZooKeeper's quorum_size is the number of voting members.
	m := []Metric{{"peer_state", peer}, {"quorum_size", s.participants()}}
	if role != node.Leading {
		return m
	}
	var learners, followers, observers, nonVoting int
	for _, p := range s.node.Peers() {
		if !p.Synced {
			continue
		}
		learners++
		if p.Learner {
			observers++
		} else {
			followers++
		}
	}
	last, lo, hi := s.node.ProposalSizes()
	return append(m,
		Metric{"learners", learners},
		Metric{"synced_followers", followers},
		Metric{"synced_non_voting_followers", nonVoting},
		Metric{"synced_observers", observers},
		Metric{"pending_syncs", 0},
		Metric{"last_proposal_size", last},
		Metric{"min_proposal_size", lo},
		Metric{"max_proposal_size", hi},
	)
}
