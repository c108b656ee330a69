package transport

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"slices"
	"strconv"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// ErrClosed is returned by Start after Close.
var ErrClosed = errors.New("transport: closed")

// ErrInvalidConfig is wrapped by the errors of TCPConfig.Validate.
var ErrInvalidConfig = errors.New("transport: invalid configuration")

// TCPConfig configures a TCP transport. Zero durations and sizes take
// their defaults.
type TCPConfig struct {
	// Ensemble identifies the ensemble: members with different
	// identities refuse each other's connections. With a static
	// membership the caller derives it from the server lines (their ids
	// and roles, sorted), so members configured with different lines
	// refuse each other; with a dynamic one (zoo.cfg's
	// reconfigEnabled=true) it is DynamicEnsemble, and membership is the
	// peer set alone. Required; at most 1024 bytes.
	Ensemble string
	// ID is this member's raft id. Required (not 0).
	ID uint64
	// Listen is the address of this member's quorum port, e.g.
	// "10.0.0.2:2888". Ignored when Listener is set.
	Listen string
	// Listener, when set, is used instead of listening on Listen (tests).
	// It must hand out plain TCP connections: TLS is ServerTLS's job. The
	// transport owns it from NewTCP on and closes it, also when NewTCP
	// fails.
	Listener net.Listener
	// Peers maps the raft id of every other member to the host:port of
	// its quorum port. It must not contain ID. The transport keeps a
	// copy; SetPeers replaces it.
	Peers map[uint64]string
	// Snapshots opens the bodies of the snapshots this member sends and
	// stores those it receives. Required.
	Snapshots Snapshots
	// Logger receives the transport's logs. Default slog.Default().
	Logger *slog.Logger
	// QueueLen is the capacity of each peer's send queue, in messages.
	// Default 4096.
	QueueLen int
	// DialTimeout bounds the TCP connect to a peer. Default 5s.
	DialTimeout time.Duration
	// HandshakeTimeout bounds the handshake of a new connection, on both
	// sides: the TLS handshake when there is one, then the hello and its
	// reply, as one budget. Default 10s.
	HandshakeTimeout time.Duration
	// WriteTimeout bounds one write to a peer: a peer that reads nothing
	// for this long has its connection closed and redialled. Default 10s.
	WriteTimeout time.Duration
	// MinBackoff and MaxBackoff bound the wait between two dials to a
	// peer that cannot be reached: the wait starts at MinBackoff and
	// doubles up to MaxBackoff, and each actual wait is drawn at random
	// from the upper half of it. Defaults 50ms and 2s.
	MinBackoff, MaxBackoff time.Duration
	// steady replaces steadyAfter's answer when not zero (tests).
	steady time.Duration
	// SnapshotChunk is the size of the chunks a snapshot body is sent in,
	// in bytes. Default 1 MiB; at most 64 MiB − 1.
	SnapshotChunk int
	// Dial opens a connection to a peer. ctx carries DialTimeout and is
	// cancelled by Close, or when SetPeers removes or readdresses the
	// peer. Default: a net.Dialer's DialContext.
	Dial func(ctx context.Context, network, addr string) (net.Conn, error)
	// PeerName names a raft id in logs (the server shows myid); nil
	// shows the raft id.
	PeerName func(id uint64) string

	// ServerTLS, when set, makes the quorum port a TLS server (zoo.cfg's
	// sslQuorum, or portUnification during a rolling enablement): every
	// accepted connection must open with a TLS handshake run with this
	// configuration, used as it is, so its GetConfigForClient or
	// GetCertificate, if set, serves a reloaded certificate to the next
	// handshake. The caller's configuration decides what a peer must
	// present (for sslQuorum, ClientAuth tls.RequireAndVerifyClientCert
	// with ClientCAs the quorum trust store). It must have a certificate
	// source: Certificates, GetCertificate or GetConfigForClient. Nil (the
	// default): the quorum port accepts only plaintext.
	ServerTLS *tls.Config
	// PortUnification makes a quorum port with ServerTLS accept plaintext
	// peers too (zoo.cfg's portUnification): the first byte of each
	// connection decides, 0x16 (a TLS handshake record) for TLS, anything
	// else for plaintext. It requires ServerTLS. Default false: with
	// ServerTLS, a plaintext peer is refused.
	PortUnification bool
	// DialTLS returns the TLS client configuration for dialling peer id at
	// host (the host of its Peers address), or nil to dial it in
	// plaintext. It is called for every dial, so it may return a
	// configuration with a reloaded certificate. The configuration is used
	// as it is: it carries the client certificate and verifies the peer's
	// (RootCAs the quorum trust store); when its ServerName is empty the
	// transport uses a copy whose ServerName is host, so the peer's
	// certificate is checked against the host of its server line. Nil
	// (the default): every peer is dialled in plaintext.
	DialTLS func(id uint64, host string) *tls.Config
}

// DynamicEnsemble is the ensemble identity (TCPConfig.Ensemble) of
// members whose membership changes at run time (zoo.cfg's
// reconfigEnabled=true). It names no members, because the server lines
// of a joining member differ from the others' until its addition
// commits: who may connect is decided by the peer set (SetPeers) alone.
// Every member of an ensemble must use it or none: a member with a
// static identity refuses one with DynamicEnsemble, saying so.
const DynamicEnsemble = "dynamic"

// Defaults of TCPConfig.
const (
	DefaultQueueLen         = 4096
	DefaultDialTimeout      = 5 * time.Second
	DefaultHandshakeTimeout = 10 * time.Second
	DefaultWriteTimeout     = 10 * time.Second
	DefaultMinBackoff       = 50 * time.Millisecond
	DefaultMaxBackoff       = 2 * time.Second
	DefaultSnapshotChunk    = 1 << 20
)

// withDefaults returns c with its zero fields set to their defaults.
func (c TCPConfig) withDefaults() TCPConfig {
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.QueueLen == 0 {
		c.QueueLen = DefaultQueueLen
	}
	if c.DialTimeout == 0 {
		c.DialTimeout = DefaultDialTimeout
	}
	if c.HandshakeTimeout == 0 {
		c.HandshakeTimeout = DefaultHandshakeTimeout
	}
	if c.WriteTimeout == 0 {
		c.WriteTimeout = DefaultWriteTimeout
	}
	if c.MinBackoff == 0 {
		c.MinBackoff = DefaultMinBackoff
		if c.MaxBackoff > 0 && c.MaxBackoff < c.MinBackoff {
			c.MinBackoff = c.MaxBackoff
		}
	}
	if c.MaxBackoff == 0 {
		c.MaxBackoff = max(DefaultMaxBackoff, c.MinBackoff)
	}
	if c.SnapshotChunk == 0 {
		c.SnapshotChunk = DefaultSnapshotChunk
	}
	if c.Dial == nil {
		c.Dial = (&net.Dialer{}).DialContext
	}
	return c
}

// Validate reports the first problem in c (with its defaults applied) as
// an error wrapping ErrInvalidConfig.
func (c TCPConfig) Validate() error {
	c = c.withDefaults()
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w: "+format, append([]any{ErrInvalidConfig}, args...)...)
	}
	switch {
	case c.ID == 0:
		return bad("ID is 0 (raft ids start at 1)")
	case c.Ensemble == "":
		return bad("Ensemble is empty (derive it from the server lines)")
	case len(c.Ensemble) > maxEnsembleLen:
		return bad("Ensemble is %d bytes long, more than %d", len(c.Ensemble), maxEnsembleLen)
	case c.Listen == "" && c.Listener == nil:
		return bad("neither Listen nor Listener is set")
	case c.Snapshots == nil:
		return bad("Snapshots is not set")
	case c.QueueLen < 0:
		return bad("QueueLen %d is negative", c.QueueLen)
	case c.DialTimeout < 0 || c.HandshakeTimeout < 0 || c.WriteTimeout < 0:
		return bad("a timeout is negative")
	case c.MinBackoff <= 0 || c.MinBackoff > c.MaxBackoff:
		return bad("MinBackoff %v must be positive and at most MaxBackoff %v", c.MinBackoff, c.MaxBackoff)
	case c.SnapshotChunk < 0 || c.SnapshotChunk >= maxFrame:
		return bad("SnapshotChunk %d is not between 1 and %d", c.SnapshotChunk, maxFrame-1)
	case c.PortUnification && c.ServerTLS == nil:
		return bad("PortUnification is set without ServerTLS (port unification accepts TLS and plaintext, so it needs the quorum TLS configuration)")
	case c.ServerTLS != nil && len(c.ServerTLS.Certificates) == 0 && c.ServerTLS.GetCertificate == nil && c.ServerTLS.GetConfigForClient == nil:
		return bad("ServerTLS has no certificate (set Certificates, GetCertificate or GetConfigForClient: the quorum keystore)")
	}
	return validatePeers(c.ID, c.Peers, true)
}

// validatePeers reports the first problem in a peer set of member self,
// as an error wrapping ErrInvalidConfig; addrs says whether addresses
// must be host:port.
func validatePeers(self uint64, peers map[uint64]string, addrs bool) error {
	// In id order, so the same set always reports the same problem.
	for _, id := range slices.Sorted(maps.Keys(peers)) {
		addr := peers[id]
		switch {
		case id == 0:
			return fmt.Errorf("%w: Peers has id 0 (raft ids start at 1)", ErrInvalidConfig)
		case id == self:
			return fmt.Errorf("%w: Peers contains this member's own ID %d", ErrInvalidConfig, id)
		}
		if !addrs {
			continue
		}
		if _, _, err := net.SplitHostPort(addr); err != nil {
			return fmt.Errorf("%w: address %q of peer %d is not host:port: %v", ErrInvalidConfig, addr, id, err)
		}
	}
	return nil
}

// TCP is the peer transport on the quorum port (doc.go draws its wire
// format).
//
// Each member dials every peer once and keeps that connection for its own
// messages to the peer, so a pair of members has two connections, one per
// direction, and messages to a peer arrive in the order they were sent.
// Per peer, a sender goroutine drains a bounded queue into the connection,
// dialling again with backoff when it breaks; while a peer is unreachable
// its messages are dropped. Per accepted connection, a goroutine reads
// frames and delivers them to the Handler, so the Handler is called from
// several goroutines at once, in order for each peer. SetPeers starts and
// stops senders as the peer set changes.
//
// Logs: connecting, losing and regaining a peer is one line each (Info,
// Warn, Info), and so is each change SetPeers makes (Info); refused
// handshakes, failed TLS handshakes and peers that break the protocol are
// logged at Warn, at most once a minute for the same remote host and
// reason (for a member that is not a peer, once a minute per member id,
// as a joining member retries until its addition commits); everything
// else is Debug.
//
// Locks: TCP.mu, outConn.mu and logLimiter.mu are leaves, never held
// together, and no Handler or Snapshots method is called under them.
type TCP struct {
	cfg   TCPConfig // with defaults; no Listener or Peers
	log   *slog.Logger
	ln    net.Listener
	limit *logLimiter

	// ctx is cancelled by Close: dials and backoff waits end.
	ctx    context.Context
	cancel context.CancelFunc
	// wg counts every goroutine of the transport.
	wg sync.WaitGroup

	// testHookUp, when set before Start, is called by a peer's sender
	// after each handshake that succeeded.
	testHookUp func(peer uint64)

	mu sync.Mutex
	// handler is set once by Start, before any goroutine starts; the
	// goroutines read it without mu.
	handler Handler
	started bool
	closed  bool
	// peers is the current peer set, by id. SetPeers replaces the map;
	// it is never modified once stored, so a copy of the field read
	// under mu may be used after unlocking.
	// Invariant: a peer in peers has a running sender once started is
	// set and until closed is; a peer no longer in it has its context
	// cancelled.
	peers map[uint64]*peer
	// conns holds every open connection, dialled or accepted, so Close
	// can break them.
	conns map[net.Conn]struct{}
	// inbound is the newest accepted connection of each peer; an older
	// one is closed when a newer one is accepted.
	// Invariant: every connection in inbound is in conns.
	inbound map[uint64]net.Conn
}

var _ Transport = (*TCP)(nil)

// NewTCP checks cfg and listens on its quorum port. Nothing is sent or
// received before Start.
func NewTCP(cfg TCPConfig) (*TCP, error) {
	if err := cfg.Validate(); err != nil {
		if cfg.Listener != nil {
			cfg.Listener.Close()
		}
		return nil, err
	}
	cfg = cfg.withDefaults()
	ln := cfg.Listener
	if ln == nil {
		var err error
		if ln, err = net.Listen("tcp", cfg.Listen); err != nil {
			return nil, fmt.Errorf("transport: listening on the quorum port %s: %w", cfg.Listen, err)
		}
	}
	peers := cfg.Peers
	// The peer set lives in t.peers.
	cfg.Listener, cfg.Peers = nil, nil
	ctx, cancel := context.WithCancel(context.Background())
	t := &TCP{
		cfg:     cfg,
		log:     cfg.Logger,
		ln:      ln,
		peers:   make(map[uint64]*peer, len(peers)),
		limit:   &logLimiter{every: time.Minute, last: make(map[string]time.Time)},
		ctx:     ctx,
		cancel:  cancel,
		conns:   make(map[net.Conn]struct{}),
		inbound: make(map[uint64]net.Conn),
	}
	for id, addr := range peers {
		t.peers[id] = t.newPeer(id, addr)
	}
	return t, nil
}

// newPeer returns the sending side of the link to peer id at addr, not
// started.
func (t *TCP) newPeer(id uint64, addr string) *peer {
	host, _, _ := net.SplitHostPort(addr) // checked by validatePeers
	ctx, cancel := context.WithCancel(t.ctx)
	return &peer{
		t: t, id: id, addr: addr, host: host,
		ctx: ctx, cancel: cancel,
		queuec: make(chan *raftpb.Message, t.cfg.QueueLen),
		kickc:  make(chan struct{}, 1),
	}
}

// Addr returns the address the transport listens on.
func (t *TCP) Addr() net.Addr { return t.ln.Addr() }

// Start accepts peer connections, delivering what they carry to h, and
// starts dialling every peer. It returns ErrClosed after Close.
func (t *TCP) Start(h Handler) error {
	if h == nil {
		return errors.New("transport: Start needs a Handler")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	switch {
	case t.closed:
		return ErrClosed
	case t.started:
		return errors.New("transport: Start called twice")
	}
	t.started, t.handler = true, h
	t.wg.Add(1 + len(t.peers))
	go t.acceptLoop()
	for _, p := range t.peers {
		go p.run()
	}
	return nil
}

// Send queues each message for its peer and returns at once. A message
// whose peer's queue is full is dropped and the peer reported Unreachable
// (once per call); a dropped MsgSnap is also reported with
// SnapshotSent(false). Messages to a member that is not a peer are
// dropped. Send is safe for concurrent use; after Close it drops
// everything.
func (t *TCP) Send(msgs []*raftpb.Message) {
	var (
		notSent []uint64 // peers of the MsgSnaps dropped, to report
		full    []uint64 // peers to report Unreachable, once each
	)
	// Queued under mu, so a peer SetPeers removes is never handed a
	// message after its sender has drained its queue. The queues do not
	// block.
	t.mu.Lock()
	h, closed := t.handler, t.closed
	if closed {
		t.mu.Unlock()
		return
	}
	for _, m := range msgs {
		to := m.GetTo()
		snap := m.GetType() == raftpb.MessageType_MsgSnap
		p := t.peers[to]
		if p == nil {
			t.log.Debug("dropped a message to a member that is not a peer", "peer", t.name(to), "type", m.GetType())
			if snap {
				notSent = append(notSent, to)
			}
			continue
		}
		select {
		case p.queuec <- m:
			continue
		default:
		}
		if snap {
			notSent = append(notSent, to)
		}
		if !slices.Contains(full, to) {
			full = append(full, to)
			t.log.Debug("send queue to peer is full; dropping messages", "peer", t.name(to), "queue", cap(p.queuec))
		}
	}
	t.mu.Unlock()
	if h == nil {
		return
	}
	for _, to := range full {
		h.Unreachable(to)
	}
	for _, to := range notSent {
		h.SnapshotSent(to, false)
	}
}

// SetPeers replaces the peer set (Transport.SetPeers). A new peer gets a
// queue and a sender, which dials it at once; a removed one has its
// sender stopped, its connections closed (a dial or handshake in
// progress included) and its queue dropped; a readdressed one is a
// removed one followed by a new one. Its peers are checked as
// TCPConfig.Peers is.
func (t *TCP) SetPeers(peers map[uint64]string) error {
	if err := validatePeers(t.cfg.ID, peers, true); err != nil {
		return err
	}
	var (
		added, removed []*peer
		inbound        []net.Conn // of the removed peers
	)
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	old := t.peers
	next := make(map[uint64]*peer, len(peers))
	for id, addr := range peers {
		if p := old[id]; p != nil && p.addr == addr {
			next[id] = p
			continue
		}
		p := t.newPeer(id, addr)
		next[id] = p
		added = append(added, p)
	}
	for id, p := range old {
		if next[id] == p {
			continue
		}
		removed = append(removed, p)
		if next[id] != nil {
			continue // readdressed: its own connection to us may stay
		}
		if c := t.inbound[id]; c != nil {
			inbound = append(inbound, c)
			delete(t.inbound, id)
		}
	}
	t.peers = next
	for _, p := range removed {
		// Under mu: no Send can queue for p from here on, so its sender
		// drains everything queued for it.
		p.cancel()
	}
	if t.started {
		t.wg.Add(len(added))
		for _, p := range added {
			go p.run()
		}
	}
	t.mu.Unlock()
	for _, c := range inbound {
		c.Close()
	}
	for _, p := range removed {
		if np := next[p.id]; np != nil {
			t.log.Info("peer's address changed; reconnecting", "peer", t.name(p.id), "addr", np.addr, "previous", p.addr)
		} else {
			t.log.Info("peer removed; disconnected from it", "peer", t.name(p.id), "addr", p.addr)
		}
	}
	for _, p := range added {
		if old[p.id] == nil {
			t.log.Info("peer added", "peer", t.name(p.id), "addr", p.addr)
		}
	}
	return nil
}

// peer returns the current peer id, or nil.
func (t *TCP) peer(id uint64) *peer {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.peers[id]
}

// Close stops listening, closes every connection and waits for the
// transport's goroutines, including a Snapshots.Receive in progress
// (whose body reader fails once its connection is closed). Messages still
// queued are dropped. Close is idempotent.
func (t *TCP) Close() error {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return nil
	}
	t.closed = true
	conns := slices.Collect(maps.Keys(t.conns))
	t.mu.Unlock()
	t.cancel()
	err := t.ln.Close()
	for _, c := range conns {
		c.Close()
	}
	t.wg.Wait()
	if err != nil && !errors.Is(err, net.ErrClosed) {
		return fmt.Errorf("transport: closing the listener: %w", err)
	}
	return nil
}

// track registers an open connection so Close can break it. After Close
// it closes c and returns false.
func (t *TCP) track(c net.Conn) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		c.Close()
		return false
	}
	t.conns[c] = struct{}{}
	return true
}

// untrack closes c and forgets it; from is the peer of an accepted
// connection, or 0.
func (t *TCP) untrack(c net.Conn, from uint64) {
	c.Close()
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.conns, c)
	if from != 0 && t.inbound[from] == c {
		delete(t.inbound, from)
	}
}

// logLimiter lets one line through per key and interval, so a
// misconfigured or hostile dialer that retries every second does not fill
// the log.
type logLimiter struct {
	every time.Duration

	mu   sync.Mutex
	last map[string]time.Time // when each key was last let through
}

// level returns lvl when key may be logged now, else Debug.
func (l *logLimiter) level(key string, lvl slog.Level) slog.Level {
	now := time.Now()
	l.mu.Lock()
	defer l.mu.Unlock()
	if at, ok := l.last[key]; ok && now.Sub(at) < l.every {
		return slog.LevelDebug
	}
	if len(l.last) >= 1024 {
		clear(l.last)
	}
	l.last[key] = now
	return lvl
}

// hostOf returns the host part of a remote address, the key of the log
// limiter (a dialer's port changes with every connection).
func hostOf(addr string) string {
	if host, _, err := net.SplitHostPort(addr); err == nil {
		return host
	}
	return addr
}

// name returns how logs name member id.
func (t *TCP) name(id uint64) string {
	if t.cfg.PeerName != nil {
		return t.cfg.PeerName(id)
	}
	return strconv.FormatUint(id, 10)
}
