package server

import (
	"errors"
	"fmt"
	"io"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/replica"
	"github.com/wardenzk/warden/internal/storage"
)

// durable is the server's persistent state: the data-dir lock, the WAL,
// the snapshot files and the raft node that writes them.
type durable struct {
	lock  io.Closer
	wal   *storage.WAL
	snaps *storage.Snapshotter
	node  *replica.Node
}

// recovered is what openDurable found on disk.
type recovered struct {
	fsm    *fsm.FSM
	base   *raftpb.SnapshotMetadata // the snapshot the state machine is at
	hs     *raftpb.HardState
	ents   []*raftpb.Entry // entries after base
	source string          // for the start-up log line
}

// raftID is the raft member id of a server: myid+1, as raft forbids 0.
func raftID(serverID int64) uint64 { return uint64(serverID) + 1 }

// openDurable locks the data directory and recovers the newest valid
// snapshot and the WAL after it. It says in the log what it found.
func (s *Server) openDurable(fs storage.FS, opts fsm.Options) (*durable, *recovered, error) {
	cfg := s.cfg
	if err := storage.MkdirAllDurable(fs, storage.SnapDir(cfg.DataDir)); err != nil {
		return nil, nil, fmt.Errorf("server: create dataDir %s: %w", cfg.DataDir, err)
	}
	lock, err := fs.Lock(storage.LockPath(cfg.DataDir))
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, nil, fmt.Errorf("server: dataDir %s is in use by another server (%s is locked): stop it, or give this one its own dataDir", cfg.DataDir, storage.LockPath(cfg.DataDir))
		}
		return nil, nil, fmt.Errorf("server: lock dataDir: %w", err)
	}
	d := &durable{lock: lock}
	fail := func(err error) (*durable, *recovered, error) {
		d.close()
		return nil, nil, err
	}

	retain := cfg.AutopurgeSnapRetainCount
	d.snaps = storage.NewSnapshotter(fs, storage.SnapDir(cfg.DataDir), retain, s.log)
	rec := &recovered{}
	meta, err := d.snaps.LoadNewest(func(m *raftpb.SnapshotMetadata, r io.Reader) error {
		f, err := fsm.Restore(opts, r)
		if err != nil {
			return err
		}
		rec.fsm = f
		return nil
	})
	switch {
	case err == nil:
		rec.base = meta
		rec.source = fmt.Sprintf("snapshot at index %d", meta.GetIndex())
	case errors.Is(err, storage.ErrNoSnapshot):
	default:
		return fail(fmt.Errorf("server: load snapshot from %s: %w", storage.SnapDir(cfg.DataDir), err))
	}

	if !cfg.ForceSync {
		s.log.Warn("forceSync=no: the write-ahead log is never fsynced; a power cut loses acknowledged writes. Use it only for tests.")
	}
	d.wal, err = storage.OpenWAL(fs, storage.WALDir(cfg.DataLogDir), storage.WALOptions{
		NoSync:    !cfg.ForceSync,
		Logger:    s.log,
		KeepAfter: rec.base.GetIndex(),
	})
	if err != nil {
		return fail(fmt.Errorf("server: open write-ahead log in %s: %w", storage.WALDir(cfg.DataLogDir), err))
	}
	walSnap, hs, ents, err := d.wal.ReadAll()
	if err != nil {
		return fail(fmt.Errorf("server: read write-ahead log: %w", err))
	}
	switch {
	case rec.base != nil:
	case walSnap.GetIndex() > 1:
		return fail(fmt.Errorf("server: the write-ahead log starts after snapshot %d, but no valid snapshot file is in %s; restore the snapshot files or start from an empty dataDir",
			walSnap.GetIndex(), storage.SnapDir(cfg.DataDir)))
	default:
		// A fresh data directory (or one whose only state is the bootstrap
		// marker): an empty state machine at index 1.
		rec.base = replica.BootstrapSnapshot(raftID(s.id))
		rec.fsm = fsm.New(opts)
		rec.source = "empty data directory"
		if walSnap == nil {
			if err := d.wal.SaveSnapshot(rec.base); err != nil {
				return fail(fmt.Errorf("server: initialise write-ahead log: %w", err))
			}
		} else {
			rec.source = "write-ahead log"
		}
	}
	if walSnap.GetIndex() < rec.base.GetIndex() {
		// The snapshot file is newer than the WAL's last marker (a crash
		// between the two, or an imported data directory): mark it.
		if err := d.wal.SaveSnapshot(rec.base); err != nil {
			return fail(fmt.Errorf("server: mark snapshot in write-ahead log: %w", err))
		}
	}
	for _, e := range ents {
		if e.GetIndex() > rec.base.GetIndex() {
			rec.ents = append(rec.ents, e)
		}
	}
	rec.hs = hs
	return d, rec, nil
}

// startNode builds raft's storage from what was recovered and starts the
// member. Committed entries after the snapshot are applied again through
// s.apply; startNode returns once they are.
func (s *Server) startNode(d *durable, rec *recovered, fatal func(error)) error {
	ms := raft.NewMemoryStorage()
	if err := ms.ApplySnapshot(&raftpb.Snapshot{Metadata: rec.base}); err != nil {
		return fmt.Errorf("server: recovered snapshot: %w", err)
	}
	commit := rec.base.GetIndex()
	if rec.hs != nil && !raft.IsEmptyHardState(rec.hs) {
		hs := proto.CloneOf(rec.hs)
		if hs.GetCommit() < commit {
			hs.Commit = proto.Uint64(commit)
		}
		commit = hs.GetCommit()
		if err := ms.SetHardState(hs); err != nil {
			return fmt.Errorf("server: recovered hard state: %w", err)
		}
	}
	if err := ms.Append(rec.ents); err != nil {
		return fmt.Errorf("server: recovered log: %w", err)
	}
	last, _ := ms.LastIndex()
	if commit > last {
		return fmt.Errorf("server: the log was committed up to %d but holds entries only up to %d: entries are missing", commit, last)
	}
	s.applied.Store(rec.base.GetIndex())
	node, err := replica.StartNode(replica.Config{
		ID:           raftID(s.id),
		Storage:      ms,
		Applied:      rec.base.GetIndex(),
		WAL:          d.wal,
		Snapshots:    d.snaps,
		SnapCount:    uint64(max(s.cfg.SnapCount, 1)),
		SnapBytes:    uint64(max(s.cfg.SnapSizeLimitInKb, 0)) * 1024,
		TakeSnapshot: s.takeSnapshot,
		Apply:        s.apply,
		Fatal:        fatal,
		Logger:       s.log,
	})
	if err != nil {
		return err
	}
	d.node = node
	// Replay: wait until every recovered entry is in the state machine —
	// alone, this member commits its whole log once it leads — saying how
	// far it got while that takes long. Only then are clients served, so
	// no replayed entry meets a new client's request.
	start := time.Now()
	lastLog := start
	for s.applied.Load() < last {
		if time.Since(lastLog) >= time.Second {
			s.log.Info("replaying the log", "applied", s.applied.Load(), "last", last)
			lastLog = time.Now()
		}
		select {
		case <-s.appliedCh:
		case <-time.After(100 * time.Millisecond):
		}
	}
	s.log.Info("recovered", "from", rec.source, "replayed_entries", last-rec.base.GetIndex(),
		"zxid", zxidHex(s.lastZxid.Load()), "sessions", len(s.fsm.SessionIDs()), "took", time.Since(start).Round(time.Millisecond))
	return nil
}

// takeSnapshot captures the state machine for a snapshot: a brief
// exclusive lock for a copy-on-write clone; the clone is written later
// without any lock.
func (s *Server) takeSnapshot() func(io.Writer) error {
	s.mu.Lock()
	c := s.fsm.Clone()
	s.mu.Unlock()
	return c.WriteSnapshot
}

// reviveSessions gives every recovered session a fresh full timeout, as a
// new ZooKeeper leader does: clients have that long to reconnect.
func (s *Server) reviveSessions() {
	now := s.now()
	s.mu.RLock()
	ids := s.fsm.SessionIDs()
	timeouts := make([]int32, len(ids))
	for i, id := range ids {
		sess, _ := s.fsm.Session(id)
		timeouts[i] = sess.Timeout
	}
	s.mu.RUnlock()
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for i, id := range ids {
		t := time.Duration(timeouts[i]) * time.Millisecond
		s.live[id] = &liveSession{timeout: t, expireAt: s.roundToTick(now.Add(t))}
	}
}

func (d *durable) close() {
	if d.node != nil {
		d.node.Stop()
	}
	if d.wal != nil {
		d.wal.Close()
	}
	if d.lock != nil {
		d.lock.Close()
	}
}
