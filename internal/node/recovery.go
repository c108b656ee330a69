package node

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/gcpace"
	"github.com/wardenzk/warden/internal/replica"
	"github.com/wardenzk/warden/internal/storage"
)

// disk is the member's persistent state: the data-dir lock, the WAL and
// the snapshot files.
type disk struct {
	lock  io.Closer
	wal   *storage.WAL
	snaps *storage.Snapshotter
}

func (d *disk) close() {
	if d.wal != nil {
		d.wal.Close()
	}
	if d.lock != nil {
		d.lock.Close()
	}
}

// recovered is what openDisk found.
type recovered struct {
	fsm    *fsm.FSM
	base   *raftpb.SnapshotMetadata // the snapshot the state machine is at
	hs     *raftpb.HardState
	ents   []*raftpb.Entry // entries after base
	source string          // for the start-up log line
	// snapAt is the modification time of the snapshot file recovered
	// from; nil when the state did not come from one.
	snapAt *time.Time
	took   time.Duration // reading the snapshot and the WAL
}

// Bootstrap returns the snapshot metadata a fresh member of the given
// membership starts from; every member of a new ensemble computes the
// same. An empty membership is a standalone member alone.
func Bootstrap(self MemberID, members []Member) *raftpb.SnapshotMetadata {
	voters, learners := confState(self, members)
	return replica.BootstrapSnapshot(voters, learners)
}

// walRead is what readWAL recovered.
type walRead struct {
	keepAfter uint64
	wal       *storage.WAL // nil when OpenWAL failed
	snap      *raftpb.SnapshotMetadata
	hs        *raftpb.HardState
	ents      []*raftpb.Entry
	err       error
}

// readWAL opens the WAL and reads it for recovery from the snapshot at
// keepAfter (storage.WALOptions.KeepAfter).
func readWAL(cfg *Config, log *slog.Logger, keepAfter uint64) walRead {
	r := walRead{keepAfter: keepAfter}
	dir := storage.WALDir(cfg.DataLogDir)
	r.wal, r.err = storage.OpenWAL(cfg.FS, dir, storage.WALOptions{
		SegmentSize: cfg.WALSegmentSize,
		NoSync:      !cfg.ForceSync,
		Logger:      log,
		KeepAfter:   keepAfter,
		SlowSync:    cfg.SlowSync,
		OnSync:      cfg.Metrics.ObserveFsync,
	})
	if r.err != nil {
		r.err = fmt.Errorf("node: open write-ahead log in %s: %w", dir, r.err)
		return r
	}
	r.snap, r.hs, r.ents, r.err = r.wal.ReadAll()
	if r.err != nil {
		r.err = fmt.Errorf("node: read write-ahead log: %w", r.err)
	}
	return r
}

// close closes the WAL r opened, if any.
func (r walRead) close() {
	if r.wal != nil {
		r.wal.Close()
	}
}

// confState returns the raft voters and learners of a membership, sorted.
func confState(self MemberID, members []Member) (voters, learners []uint64) {
	if len(members) == 0 {
		return []uint64{self.RaftID()}, nil
	}
	for _, m := range members {
		if m.Observer {
			learners = append(learners, m.ID.RaftID())
		} else {
			voters = append(voters, m.ID.RaftID())
		}
	}
	slices.Sort(voters)
	slices.Sort(learners)
	return voters, learners
}

// openDisk locks the data directory and recovers the newest valid
// snapshot and the WAL after it.
func openDisk(cfg *Config, log *slog.Logger) (*disk, *recovered, error) {
	fs := cfg.FS
	if err := storage.MkdirAllDurable(fs, storage.SnapDir(cfg.DataDir)); err != nil {
		return nil, nil, fmt.Errorf("node: create dataDir %s: %w", cfg.DataDir, err)
	}
	lock, err := fs.Lock(storage.LockPath(cfg.DataDir))
	if err != nil {
		if errors.Is(err, storage.ErrLocked) {
			return nil, nil, fmt.Errorf("node: dataDir %s is in use by another server (%s is locked): stop it, or give this one its own dataDir", cfg.DataDir, storage.LockPath(cfg.DataDir))
		}
		return nil, nil, fmt.Errorf("node: lock dataDir: %w", err)
	}
	d := &disk{lock: lock}
	fail := func(err error) (*disk, *recovered, error) {
		d.close()
		return nil, nil, err
	}

	d.snaps = storage.NewSnapshotter(fs, storage.SnapDir(cfg.DataDir), cfg.SnapRetain, log)
	rec := &recovered{}
	// The snapshot and the WAL are read with the collector relaxed: the
	// WAL's segments are read whole, and at the default GOGC their
	// allocation would make the reader mark the tree just loaded.
	defer gcpace.Relax()()
	if !cfg.ForceSync {
		log.Warn("forceSync=no: the write-ahead log is never fsynced; a power cut loses acknowledged writes. Use it only for tests.")
	}
	// The WAL is read while the snapshot loads, on the guess that the
	// newest snapshot file is the one that loads (its entries after that
	// snapshot are the ones recovery needs); when an older one loads
	// instead, the WAL is read again for it.
	var guess uint64
	if infos, err := d.snaps.List(); err == nil && len(infos) > 0 {
		guess = infos[len(infos)-1].Index
	}
	walc := make(chan walRead, 1)
	go func() { walc <- readWAL(cfg, log, guess) }()
	meta, err := d.snaps.LoadNewest(func(m *raftpb.SnapshotMetadata, r io.Reader) error {
		f, err := fsm.Restore(cfg.FSM, r)
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
		if infos, err := d.snaps.List(); err == nil {
			for _, in := range infos {
				if in.Index == meta.GetIndex() && in.Term == meta.GetTerm() {
					if fi, err := fs.Stat(in.Path); err == nil {
						at := fi.ModTime()
						rec.snapAt = &at
					}
				}
			}
		}
	case errors.Is(err, storage.ErrNoSnapshot):
	default:
		wr := <-walc
		wr.close()
		return fail(fmt.Errorf("node: load snapshot from %s: %w", storage.SnapDir(cfg.DataDir), err))
	}

	wr := <-walc
	if wr.keepAfter != rec.base.GetIndex() {
		wr.close()
		wr = readWAL(cfg, log, rec.base.GetIndex())
	}
	if wr.err != nil {
		wr.close()
		return fail(wr.err)
	}
	d.wal = wr.wal
	walSnap, hs, ents := wr.snap, wr.hs, wr.ents
	switch {
	case rec.base != nil:
	case walSnap.GetIndex() > replica.BootstrapIndex:
		return fail(fmt.Errorf("node: the write-ahead log starts after snapshot %d, but no valid snapshot file is in %s; restore the snapshot files or start from an empty dataDir",
			walSnap.GetIndex(), storage.SnapDir(cfg.DataDir)))
	default:
		// A fresh data directory (or one whose only state is the bootstrap
		// marker): an empty state machine at index 1.
		rec.base = Bootstrap(cfg.ID, cfg.Members)
		rec.fsm = fsm.New(cfg.FSM)
		rec.source = "empty data directory"
		if walSnap.GetIndex() == 0 {
			if err := d.wal.SaveSnapshot(rec.base); err != nil {
				return fail(fmt.Errorf("node: initialise write-ahead log: %w", err))
			}
		} else {
			// The bootstrap marker, with the membership it was made for.
			rec.base = walSnap
			rec.source = "write-ahead log"
		}
	}
	for _, e := range ents {
		if e.GetIndex() > rec.base.GetIndex() {
			rec.ents = append(rec.ents, e)
		}
	}
	if err := checkMembership(cfg, rec.base.GetConfState(), rec.ents); err != nil {
		return fail(err)
	}
	if walSnap.GetIndex() < rec.base.GetIndex() {
		// The snapshot file is newer than the WAL's last marker (a crash
		// between the two, or an imported data directory): mark it.
		if err := d.wal.SaveSnapshot(rec.base); err != nil {
			return fail(fmt.Errorf("node: mark snapshot in write-ahead log: %w", err))
		}
	}
	rec.hs = hs
	return d, rec, nil
}

// checkMembership refuses a data directory made for another membership
// than zoo.cfg's server lines: raft would go on with the recorded one, and
// the member would not be what the configuration says. A reconfig changes
// the membership with a conf change entry, and the member rewrites its
// server lines (the dynamic configuration file) only once it applied it:
// the lines may name the membership of base (the snapshot recovered from)
// or the one after any conf change entry of ents (the log after it), the
// last of which may not even have been committed when the member stopped.
func checkMembership(cfg *Config, base *raftpb.ConfState, ents []*raftpb.Entry) error {
	voters, learners := confState(cfg.ID, cfg.Members)
	gotV := slices.Sorted(slices.Values(base.GetVoters()))
	gotL := slices.Sorted(slices.Values(base.GetLearners()))
	for i := 0; ; i++ {
		// Learners zoo.cfg does not name may be members a reconfig
		// removed, draining (see DrainTime).
		if slices.Equal(voters, gotV) && subset(learners, gotL) {
			return nil
		}
		for i < len(ents) && !isConfChange(ents[i]) {
			i++
		}
		if i == len(ents) {
			break
		}
		cc, err := confChangeOf(ents[i])
		if err != nil {
			return fmt.Errorf("node: write-ahead log entry %d: %w", ents[i].GetIndex(), err)
		}
		gotV, gotL = applyConfChange(gotV, gotL, cc)
	}
	return fmt.Errorf("node: the data directory %s belongs to an ensemble whose members are %s, but zoo.cfg gives %s: "+
		"use the server.N lines the data was written with, or start this member from an empty dataDir so it joins by snapshot",
		cfg.DataDir, describeMembers(gotV, gotL), describeMembers(voters, learners))
}

// subset reports whether every id of a is in b.
func subset(a, b []uint64) bool {
	for _, id := range a {
		if !slices.Contains(b, id) {
			return false
		}
	}
	return true
}

func isConfChange(e *raftpb.Entry) bool {
	t := e.GetType()
	return t == raftpb.EntryType_EntryConfChange || t == raftpb.EntryType_EntryConfChangeV2
}

// confChangeOf decodes a conf change entry.
func confChangeOf(e *raftpb.Entry) (*raftpb.ConfChangeV2, error) {
	if e.GetType() == raftpb.EntryType_EntryConfChange {
		var cc raftpb.ConfChange
		if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
			return nil, err
		}
		return cc.AsV2(), nil
	}
	var cc raftpb.ConfChangeV2
	if err := proto.Unmarshal(e.GetData(), &cc); err != nil {
		return nil, err
	}
	return &cc, nil
}

// applyConfChange returns the sorted voters and learners the membership
// has once cc completes (a joint configuration's incoming side; leaving
// it changes nothing).
func applyConfChange(voters, learners []uint64, cc *raftpb.ConfChangeV2) ([]uint64, []uint64) {
	voters, learners = slices.Clone(voters), slices.Clone(learners)
	for _, c := range cc.GetChanges() {
		id := c.GetNodeId()
		voters = slices.DeleteFunc(voters, func(x uint64) bool { return x == id })
		learners = slices.DeleteFunc(learners, func(x uint64) bool { return x == id })
		switch c.GetType() {
		case raftpb.ConfChangeType_ConfChangeAddNode:
			voters = append(voters, id)
		case raftpb.ConfChangeType_ConfChangeAddLearnerNode:
			learners = append(learners, id)
		}
	}
	slices.Sort(voters)
	slices.Sort(learners)
	return voters, learners
}

func describeMembers(voters, learners []uint64) string {
	if len(voters) == 1 && len(learners) == 0 && voters[0] == 1 {
		return "[standalone]"
	}
	s := "["
	for i, v := range voters {
		if i > 0 {
			s += " "
		}
		s += "server." + MemberOf(v).String()
	}
	for _, l := range learners {
		s += " server." + MemberOf(l).String() + ":observer"
	}
	return s + "]"
}

// raftStorage builds raft's storage from what was recovered. It returns
// the index up to which the recovered log is known to be committed.
func raftStorage(rec *recovered) (*raft.MemoryStorage, uint64, error) {
	ms := raft.NewMemoryStorage()
	if err := ms.ApplySnapshot(&raftpb.Snapshot{Metadata: rec.base}); err != nil {
		return nil, 0, fmt.Errorf("node: recovered snapshot: %w", err)
	}
	commit := rec.base.GetIndex()
	if rec.hs != nil && !raft.IsEmptyHardState(rec.hs) {
		hs := proto.CloneOf(rec.hs)
		if hs.GetCommit() < commit {
			hs.Commit = proto.Uint64(commit)
		}
		commit = hs.GetCommit()
		if err := ms.SetHardState(hs); err != nil {
			return nil, 0, fmt.Errorf("node: recovered hard state: %w", err)
		}
	}
	if err := ms.Append(rec.ents); err != nil {
		return nil, 0, fmt.Errorf("node: recovered log: %w", err)
	}
	last, _ := ms.LastIndex()
	if commit > last {
		return nil, 0, fmt.Errorf("node: the log was committed up to %d but holds entries only up to %d: entries are missing", commit, last)
	}
	return ms, commit, nil
}
