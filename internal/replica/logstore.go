package replica

import (
	"errors"
	"sync/atomic"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"go.etcd.io/raft/v3/tracker"
)

// DefaultMemTailBytes is Config.MemTailBytes's default: 4 MiB of applied
// entries, some 4,000 writes of 1 KiB (ZooKeeper keeps 500 committed
// proposals in memory, zookeeper.commitLogCount). Every member holds it
// in memory all the time, so it is paid per znode: at a million znodes
// 16 MiB cost about 20 bytes each. A member further behind than the tail
// (and than what the leader keeps for it, see compactLog) is caught up
// by a snapshot.
const DefaultMemTailBytes = 4 << 20

// SoloTailBytes bounds the in-memory log's tail while the member is its
// configuration's only one (a standalone server): no member can be behind
// it, and one added later is caught up by a snapshot.
const SoloTailBytes = 1 << 20

// logStore is the storage raft reads: the in-memory entries
// (raft.MemoryStorage) and the newest durable snapshot. The entries are
// compacted right behind the applied index (compactLog), usually past that
// snapshot; a member that lacks entries the log no longer holds must then
// be sent a newer snapshot, which Snapshot asks the host for.
type logStore struct {
	*raft.MemoryStorage
	// snap is the metadata of the newest durable snapshot, local or
	// received.
	snap atomic.Pointer[raftpb.SnapshotMetadata]
	// stale is called (on the loop goroutine) when raft wants to send a
	// snapshot and the newest one is older than the log's start.
	stale func()
}

// Snapshot returns the newest durable snapshot, or
// ErrSnapshotTemporarilyUnavailable while it is older than the entries'
// start: a member caught up with it would lack the entries after it. Raft
// tries again on the member's next response.
func (s *logStore) Snapshot() (*raftpb.Snapshot, error) {
	meta := s.snap.Load()
	if first, err := s.FirstIndex(); err == nil && meta.GetIndex()+1 < first {
		s.stale()
		return nil, raft.ErrSnapshotTemporarilyUnavailable
	}
	return &raftpb.Snapshot{Metadata: meta}, nil
}

// noteSnapshot records a durable snapshot newer than the one held.
func (s *logStore) noteSnapshot(meta *raftpb.SnapshotMetadata) {
	if meta.GetIndex() > s.snap.Load().GetIndex() {
		s.snap.Store(meta)
	}
}

// snapshotStale asks the host for a snapshot at its applied index and
// holds the log's compaction until one that is not older than the log's
// start is saved. Loop goroutine.
func (n *Node) snapshotStale() {
	if !n.snapWanted {
		n.log.Info("a member needs a snapshot newer than the last one; asking for one")
	}
	n.snapWanted = true
	if f := n.cfg.SnapshotWanted; f != nil {
		f()
	}
}

// solo reports whether this member is its configuration's only one.
func (n *Node) solo() bool {
	cs := n.ConfState()
	return len(cs.GetVoters()) == 1 && cs.GetVoters()[0] == n.cfg.ID && len(cs.GetLearners()) == 0 &&
		len(cs.GetVotersOutgoing()) == 0 && len(cs.GetLearnersNext()) == 0
}

// compactLog drops the in-memory entries no member needs any more: those
// at or behind the host's applied index but the last MemTailBytes (and at
// most MaxLagEntries) of them (a member a little behind, here or under a
// next leader, is caught up by entries), and on the leader none that a
// member or a removed member's farewell still lacks while they stay under
// MaxLogBytes/2 and MaxLagEntries; a member alone in its configuration
// keeps at most SoloTailBytes. The WAL keeps every entry back to the
// previous snapshot, for recovery. It runs on the loop goroutine after
// every Ready and does work once per tail bytes appended, and on every
// tick (the host may have applied more since).
func (n *Node) compactLog() {
	if n.logSize.total < n.compactAt || n.snapWanted {
		return
	}
	tail := n.cfg.MemTailBytes
	if n.solo() {
		tail = min(tail, SoloTailBytes)
	}
	if n.cfg.MaxLogBytes > 0 {
		// Proposals wait while the log is over MaxLogBytes: what is
		// kept must leave room.
		tail = min(tail, n.cfg.MaxLogBytes/4)
	}
	n.compactAt = n.logSize.total + tail
	applied := n.hostApplied.Load()
	to := n.logSize.keeping(tail)
	if lag := n.cfg.MaxLagEntries; lag > 0 && applied > lag {
		to = max(to, applied-lag)
	}
	to = min(to, applied)
	first, _ := n.cfg.Storage.FirstIndex()
	last, _ := n.cfg.Storage.LastIndex()
	pinned := func(match uint64) {
		// A member already behind the log's start needs a snapshot
		// anyway, and so does one too far behind.
		if match+1 >= first && match < to &&
			(n.cfg.MaxLogBytes == 0 || n.logSize.after(match) <= n.cfg.MaxLogBytes/2) &&
			(n.cfg.MaxLagEntries == 0 || last-match <= n.cfg.MaxLagEntries) {
			to = match
		}
	}
	if n.rn.BasicStatus().RaftState == raft.StateLeader {
		n.rn.WithProgress(func(id uint64, _ raft.ProgressType, pr tracker.Progress) {
			if id != n.cfg.ID {
				pinned(pr.Match)
			}
		})
		for _, f := range n.farewells {
			pinned(f.match)
		}
	}
	if to < first {
		return
	}
	if err := n.cfg.Storage.Compact(to); err != nil && !errors.Is(err, raft.ErrCompacted) {
		n.log.Error("compact in-memory log", "err", err)
		return
	}
	n.logSize.compact(to)
	n.logBytes.Store(n.logSize.total)
	n.compactAt = n.logSize.total + tail
	// Proposals the host held back for a full log may go now.
	n.propose()
}
