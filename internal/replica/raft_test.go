package replica

import (
	"bytes"
	"fmt"
	"io"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// memWAL records what the node saved, as a real WAL would make durable.
type memWAL struct {
	mu    sync.Mutex
	hs    *raftpb.HardState
	ents  []*raftpb.Entry
	snap  *raftpb.SnapshotMetadata
	saves int
	// released is the highest index passed to ReleaseTo.
	released uint64
}

func (w *memWAL) Save(hs *raftpb.HardState, ents []*raftpb.Entry) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saves++
	if hs != nil && !raft.IsEmptyHardState(hs) {
		w.hs = proto.Clone(hs).(*raftpb.HardState)
	}
	for _, e := range ents {
		// A later entry replaces the suffix from its index on.
		for len(w.ents) > 0 && w.ents[len(w.ents)-1].GetIndex() >= e.GetIndex() {
			w.ents = w.ents[:len(w.ents)-1]
		}
		w.ents = append(w.ents, proto.Clone(e).(*raftpb.Entry))
	}
	return nil
}

func (w *memWAL) SaveSnapshot(meta *raftpb.SnapshotMetadata) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.snap = proto.Clone(meta).(*raftpb.SnapshotMetadata)
	return nil
}

func (w *memWAL) ReleaseTo(index uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.released = index
	return nil
}

// recover builds the raft storage a restart would see.
func (w *memWAL) recover(t *testing.T) (*raft.MemoryStorage, uint64) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	ms := raft.NewMemoryStorage()
	if err := ms.ApplySnapshot(&raftpb.Snapshot{Metadata: w.snap}); err != nil {
		t.Fatal(err)
	}
	if w.hs != nil {
		ms.SetHardState(w.hs)
	}
	var after []*raftpb.Entry
	for _, e := range w.ents {
		if e.GetIndex() > w.snap.GetIndex() {
			after = append(after, e)
		}
	}
	if err := ms.Append(after); err != nil {
		t.Fatal(err)
	}
	return ms, w.snap.GetIndex()
}

type memSnaps struct {
	mu    sync.Mutex
	saved []*raftpb.SnapshotMetadata
	data  [][]byte
}

func (s *memSnaps) Save(meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return err
	}
	s.mu.Lock()
	s.saved = append(s.saved, meta)
	s.data = append(s.data, b.Bytes())
	s.mu.Unlock()
	return nil
}

// applier collects applied entries; waitFor blocks until it has n.
type applier struct {
	mu      sync.Mutex
	cond    *sync.Cond
	got     []string
	indexes []uint64
}

func newApplier() *applier {
	a := &applier{}
	a.cond = sync.NewCond(&a.mu)
	return a
}

func (a *applier) apply(index, term uint64, data []byte) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.got = append(a.got, string(data))
	a.indexes = append(a.indexes, index)
	a.cond.Broadcast()
}

func (a *applier) waitFor(t *testing.T, n int) {
	t.Helper()
	timer := time.AfterFunc(10*time.Second, func() {
		a.mu.Lock()
		defer a.mu.Unlock()
		t.Errorf("applied %d of %d entries within 10s", len(a.got), n)
		n = -1
		a.cond.Broadcast()
	})
	defer timer.Stop()
	a.mu.Lock()
	defer a.mu.Unlock()
	for n >= 0 && len(a.got) < n {
		a.cond.Wait()
	}
	if n < 0 {
		t.FailNow()
	}
}

// waitUntil polls cond (bounded at 10s).
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not met within 10s")
		}
		time.Sleep(time.Millisecond)
	}
}

func startTestNode(t *testing.T, wal *memWAL, ms *raft.MemoryStorage, applied uint64, snaps *memSnaps, a *applier, snapCount uint64) *Node {
	t.Helper()
	n, err := StartNode(Config{
		ID: 1, Storage: ms, Applied: applied, WAL: wal, Snapshots: snaps, SnapCount: snapCount,
		TakeSnapshot: func() func(io.Writer) error {
			a.mu.Lock()
			state := fmt.Sprint(len(a.got))
			a.mu.Unlock()
			return func(w io.Writer) error { _, err := io.WriteString(w, state); return err }
		},
		Apply: a.apply,
		Tick:  time.Millisecond,
		Fatal: func(err error) { t.Errorf("fatal: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	return n
}

func TestNodeAppliesDurableEntriesInOrderAndRecovers(t *testing.T) {
	wal := &memWAL{snap: BootstrapSnapshot(1)}
	ms, applied := wal.recover(t)
	snaps := &memSnaps{}
	const rounds, per = 5, 150
	const n1 = rounds * per
	a := newApplier()
	node := startTestNode(t, wal, ms, applied, snaps, a, 100)
	for r := 0; r < rounds; r++ {
		for i := r * per; i < (r+1)*per; i++ {
			if err := node.Propose([]byte(fmt.Sprint(i))); err != nil {
				t.Fatal(err)
			}
		}
		a.waitFor(t, (r+1)*per)
		// Snapshots are written in the background one at a time: let this
		// round's finish (and be marked in the WAL) before the next.
		waitUntil(t, func() bool {
			wal.mu.Lock()
			defer wal.mu.Unlock()
			return wal.snap.GetIndex() >= uint64(r*per)
		})
	}
	node.Stop()
	for i, got := range a.got {
		if got != fmt.Sprint(i) {
			t.Fatalf("entry %d applied as %q", i, got)
		}
		if i > 0 && a.indexes[i] <= a.indexes[i-1] {
			t.Fatalf("indexes not increasing: %v", a.indexes[i-1:i+1])
		}
	}
	// Every applied entry was saved to the WAL first.
	wal.mu.Lock()
	last := wal.ents[len(wal.ents)-1].GetIndex()
	saves := wal.saves
	wal.mu.Unlock()
	if last < a.indexes[n1-1] {
		t.Fatalf("applied index %d beyond the WAL's last entry %d", a.indexes[n1-1], last)
	}
	if saves >= n1 {
		t.Logf("note: %d WAL saves for %d proposals (no batching happened)", saves, n1)
	}
	// Snapshots were taken every ~100 entries and the log compacted
	// behind the previous one.
	snaps.mu.Lock()
	nsnaps := len(snaps.saved)
	snaps.mu.Unlock()
	if nsnaps < 3 {
		t.Fatalf("%d snapshots for %d entries in %d rounds with SnapCount 100", nsnaps, n1, rounds)
	}
	if wal.snap.GetIndex() <= 1 || wal.released == 0 || wal.released >= wal.snap.GetIndex() {
		t.Fatalf("snapshot marker %d, released to %d: want 1 < released < marker", wal.snap.GetIndex(), wal.released)
	}

	// Restart from what the WAL holds: only entries after the snapshot
	// are applied again, then new proposals continue the log.
	ms2, applied2 := wal.recover(t)
	// What must be applied again: the data entries after the snapshot
	// (empty leader entries are never applied), then the new proposal.
	var want []string
	for i, idx := range a.indexes {
		if idx > applied2 {
			want = append(want, a.got[i])
		}
	}
	want = append(want, "after restart")
	b := newApplier()
	node2 := startTestNode(t, wal, ms2, applied2, snaps, b, 100)
	defer node2.Stop()
	if err := node2.Propose([]byte("after restart")); err != nil {
		t.Fatal(err)
	}
	b.waitFor(t, len(want))
	if fmt.Sprint(b.got) != fmt.Sprint(want) {
		t.Fatalf("after restart applied %v, want %v", b.got, want)
	}
	if b.indexes[0] <= applied2 {
		t.Fatalf("replay applied index %d, at or before the snapshot %d", b.indexes[0], applied2)
	}
	term, _ := ms2.Term(b.indexes[len(b.indexes)-1])
	if term <= 1 {
		t.Fatalf("the restarted member did not start a new term: %d", term)
	}
}

func TestSnapshotBySize(t *testing.T) {
	wal := &memWAL{snap: BootstrapSnapshot(1)}
	ms, applied := wal.recover(t)
	snaps := &memSnaps{}
	a := newApplier()
	n, err := StartNode(Config{
		ID: 1, Storage: ms, Applied: applied, WAL: wal, Snapshots: snaps,
		SnapCount: 1 << 30, SnapBytes: 10 << 10, // count never triggers; 10 KiB does
		TakeSnapshot: func() func(io.Writer) error { return func(io.Writer) error { return nil } },
		Apply:        a.apply, Tick: time.Millisecond,
		Fatal: func(err error) { t.Errorf("fatal: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	defer n.Stop()
	for i := 0; i < 30; i++ { // 30 KiB of data
		n.Propose(bytes.Repeat([]byte{'x'}, 1024))
		a.waitFor(t, i+1)
	}
	waitUntil(t, func() bool {
		snaps.mu.Lock()
		defer snaps.mu.Unlock()
		return len(snaps.saved) >= 2
	})
}

func TestProposeAfterStopFails(t *testing.T) {
	wal := &memWAL{snap: BootstrapSnapshot(1)}
	ms, applied := wal.recover(t)
	node := startTestNode(t, wal, ms, applied, nil, newApplier(), 100)
	node.Stop()
	if err := node.Propose([]byte("x")); err != ErrStopped {
		t.Fatalf("Propose after Stop = %v", err)
	}
}
