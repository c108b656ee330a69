package bench

import (
	"context"
	"fmt"
	"os"

	"github.com/wardenzk/warden/client"
)

// fsyncChunk is how much of the fsync workload's file is preallocated at
// a time: once at the start, again whenever the writes reach its end.
const fsyncChunk = 64 << 20

// runFsync measures the disk's floor for a durable write, with no server:
// one file in Config.Dir (the disk to measure), preallocated as Warden's
// WAL preallocates its segments (fallocate where the file system has it),
// written Config.Payload bytes at a time at increasing offsets, each write
// followed by fdatasync before the next. Its one phase, "fdatasync",
// times each write and its fdatasync together, for Config.Duration (or
// Config.Ops writes) after Config.Warmup. The file is removed at the end.
//
// A server that makes every write durable before acknowledging it cannot
// answer one client's one write faster than this; the report puts the
// one-client create latency next to it.
func runFsync(ctx context.Context, e *env) error {
	f, err := os.CreateTemp(e.cfg.Dir, "warden-bench-fsync-*")
	if err != nil {
		return fmt.Errorf("bench: fsync: %w", err)
	}
	defer os.Remove(f.Name())
	defer f.Close()
	w := &syncWriter{f: f, data: payload(e.cfg.Payload), chunk: fsyncChunk}
	// The preallocation itself is made durable before the measured writes.
	if err := w.grow(); err != nil {
		return err
	}
	if err := datasync(f); err != nil {
		return fmt.Errorf("bench: fsync: %w", err)
	}
	p := e.phaseFor("fdatasync", 0, []*client.Conn{nil}, func(context.Context, *client.Conn, int64) error {
		return w.write()
	})
	p.inflight = 1
	pr, err := e.runPhase(ctx, p)
	if err != nil {
		return err
	}
	if pr.Errors > 0 {
		return fmt.Errorf("bench: fsync: %d writes failed: %s", pr.Errors, pr.FirstError)
	}
	return nil
}

// syncWriter appends data to a preallocated file, one durable write at a
// time. It is used by one goroutine at a time.
type syncWriter struct {
	f    *os.File
	data []byte
	// chunk is how many bytes grow preallocates.
	chunk int64
	// off is where the next write goes; size is the preallocated size.
	// Invariant: off <= size.
	off, size int64
}

// grow preallocates chunk more bytes at the end of the file.
func (w *syncWriter) grow() error {
	if err := preallocate(w.f, w.size, w.chunk); err != nil {
		return fmt.Errorf("bench: fsync: preallocating %s: %w", w.f.Name(), err)
	}
	w.size += w.chunk
	return nil
}

// write writes data at the next offset and fdatasyncs the file.
func (w *syncWriter) write() error {
	for w.off+int64(len(w.data)) > w.size {
		if err := w.grow(); err != nil {
			return err
		}
	}
	if _, err := w.f.WriteAt(w.data, w.off); err != nil {
		return err
	}
	w.off += int64(len(w.data))
	return datasync(w.f)
}

// writeZeros writes size zero bytes at off: preallocation where the file
// system cannot fallocate.
func writeZeros(f *os.File, off, size int64) error {
	zeros := make([]byte, min(size, 1<<20))
	for size > 0 {
		n := min(size, int64(len(zeros)))
		if _, err := f.WriteAt(zeros[:n], off); err != nil {
			return err
		}
		off += n
		size -= n
	}
	return nil
}
