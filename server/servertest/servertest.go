// Package servertest starts in-process Warden servers for tests: a
// loopback listener, data in a temporary directory, silent logs, and the
// server's timers off behind a fake clock, so a test expires sessions,
// containers and TTL nodes exactly when it says so:
//
//	srv := servertest.Start(t)
//	c, _ := client.Connect(ctx, srv.Addr().String())
//	...
//	srv.ExpireSessions(srv.Clock.Advance(time.Minute)) // every silent session expires now
//
// The server is closed when the test ends.
package servertest

import (
	"io"
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/fakeclock"
	"github.com/wardenzk/warden/server"
)

// Clock is the server's settable wall clock. It starts at the real time,
// so socket deadlines and logical time agree until a test moves it with
// Advance.
type Clock = fakeclock.Clock

// Server is a running in-process server and its clock.
type Server struct {
	*server.Server
	// Clock drives the server's notion of time: session deadlines,
	// ctime/mtime, container and TTL expiry.
	Clock *Clock
}

// Option adjusts the server Start starts.
type Option func(*settings)

type settings struct {
	addr   string
	config func(*server.Config)
	opts   func(*server.Options)
}

// WithAddr listens on addr instead of a free loopback port (for tests that
// restart a server on the same address).
func WithAddr(addr string) Option { return func(s *settings) { s.addr = addr } }

// WithConfig lets the test change the configuration (tickTime,
// extendedTypesEnabled, ...) before the server starts.
func WithConfig(f func(*server.Config)) Option { return func(s *settings) { s.config = f } }

// WithOptions lets the test change the embedding options.
func WithOptions(f func(*server.Options)) Option { return func(s *settings) { s.opts = f } }

// Start starts a standalone server and closes it when the test ends.
func Start(tb testing.TB, opts ...Option) *Server {
	tb.Helper()
	st := settings{addr: "127.0.0.1:0"}
	for _, o := range opts {
		o(&st)
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = tb.TempDir()
	cfg.DataLogDir = cfg.DataDir
	if st.config != nil {
		st.config(&cfg)
	}
	ln, err := net.Listen("tcp", st.addr)
	if err != nil {
		tb.Fatalf("servertest: listen on %s: %v", st.addr, err)
	}
	clock := fakeclock.New(time.Now())
	so := server.Options{
		Listener:      ln,
		Logger:        slog.New(slog.NewTextHandler(io.Discard, nil)),
		Now:           clock.Now,
		DisableTimers: true,
	}
	if st.opts != nil {
		st.opts(&so)
	}
	srv, err := server.Start(cfg, so)
	if err != nil {
		ln.Close()
		tb.Fatalf("servertest: start: %v", err)
	}
	tb.Cleanup(func() { srv.Close() })
	return &Server{Server: srv, Clock: clock}
}
