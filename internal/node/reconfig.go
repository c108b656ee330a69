package node

import (
	"slices"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/wire"
)

// reconfigRetry is how long the leader waits for the effect of what it
// proposed for a pending reconfig (a conf change, a commit or an abort
// entry, a leadership transfer) before proposing it again: raft may have
// refused or lost it.
const reconfigRetry = 2 * time.Second

// reconfigDriver is the leader's progress on the pending reconfig; apply
// goroutine only.
type reconfigDriver struct {
	origin, reqID int64     // the pending reconfig seen
	since         time.Time // when this leader first saw it
	at            time.Time // when it last acted on it (zero: not yet)
}

// applyConfEntry applies a committed raft conf change (raft itself
// applied it already): its context, when there is one, is the
// OpReconfigCommit entry that changes the state machine's membership with
// it. It reports false when the node must stop.
func (n *Node) applyConfEntry(re *raftpb.Entry) bool {
	var cc raftpb.ConfChangeI
	if re.GetType() == raftpb.EntryType_EntryConfChange {
		cc = &raftpb.ConfChange{}
	} else {
		cc = &raftpb.ConfChangeV2{}
	}
	if err := proto.Unmarshal(re.GetData(), cc.(proto.Message)); err != nil {
		n.fatal(err)
		return false
	}
	v2 := cc.AsV2()
	if len(v2.GetContext()) > 0 {
		if !n.applyData(re.GetIndex(), re.GetTerm(), v2.GetContext(), true) {
			return false
		}
	}
	_, entering := v2.EnterJoint()
	n.mu.Lock()
	n.fsm.SetJoint(entering)
	if cs := n.raft.TakeConfState(re.GetIndex()); cs != nil {
		// A member added after the newest snapshot could not install
		// it (raft refuses a snapshot whose membership lacks it), so
		// one is taken now when the log's start is gone and the member
		// must catch up by snapshot.
		if addsMember(n.confState, cs) && n.raft.LogCompacted() {
			n.snap.force = true
		}
		n.confState = cs
	}
	n.mu.Unlock()
	if st := n.raft.Status(); n.Role() != n.roleOf(&st) {
		n.roleChanged(&st)
	}
	if h := n.cfg.Hooks.RaftMembersChanged; h != nil {
		h()
	}
	return true
}

// driveReconfig runs the leader's part of a pending reconfig (see
// fsm/membership.go), on the apply goroutine after each applied Update:
// it aborts it when no quorum of the new membership is in step, and
// otherwise proposes the raft conf change that commits it. A change that
// removes or demotes the leader is committed by it too, as in ZooKeeper,
// so its client gets the answer; then leadership moves to a member that
// stays (replica's handOver). What it
// proposes is watched for: while the reconfig stays pending it acts again
// every reconfigRetry.
func (n *Node) driveReconfig() {
	if n.Role() != Leading {
		n.reconf = reconfigDriver{}
		return
	}
	now := time.Now()
	if n.fsm.Membership() == nil && len(n.cfg.InitialMembership) > 0 {
		n.proposeInitialMembership(now)
	}
	p := n.fsm.PendingReconfig()
	if p == nil {
		n.reconf = reconfigDriver{}
		n.drainRemoved(now)
		return
	}
	if n.reconf.origin != p.Origin || n.reconf.reqID != p.ReqID {
		n.reconf = reconfigDriver{origin: p.Origin, reqID: p.ReqID, since: now}
	}
	if !n.reconf.at.IsZero() && now.Sub(n.reconf.at) < reconfigRetry {
		return
	}
	cs := n.raft.ConfState()
	if n.applied.Load() < n.raft.LeadIndex() || len(cs.GetVotersOutgoing()) > 0 {
		return // raft would refuse a conf change now
	}

	self := n.cfg.ID.RaftID()
	voters, learners := map[uint64]bool{}, map[uint64]bool{}
	for _, s := range p.Servers {
		id := MemberID(s.ID).RaftID()
		if s.Observer {
			learners[id] = true
		} else {
			voters[id] = true
		}
	}
	progress := n.raft.Progress()
	inStep := map[uint64]bool{self: true}
	for _, pr := range progress {
		if pr.Replicating {
			inStep[pr.ID] = true
		}
	}
	synced := 0
	for id := range voters {
		if inStep[id] {
			synced++
		}
	}
	if synced <= len(voters)/2 {
		// A new leader's followers, or a follower that just answered,
		// may not be in step yet: an election timeout's grace.
		if now.Sub(n.reconf.since) < time.Duration(n.cfg.ElectionTicks)*n.cfg.Tick {
			return
		}
		n.reconf.at = now
		n.log.Warn("reconfig refused: no quorum of the new membership is connected and in step with the leader",
			"voters", len(voters), "in_step", synced)
		n.proposeReconfigEntry(p, fsm.OpReconfigAbort, &fsm.AbortRecord{Code: wire.ErrNewConfigNoQuorum})
		return
	}
	n.reconf.at = now
	var changes []*raftpb.ConfChangeSingle
	change := func(t raftpb.ConfChangeType, id uint64) {
		changes = append(changes, &raftpb.ConfChangeSingle{Type: t.Enum(), NodeId: proto.Uint64(id)})
	}
	isVoter, isLearner := map[uint64]bool{}, map[uint64]bool{}
	for _, v := range cs.GetVoters() {
		isVoter[v] = true
	}
	for _, l := range cs.GetLearners() {
		isLearner[l] = true
	}
	for _, s := range p.Servers {
		id := MemberID(s.ID).RaftID()
		switch {
		case voters[id] && !isVoter[id]:
			change(raftpb.ConfChangeType_ConfChangeAddNode, id)
		case learners[id] && !isLearner[id]:
			change(raftpb.ConfChangeType_ConfChangeAddLearnerNode, id)
		}
	}
	// A member the change removes stays a raft learner for DrainTime (see
	// drainRemoved): it goes on applying the log and answering the
	// clients still connected to it, as ZooKeeper's removed followers go
	// on serving, but it takes no new client and does not vote.
	for _, id := range cs.GetVoters() {
		if !voters[id] && !learners[id] {
			change(raftpb.ConfChangeType_ConfChangeAddLearnerNode, id)
		}
	}
	commit := n.commitEntry(p)
	if len(changes) == 0 {
		// Only addresses change: an ordinary entry commits it.
		n.raft.ProposeRaw(fsm.EncodeBatch([][]byte{wire.Marshal(commit)}))
		return
	}
	n.log.Info("proposing a membership change", "changes", len(changes))
	n.raft.ProposeConfChange(&raftpb.ConfChangeV2{
		Transition: raftpb.ConfChangeTransition_ConfChangeTransitionAuto.Enum(),
		Changes:    changes,
		Context:    wire.Marshal(commit),
	})
}

// proposeInitialMembership puts the server lines into the log, once the
// leader has applied its log (fsm.OpInitialMembership); again every
// reconfigRetry while the log holds no membership.
func (n *Node) proposeInitialMembership(now time.Time) {
	if n.applied.Load() < n.raft.LeadIndex() || now.Sub(n.initialAt) < reconfigRetry {
		return
	}
	n.initialAt = now
	e := &fsm.Entry{Op: fsm.OpInitialMembership, Origin: int64(n.cfg.ID), Time: now.UnixMilli(),
		Body: wire.Marshal(&fsm.MembershipRecord{Servers: n.cfg.InitialMembership})}
	n.raft.ProposeRaw(fsm.EncodeBatch([][]byte{wire.Marshal(e)}))
}

// drainRemoved runs on the leader with driveReconfig: a raft learner that
// the state machine's membership does not name (a member a reconfig
// removed, draining) is removed from raft once it has drained for
// DrainTime, one at a time, while no reconfig is pending.
func (n *Node) drainRemoved(now time.Time) {
	m := n.fsm.Membership()
	if m == nil || n.fsm.PendingReconfig() != nil {
		clear(n.draining)
		return
	}
	named := map[uint64]bool{}
	for _, s := range m.Servers {
		named[MemberID(s.ID).RaftID()] = true
	}
	cs := n.raft.ConfState()
	if n.draining == nil {
		n.draining = map[uint64]time.Time{}
	}
	var due uint64
	for _, id := range cs.GetLearners() {
		if named[id] {
			continue
		}
		since, ok := n.draining[id]
		if !ok {
			n.draining[id] = now
			continue
		}
		if now.Sub(since) >= n.cfg.DrainTime && due == 0 {
			due = id
		}
	}
	for id := range n.draining {
		if !slices.Contains(cs.GetLearners(), id) {
			delete(n.draining, id)
		}
	}
	if due == 0 || now.Sub(n.drainAt) < reconfigRetry || n.applied.Load() < n.raft.LeadIndex() || len(cs.GetVotersOutgoing()) > 0 {
		return
	}
	n.drainAt = now
	n.log.Info("a removed member has drained: taking it out of raft", "member", MemberOf(due))
	n.raft.ProposeConfChange(&raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{
		{Type: raftpb.ConfChangeType_ConfChangeRemoveNode.Enum(), NodeId: proto.Uint64(due)},
	}})
}

// commitEntry is the OpReconfigCommit entry of p.
func (n *Node) commitEntry(p *fsm.PendingReconfig) *fsm.Entry {
	return &fsm.Entry{Op: fsm.OpReconfigCommit, Origin: p.Origin, ReqID: p.ReqID, Session: p.Session,
		Time: time.Now().UnixMilli(), Body: wire.Marshal(&fsm.MembershipRecord{Servers: p.Servers})}
}

// proposeReconfigEntry proposes an entry about p answering its client.
func (n *Node) proposeReconfigEntry(p *fsm.PendingReconfig, op wire.OpCode, body wire.Record) {
	e := &fsm.Entry{Op: op, Origin: p.Origin, ReqID: p.ReqID, Session: p.Session, Time: time.Now().UnixMilli(), Body: wire.Marshal(body)}
	n.raft.ProposeRaw(fsm.EncodeBatch([][]byte{wire.Marshal(e)}))
}

// SetPeers gives the peer transport the quorum addresses of the other
// members (by raft id) after a membership change.
func (n *Node) SetPeers(peers map[uint64]string) {
	if n.tr == nil {
		return
	}
	if err := n.tr.SetPeers(peers); err != nil {
		n.log.Error("the peer transport refused the new membership's addresses", "err", err)
	}
}

// RaftMembers returns the membership raft counts: its voters (the
// incoming ones while a change is joint) and its learners (observers).
func (n *Node) RaftMembers() (voters, learners []MemberID) {
	var cs *raftpb.ConfState
	if n.raft != nil {
		cs = n.raft.ConfState()
	} else {
		cs = n.confState // before Run: the recovered one
	}
	for _, v := range cs.GetVoters() {
		voters = append(voters, MemberOf(v))
	}
	for _, l := range cs.GetLearners() {
		learners = append(learners, MemberOf(l))
	}
	return voters, learners
}

// addsMember reports whether after has a member (voter or learner) that
// before has not.
func addsMember(before, after *raftpb.ConfState) bool {
	had := map[uint64]bool{}
	for _, ids := range [][]uint64{before.GetVoters(), before.GetLearners(), before.GetVotersOutgoing(), before.GetLearnersNext()} {
		for _, id := range ids {
			had[id] = true
		}
	}
	for _, ids := range [][]uint64{after.GetVoters(), after.GetLearners(), after.GetLearnersNext()} {
		for _, id := range ids {
			if !had[id] {
				return true
			}
		}
	}
	return false
}
