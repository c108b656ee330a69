package crash

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/test/proc"
)

// Bounds of the test. Every wait is bounded by one of these.
const (
	ackDeadline     = 15 * time.Second // for the writers to reach a cycle's ack target
	requestDeadline = 20 * time.Second // one client request, waiting out a restart
	sessionTimeout  = 30 * time.Second // within tickTime 2000's bounds (4s..40s)
)

// TestKill9KeepsAcknowledgedWrites runs writers against `warden server`,
// kills the server with SIGKILL after a random number of acknowledged
// writes, restarts it on the same data directory, and checks after each
// restart that every acknowledged create and set is there with a version
// at least the acknowledged one (and never below what an earlier check
// saw). At the end, a client whose session survived every restart still
// owns its ephemeral node.
func TestKill9KeepsAcknowledgedWrites(t *testing.T) {
	seed := uint64(time.Now().UnixNano())
	if s := os.Getenv("WARDEN_CRASH_SEED"); s != "" {
		seed, _ = strconv.ParseUint(s, 10, 64)
	}
	t.Logf("seed %d (WARDEN_CRASH_SEED=%d reproduces the kill points)", seed, seed)
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))

	srv := newServer(t, proc.Warden(t))
	srv.Start(t)

	ctx := bounded(t, requestDeadline)
	owner := connect(t, srv.Addr)
	if _, err := owner.Create(ctx, "/crash", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, err := owner.Create(ctx, "/crash/eph", []byte("owned"), client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}

	const writers, keys = 4, 5
	h := newHistory()
	stop, stopWriters := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	errc := make(chan error, writers)
	for w := 0; w < writers; w++ {
		c := connect(t, srv.Addr)
		dir := fmt.Sprintf("/crash/w%d", w)
		if _, err := c.Create(ctx, dir, nil, client.Persistent, client.OpenACL); err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := write(stop, c, dir, keys, h); err != nil {
				errc <- err
			}
		}()
	}
	// Stop the writers before the cleanups close their connections and
	// kill the server (cleanups run last-registered first).
	t.Cleanup(func() {
		stopWriters()
		wg.Wait()
	})

	const cycles = 8
	seen := map[string]int32{} // the highest version a check observed, per path
	// reused counts, at each kill, the log's segments written over a
	// released one. The evidence (an earlier use's records after the
	// data) is mostly in a tail segment, so one look at the end can miss
	// reuse that happened.
	reused := 0
	for cycle := 1; cycle <= cycles; cycle++ {
		target := h.count() + 20 + rng.IntN(150)
		if err := h.waitFor(target, ackDeadline, errc); err != nil {
			t.Fatalf("cycle %d: %v", cycle, err)
		}
		srv.Kill9(t)
		killedAt := h.count()
		reused += reusedSegments(t, storage.WALDir(srv.dataDir))
		took := srv.Start(t)
		acked := h.snapshot()
		verify(t, srv.Addr, acked, seen)
		t.Logf("cycle %d: killed after %d acks (target %d), ready again in %v, %d paths checked",
			cycle, killedAt, target, took.Round(time.Millisecond), len(acked))
	}
	stopWriters()
	wg.Wait()
	select {
	case err := <-errc:
		t.Fatal(err)
	default:
	}

	// The owner reconnected after every restart within its timeout: its
	// session, and so its ephemeral, survived.
	st, ok, err := owner.Exists(ctx, "/crash/eph")
	switch {
	case err != nil:
		t.Fatalf("session of the ephemeral's owner after %d restarts: %v", cycles, err)
	case !ok:
		t.Fatalf("the ephemeral of a session that survived %d restarts is gone", cycles)
	case st.EphemeralOwner != owner.SessionID():
		t.Fatalf("ephemeral owner %#x, want the surviving session %#x", st.EphemeralOwner, owner.SessionID())
	}

	// The files are read with the server gone: a running one may be
	// releasing segments behind a snapshot as they are listed.
	srv.Kill9(t)
	snaps, _ := filepath.Glob(filepath.Join(srv.dataDir, "version-2", "snap-*.snap"))
	if len(snaps) == 0 {
		t.Errorf("no snapshot file in %s/version-2 after %d writes with snapCount=64: kills never met a snapshot", srv.dataDir, h.count())
	}
	if reused+reusedSegments(t, storage.WALDir(srv.dataDir)) == 0 {
		t.Errorf("no WAL segment in %s was written over a released one at any of the %d kills, after %d writes with preAllocSize=16: kills never met segment reuse",
			storage.WALDir(srv.dataDir), cycles, h.count())
	}
}

// ack is one acknowledged write of a path: the version the server returned
// and the writer's sequence number stored as the data.
type ack struct {
	version int32
	seq     int
}

// history records every acknowledged write.
type history struct {
	mu sync.Mutex
	// Invariant: acked[p] is the last acknowledged write of p (versions
	// and seqs grow with each one); n counts every acknowledgement.
	acked map[string]ack
	n     int
	tick  chan struct{} // signalled (without blocking) after each ack
}

func newHistory() *history {
	return &history{acked: map[string]ack{}, tick: make(chan struct{}, 1)}
}

// record notes an acknowledged write; it fails when the version went
// backwards relative to an earlier acknowledgement.
func (h *history) record(path string, a ack) error {
	h.mu.Lock()
	prev, ok := h.acked[path]
	h.acked[path] = a
	h.n++
	h.mu.Unlock()
	select {
	case h.tick <- struct{}{}:
	default:
	}
	if ok && a.version <= prev.version {
		return fmt.Errorf("%s: write %d acknowledged version %d after write %d had version %d", path, a.seq, a.version, prev.seq, prev.version)
	}
	return nil
}

func (h *history) count() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.n
}

func (h *history) snapshot() map[string]ack {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string]ack, len(h.acked))
	for p, a := range h.acked {
		m[p] = a
	}
	return m
}

// waitFor waits until n writes were acknowledged, a writer fails, or d passes.
func (h *history) waitFor(n int, d time.Duration, errc <-chan error) error {
	deadline := time.NewTimer(d)
	defer deadline.Stop()
	for h.count() < n {
		select {
		case <-h.tick:
		case err := <-errc:
			return err
		case <-deadline.C:
			return fmt.Errorf("only %d of %d writes acknowledged within %v", h.count(), n, d)
		}
	}
	return nil
}

// write creates keys nodes under dir and sets them round-robin until stop,
// recording every acknowledged write. A request cut by the kill has an
// unknown outcome (ErrConnectionLoss) and is not recorded; the next one
// waits for the reconnect.
func write(stop context.Context, c *client.Conn, dir string, keys int, h *history) error {
	created := make([]bool, keys)
	for seq := 1; ; seq++ {
		if stop.Err() != nil {
			return nil
		}
		k := seq % keys
		p := fmt.Sprintf("%s/k%d", dir, k)
		data := []byte(strconv.Itoa(seq))
		ctx, cancel := context.WithTimeout(stop, requestDeadline)
		var a ack
		var err error
		if created[k] {
			var st client.Stat
			st, err = c.Set(ctx, p, data, -1)
			a = ack{version: st.Version, seq: seq}
		} else {
			_, err = c.Create(ctx, p, data, client.Persistent, client.OpenACL)
			a = ack{version: 0, seq: seq}
		}
		cancel()
		switch {
		case err == nil:
			created[k] = true
			if err := h.record(p, a); err != nil {
				return err
			}
		case errors.Is(err, client.ErrConnectionLoss):
		case errors.Is(err, client.ErrNodeExists):
			created[k] = true // an earlier create whose reply the kill cut
		case stop.Err() != nil:
			return nil
		default:
			return fmt.Errorf("write %d to %s: %w", seq, p, err)
		}
	}
}

// verify reads every acknowledged path from a fresh session and checks its
// version and data against the acknowledgement and what earlier checks saw.
func verify(t *testing.T, addr string, acked map[string]ack, seen map[string]int32) {
	t.Helper()
	ctx := bounded(t, requestDeadline)
	c := connect(t, addr)
	defer c.Close()
	for p, a := range acked {
		data, st, err := c.Get(ctx, p)
		if err != nil {
			t.Fatalf("acknowledged %s (version %d, write %d) after restart: %v", p, a.version, a.seq, err)
		}
		got, err := strconv.Atoi(string(data))
		if err != nil {
			t.Fatalf("%s holds %q", p, data)
		}
		if st.Version < a.version || got < a.seq {
			t.Fatalf("%s went back: version %d write %d after restart, acknowledged version %d write %d", p, st.Version, got, a.version, a.seq)
		}
		if st.Version < seen[p] {
			t.Fatalf("%s went back: version %d, an earlier check saw %d", p, st.Version, seen[p])
		}
		seen[p] = st.Version
	}
}

// server is a `warden server` child process on a fixed data directory and
// port, restarted any number of times.
type server struct {
	proc.Server
	dataDir string
}

// newServer writes zoo.cfg in a fresh directory; the process is stopped
// (SIGKILL) in t.Cleanup, and its log printed if the test failed.
func newServer(t *testing.T, bin string) *server {
	t.Helper()
	dir := t.TempDir()
	port := freePort(t)
	s := &server{
		Server: proc.Server{
			Name:   "warden server",
			Bin:    bin,
			Config: filepath.Join(dir, "zoo.cfg"),
			Log:    filepath.Join(dir, "server.log"),
			Addr:   net.JoinHostPort("127.0.0.1", strconv.Itoa(port)),
		},
		dataDir: filepath.Join(dir, "data"),
	}
	// A small snapCount: kills also land during snapshots and log
	// compaction; small WAL segments (preAllocSize, KiB): during rolls,
	// and in segments written over released ones.
	cfg := fmt.Sprintf("tickTime=2000\nsnapCount=64\npreAllocSize=16\ndataDir=%s\nclientPort=%d\nclientPortAddress=127.0.0.1\nadmin.enableServer=false\n",
		s.dataDir, port)
	if err := os.WriteFile(s.Config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.Kill9(t)
		if t.Failed() {
			s.DumpLog(t)
		}
	})
	return s
}

// connect opens a session that reconnects quickly after a restart; it is
// closed in t.Cleanup.
func connect(t *testing.T, addr string) *client.Conn {
	t.Helper()
	ctx := bounded(t, requestDeadline)
	c, err := client.Connect(ctx, addr, client.WithSessionTimeout(sessionTimeout), client.WithBackoff(5*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func bounded(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// freePort returns a TCP port that was free a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// reusedSegments counts the segments of the WAL in dir that hold bytes
// other than zero after the end of their data: files written over after
// an earlier use as a segment.
func reusedSegments(t *testing.T, dir string) int {
	t.Helper()
	n := 0
	err := storage.ScanWAL(storage.OSFS, dir, func(s storage.WALSegment, _ []storage.WALRecord) error {
		data, err := os.ReadFile(s.Path)
		if err != nil {
			return err
		}
		if slices.ContainsFunc(data[s.End:], func(b byte) bool { return b != 0 }) {
			n++
		}
		return nil
	})
	if err != nil {
		t.Fatalf("reading the WAL in %s: %v", dir, err)
	}
	return n
}
