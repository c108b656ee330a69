package replica

import (
	"testing"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// entries returns entries lo..hi (inclusive) of term, each of size bytes.
func sizedEntries(term, lo, hi uint64, size int) []*raftpb.Entry {
	var out []*raftpb.Entry
	for i := lo; i <= hi; i++ {
		out = append(out, &raftpb.Entry{Index: proto.Uint64(i), Term: proto.Uint64(term), Data: make([]byte, size)})
	}
	return out
}

// TestLogSizeFollowsMemoryStorage applies the same operations to a
// raft.MemoryStorage and a logSize and compares the bytes after each.
func TestLogSizeFollowsMemoryStorage(t *testing.T) {
	steps := []struct {
		name string
		do   func(ms *raft.MemoryStorage, l *logSize)
	}{
		{"append 2..11 of 10 bytes", func(ms *raft.MemoryStorage, l *logSize) {
			e := sizedEntries(1, 2, 11, 10)
			ms.Append(e)
			l.append(e)
		}},
		{"overwrite from 8 with 3 entries of 100 bytes", func(ms *raft.MemoryStorage, l *logSize) {
			e := sizedEntries(2, 8, 10, 100)
			ms.Append(e)
			l.append(e)
		}},
		{"append 11..12 of 1 byte", func(ms *raft.MemoryStorage, l *logSize) {
			e := sizedEntries(2, 11, 12, 1)
			ms.Append(e)
			l.append(e)
		}},
		{"compact to 5", func(ms *raft.MemoryStorage, l *logSize) {
			ms.Compact(5)
			l.compact(5)
		}},
		{"append entries partly before the first", func(ms *raft.MemoryStorage, l *logSize) {
			e := sizedEntries(2, 4, 13, 7)
			ms.Append(e)
			l.append(e)
		}},
		{"compact to the last", func(ms *raft.MemoryStorage, l *logSize) {
			ms.Compact(13)
			l.compact(13)
		}},
		{"snapshot at 20", func(ms *raft.MemoryStorage, l *logSize) {
			ms.ApplySnapshot(&raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(20), Term: proto.Uint64(3)}})
			l.reset(20)
		}},
		{"append 21..30", func(ms *raft.MemoryStorage, l *logSize) {
			e := sizedEntries(3, 21, 30, 5)
			ms.Append(e)
			l.append(e)
		}},
	}
	ms := raft.NewMemoryStorage()
	ms.ApplySnapshot(&raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(1), Term: proto.Uint64(1)}})
	var l logSize
	l.reset(1)
	for _, s := range steps {
		s.do(ms, &l)
		first, _ := ms.FirstIndex()
		last, _ := ms.LastIndex()
		var want uint64
		if last >= first {
			ents, err := ms.Entries(first, last+1, 1<<62)
			if err != nil {
				t.Fatalf("%s: %v", s.name, err)
			}
			for _, e := range ents {
				want += uint64(len(e.GetData()))
			}
		}
		if l.total != want {
			t.Fatalf("after %s: logSize %d bytes, storage holds %d", s.name, l.total, want)
		}
	}
	if got := l.after(25); got != 25 {
		t.Errorf("after(25) = %d, want 5 entries × 5 bytes", got)
	}
	if got := l.after(0); got != l.total {
		t.Errorf("after(0) = %d, want the whole log %d", got, l.total)
	}
}
