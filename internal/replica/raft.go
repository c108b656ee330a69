package replica

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ErrStopped is returned by Propose after Stop.
var ErrStopped = errors.New("replica: stopped")

// ApplyFunc receives committed entries: index grows with every call, term
// is the raft term the entry was proposed in. It is called from a single
// goroutine and must not retain data after it returns.
type ApplyFunc func(index, term uint64, data []byte)

// WAL is the durable log the node writes before anything is applied or
// acknowledged. Save must be durable when it returns (one fsync per call:
// group commit).
type WAL interface {
	Save(hs *raftpb.HardState, ents []*raftpb.Entry) error
	SaveSnapshot(meta *raftpb.SnapshotMetadata) error
	ReleaseTo(index uint64) error
}

// SnapshotStore keeps snapshot files. Save streams one through write and
// is durable when it returns.
type SnapshotStore interface {
	Save(meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error
}

// SnapshotFunc is called on the apply goroutine, between two applies,
// when a snapshot is due. It must capture the state as of the last applied
// entry, quickly (a brief lock and a clone), and return a function that
// serialises that capture later on another goroutine.
type SnapshotFunc func() (write func(io.Writer) error)

// Config configures a raft node of one member (the standalone server).
type Config struct {
	// ID is the raft id of this member (never 0; the server uses myid+1).
	ID uint64
	// Storage holds the recovered log: its snapshot, hard state and
	// entries. The node appends to it.
	Storage *raft.MemoryStorage
	// Applied is the index of the last entry already in the state
	// machine (the recovered snapshot's index).
	Applied uint64
	// WAL persists hard state and entries.
	WAL WAL
	// Snapshots receives snapshots; nil disables them.
	Snapshots SnapshotStore
	// SnapCount triggers a snapshot after this many entries are applied
	// since the last one (ZooKeeper's snapCount). Default 100000.
	SnapCount uint64
	// SnapBytes also triggers a snapshot once the data of the entries
	// applied since the last one adds up to this many bytes (ZooKeeper's
	// snapSizeLimitInKb); 0 disables the size trigger.
	SnapBytes uint64
	// TakeSnapshot captures the state machine for a snapshot.
	TakeSnapshot SnapshotFunc
	// Apply receives every committed entry that carries data, in order.
	Apply ApplyFunc
	// Tick is raft's logical clock period. Default 100ms.
	Tick time.Duration
	// Fatal is called when the log can no longer be trusted (a failed
	// fsync); it must not return. Default: log and exit(2).
	Fatal func(error)
	// Logger receives the node's logs.
	Logger *slog.Logger
}

// diskFullRetry is how long the node waits before retrying a write that
// failed because the disk is full.
const diskFullRetry = time.Second

// Node is a running raft member: proposals go in, committed entries come
// out to Apply in log order, after they are durable in the WAL.
type Node struct {
	cfg Config
	rn  *raft.RawNode
	log *slog.Logger

	mu sync.Mutex
	// Invariant: pending holds proposals not yet handed to raft, in order.
	pending [][]byte
	stopped bool
	wake    chan struct{}
	done    chan struct{}

	// paused is set while the WAL cannot be written because the disk is
	// full.
	paused atomic.Bool

	// Owned by the run goroutine.
	applied      uint64
	lastSnap     uint64 // index of the newest snapshot
	bytesSince   uint64 // data bytes applied since the last snapshot began
	confState    *raftpb.ConfState
	snapshotting bool
	snapDone     chan snapResult
}

type snapResult struct {
	meta *raftpb.SnapshotMetadata
	err  error
}

// BootstrapSnapshot is the initial state of a fresh single-member log: an
// empty state machine at index 1, term 1, with this member as the only
// voter. It is written to the WAL as the first snapshot marker.
func BootstrapSnapshot(id uint64) *raftpb.SnapshotMetadata {
	return &raftpb.SnapshotMetadata{
		Index:     proto.Uint64(1),
		Term:      proto.Uint64(1),
		ConfState: &raftpb.ConfState{Voters: []uint64{id}},
	}
}

// StartNode starts the node's loop. The member campaigns at once: alone,
// it is leader after one round, and proposals made before then wait.
func StartNode(cfg Config) (*Node, error) {
	if cfg.ID == 0 || cfg.Storage == nil || cfg.WAL == nil || cfg.Apply == nil {
		return nil, errors.New("replica: Config needs ID, Storage, WAL and Apply")
	}
	if cfg.SnapCount == 0 {
		cfg.SnapCount = 100000
	}
	if cfg.Tick <= 0 {
		cfg.Tick = 100 * time.Millisecond
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.Fatal == nil {
		log := cfg.Logger
		cfg.Fatal = func(err error) {
			log.Error("the log can no longer be trusted; stopping the process (restart recovers from the last durable state)", "err", err)
			exit(2)
		}
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID:              cfg.ID,
		ElectionTick:    10,
		HeartbeatTick:   1,
		Storage:         cfg.Storage,
		Applied:         cfg.Applied,
		MaxSizePerMsg:   1 << 20,
		MaxInflightMsgs: 256,
		CheckQuorum:     true,
		PreVote:         true,
		Logger:          raftLogger{cfg.Logger},
	})
	if err != nil {
		return nil, fmt.Errorf("replica: start raft: %w", err)
	}
	snap, err := cfg.Storage.Snapshot()
	if err != nil {
		return nil, fmt.Errorf("replica: read recovered snapshot: %w", err)
	}
	n := &Node{
		cfg:       cfg,
		rn:        rn,
		log:       cfg.Logger,
		wake:      make(chan struct{}, 1),
		done:      make(chan struct{}),
		applied:   cfg.Applied,
		lastSnap:  snap.GetMetadata().GetIndex(),
		confState: snap.GetMetadata().GetConfState(),
		snapDone:  make(chan snapResult, 1),
	}
	if err := rn.Campaign(); err != nil {
		return nil, fmt.Errorf("replica: campaign: %w", err)
	}
	go n.run()
	return n, nil
}

// Propose queues data for the log; it is applied later, after every entry
// proposed before it, once durable. It never blocks on the log.
func (n *Node) Propose(data []byte) error {
	n.mu.Lock()
	if n.stopped {
		n.mu.Unlock()
		return ErrStopped
	}
	n.pending = append(n.pending, data)
	n.mu.Unlock()
	n.signal()
	return nil
}

func (n *Node) signal() {
	select {
	case n.wake <- struct{}{}:
	default:
	}
}

// Paused reports whether writes are paused because the disk is full; the
// server then refuses new writes instead of queueing them.
func (n *Node) Paused() bool { return n.paused.Load() }

// Stop stops the loop after the current batch; queued proposals that were
// not yet handed to raft are dropped (their clients see the connection
// close). It waits for a snapshot in progress.
func (n *Node) Stop() {
	n.mu.Lock()
	n.stopped = true
	n.mu.Unlock()
	n.signal()
	<-n.done
}

func (n *Node) run() {
	defer close(n.done)
	ticker := time.NewTicker(n.cfg.Tick)
	defer ticker.Stop()
	for {
		select {
		case <-ticker.C:
			n.rn.Tick()
		case <-n.wake:
		case res := <-n.snapDone:
			n.snapshotSaved(res)
		}
		n.mu.Lock()
		stopped := n.stopped
		var props [][]byte
		if n.rn.BasicStatus().RaftState == raft.StateLeader {
			props, n.pending = n.pending, nil
		}
		n.mu.Unlock()
		if stopped {
			if n.snapshotting {
				n.snapshotSaved(<-n.snapDone)
			}
			return
		}
		for _, p := range props {
			if err := n.rn.Propose(p); err != nil {
				// Only a lost leadership drops proposals; alone, we never lose it.
				n.log.Error("proposal dropped", "err", err)
			}
		}
		for n.rn.HasReady() {
			if !n.handleReady() {
				return
			}
		}
	}
}

// handleReady persists, applies and advances one Ready. It reports false
// when the node must stop.
func (n *Node) handleReady() bool {
	rd := n.rn.Ready()
	if (rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState)) || len(rd.Entries) > 0 {
		var pausedAt time.Time // when a full disk paused writes; zero when not
		for {
			err := n.cfg.WAL.Save(rd.HardState, rd.Entries)
			if err == nil {
				if !pausedAt.IsZero() {
					n.paused.Store(false)
					n.log.Info("disk space is available again: writes resumed", "paused", time.Since(pausedAt).Round(time.Millisecond))
				}
				break
			}
			if isDiskFull(err) {
				if pausedAt.IsZero() {
					pausedAt = time.Now()
					n.paused.Store(true)
					n.log.Error("disk full: writes are paused until space is freed; nothing acknowledged is lost", "err", err)
				}
				if n.sleepUnlessStopped(diskFullRetry) {
					continue
				}
				return false
			}
			n.cfg.Fatal(fmt.Errorf("replica: write-ahead log: %w", err))
			return false
		}
		if err := n.cfg.Storage.Append(rd.Entries); err != nil {
			n.cfg.Fatal(fmt.Errorf("replica: in-memory log: %w", err))
			return false
		}
		if rd.HardState != nil && !raft.IsEmptyHardState(rd.HardState) {
			n.cfg.Storage.SetHardState(rd.HardState)
		}
	}
	for _, e := range rd.CommittedEntries {
		switch e.GetType() {
		case raftpb.EntryType_EntryNormal:
			if len(e.GetData()) > 0 {
				n.cfg.Apply(e.GetIndex(), e.GetTerm(), e.GetData())
				n.bytesSince += uint64(len(e.GetData()))
			}
		case raftpb.EntryType_EntryConfChange:
			cc := &raftpb.ConfChange{}
			if err := proto.Unmarshal(e.GetData(), cc); err != nil {
				n.cfg.Fatal(fmt.Errorf("replica: conf change at %d: %w", e.GetIndex(), err))
				return false
			}
			n.confState = n.rn.ApplyConfChange(cc)
		case raftpb.EntryType_EntryConfChangeV2:
			cc := &raftpb.ConfChangeV2{}
			if err := proto.Unmarshal(e.GetData(), cc); err != nil {
				n.cfg.Fatal(fmt.Errorf("replica: conf change at %d: %w", e.GetIndex(), err))
				return false
			}
			n.confState = n.rn.ApplyConfChange(cc)
		}
		n.applied = e.GetIndex()
	}
	n.rn.Advance(rd)
	n.maybeSnapshot()
	return true
}

// sleepUnlessStopped waits d; it reports false if the node was stopped.
func (n *Node) sleepUnlessStopped(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			return true
		case <-n.wake:
			n.mu.Lock()
			stopped := n.stopped
			n.mu.Unlock()
			if stopped {
				return false
			}
		}
	}
}

// maybeSnapshot starts a background snapshot when SnapCount entries, or
// SnapBytes bytes of entry data, were applied since the last one.
func (n *Node) maybeSnapshot() {
	if n.cfg.Snapshots == nil || n.cfg.TakeSnapshot == nil || n.snapshotting {
		return
	}
	bySize := n.cfg.SnapBytes > 0 && n.bytesSince >= n.cfg.SnapBytes
	if n.applied-n.lastSnap < n.cfg.SnapCount && !bySize {
		return
	}
	if n.applied == n.lastSnap {
		return
	}
	term, err := n.cfg.Storage.Term(n.applied)
	if err != nil {
		n.log.Error("snapshot skipped: no term for the applied index", "index", n.applied, "err", err)
		return
	}
	meta := &raftpb.SnapshotMetadata{Index: proto.Uint64(n.applied), Term: proto.Uint64(term), ConfState: n.confState}
	write := n.cfg.TakeSnapshot()
	n.snapshotting = true
	n.bytesSince = 0
	store := n.cfg.Snapshots
	log := n.log
	go func() {
		start := time.Now()
		err := store.Save(meta, write)
		if err == nil {
			log.Info("snapshot saved", "index", meta.GetIndex(), "took", time.Since(start).Round(time.Millisecond))
		}
		n.snapDone <- snapResult{meta: meta, err: err}
		n.signal()
	}()
}

// snapshotSaved marks the snapshot in the WAL and compacts the log. The
// WAL keeps everything after the previous snapshot, so recovery can fall
// back to it if the newest snapshot file is damaged.
func (n *Node) snapshotSaved(res snapResult) {
	n.snapshotting = false
	if res.err != nil {
		n.log.Error("snapshot failed; the log keeps growing until one succeeds", "index", res.meta.GetIndex(), "err", res.err)
		return
	}
	if err := n.cfg.WAL.SaveSnapshot(res.meta); err != nil {
		n.cfg.Fatal(fmt.Errorf("replica: snapshot marker: %w", err))
		return
	}
	keep := n.lastSnap
	n.lastSnap = res.meta.GetIndex()
	if _, err := n.cfg.Storage.CreateSnapshot(res.meta.GetIndex(), res.meta.GetConfState(), nil); err != nil &&
		!errors.Is(err, raft.ErrSnapOutOfDate) {
		n.log.Error("in-memory snapshot", "err", err)
	}
	if keep > 1 {
		if err := n.cfg.Storage.Compact(keep); err != nil && !errors.Is(err, raft.ErrCompacted) {
			n.log.Error("compact in-memory log", "err", err)
		}
		if err := n.cfg.WAL.ReleaseTo(keep); err != nil {
			n.log.Error("release WAL segments", "err", err)
		}
	}
	// Entries applied while this snapshot was written may already make
	// the next one due.
	n.maybeSnapshot()
}
