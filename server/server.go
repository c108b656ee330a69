package server

import (
	"crypto/rand"
	"crypto/tls"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/internal/tlsconf"
	"github.com/wardenzk/warden/internal/transport"
	"github.com/wardenzk/warden/internal/watch"
	"github.com/wardenzk/warden/wire"
)

// Config is the server's configuration, as read from a zoo.cfg.
type Config = config.Config

// DefaultConfig returns the embedded default configuration: a standalone
// server on 127.0.0.1:2181 with its data in ./warden-data.
func DefaultConfig() Config { return config.Default() }

// LoadConfig reads a zoo.cfg (and myid from its dataDir when it names
// ensemble members).
func LoadConfig(path string) (Config, error) { return config.Load(path) }

// Options are the embedding knobs that are not part of zoo.cfg.
type Options struct {
	// Logger receives structured logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the wall clock; nil means time.Now. Tests inject a fake one.
	Now func() time.Time
	// Listener, when set, is used instead of listening on the configured
	// client address.
	Listener net.Listener
	// SecureListener, when set, is used instead of listening on the
	// configured secure client address (secureClientPort); it serves TLS.
	SecureListener net.Listener
	// MaxQueuedBytes bounds the reply and event bytes waiting for one
	// client; a client that stops reading is disconnected past it.
	// Default 64 MiB.
	MaxQueuedBytes int
	// FS is the file system the data and log directories live on; nil
	// means the operating system's. Tests pass a storage.MemFS to simulate
	// power loss.
	FS storage.FS
	// Fatal is called when the log can no longer be trusted (a failed
	// fsync) and must not return; nil means log and exit(2).
	Fatal func(error)
	// DisableTimers turns off the session-expiry and container tickers, so
	// tests drive them with ExpireSessions and ExpireContainers.
	DisableTimers bool
	// Transport, when set, replaces the TCP peer transport of an ensemble
	// member (tests pass an in-memory network's endpoint).
	Transport func(transport.Snapshots) (transport.Transport, error)
	// Attached, when set, is called after a reconnecting client's session
	// was moved to this member and before the connection is bound to it.
	// Tests use it to have another member take the session in between.
	Attached func(session int64)
	// RaftTick, when set, replaces the raft tick derived from tickTime
	// (RaftTiming), so in-process ensembles elect in milliseconds.
	RaftTick time.Duration
	// AuditLogger receives the audit log when audit.enable is on
	// (docs/audit.md): records with the message "audit" and ZooKeeper's
	// fields. nil means Logger with the attribute log=audit.
	AuditLogger *slog.Logger
}

// Server is a running Warden server: standalone, or one member of an
// ensemble.
type Server struct {
	cfg Config
	log *slog.Logger
	now func() time.Time
	// members is the membership the log holds (nil before any reconfig);
	// removed is set when it leaves this member out; membersWake wakes
	// the membership worker (reconfig.go).
	members     atomic.Pointer[fsm.Membership]
	removed     atomic.Bool
	drained     atomic.Bool // removed and out of raft too
	membersWake chan struct{}
	// leaderGrace is how long a member without a leader keeps its
	// clients connected (half an election timeout); roleGen counts role
	// changes, so a late close is skipped when a leader came meanwhile.
	leaderGrace time.Duration
	roleGen     atomic.Int64
	// listeners are the client ports (listen.go), under listenMu (a
	// reconfig may move the plaintext one).
	listeners []listener
	listenMu  sync.Mutex
	// clientTLS serves TLS on the client ports; nil when no TLS is
	// configured. handshakes bounds the handshakes in progress.
	clientTLS          *tls.Config
	clientTLSSource    *tlsconf.Source
	handshakes         handshakeLimiter
	handshakeDetection time.Duration
	id                 int64
	started            time.Time
	maxBuffer          int
	maxQueued          int
	attached           func(session int64) // Options.Attached
	saslUsers          map[string]string
	audit              *auditor // nil when audit.enable is off

	// node hosts the state machine; its state lock orders reads against
	// applies. Lock order: the state lock, then wmu, then a conn's outMu.
	node *node.Node
	// wmu guards watches; readers register watches under the state lock
	// (shared) + wmu.
	wmu     sync.Mutex
	watches *watch.Registry

	lastZxid atomic.Int64 // mirrors fsm.LastZxid for lock-free pings
	// leading is set while this member runs the leader's duties (session
	// expiry, container reaping): from when a new leader has given every
	// session a fresh timeout until it stops leading.
	leading atomic.Bool

	touchMu sync.Mutex
	// touched holds the sessions whose clients this member heard from
	// since its last touch entry; a member that is not the leader forwards
	// them through the log every tick.
	touched map[fsm.SessionID]struct{}

	connMu sync.Mutex
	// conns holds every open client connection; perIP counts them by
	// remote address for maxClientCnxns.
	conns      map[watch.WatcherID]*conn
	perIP      map[string]int
	nextConnID watch.WatcherID

	sessMu sync.Mutex
	// live holds liveness of sessions (not replicated): deadline and the
	// connection currently bound. Invariant: a session in live exists in
	// the fsm, or its createSession is in flight, or it is local
	// (localsessions.go).
	live        map[fsm.SessionID]*liveSession
	sessionBase int64
	sessionSeq  int64

	// ro tracks when this member may serve read-only clients
	// (readonly.go).
	ro readOnlyState

	stats serverStats
	// traceMask is ZooKeeper's trace mask (gtmk, stmk): kept and reported,
	// it selects nothing in Warden's logs.
	traceMask atomic.Int64
	// metrics are ZooKeeper's and Warden's metrics (metrics.go).
	metrics *metrics.Set
	// limits admits client requests (limits.go); connThrottle admits
	// sessions (throttle.go).
	limits       *limiter
	connThrottle *connThrottle

	closeOnce sync.Once
	closed    chan struct{}
	wg        sync.WaitGroup
}

type liveSession struct {
	timeout  time.Duration
	expireAt time.Time
	conn     *conn
	closing  bool
	// local marks a session only this member knows (localsessions.go):
	// it has no createSession entry, and this member expires it. passwd
	// is its password; readOnly is set when it was created in read-only
	// mode.
	local    bool
	readOnly bool
	passwd   []byte
	// writes counts the session's proposed writes not yet applied, from
	// any of its connections: a re-attach waits for them, so the session's
	// requests take effect in order across connections, as in ZooKeeper.
	writes pendingWrites
}

// pendingWrites counts writes in flight; idle returns a channel closed
// when there are none. Unlike a WaitGroup it may be incremented while
// someone waits.
type pendingWrites struct {
	mu sync.Mutex
	n  int
	// Invariant: zero is nil or closed when n == 0, open when n > 0.
	zero chan struct{}
}

func (p *pendingWrites) add() {
	p.mu.Lock()
	if p.n == 0 {
		p.zero = make(chan struct{})
	}
	p.n++
	p.mu.Unlock()
}

func (p *pendingWrites) done() {
	p.mu.Lock()
	if p.n--; p.n == 0 {
		close(p.zero)
	}
	p.mu.Unlock()
}

func (p *pendingWrites) idle() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.n == 0 {
		ch := make(chan struct{})
		close(ch)
		return ch
	}
	return p.zero
}

// Start validates cfg, listens on its client address and serves until
// Close.
func Start(cfg Config, opts Options) (_ *Server, err error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	s := &Server{
		cfg:       cfg,
		log:       opts.Logger,
		now:       opts.Now,
		id:        max(cfg.MyID, 0), // standalone ZooKeeper's server id is 0
		maxBuffer: cfg.JuteMaxBuffer,
		maxQueued: opts.MaxQueuedBytes,
		attached:  opts.Attached,
		watches:   watch.NewRegistry(),
		conns:     make(map[watch.WatcherID]*conn),
		perIP:     make(map[string]int),
		live:      make(map[fsm.SessionID]*liveSession),
		touched:   make(map[fsm.SessionID]struct{}),
		closed:    make(chan struct{}),
	}
	s.stats.responses = newBufferSizes()
	s.traceMask.Store(defaultTraceMask)
	if s.log == nil {
		s.log = slog.Default()
	}
	if s.now == nil {
		s.now = time.Now
	}
	if s.maxQueued <= 0 {
		s.maxQueued = 64 << 20
	}
	if s.maxBuffer <= 0 {
		s.maxBuffer = wire.DefaultMaxBuffer
	}
	s.audit = newAuditor(cfg, opts.AuditLogger, s.log)
	defer func() {
		if err != nil {
			s.audit.server(auditServerStart, auditFailure)
		}
	}()
	s.started = s.now()
	fsmOpts := fsm.Options{
		ExtendedTypes:     cfg.ExtendedTypesEnabled,
		SkipACL:           cfg.SkipACL,
		EnforceQuota:      cfg.EnforceQuota,
		ReconfigEnabled:   cfg.ReconfigEnabled,
		Ensemble:          !cfg.Standalone(),
		StandaloneEnabled: cfg.StandaloneEnabled,
		MaxBuffer:         s.maxBuffer,
	}
	s.membersWake = make(chan struct{}, 1)
	// Session ids as ZooKeeper makes them: server id in the top byte, the
	// start time in the middle, a counter below.
	s.sessionBase = int64(uint64(s.started.UnixMilli())<<24>>8) | s.id<<56
	if err := s.checkAuth(); err != nil {
		return nil, err
	}
	if err := s.setupClientTLS(); err != nil {
		return nil, err
	}

	m, err := newMetrics(&cfg)
	if err != nil {
		return nil, err
	}
	s.metrics = m
	s.limits = newLimiter(s)
	s.connThrottle = newConnThrottle(s)
	slow, err := slowSync(&cfg)
	if err != nil {
		return nil, err
	}
	if v := cfg.Participants(); !cfg.Standalone() && v%2 == 0 {
		s.log.Warn("an even number of voting members tolerates no more failures than one fewer: use 3 or 5",
			"voters", v, "tolerates_failures", (v-1)/2)
	}
	nc := s.nodeConfig(fsmOpts, opts)
	nc.Metrics, nc.SlowSync = s.metrics, slow
	nd, err := node.Open(nc)
	if err != nil {
		return nil, err
	}
	s.node = nd
	s.exportMetrics()
	if !cfg.Standalone() {
		nd.Lock()
		if nd.FSM().Membership() == nil {
			nd.FSM().SetMembership([]byte(cfg.MembershipText()), s.started.UnixMilli())
		}
		s.membershipChanged(nd.FSM().Membership())
		nd.Unlock()
	}
	if err := nd.Run(); err != nil {
		return nil, err
	}
	if nd.Standalone() {
		s.leading.Store(true) // alone, it always leads; Run returned once it did
	}
	s.node.RLock()
	s.lastZxid.Store(int64(s.node.FSM().LastZxid()))
	s.node.RUnlock()
	s.reviveSessions()

	if err := s.listen(opts); err != nil {
		nd.Stop()
		return nil, err
	}
	s.listenMu.Lock()
	for _, l := range s.listeners {
		s.wg.Add(1)
		go s.acceptLoop(l)
	}
	s.listenMu.Unlock()
	if !cfg.Standalone() {
		s.wg.Add(1)
		go s.membershipLoop()
	}
	s.watchCerts()
	if !opts.DisableTimers {
		s.wg.Add(1)
		go s.timerLoop()
	}
	s.audit.server(auditServerStart, auditSuccess)
	s.log.Info("serving", "addr", s.Addr().String(), "secure_addr", s.SecureAddr(), "myid", s.id, "mode", s.node.Role().Mode(), "tickTime", cfg.TickTime)
	return s, nil
}

// Close stops accepting, closes every connection and stops the log. It
// waits for the server's goroutines to finish.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		s.audit.server(auditServerStop, auditInvoked)
		close(s.closed)
		s.closeListeners()
		s.connMu.Lock()
		conns := make([]*conn, 0, len(s.conns))
		for _, c := range s.conns {
			conns = append(conns, c)
		}
		s.connMu.Unlock()
		for _, c := range conns {
			c.close("server shutting down")
		}
		s.node.Stop()
	})
	s.wg.Wait()
	return nil
}

// admit applies connection limits and starts serving nc.
func (s *Server) admit(nc net.Conn, mode portMode) {
	ip := remoteIP(nc.RemoteAddr())
	s.connMu.Lock()
	if max := s.cfg.MaxClientCnxns; max > 0 && s.perIP[ip] >= max {
		s.connMu.Unlock()
		s.stats.rejected.Add(1)
		s.log.Warn("too many connections from one address; closing the new one (raise maxClientCnxns in zoo.cfg)",
			"remote", ip, "maxClientCnxns", max)
		nc.Close()
		return
	}
	if max := s.cfg.MaxCnxns; max > 0 && len(s.conns) >= max {
		s.connMu.Unlock()
		s.stats.rejected.Add(1)
		s.log.Warn("too many connections; closing the new one (raise maxCnxns in zoo.cfg)", "maxCnxns", max)
		nc.Close()
		return
	}
	s.nextConnID++
	c := newConn(s, nc, s.nextConnID, ip)
	c.mode = mode
	if mode == plainPort {
		if ta, ok := nc.RemoteAddr().(*net.TCPAddr); ok && !ta.IP.IsLoopback() {
			s.stats.nonMTLSRemote.Add(1)
		} else {
			s.stats.nonMTLSLocal.Add(1)
		}
	}
	s.conns[c.id] = c
	s.perIP[ip]++
	s.connMu.Unlock()
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		c.serve()
	}()
}

// forget removes a closed connection from the server's tables.
func (s *Server) forget(c *conn) {
	s.connMu.Lock()
	if _, ok := s.conns[c.id]; ok {
		delete(s.conns, c.id)
		if s.perIP[c.ip]--; s.perIP[c.ip] <= 0 {
			delete(s.perIP, c.ip)
		}
	}
	s.connMu.Unlock()
	s.limits.forget(c)
	s.node.RLock()
	s.wmu.Lock()
	s.watches.RemoveWatcher(c.id)
	s.wmu.Unlock()
	s.node.RUnlock()
	if sid := c.sessionID(); sid != 0 {
		s.sessMu.Lock()
		if ls, ok := s.live[sid]; ok && ls.conn == c {
			ls.conn = nil
		}
		s.sessMu.Unlock()
	}
}

// connByID returns the open connection with the given id; the caller
// holds connMu.
func (s *Server) connByID(id watch.WatcherID) *conn { return s.conns[id] }

// propose sends an entry to the log. done, when not nil, is called exactly
// once: with the entry's output on the apply goroutine while it holds the
// state lock (so it must be quick and must not block or take that lock),
// or with an error wrapping node.ErrProposalLost from any goroutine when
// the outcome is unknown. An error from propose itself means the entry
// was not queued and done will not be called.
func (s *Server) propose(e *fsm.Entry, done node.Done) error {
	return s.node.Propose(e, s.now(), done)
}

// proposeAndWait proposes e and waits for its answer: the output once
// applied, or the error of a proposal refused or lost (node.ErrNotServing
// when the server closes meanwhile).
func (s *Server) proposeAndWait(e *fsm.Entry) (fsm.Output, error) {
	type result struct {
		out fsm.Output
		err error
	}
	ch := make(chan result, 1)
	if err := s.propose(e, func(out fsm.Output, err error) { ch <- result{out, err} }); err != nil {
		return fsm.Output{}, err
	}
	select {
	case r := <-ch:
		return r.out, r.err
	case <-s.closed:
		return fsm.Output{}, node.ErrNotServing
	}
}

// applied is the node's Applied hook: it runs on the apply goroutine
// holding the state lock exclusively, right after e was applied and
// before its proposer's reply is queued: watches fire on local
// connections, sessions are tracked.
func (s *Server) applied(e *fsm.Entry, out fsm.Output) {
	s.lastZxid.Store(int64(out.Zxid))
	if len(out.Changes) > 0 {
		s.fireWatches(out.Zxid, out.Changes)
	}
	switch {
	case out.ClosedSession != 0:
		s.audit.sessionClosed(out.ClosedSession, out.Changes)
		s.sessionClosed(out.ClosedSession)
	case e.Op == wire.OpCreateSession && out.Err == wire.CodeOK:
		s.sessionCreated(e)
	case len(out.Touched) > 0:
		s.touchedElsewhere(out.Touched)
	case out.Moved != 0 && e.Origin != s.id:
		s.sessionMoved(out.Moved)
	case (e.Op == fsm.OpReconfigCommit || e.Op == fsm.OpInitialMembership) && out.Err == wire.CodeOK:
		s.membershipChanged(s.node.FSM().Membership())
	}
}

// newPassword returns 16 random bytes for a new session.
func newPassword() []byte {
	p := make([]byte, 16)
	if _, err := rand.Read(p); err != nil {
		panic("server: no randomness for session passwords: " + err.Error())
	}
	return p
}

// newSessionID returns a fresh session id.
func (s *Server) newSessionID() fsm.SessionID {
	s.sessMu.Lock()
	defer s.sessMu.Unlock()
	for {
		s.sessionSeq++
		id := fsm.SessionID(s.sessionBase + s.sessionSeq)
		if id == 0 || uint64(id) == 1<<63 {
			continue
		}
		if _, taken := s.live[id]; !taken {
			return id
		}
	}
}

func remoteIP(a net.Addr) string {
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	host, _, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	return host
}
