package admin

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/server"
)

// Server is a running AdminServer.
type Server struct {
	cfg        config.Config
	srv        *server.Server
	log        *slog.Logger
	ln         net.Listener
	hs         *http.Server
	mux        *http.ServeMux
	commandURL string
	done       chan struct{} // closed when Serve returns

	// snapshotLimit and restoreLimit let one snapshot and one restore
	// through per interval, as ZooKeeper's RateLimiter does.
	snapshotLimit, restoreLimit rateLimiter

	closeOnce sync.Once
	closeErr  error
}

// Settings are the AdminServer keys of zoo.cfg, with ZooKeeper's defaults
// applied.
type Settings struct {
	// Addr is admin.serverAddress:admin.serverPort (0.0.0.0:8080).
	Addr string
	// CommandURL is admin.commandURL (/commands), without a final '/'.
	CommandURL string
	// IdleTimeout is admin.idleTimeout (30000 ms): an idle HTTP
	// connection is closed after it.
	IdleTimeout time.Duration
	// SnapshotEnabled and RestoreEnabled are admin.snapshot.enabled and
	// admin.restore.enabled (both true).
	SnapshotEnabled, RestoreEnabled bool
	// RateLimit is admin.rateLimiterIntervalInMS (300000 ms): the least
	// time between two restores. ZooKeeper 3.9 reads the same number in
	// microseconds for snapshot, so snapshots are limited to one per
	// RateLimit/1000 (300 ms by default); Warden keeps that.
	RateLimit time.Duration
}

// ReadSettings reads the AdminServer's settings from cfg and checks them.
// Settings Warden does not support (HTTPS, client certificates) are
// errors that say so.
func ReadSettings(cfg config.Config) (Settings, error) {
	st := Settings{
		Addr:            net.JoinHostPort(cfg.AdminServerAddress, strconv.Itoa(cfg.AdminServerPort)),
		CommandURL:      strings.TrimRight(cfg.AdminCommandURL, "/"),
		IdleTimeout:     30 * time.Second,
		SnapshotEnabled: true,
		RestoreEnabled:  true,
		RateLimit:       300 * time.Second,
	}
	if !strings.HasPrefix(st.CommandURL, "/") {
		st.CommandURL = "/" + st.CommandURL
	}
	if v, ok := cfg.Lookup("admin.idleTimeout"); ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms < 0 {
			return st, fmt.Errorf("admin: admin.idleTimeout=%q: give a number of milliseconds", v)
		}
		st.IdleTimeout = time.Duration(ms) * time.Millisecond
	}
	if v, ok := cfg.Lookup("admin.rateLimiterIntervalInMS"); ok {
		ms, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || ms < 0 {
			return st, fmt.Errorf("admin: admin.rateLimiterIntervalInMS=%q: give a number of milliseconds", v)
		}
		st.RateLimit = time.Duration(ms) * time.Millisecond
	}
	// Java's Boolean.parseBoolean: "true" in any case is true, anything
	// else false.
	if v, ok := cfg.Lookup("admin.snapshot.enabled"); ok {
		st.SnapshotEnabled = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if v, ok := cfg.Lookup("admin.restore.enabled"); ok {
		st.RestoreEnabled = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	for _, key := range []string{"admin.forceHttps", "admin.needClientAuth", "admin.portUnification"} {
		if cfg.LookupBool(key) {
			return st, fmt.Errorf("admin: %s=true is not supported: Warden's AdminServer speaks plain HTTP; remove the key or put a TLS proxy in front", key)
		}
	}
	return st, nil
}

// Start listens on admin.serverAddress:admin.serverPort and serves the
// commands under admin.commandURL until Close. It does not look at
// admin.enableServer: the caller decides whether to start it. Port 0
// picks a free port (see Addr).
func Start(cfg config.Config, srv *server.Server, log *slog.Logger) (*Server, error) {
	if log == nil {
		log = slog.Default()
	}
	st, err := ReadSettings(cfg)
	if err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", st.Addr)
	if err != nil {
		return nil, fmt.Errorf("admin: listen on %s: %w (is another process using the port? set admin.serverPort, or admin.enableServer=false)", st.Addr, err)
	}
	a := &Server{
		cfg:           cfg,
		srv:           srv,
		log:           log.With("component", "admin"),
		ln:            ln,
		mux:           http.NewServeMux(),
		commandURL:    st.CommandURL,
		done:          make(chan struct{}),
		snapshotLimit: rateLimiter{interval: st.RateLimit / 1000},
		restoreLimit:  rateLimiter{interval: st.RateLimit},
	}
	h := &handler{a: a, st: st}
	a.mux.Handle(st.CommandURL, h)
	a.mux.Handle(st.CommandURL+"/", h)
	a.hs = &http.Server{
		Handler:           a.mux,
		IdleTimeout:       st.IdleTimeout,
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          slog.NewLogLogger(a.log.Handler(), slog.LevelWarn),
	}
	go func() {
		defer close(a.done)
		if err := a.hs.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			a.log.Error("AdminServer stopped serving", "err", err)
		}
	}()
	a.log.Info("AdminServer listening", "addr", ln.Addr().String(), "commandURL", st.CommandURL)
	return a, nil
}

// Addr returns the address the AdminServer listens on.
func (a *Server) Addr() net.Addr { return a.ln.Addr() }

// Handle serves pattern (net/http.ServeMux syntax, e.g. "/ui/") with h
// next to the commands; it may be called while the server runs.
func (a *Server) Handle(pattern string, h http.Handler) { a.mux.Handle(pattern, h) }

// Close stops the listener and closes every connection; requests in
// progress are given up to five seconds to finish.
func (a *Server) Close() error {
	a.closeOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		if err := a.hs.Shutdown(ctx); err != nil {
			a.closeErr = a.hs.Close()
		}
		<-a.done
	})
	return a.closeErr
}

// rateLimiter lets one event through per interval.
type rateLimiter struct {
	interval time.Duration
	mu       sync.Mutex
	last     time.Time
}

// allow reports whether an event may happen now, and records it if so.
func (r *rateLimiter) allow(now time.Time) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.last.IsZero() && now.Sub(r.last) < r.interval {
		return false
	}
	r.last = now
	return true
}
