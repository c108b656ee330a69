package servertest

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/fakeclock"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/internal/transport"
	"github.com/wardenzk/warden/server"
)

// Ensemble is an in-process ensemble whose members talk over an
// in-memory network that a test can cut, delay and heal. Member i (0-based)
// has myid i+1. All members share one fake clock; their timers are off, so
// a test decides when sessions expire (ExpireSessions on the leader) and
// when followers forward their clients' heartbeats (ForwardTouches).
type Ensemble struct {
	// Net is the members' network.
	Net *transport.Network
	// Clock drives every member's notion of time.
	Clock *Clock

	tb      testing.TB
	mu      sync.Mutex
	members []*member
	// config adjusts every member's configuration (WithMemberConfig).
	config func(*server.Config)
}

type member struct {
	cfg      server.Config
	fs       storage.FS // nil: the operating system's
	attached func(session int64)
	addr     string // client address, kept across restarts
	srv      *server.Server
}

// EnsembleOption adjusts the ensemble StartTestEnsemble starts.
type EnsembleOption func(*ensembleSettings)

type ensembleSettings struct {
	seed      uint64
	observers int
	config    func(*server.Config)
	logger    *slog.Logger
	fs        map[int]storage.FS
	attached  map[int]func(session int64)
}

// WithMemberFS keeps member i's data on fs (a storage.FullFS, to fill its
// disk) instead of the operating system's file system.
func WithMemberFS(i int, fs storage.FS) EnsembleOption {
	return func(s *ensembleSettings) {
		if s.fs == nil {
			s.fs = make(map[int]storage.FS)
		}
		s.fs[i] = fs
	}
}

// WithMemberAttached sets member i's Options.Attached hook, which runs
// between moving a reconnecting client's session to the member and binding
// the connection to it.
func WithMemberAttached(i int, f func(session int64)) EnsembleOption {
	return func(s *ensembleSettings) {
		if s.attached == nil {
			s.attached = make(map[int]func(int64))
		}
		s.attached[i] = f
	}
}

// WithSeed sets the seed of the network's random drops.
func WithSeed(seed uint64) EnsembleOption { return func(s *ensembleSettings) { s.seed = seed } }

// WithObservers makes the last k members observers (raft learners).
func WithObservers(k int) EnsembleOption { return func(s *ensembleSettings) { s.observers = k } }

// WithMemberConfig changes every member's configuration before it starts.
func WithMemberConfig(f func(*server.Config)) EnsembleOption {
	return func(s *ensembleSettings) {
		if prev := s.config; prev != nil {
			s.config = func(c *server.Config) { prev(c); f(c) }
			return
		}
		s.config = f
	}
}

// WithLogger sends the members' logs to l, each record with the
// attribute myid.
func WithLogger(l *slog.Logger) EnsembleOption {
	return func(s *ensembleSettings) { s.logger = l }
}

// WithLogs sends the members' logs to stderr (for debugging a test).
func WithLogs() EnsembleOption {
	return func(s *ensembleSettings) {
		s.logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelDebug}))
	}
}

// ensembleTick is the raft tick of in-process members: elections take
// tens of milliseconds.
const ensembleTick = 5 * time.Millisecond

// StartTestEnsemble starts n members and waits until one of them leads
// and every member serves and is in sync with the leader's term (the
// entry a new leader commits is applied everywhere, so a test's count of
// log entries starts from a still log). Everything is stopped when the
// test ends.
func StartTestEnsemble(tb testing.TB, n int, opts ...EnsembleOption) *Ensemble {
	tb.Helper()
	st := ensembleSettings{seed: 1}
	for _, o := range opts {
		o(&st)
	}
	e := &Ensemble{
		Net:    transport.NewNetwork(st.seed),
		Clock:  fakeclock.New(time.Now()),
		tb:     tb,
		config: st.config,
	}
	var servers []config.Server
	for i := 0; i < n; i++ {
		servers = append(servers, config.Server{
			ID: int64(i + 1), Host: "127.0.0.1", PeerPort: 2888 + i, ElectionPort: 3888 + i,
			Observer: i >= n-st.observers,
		})
	}
	for i := 0; i < n; i++ {
		cfg := server.DefaultConfig()
		cfg.DataDir = tb.TempDir()
		cfg.DataLogDir = cfg.DataDir
		cfg.TickTime = 100
		cfg.InitLimit, cfg.SyncLimit = 10, 5
		cfg.MaxSessionTimeout = 30000 // clients never give up during a test; servers expire only when told
		cfg.Servers = servers
		cfg.MyID = int64(i + 1)
		if st.config != nil {
			st.config(&cfg)
		}
		e.members = append(e.members, &member{cfg: cfg, addr: "127.0.0.1:0", fs: st.fs[i], attached: st.attached[i]})
	}
	logger := st.logger
	if logger == nil {
		logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	var wg sync.WaitGroup
	errs := make([]error, n)
	for i := range e.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = e.start(i, logger.With("myid", i+1))
		}()
	}
	wg.Wait()
	tb.Cleanup(e.Close)
	for i, err := range errs {
		if err != nil {
			tb.Fatalf("servertest: start member %d: %v", i+1, err)
		}
	}
	e.WaitServing(e.All()...)
	e.waitEvery(e.All(), "in sync with their leader", (*server.Server).InSync)
	return e
}

// start starts member i on its data directory and client address.
func (e *Ensemble) start(i int, logger *slog.Logger) error {
	e.mu.Lock()
	m := e.members[i]
	e.mu.Unlock()
	ln, err := net.Listen("tcp", m.addr)
	if err != nil {
		return err
	}
	raftID := node.MemberID(m.cfg.MyID).RaftID()
	srv, err := server.Start(m.cfg, server.Options{
		Listener:      ln,
		Logger:        logger,
		Now:           e.Clock.Now,
		FS:            m.fs,
		DisableTimers: true,
		RaftTick:      ensembleTick,
		Attached:      m.attached,
		Transport: func(snaps transport.Snapshots) (transport.Transport, error) {
			return e.Net.Join(raftID, snaps), nil
		},
	})
	if err != nil {
		ln.Close()
		return err
	}
	e.mu.Lock()
	m.srv = srv
	m.addr = srv.Addr().String()
	e.mu.Unlock()
	return nil
}

// AddMember starts a new member, as an operator starts a host about to be
// added with reconfig: myid one above the highest, server lines listing
// the members of servers (the ensemble as it is) plus itself, as a
// participant or an observer, and an empty data directory. It returns its
// index and its server line (for reconfig's joining servers). It does not
// wait for it to serve: it does only once a reconfig has added it.
func (e *Ensemble) AddMember(servers []config.Server, observer bool) (int, string) {
	e.tb.Helper()
	e.mu.Lock()
	i := len(e.members)
	e.mu.Unlock()
	self := config.Server{ID: int64(i + 1), Host: "127.0.0.1", PeerPort: 2888 + i, ElectionPort: 3888 + i, Observer: observer}
	cfg := server.DefaultConfig()
	cfg.DataDir = e.tb.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.TickTime = 100
	cfg.InitLimit, cfg.SyncLimit = 10, 5
	cfg.MaxSessionTimeout = 30000
	cfg.Servers = append(append([]config.Server(nil), servers...), self)
	cfg.MyID = self.ID
	if e.config != nil {
		e.config(&cfg)
	}
	e.mu.Lock()
	e.members = append(e.members, &member{cfg: cfg, addr: "127.0.0.1:0"})
	e.mu.Unlock()
	if err := e.start(i, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		e.tb.Fatalf("servertest: start new member %d: %v", i+1, err)
	}
	self.ClientHost, self.ClientPort = splitAddr(e.tb, e.Addr(i))
	return i, config.ServerLine(self)
}

// Servers returns the server lines member i was started with.
func (e *Ensemble) Servers(i int) []config.Server {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]config.Server(nil), e.members[i].cfg.Servers...)
}

func splitAddr(tb testing.TB, addr string) (string, int) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		tb.Fatal(err)
	}
	p, err := strconv.Atoi(port)
	if err != nil {
		tb.Fatal(err)
	}
	return host, p
}

// Member returns member i's running server, or nil when it is stopped.
func (e *Ensemble) Member(i int) *server.Server {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.members[i].srv
}

// Addr returns member i's client address (stable across restarts).
func (e *Ensemble) Addr(i int) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.members[i].addr
}

// ConnectString returns every member's client address, comma-separated.
func (e *Ensemble) ConnectString() string {
	var addrs []string
	for i := range e.members {
		addrs = append(addrs, e.Addr(i))
	}
	return strings.Join(addrs, ",")
}

// All returns the indexes of every member.
func (e *Ensemble) All() []int {
	out := make([]int, len(e.members))
	for i := range out {
		out[i] = i
	}
	return out
}

// RaftID returns member i's raft id, as the network knows it.
func (e *Ensemble) RaftID(i int) uint64 { return node.MemberID(i + 1).RaftID() }

// Stop stops member i, as a crash would (its data directory stays).
func (e *Ensemble) Stop(i int) {
	e.mu.Lock()
	srv := e.members[i].srv
	e.members[i].srv = nil
	e.mu.Unlock()
	if srv != nil {
		srv.Close()
	}
}

// Restart starts a stopped member i again on its data directory.
func (e *Ensemble) Restart(i int) {
	e.tb.Helper()
	if err := e.start(i, slog.New(slog.NewTextHandler(io.Discard, nil))); err != nil {
		e.tb.Fatalf("servertest: restart member %d: %v", i+1, err)
	}
}

// Wipe deletes stopped member i's data, so its restart joins empty.
func (e *Ensemble) Wipe(i int) {
	e.tb.Helper()
	e.mu.Lock()
	m := e.members[i]
	e.mu.Unlock()
	if m.srv != nil {
		e.tb.Fatalf("servertest: wipe member %d: it is running", i+1)
	}
	if err := os.RemoveAll(m.cfg.DataDir); err != nil {
		e.tb.Fatal(err)
	}
	if err := os.MkdirAll(m.cfg.DataDir, 0o755); err != nil {
		e.tb.Fatal(err)
	}
}

// Leader waits until exactly one running member leads and returns it.
func (e *Ensemble) Leader() int {
	e.tb.Helper()
	var leader int
	e.waitFor("a single leader", func() bool {
		leader = -1
		for i := range e.members {
			if srv := e.Member(i); srv != nil && srv.Mode() == "leader" {
				if leader >= 0 {
					return false
				}
				leader = i
			}
		}
		return leader >= 0
	})
	return leader
}

// Followers returns the running members other than the leader.
func (e *Ensemble) Followers() []int {
	l := e.Leader()
	var out []int
	for i := range e.members {
		if i != l && e.Member(i) != nil {
			out = append(out, i)
		}
	}
	return out
}

// WaitServing waits until each of the given members serves clients
// (knows a leader).
func (e *Ensemble) WaitServing(members ...int) {
	e.tb.Helper()
	e.waitEvery(members, "serving", (*server.Server).Serving)
}

// waitEvery waits until each of the given members runs and cond holds
// for it.
func (e *Ensemble) waitEvery(members []int, what string, cond func(*server.Server) bool) {
	e.tb.Helper()
	e.waitFor(fmt.Sprintf("members %v %s", members, what), func() bool {
		for _, i := range members {
			srv := e.Member(i)
			if srv == nil || !cond(srv) {
				return false
			}
		}
		return true
	})
}

// WaitNotServing waits until member i has stopped serving (lost its
// leader).
func (e *Ensemble) WaitNotServing(i int) {
	e.tb.Helper()
	e.waitFor(fmt.Sprintf("member %d not serving", i+1), func() bool {
		srv := e.Member(i)
		return srv != nil && !srv.Serving()
	})
}

// WaitCaughtUp waits until every running member has applied as far as
// the leader, or the furthest member, had when it was called. (Not the
// leader's alone: a follower applies a write and answers its client
// before the leader has applied it, and a test that goes on from that
// answer must see it everywhere.)
func (e *Ensemble) WaitCaughtUp() {
	e.tb.Helper()
	want := e.Member(e.Leader()).LastZxid()
	for i := range e.members {
		if srv := e.Member(i); srv != nil {
			want = max(want, srv.LastZxid())
		}
	}
	e.waitFor(fmt.Sprintf("every member at zxid 0x%x", want), func() bool {
		for i := range e.members {
			if srv := e.Member(i); srv != nil && srv.LastZxid() < want {
				return false
			}
		}
		return true
	})
}

// WaitApplied waits until every running member has applied the log as
// far as the furthest one had when it was called: unlike WaitCaughtUp it
// also counts entries that take no zxid (session touches).
func (e *Ensemble) WaitApplied() {
	e.tb.Helper()
	var want uint64
	for i := range e.members {
		if srv := e.Member(i); srv != nil {
			want = max(want, srv.AppliedIndex())
		}
	}
	e.waitFor(fmt.Sprintf("every member at log index %d", want), func() bool {
		for i := range e.members {
			if srv := e.Member(i); srv != nil && srv.AppliedIndex() < want {
				return false
			}
		}
		return true
	})
}

// waitFor polls cond until it holds, for at most 20 s.
func (e *Ensemble) waitFor(what string, cond func() bool) {
	e.tb.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			e.tb.Fatalf("servertest: timed out waiting for %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// Close stops every member.
func (e *Ensemble) Close() {
	var wg sync.WaitGroup
	for i := range e.members {
		wg.Add(1)
		go func() {
			defer wg.Done()
			e.Stop(i)
		}()
	}
	wg.Wait()
}
