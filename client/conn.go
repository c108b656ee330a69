package client

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenzk/warden/wire"
)

// closeWait bounds how long Close waits for the server to answer
// closeSession.
const closeWait = 3 * time.Second

// Conn is a session with a ZooKeeper ensemble. It is safe for concurrent
// use: requests from many goroutines are pipelined on one connection.
// After a connection drops the Conn reconnects by itself (to the next
// member, with backoff) and re-attaches the session; see the package doc.
type Conn struct {
	opts   options
	hosts  *hostList // the servers and the order to try them
	chroot string
	log    *slog.Logger

	xid      atomic.Int32
	lastZxid atomic.Int64 // zxid of the last matched reply; sent on re-attach

	watches *watchManager
	events  *broadcaster

	stopCh    chan struct{} // closed by Close: stops the session loop and the queues
	closeOnce sync.Once
	wg        sync.WaitGroup // session loop and queue pumps

	mu sync.Mutex
	// state and the session: written by the session loop.
	state     State
	sessionID int64
	passwd    []byte
	timeout   time.Duration // negotiated; 0 before the first session
	// cur is the live link; nil while not connected.
	// Invariant: cur != nil ⇔ state == StateConnected.
	cur *link
	// readyCh is closed when a link becomes live or the Conn ends.
	readyCh chan struct{}
	// termErr is set once the Conn is dead (expired, auth failed, closed);
	// termCh is closed at the same moment.
	termErr error
	termCh  chan struct{}
	closing bool // Close has begun: do not reconnect
	auths   []authInfo
}

// Connect parses "host:port,host:port[/chroot]", shuffles the members and
// returns once a session is established, or fails when ctx ends first.
// The Conn then keeps the session alive and reconnects by itself until
// Close.
func Connect(ctx context.Context, servers string, opts ...Option) (*Conn, error) {
	addrs, chroot, err := parseServers(servers)
	if err != nil {
		return nil, err
	}
	o := defaultOptions()
	for _, opt := range opts {
		opt(&o)
	}
	c := &Conn{
		opts:    o,
		hosts:   newHostList(addrs, rand.New(rand.NewPCG(rand.Uint64(), rand.Uint64()))),
		chroot:  chroot,
		log:     o.log,
		stopCh:  make(chan struct{}),
		readyCh: make(chan struct{}),
		termCh:  make(chan struct{}),
		auths:   append([]authInfo(nil), o.auths...),
	}
	c.watches = newWatchManager(c)
	c.events = newBroadcaster(c.stopCh, &c.wg)
	c.wg.Add(1)
	go c.sessionLoop()
	if o.trackEnsemble {
		c.wg.Add(1)
		go c.trackEnsemble()
	}

	select {
	case <-c.ready():
		c.mu.Lock()
		err := c.termErr
		c.mu.Unlock()
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("client: connect to %s: %w", servers, err)
		}
		return c, nil
	case <-ctx.Done():
		c.Close()
		return nil, fmt.Errorf("client: connect to %s: %w", servers, ctx.Err())
	}
}

func (c *Conn) ready() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.readyCh
}

// nextXid returns the next request xid: 1, 2, … wrapping back to 1.
func (c *Conn) nextXid() int32 {
	for {
		x := c.xid.Add(1)
		if x > 0 {
			return x
		}
		c.xid.CompareAndSwap(x, 0)
	}
}

// SessionID returns the session id (0 before the first session).
func (c *Conn) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sessionID
}

// SessionTimeout returns the session timeout the server negotiated.
func (c *Conn) SessionTimeout() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.timeout
}

// State returns the current state.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// SessionEvents returns a new subscription to the session's state: first
// the current state (normally StateConnected), then every change, in
// order. Each call has its own unbounded queue, so several readers (the
// application, caches, recipes) can follow the session and a slow reader
// never blocks the client or the others. The channel is closed after the
// terminal event (Expired, AuthFailed or Closed); after Close at most 64
// undelivered events remain readable. A subscription made after the end
// holds just the terminal event.
func (c *Conn) SessionEvents() <-chan SessionEvent { return c.events.subscribe() }

// Close ends the session: it sends closeSession (waiting at most a few
// seconds for the answer), closes the connection, ends every watch with
// ErrClosed and stops all goroutines. It is idempotent and returns nil.
func (c *Conn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closing = true
		l := c.cur
		dead := c.termErr != nil
		c.mu.Unlock()
		if l != nil && !dead {
			r := newRequest(wire.OpCloseSession, nil, nil)
			if l.enqueue(r) {
				t := time.NewTimer(min(closeWait, l.readTimeout))
				select {
				case <-r.done:
				case <-t.C:
				}
				t.Stop()
			}
		}
		c.terminate(ErrClosed, StateClosed)
		close(c.stopCh)
		c.wg.Wait()
	})
	return nil
}

// terminate makes the Conn dead with err: waiters and in-flight requests
// get err, watches end, the terminal event is queued. Idempotent.
func (c *Conn) terminate(err error, st State) {
	c.mu.Lock()
	if c.termErr != nil {
		c.mu.Unlock()
		return
	}
	c.termErr = err
	c.state = st
	l := c.cur
	c.cur = nil
	sid := c.sessionID
	close(c.termCh)
	select {
	case <-c.readyCh:
	default:
		close(c.readyCh)
	}
	c.mu.Unlock()
	if l != nil {
		l.fail(err, err)
	}
	c.log.Info("session ended", "state", st.String(), "session", fmt.Sprintf("0x%x", sid))
	c.events.push(SessionEvent{State: st, SessionID: sid})
	c.events.end()
	c.watches.endAll(err)
}

// authFailed is called by the read loop when the server rejects an auth
// packet; ZooKeeper then closes the connection and the client gives up.
func (c *Conn) authFailed() {
	c.terminate(ErrAuthFailed, StateAuthFailed)
}

// sessionLoop connects, waits for the link to die, and reconnects, until
// the Conn ends.
func (c *Conn) sessionLoop() {
	defer c.wg.Done()
	var (
		attempt     int
		lostAt      time.Time // when the session lost its last connection
		backoff     time.Duration
		everSession bool
	)
	for {
		if attempt > 0 {
			backoff = c.nextBackoff(backoff)
			wait := backoff
			if everSession {
				left := c.expiresIn(lostAt)
				if left <= 0 {
					c.expire("disconnected longer than the session timeout")
					return
				}
				wait = min(wait, left)
			}
			t := time.NewTimer(wait)
			select {
			case <-t.C:
			case <-c.stopCh:
				t.Stop()
				return
			case <-c.termCh:
				t.Stop()
				return
			}
			if everSession && c.expiresIn(lostAt) <= 0 {
				c.expire("disconnected longer than the session timeout")
				return
			}
		}
		attempt++
		addr := c.hosts.next()
		l, expired, err := c.connect(addr)
		if expired {
			c.expire("the server reports the session expired")
			return
		}
		if err != nil {
			c.log.Debug("connect failed", "server", addr, "err", err)
			continue
		}
		everSession = true
		backoff = 0
		attempt = 0
		select {
		case <-l.deadCh:
		case <-c.termCh:
		}
		l.fail(ErrConnectionLoss, ErrConnectionLoss)
		l.wg.Wait()
		lostAt = time.Now()
		attempt = 1
		c.mu.Lock()
		if c.termErr != nil || c.closing {
			c.mu.Unlock()
			return
		}
		sid := c.sessionID
		c.mu.Unlock()
		c.log.Info("disconnected", "server", addr, "err", l.err)
		c.events.push(SessionEvent{State: StateDisconnected, SessionID: sid})
	}
}

func (c *Conn) nextBackoff(prev time.Duration) time.Duration {
	d := c.opts.backoffMin
	if prev > 0 {
		d = min(prev*2, c.opts.backoffMax)
	}
	return d/2 + rand.N(d/2+1)
}

// expiresIn is how long the session can still be alive after losing its
// connection at lostAt.
func (c *Conn) expiresIn(lostAt time.Time) time.Duration {
	c.mu.Lock()
	t := c.timeout
	c.mu.Unlock()
	return t - time.Since(lostAt)
}

func (c *Conn) expire(why string) {
	c.log.Warn("session expired", "reason", why)
	c.terminate(ErrSessionExpired, StateExpired)
}

// connect dials addr, runs the handshake and, on success, starts a link
// and makes it current. expired reports the server's "invalid session"
// answer.
func (c *Conn) connect(addr string) (l *link, expired bool, err error) {
	c.mu.Lock()
	sid, passwd, closing := c.sessionID, c.passwd, c.closing
	c.mu.Unlock()
	if closing {
		return nil, false, ErrClosed
	}
	connectTimeout := max(c.opts.sessionTimeout/time.Duration(c.hosts.size()), time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), connectTimeout)
	defer cancel()
	go func() { // Close interrupts a dial or handshake in progress
		select {
		case <-c.stopCh:
			cancel()
		case <-ctx.Done():
		}
	}()
	nc, err := c.opts.dial(ctx, "tcp", addr)
	if err != nil {
		return nil, false, err
	}
	if c.opts.tls != nil {
		cfg := c.opts.tls
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			nc.Close()
			return nil, false, fmt.Errorf("tls handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	// Close (or the connect timeout) interrupts the handshake.
	interrupt := context.AfterFunc(ctx, func() { nc.Close() })
	deadline, _ := ctx.Deadline()
	nc.SetDeadline(deadline)
	if passwd == nil {
		passwd = make([]byte, 16)
	}
	req := wire.ConnectRequest{
		LastZxidSeen: c.lastZxid.Load(),
		TimeOut:      int32(c.opts.sessionTimeout / time.Millisecond),
		SessionID:    sid,
		Passwd:       passwd,
		HasReadOnly:  true,
	}
	if _, err := nc.Write(wire.AppendRecords(nil, &req)); err != nil {
		nc.Close()
		return nil, false, fmt.Errorf("send handshake to %s: %w", addr, err)
	}
	br := bufio.NewReaderSize(nc, 64<<10)
	frame, err := wire.ReadFrame(br, c.opts.maxBuffer, nil)
	if err != nil {
		nc.Close()
		return nil, false, fmt.Errorf("read handshake from %s: %w", addr, err)
	}
	var resp wire.ConnectResponse
	if err := wire.Unmarshal(frame, &resp, c.opts.maxBuffer); err != nil {
		nc.Close()
		return nil, false, fmt.Errorf("%w: handshake from %s: %v", ErrProtocol, addr, err)
	}
	if resp.TimeOut <= 0 {
		nc.Close()
		if sid != 0 {
			return nil, true, ErrSessionExpired
		}
		return nil, false, fmt.Errorf("%w: %s refused a new session", ErrProtocol, addr)
	}
	if !interrupt() {
		nc.Close()
		return nil, false, fmt.Errorf("handshake with %s: %w", addr, ctx.Err())
	}
	nc.SetDeadline(time.Time{})
	timeout := time.Duration(resp.TimeOut) * time.Millisecond
	l = newLink(c, nc, addr, timeout*2/3)

	// Auth first, then the watches, then (once the link is current) user
	// requests: the link's queue keeps that order on the wire.
	c.mu.Lock()
	auths := append([]authInfo(nil), c.auths...)
	c.mu.Unlock()
	for _, a := range auths {
		l.enqueue(newRequest(wire.OpAuth, &wire.AuthPacket{Scheme: a.scheme, Auth: a.auth}, nil))
	}
	for _, r := range c.watches.setWatches(c.lastZxid.Load()) {
		l.enqueue(r)
	}
	l.start(br)

	c.mu.Lock()
	if c.termErr != nil || c.closing {
		c.mu.Unlock()
		l.fail(ErrClosed, ErrClosed)
		l.wg.Wait()
		return nil, false, ErrClosed
	}
	if sid != 0 && resp.SessionID != sid {
		c.mu.Unlock()
		l.fail(ErrSessionExpired, ErrConnectionLoss)
		l.wg.Wait()
		return nil, true, ErrSessionExpired
	}
	c.sessionID = resp.SessionID
	c.passwd = resp.Passwd
	c.timeout = timeout
	c.cur = l
	c.state = StateConnected
	close(c.readyCh)
	c.mu.Unlock()
	c.log.Info("connected", "server", addr, "session", fmt.Sprintf("0x%x", resp.SessionID), "timeout", timeout)
	c.events.push(SessionEvent{State: StateConnected, SessionID: resp.SessionID, Server: addr})
	return l, false, nil
}

// UpdateServers replaces the list of servers the Conn connects to, as
// ZooKeeper's updateServerList does after a reconfig: servers is a
// connection string, "host:port,host:port" (a "/chroot" suffix is
// ignored: the chroot cannot change). The session and its watches stay.
//
// If the server the Conn is connected to is not in the new list, the
// connection is dropped at once and the Conn reconnects to a server of the
// new list (requests in flight fail with ErrConnectionLoss, as on any
// disconnect). If the list grew, the Conn moves to one of the added
// servers with probability 1 - old size/new size, so that over many
// clients the load spreads evenly with as few moves as possible; it never
// moves when its server stays and the list did not grow. Servers are
// compared as host:port strings (host names are not resolved).
func (c *Conn) UpdateServers(servers string) error {
	addrs, _, err := parseServers(servers)
	if err != nil {
		return err
	}
	c.mu.Lock()
	l := c.cur
	c.mu.Unlock()
	current := ""
	if l != nil {
		current = l.addr
	}
	if c.hosts.update(addrs, current) && l != nil {
		c.log.Info("server list updated; moving to another server", "from", current)
		l.fail(errMoving, ErrConnectionLoss)
	}
	return nil
}

// Servers returns the servers the Conn connects to (Connect's list, or
// the last UpdateServers'), in the order it tries them.
func (c *Conn) Servers() []string { return c.hosts.list() }

// Server returns the address of the server the Conn is connected to, ""
// while disconnected.
func (c *Conn) Server() string {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur == nil {
		return ""
	}
	return c.cur.addr
}

// call sends one request and waits for its reply. While disconnected it
// waits for the reconnect; a request whose connection died before it was
// written is sent again. Cancelling ctx abandons the wait only.
func (c *Conn) call(ctx context.Context, r *request) error {
	for {
		c.mu.Lock()
		l, ready, term, termErr := c.cur, c.readyCh, c.termCh, c.termErr
		c.mu.Unlock()
		if termErr != nil {
			return termErr
		}
		if l == nil {
			select {
			case <-ready:
				continue
			case <-term:
				continue
			case <-ctx.Done():
				return ctx.Err()
			}
		}
		if err := ctx.Err(); err != nil {
			return err
		}
		if !l.enqueue(r) {
			// l died and is detached once deadCh is closed; try again.
			<-l.deadCh
			continue
		}
		select {
		case err := <-r.done:
			if errors.Is(err, errNotSent) {
				<-l.deadCh
				continue
			}
			return err
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// detach makes the Conn forget l if it is the current link: the state
// becomes Disconnected and requests wait for the next link. It runs before
// l's deadCh is closed.
func (c *Conn) detach(l *link) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.cur != l {
		return
	}
	c.cur = nil
	c.state = StateDisconnected
	c.readyCh = make(chan struct{})
}

// serverPath maps a client path to the server's (chroot prefixed).
func (c *Conn) serverPath(p string) (string, error) {
	if err := validatePath(p); err != nil {
		return "", err
	}
	return c.serverPathUnchecked(p), nil
}

// stripChroot maps a server path back to the client's view.
func (c *Conn) stripChroot(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == c.chroot {
		return "/"
	}
	if len(p) > len(c.chroot) && p[:len(c.chroot)] == c.chroot && p[len(c.chroot)] == '/' {
		return p[len(c.chroot):]
	}
	return p
}

// clientPath maps a server path to the client's view; false for a path
// outside the chroot.
func (c *Conn) clientPath(p string) (string, bool) {
	if c.chroot == "" {
		return p, true
	}
	if p == c.chroot || strings.HasPrefix(p, c.chroot+"/") {
		return c.stripChroot(p), true
	}
	return "", false
}

// serverPathUnchecked is serverPath for paths already validated.
func (c *Conn) serverPathUnchecked(p string) string {
	if c.chroot == "" {
		return p
	}
	if p == "/" {
		return c.chroot
	}
	return c.chroot + p
}
