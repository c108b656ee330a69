package storage

import (
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// walModel is what a writer knows it stored: the log as ReadAll must return it.
type walModel struct {
	snap uint64
	hs   *raftpb.HardState
	ents []*raftpb.Entry // entries after snap
	// unsynced are the HardStates saved without mustSync after hs, which
	// ReadAll may return instead of it: the next synced call makes the
	// last of them hs.
	unsynced []*raftpb.HardState
}

// synced is m after a call that synced: every HardState written is durable.
func (m walModel) synced() walModel {
	if len(m.unsynced) > 0 {
		m.hs = m.unsynced[len(m.unsynced)-1]
		m.unsynced = nil
	}
	return m
}

func (m walModel) last() uint64 {
	if len(m.ents) == 0 {
		return m.snap
	}
	return m.ents[len(m.ents)-1].GetIndex()
}

// crashWorkload drives a WAL the way a raft Ready loop does: batches of
// entries with a hard state, and now and then a snapshot marker and a
// release. With unsyncedCommit, it saves as a lone raft member does: each
// batch synced with an unchanged hard state, then the commit of the batch
// without mustSync; otherwise each batch goes with the commit of the
// previous one in one synced Save. It records in acked what each
// successful call made durable and in inflight what the failing call (if
// any) tried to add. It stops at the first error.
func crashWorkload(fs *MemFS, unsyncedCommit bool, acked, inflight *walModel) {
	*acked = walModel{hs: &raftpb.HardState{}}
	*inflight = *acked
	opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
	w, err := OpenWAL(fs, testDir, opts)
	if err != nil {
		return
	}
	defer w.Close()
	for step := uint64(1); step <= 30; step++ {
		m := *acked
		m.ents = append([]*raftpb.Entry(nil), acked.ents...)
		if step%10 == 0 {
			idx := acked.last() - 2
			m.snap = idx
			m.ents = m.ents[len(m.ents)-2:]
			m = m.synced()
			*inflight = m
			if err := w.SaveSnapshot(snapMeta(idx, 1)); err != nil {
				return
			}
			*acked = m
			if err := w.ReleaseTo(idx); err != nil {
				return
			}
			continue
		}
		var batch []*raftpb.Entry
		for i := range step%4 + 1 {
			idx := m.last() + 1
			batch = append(batch, ent(idx, 1, fmt.Sprintf("step %d entry %d %s", step, i, strings.Repeat("d", int(step*37%400)))))
			m.ents = append(m.ents, batch[len(batch)-1])
		}
		if !unsyncedCommit {
			m.hs = hardState(1, 1, acked.last())
			*inflight = m
			if err := w.Save(m.hs, batch, true); err != nil {
				return
			}
			*acked = m
			continue
		}
		m = m.synced()
		*inflight = m
		if err := w.Save(nil, batch, true); err != nil {
			return
		}
		*acked = m
		hs := hardState(1, 1, m.last())
		m.unsynced = append(m.unsynced[:len(m.unsynced):len(m.unsynced)], hs)
		*inflight = m
		if err := w.Save(hs, nil, false); err != nil {
			return
		}
		*acked = m
	}
}

// checkRecovered opens the WAL after a crash and checks that every
// acknowledged write is there and nothing else but a prefix of the failing
// call's writes, then that the WAL accepts and keeps new writes.
func checkRecovered(t *testing.T, fs *MemFS, acked, inflight walModel) {
	t.Helper()
	opts := WALOptions{SegmentSize: 4096, Logger: quietLogger()}
	w, err := OpenWAL(fs, testDir, opts)
	if err != nil {
		t.Fatalf("OpenWAL after crash: %v", err)
	}
	snap, hs, es, err := w.ReadAll()
	if err != nil {
		t.Fatalf("ReadAll after crash: %v", err)
	}
	if snap.GetIndex() != acked.snap && snap.GetIndex() != inflight.snap {
		t.Fatalf("snapshot marker %d, want %d or %d", snap.GetIndex(), acked.snap, inflight.snap)
	}
	allowed := append([]*raftpb.HardState{acked.hs, inflight.hs}, acked.unsynced...)
	allowed = append(allowed, inflight.unsynced...)
	if !slices.ContainsFunc(allowed, func(h *raftpb.HardState) bool { return proto.Equal(hs, h) }) {
		t.Fatalf("hard state %v, want one of %v", hs, allowed)
	}
	// The entries must be those of acked or inflight (after the recovered
	// marker), holding at least all acknowledged ones.
	all := inflight.ents
	if snap.GetIndex() != inflight.snap { // the failing call was SaveSnapshot
		all = acked.ents
	}
	var want []*raftpb.Entry
	for _, e := range all {
		if e.GetIndex() > snap.GetIndex() {
			want = append(want, e)
		}
	}
	if len(es) > len(want) {
		t.Fatalf("recovered %s, more than was ever written (%s)", describe(es), describe(want))
	}
	equalEntries(t, es, want[:len(es)])
	if got, min := lastIndex(snap.GetIndex(), es), acked.last(); got < min {
		t.Fatalf("recovered log ends at %d, acknowledged up to %d: %s", got, min, describe(es))
	}
	if c, last := hs.GetCommit(), lastIndex(snap.GetIndex(), es); c > last {
		t.Fatalf("recovered commit %d is beyond the log's last index %d", c, last)
	}
	// The recovered WAL is writable and durable again.
	next := ent(lastIndex(snap.GetIndex(), es)+1, 2, "after the crash")
	if err := w.Save(hardState(2, 1, 0), []*raftpb.Entry{next}, true); err != nil {
		t.Fatalf("Save after recovery: %v", err)
	}
	w.Close()
	fs.Crash()
	w, err = OpenWAL(fs, testDir, opts)
	if err != nil {
		t.Fatalf("second OpenWAL: %v", err)
	}
	defer w.Close()
	_, _, es2, _ := w.ReadAll()
	if len(es2) == 0 || !proto.Equal(es2[len(es2)-1], next) {
		t.Fatalf("entry saved after recovery is lost: %s", describe(es2))
	}
}

func lastIndex(snap uint64, es []*raftpb.Entry) uint64 {
	if len(es) == 0 {
		return snap
	}
	return es[len(es)-1].GetIndex()
}

// TestWALCrashAtEveryOperation cuts the power after the nth file operation
// of the workload, for every n, with unsynced data dropped cleanly or torn,
// with commits saved with their batch or on their own without sync.
func TestWALCrashAtEveryOperation(t *testing.T) {
	for _, unsyncedCommit := range []bool{false, true} {
		t.Run(fmt.Sprintf("unsyncedCommit=%v", unsyncedCommit), func(t *testing.T) {
			fs := NewMemFS()
			var acked, inflight walModel
			crashWorkload(fs, unsyncedCommit, &acked, &inflight)
			total := fs.Ops()
			if acked.last() < 40 || acked.snap == 0 || !strings.HasPrefix(filepath.Base(segmentPaths(t, fs)[0]), "0000000000000003") {
				t.Fatalf("workload did too little: %+v", acked)
			}
			if reusedSegments(t, fs) == 0 {
				t.Fatal("the workload never wrote a segment over a spare: the crashes would not test reuse")
			}
			t.Logf("crashing at each of %d file operations", total)
			for _, torn := range []bool{false, true} {
				t.Run(fmt.Sprintf("torn=%v", torn), func(t *testing.T) {
					for n := 1; n <= total; n++ {
						fs := NewMemFS()
						fs.StopAfter(n)
						var acked, inflight walModel
						crashWorkload(fs, unsyncedCommit, &acked, &inflight)
						if torn {
							fs.CrashTorn(rand.New(rand.NewPCG(uint64(n), 7)))
						} else {
							fs.Crash()
						}
						t.Run(fmt.Sprint(n), func(t *testing.T) { checkRecovered(t, fs, acked, inflight) })
					}
				})
			}
		})
	}
}
