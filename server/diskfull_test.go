package server

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/fakeclock"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/wire"
)

// logSink collects the server's logs (safe for its goroutines) and closes
// pausedCh when the node logs that writes are paused for a full disk,
// resumedCh when it logs that they resumed.
type logSink struct {
	mu                      sync.Mutex
	b                       bytes.Buffer
	pausedOnce, resumedOnce sync.Once
	pausedCh                chan struct{}
	resumedCh               chan struct{}
}

func newLogSink() *logSink {
	return &logSink{pausedCh: make(chan struct{}), resumedCh: make(chan struct{})}
}

func (b *logSink) Write(p []byte) (int, error) {
	if bytes.Contains(p, []byte("disk full: writes are paused")) {
		b.pausedOnce.Do(func() { close(b.pausedCh) })
	}
	if bytes.Contains(p, []byte("writes resumed")) {
		b.resumedOnce.Do(func() { close(b.resumedCh) })
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *logSink) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// diskFullServer starts a durable server on fs at /data whose logs go to
// logs; a Fatal call fails the test (a full disk is never fatal).
func diskFullServer(t *testing.T, fs storage.FS, logs io.Writer, snapCount int) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir, cfg.DataLogDir = "/data", "/data"
	if snapCount > 0 {
		cfg.SnapCount = snapCount
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := Start(cfg, Options{
		Logger: slog.New(slog.NewTextHandler(logs, nil)),
		Now:    fakeclock.New(time.Now()).Now, Listener: ln, DisableTimers: true, FS: fs,
		Fatal: func(err error) { t.Errorf("fatal error on a full disk: %v", err) },
	})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

// TestDiskFull fills the disk under a running server: writes wait (a client
// with a short deadline gives up), reads, 4lw commands and other sessions
// keep working, and when space returns the waiting writes complete in order
// and new ones are accepted. A power cut afterwards loses nothing that was
// acknowledged.
func TestDiskFull(t *testing.T) {
	for _, tc := range []struct {
		name      string
		snapCount int // 0: the default (no snapshot during the test)
	}{
		{name: "wal"},
		{name: "with-snapshots", snapCount: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fs := storage.NewFullFS()
			logs := newLogSink()
			srv := diskFullServer(t, fs, logs, tc.snapCount)
			writer, reader := dial(t, srv), dial(t, srv)
			ctx := ctx30(t)
			acked := map[string]string{}
			create := func(c *client.Conn, p, v string) {
				t.Helper()
				if _, err := c.Create(ctx, p, []byte(v), client.Persistent, client.OpenACL); err != nil {
					t.Fatalf("create %s: %v", p, err)
				}
				acked[p] = v
			}
			for _, p := range []string{"/a", "/b", "/c", "/d"} {
				create(writer, p, "before")
			}

			fs.SetFull(true)
			// A write with a short deadline is not acknowledged.
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			_, err := writer.Create(short, "/short", []byte("x"), client.Persistent, client.OpenACL)
			cancel()
			if !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("create on a full disk: err %v, want the context's deadline (the write waits)", err)
			}
			// The server says why writes wait.
			select {
			case <-logs.pausedCh:
			case <-ctx.Done():
				t.Fatalf("no log line says that writes wait for disk space; logs:\n%s", logs.String())
			}
			// While paused, a new write is refused at once with the
			// retryable THROTTLEDOP rather than queued without bound (new
			// sessions are refused too: creating one is a write).
			other := reader
			if _, err := other.Set(ctx, "/a", []byte("during"), 0); !errors.Is(err, wire.ErrThrottled) {
				t.Fatalf("write while the disk is full: %v, want THROTTLEDOP", err)
			}
			brief, cancelBrief := context.WithTimeout(ctx, 500*time.Millisecond)
			if c, err := client.Connect(brief, srv.Addr().String()); err == nil {
				c.Close()
				t.Fatal("a new session was created while the disk is full")
			}
			cancelBrief()
			// Reads from another session, and 4lw commands, are served.
			data, st, err := reader.Get(ctx, "/a")
			if err != nil || string(data) != "before" || st.Version != 0 {
				t.Fatalf("read on a full disk: %q %+v %v", data, st, err)
			}
			if kids, _, err := reader.Children(ctx, "/"); err != nil || len(kids) < 4 {
				t.Fatalf("children on a full disk: %v %v", kids, err)
			}
			if out := fourLW(t, srv, "ruok"); out != "imok" {
				t.Fatalf("ruok on a full disk: %q", out)
			}

			fs.SetFull(false)
			// Once space returns, the retried write goes through.
			var r struct {
				st  client.Stat
				err error
			}
			for {
				r.st, r.err = other.Set(ctx, "/a", []byte("during"), 0)
				if !errors.Is(r.err, wire.ErrThrottled) {
					break
				}
				select {
				case <-logs.resumedCh:
				case <-ctx.Done():
					t.Fatal("writes were still refused after space returned")
				}
			}
			if r.err != nil || r.st.Version != 1 {
				t.Fatalf("write after space returned: %+v %v", r.st, r.err)
			}
			acked["/a"] = "during"
			if !strings.Contains(logs.String(), "writes resumed") {
				t.Errorf("no log line says that writes resumed; logs:\n%s", logs.String())
			}
			// The write whose client gave up was not cancelled: it
			// completed, before the one queued after it.
			if _, ok, err := reader.Exists(ctx, "/short"); err != nil || !ok {
				t.Fatalf("the abandoned create after space returned: exists=%v %v", ok, err)
			}
			for _, p := range []string{"/e", "/f", "/g", "/h", "/i"} {
				create(writer, p, "after")
			}

			// Nothing acknowledged is lost by a power cut now.
			srv.Close()
			fs.Crash()
			srv2 := diskFullServer(t, fs.MemFS, io.Discard, tc.snapCount)
			c := dial(t, srv2)
			for p, v := range acked {
				if data, _, err := c.Get(ctx, p); err != nil || string(data) != v {
					t.Errorf("after the power cut %s = %q, %v; acknowledged %q", p, data, err, v)
				}
			}
		})
	}
}

// TestDiskFullTransient injects one ENOSPC into the WAL's next write: the
// write is rolled back and retried, and the client sees only a delay.
func TestDiskFullTransient(t *testing.T) {
	fs := storage.NewMemFS()
	srv := diskFullServer(t, fs, io.Discard, 0)
	c := dial(t, srv)
	ctx := ctx30(t)
	fs.InjectFault(storage.OpWrite, 1, syscall.ENOSPC)
	if _, err := c.Create(ctx, "/x", []byte("1"), client.Persistent, client.OpenACL); err != nil {
		t.Fatalf("create after a transient ENOSPC: %v", err)
	}
	if _, err := c.Set(ctx, "/x", []byte("2"), 0); err != nil {
		t.Fatal(err)
	}
	srv.Close()
	fs.Crash()
	c2 := dial(t, diskFullServer(t, fs, io.Discard, 0))
	if data, st, err := c2.Get(ctx, "/x"); err != nil || string(data) != "2" || st.Version != 1 {
		t.Fatalf("after the power cut /x = %q %+v %v", data, st, err)
	}
}

// TestCloseWhileDiskFull stops the server while a write waits for space:
// Close returns, and a restart has every acknowledged write.
func TestCloseWhileDiskFull(t *testing.T) {
	fs := storage.NewFullFS()
	srv := diskFullServer(t, fs, io.Discard, 0)
	c := dial(t, srv)
	ctx := ctx30(t)
	if _, err := c.Create(ctx, "/kept", []byte("1"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	fs.SetFull(true)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	_, err := c.Create(short, "/unacknowledged", nil, client.Persistent, client.OpenACL)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create on a full disk: %v", err)
	}
	closed := make(chan struct{})
	go func() {
		srv.Close()
		close(closed)
	}()
	select {
	case <-closed:
	case <-ctx.Done():
		t.Fatal("Close did not return while a write waited for space")
	}
	fs.Crash()
	c2 := dial(t, diskFullServer(t, fs.MemFS, io.Discard, 0))
	if data, _, err := c2.Get(ctx, "/kept"); err != nil || string(data) != "1" {
		t.Fatalf("after restart /kept = %q, %v", data, err)
	}
}

// fourLW sends a four-letter word to srv and returns the answer.
// ctx30 bounds a disk-full test: MemFS copies a whole (64 MiB) WAL segment
// on each fsync, which is slow under -race on a loaded machine.
func ctx30(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func fourLW(t *testing.T, srv *Server, cmd string) string {
	t.Helper()
	conn, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(5 * time.Second))
	if _, err := conn.Write([]byte(cmd)); err != nil {
		t.Fatal(err)
	}
	b, err := io.ReadAll(conn)
	if err != nil {
		t.Fatalf("%s: %v", cmd, err)
	}
	return string(b)
}
