package bench

import (
	"bytes"
	"context"
	"os"
	"testing"
	"time"
)

// TestRunFsync runs the fsync workload briefly: one "fdatasync" phase
// that counted every write, no error, and no file left behind.
func TestRunFsync(t *testing.T) {
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Workload, cfg.Label, cfg.Dir = "fsync", "disk", dir
	cfg.Payload, cfg.Duration, cfg.Warmup = 100, 100*time.Millisecond, 20*time.Millisecond
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 1 {
		t.Fatalf("%d phases, want 1", len(res.Phases))
	}
	p := res.Phases[0]
	if p.Name != "fdatasync" || p.Ops == 0 || p.Errors != 0 || p.Latency.Count != p.Ops || p.Throughput <= 0 {
		t.Errorf("phase %q: ops %d errors %d (%s) latencies %d, %.0f/s", p.Name, p.Ops, p.Errors, p.FirstError, p.Latency.Count, p.Throughput)
	}
	if p.Clients != 1 || p.Inflight != 1 {
		t.Errorf("clients %d inflight %d, want one write at a time", p.Clients, p.Inflight)
	}
	if s := res.Settings; s.Dir != dir || s.Servers != "" || res.Label != "disk" {
		t.Errorf("settings %+v, label %q", s, res.Label)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d files in --dir", len(left))
	}
}

// TestSyncWriterGrows: writes that pass the preallocated size grow the
// file by another chunk and land one after the other.
func TestSyncWriterGrows(t *testing.T) {
	f, err := os.CreateTemp(t.TempDir(), "sync")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	w := &syncWriter{f: f, data: payload(1000), chunk: 4096}
	if err := w.grow(); err != nil {
		t.Fatal(err)
	}
	for range 10 {
		if err := w.write(); err != nil {
			t.Fatal(err)
		}
	}
	if w.off != 10_000 || w.size != 3*4096 {
		t.Errorf("offset %d, preallocated %d; want 10000, %d", w.off, w.size, 3*4096)
	}
	got, err := os.ReadFile(f.Name())
	if err != nil {
		t.Fatal(err)
	}
	if want := bytes.Repeat(payload(1000), 10); !bytes.Equal(got[:10_000], want) {
		t.Error("the writes did not land one after the other")
	}
	if len(got) != 3*4096 {
		t.Errorf("file of %d bytes, want %d (preallocated)", len(got), 3*4096)
	}
}
