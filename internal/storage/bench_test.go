package storage

import (
	"bytes"
	"fmt"
	"testing"

	"go.etcd.io/raft/v3/raftpb"
)

// BenchmarkWALSave measures Save (with its fsync) on the real file system
// for batches of 1 KiB entries.
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
				if err := w.Save(hardState(1, 1, next-1), es); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/save")
		})
	}
}
