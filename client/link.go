package client

import (
	"bufio"
	"errors"
	"fmt"
	"net"
	"runtime"
	"sync"
	"time"

	"github.com/wardenzk/warden/wire"
)

// errNotSent is a request's result when its connection died before the
// request was written: it is safe to send again on the next connection.
var errNotSent = errors.New("client: request not sent")

// maxPingInterval caps the idle time before a ping, as ZooKeeper's
// client does (MAX_SEND_PING_INTERVAL).
const maxPingInterval = 10 * time.Second

// request is one client request on its way through a link.
type request struct {
	xid  int32 // set by link.enqueue unless op is special (auth, setWatches)
	op   wire.OpCode
	body wire.Record // nil for header-only requests
	resp wire.Record // decoded from the reply when its err is CodeOK; may be nil
	// onReply, when set, runs on the read loop as the reply arrives, before
	// any later reply or notification is handled (watch registration).
	onReply func(code wire.Code)
	done    chan error // capacity 1; receives exactly one result
}

func newRequest(op wire.OpCode, body, resp wire.Record) *request {
	return &request{op: op, body: body, resp: resp, done: make(chan error, 1)}
}

// link is one established connection (after the handshake): a writer
// goroutine, a reader goroutine, and the FIFO of requests awaiting
// replies. The server answers requests in order, so each reply must match
// the head of pending; auth replies are matched against their own FIFO
// (ZooKeeper answers auth out of band), pings and notifications against
// nothing.
type link struct {
	c           *Conn
	nc          net.Conn
	addr        string
	readTimeout time.Duration
	deadCh      chan struct{} // closed when the link dies
	wake        chan struct{} // capacity 1: queue is not empty
	wg          sync.WaitGroup

	mu      sync.Mutex
	queue   []*request // accepted, not yet written
	pending []*request // written, awaiting replies in order
	auths   []*request // auth packets written, awaiting replies in order
	dead    bool       // Invariant: dead ⇒ queue, pending, auths are empty.
	err     error      // why the link died
}

func newLink(c *Conn, nc net.Conn, addr string, readTimeout time.Duration) *link {
	return &link{
		c: c, nc: nc, addr: addr, readTimeout: readTimeout,
		deadCh: make(chan struct{}), wake: make(chan struct{}, 1),
	}
}

func (l *link) start(r *bufio.Reader) {
	l.wg.Add(2)
	go l.readLoop(r)
	go l.writeLoop()
}

// enqueue hands r to the writer. It reports false if the link is dead.
func (l *link) enqueue(r *request) bool {
	l.mu.Lock()
	if l.dead {
		l.mu.Unlock()
		return false
	}
	switch r.op {
	case wire.OpAuth:
		r.xid = wire.XidAuth
	case wire.OpSetWatches, wire.OpSetWatches2:
		r.xid = wire.XidSetWatches
	default:
		r.xid = l.c.nextXid()
	}
	l.queue = append(l.queue, r)
	l.mu.Unlock()
	select {
	case l.wake <- struct{}{}:
	default:
	}
	return true
}

// fail kills the link: the socket is closed, requests already written get
// inflight (ErrConnectionLoss, or the terminal error when the Conn is
// ending) and unwritten ones errNotSent. Idempotent.
func (l *link) fail(cause, inflight error) {
	l.mu.Lock()
	if l.dead {
		l.mu.Unlock()
		return
	}
	l.dead = true
	l.err = cause
	queue, pending, auths := l.queue, l.pending, l.auths
	l.queue, l.pending, l.auths = nil, nil, nil
	l.mu.Unlock()
	l.c.detach(l)
	close(l.deadCh)
	l.nc.Close()
	for _, r := range queue {
		r.done <- errNotSent
	}
	for _, r := range pending {
		r.done <- inflight
	}
	for _, r := range auths {
		r.done <- inflight
	}
}

func (l *link) writeLoop() {
	defer l.wg.Done()
	idle := min(l.readTimeout/2, maxPingInterval)
	ping := time.NewTimer(idle)
	defer ping.Stop()
	var buf []byte
	for {
		var batch []*request
		select {
		case <-l.deadCh:
			return
		case <-ping.C:
			buf = wire.AppendRecords(buf[:0], &wire.RequestHeader{Xid: wire.XidPing, Type: wire.OpPing})
		case <-l.wake:
			// Yield once before taking the queue: callers woken by a burst
			// of replies (the read loop hands them out one by one) then
			// queue their next requests first, and they all go out in one
			// write. Without it a pipelining client wrote one request per
			// system call: warden bench spent 58% of its CPU in write(2),
			// and took more of the machine than the server it measured.
			runtime.Gosched()
			l.mu.Lock()
			batch, l.queue = l.queue, nil
			buf = buf[:0]
			for _, r := range batch {
				buf = wire.AppendRecords(buf, &wire.RequestHeader{Xid: r.xid, Type: r.op}, r.body)
				if r.op == wire.OpAuth {
					l.auths = append(l.auths, r)
				} else {
					l.pending = append(l.pending, r)
				}
			}
			l.mu.Unlock()
		}
		if len(buf) == 0 {
			continue
		}
		l.nc.SetWriteDeadline(time.Now().Add(l.readTimeout))
		if _, err := l.nc.Write(buf); err != nil {
			l.fail(fmt.Errorf("write to %s: %w", l.addr, err), ErrConnectionLoss)
			return
		}
		ping.Reset(idle)
		if cap(buf) > 1<<20 {
			buf = nil
		}
	}
}

func (l *link) readLoop(r *bufio.Reader) {
	defer l.wg.Done()
	var buf []byte
	for {
		l.nc.SetReadDeadline(time.Now().Add(l.readTimeout))
		frame, err := wire.ReadFrame(r, l.c.opts.maxBuffer, buf)
		if err != nil {
			l.fail(fmt.Errorf("read from %s: %w", l.addr, err), ErrConnectionLoss)
			return
		}
		if cap(frame) <= 1<<16 {
			buf = frame[:0]
		}
		if err := l.handle(frame); err != nil {
			l.fail(err, ErrConnectionLoss)
			return
		}
	}
}

// handle processes one reply frame on the read loop.
func (l *link) handle(frame []byte) error {
	d := wire.NewDecoder(frame, l.c.opts.maxBuffer)
	var h wire.ReplyHeader
	h.Decode(d)
	if err := d.Err(); err != nil {
		return fmt.Errorf("%w: reply header: %v", ErrProtocol, err)
	}
	switch h.Xid {
	case wire.XidPing:
		return nil
	case wire.XidNotification:
		var ev wire.WatcherEvent
		ev.Decode(d)
		if err := d.Err(); err != nil {
			return fmt.Errorf("%w: notification: %v", ErrProtocol, err)
		}
		// The header zxid is the firing transaction's (NoZxid from servers
		// before ZooKeeper 3.9). It does not advance lastZxid, as in
		// ZooKeeper's Java client.
		if ev.Path == ConfigPath {
			l.c.watches.dispatchConfig(ev.Type, h.Zxid)
		}
		if p, ok := l.c.clientPath(ev.Path); ok {
			l.c.watches.dispatch(p, ev.Type, h.Zxid)
		}
		return nil
	case wire.XidAuth:
		l.mu.Lock()
		if len(l.auths) == 0 {
			l.mu.Unlock()
			return fmt.Errorf("%w: auth reply without an auth request", ErrProtocol)
		}
		r := l.auths[0]
		l.auths = l.auths[1:]
		l.mu.Unlock()
		if h.Err != wire.CodeOK {
			r.done <- h.Err
			if h.Err == wire.ErrAuthFailed {
				l.c.authFailed()
			}
			return nil
		}
		r.done <- nil
		return nil
	}
	l.mu.Lock()
	if len(l.pending) == 0 {
		l.mu.Unlock()
		return fmt.Errorf("%w: reply xid %d with nothing pending", ErrProtocol, h.Xid)
	}
	r := l.pending[0]
	if r.xid != h.Xid {
		l.mu.Unlock()
		return fmt.Errorf("%w: reply xid %d out of order, want %d", ErrProtocol, h.Xid, r.xid)
	}
	l.pending[0] = nil
	l.pending = l.pending[1:]
	l.mu.Unlock()
	if h.Zxid > 0 {
		l.c.lastZxid.Store(h.Zxid)
	}
	if h.Err == wire.CodeOK && r.resp != nil {
		r.resp.Decode(d)
		if err := d.Err(); err != nil {
			r.done <- fmt.Errorf("%w: reply to op %d: %v", ErrProtocol, r.op, err)
			return fmt.Errorf("%w: reply to op %d: %v", ErrProtocol, r.op, err)
		}
	}
	if r.onReply != nil {
		r.onReply(h.Err)
	}
	if h.Err != wire.CodeOK {
		r.done <- h.Err
	} else {
		r.done <- nil
	}
	return nil
}
