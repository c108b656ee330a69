package storage

import (
	"bytes"
	"fmt"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// BenchmarkWALSave measures Save with mustSync (one fdatasync) on the real
// file system for batches of 1 KiB entries.
func BenchmarkWALSave(b *testing.B) {
	for _, batch := range []int{1, 16, 256} {
		b.Run(fmt.Sprintf("batch=%d", batch), func(b *testing.B) {
			w, err := OpenWAL(OSFS, b.TempDir(), WALOptions{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			data := bytes.Repeat([]byte("x"), 1024)
			es := make([]*raftpb.Entry, batch)
			next := uint64(1)
			b.SetBytes(int64(batch * len(data)))
			b.ReportAllocs()
			for b.Loop() {
				for i := range es {
					es[i] = ent(next, 1, "")
					es[i].Data = data
					next++
				}
				if err := w.Save(hardState(1, 1, next-1), es, true); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/save")
		})
	}
}

// BenchmarkWALLoneMemberWrite measures one write of a lone raft member:
// two Readys, the 1 KiB entry (MustSync) and then its commit (not
// MustSync). "commit=synced" syncs the commit too, as Save did before it
// took mustSync: two syncs per write instead of one.
func BenchmarkWALLoneMemberWrite(b *testing.B) {
	for _, commitSynced := range []bool{true, false} {
		name := "commit=unsynced"
		if commitSynced {
			name = "commit=synced"
		}
		b.Run(name, func(b *testing.B) {
			w, err := OpenWAL(OSFS, b.TempDir(), WALOptions{Logger: quietLogger()})
			if err != nil {
				b.Fatal(err)
			}
			defer w.Close()
			if err := w.Save(hardState(1, 1, 0), nil, true); err != nil {
				b.Fatal(err)
			}
			data := bytes.Repeat([]byte("x"), 1024)
			next := uint64(1)
			b.ReportAllocs()
			for b.Loop() {
				e := ent(next, 1, "")
				e.Data = data
				if err := w.Save(nil, []*raftpb.Entry{e}, true); err != nil {
					b.Fatal(err)
				}
				if err := w.Save(hardState(1, 1, next), nil, commitSynced); err != nil {
					b.Fatal(err)
				}
				next++
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/write")
		})
	}
}
