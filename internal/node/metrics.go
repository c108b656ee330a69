package node

import (
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/replica"
	"github.com/wardenzk/warden/wire"
)

// electionClock times a member's elections and its returns to service,
// with ZooKeeper's meanings (QuorumPeer, Leader.lead, Follower.followLeader).
// Apply goroutine only.
type electionClock struct {
	// lookingSince is when the member lost its leader (or started); zero
	// while it has one.
	lookingSince time.Time
	// unavailableSince is when the member stopped serving; zero while it
	// serves (a follower serves again once in sync).
	unavailableSince time.Time
	// syncSince is when a follower learned its leader, until it applied an
	// entry of the leader's term (syncTerm); zero otherwise.
	syncSince time.Time
	syncTerm  uint64
	// observer is set when the member syncing is an observer
	// (observer_sync_time rather than follower_sync_time).
	observer bool
}

// observeRole records what a role change means for the metrics: an
// election starts when the member loses its leader, and ends when it
// leads or follows (election_time); a member that leads is available
// again at once, one that follows once in sync (unavailable_time,
// follower_sync_time, observer_sync_time). A standalone member never elects.
func (n *Node) observeRole(old, r Role, oldLead uint64, st *replica.Status, now time.Time) {
	m := n.cfg.Metrics
	if m == nil {
		return
	}
	if st.Lead != 0 && st.Lead != oldLead {
		m.LeaderChanges.Inc()
	}
	if n.Standalone() {
		return
	}
	c := &n.elect
	switch {
	case r == Looking && old != Looking:
		c.lookingSince, c.syncSince = now, time.Time{}
		if c.unavailableSince.IsZero() {
			c.unavailableSince = now
		}
		m.LookingCount.Inc()
	case r != Looking && oldLead != 0 && st.Lead != oldLead:
		// The leader changed without this member noticing a gap (raft
		// moved it straight to the new term's leader): an election ran,
		// and this member spent no time looking.
		c.lookingSince, c.syncSince = now, time.Time{}
		if c.unavailableSince.IsZero() {
			c.unavailableSince = now
		}
		m.LookingCount.Inc()
	}
	if r == Looking || c.lookingSince.IsZero() {
		return
	}
	m.ElectionTime.ObserveDuration(now.Sub(c.lookingSince))
	c.lookingSince = time.Time{}
	if r == Leading {
		if !c.unavailableSince.IsZero() {
			d := now.Sub(c.unavailableSince)
			m.UnavailableTime.ObserveDuration(d)
			m.LeaderUnavailableTime.ObserveDuration(d)
			c.unavailableSince = time.Time{}
		}
		return
	}
	c.syncSince, c.syncTerm, c.observer = now, st.Term, r == Observing
}

// synced runs after each applied entry: a follower is in sync with its
// leader once it applied an entry of the leader's term (every raft leader
// commits one when it starts), so it holds everything committed before.
func (c *electionClock) synced(m *metrics.Set, term uint64, clock func() time.Time) {
	if c.syncSince.IsZero() || term < c.syncTerm {
		return
	}
	if m != nil {
		now := clock()
		if c.observer {
			m.ObserverSyncTime.ObserveDuration(now.Sub(c.syncSince))
		} else {
			m.FollowerSyncTime.ObserveDuration(now.Sub(c.syncSince))
		}
		if !c.unavailableSince.IsZero() {
			m.UnavailableTime.ObserveDuration(now.Sub(c.unavailableSince))
		}
	}
	c.syncSince, c.unavailableSince = time.Time{}, time.Time{}
}

// peerSync counts, on the leader, a catch-up of a member that was not in
// step (replica.Config.PeerSync): ZooKeeper's snap_count when a snapshot
// is sent to it, diff_count when log entries sufficed. Raft's loop
// goroutine.
func (n *Node) peerSync(peer uint64, bySnapshot bool) {
	m := n.cfg.Metrics
	if m == nil {
		return
	}
	if bySnapshot {
		m.SnapCount.Inc()
	} else {
		m.DiffCount.Inc()
	}
}

// internalOp reports entries Warden adds to the log that ZooKeeper does
// not propose: touches (session liveness, OpPing), rejoins and attaches.
func internalOp(op wire.OpCode) bool {
	return op == wire.OpPing || op == fsm.OpRejoin || op == fsm.OpAttach
}

// observeCommitted records, for the entries of one committed raft entry,
// ZooKeeper's commit_count and quorum_ack_latency on the leader, and
// proposal_latency elsewhere: the time since the entry was proposed (its
// proposer's wall clock; a negative difference from clock skew is
// dropped, as in ZooKeeper).
func (n *Node) observeCommitted(entries []fsm.Entry) {
	m := n.cfg.Metrics
	if m == nil {
		return
	}
	now := time.Now().UnixMilli()
	role := n.Role()
	for i := range entries {
		e := &entries[i]
		if internalOp(e.Op) {
			continue
		}
		switch role {
		case Leading:
			m.CommitCount.Inc()
			if ms := now - e.Time; e.Time > 0 && ms >= 0 {
				m.QuorumAckLatency.Observe(ms)
			}
		case Following, Observing:
			if ms := now - e.Time; e.Time > 0 && ms >= 0 {
				m.ProposalLatency.Observe(ms)
			}
		}
	}
}
