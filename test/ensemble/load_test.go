package ensemble

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"

	"github.com/wardenzk/warden/test/proc"
)

// Bounds of the clients.
const (
	sessionTimeout = 15 * time.Second // outlives every outage of the scenarios
	requestTimeout = 10 * time.Second // one request; past it the outcome is unknown
	ackDeadline    = 30 * time.Second // for the writers to reach an ack target (a few hundred writes; slow disks)
	keysPerWriter  = 24
	rootPath       = "/ens"
)

// outcome is what a writer learnt of one write.
type outcome uint8

const (
	pending outcome = iota // sent, no answer yet
	acked                  // the server replied success: it must survive
	unknown                // ConnectionLoss, SESSIONMOVED or a timeout: applied or not
	refused                // an error reply: it must never appear
)

func (o outcome) String() string {
	return [...]string{"pending", "acked", "unknown", "refused"}[o]
}

// write is one create or setData of one path.
type write struct {
	path       string
	seq        int  // the writer's sequence number, stored as the data
	create     bool // create, else setData
	start, end time.Time
	outcome    outcome
	version    int32 // the acknowledged version (outcome == acked)
}

func (w write) String() string {
	op := "set"
	if w.create {
		op = "create"
	}
	s := fmt.Sprintf("%s %s #%d %v", op, w.path, w.seq, w.outcome)
	if w.outcome == acked {
		s += fmt.Sprintf(" version %d", w.version)
	}
	return s
}

// history records every write of every writer, and the problems the
// writers saw on the way (a reply no correct server gives).
type history struct {
	mu sync.Mutex
	// Invariant: writes[p] is in seq order, at most its last one pending
	// (one writer owns p and waits for each write before the next); acks
	// counts the writes with outcome acked.
	writes   map[string][]*write
	acks     int
	problems []string
	retried  map[string]int // errors with an unknown outcome the writers retried after, by class
	tick     chan struct{}  // signalled (without blocking) on each ack or problem
}

func newHistory() *history {
	return &history{writes: map[string][]*write{}, retried: map[string]int{}, tick: make(chan struct{}, 1)}
}

// retry records an error after which a writer reconnects and goes on.
func (h *history) retry(err error) {
	class := err.Error()
	switch {
	case errors.Is(err, client.ErrConnectionLoss):
		class = "ConnectionLoss"
	case errors.Is(err, wire.ErrSessionMoved):
		class = "SessionMoved"
	case errors.Is(err, context.DeadlineExceeded):
		class = "request timeout"
	}
	h.mu.Lock()
	h.retried[class]++
	h.mu.Unlock()
}

// retries returns how many errors of each class the writers retried after.
func (h *history) retries() map[string]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return maps.Clone(h.retried)
}

func (h *history) signal() {
	select {
	case h.tick <- struct{}{}:
	default:
	}
}

// begin records a write about to be sent.
func (h *history) begin(path string, seq int, create bool) *write {
	w := &write{path: path, seq: seq, create: create, start: time.Now()}
	h.mu.Lock()
	h.writes[path] = append(h.writes[path], w)
	h.mu.Unlock()
	return w
}

// finish records the outcome of w.
func (h *history) finish(w *write, o outcome, version int32) {
	h.mu.Lock()
	w.end, w.outcome, w.version = time.Now(), o, version
	if o == acked {
		h.acks++
	}
	h.mu.Unlock()
	if o == acked {
		h.signal()
	}
}

// problem records a reply no correct ensemble gives.
func (h *history) problem(format string, args ...any) {
	h.mu.Lock()
	h.problems = append(h.problems, fmt.Sprintf(format, args...))
	h.mu.Unlock()
	h.signal()
}

func (h *history) problemList() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.problems...)
}

// snapshot copies every write recorded so far, per path.
func (h *history) snapshot() map[string][]write {
	h.mu.Lock()
	defer h.mu.Unlock()
	m := make(map[string][]write, len(h.writes))
	for p, ws := range h.writes {
		cp := make([]write, len(ws))
		for i, w := range ws {
			cp[i] = *w
		}
		m[p] = cp
	}
	return m
}

// matching returns the writes for which keep holds, in no particular order.
func (h *history) matching(keep func(*write) bool) []write {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []write
	for _, ws := range h.writes {
		for _, w := range ws {
			if keep(w) {
				out = append(out, *w)
			}
		}
	}
	return out
}

// ackedSince returns the acknowledged writes sent after since.
func (h *history) ackedSince(since time.Time) []write {
	return h.matching(func(w *write) bool { return w.outcome == acked && w.start.After(since) })
}

// slowest returns the n writes that took longest, with their times.
func (h *history) slowest(n int) []string {
	ws := h.matching(func(w *write) bool { return w.outcome != pending })
	slices.SortFunc(ws, func(a, b write) int { return cmp.Compare(b.end.Sub(b.start), a.end.Sub(a.start)) })
	var out []string
	for _, w := range ws[:min(n, len(ws))] {
		out = append(out, fmt.Sprintf("%v sent %s took %v", w, w.start.Format("15:04:05.000"), w.end.Sub(w.start).Round(time.Millisecond)))
	}
	return out
}

// counts returns how many writes ended with each outcome.
func (h *history) counts() map[outcome]int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := map[outcome]int{}
	for _, ws := range h.writes {
		for _, w := range ws {
			n[w.outcome]++
		}
	}
	return n
}

// waitAcks waits until n writes sent after since were acknowledged; it
// fails the test after ackDeadline or when a writer saw a problem.
func (h *history) waitAcks(t *testing.T, n int, since time.Time) []write {
	t.Helper()
	deadline := time.NewTimer(ackDeadline)
	defer deadline.Stop()
	for {
		if ps := h.problemList(); len(ps) > 0 {
			t.Fatalf("while waiting for %d acknowledged writes: %d writer problems, the first: %s", n, len(ps), ps[0])
		}
		if got := h.ackedSince(since); len(got) >= n {
			return got
		}
		select {
		case <-h.tick:
		case <-deadline.C:
			t.Fatalf("only %d of %d writes sent after %s acknowledged within %v", len(h.ackedSince(since)), n, since.Format(time.StampMilli), ackDeadline)
		}
	}
}

// load is a few writers, each with its own session on the whole ensemble
// (connect string listing every member) and its own keys, creating keys
// and updating them with versioned setData.
type load struct {
	h        *history
	sessions []*session // the writers' sessions, each owning an ephemeral
	quit     chan struct{}
	once     sync.Once
	wg       sync.WaitGroup
	ctx      context.Context // every request's parent
	abort    context.CancelFunc
}

// startLoad creates rootPath/w<i> for each writer, with an ephemeral
// node its session owns, and starts the writers; they stop in t.Cleanup
// at the latest. Their sessions ask for timeout.
func startLoad(t *testing.T, e *ensemble, rng *rand.Rand, writers int, timeout time.Duration) *load {
	t.Helper()
	l := &load{h: newHistory(), quit: make(chan struct{})}
	l.ctx, l.abort = context.WithCancel(context.Background())
	for i := 0; i < writers; i++ {
		c := connectWith(t, e.connect, fmt.Sprintf("writer%d", i), timeout, e.clientOptions()...)
		w := &writer{
			c:    c,
			dir:  fmt.Sprintf("%s/w%d", rootPath, i),
			rng:  rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64())),
			h:    l.h,
			quit: l.quit,
			ctx:  l.ctx,
		}
		sess := watchSession(c, fmt.Sprintf("writer%d", i), w.dir+"/session")
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		_, err := c.Create(ctx, w.dir, nil, client.Persistent, client.OpenACL)
		if err == nil {
			_, err = c.Create(ctx, sess.ephemeral, []byte(sess.name), client.Ephemeral, client.OpenACL)
		}
		cancel()
		if err != nil {
			t.Fatalf("%s: create %s and its ephemeral: %v", sess.name, w.dir, err)
		}
		l.sessions = append(l.sessions, sess)
		l.wg.Add(1)
		go func() {
			defer l.wg.Done()
			w.run()
		}()
	}
	t.Cleanup(func() {
		if t.Failed() {
			l.abort()
		}
		l.stop()
	})
	return l
}

// stop asks the writers to stop after their current request and waits
// for them. It is idempotent. (abort, before it, cuts the requests in
// flight: a failed test does not wait for them.)
func (l *load) stop() {
	l.once.Do(func() { close(l.quit) })
	l.wg.Wait()
}

// writer owns the keys dir/k0..: no one else writes them, so every change
// of their versions is one of its writes.
type writer struct {
	c    *client.Conn
	dir  string
	rng  *rand.Rand
	h    *history
	quit <-chan struct{}
	ctx  context.Context // cancelled: stop now

	seq  int
	keys []*key
}

// key is what the writer knows of one of its keys.
type key struct {
	path    string
	exists  bool
	version int32
	// dirty: a write of the key had an unknown outcome and the key was not
	// read back since; exists and version may be stale.
	dirty bool
}

func (w *writer) stopped() bool {
	select {
	case <-w.quit:
		return true
	default:
		return false
	}
}

// run writes until quit: a new key now and then (until keysPerWriter),
// otherwise a versioned setData of a random key it created.
func (w *writer) run() {
	for !w.stopped() {
		var k *key
		if len(w.keys) < keysPerWriter && (len(w.keys) == 0 || w.rng.IntN(5) == 0) {
			k = &key{path: fmt.Sprintf("%s/k%d", w.dir, len(w.keys))}
			w.keys = append(w.keys, k)
		} else {
			k = w.keys[w.rng.IntN(len(w.keys))]
		}
		if k.dirty && !w.readBack(k) {
			return
		}
		if !w.writeKey(k) {
			return
		}
	}
}

// writeKey creates k if it does not exist, else sets it at the version
// the writer knows. It returns false when the writer must stop.
func (w *writer) writeKey(k *key) bool {
	w.seq++
	data := []byte(strconv.Itoa(w.seq))
	rec := w.h.begin(k.path, w.seq, !k.exists)
	ctx, cancel := context.WithTimeout(w.ctx, requestTimeout)
	defer cancel()
	var (
		st   client.Stat
		err  error
		want int32
	)
	if k.exists {
		want = k.version + 1
		st, err = w.c.Set(ctx, k.path, data, k.version)
	} else {
		_, st, err = w.c.CreateStat(ctx, k.path, data, client.Persistent, client.OpenACL)
	}
	switch {
	case err == nil:
		w.h.finish(rec, acked, st.Version)
		if st.Version != want {
			w.h.problem("%v: acknowledged with version %d, want %d (the writer knew version %d and is the key's only writer)", *rec, st.Version, want, k.version)
		}
		k.exists, k.version = true, st.Version
	case w.ctx.Err() != nil:
		w.h.finish(rec, unknown, 0)
		return false
	case isUnknown(err):
		w.h.finish(rec, unknown, 0)
		w.h.retry(err)
		k.dirty = true
	case errors.Is(err, client.ErrBadVersion), errors.Is(err, client.ErrNodeExists), errors.Is(err, client.ErrNoNode):
		// The writer read the key back after every unknown outcome, with a
		// sync first: no write it does not know of can exist.
		w.h.finish(rec, refused, 0)
		w.h.problem("%v: %v (the writer knew exists=%v version %d and is the key's only writer)", *rec, err, k.exists, k.version)
		k.dirty = true
	default:
		w.h.finish(rec, unknown, 0)
		w.h.problem("%v: %v", *rec, err)
		return false
	}
	return true
}

// readBack syncs and reads k until it knows whether k exists and at which
// version. It returns false when the writer must stop.
func (w *writer) readBack(k *key) bool {
	for !w.stopped() && w.ctx.Err() == nil {
		ctx, cancel := context.WithTimeout(w.ctx, requestTimeout)
		err := w.c.Sync(ctx, k.path)
		var st client.Stat
		if err == nil {
			_, st, err = w.c.Get(ctx, k.path)
		}
		cancel()
		switch {
		case err == nil:
			k.exists, k.version, k.dirty = true, st.Version, false
			return true
		case errors.Is(err, client.ErrNoNode):
			k.exists, k.version, k.dirty = false, 0, false
			return true
		case w.ctx.Err() != nil:
			return false
		case isUnknown(err):
			w.h.retry(err)
			continue // the client waits for its reconnect
		default:
			w.h.problem("read back %s: %v", k.path, err)
			return false
		}
	}
	return false
}

// session is a client session whose state changes are recorded, and an
// ephemeral node it owns: a session that lives through a scenario still
// owns its node on every member and never saw StateExpired.
type session struct {
	name      string
	c         *client.Conn
	ephemeral string
	events    <-chan client.SessionEvent
	seen      []client.State // the states received from events so far
}

// watchSession subscribes to c's state changes; the caller creates the
// ephemeral.
func watchSession(c *client.Conn, name, ephemeral string) *session {
	return &session{name: name, c: c, ephemeral: ephemeral, events: c.SessionEvents()}
}

// states returns every state the session reported so far, in order (the
// first is the state when it was watched), without waiting.
func (s *session) states() []client.State {
	for {
		select {
		case ev, ok := <-s.events:
			if !ok {
				return s.seen
			}
			s.seen = append(s.seen, ev.State)
		default:
			return s.seen
		}
	}
}

// count returns how many times the session reported state st.
func (s *session) count(st client.State) int {
	n := 0
	for _, x := range s.states() {
		if x == st {
			n++
		}
	}
	return n
}

// isUnknown reports whether err leaves the outcome of a write unknown.
func isUnknown(err error) bool {
	return errors.Is(err, client.ErrConnectionLoss) ||
		errors.Is(err, wire.ErrSessionMoved) ||
		errors.Is(err, context.DeadlineExceeded)
}

// connect opens a session of sessionTimeout on servers that reconnects
// quickly, logging as name to the test's client log; it is closed in
// t.Cleanup.
func connect(t *testing.T, servers, name string) *client.Conn {
	t.Helper()
	return connectWith(t, servers, name, sessionTimeout)
}

// connectWith is connect with the session timeout to ask for, and more
// options.
func connectWith(t *testing.T, servers, name string, timeout time.Duration, opts ...client.Option) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c, err := client.Connect(ctx, servers, append([]client.Option{client.WithSessionTimeout(timeout),
		client.WithBackoff(5*time.Millisecond, 100*time.Millisecond),
		client.WithLogger(clientLog(t).With("client", name))}, opts...)...)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

var clientLogs sync.Map // *testing.T → *slog.Logger

// clientLog returns the test's client logger: every client's connects,
// disconnects and failed connects, at debug level, in one file printed
// with the members' logs.
func clientLog(t *testing.T) *slog.Logger {
	if l, ok := clientLogs.Load(t); ok {
		return l.(*slog.Logger)
	}
	path := filepath.Join(t.TempDir(), "clients.log")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	l := slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
	clientLogs.Store(t, l)
	// Registered before any client's Close: runs after them all.
	t.Cleanup(func() {
		clientLogs.Delete(t)
		f.Close()
		if t.Failed() || os.Getenv(logsEnv) != "" {
			proc.DumpFile(t, "clients", path)
		}
	})
	return l
}
