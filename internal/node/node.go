package node

import (
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/replica"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/internal/transport"
)

// ErrProposalLost is wrapped by every failure a Done receives: the
// proposal's outcome is unknown (it may still be applied), and the client
// must be told ConnectionLoss.
var ErrProposalLost = errors.New("node: proposal outcome unknown")

// ErrNotServing is returned by Propose while the member knows no leader,
// and after Stop.
var ErrNotServing = errors.New("node: not serving (no leader)")

// Done answers a proposal, exactly once; see the package documentation
// for where it runs.
type Done func(out fsm.Output, err error)

// Hooks let the server react to the state machine. Each runs on the apply
// goroutine, in log order.
type Hooks struct {
	// Applied runs right after an entry was applied, with the state lock
	// held exclusively, before the proposer's Done. It must not block or
	// take the state lock.
	Applied func(e *fsm.Entry, out fsm.Output)
	// Installed runs after a snapshot from the leader replaced the whole
	// state, with the state lock held exclusively.
	Installed func()
	// RoleChanged runs when the leader or this member's role changed,
	// without the state lock.
	RoleChanged func(Role)
	// RaftMembersChanged runs after a raft conf change was applied (see
	// RaftMembers), without the state lock.
	RaftMembersChanged func()
}

// Config configures a Node.
type Config struct {
	// ID is this member's id (myid; 0 for a standalone server without one).
	ID MemberID
	// Members is the ensemble from the server.N lines; empty for a
	// standalone member.
	Members []Member
	// FS is the file system the directories live on (storage.OSFS, or a
	// storage.MemFS in crash tests).
	FS storage.FS
	// DataDir holds snapshots; DataLogDir the WAL.
	DataDir, DataLogDir string
	// ForceSync fsyncs the WAL (zoo.cfg forceSync; off only for tests).
	ForceSync bool
	// WALSegmentSize is the size in bytes of each WAL segment
	// (preAllocSize × 1024). Default storage.DefaultSegmentSize.
	WALSegmentSize int64
	// SnapRetain is how many snapshot files to keep
	// (autopurge.snapRetainCount; at least storage.MinSnapRetain).
	SnapRetain int
	// SnapCount triggers a snapshot after this many applied entries
	// (snapCount). Default 100000.
	SnapCount uint64
	// SnapBytes also triggers one after this many bytes of applied entry
	// data (snapSizeLimitInKb × 1024); 0 disables it.
	SnapBytes uint64
	// FSM are the replicated-behaviour options (identical on every member).
	FSM fsm.Options
	// Tick, ElectionTicks and HeartbeatTicks drive raft (see replica.Config).
	Tick                          time.Duration
	ElectionTicks, HeartbeatTicks int
	// Transport builds the peer transport once the node can serve
	// snapshots; nil for a standalone member.
	Transport func(transport.Snapshots) (transport.Transport, error)
	// ProposeTimeout fails a proposal not applied within it of being
	// handed to raft (time waiting in the pending queue, see
	// MaxProposalBytes, does not count). Default 30s.
	ProposeTimeout time.Duration
	// Hooks are the server's callbacks.
	Hooks Hooks
	// DrainTime is how long a member a reconfig removed stays a raft
	// learner, serving the clients still connected to it, before the
	// leader takes it out of raft. Default 10 election timeouts.
	DrainTime time.Duration
	// InitialMembership, when set (an ensemble with reconfigEnabled), is
	// put into the log by the first leader, giving the configuration a
	// version (fsm.OpInitialMembership).
	InitialMembership []config.Server
	// Logger receives the node's logs; nil means slog.Default().
	Logger *slog.Logger
	// Metrics receives the node's measurements (elections, commits,
	// snapshots, WAL fsyncs); nil records nothing.
	Metrics *metrics.Set
	// SlowSync is the WAL fsync duration past which a warning is logged
	// (storage.WALOptions.SlowSync; fsync.warningthresholdms).
	SlowSync time.Duration
	// Fatal is called when the log can no longer be trusted and must not
	// return; nil means log and exit(2).
	Fatal func(error)

	// MaxLogBytes bounds the in-memory raft log, in bytes of entry data:
	// the log keeps a tail of at most MaxLogBytes/4 (4 MiB by default,
	// replica.DefaultMemTailBytes) and SnapCount entries behind the
	// applied index, and on the leader the entries a member still lacks
	// while they are under MaxLogBytes/2 and SnapCount entries; a snapshot is taken whenever MaxLogBytes/4 bytes
	// were applied since the last one (or SnapBytes, when smaller); and
	// while the log holds more than MaxLogBytes this member hands no new
	// proposal to raft (they wait, as the clients that sent them). The
	// WAL keeps every entry since the snapshot before last. Default
	// DefaultMaxLogBytes.
	MaxLogBytes uint64
	// MemTailBytes overrides the in-memory log's tail
	// (replica.Config.MemTailBytes); 0 = the default.
	MemTailBytes uint64
	// MaxProposalBytes bounds the bytes of this member's proposals handed
	// to raft and not yet applied; past it, new proposals wait in the
	// pending queue (one may always go when none is in flight). Default
	// DefaultMaxProposalBytes.
	MaxProposalBytes int
}

// Defaults of Config's byte bounds (docs/operations.md, "Limits and
// throttling").
const (
	DefaultMaxLogBytes      = 256 << 20
	DefaultMaxProposalBytes = 16 << 20
)

// updateQueue bounds the Readys handed from the raft loop to the apply
// goroutine (and replica.DefaultMaxApplyBytes their bytes).
const updateQueue = 128

// maxBatch bounds one raft entry made of queued proposals.
const (
	maxBatchEntries = 512
	maxBatchBytes   = 512 << 10
)

// maxReadyProposals bounds the bytes of proposals handed to raft at once,
// so one Ready's WAL write (and the fsync every write waits for) stays
// short: a raft loop blocked in a long fsync sends no heartbeats, and a
// flood of large writes would otherwise cost the ensemble its leader.
const maxReadyProposals = 4 << 20

// Node hosts the state machine of one member.
type Node struct {
	cfg  Config
	log  *slog.Logger
	disk *disk
	raft *replica.Node
	tr   transport.Transport

	updates chan replica.Update
	// cloneReq carries CloneState's requests to the apply goroutine.
	cloneReq chan chan clonedState
	// snapWanted is signalled by the raft loop when a member needs a
	// snapshot newer than the last one (replica.Config.SnapshotWanted).
	snapWanted chan struct{}
	stopc      chan struct{}
	applyWG    sync.WaitGroup
	stop       sync.Once

	// mu is the state lock: the apply goroutine holds it exclusively while
	// it applies; reads share it.
	mu  sync.RWMutex
	fsm *fsm.FSM

	applied atomic.Uint64
	// appliedTerm is the raft term of the entry at applied.
	appliedTerm atomic.Uint64
	appliedCh   chan struct{} // signalled after each applied Update
	role        atomic.Int32
	reqID       atomic.Int64
	// lead is the raft id of the last known leader; apply goroutine only.
	lead uint64
	// elect times elections for the metrics; apply goroutine only.
	elect electionClock
	// confState is the raft membership as of the applied index (what a
	// snapshot of the state records); apply goroutine only, written under
	// mu.
	confState *raftpb.ConfState
	// reconf is the leader's progress on a pending reconfig, initialAt
	// when it last proposed the initial membership; apply goroutine only.
	reconf    reconfigDriver
	initialAt time.Time
	// draining maps the removed members still raft learners to when this
	// leader first saw them; drainAt is when it last proposed a removal
	// (drainRemoved).
	draining map[uint64]time.Time
	drainAt  time.Time

	propMu sync.Mutex
	// propLast, propMin and propMax are the sizes in bytes of the raft
	// entries applied while this member led (-1 before the first): srvr's
	// "Proposal sizes" and mntr's *_proposal_size.
	propLast, propMin, propMax int

	waitMu sync.Mutex
	// waiters maps the ReqID of every proposal of this member to its
	// answer. Invariant: a waiter is in the map until it is answered (its
	// Done, when not nil, called); a pending entry whose waiter is gone is
	// never handed to raft.
	waiters map[int64]*waiter
	// pending holds encoded entries not yet handed to raft, in order.
	pending [][]byte
	pendIDs []int64
	// inFlight is the bytes of the entries handed to raft whose waiters
	// are not answered yet. Invariant: inFlight == Σ size of the waiters
	// with handed set.
	inFlight int
	stopped  bool

	snap snapState
	// lastSnap is the newest snapshot taken, installed or recovered from
	// (nil before any): the AdminServer's last_snapshot.
	lastSnap atomic.Pointer[SnapshotMark]
	// rec is what Open recovered, consumed by Run.
	rec *recovered
}

type waiter struct {
	done Done // nil for proposals nobody waits for
	// deadline is set when the entry is handed to raft: Config.ProposeTimeout
	// later it is answered ErrProposalLost. Zero while it waits in the
	// pending queue, where nothing can lose it.
	deadline time.Time
	size     int  // bytes of the encoded entry
	handed   bool // handed to raft (counted in Node.inFlight)
	// deferred is set once the entry is applied and its answer comes
	// with a later entry (fsm.Output.Deferred).
	deferred bool
}

// Open recovers the member from its directories: the newest valid
// snapshot and the WAL after it. Nothing runs yet; Run starts it. The
// split lets the caller keep the Node before any hook can run.
func Open(cfg Config) (*Node, error) {
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.FS == nil {
		cfg.FS = storage.OSFS
	}
	if cfg.SnapCount == 0 {
		cfg.SnapCount = 100000
	}
	if cfg.ProposeTimeout <= 0 {
		cfg.ProposeTimeout = 30 * time.Second
	}
	if cfg.MaxLogBytes == 0 {
		cfg.MaxLogBytes = DefaultMaxLogBytes
	}
	if cfg.MaxProposalBytes <= 0 {
		cfg.MaxProposalBytes = DefaultMaxProposalBytes
	}
	if cfg.DrainTime <= 0 {
		cfg.DrainTime = 10 * time.Duration(max(cfg.ElectionTicks, 10)) * max(cfg.Tick, 5*time.Millisecond)
	}
	if trigger := cfg.MaxLogBytes / 4; cfg.SnapBytes == 0 || trigger < cfg.SnapBytes {
		cfg.SnapBytes = trigger
	}
	if len(cfg.Members) > 0 && cfg.Transport == nil {
		return nil, errors.New("node: an ensemble member needs a Transport")
	}
	n := &Node{
		cfg:        cfg,
		log:        cfg.Logger,
		updates:    make(chan replica.Update, updateQueue),
		cloneReq:   make(chan chan clonedState),
		snapWanted: make(chan struct{}, 1),
		stopc:      make(chan struct{}),
		appliedCh:  make(chan struct{}, 1),
		waiters:    make(map[int64]*waiter),
		propLast:   -1,
		propMin:    -1,
		propMax:    -1,
	}
	// Request ids never repeat across restarts: a replayed entry of an
	// earlier run must not match a waiter of this one.
	n.reqID.Store(time.Now().UnixNano())
	start := time.Now()
	d, rec, err := openDisk(&n.cfg, n.log)
	if err != nil {
		return nil, err
	}
	rec.took = time.Since(start)
	n.disk = d
	n.fsm = rec.fsm
	n.rec = rec
	if rec.snapAt != nil {
		n.lastSnap.Store(&SnapshotMark{Zxid: rec.fsm.LastZxid(), Time: *rec.snapAt})
	}
	n.snap.last = rec.base.GetIndex()
	n.confState = rec.base.GetConfState()
	n.applied.Store(rec.base.GetIndex())
	if rec.base.GetIndex() > replica.BootstrapIndex {
		// A new log's bootstrap marker stands for no entry; its term is
		// also the first leader's, so counting it would make a member
		// InSync before it holds that leader's first entry.
		n.appliedTerm.Store(rec.base.GetTerm())
	}
	return n, nil
}

// Run starts raft, the peer transport and the apply goroutine, and
// returns once the recovered committed log has been applied again (so no
// client is served from a half-replayed state). On error the node is
// stopped.
func (n *Node) Run() error {
	rec, cfg := n.rec, n.cfg
	n.rec = nil
	ms, commit, err := raftStorage(rec)
	if err != nil {
		n.disk.close()
		return err
	}
	var sender replica.Sender
	if cfg.Transport != nil {
		n.tr, err = cfg.Transport(n.snapshots())
		if err != nil {
			n.disk.close()
			return err
		}
		sender = n.tr
	}
	if !n.Standalone() {
		// A member starts looking for a leader, as ZooKeeper's do.
		n.elect.lookingSince = time.Now()
		n.elect.unavailableSince = n.elect.lookingSince
		if m := n.cfg.Metrics; m != nil {
			m.LookingCount.Inc()
		}
	}
	n.raft, err = replica.StartNode(replica.Config{
		ID:             cfg.ID.RaftID(),
		Storage:        ms,
		Applied:        rec.base.GetIndex(),
		WAL:            n.disk.wal,
		Transport:      sender,
		Updates:        n.updates,
		Proposals:      n.proposals,
		Tick:           cfg.Tick,
		ElectionTicks:  cfg.ElectionTicks,
		HeartbeatTicks: cfg.HeartbeatTicks,
		Campaign:       len(cfg.Members) == 0,
		FastStart:      len(cfg.Members) > 0 && highestVoter(ms, cfg.ID.RaftID()),
		MaxLogBytes:    cfg.MaxLogBytes,
		MemTailBytes:   cfg.MemTailBytes,
		MaxLagEntries:  cfg.SnapCount,
		// Each member keeps its own proposals in flight under
		// MaxProposalBytes; raft's own limit only catches what escapes.
		MaxUncommittedBytes: 2 * uint64(max(1, len(cfg.Members))) * uint64(cfg.MaxProposalBytes),
		LostEntries:         n.lostEntries,
		PeerSync:            n.peerSync,
		SnapshotWanted: func() {
			select {
			case n.snapWanted <- struct{}{}:
			default:
			}
		},
		LeaderUnreachable: func() {
			n.failAll(fmt.Errorf("%w: this member could not reach its leader", ErrProposalLost), failUndecided, time.Time{})
		},
		Fatal:  cfg.Fatal,
		Logger: n.log,
	})
	if err != nil {
		n.Stop()
		return err
	}
	// The apply goroutine starts once n.raft is set (it uses it); the raft
	// loop's first Updates wait in the channel.
	n.applyWG.Add(1)
	go n.applyLoop()
	if n.tr != nil {
		if err := n.tr.Start(n.raft); err != nil {
			n.Stop()
			return fmt.Errorf("node: start peer transport: %w", err)
		}
	}
	// Replay: alone, the member commits its whole log once it leads; in an
	// ensemble, what the WAL says was committed is applied now and the
	// rest comes from the leader.
	want := commit
	if len(cfg.Members) == 0 {
		want, _ = ms.LastIndex()
	}
	start := time.Now()
	lastLog := start
	replayed := time.Duration(-1) // when the committed log was applied; a standalone member then waits to lead
	for n.applied.Load() < want || (n.Standalone() && !n.Role().Serving()) {
		if replayed < 0 && n.applied.Load() >= want {
			replayed = time.Since(start)
		}
		if time.Since(lastLog) >= time.Second {
			n.log.Info("replaying the log", "applied", n.applied.Load(), "last", want)
			lastLog = time.Now()
		}
		select {
		case <-n.appliedCh:
		case <-time.After(100 * time.Millisecond):
		case <-n.raft.Done():
			n.Stop()
			return errors.New("node: stopped while replaying the log")
		}
	}
	n.mu.RLock()
	sessions := len(n.fsm.SessionIDs())
	zxid := n.fsm.LastZxid()
	n.mu.RUnlock()
	// ZooKeeper's dbinittime: loading the snapshot and replaying the log.
	if replayed < 0 {
		replayed = time.Since(start)
	}
	if m := n.cfg.Metrics; m != nil {
		m.DBInitTime.ObserveDuration(rec.took + replayed)
	}
	n.log.Info("recovered", "from", rec.source, "replayed_entries", want-rec.base.GetIndex(),
		"zxid", zxid.String(), "sessions", sessions, "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// ID returns this member's id.
func (n *Node) ID() MemberID { return n.cfg.ID }

// Standalone reports whether the member is alone (no server.N lines).
func (n *Node) Standalone() bool { return len(n.cfg.Members) == 0 }

// RLock takes the state lock shared, for reading the state machine.
func (n *Node) RLock() { n.mu.RLock() }

// RUnlock releases the shared state lock.
func (n *Node) RUnlock() { n.mu.RUnlock() }

// Lock takes the state lock exclusively (rarely needed outside applies).
func (n *Node) Lock() { n.mu.Lock() }

// Unlock releases the exclusive state lock.
func (n *Node) Unlock() { n.mu.Unlock() }

// FSM returns the state machine. Call it holding the state lock (shared
// for reads), or from a hook that runs under it; the pointer changes when
// a snapshot is installed.
func (n *Node) FSM() *fsm.FSM { return n.fsm }

// Applied returns the index of the last applied log entry.
func (n *Node) Applied() uint64 { return n.applied.Load() }

// InSync reports whether the member knows a leader and has applied an
// entry of its term: every raft leader commits one when it starts, so the
// member then holds everything committed before (ZooKeeper's follower
// after its sync with the leader, its leader after NEWLEADER's quorum).
// With reconfigEnabled, a new ensemble's member is in sync once it has also
// applied the membership its first leader logs (proposeInitialMembership).
func (n *Node) InSync() bool {
	st := n.raft.Status()
	if st.Lead == 0 || n.appliedTerm.Load() < st.Term {
		return false
	}
	if len(n.cfg.InitialMembership) == 0 {
		return true
	}
	n.mu.RLock()
	defer n.mu.RUnlock()
	return n.fsm.Membership() != nil
}

// Role returns what the member is doing now.
func (n *Node) Role() Role { return Role(n.role.Load()) }

// Leader returns the member id of the leader and whether one is known.
func (n *Node) Leader() (MemberID, bool) {
	st := n.raft.Status()
	if st.Lead == 0 {
		return 0, false
	}
	return MemberOf(st.Lead), true
}

// LeaderMoving reports whether the member knows no leader because
// leadership is being handed over (a reconfig removed the leader): the
// next one is a round trip away.
func (n *Node) LeaderMoving() bool { return n.Role() == Looking && n.raft.Status().Moving }

// Term returns the current raft term.
func (n *Node) Term() uint64 { return n.raft.Status().Term }

// Commit returns the index of the last log entry known committed.
func (n *Node) Commit() uint64 { return n.raft.Commit() }

// Paused reports whether writes are paused because the disk is full.
func (n *Node) Paused() bool { return n.raft.Paused() }

// LogBytes returns the bytes of entry data in the in-memory raft log
// (bounded by Config.MaxLogBytes).
func (n *Node) LogBytes() uint64 { return n.raft.LogBytes() }

// proposed records the size of an entry this leader replicated.
func (n *Node) proposed(size int) {
	n.propMu.Lock()
	defer n.propMu.Unlock()
	n.propLast = size
	if n.propMin < 0 || size < n.propMin {
		n.propMin = size
	}
	n.propMax = max(n.propMax, size)
}

// ProposalSizes returns the sizes in bytes of the last, smallest and
// largest raft entry replicated while this member led; -1 for each before
// the first.
func (n *Node) ProposalSizes() (last, lo, hi int) {
	n.propMu.Lock()
	defer n.propMu.Unlock()
	return n.propLast, n.propMin, n.propMax
}

// Peer is another member's replication state as the leader sees it.
type Peer struct {
	ID MemberID
	// Match is the highest log index known to be replicated on it.
	Match uint64
	// Learner is set for observers.
	Learner bool
	// Synced is set while the leader streams entries to it (it answers
	// and is in step); not while it is down, behind or being sent a
	// snapshot.
	Synced bool
}

// Peers returns, on the leader, the replication state of every other
// member; nil elsewhere.
func (n *Node) Peers() []Peer {
	var out []Peer
	for _, p := range n.raft.Progress() {
		if p.ID == n.cfg.ID.RaftID() {
			continue
		}
		out = append(out, Peer{ID: MemberOf(p.ID), Match: p.Match, Learner: p.Learner, Synced: p.Replicating})
	}
	return out
}

// Propose queues e for the log; done answers it. It sets e.Origin and
// e.ReqID, and e.Time when it is zero. It fails at once with ErrNotServing
// when the member knows no leader or is stopping; then done is not called.
func (n *Node) Propose(e *fsm.Entry, now time.Time, done Done) error {
	e.Origin = int64(n.cfg.ID)
	e.ReqID = n.reqID.Add(1)
	if e.Time == 0 {
		e.Time = now.UnixMilli()
	}
	data := e.Marshal()
	n.waitMu.Lock()
	if n.stopped || !n.Role().Serving() {
		n.waitMu.Unlock()
		return ErrNotServing
	}
	n.enqueueLocked(e.ReqID, data, done)
	n.waitMu.Unlock()
	n.raft.Wake()
	return nil
}

// enqueueLocked adds an encoded entry and its waiter to the pending
// queue; the caller holds waitMu.
func (n *Node) enqueueLocked(id int64, data []byte, done Done) {
	n.waiters[id] = &waiter{done: done, size: len(data)}
	n.pending = append(n.pending, data)
	n.pendIDs = append(n.pendIDs, id)
}

// takePendingLocked removes from the pending queue what may be handed to
// raft now: entries in order while this member's proposals in flight stay
// under MaxProposalBytes (one may always go when none is in flight), none
// while the in-memory log is over MaxLogBytes. Entries whose waiter was
// answered meanwhile (deadline, leader change) are dropped: they were
// never proposed. The caller holds waitMu.
func (n *Node) takePendingLocked() (data [][]byte, ids []int64, more bool) {
	logFull := n.raft.LogBytes() > n.cfg.MaxLogBytes
	deadline := time.Now().Add(n.cfg.ProposeTimeout)
	k, taken := 0, 0
	for ; k < len(n.pending); k++ {
		w := n.waiters[n.pendIDs[k]]
		if w == nil {
			continue
		}
		if logFull || (n.inFlight > 0 && n.inFlight+w.size > n.cfg.MaxProposalBytes) {
			break
		}
		if taken > 0 && taken+w.size > maxReadyProposals {
			more = true
			break
		}
		w.handed, w.deadline = true, deadline
		n.inFlight += w.size
		taken += w.size
		data = append(data, n.pending[k])
		ids = append(ids, n.pendIDs[k])
	}
	clear(n.pending[:k])
	n.pending, n.pendIDs = n.pending[k:], n.pendIDs[k:]
	if len(n.pending) == 0 {
		n.pending, n.pendIDs = nil, nil
	}
	return data, ids, more
}

// answeredLocked takes w, just removed from the waiters, out of the
// proposal bytes in flight; the caller holds waitMu.
func (n *Node) answeredLocked(w *waiter) {
	if w.handed {
		n.inFlight -= w.size
	}
}

// proposals is the raft loop's replica.Config.Proposals: the pending
// entries that may go (takePendingLocked), batched; when more could go
// at once than maxReadyProposals, the loop is woken again for them after
// this Ready.
func (n *Node) proposals() []replica.Proposal {
	n.waitMu.Lock()
	pending, ids, more := n.takePendingLocked()
	n.waitMu.Unlock()
	if more {
		n.raft.Wake()
	}
	var out []replica.Proposal
	for len(pending) > 0 {
		k, size := 0, 0
		for k < len(pending) && k < maxBatchEntries && (k == 0 || size+len(pending[k]) <= maxBatchBytes) {
			size += len(pending[k])
			k++
		}
		batchIDs, batch := ids[:k:k], pending[:k:k]
		out = append(out, replica.Proposal{
			Data:     fsm.EncodeBatch(batch),
			Dropped:  func(err error) { n.fail(batchIDs, fmt.Errorf("%w: raft dropped it (%v)", ErrProposalLost, err)) },
			Deferred: func() { n.requeue(batchIDs, batch) },
		})
		pending, ids = pending[k:], ids[k:]
	}
	return out
}

// requeue puts entries raft refused while leadership moves back at the
// head of the pending queue, in order: they were never in the log, and go
// to the next leader (the apply loop wakes the raft loop every tick while
// entries wait). Those whose waiter was answered meanwhile are dropped.
func (n *Node) requeue(ids []int64, data [][]byte) {
	n.waitMu.Lock()
	defer n.waitMu.Unlock()
	var keepIDs []int64
	var keep [][]byte
	for i, id := range ids {
		w := n.waiters[id]
		if w == nil {
			continue
		}
		if w.handed {
			w.handed, w.deadline = false, time.Time{}
			n.inFlight -= w.size
		}
		keepIDs = append(keepIDs, id)
		keep = append(keep, data[i])
	}
	n.pending = append(keep, n.pending...)
	n.pendIDs = append(keepIDs, n.pendIDs...)
}

// fail answers the given waiters with err.
func (n *Node) fail(ids []int64, err error) {
	var dones []Done
	n.waitMu.Lock()
	for _, id := range ids {
		if w, ok := n.waiters[id]; ok {
			delete(n.waiters, id)
			n.answeredLocked(w)
			if w.done != nil {
				dones = append(dones, w.done)
			}
		}
	}
	n.waitMu.Unlock()
	for _, d := range dones {
		d(fsm.Output{}, err)
	}
	n.wakeIfPending()
}

// failWhich says which waiters failAll answers.
type failWhich int

const (
	// failEvery answers every waiter.
	failEvery failWhich = iota
	// failExpired answers those past their deadline.
	failExpired
	// failUndecided answers those whose entry may be lost: not the ones
	// still in the pending queue (never offered to raft), nor the
	// deferred ones, whose entry is in the log and whose answer the log
	// will bring (a pending reconfig, driven by whichever member leads).
	failUndecided
)

// failAll answers the waiters which selects with err (now is the time
// failExpired compares deadlines with).
func (n *Node) failAll(err error, which failWhich, now time.Time) {
	var dones []Done
	n.waitMu.Lock()
	for id, w := range n.waiters {
		if which == failExpired && (w.deadline.IsZero() || now.Before(w.deadline)) ||
			which == failUndecided && (w.deferred || !w.handed) {
			continue
		}
		delete(n.waiters, id)
		n.answeredLocked(w)
		if w.done != nil {
			dones = append(dones, w.done)
		}
	}
	n.waitMu.Unlock()
	for _, d := range dones {
		d(fsm.Output{}, err)
	}
	n.wakeIfPending()
}

// wakeIfPending wakes the raft loop when entries wait in the pending
// queue: room may have been made for them.
func (n *Node) wakeIfPending() {
	n.waitMu.Lock()
	waiting := len(n.pending) > 0
	n.waitMu.Unlock()
	if waiting && n.raft != nil {
		n.raft.Wake()
	}
}

// Stop stops raft, the transport and the apply goroutine, answers every
// waiting proposal with ErrProposalLost, and closes the directories.
func (n *Node) Stop() {
	n.stop.Do(n.shutdown)
}

func (n *Node) shutdown() {
	n.waitMu.Lock()
	n.stopped = true
	n.waitMu.Unlock()
	if n.tr != nil {
		n.tr.Close()
	}
	if n.raft != nil {
		n.raft.Stop()
	}
	if n.rec != nil { // opened, never run
		n.disk.close()
		return
	}
	close(n.stopc)
	n.applyWG.Wait()
	n.snap.wait()
	n.failAll(fmt.Errorf("%w: server stopping", ErrProposalLost), failEvery, time.Time{})
	n.disk.close()
}

// applyLoop applies what raft hands over, in order, and sweeps proposals
// past their deadline.
func (n *Node) applyLoop() {
	defer n.applyWG.Done()
	sweep := time.NewTicker(min(time.Second, max(n.cfg.ProposeTimeout/2, time.Millisecond)))
	defer sweep.Stop()
	// A pending reconfig is driven on each tick too, as the log may be
	// idle.
	var driveC <-chan time.Time
	if !n.Standalone() {
		tick := n.cfg.Tick
		if tick <= 0 {
			tick = 100 * time.Millisecond
		}
		drive := time.NewTicker(tick)
		defer drive.Stop()
		driveC = drive.C
	}
	for {
		select {
		case <-driveC:
			n.driveReconfig()
			n.wakeIfPending()
		case u := <-n.updates:
			if !n.applyUpdate(u) {
				return
			}
		case reply := <-n.cloneReq:
			reply <- n.cloneState()
		case <-n.snapWanted:
			n.snap.force = true
			n.maybeSnapshot()
		case now := <-sweep.C:
			n.failAll(fmt.Errorf("%w: not applied within %v", ErrProposalLost, n.cfg.ProposeTimeout), failExpired, now)
		case <-n.stopc:
			return
		}
	}
}

// applyUpdate applies one Update. It reports false when the node must stop.
func (n *Node) applyUpdate(u replica.Update) bool {
	if u.Snapshot != nil {
		if err := n.install(u.Snapshot); err != nil {
			n.fatal(fmt.Errorf("node: install snapshot %d from the leader: %w", u.Snapshot.GetIndex(), err))
			return false
		}
	}
	for _, re := range u.Entries {
		if re.GetIndex() <= n.applied.Load() {
			n.raft.TakeConfState(re.GetIndex()) // its membership is in the state already
			continue                            // already in the state (replayed, or in a snapshot)
		}
		switch re.GetType() {
		case raftpb.EntryType_EntryNormal:
			if len(re.GetData()) > 0 && !n.applyEntry(re) {
				return false
			}
		case raftpb.EntryType_EntryConfChange, raftpb.EntryType_EntryConfChangeV2:
			if !n.applyConfEntry(re) {
				return false
			}
		}
		n.applied.Store(re.GetIndex())
		n.appliedTerm.Store(re.GetTerm())
		n.elect.synced(n.cfg.Metrics, re.GetTerm(), time.Now)
		n.snap.since += uint64(len(re.GetData()))
		if n.Role() == Leading && len(re.GetData()) > 0 {
			n.proposed(len(re.GetData()))
		}
	}
	if u.Status != nil {
		n.roleChanged(u.Status)
	}
	n.raft.Consumed(u.Bytes, n.applied.Load())
	n.wakeIfPending()
	select {
	case n.appliedCh <- struct{}{}:
	default:
	}
	n.maybeSnapshot()
	n.driveReconfig()
	return true
}

// applyEntry applies the fsm entries of one raft entry under the state
// lock, answering this member's waiters.
func (n *Node) applyEntry(re *raftpb.Entry) bool {
	return n.applyData(re.GetIndex(), re.GetTerm(), re.GetData(), false)
}

// applyData applies the fsm entries encoded in data, of the raft entry at
// index and term; viaConf marks the context of a raft conf change.
func (n *Node) applyData(index, term uint64, data []byte, viaConf bool) bool {
	entries, err := fsm.DecodeEntries(data, 0)
	if err != nil {
		// Entries are written by servers, never by clients: a bad one
		// means the log is corrupt, and going on would diverge.
		n.fatal(fmt.Errorf("node: undecodable log entry at index %d: %w", index, err))
		return false
	}
	self := int64(n.cfg.ID)
	n.observeCommitted(entries)
	n.mu.Lock()
	defer n.mu.Unlock()
	for i := range entries {
		e := &entries[i]
		var out fsm.Output
		if viaConf {
			out = n.fsm.ApplyConfChange(term, e)
		} else {
			out = n.fsm.Apply(term, e)
		}
		if e.Op == fsm.OpRejoin {
			n.rejoin(MemberID(e.Origin))
		}
		if h := n.cfg.Hooks.Applied; h != nil {
			h(e, out)
		}
		if e.Origin != self {
			continue
		}
		n.waitMu.Lock()
		w := n.waiters[e.ReqID]
		if w != nil && out.Deferred {
			w.deferred = true
			w = nil
		}
		if w != nil {
			delete(n.waiters, e.ReqID)
			n.answeredLocked(w)
		}
		n.waitMu.Unlock()
		if w != nil && w.done != nil {
			w.done(out, nil)
		}
	}
	return true
}

// roleChanged records the member's new role. When the leader changed, the
// fate of every proposal in flight is unknown: they are answered with
// ErrProposalLost (ZooKeeper's followers drop their clients then).
func (n *Node) roleChanged(st *replica.Status) {
	old := n.Role()
	r := n.roleOf(st)
	n.waitMu.Lock()
	n.role.Store(int32(r))
	n.waitMu.Unlock()
	if n.lead != 0 && st.Lead != n.lead {
		n.failAll(fmt.Errorf("%w: the leader changed", ErrProposalLost), failUndecided, time.Time{})
	}
	n.observeRole(old, r, n.lead, st, time.Now())
	n.lead = st.Lead
	if old != r {
		lead, _ := n.Leader()
		n.log.Info("role changed", "role", r.Mode(), "leader", lead, "term", st.Term)
	}
	if h := n.cfg.Hooks.RoleChanged; h != nil {
		h(r)
	}
}

// highestVoter reports whether id is the highest voter of the recovered
// membership.
func highestVoter(ms *raft.MemoryStorage, id uint64) bool {
	_, cs, err := ms.InitialState()
	if err != nil {
		return false
	}
	return slices.Contains(cs.GetVoters(), id) && slices.Max(cs.GetVoters()) == id
}

// roleOf is the role raft's status st means for this member.
func (n *Node) roleOf(st *replica.Status) Role {
	switch {
	case len(n.cfg.Members) == 0 && st.State == raft.StateLeader:
		return Standalone
	case st.Lead == 0:
		return Looking
	case st.State == raft.StateLeader:
		return Leading
	case n.isLearner():
		return Observing
	}
	return Following
}

// lostEntries is the raft loop's LostEntries: this member asks the leader,
// through the log, to reset it.
func (n *Node) lostEntries() {
	e := &fsm.Entry{Op: fsm.OpRejoin, Origin: int64(n.cfg.ID), ReqID: n.reqID.Add(1)}
	n.waitMu.Lock()
	n.enqueueLocked(e.ReqID, e.Marshal(), nil)
	n.waitMu.Unlock()
	n.raft.Wake()
}

// rejoin runs when a member's rejoin entry is applied: the leader resets
// the member, so raft catches it up by snapshot.
func (n *Node) rejoin(id MemberID) {
	if n.Role() != Leading {
		return
	}
	n.raft.ResetMember(id.RaftID())
}

func (n *Node) isLearner() bool {
	self := n.cfg.ID.RaftID()
	for _, l := range n.raft.ConfState().GetLearners() {
		if l == self {
			return true
		}
	}
	return false
}

func (n *Node) fatal(err error) {
	if n.cfg.Fatal != nil {
		n.cfg.Fatal(err)
		return
	}
	n.log.Error("stopping the process", "err", err)
	exit(2)
}
