package server

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"sync"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/node"
	"github.com/wardenzk/warden/wire"
)

// Admission of client requests: ZooKeeper's globalOutstandingLimit, its
// RequestThrottler and its large-request throttling, plus a bound on the
// bytes of requests in flight (docs/operations.md, "Limits and
// throttling").
//
// A request is in flight from when its frame has been read until its reply
// is queued (limiter.finish, from conn.observe) or its connection closes
// (limiter.forget). A connection's reader asks limiter.mayRead before
// reading each frame: reading pauses — nothing is dropped, the client's
// bytes wait in the socket — while the member is over its limits and the
// connection has a request in flight of its own (so every connection may
// always send one, as in ZooKeeper). It resumes when one of its requests
// completes or the member gets back under the limits.

const (
	// maxOutstandingBytes bounds the bytes of client requests in flight
	// (frames read and not yet answered): past it, reading pauses as past
	// globalOutstandingLimit, and it is divided among an ensemble's
	// members as that limit is (outstandingShare). Each connection may
	// still have one request in flight, so the bytes read on a member are
	// at most its share + connections × jute.maxbuffer.
	maxOutstandingBytes = 64 << 20
)

// Admission states of a request (reply.admit).
const (
	admitNone     uint8 = iota // not admitted (internal markers)
	admitWaiting               // held by the request throttler
	admitInFlight              // being processed
	admitDone                  // finished or forgotten
)

// connAdmission is a connection's part of the accounting. Its fields are
// guarded by limiter.mu.
type connAdmission struct {
	// outstanding counts its requests with a positive xid in flight:
	// ZooKeeper's ServerCnxn.outstandingCount, which decides whether a
	// connection over the limit may read.
	outstanding int
	// waiting and inFlight count its requests in each state; bytes and
	// large are their sizes. Invariant: they are included in the
	// limiter's totals until gone is set.
	waiting, inFlight int
	bytes, large      int64
	// gone is set once the connection closed and its requests were taken
	// out of the totals.
	gone bool
	// wake is signalled when one of its requests finishes.
	wake chan struct{}
}

// waiter is a request held by the request throttler.
type waiter struct {
	c     *conn
	r     *reply
	ready chan struct{} // closed when admitted
}

// limiter is one server's admission control.
type limiter struct {
	log     *slog.Logger
	now     func() time.Time
	metrics *metrics.Set
	// share returns the part of the ensemble-wide limits this member
	// takes now (outstandingShare): the limits are divided by it.
	share     func() int
	countMax  int   // globalOutstandingLimit
	byteLimit int64 // maxOutstandingBytes (tests lower it)
	cfg       config.Limits
	// throttled counts THROTTLEDOP replies (mntr's throttled_ops).
	throttled func()
	// hook, when set, is told of pauses and throttler waits (tests).
	hook func(ev limitEvent)

	mu sync.Mutex
	// inFlight, waiting and bytes are the totals over the connections that
	// are not gone; large is the bytes of large requests among them.
	inFlight, waiting int
	bytes, large      int64
	// over is whether the totals were past a limit at the last change.
	over bool
	// resume is closed, and replaced, when the totals get back under the
	// limits.
	resume chan struct{}
	// queue holds the request throttler's waiters, oldest first.
	queue []*waiter
}

// limitEvent is what limiter.hook hears.
type limitEvent struct {
	kind     string // "pause", "resume", "throttle", "drop", "large"
	c        *conn
	inFlight int // the member's requests in processing
	waiting  int // the member's requests held by the request throttler
}

// outstandingShare is the divisor of ZooKeeper's getGlobalOutstandingLimit
// on a member in role: the leader and the followers of an ensemble of
// more than two voters divide globalOutstandingLimit by voters − 1 (so
// the whole ensemble holds about that many); observers and standalone
// servers keep it whole. Warden divides maxOutstandingBytes alike.
func outstandingShare(role node.Role, voters int) int {
	if (role == node.Leading || role == node.Following) && voters > 2 {
		return voters - 1
	}
	return 1
}

func newLimiter(s *Server) *limiter {
	l := &limiter{
		log:       s.log,
		now:       s.now,
		metrics:   s.metrics,
		countMax:  s.cfg.GlobalOutstandingLimit,
		byteLimit: maxOutstandingBytes,
		cfg:       s.cfg.Limits,
		throttled: func() { s.stats.throttled.Add(1) },
		resume:    make(chan struct{}),
	}
	l.share = func() int { return outstandingShare(s.node.Role(), s.participants()) }
	// ZooKeeper's setters refuse these values and keep the defaults.
	if l.cfg.LargeRequestMaxBytes <= 0 {
		l.log.Warn(fmt.Sprintf("Invalid max bytes for all large requests %d. It should be a positive number.", l.cfg.LargeRequestMaxBytes))
		l.cfg.LargeRequestMaxBytes = 100 << 20
	}
	if t := l.cfg.LargeRequestThreshold; t == 0 || t < -1 {
		l.log.Warn(fmt.Sprintf("Invalid large request threshold %d. It should be -1 or positive. Setting to -1 ", t))
		l.cfg.LargeRequestThreshold = -1
	}
	return l
}

// overLocked reports whether the member is past a limit: ZooKeeper's
// shouldThrottle compares its share of globalOutstandingLimit with the
// requests in processing and with those held by the request throttler;
// Warden also compares the bytes in flight with its share of
// maxOutstandingBytes.
func (l *limiter) overLocked() bool {
	share := l.share()
	n := l.countMax / share
	return l.inFlight > n || l.waiting > n || l.bytes > l.byteLimit/int64(share)
}

// mayRead reports whether c may read its next request. When it may not,
// wait is closed once the member gets back under its limits (c.adm.wake
// also fires when one of c's requests finishes).
func (l *limiter) mayRead(c *conn) (ok bool, wait <-chan struct{}) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.adm.gone || c.adm.outstanding == 0 || !l.overLocked() {
		return true, nil
	}
	l.over = true
	return false, l.resume
}

// changedLocked resumes the paused readers when the totals got back under
// the limits.
func (l *limiter) changedLocked() {
	if l.over && !l.overLocked() {
		l.over = false
		close(l.resume)
		l.resume = make(chan struct{})
	}
}

// large reports whether a frame of n bytes is a large request.
func (l *limiter) isLarge(n int) bool {
	t := l.cfg.LargeRequestThreshold
	return t != -1 && n > t
}

// errLargeRequest closes a connection whose large request would pass
// largeRequestMaxBytes (ZooKeeper's "Rejecting large request").
var errLargeRequest = errors.New("server: rejecting large request")

// checkLarge runs before a frame of n bytes is read: a large request that
// would pass largeRequestMaxBytes closes the connection, as in ZooKeeper.
func (l *limiter) checkLarge(n int) error {
	if !l.isLarge(n) {
		return nil
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.large+int64(n) <= int64(l.cfg.LargeRequestMaxBytes) {
		return nil
	}
	l.metrics.LargeRequestsRejected.Inc()
	if l.hook != nil {
		l.hook(limitEvent{kind: "large", inFlight: l.inFlight, waiting: l.waiting})
	}
	return errLargeRequest
}

// admit counts r, whose frame is size bytes, in flight for c. Auth and
// SASL packets are answered at once and never held (as in ZooKeeper). It
// fails with errLargeRequest when r is a large request past
// largeRequestMaxBytes; the connection must then close.
func (l *limiter) admit(c *conn, r *reply, size int) error {
	held := r.op != wire.OpAuth && r.op != wire.OpSASL
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.adm.gone {
		return nil
	}
	var large int64
	if held && l.isLarge(size) {
		if l.large+int64(size) > int64(l.cfg.LargeRequestMaxBytes) {
			l.metrics.LargeRequestsRejected.Inc()
			return errLargeRequest
		}
		large = int64(size)
	}
	r.cost, r.large = int64(size), large
	if r.xid > 0 {
		r.counted = true
		c.adm.outstanding++
	}
	c.adm.bytes += r.cost
	c.adm.large += large
	l.bytes += r.cost
	l.large += large
	if held && l.cfg.RequestThrottleMaxRequests > 0 {
		r.admit = admitWaiting
		c.adm.waiting++
		l.waiting++
	} else {
		r.admit = admitInFlight
		c.adm.inFlight++
		l.inFlight++
	}
	return nil
}

// finish takes r out of flight: its reply is queued. It is safe to call
// for any request, more than once, from any goroutine.
func (l *limiter) finish(c *conn, r *reply) {
	l.mu.Lock()
	if r.admit != admitInFlight || c.adm.gone {
		l.mu.Unlock()
		return
	}
	r.admit = admitDone
	c.adm.inFlight--
	l.inFlight--
	c.adm.bytes -= r.cost
	l.bytes -= r.cost
	c.adm.large -= r.large
	l.large -= r.large
	if r.counted {
		c.adm.outstanding--
	}
	l.grantLocked()
	l.changedLocked()
	l.mu.Unlock()
	select {
	case c.adm.wake <- struct{}{}:
	default:
	}
}

// forget takes every request of a closed connection out of the totals.
// Its requests still held by the request throttler leave the queue.
func (l *limiter) forget(c *conn) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if c.adm.gone {
		return
	}
	a := &c.adm
	a.gone = true
	l.inFlight -= a.inFlight
	l.waiting -= a.waiting
	l.bytes -= a.bytes
	l.large -= a.large
	if a.waiting > 0 {
		q := l.queue[:0]
		for _, w := range l.queue {
			if w.c != c {
				q = append(q, w)
			}
		}
		clear(l.queue[len(q):])
		l.queue = q
	}
	l.grantLocked()
	l.changedLocked()
}

// grantLocked admits the throttler's oldest waiters while fewer than
// request_throttle_max_requests requests are in processing.
func (l *limiter) grantLocked() {
	for len(l.queue) > 0 && l.inFlight < l.cfg.RequestThrottleMaxRequests {
		w := l.queue[0]
		l.queue[0] = nil
		l.queue = l.queue[1:]
		l.moveLocked(w.c, w.r)
		close(w.ready)
	}
}

// moveLocked moves r from the request throttler into processing.
func (l *limiter) moveLocked(c *conn, r *reply) {
	r.admit = admitInFlight
	c.adm.waiting--
	c.adm.inFlight++
	l.waiting--
	l.inFlight++
}

// throttle holds r, admitted as waiting, in the request throttler until
// fewer than request_throttle_max_requests requests are in processing, in
// arrival order across connections (ZooKeeper's RequestThrottler). It
// reports false when r was dropped as stale — its connection closed, or
// with request_stale_latency_check it waited past the session timeout —
// and the connection must close; and throttled when r waited longer than
// throttled_op_wait_time and must be answered THROTTLEDOP.
func (l *limiter) throttle(c *conn, r *reply) (ok, throttled bool) {
	if r.admit != admitWaiting {
		return true, false
	}
	start := l.now()
	l.mu.Lock()
	if c.adm.gone {
		l.mu.Unlock()
		return false, false
	}
	if len(l.queue) == 0 && l.inFlight < l.cfg.RequestThrottleMaxRequests {
		l.moveLocked(c, r)
		l.mu.Unlock()
		l.metrics.RequestThrottleQueueTime.Observe(0)
		return true, false
	}
	w := &waiter{c: c, r: r, ready: make(chan struct{})}
	l.queue = append(l.queue, w)
	ev := limitEvent{kind: "throttle", c: c, inFlight: l.inFlight, waiting: l.waiting}
	l.mu.Unlock()
	if l.hook != nil {
		l.hook(ev)
	}
	stall := time.NewTimer(time.Duration(l.cfg.RequestThrottleStallTime) * time.Millisecond)
	defer stall.Stop()
	for {
		l.metrics.RequestThrottleWaitCount.Inc()
		closed := false
		select {
		case <-w.ready:
			waited := l.now().Sub(start)
			l.metrics.RequestThrottleQueueTime.ObserveDuration(waited)
			if l.isStale(c, r) {
				l.metrics.StaleRequests.Inc()
			}
			if t := l.cfg.ThrottledOpWaitTime; t > 0 && waited > time.Duration(t)*time.Millisecond && throttlable(r.op) {
				l.throttled()
				return true, true
			}
			return true, false
		case <-c.closed:
			closed = true
		case <-stall.C:
			stall.Reset(time.Duration(l.cfg.RequestThrottleStallTime) * time.Millisecond)
		}
		stale := l.isStale(c, r)
		switch {
		case stale && l.cfg.RequestThrottleDropStale:
			l.metrics.StaleRequestsDropped.Inc()
			if l.hook != nil {
				l.hook(limitEvent{kind: "drop", c: c})
			}
			// As ZooKeeper marks the connection invalid: its later
			// requests must not overtake the dropped one. Closing takes
			// the connection's requests out of the queue (forget).
			c.close("request dropped as stale by the request throttler")
			return false, false
		case closed:
			// ZooKeeper would still process a stale request it does not
			// drop; Warden never runs the requests of a closed
			// connection. It is counted, and goes with the connection.
			if stale {
				l.metrics.StaleRequests.Inc()
			}
			return false, false
		}
	}
}

// isStale is ZooKeeper's Request.isStale: a request of a closed connection
// (request_stale_connection_check), or one older than its session timeout
// (request_stale_latency_check). closeSession is never stale.
func (l *limiter) isStale(c *conn, r *reply) bool {
	if r.op == wire.OpCloseSession {
		return false
	}
	if l.cfg.RequestStaleConnectionCheck && c.isClosed() {
		return true
	}
	if l.cfg.RequestStaleLatencyCheck {
		return l.now().Sub(r.start) > time.Duration(c.timeout.Load())*time.Millisecond
	}
	return false
}

// throttlable is ZooKeeper's Request.isThrottlable.
func throttlable(op wire.OpCode) bool {
	return op != wire.OpPing && op != wire.OpCloseSession && op != wire.OpCreateSession
}

// outstanding returns the requests in flight on the member: in processing
// and held by the request throttler (mntr's outstanding_requests).
func (l *limiter) outstanding() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.inFlight + l.waiting
}

// waitToRead blocks c's reader until it may read its next request. It
// reports false when the connection closed meanwhile.
func (c *conn) waitToRead() bool {
	l := c.srv.limits
	paused := false
	for {
		ok, wait := l.mayRead(c)
		if ok {
			break
		}
		if !paused {
			paused = true
			if l.hook != nil {
				l.mu.Lock()
				ev := limitEvent{kind: "pause", c: c, inFlight: l.inFlight, waiting: l.waiting}
				l.mu.Unlock()
				l.hook(ev)
			}
		}
		select {
		case <-wait:
		case <-c.adm.wake:
		case <-c.closed:
			return false
		}
	}
	if paused {
		// The client was not read while paused: its session lives on, and
		// its next frame gets a full read timeout.
		c.srv.touch(c.sessionID())
		c.readTimeout()
		if l.hook != nil {
			l.hook(limitEvent{kind: "resume", c: c})
		}
	}
	return true
}

// readRequest reads the next request frame of c: its length first, which
// may be a large request past largeRequestMaxBytes (the connection then
// closes, as in ZooKeeper), then its payload.
func (c *conn) readRequest(br *bufio.Reader) ([]byte, error) {
	hdr, err := br.Peek(4)
	if err != nil {
		return nil, err
	}
	n := int32(binary.BigEndian.Uint32(hdr))
	br.Discard(4) // cannot fail: Peek buffered the 4 bytes
	if n > 0 {
		if err := c.srv.limits.checkLarge(int(n)); err != nil {
			return nil, err
		}
	}
	return wire.ReadPayload(br, n, c.srv.maxBuffer, c.readFrameBuf(br, n))
}

// reusedFrameMax bounds the reader's reused frame buffer: a larger read
// request gets a frame of its own.
const reusedFrameMax = 4 << 10

// readFrameBuf returns the buffer the next request, of n bytes, is read
// into: the reader's own, for a ping or a read, which keep nothing of
// their frame once decoded (strings are copied out); nil, for a fresh one,
// for the others, whose body lives on (a write is proposed later, an auth
// packet answered later). Its header is peeked at to tell them apart: a
// frame of 8 bytes or more holds it, so the peek waits for nothing that
// is not this request's.
func (c *conn) readFrameBuf(br *bufio.Reader, n int32) []byte {
	if n < 8 || n > reusedFrameMax {
		return nil
	}
	h, err := br.Peek(8)
	if err != nil {
		return nil // ReadPayload meets the same error
	}
	if op := wire.OpCode(binary.BigEndian.Uint32(h[4:])); op != wire.OpPing && readHandler(op) == nil {
		return nil
	}
	if c.rbuf == nil {
		c.rbuf = make([]byte, reusedFrameMax)
	}
	return c.rbuf
}

// admitRequest counts r in flight and passes it through the request
// throttler. It reports false when the connection must close. A request
// that waited past throttled_op_wait_time gets THROTTLEDOP, in order.
func (c *conn) admitRequest(r *reply, frame []byte) (ok, answered bool) {
	l := c.srv.limits
	if err := l.admit(c, r, 4+len(frame)); err != nil {
		c.log.Warn("closing the connection: a large request would pass largeRequestMaxBytes (raise largeRequestMaxBytes or largeRequestThreshold in zoo.cfg if such requests are intended)",
			"len", len(frame), "largeRequestMaxBytes", l.cfg.LargeRequestMaxBytes)
		return false, false
	}
	ok, throttled := l.throttle(c, r)
	if !ok {
		return false, false
	}
	if throttled {
		c.stats.lastOp.Store(int32(r.op))
		r.exec = func() []byte { return replyFrame(r.xid, c.srv.lastZxid.Load(), wire.ErrThrottled, nil) }
		return c.enqueue(r), true
	}
	return true, false
}
