package node

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/transport"
)

// exit ends the process; a variable so tests of fatal paths can replace it.
var exit = os.Exit

// snapState is the snapshot bookkeeping of the apply goroutine.
type snapState struct {
	// last is the index of the newest snapshot (taken or installed);
	// since counts entry bytes applied after it. Apply goroutine only.
	last  uint64
	since uint64
	// force asks for a snapshot at the next chance whatever the counts
	// (a member was added: see applyConfEntry). Apply goroutine only.
	force bool
	// busy is set while a background Save runs; wg waits for it.
	busy atomic.Bool
	wg   sync.WaitGroup
	// saveMu serialises snapshot file writes: local ones and received ones.
	saveMu sync.Mutex

	recvMu sync.Mutex
	// received is the state of the last snapshot received from the
	// leader, restored while checking it, kept for its installation.
	received    *fsm.FSM
	receivedIdx uint64
}

func (s *snapState) wait() { s.wg.Wait() }

// maybeSnapshot starts a background snapshot when SnapCount entries, or
// SnapBytes bytes of entry data, were applied since the last one. It runs
// on the apply goroutine, between applies.
func (n *Node) maybeSnapshot() {
	s := &n.snap
	if s.busy.Load() {
		return
	}
	applied := n.applied.Load()
	bySize := n.cfg.SnapBytes > 0 && s.since >= n.cfg.SnapBytes
	if applied == s.last || (applied-s.last < n.cfg.SnapCount && !bySize && !s.force) {
		return
	}
	s.force = false
	term, err := n.raft.Term(applied)
	if err != nil {
		n.log.Error("snapshot skipped: no term for the applied index", "index", applied, "err", err)
		return
	}
	meta := &raftpb.SnapshotMetadata{Index: proto.Uint64(applied), Term: proto.Uint64(term), ConfState: n.confState}
	// A brief exclusive lock for a copy-on-write clone; written later
	// without any lock.
	n.mu.Lock()
	clone := n.fsm.Clone()
	n.mu.Unlock()
	s.busy.Store(true)
	s.since = 0
	s.last = applied
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		start := time.Now()
		var size int64
		s.saveMu.Lock()
		err := n.disk.snaps.Save(meta, func(w io.Writer) error {
			cw := &countingWriter{w: w}
			err := clone.WriteSnapshot(cw)
			size = cw.n
			return err
		})
		s.saveMu.Unlock()
		took := time.Since(start)
		if err != nil {
			n.log.Error("snapshot failed; the log keeps growing until one succeeds", "index", meta.GetIndex(), "err", err)
			if errors.Is(err, syscall.ENOSPC) {
				n.disk.wal.DropSpares() // the next attempt may fit in their space
			}
		} else {
			n.cfg.Metrics.ObserveSnapshot(took, size)
			n.log.Info("snapshot saved", "index", meta.GetIndex(), "bytes", size, "took", took.Round(time.Millisecond))
			n.lastSnap.Store(&SnapshotMark{Zxid: clone.LastZxid(), Time: time.Now()})
			n.raft.SnapshotSaved(meta)
		}
		// The next maybeSnapshot, after the next apply, may start another.
		s.busy.Store(false)
	}()
}

// install replaces the state machine with a snapshot received from the
// leader (already stored by Receive, usually already restored by it). Every
// proposal in flight is answered with ErrProposalLost: its entry may be
// inside the snapshot or lost.
func (n *Node) install(meta *raftpb.SnapshotMetadata) error {
	s := &n.snap
	s.recvMu.Lock()
	f := s.received
	if s.receivedIdx != meta.GetIndex() {
		f = nil
	}
	s.received, s.receivedIdx = nil, 0
	s.recvMu.Unlock()
	if f == nil {
		rc, err := n.disk.snaps.Open(meta)
		if err != nil {
			return err
		}
		f, err = fsm.Restore(n.cfg.FSM, rc)
		rc.Close()
		if err != nil {
			return err
		}
	}
	n.mu.Lock()
	n.fsm = f
	n.confState = meta.GetConfState()
	if h := n.cfg.Hooks.Installed; h != nil {
		h()
	}
	n.mu.Unlock()
	n.applied.Store(meta.GetIndex())
	n.appliedTerm.Store(meta.GetTerm())
	s.last, s.since = meta.GetIndex(), 0
	n.lastSnap.Store(&SnapshotMark{Zxid: f.LastZxid(), Time: time.Now()})
	n.failAll(fmt.Errorf("%w: the state was replaced by a snapshot from the leader", ErrProposalLost), failEvery, time.Time{})
	n.log.Info("installed a snapshot from the leader", "index", meta.GetIndex(), "term", meta.GetTerm())
	return nil
}

// SnapshotMark describes the newest snapshot of a member: the zxid of
// the last write it holds and when it was written.
type SnapshotMark struct {
	Zxid fsm.Zxid
	Time time.Time
}

// LastSnapshot returns the newest snapshot this member saved, installed
// from the leader, or recovered from at start; false before any.
func (n *Node) LastSnapshot() (SnapshotMark, bool) {
	if m := n.lastSnap.Load(); m != nil {
		return *m, true
	}
	return SnapshotMark{}, false
}

// clonedState is a copy of the state machine and the snapshot metadata
// of the log index it is at.
type clonedState struct {
	meta *raftpb.SnapshotMetadata
	fsm  *fsm.FSM
	err  error
}

// cloneState copies the state machine at the applied index, on the apply
// goroutine (so the two agree), under a brief exclusive lock.
func (n *Node) cloneState() clonedState {
	applied := n.applied.Load()
	term, err := n.raft.Term(applied)
	if err != nil {
		return clonedState{err: fmt.Errorf("node: no term for the applied index %d: %w", applied, err)}
	}
	meta := &raftpb.SnapshotMetadata{Index: proto.Uint64(applied), Term: proto.Uint64(term), ConfState: n.confState}
	n.mu.Lock()
	clone := n.fsm.Clone()
	n.mu.Unlock()
	return clonedState{meta: meta, fsm: clone}
}

// CloneState returns a copy of the state machine that later applies do
// not change, with the metadata of the log index it is at: what a
// snapshot file of this moment holds (write it with storage.WriteSnapshot
// and clone.WriteSnapshot). The apply goroutine takes the copy between two
// applies; CloneState waits for it until ctx ends or the node stops.
func (n *Node) CloneState(ctx context.Context) (*raftpb.SnapshotMetadata, *fsm.FSM, error) {
	reply := make(chan clonedState, 1)
	select {
	case n.cloneReq <- reply:
	case <-n.stopc:
		return nil, nil, ErrNotServing
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
	select {
	case c := <-reply:
		return c.meta, c.fsm, c.err
	case <-n.stopc:
		return nil, nil, ErrNotServing
	case <-ctx.Done():
		return nil, nil, ctx.Err()
	}
}

// snapshots returns what the transport streams snapshots from and into.
func (n *Node) snapshots() transport.Snapshots { return nodeSnapshots{n} }

type nodeSnapshots struct{ n *Node }

// Open implements transport.Snapshots: the body of a snapshot file, or an
// empty state for the bootstrap snapshot (index 1), which has no file.
func (s nodeSnapshots) Open(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error) {
	if meta.GetIndex() <= 1 {
		var b bytes.Buffer
		if err := fsm.New(s.n.cfg.FSM).WriteSnapshot(&b); err != nil {
			return nil, err
		}
		return io.NopCloser(&b), nil
	}
	return s.n.disk.snaps.Open(meta)
}

// Receive implements transport.Snapshots: the body is written to a
// snapshot file (durable on return), then read back and restored, so a
// damaged transfer is refused before raft sees it; the restored state is
// kept for the installation that follows.
func (s nodeSnapshots) Receive(meta *raftpb.SnapshotMetadata, body io.Reader) error {
	n := s.n
	n.snap.saveMu.Lock()
	err := n.disk.snaps.Save(meta, func(w io.Writer) error {
		_, err := io.Copy(w, body)
		return err
	})
	n.snap.saveMu.Unlock()
	if err != nil {
		return fmt.Errorf("node: store snapshot %d from the leader: %w", meta.GetIndex(), err)
	}
	rc, err := n.disk.snaps.Open(meta)
	if err != nil {
		return err
	}
	defer rc.Close()
	f, err := fsm.Restore(n.cfg.FSM, rc)
	if err != nil {
		// Recovery must not meet it either.
		if rerr := n.disk.snaps.Remove(meta); rerr != nil {
			n.log.Error("could not remove a damaged snapshot received from the leader", "index", meta.GetIndex(), "err", rerr)
		}
		return fmt.Errorf("node: snapshot %d from the leader is damaged: %w", meta.GetIndex(), err)
	}
	n.snap.recvMu.Lock()
	n.snap.received, n.snap.receivedIdx = f, meta.GetIndex()
	n.snap.recvMu.Unlock()
	return nil
}

// countingWriter counts the bytes written through it.
type countingWriter struct {
	w io.Writer
	n int64
}

func (c *countingWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	c.n += int64(k)
	return k, err
}
