package replica

import (
	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// peerSync is what the leader's loop knows of one member's replication
// state, to report how the member is caught up (Config.PeerSync).
type peerSync struct {
	// state is raft's Progress state as last seen.
	state tracker.StateType
	// snapshot is set once a snapshot was sent to the member since it was
	// last in step (StateReplicate).
	snapshot bool
}

// syncTracker follows, on the leader, the members' Progress states: raft
// moves a member that is not in step to StateProbe (the leader was just
// elected, or the member rejected an append, or messages to it were
// lost), then to StateSnapshot when the entries it lacks are compacted
// away (it sends a snapshot), and to StateReplicate once the member
// acknowledges the entries (or the snapshot) it was sent. Each move into
// StateSnapshot is a catch-up by snapshot; a move into StateReplicate
// with no snapshot sent on the way is a catch-up by log entries. Loop
// goroutine only.
//
// Raft changes a Progress state only while stepping a message, taking a
// report or campaigning, so the tracker reads a member's state after each
// event that can change it: an append response from the member (only
// when it may matter: a rejection, or a member not in step), a snapshot
// or unreachable report for it, a snapshot in a Ready's messages to it,
// and the start of a leadership (every member in StateProbe).
type syncTracker struct {
	// peers is nil while the member does not lead.
	peers map[uint64]*peerSync
	// term is the term of the leadership tracked.
	term uint64
}

// lead starts tracking when the member starts leading in a new term
// (raft's becomeLeader put every other member in StateProbe), and stops
// when it no longer leads.
func (t *syncTracker) lead(rn *raft.RawNode, st *raft.BasicStatus) {
	switch {
	case st.RaftState != raft.StateLeader:
		t.peers = nil
	case t.peers == nil || t.term != st.GetTerm():
		t.leading(rn, st.ID, st.GetTerm())
	}
}

// leading starts tracking a leadership of term.
func (t *syncTracker) leading(rn *raft.RawNode, self, term uint64) {
	t.peers = make(map[uint64]*peerSync)
	t.term = term
	rn.WithProgress(func(id uint64, _ raft.ProgressType, _ tracker.Progress) {
		if id != self {
			t.peers[id] = &peerSync{state: tracker.StateProbe}
		}
	})
}

// sent marks the members a Ready's messages send a snapshot to.
func (t *syncTracker) sent(rn *raft.RawNode, msgs []*raftpb.Message, caughtUp func(uint64, bool)) {
	if t.peers == nil {
		return
	}
	for _, m := range msgs {
		if m.GetType() == raftpb.MessageType_MsgSnap {
			t.observe(rn, m.GetTo(), caughtUp)
		}
	}
}

// observe reads peer's Progress state after raft may have changed it and
// calls caughtUp(peer, true) when raft starts sending the member a
// snapshot, caughtUp(peer, false) when the member just came back in step by log
// entries alone.
func (t *syncTracker) observe(rn *raft.RawNode, peer uint64, caughtUp func(uint64, bool)) {
	if t.peers == nil {
		return
	}
	p := t.peers[peer]
	if p == nil {
		// Added by a membership change: raft starts it in StateProbe.
		p = &peerSync{state: tracker.StateProbe}
		t.peers[peer] = p
	}
	var state tracker.StateType
	found := false
	rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
		if id == peer {
			state, found = pr.State, true
		}
	})
	if !found {
		delete(t.peers, peer) // removed from the membership
		return
	}
	switch {
	case state == p.state:
	case state == tracker.StateSnapshot:
		p.snapshot = true
		if caughtUp != nil {
			caughtUp(peer, true)
		}
	case state == tracker.StateReplicate:
		if !p.snapshot && caughtUp != nil {
			caughtUp(peer, false)
		}
		p.snapshot = false
	}
	p.state = state
}
