package torture

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/test/torture/checker"
	"github.com/wardenzk/warden/wire"
)

// Bounds of the clients' work.
const (
	opTimeout      = 4 * time.Second // one request, from call to giving up (outcome unknown)
	connectTimeout = 10 * time.Second
	sessionTimeout = 8 * time.Second // the workload sessions': longer than any fault is held
)

// workload is one workload of a run: it creates its nodes, drives its
// clients until the fault schedule ends, then reads the final state
// from every member and checks the history.
type workload interface {
	// name is the workload's name ("registers").
	name() string
	// setup creates the workload's nodes before any fault.
	setup(ctx context.Context, c *client.Conn) error
	// run drives the clients until ctx ends; it returns when every
	// client has stopped.
	run(ctx context.Context)
	// check reads what it needs from every member (the ensemble is
	// healed) and judges the history.
	check(ctx context.Context, members []string) []checker.Result
	// writes returns every write the workload made, for the
	// unavailability figures.
	writes() []write
}

// write is one write a workload made and what came of it.
type write struct {
	checker.Span
	Outcome checker.Outcome
}

// env is what every workload shares: the run's clock and the ensemble's
// connect string.
type env struct {
	start time.Time
	seed  uint64
	log   *slog.Logger
	// track makes the sessions dialAll opens follow the membership
	// (client.WithEnsembleTracking): set when reconfigs change it.
	track bool

	mu      sync.Mutex
	connect string // the membership's client addresses, as the harness last learnt them
}

// servers returns the connect string of the membership.
func (e *env) servers() string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.connect
}

// setServers replaces the connect string new sessions use.
func (e *env) setServers(s string) {
	e.mu.Lock()
	e.connect = s
	e.mu.Unlock()
}

// dialAll connects a workload's session to the membership, as the
// harness knows it at each attempt, following its changes when track is
// set.
func (e *env) dialAll(ctx context.Context, opts ...client.Option) (*client.Conn, error) {
	if e.track {
		opts = append(opts, client.WithEnsembleTracking())
	}
	return e.dial(ctx, e.servers, opts...)
}

// now returns nanoseconds since the run began.
func (e *env) now() int64 { return int64(time.Since(e.start)) }

// rng returns a generator for client k of a workload, derived from the
// run's seed. (Operations' timing is not reproducible; their choices are.)
func (e *env) rng(workload string, k int) *rand.Rand {
	var h uint64 = 14695981039346656037
	for _, b := range []byte(workload) {
		h = (h ^ uint64(b)) * 1099511628211
	}
	return rand.New(rand.NewPCG(e.seed, h+uint64(k)))
}

// dial connects a client session to the servers servers returns at each
// attempt, retrying until ctx ends.
func (e *env) dial(ctx context.Context, servers func() string, opts ...client.Option) (*client.Conn, error) {
	opts = append([]client.Option{client.WithSessionTimeout(sessionTimeout), client.WithLogger(e.log)}, opts...)
	for {
		cctx, cancel := context.WithTimeout(ctx, connectTimeout)
		c, err := client.Connect(cctx, servers(), opts...)
		cancel()
		if err == nil {
			return c, nil
		}
		if ctx.Err() != nil {
			return nil, err
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// session keeps one client session of a workload's client: it replaces
// a session that ended (expired) with a new one.
type session struct {
	e    *env
	conn *client.Conn
}

// get returns a live session, connecting a new one when there is none
// or the last one ended; nil when ctx ended first.
func (s *session) get(ctx context.Context) *client.Conn {
	if s.conn != nil {
		switch s.conn.State() {
		case client.StateExpired, client.StateAuthFailed, client.StateClosed:
			s.conn.Close()
			s.conn = nil
		}
	}
	if s.conn == nil {
		c, err := s.e.dialAll(ctx)
		if err != nil {
			return nil
		}
		s.conn = c
	}
	return s.conn
}

// close ends the session.
func (s *session) close() {
	if s.conn != nil {
		s.conn.Close()
		s.conn = nil
	}
}

// outcomeOf classifies a request's error: nil is OK; an error that says
// the server refused the request (including THROTTLEDOP, which a member
// with a full disk answers, and SESSIONMOVED) is Failed; anything else (connection
// loss, timeout, session expiry, a closed client) leaves the outcome
// Unknown.
func outcomeOf(err error) checker.Outcome {
	if err == nil {
		return checker.OK
	}
	for _, refused := range []error{client.ErrBadVersion, client.ErrNoNode, client.ErrNodeExists,
		client.ErrNotEmpty, client.ErrNoAuth, client.ErrBadArguments, client.ErrNoChildrenForEphemerals,
		wire.ErrThrottled, wire.ErrSessionMoved} {
		if errors.Is(err, refused) {
			return checker.Failed
		}
	}
	return checker.Unknown
}

// think pauses a client between operations for 0–maxMs milliseconds,
// returning false when ctx ended.
func think(ctx context.Context, rng *rand.Rand, maxMs int) bool {
	if maxMs <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(time.Duration(rng.IntN(maxMs)) * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

// recorder is a history under a lock, appended to by many clients.
type recorder[T any] struct {
	mu  sync.Mutex
	ops []T
}

func (r *recorder[T]) add(op T) {
	r.mu.Lock()
	r.ops = append(r.ops, op)
	r.mu.Unlock()
}

func (r *recorder[T]) all() []T {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]T(nil), r.ops...)
}

// drive runs n clients of the named workload until ctx ends: each keeps
// a session (replacing one that ended), pauses up to maxThink ms, and
// calls op with its index k, its iteration i, its generator and the
// session.
func (e *env) drive(ctx context.Context, name string, n, maxThink int, op func(k, i int, rng *rand.Rand, c *client.Conn)) {
	clients(n, func(k int) {
		rng := e.rng(name, k)
		s := &session{e: e}
		defer s.close()
		for i := 0; think(ctx, rng, maxThink); i++ {
			c := s.get(ctx)
			if c == nil {
				return
			}
			op(k, i, rng, c)
		}
	})
}

// clients runs n copies of body (client k = 0..n-1) and waits for all.
func clients(n int, body func(k int)) {
	var wg sync.WaitGroup
	for k := 0; k < n; k++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body(k)
		}()
	}
	wg.Wait()
}

// ensurePath creates path and its missing parents (persistent, empty).
func ensurePath(ctx context.Context, c *client.Conn, path string) error {
	for i := 1; i <= len(path); i++ {
		if i < len(path) && path[i] != '/' {
			continue
		}
		_, err := c.Create(ctx, path[:i], nil, client.Persistent, client.OpenACL)
		if err != nil && !errors.Is(err, client.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", path[:i], err)
		}
	}
	return nil
}

// readEach connects to every member on its own, syncs path and calls read
// with the session; it returns the per-member results keyed by address,
// or an error naming the member that could not be read. A read that
// fails with an unknown outcome (a connection lost to a leader election
// the healed ensemble may still hold) is retried on a new session until
// ctx ends: final reads change nothing.
func readEach[T any](ctx context.Context, e *env, members []string, path string, read func(context.Context, *client.Conn) (T, error)) (map[string]T, error) {
	out := make(map[string]T)
	for _, addr := range members {
		for {
			v, err := readOne(ctx, e, addr, path, read)
			if err == nil {
				out[addr] = v
				break
			}
			if outcomeOf(err) == checker.Failed || !backoff(ctx) {
				return nil, fmt.Errorf("final read on %s: %w", addr, err)
			}
		}
	}
	return out, nil
}

func readOne[T any](ctx context.Context, e *env, addr, path string, read func(context.Context, *client.Conn) (T, error)) (T, error) {
	var v T
	rctx, cancel := context.WithTimeout(ctx, 2*connectTimeout)
	defer cancel()
	c, err := e.dial(rctx, func() string { return addr })
	if err != nil {
		return v, err
	}
	defer c.Close()
	if err = c.Sync(rctx, path); err != nil {
		return v, err
	}
	return read(rctx, c)
}

// backoff waits a moment before a retry; false when ctx ended.
func backoff(ctx context.Context) bool {
	t := time.NewTimer(100 * time.Millisecond)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
