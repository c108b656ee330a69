package replica

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
	"google.golang.org/protobuf/proto"
)

// ErrStopped is what proposals meet after Stop.
var ErrStopped = errors.New("replica: stopped")

// WAL is the durable log the loop writes before anything is sent as
// acknowledged or handed over as committed.
type WAL interface {
	// Save appends ents and then hs (when not empty). With mustSync they
	// are durable when Save returns (one sync per call: group commit);
	// without it only the commit index moved, which raft can relearn.
	Save(hs *raftpb.HardState, ents []*raftpb.Entry, mustSync bool) error
	// SaveSnapshot marks a durable snapshot at meta; durable on return.
	SaveSnapshot(meta *raftpb.SnapshotMetadata) error
	// ReleaseTo lets the WAL drop segments holding only entries below
	// index.
	ReleaseTo(index uint64) error
}

// Sender sends raft messages to peers without blocking
// (transport.Transport.Send).
type Sender interface {
	Send(msgs []*raftpb.Message)
}

// Proposal is one raft entry's worth of data offered to the log. Dropped
// is called (from the loop's goroutine) when raft refuses it — there is no
// leader, or leadership is moving — so its waiters can be answered.
type Proposal struct {
	Data    []byte
	Dropped func(err error)
	// Deferred, when set, is called instead of Dropped when raft refused
	// the proposal because leadership is moving to another member: it is
	// not in the log, and the host may offer it again (to the next
	// leader). Every later proposal of the same call is refused too, so
	// their order is kept.
	Deferred func()
}

// Status is the member's role as raft sees it.
type Status struct {
	// Lead is the raft id of the leader this member follows (itself when
	// leading), 0 when it knows none.
	Lead uint64
	// State is follower, candidate, pre-candidate or leader.
	State raft.StateType
	// Term is the current raft term.
	Term uint64
	// Moving is set while the member knows no leader because leadership
	// is being handed over (a vote for a leadership transfer was seen):
	// the next leader is a round trip away.
	Moving bool
}

// Update is work for the state machine from one Ready, handed over in log
// order through Config.Updates: its entries are committed and durable on
// this member (a Ready's entries written by an earlier one come in an
// Update of their own, before it is written; see durableCommitted).
type Update struct {
	// Snapshot, when not nil, is a snapshot received from the leader and
	// now durable; the state machine must be replaced by it before any of
	// Entries is applied.
	Snapshot *raftpb.SnapshotMetadata
	// Entries are newly committed entries of every type, in index order.
	// Conf changes are already applied to raft.
	Entries []*raftpb.Entry
	// Status is set when the leader or this member's role changed.
	Status *Status
	// Bytes is the data size of Entries. The host calls Consumed(Bytes)
	// once it has applied them (see Config.MaxApplyBytes).
	Bytes int64
}

// Config configures the loop of one member.
type Config struct {
	// ID is this member's raft id (never 0).
	ID uint64
	// stagger replaces fastStagger when not zero (tests).
	stagger time.Duration
	// Storage holds the recovered log: snapshot, hard state and entries.
	// The loop appends to it; others may read it (it is locked).
	Storage *raft.MemoryStorage
	// Applied is the index of the last entry already in the state machine.
	Applied uint64
	// WAL persists hard state, entries and snapshot markers.
	WAL WAL
	// Transport sends messages to peers; nil for a member alone.
	Transport Sender
	// Updates receives committed work in order. It is bounded: when the
	// state machine falls behind, the loop waits (backpressure).
	Updates chan<- Update
	// Proposals returns what the host has queued for the log since the
	// last call, already batched (many client writes per entry). It is
	// called on the loop's goroutine after Wake.
	Proposals func() []Proposal
	// Tick is the period of raft's logical clock. Default 100ms.
	Tick time.Duration
	// ElectionTicks is raft's election timeout in ticks (randomised to
	// [n, 2n) by raft). Default 10.
	ElectionTicks int
	// HeartbeatTicks is how often a leader heartbeats, in ticks. Default 1.
	HeartbeatTicks int
	// LostEntries is called, at most once a second, when the leader
	// believes this member holds entries it does not have: its data was
	// wiped. The host asks the leader to reset the member (ResetMember).
	LostEntries func()
	// LeaderUnreachable is called on the loop's goroutine when messages
	// to this follower's leader were dropped: forwarded proposals may be
	// lost.
	LeaderUnreachable func()
	// PeerSync is called on the loop's goroutine, on the leader, for each
	// catch-up of a member that is not in step: with bySnapshot when raft
	// starts sending it a snapshot, because the entries it lacks were
	// compacted away (each attempt counts); without, when the member is
	// back in step (raft's StateReplicate) by log entries alone, no
	// snapshot sent since it left it. Every member catches up so once per
	// leadership, then again after each restart, partition or lost
	// message. Optional.
	PeerSync func(peer uint64, bySnapshot bool)
	// Campaign makes the member campaign at once: a member alone is
	// leader after one round.
	Campaign bool
	// FastStart makes the member campaign on every tick from the start
	// until it knows a leader (for up to two election timeouts), rather
	// than after a randomised election timeout: given to the voter with
	// the highest id, it makes that member the first leader of an
	// ensemble whose members' logs are equal, as ZooKeeper's election
	// breaks ties by the highest server id.
	FastStart bool
	// Fatal is called when the log can no longer be trusted (a failed
	// fsync); it must not return. Default: log and exit(2).
	Fatal func(error)
	// Logger receives the loop's logs.
	Logger *slog.Logger

	// MaxApplyBytes bounds the entry bytes handed over in Updates and not
	// yet reported Consumed: past it, the loop waits for the host
	// (backpressure, as a full Updates channel). An Update alone may
	// exceed it. Default DefaultMaxApplyBytes.
	MaxApplyBytes int64
	// MaxUncommittedBytes bounds, on the leader, the entry bytes proposed
	// and not yet committed (raft's MaxUncommittedEntriesSize): raft drops
	// proposals past it, and their Dropped is called. 0 = no limit.
	MaxUncommittedBytes uint64
	// MaxLogBytes is the size the host keeps the in-memory log under (see
	// LogBytes). The leader keeps the entries a member lacks only while
	// they are under MaxLogBytes/2 (compactLog). 0 = no bound.
	MaxLogBytes uint64
	// MemTailBytes is how many bytes of applied entries the in-memory log
	// keeps (compactLog), at most MaxLogBytes/4: a member at most that far
	// behind is caught up by entries rather than a snapshot. Default
	// DefaultMemTailBytes.
	MemTailBytes uint64
	// MaxLagEntries bounds, when not 0, how far behind the applied index
	// the in-memory log reaches, in entries: a member further behind is
	// caught up by snapshot, as ZooKeeper sends a follower a SNAP rather
	// than a DIFF past its committed log (the host passes snapCount).
	MaxLagEntries uint64
	// SnapshotWanted is called on the loop's goroutine when a member must
	// be sent a snapshot and the newest one is older than the in-memory
	// log's start: the host takes one at its applied index and reports it
	// with SnapshotSaved. It must not block. Optional (raft then waits for
	// the host's next snapshot).
	SnapshotWanted func()
}

// DefaultMaxApplyBytes is Config.MaxApplyBytes's default.
const DefaultMaxApplyBytes = 64 << 20

// maxInflightBytes bounds the bytes of log entries the leader has sent a
// follower and not yet had acknowledged (raft's MaxInflightBytes): the
// per-peer transport queues and a follower's receive queue hold at most
// that much of entries from one leader.
const maxInflightBytes = 16 << 20

// diskFullRetry is how long the loop waits before retrying a write that
// failed because the disk is full.
var diskFullRetry = time.Second

// recvQueue bounds the messages received from peers and not yet stepped;
// more are dropped (raft retransmits).
const recvQueue = 4096

// Node is a running raft member's loop.
type Node struct {
	cfg Config
	rn  *raft.RawNode
	log *slog.Logger

	recvc   chan *raftpb.Message
	reportc chan func(rn *raft.RawNode)
	savedc  chan *raftpb.SnapshotMetadata
	// releasec hands the releaser the index behind which the WAL may
	// drop segments; it holds at most the newest one.
	releasec chan uint64
	wake     chan struct{}
	stopc    chan struct{}
	done     chan struct{}
	stop     sync.Once

	// paused is set while the WAL cannot be written because the disk is
	// full.
	paused atomic.Bool
	// status mirrors the last Status handed over.
	status atomic.Pointer[Status]
	// commit mirrors the commit index of the last hard state persisted,
	// raised to the last entry handed over before that state's write.
	commit atomic.Uint64
	// progress mirrors the leader's view of its followers (nil elsewhere),
	// refreshed every tick.
	progress atomic.Pointer[[]PeerProgress]
	// logBytes mirrors logSize.total: the data bytes of the entries in
	// the in-memory log.
	logBytes atomic.Uint64
	// leadIndex is the last log index when this member last became
	// leader (its first entry of the term included): raft accepts no
	// conf change from it before everything up to there is applied.
	leadIndex atomic.Uint64
	// queued is the entry bytes of the Updates handed over and not yet
	// Consumed; consumedc is signalled by Consumed.
	queued    atomic.Int64
	consumedc chan struct{}

	mu sync.Mutex
	// confState is the membership as of the last applied conf change (or
	// the recovered snapshot).
	confState *raftpb.ConfState
	// confAt holds the membership after each conf change raft applied and
	// the host has not taken yet (TakeConfState), by log index.
	confAt map[uint64]*raftpb.ConfState

	// Owned by the loop goroutine.
	moving    bool                 // a leadership transfer's vote was seen since the last leader
	farewells map[uint64]*farewell // by removed member (see tellRemoved)
	lastSnap  uint64               // index of the newest durable snapshot marked in the WAL
	lostAt    time.Time            // when LostEntries was last called
	// fastUntil bounds a fast election started by PeerGone or FastStart;
	// zero when none runs.
	fastUntil time.Time
	// fastFrom is when this member starts asking in a fast election:
	// at once on the voter with the highest id (the gone leader aside),
	// fastStagger later for each voter above it.
	fastFrom time.Time
	// fastc fires the next quick retry of a fast election PeerGone
	// started; nil when none is due.
	fastc <-chan time.Time
	// syncs follows the members' Progress states on the leader.
	syncs syncTracker
	// logSize follows the bytes of the in-memory log.
	logSize logSize
	// store is the storage raft reads (cfg.Storage and the newest
	// snapshot).
	store *logStore
	// compactAt is logSize.total at which compactLog looks again.
	compactAt uint64
	// snapWanted holds compaction while the host is asked for a snapshot.
	snapWanted bool

	// hostApplied is the host's applied index (Consumed).
	hostApplied atomic.Uint64
}

// BootstrapIndex is the index of a fresh log's bootstrap snapshot: it
// stands for no entry, and a log's first entry comes right after it.
const BootstrapIndex = 1

// BootstrapSnapshot is the initial state of a fresh log: an empty state
// machine at BootstrapIndex, term 1, with the given voters and learners.
// Every member of a new ensemble starts from the same one.
func BootstrapSnapshot(voters, learners []uint64) *raftpb.SnapshotMetadata {
	return &raftpb.SnapshotMetadata{
		Index:     proto.Uint64(BootstrapIndex),
		Term:      proto.Uint64(1),
		ConfState: &raftpb.ConfState{Voters: voters, Learners: learners},
	}
}

// StartNode starts the loop.
func StartNode(cfg Config) (*Node, error) {
	if cfg.ID == 0 || cfg.Storage == nil || cfg.WAL == nil || cfg.Updates == nil || cfg.Proposals == nil {
		return nil, errors.New("replica: Config needs ID, Storage, WAL, Updates and Proposals")
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	if cfg.ElectionTicks <= 0 {
		cfg.ElectionTicks = 10
	}
	if cfg.HeartbeatTicks <= 0 {
		cfg.HeartbeatTicks = 1
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxApplyBytes <= 0 {
		cfg.MaxApplyBytes = DefaultMaxApplyBytes
	}
	if cfg.MemTailBytes == 0 {
		cfg.MemTailBytes = DefaultMemTailBytes
	}
	if cfg.Fatal == nil {
		log := cfg.Logger
		cfg.Fatal = func(err error) {
			log.Error("the log can no longer be trusted; stopping the process (restart recovers from the last durable state)", "err", err)
			exit(2)
		}
	}
	snap, err := cfg.Storage.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("replica: read recovered snapshot: %w", err)
	}
	store := &logStore{MemoryStorage: cfg.Storage}
	store.snap.Store(snap.GetMetadata())
	rn, err := raft.NewRawNode(&raft.Config{
		ID:                        cfg.ID,
		ElectionTick:              cfg.ElectionTicks,
		HeartbeatTick:             cfg.HeartbeatTicks,
		Storage:                   store,
		Applied:                   cfg.Applied,
		MaxSizePerMsg:             1 << 20,
		MaxInflightMsgs:           256,
		MaxInflightBytes:          maxInflightBytes,
		MaxUncommittedEntriesSize: cfg.MaxUncommittedBytes,
		CheckQuorum:               true,
		PreVote:                   true,
		Logger:                    raftLogger{cfg.Logger},
	})
	if err != nil {
		return nil, fmt.Errorf("replica: start raft: %w", err)
	}
	n := &Node{
		cfg:       cfg,
		rn:        rn,
		log:       cfg.Logger,
		recvc:     make(chan *raftpb.Message, recvQueue),
		reportc:   make(chan func(*raft.RawNode), 256),
		savedc:    make(chan *raftpb.SnapshotMetadata, 4),
		releasec:  make(chan uint64, 1),
		wake:      make(chan struct{}, 1),
		stopc:     make(chan struct{}),
		done:      make(chan struct{}),
		consumedc: make(chan struct{}, 1),
		confState: snap.GetMetadata().GetConfState(),
		lastSnap:  snap.GetMetadata().GetIndex(),
		store:     store,
	}
	store.stale = n.snapshotStale
	n.hostApplied.Store(cfg.Applied)
	n.logSize.reset(snap.GetMetadata().GetIndex())
	if first, last := n.firstLast(); last >= first {
		ents, err := cfg.Storage.Entries(first, last+1, math.MaxUint64)
		if err != nil {
			return nil, fmt.Errorf("replica: read recovered log: %w", err)
		}
		n.logSize.reset(first - 1)
		n.logSize.append(ents)
	}
	n.logBytes.Store(n.logSize.total)
	n.status.Store(&Status{})
	if hs, _, err := cfg.Storage.InitialState(); err == nil {
		n.commit.Store(hs.GetCommit())
	}
	if cfg.Campaign {
		if err := rn.Campaign(); err != nil {
			return nil, fmt.Errorf("replica: campaign: %w", err)
		}
	}
	if cfg.FastStart {
		n.fastUntil = time.Now().Add(2 * time.Duration(cfg.ElectionTicks) * cfg.Tick)
	}
	go n.run()
	go n.releaser()
	return n, nil
}

// Wake tells the loop that Proposals has something. It never blocks.
func (n *Node) Wake() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Deliver queues a message received from a peer (transport.Handler). A
// full queue drops it; raft retransmits.
func (n *Node) Deliver(m *raftpb.Message) {
	select {
	case n.recvc <- m:
	default:
	}
}

// Unreachable reports that messages to peer are being dropped
// (transport.Handler). When peer is this follower's leader, proposals it
// forwarded may be among them, and raft never resends those: the host is
// told (LeaderUnreachable) so their clients are answered now.
func (n *Node) Unreachable(peer uint64) {
	n.report(func(rn *raft.RawNode) {
		rn.ReportUnreachable(peer)
		n.syncs.observe(rn, peer, n.cfg.PeerSync)
		if st := rn.BasicStatus(); st.Lead == peer && st.RaftState != raft.StateLeader && n.cfg.LeaderUnreachable != nil {
			n.cfg.LeaderUnreachable()
		}
	})
}

// SnapshotSent reports how sending a snapshot to peer ended
// (transport.Handler).
func (n *Node) SnapshotSent(peer uint64, ok bool) {
	st := raft.SnapshotFinish
	if !ok {
		st = raft.SnapshotFailure
	}
	n.report(func(rn *raft.RawNode) {
		rn.ReportSnapshot(peer, st)
		n.syncs.observe(rn, peer, n.cfg.PeerSync)
	})
}

// Fast elections: a voter that has not won one asks again every
// fastRetryMax (or tick, if shorter), and each voter with a higher id than
// this one (the gone leader aside) delays its first asking by fastStagger.
const (
	fastRetryMax = 10 * time.Millisecond
	fastStagger  = 5 * fastRetryMax
)

// fastRetry is how often a fast election started by PeerGone asks again.
func (n *Node) fastRetry() time.Duration { return min(fastRetryMax, n.cfg.Tick) }

// PeerGone reacts to a peer whose process is gone (transport.Handler):
// when it was this member's leader, the member forgets it, so it may grant
// votes at once, and the voter with the highest raft id among the others
// campaigns at once (ZooKeeper's tie-break). A dead leader is so replaced in about one round trip
// instead of an election timeout. The other followers may not have
// noticed yet (a follower that still has a leader ignores pre-votes), so
// the campaign is asked again every fastRetry; and as that voter may be
// unable to win (its log behind another's), each lower voter campaigns too,
// fastStagger later per voter above it, while no leader is known. If the
// leader is in fact alive (a restart), it wins the next heartbeat back or a
// new election runs: elections are always safe.
func (n *Node) PeerGone(peer uint64) {
	n.report(func(rn *raft.RawNode) {
		st := rn.BasicStatus()
		if st.Lead != peer || st.RaftState != raft.StateFollower {
			return
		}
		n.log.Info("the leader's process is gone; electing another without waiting for the election timeout", "leader_raft_id", peer)
		if err := rn.ForgetLeader(); err != nil {
			return
		}
		voter, above := false, 0
		for _, v := range n.ConfState().GetVoters() {
			switch {
			case v == n.cfg.ID:
				voter = true
			case v != peer && v > n.cfg.ID:
				above++
			}
		}
		if !voter {
			return
		}
		now := time.Now()
		stagger := fastStagger
		if n.cfg.stagger != 0 {
			stagger = n.cfg.stagger
		}
		n.fastFrom = now.Add(time.Duration(above) * stagger)
		n.fastUntil = n.fastFrom.Add(time.Duration(n.cfg.ElectionTicks) * n.cfg.Tick)
		n.fastc = time.After(n.fastRetry())
		if above == 0 {
			rn.Campaign()
		}
	})
}

// fastElect campaigns (again), on a tick or a quick retry, while a fast
// election has not found a leader yet and this member's turn has come.
func (n *Node) fastElect() {
	if n.fastUntil.IsZero() {
		return
	}
	st := n.rn.BasicStatus()
	now := time.Now()
	switch {
	case st.Lead != 0 || now.After(n.fastUntil):
		n.fastUntil, n.fastFrom = time.Time{}, time.Time{}
	case now.Before(n.fastFrom):
	case st.RaftState == raft.StateFollower || st.RaftState == raft.StatePreCandidate:
		n.rn.Campaign()
	}
}

// campaignIfAhead campaigns at once, instead of at its turn, when a
// fast election is waiting for this member's turn and a candidate asks
// for a (pre-)vote with a log behind this member's: that candidate
// cannot win this member's vote, and this member may be the one that
// can win (otherwise the next up-to-date voter does the same).
// Campaigning is always safe; this only saves the stagger.
func (n *Node) campaignIfAhead(m *raftpb.Message) {
	if n.fastUntil.IsZero() || !time.Now().Before(n.fastFrom) {
		return
	}
	if st := n.rn.BasicStatus(); st.Lead != 0 || st.RaftState != raft.StateFollower {
		return
	}
	last, err := n.cfg.Storage.LastIndex()
	if err != nil {
		return
	}
	lastTerm, err := n.cfg.Storage.Term(last)
	if err != nil {
		return
	}
	if m.GetLogTerm() > lastTerm || (m.GetLogTerm() == lastTerm && m.GetIndex() >= last) {
		return // the candidate is as up to date as this member
	}
	n.log.Info("a candidate's log is behind this member's; campaigning now instead of at this member's turn",
		"candidate", m.GetFrom(), "candidate_last_index", m.GetIndex(), "last_index", last)
	n.fastFrom = time.Now()
	n.rn.Campaign()
}

func (n *Node) report(f func(*raft.RawNode)) {
	select {
	case n.reportc <- f:
	default: // raft recovers from a lost report by probing
	}
}

// SnapshotSaved tells the loop that a local snapshot at meta is durable:
// it is marked in the WAL, and the log is compacted behind the previous
// one. It may block briefly while the loop is busy.
func (n *Node) SnapshotSaved(meta *raftpb.SnapshotMetadata) {
	select {
	case n.savedc <- meta:
	case <-n.done:
	}
}

// ResetMember makes raft forget what the leader believed of member id's
// log, which the member has lost (a wiped data directory): raft cannot
// lower a follower's match index, but a new leader starts every
// follower's from zero. So the leader hands leadership to the most
// up-to-date other voter; the new leader then catches the member up by
// entries or snapshot. It reports false when no other voter is up to date
// (the reset waits for one). Only the leader acts.
func (n *Node) ResetMember(id uint64) {
	n.report(func(rn *raft.RawNode) {
		st := rn.Status()
		if st.RaftState != raft.StateLeader {
			return
		}
		var target, best uint64
		for pid, pr := range st.Progress {
			if pid == id || pid == st.ID || pr.IsLearner || !pr.RecentActive {
				continue
			}
			if pr.Match > best {
				target, best = pid, pr.Match
			}
		}
		if target == 0 {
			n.log.Warn("a member lost its log, but no other member is up to date to take over leadership and catch it up; waiting", "member_raft_id", id)
			return
		}
		n.log.Warn("a member lost its log; handing leadership over so the new leader catches it up from scratch", "member_raft_id", id, "new_leader_raft_id", target)
		rn.TransferLeader(target)
	})
}

// LeadIndex returns the last log index when this member last became
// leader. Raft refuses a conf change proposed by the leader before every
// entry up to there is applied (it turns it into an empty entry), so the
// host waits for that before proposing one.
func (n *Node) LeadIndex() uint64 { return n.leadIndex.Load() }

// ProposeConfChange offers a membership change to raft, on the leader.
// Raft may refuse it silently (another change not yet applied): the host
// watches for its effect and proposes again.
func (n *Node) ProposeConfChange(cc *raftpb.ConfChangeV2) {
	n.report(func(rn *raft.RawNode) {
		if err := rn.ProposeConfChange(cc); err != nil {
			n.log.Debug("conf change not proposed", "err", err)
		}
	})
}

// ProposeRaw offers one raft entry's data to the log outside the host's
// proposal queue (no waiter, no batching), for leader duties that watch
// for their effect and propose again when it does not come.
func (n *Node) ProposeRaw(data []byte) {
	n.report(func(rn *raft.RawNode) {
		if err := rn.Propose(data); err != nil {
			n.log.Debug("entry not proposed", "err", err)
		}
	})
}

// TransferLeader asks raft, on the leader, to hand leadership to member
// to (a voter that is up to date).
func (n *Node) TransferLeader(to uint64) {
	n.report(func(rn *raft.RawNode) { rn.TransferLeader(to) })
}

// TakeConfState returns (and forgets) the membership right after the conf
// change at index, which raft applied, or nil. Raft applies a conf change
// before the host applies the entries before it, and may apply the next
// one (leaving a joint configuration) before the host catches up: a
// snapshot of the host's state at an index must carry the membership as
// of that index, not raft's latest.
func (n *Node) TakeConfState(index uint64) *raftpb.ConfState {
	n.mu.Lock()
	defer n.mu.Unlock()
	cs := n.confAt[index]
	delete(n.confAt, index)
	return cs
}

// LogCompacted reports whether the in-memory log no longer starts right
// after the bootstrap snapshot: a member that lacks its start must be sent
// a snapshot.
func (n *Node) LogCompacted() bool {
	first, err := n.cfg.Storage.FirstIndex()
	return err == nil && first > 2
}

// ConfState returns the current membership.
func (n *Node) ConfState() *raftpb.ConfState {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.confState
}

// Status returns the member's role as of the last Ready.
func (n *Node) Status() Status { return *n.status.Load() }

// Commit returns the index of the last entry known committed, as of the
// last Ready.
func (n *Node) Commit() uint64 { return n.commit.Load() }

// Paused reports whether writes are paused because the disk is full.
func (n *Node) Paused() bool { return n.paused.Load() }

// Stop stops the loop after the current Ready and waits for it. The
// Updates channel is not closed.
func (n *Node) Stop() {
	n.stop.Do(func() { close(n.stopc) })
	<-n.done
}

// Done is closed when the loop has stopped.
func (n *Node) Done() <-chan struct{} { return n.done }

func (n *Node) run() {
	defer close(n.done)
	ticker := time.NewTicker(n.cfg.Tick)
	defer ticker.Stop()
	// What raft has from the start (a lone member's campaign: its vote
	// for itself) goes now, not a tick later.
	for n.rn.HasReady() {
		if !n.handleReady() {
			return
		}
	}
	for {
		select {
		case <-ticker.C:
			n.rn.Tick()
			n.compactAt = 0 // compactLog looks at least once a tick
			n.fastElect()
			n.sayFarewells()
			n.handOverAgain()
			n.publishProgress()
		case <-n.fastc:
			n.fastc = nil
			n.fastElect()
			if !n.fastUntil.IsZero() {
				n.fastc = time.After(n.fastRetry())
			}
		case <-n.wake:
			n.propose()
		case m := <-n.recvc:
			n.step(m)
		case f := <-n.reportc:
			f(n.rn)
		case meta := <-n.savedc:
			if !n.snapshotSaved(meta) {
				return
			}
		case <-n.stopc:
			return
		}
		n.drain()
		for n.rn.HasReady() {
			if !n.handleReady() {
				return
			}
		}
		n.compactLog()
	}
}

// drainLimit bounds the messages and proposals drain takes in before a
// Ready.
const drainLimit = 256

// drain steps what else arrived while the loop was busy (mostly during
// the last Ready's fsync) before the next Ready is handled: the
// acknowledgements of several followers and the proposals of several
// clients, local or forwarded, then share one Ready and one WAL write
// instead of taking one each.
func (n *Node) drain() {
	for range drainLimit {
		select {
		case m := <-n.recvc:
			n.step(m)
		case <-n.wake:
			n.propose()
		default:
			return
		}
	}
}

// publishProgress refreshes what Progress returns.
func (n *Node) publishProgress() {
	if n.rn.BasicStatus().RaftState != raft.StateLeader {
		if n.progress.Load() != nil {
			n.progress.Store(nil)
		}
		return
	}
	var ps []PeerProgress
	n.rn.WithProgress(func(id uint64, typ raft.ProgressType, pr tracker.Progress) {
		ps = append(ps, PeerProgress{ID: id, Match: pr.Match, Learner: pr.IsLearner, Replicating: pr.State == tracker.StateReplicate})
	})
	n.progress.Store(&ps)
}

func (n *Node) propose() {
	for _, p := range n.cfg.Proposals() {
		err := n.rn.Propose(p.Data)
		switch {
		case err == nil:
		case p.Deferred != nil && n.rn.BasicStatus().LeadTransferee != 0:
			p.Deferred()
		case p.Dropped != nil:
			p.Dropped(err)
		}
	}
}

func (n *Node) step(m *raftpb.Message) {
	if m.GetType() == raftpb.MessageType_MsgHeartbeat {
		// A leader tells a follower to commit no further than what the
		// follower acknowledged. Beyond our last index means we lost
		// acknowledged entries (a wiped data directory): raft would stop
		// the process. Commit what we have and ask to be reset.
		if last, _ := n.cfg.Storage.LastIndex(); m.GetCommit() > last {
			m = proto.CloneOf(m)
			m.Commit = proto.Uint64(last)
			if n.cfg.LostEntries != nil && time.Since(n.lostAt) >= time.Second {
				n.lostAt = time.Now()
				n.log.Warn("the leader believes this member holds entries it does not have (was its data directory wiped?): asking to be caught up by snapshot",
					"leader_commit", m.GetCommit(), "last_index", last)
				n.cfg.LostEntries()
			}
		}
	}
	if m.GetType() == raftpb.MessageType_MsgVote && string(m.GetContext()) == "CampaignTransfer" {
		n.moving = true // raft's campaignTransfer: leadership is being handed over
	}
	if err := n.rn.Step(m); err != nil && !errors.Is(err, raft.ErrStepPeerNotFound) {
		n.log.Debug("raft message not stepped", "type", m.GetType().String(), "from", m.GetFrom(), "err", err)
	}
	if t := m.GetType(); t == raftpb.MessageType_MsgPreVote || t == raftpb.MessageType_MsgVote {
		n.campaignIfAhead(m)
	}
	if m.GetType() == raftpb.MessageType_MsgAppResp && n.farewells[m.GetFrom()] != nil {
		n.farewellAnswered(m)
	}
	if m.GetType() == raftpb.MessageType_MsgAppResp {
		// Only a rejection moves a member out of step here, and only an
		// acceptance moves one that is not back in.
		if p := n.syncs.peers[m.GetFrom()]; p == nil || m.GetReject() || p.state != tracker.StateReplicate {
			n.syncs.observe(n.rn, m.GetFrom(), n.cfg.PeerSync)
		}
	}
}

// handleReady persists, sends and hands over one Ready. It reports false
// when the loop must stop.
func (n *Node) handleReady() bool {
	rd := n.rn.Ready()
	bs := n.rn.BasicStatus()
	leader := bs.RaftState == raft.StateLeader
	n.syncs.lead(n.rn, &bs)
	if leader {
		n.syncs.sent(n.rn, rd.Messages, n.cfg.PeerSync)
	}
	if leader && n.cfg.Transport != nil {
		// A leader's appends go to followers while it writes its own copy.
		n.cfg.Transport.Send(rd.Messages)
	}
	if early := durableCommitted(rd); len(early) > 0 {
		// Applied while this Ready's entries are written, not after: under
		// load a write is then answered one WAL write sooner. Commit
		// covers them first, so it never reads below the applied index.
		if last := early[len(early)-1].GetIndex(); last > n.commit.Load() {
			n.commit.Store(last)
		}
		if !n.hand(Update{Entries: early}) {
			return false
		}
		rd.CommittedEntries = rd.CommittedEntries[len(early):]
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		// Received from the leader; its body is already durable.
		if !n.persist("snapshot marker", func() error { return n.cfg.WAL.SaveSnapshot(rd.Snapshot.GetMetadata()) }) {
			return false
		}
	}
	if (rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState)) || len(rd.Entries) > 0 {
		if !n.save(rd) {
			return false
		}
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		if err := n.cfg.Storage.ApplySnapshot(rd.Snapshot); err != nil && !errors.Is(err, raft.ErrSnapOutOfDate) {
			n.cfg.Fatal(fmt.Errorf("replica: install snapshot: %w", err))
			return false
		}
		n.lastSnap = rd.Snapshot.GetMetadata().GetIndex()
		n.store.noteSnapshot(rd.Snapshot.GetMetadata())
		n.snapWanted = false
		n.mu.Lock()
		n.confState = rd.Snapshot.GetMetadata().GetConfState()
		n.mu.Unlock()
	}
	if err := n.cfg.Storage.Append(rd.Entries); err != nil {
		n.cfg.Fatal(fmt.Errorf("replica: in-memory log: %w", err))
		return false
	}
	if !raft.IsEmptySnap(rd.Snapshot) {
		n.logSize.reset(rd.Snapshot.GetMetadata().GetIndex())
		n.compactAt = 0
	}
	n.logSize.append(rd.Entries)
	n.logBytes.Store(n.logSize.total)
	if rd.SoftState != nil && rd.SoftState.RaftState == raft.StateLeader && n.status.Load().State != raft.StateLeader {
		last, _ := n.cfg.Storage.LastIndex()
		n.leadIndex.Store(last)
	}
	if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
		n.cfg.Storage.SetHardState(rd.HardState)
		n.commit.Store(rd.HardState.GetCommit())
	}
	if !leader && n.cfg.Transport != nil {
		// A follower's acknowledgements go out only once its write is durable.
		n.cfg.Transport.Send(rd.Messages)
	}
	u := Update{Entries: rd.CommittedEntries}
	if !raft.IsEmptySnap(rd.Snapshot) {
		u.Snapshot = rd.Snapshot.GetMetadata()
	}
	for _, e := range rd.CommittedEntries {
		if !n.applyConfChange(e) {
			return false
		}
	}
	if rd.SoftState != nil {
		old := n.status.Load()
		if rd.SoftState.Lead != 0 {
			n.moving = false
		}
		st := &Status{Lead: rd.SoftState.Lead, State: rd.SoftState.RaftState, Term: n.rn.BasicStatus().GetTerm(), Moving: n.moving && rd.SoftState.Lead == 0}
		n.status.Store(st)
		if old.Lead != st.Lead || old.State != st.State {
			u.Status = st
		}
	}
	if (u.Snapshot != nil || len(u.Entries) > 0 || u.Status != nil) && !n.hand(u) {
		return false
	}
	n.rn.Advance(rd)
	return true
}

// durableCommitted returns the committed entries of rd that this member
// wrote to its WAL in an earlier Ready: all but those rd itself carries
// (a follower may learn of an entry's commit with the entry). They may be
// applied before rd is written. Applying them then acknowledges nothing
// that is not durable here and on a quorum, and a snapshot of the state
// can be ahead of the commit index the WAL holds only by committed
// entries it holds too (recovery raises the commit index to the
// snapshot's). None when rd brings a snapshot, or a membership change is
// among them: those keep the order persist, then apply.
func durableCommitted(rd raft.Ready) []*raftpb.Entry {
	if !raft.IsEmptySnap(rd.Snapshot) {
		return nil
	}
	n := len(rd.CommittedEntries)
	if len(rd.Entries) > 0 {
		first := rd.Entries[0].GetIndex()
		n = sort.Search(n, func(i int) bool { return rd.CommittedEntries[i].GetIndex() >= first })
	}
	for i, e := range rd.CommittedEntries[:n] {
		if e.GetType() != raftpb.EntryType_EntryNormal {
			return rd.CommittedEntries[:i]
		}
	}
	return rd.CommittedEntries[:n]
}

// hand queues u for the state machine, waiting for room under
// MaxApplyBytes. It reports false on Stop.
func (n *Node) hand(u Update) bool {
	for _, e := range u.Entries {
		u.Bytes += int64(len(e.GetData()))
	}
	if !n.awaitApplyRoom(u.Bytes) {
		return false
	}
	n.queued.Add(u.Bytes)
	select {
	case n.cfg.Updates <- u:
		return true
	case <-n.stopc:
		return false
	}
}

// save writes a Ready's hard state and entries to the WAL, waiting out a
// full disk. It reports false when the loop must stop.
func (n *Node) save(rd raft.Ready) bool {
	return n.persist("write-ahead log", func() error { return n.cfg.WAL.Save(rd.HardState, rd.Entries, rd.MustSync) })
}

// persist runs one WAL write, waiting out a full disk: the loop stops
// (nothing more is acknowledged) and retries every diskFullRetry until
// the write succeeds. Any other error is fatal. It reports false when the
// loop must stop.
func (n *Node) persist(what string, write func() error) bool {
	var pausedAt time.Time // when a full disk paused writes; zero when not
	for {
		err := write()
		if err == nil {
			if !pausedAt.IsZero() {
				n.paused.Store(false)
				n.log.Info("disk space is available again: writes resumed", "paused", time.Since(pausedAt).Round(time.Millisecond))
			}
			return true
		}
		if !isDiskFull(err) {
			n.cfg.Fatal(fmt.Errorf("replica: %s: %w", what, err))
			return false
		}
		if pausedAt.IsZero() {
			pausedAt = time.Now()
			n.paused.Store(true)
			n.log.Error("disk full: writes are paused until space is freed; nothing acknowledged is lost", "writing", what, "err", err)
		}
		t := time.NewTimer(diskFullRetry)
		select {
		case <-t.C:
		case <-n.stopc:
			t.Stop()
			return false
		}
	}
}

// applyConfChange applies a committed membership change to raft.
func (n *Node) applyConfChange(e *raftpb.Entry) bool {
	var cc raftpb.ConfChangeI
	switch e.GetType() {
	case raftpb.EntryType_EntryConfChange:
		cc = &raftpb.ConfChange{}
	case raftpb.EntryType_EntryConfChangeV2:
		cc = &raftpb.ConfChangeV2{}
	default:
		return true
	}
	if err := proto.Unmarshal(e.GetData(), cc.(proto.Message)); err != nil {
		n.cfg.Fatal(fmt.Errorf("replica: conf change at %d: %w", e.GetIndex(), err))
		return false
	}
	before := n.rn.Status()
	cs := n.rn.ApplyConfChange(cc)
	n.mu.Lock()
	n.confState = cs
	if n.confAt == nil {
		n.confAt = map[uint64]*raftpb.ConfState{}
	}
	n.confAt[e.GetIndex()] = cs
	n.mu.Unlock()
	if before.RaftState == raft.StateLeader {
		n.tellRemoved(before, cs, e.GetIndex())
		n.handOver(cs)
	}
	return true
}

// handOver moves leadership, on a leader that a conf change (once out of
// any joint configuration) removed or demoted, to the most up-to-date
// voter: raft lets a removed leader go on leading without counting
// itself, and ZooKeeper's removed leader likewise hands over to a member
// of the new configuration once the change is committed.
func (n *Node) handOver(cs *raftpb.ConfState) {
	if len(cs.GetVotersOutgoing()) > 0 || slices.Contains(cs.GetVoters(), n.cfg.ID) {
		return
	}
	var target, best uint64
	for id, pr := range n.rn.Status().Progress {
		if id != n.cfg.ID && !pr.IsLearner && slices.Contains(cs.GetVoters(), id) && (target == 0 || pr.Match > best) {
			target, best = id, pr.Match
		}
	}
	if target != 0 {
		n.log.Info("this member left the voters: handing leadership over", "to_raft_id", target)
		n.rn.TransferLeader(target)
	}
}

// handOverAgain hands leadership over once more when raft gave up on the
// last hand-over and this member still leads without being a voter: the
// target did not catch up, or did not get the word, within an election
// timeout (a slow or overloaded member, a lost message). Raft does not try
// again, and the others, hearing this leader's heartbeats, would never
// elect one of their own.
func (n *Node) handOverAgain() {
	if st := n.rn.BasicStatus(); st.RaftState != raft.StateLeader || st.LeadTransferee != 0 {
		return
	}
	n.mu.Lock()
	cs := n.confState
	n.mu.Unlock()
	if cs != nil && len(cs.GetVoters()) > 0 {
		n.handOver(cs)
	}
}

// farewell is what the leader still sends a member a conf change removed:
// raft stops sending to a member once it is out of the configuration, so
// without it the member might never learn that the change committed (and
// that it is out).
type farewell struct {
	match uint64    // the member's last acknowledged index
	index uint64    // the conf change that removed it
	until time.Time // when the leader gives up
}

// farewellFor bounds how long a leader keeps telling a removed member.
const farewellFor = 10 * time.Second

// tellRemoved starts, on the leader, the farewell of each member the conf
// change at index removed.
func (n *Node) tellRemoved(before raft.Status, cs *raftpb.ConfState, index uint64) {
	if n.cfg.Transport == nil {
		return
	}
	still := map[uint64]bool{}
	for _, ids := range [][]uint64{cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext()} {
		for _, id := range ids {
			still[id] = true
		}
	}
	for id, pr := range before.Progress {
		if id == n.cfg.ID || still[id] {
			continue
		}
		if n.farewells == nil {
			n.farewells = map[uint64]*farewell{}
		}
		// A new leader may not know the member's log yet: then guess
		// that it holds everything before the change, and let a refusal
		// say where it ends.
		match := pr.Match
		if match == 0 || match >= index {
			match = index - 1
		}
		n.farewells[id] = &farewell{match: match, index: index, until: time.Now().Add(farewellFor)}
	}
	n.sayFarewells()
}

// sayFarewells sends each removed member the entries it lacks up to the
// change that removed it, with that change as the commit index (a plain
// append from the leader: the member commits and applies it, and learns
// it is out). It runs on each tick until the member acknowledges, for at
// most farewellFor; a lost farewell costs only that the member then stays
// without a leader, serving nothing.
func (n *Node) sayFarewells() {
	if len(n.farewells) == 0 {
		return
	}
	st := n.rn.BasicStatus()
	now := time.Now()
	var msgs []*raftpb.Message
	for id, f := range n.farewells {
		if st.RaftState != raft.StateLeader || now.After(f.until) {
			delete(n.farewells, id)
			continue
		}
		prevTerm, err := n.cfg.Storage.Term(f.match)
		if err != nil {
			delete(n.farewells, id)
			continue
		}
		ents, err := n.cfg.Storage.Entries(f.match+1, f.index+1, 1<<20)
		if err != nil {
			delete(n.farewells, id)
			continue
		}
		msgs = append(msgs, &raftpb.Message{
			Type: raftpb.MessageType_MsgApp.Enum(), To: proto.Uint64(id), From: proto.Uint64(n.cfg.ID),
			Term: proto.Uint64(st.GetTerm()), Index: proto.Uint64(f.match), LogTerm: proto.Uint64(prevTerm),
			Entries: ents, Commit: proto.Uint64(f.index),
		})
	}
	if len(msgs) > 0 {
		n.cfg.Transport.Send(msgs)
	}
}

// farewellAnswered ends the farewell of a removed member that
// acknowledged it; a refusal names the member's last index, from which
// the next farewell starts.
func (n *Node) farewellAnswered(m *raftpb.Message) {
	f := n.farewells[m.GetFrom()]
	switch {
	case f == nil:
	case !m.GetReject():
		if m.GetIndex() >= f.index {
			delete(n.farewells, m.GetFrom())
		}
	case m.GetRejectHint() < f.match:
		f.match = m.GetRejectHint()
	default:
		delete(n.farewells, m.GetFrom()) // its log differs: nothing more to do
	}
}

// snapshotSaved marks a durable local snapshot in the WAL, offers it to
// raft for members that need one, and releases the WAL segments behind
// the previous one. It reports false when the loop must stop.
func (n *Node) snapshotSaved(meta *raftpb.SnapshotMetadata) bool {
	if meta.GetIndex() <= n.lastSnap {
		return true // a received snapshot overtook it
	}
	if !n.persist("snapshot marker", func() error { return n.cfg.WAL.SaveSnapshot(meta) }) {
		return false
	}
	keep := n.lastSnap
	n.lastSnap = meta.GetIndex()
	n.store.noteSnapshot(meta)
	if first, _ := n.cfg.Storage.FirstIndex(); meta.GetIndex()+1 >= first {
		// Not older than the log's start (compaction was held for it if
		// a member wanted it): raft's own storage records it too.
		n.snapWanted = false
		if _, err := n.cfg.Storage.CreateSnapshot(meta.GetIndex(), meta.GetConfState(), nil); err != nil &&
			!errors.Is(err, raft.ErrSnapOutOfDate) {
			n.log.Error("in-memory snapshot", "err", err)
		}
	}
	// The WAL keeps the entries after the previous snapshot, so recovery
	// can fall back one snapshot. Its old segments are deleted on the
	// releaser's goroutine: the deletions and the directory sync take
	// milliseconds that Readys must not wait for.
	if keep > 1 {
		select {
		case <-n.releasec: // a release not started yet: this one covers it
		default:
		}
		n.releasec <- keep
	}
	return true
}

// releaser deletes the WAL segments that snapshotSaved releases, one
// release at a time, until the loop is done.
func (n *Node) releaser() {
	for {
		select {
		case index := <-n.releasec:
			if err := n.cfg.WAL.ReleaseTo(index); err != nil {
				n.log.Error("release WAL segments", "err", err)
			}
		case <-n.done:
			return
		}
	}
}

// firstLast returns the bounds of the in-memory log (last < first when it
// is empty).
func (n *Node) firstLast() (first, last uint64) {
	first, _ = n.cfg.Storage.FirstIndex()
	last, _ = n.cfg.Storage.LastIndex()
	return first, last
}

// awaitApplyRoom waits until an Update of size bytes fits under
// MaxApplyBytes (or nothing is queued). It reports false on Stop.
func (n *Node) awaitApplyRoom(size int64) bool {
	for q := n.queued.Load(); q > 0 && q+size > n.cfg.MaxApplyBytes; q = n.queued.Load() {
		select {
		case <-n.consumedc:
		case <-n.stopc:
			return false
		}
	}
	return true
}

// Consumed reports that the host applied an Update's entries (its Bytes)
// and that its applied index is now applied: the entries no longer count
// against MaxApplyBytes, and the in-memory log may drop them. Any
// goroutine may call it.
func (n *Node) Consumed(bytes int64, applied uint64) {
	n.hostApplied.Store(applied)
	if bytes == 0 {
		return
	}
	n.queued.Add(-bytes)
	select {
	case n.consumedc <- struct{}{}:
	default:
	}
}

// LogBytes returns the data bytes of the entries in the in-memory log
// (raft.MemoryStorage), as of the last Ready or compaction.
func (n *Node) LogBytes() uint64 { return n.logBytes.Load() }

// PeerProgress is a member's replication state as the leader sees it.
type PeerProgress struct {
	ID      uint64
	Match   uint64
	Learner bool
	// Replicating is set while the leader streams entries to it (raft's
	// StateReplicate): it answers and is in step. A member that is down,
	// behind or being sent a snapshot is not.
	Replicating bool
}

// Progress returns, on the leader, every member's replication state as of
// the last Ready; nil elsewhere.
func (n *Node) Progress() []PeerProgress {
	p := n.progress.Load()
	if p == nil {
		return nil
	}
	return *p
}

// Term returns the raft term of the entry at index i.
func (n *Node) Term(i uint64) (uint64, error) { return n.cfg.Storage.Term(i) }
