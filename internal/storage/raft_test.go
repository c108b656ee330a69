package storage

import (
	"fmt"
	"io"
	"log"
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// raftMember is a lone raft member persisting its Readys through a WAL as
// the replica's Ready loop does: Save(rd.HardState, rd.Entries,
// rd.MustSync) before anything else.
type raftMember struct {
	t         *testing.T
	w         *WAL
	ms        *raft.MemoryStorage
	rn        *raft.RawNode
	committed []string // data of the normal entries committed, in order
	unsynced  int      // Saves made without mustSync
}

// startRaftMember starts a member from what ReadAll recovered, as the
// server does (commit raised to the snapshot's index), and makes it leader.
func startRaftMember(t *testing.T, w *WAL, snap *raftpb.SnapshotMetadata, hs *raftpb.HardState, es []*raftpb.Entry) *raftMember {
	t.Helper()
	ms := raft.NewMemoryStorage()
	if err := ms.ApplySnapshot(&raftpb.Snapshot{Metadata: snap}); err != nil {
		t.Fatal(err)
	}
	if !raft.IsEmptyHardState(hs) {
		hs = proto.CloneOf(hs)
		if hs.GetCommit() < snap.GetIndex() {
			hs.Commit = proto.Uint64(snap.GetIndex())
		}
		if err := ms.SetHardState(hs); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms.Append(es); err != nil {
		t.Fatal(err)
	}
	rn, err := raft.NewRawNode(&raft.Config{
		ID: 1, ElectionTick: 10, HeartbeatTick: 1, Storage: ms, Applied: snap.GetIndex(),
		MaxSizePerMsg: 1 << 20, MaxInflightMsgs: 256,
		Logger: &raft.DefaultLogger{Logger: log.New(io.Discard, "", 0)},
	})
	if err != nil {
		t.Fatal(err)
	}
	m := &raftMember{t: t, w: w, ms: ms, rn: rn}
	if err := rn.Campaign(); err != nil {
		t.Fatal(err)
	}
	m.drain()
	if st := rn.BasicStatus().RaftState; st != raft.StateLeader {
		t.Fatalf("the member is %v after campaigning, want leader", st)
	}
	return m
}

// drain handles Readys until there are none.
func (m *raftMember) drain() {
	m.t.Helper()
	for m.rn.HasReady() {
		rd := m.rn.Ready()
		if err := m.w.Save(rd.HardState, rd.Entries, rd.MustSync); err != nil {
			m.t.Fatalf("Save: %v", err)
		}
		if !rd.MustSync {
			m.unsynced++
		}
		if err := m.ms.Append(rd.Entries); err != nil {
			m.t.Fatal(err)
		}
		if !raft.IsEmptyHardState(rd.HardState) {
			if err := m.ms.SetHardState(rd.HardState); err != nil {
				m.t.Fatal(err)
			}
		}
		for _, e := range rd.CommittedEntries {
			if e.GetType() == raftpb.EntryType_EntryNormal && len(e.GetData()) > 0 {
				m.committed = append(m.committed, string(e.GetData()))
			}
		}
		m.rn.Advance(rd)
	}
}

// write proposes data and handles the Readys that commit it.
func (m *raftMember) write(data string) {
	m.t.Helper()
	if err := m.rn.Propose([]byte(data)); err != nil {
		m.t.Fatal(err)
	}
	m.drain()
	if got := m.committed; len(got) == 0 || got[len(got)-1] != data {
		m.t.Fatalf("%q is not committed", data)
	}
}

// TestWALRaftLoneMember drives the WAL with a real raft member. Each write
// takes two Readys — the entry (MustSync), then its commit (not MustSync)
// — and costs exactly one fdatasync. After a power cut the last commit is
// lost, yet the restarted member commits every write again.
func TestWALRaftLoneMember(t *testing.T) {
	mem := NewMemFS()
	fs := &countingFS{FS: mem}
	opts := WALOptions{SegmentSize: 1 << 20, Logger: quietLogger()}
	w, err := OpenWAL(fs, testDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	_, hs, es := mustReadAll(t, w)
	boot := snapMeta(1, 1) // voters: 1
	if err := w.SaveSnapshot(boot); err != nil {
		t.Fatal(err)
	}
	m := startRaftMember(t, w, boot, hs, es)
	fs.reset()
	m.unsynced = 0

	const n = 20
	var writes []string
	for i := range n {
		writes = append(writes, fmt.Sprintf("write %d", i))
		m.write(writes[i])
	}
	if got, want := fs.reset(), (syncCounts{datasync: n}); got != want {
		t.Errorf("%d writes cost %+v, want %+v", n, got, want)
	}
	if m.unsynced != n {
		t.Errorf("%d Saves without mustSync, want one per write (%d)", m.unsynced, n)
	}
	equalStrings(t, m.committed, writes)

	w.Close()
	mem.Crash()
	w, err = OpenWAL(fs, testDir, opts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	snap, hs, es := mustReadAll(t, w)
	last := lastIndex(snap.GetIndex(), es)
	if hs.GetCommit() != last-1 {
		t.Fatalf("recovered commit %d, want %d: only the last write's commit was unsynced (log ends at %d)", hs.GetCommit(), last-1, last)
	}
	m = startRaftMember(t, w, snap, hs, es)
	equalStrings(t, m.committed, writes)
}

func equalStrings(t *testing.T, got, want []string) {
	t.Helper()
	if len(got) != len(want) {
		t.Fatalf("got %d items %q, want %d %q", len(got), got, len(want), want)
	}
	for i := range got {
		if got[i] != want[i] {
			t.Fatalf("item %d: got %q, want %q", i, got[i], want[i])
		}
	}
}
