package server

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/internal/watch"
	"github.com/wardenzk/warden/wire"
)

var syscallEMFILE = syscall.EMFILE

const (
	// maxOutstanding bounds the requests of one connection queued for its
	// processor; the reader waits past it. (The member-wide limits,
	// globalOutstandingLimit and maxOutstandingBytes, are in limits.go.)
	maxOutstanding = 1000
	// handshakeTimeout bounds how long a new connection may take to send
	// its ConnectRequest.
	handshakeTimeout = 30 * time.Second
)

// reply is one request's slot in a connection's ordered reply queue.
// Exactly one of exec and done is set.
type reply struct {
	xid   int32
	op    wire.OpCode
	start time.Time // zero for internal markers, which are not measured
	// caller is the connection's identities when the request arrived: a
	// later addauth does not apply to it, as in ZooKeeper.
	caller tree.Caller
	// exec runs a read once every earlier request of the connection has
	// completed. It queues its own reply (under the state machine's read
	// lock, so no event it armed can overtake it) and returns nil, or
	// returns a frame for the processor to send.
	exec func() []byte
	// read and req are, for a read, its handler and decoded request: run
	// in place of exec, so a read queues without a closure.
	read readFunc
	req  wire.Record
	// body is a write's request record; the processor proposes it.
	body []byte
	// done is closed once the write is applied and its reply, and those of
	// its followers, are queued.
	done chan struct{}
	// followMu guards applied and followers of a write: the requests that
	// came after it and complete in its apply, right after its reply.
	followMu  sync.Mutex
	applied   bool
	followers []*reply
	// underApply is set while exec runs on the apply goroutine, which
	// already holds the state machine's lock.
	underApply bool
	// closeAfter closes the connection once the reply is written.
	closeAfter bool
	// observed is set once the request's latency is recorded, right
	// before its reply is queued (observe), by the goroutine that queues
	// it.
	observed bool
	// admit, cost, large and counted are the request's admission
	// (limits.go), guarded by the limiter's lock.
	admit       uint8
	cost, large int64
	counted     bool
}

// conn is one client connection. Three goroutines serve it: the reader
// (decodes requests and queues them in order), the processor (proposes
// writes in order and runs each read once every earlier write has been
// applied) and the flusher (writes queued frames to the socket). Write
// replies are queued by the apply goroutine, right after the events the
// write caused.
type conn struct {
	srv *Server
	nc  net.Conn
	id  watch.WatcherID
	ip  string
	log *slog.Logger

	session     atomic.Int64
	timeout     atomic.Int32
	established time.Time
	// deadlineSet is when readTimeout last moved the read deadline.
	deadlineSet time.Time
	// readOnly is set on a connection of read-only mode (readonly.go).
	readOnly atomic.Bool

	authMu sync.Mutex
	// auth holds the connection's identities, in the order added; it
	// starts with ip:<remote address>. Invariant: a slice once stored here
	// is never modified (addAuth stores a new one), so callers may keep it.
	auth []wire.ID
	sasl *auth.DigestMD5Server
	// mode is the port the connection came in on. w is where replies are
	// written: nc, or the TLS connection over it once secure has run
	// (before the flusher starts). secureConn is set when it speaks TLS.
	mode       portMode
	w          io.Writer
	secureConn bool
	// x509ID is the subject of the verified client certificate of a TLS
	// connection, "" when there is none; set before the connection is
	// served.
	x509ID string

	replies chan *reply

	// rbuf and dec are the reader's own, reused from request to request:
	// the frame buffer of a request whose frame is dropped once decoded
	// (readFrameBuf) and the decoder of request bodies (decode).
	rbuf []byte
	dec  wire.Decoder

	outMu sync.Mutex
	// Invariant: outBytes == Σ len(out[i]).
	out        [][]byte
	outBytes   int
	flushAfter bool // close once out is written
	outWake    chan struct{}

	closeOnce sync.Once
	closed    chan struct{}

	// adm is the connection's part of the server's admission control
	// (limits.go).
	adm connAdmission

	stats connStats
}

func newConn(s *Server, nc net.Conn, id watch.WatcherID, ip string) *conn {
	c := &conn{
		srv:         s,
		nc:          nc,
		w:           nc,
		id:          id,
		ip:          ip,
		log:         s.log.With("remote", nc.RemoteAddr().String()),
		established: s.now(),
		auth:        []wire.ID{{Scheme: "ip", ID: ip}},
		replies:     make(chan *reply, maxOutstanding),
		outWake:     make(chan struct{}, 1),
		closed:      make(chan struct{}),
		adm:         connAdmission{wake: make(chan struct{}, 1)},
	}
	c.stats.reset()
	return c
}

func (c *conn) sessionID() fsm.SessionID { return fsm.SessionID(c.session.Load()) }

// caller returns the connection's identities for ACL checks: a snapshot
// that later addauths do not change (it is never modified).
func (c *conn) caller() tree.Caller {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	return tree.Caller{IDs: c.auth}
}

func (c *conn) addAuth(id wire.ID) {
	c.authMu.Lock()
	defer c.authMu.Unlock()
	for _, have := range c.auth {
		if have == id {
			return
		}
	}
	c.auth = append(c.auth[:len(c.auth):len(c.auth)], id) // a new slice: see the invariant
}

func (c *conn) isClosed() bool {
	select {
	case <-c.closed:
		return true
	default:
		return false
	}
}

// close shuts the connection down now; queued output is dropped.
func (c *conn) close(reason string) {
	c.closeOnce.Do(func() {
		c.log.Debug("closing connection", "reason", reason, "session", sessionHex(c.sessionID()))
		close(c.closed)
		// Forget before closing the socket: a client that sees EOF and asks
		// for stat or cons next must not find this connection listed.
		c.srv.forget(c)
		c.nc.Close()
	})
}

// lingerTimeout bounds how long a connection closed after its final reply
// waits for the client to close its side.
const lingerTimeout = 2 * time.Second

// lingerClose closes the connection after its final reply was written
// (an auth failure, -124, closeSession): it sends FIN (and a TLS
// close_notify) first, then reads and discards what the client still
// sends until the client closes too, at most lingerTimeout. Closing at
// once with requests unread in the socket would send a reset instead,
// and a reset can destroy the reply before the client reads it.
func (c *conn) lingerClose(reason string) {
	if cw, ok := c.w.(interface{ CloseWrite() error }); ok {
		cw.CloseWrite() // the TLS connection: close_notify
	}
	if cw, ok := c.nc.(interface{ CloseWrite() error }); ok && c.w != c.nc {
		cw.CloseWrite()
	}
	c.nc.SetReadDeadline(time.Now().Add(lingerTimeout))
	io.Copy(io.Discard, c.nc)
	c.close(reason)
}

// send queues a frame for the client. It never blocks; a client that lets
// too much pile up is disconnected.
func (c *conn) send(frame []byte) {
	c.srv.stats.responses.add(len(frame) - 4) // without the length prefix
	c.outMu.Lock()
	c.out = append(c.out, frame)
	c.outBytes += len(frame)
	over := c.outBytes > c.srv.maxQueued
	c.outMu.Unlock()
	if over {
		c.log.Warn("client is not reading its replies; closing the connection", "queued_bytes_limit", c.srv.maxQueued)
		go c.close("client not reading")
		return
	}
	select {
	case c.outWake <- struct{}{}:
	default:
	}
}

// closeAfterFlush closes the connection once the replies already queued
// are written (then as lingerClose does), so a reply produced just before
// a member stops serving still reaches its client.
func (c *conn) closeAfterFlush(reason string) {
	c.outMu.Lock()
	c.flushAfter = true
	empty := len(c.out) == 0
	c.outMu.Unlock()
	if empty {
		go c.lingerClose(reason)
		return
	}
	select {
	case c.outWake <- struct{}{}:
	default:
	}
}

// sendAndClose queues a last frame and closes the connection once it is
// written.
func (c *conn) sendAndClose(frame []byte) {
	c.outMu.Lock()
	c.flushAfter = true
	c.outMu.Unlock()
	c.send(frame)
}

// flushLoop writes queued frames with one writev per batch; it keeps no
// buffer of its own, so an idle connection costs little memory.
func (c *conn) flushLoop() {
	for {
		select {
		case <-c.outWake:
		case <-c.closed:
			return
		}
		// Yield once before taking the queue, so that the replies to a
		// burst of pipelined requests, queued one by one as they are
		// executed, leave in one writev (the read sweep's p99 at 100%
		// reads: 3.3-3.5 -> 2.7-2.9 ms).
		runtime.Gosched()
		c.outMu.Lock()
		frames := net.Buffers(c.out)
		n := len(frames)
		c.out = nil
		c.outBytes = 0
		last := c.flushAfter
		c.outMu.Unlock()
		if t := c.timeout.Load(); t > 0 {
			// A client that stops reading is cut off after its session
			// timeout, as the rest of the server never waits for it.
			c.nc.SetWriteDeadline(time.Now().Add(time.Duration(t) * time.Millisecond))
		}
		var err error
		if c.secureConn {
			// One TLS record per batch rather than one per frame.
			_, err = c.w.Write(bytes.Join(frames, nil))
		} else {
			_, err = frames.WriteTo(c.nc)
		}
		if err != nil {
			c.close("write failed: " + err.Error())
			return
		}
		c.stats.sent.Add(int64(n))
		c.srv.stats.sent.Add(int64(n))
		if last {
			c.outMu.Lock()
			empty := len(c.out) == 0
			c.outMu.Unlock()
			if empty {
				c.lingerClose("closed after final reply")
				return
			}
		}
	}
}

// serve runs the connection until it closes.
func (c *conn) serve() {
	defer c.close("connection ended")
	// A small read buffer: larger frames are read straight into their own
	// allocation by wire.ReadFrame.
	br, ok := c.secure(c.mode)
	if !ok {
		return
	}
	c.nc.SetReadDeadline(time.Now().Add(handshakeTimeout))
	head, err := br.Peek(4)
	if err != nil {
		return
	}
	if cmd, ok := wire.FourLetterWord([4]byte(head)); ok {
		c.fourLetterWord(cmd, br)
		return
	}
	if !c.handshake(br) {
		return
	}
	go c.flushLoop()
	go c.processLoop()
	if c.readLoop(br) {
		// A final reply (closeSession, auth failure, unsupported opcode) is
		// queued: let the processor write it and close the connection.
		select {
		case <-c.closed:
		case <-time.After(handshakeTimeout):
		}
	}
}

// readTimeout gives the client one and a half session timeouts (less at
// most an eighth) to send its next frame: a session's client must send
// something (a ping at least) within the session timeout; otherwise the
// session expires anyway. The deadline moves at most every eighth of a
// timeout: moving it re-arms a runtime timer, which a busy connection
// would otherwise pay for every request. Reader goroutine only.
func (c *conn) readTimeout() {
	t := time.Duration(c.timeout.Load()) * time.Millisecond
	now := time.Now()
	if now.Sub(c.deadlineSet) < t/8 {
		return
	}
	c.deadlineSet = now
	c.nc.SetReadDeadline(now.Add(t + t/2))
}

// handshake reads the ConnectRequest and establishes or re-attaches the
// session. It reports whether the connection may go on.
func (c *conn) handshake(br *bufio.Reader) bool {
	frame, err := wire.ReadFrame(br, c.srv.maxBuffer, nil)
	if err != nil {
		c.logReadError(err)
		return false
	}
	var req wire.ConnectRequest
	if err := wire.Unmarshal(frame, &req, c.srv.maxBuffer); err != nil {
		c.log.Warn("malformed ConnectRequest; closing", "err", err)
		return false
	}
	c.srv.stats.received.Add(1)
	c.stats.received.Add(1)
	c.srv.metrics.BytesReceived.Add(int64(4 + len(frame)))
	if !c.srv.connThrottle.admit(c, &req) {
		return false
	}
	ro := false
	if !c.srv.Serving() && !c.srv.awaitServing() {
		if ro = c.admitReadOnly(&req); !ro {
			return false
		}
	}
	if last := c.srv.lastZxid.Load(); req.LastZxidSeen > last && (ro || !c.srv.awaitZxid(req.LastZxidSeen)) {
		last = c.srv.lastZxid.Load()
		// ZooKeeper's words, so operators recognise the line.
		c.log.Warn(fmt.Sprintf("Refusing session request for client %s as it has seen zxid %s our last zxid is %s client must try another server",
			c.nc.RemoteAddr(), zxidHex(req.LastZxidSeen), zxidHex(last)))
		return false
	}
	minT, maxT := c.srv.cfg.SessionTimeoutBounds()
	timeout := min(max(req.TimeOut, int32(minT)), int32(maxT))

	resp := wire.ConnectResponse{HasReadOnly: req.HasReadOnly, TimeOut: timeout, ReadOnly: ro}
	if req.SessionID == 0 && (ro || c.srv.localSessions()) {
		id, passwd := c.srv.createLocal(c, timeout, ro)
		resp.SessionID, resp.Passwd = int64(id), passwd
	} else if req.SessionID == 0 {
		if c.srv.node.Paused() {
			c.log.Warn("disk full: refusing a new session (creating one is a write); the client will try again")
			return false
		}
		id := c.srv.newSessionID()
		passwd := newPassword()
		c.srv.sessMu.Lock()
		c.srv.live[id] = &liveSession{timeout: time.Duration(timeout) * time.Millisecond, conn: c}
		c.srv.sessMu.Unlock()
		c.srv.touch(id)
		out, err := c.srv.proposeAndWait(&fsm.Entry{
			Op: wire.OpCreateSession, Session: id,
			Body: wire.Marshal(&fsm.SessionRecord{Timeout: timeout, Passwd: passwd}),
		})
		if err != nil || out.Err != wire.CodeOK {
			c.srv.dropLive(id)
			c.log.Warn("could not create session; the client will retry", "err", err, "code", out.Err)
			return false
		}
		resp.SessionID, resp.Passwd = int64(id), passwd
	} else if found, ok := c.srv.reattachLocal(fsm.SessionID(req.SessionID), req.Passwd, c, time.Duration(timeout)*time.Millisecond, ro); found || ro {
		c.srv.metrics.ConnectionRevalidateCount.Inc()
		if !found && ro && c.srv.isGlobal(fsm.SessionID(req.SessionID)) {
			// ZooKeeper's words: its client tries another server.
			c.log.Info("Refusing global session reconnection in RO mode " + c.nc.RemoteAddr().String())
			return false
		}
		if !ok {
			c.sessionGone(&req)
			return false
		}
		resp.SessionID, resp.Passwd = req.SessionID, req.Passwd
	} else {
		c.srv.metrics.ConnectionRevalidateCount.Inc()
		sid := fsm.SessionID(req.SessionID)
		sess, ok, err := c.srv.checkSession(sid, req.Passwd)
		if err != nil {
			c.log.Info("could not check the session against the log; the client will retry", "session", sid, "err", err)
			return false
		}
		if ok && sess.Owner != c.srv.id && !c.srv.node.Standalone() {
			// The session moves here: writes still proposed for it by the
			// server it leaves get SESSIONMOVED.
			if ok, err = c.srv.attach(sid); err != nil && c.srv.awaitServing() {
				// Proposed to a leader that was handing leadership over:
				// once more, to the next one.
				ok, err = c.srv.attach(sid)
			}
			if err != nil {
				c.log.Info("could not move the session here; the client will retry", "session", sid, "err", err)
				return false
			}
		}
		if ok && sess.Owner != c.srv.id && c.srv.attached != nil {
			c.srv.attached(int64(sid))
		}
		if ok {
			if ok, err = c.srv.reattach(sid, c, time.Duration(timeout)*time.Millisecond); err != nil {
				c.log.Info("could not move the session here; the client will retry", "session", sid, "err", err)
				return false
			}
		}
		if !ok {
			c.sessionGone(&req)
			return false
		}
		resp.SessionID, resp.Passwd = req.SessionID, req.Passwd
	}
	c.session.Store(resp.SessionID)
	c.timeout.Store(timeout)
	c.readTimeout()
	c.stats.lastOp.Store(int32(wire.OpCreateSession))
	c.stats.lastZxid.Store(c.srv.lastZxid.Load())
	c.send(wire.AppendRecords(nil, &resp))
	c.log.Debug("session established", "session", fsm.SessionID(resp.SessionID), "timeout_ms", timeout)
	return true
}

// sessionGone tells a reconnecting client that its session expired (or
// its password is wrong): a ConnectResponse with timeout 0, session 0 and
// a zero password; the caller then closes the connection.
func (c *conn) sessionGone(req *wire.ConnectRequest) {
	c.log.Info("session expired or password wrong; telling the client its session is gone",
		"session", fsm.SessionID(req.SessionID))
	resp := wire.ConnectResponse{HasReadOnly: req.HasReadOnly, Passwd: make([]byte, 16)}
	f := wire.AppendRecords(nil, &resp)
	c.nc.SetWriteDeadline(time.Now().Add(handshakeTimeout))
	c.w.Write(f)
}

func (c *conn) logReadError(err error) {
	switch {
	case errors.Is(err, wire.ErrFrameTooLarge):
		c.log.Warn("request larger than jute.maxbuffer; closing the connection (raise jute.maxbuffer on server and client if such requests are intended)",
			"err", err)
	case errors.Is(err, errLargeRequest):
		c.log.Warn("closing the connection: a large request would pass largeRequestMaxBytes (raise largeRequestMaxBytes or largeRequestThreshold in zoo.cfg if such requests are intended)",
			"largeRequestMaxBytes", c.srv.limits.cfg.LargeRequestMaxBytes)
	case errors.Is(err, io.EOF), errors.Is(err, io.ErrUnexpectedEOF):
		// The client closed its end (ZooKeeper's handleFailedRead).
		c.srv.metrics.ConnectionDropCount.Inc()
	case errors.Is(err, net.ErrClosed):
	default:
		var ne net.Error
		if errors.As(err, &ne) && ne.Timeout() {
			c.log.Debug("client silent for longer than its session timeout; closing", "err", err)
			return
		}
		c.log.Debug("read failed", "err", err)
	}
}

// readLoop decodes requests until the connection fails or a request ends
// it; it reports whether a final reply is queued that must still be sent.
func (c *conn) readLoop(br *bufio.Reader) (drain bool) {
	for {
		if !c.waitToRead() {
			return false
		}
		frame, err := c.readRequest(br)
		if err != nil {
			c.logReadError(err)
			return false
		}
		c.readTimeout()
		c.srv.stats.received.Add(1)
		c.stats.received.Add(1)
		c.srv.metrics.BytesReceived.Add(int64(4 + len(frame))) // the length prefix and the payload
		d := wire.NewDecoder(frame, c.srv.maxBuffer)
		var h wire.RequestHeader
		h.Decode(d)
		if d.Err() != nil {
			c.log.Warn("request shorter than its header; closing", "len", len(frame))
			return false
		}
		c.srv.touch(c.sessionID())
		r := &reply{xid: h.Xid, op: h.Type, start: c.srv.now()}
		if ok, answered := c.admitRequest(r, frame); !ok {
			return false
		} else if answered {
			continue
		}
		if !c.dispatch(r, frame[d.Offset():]) {
			return true
		}
	}
}

// enqueue puts r in the ordered reply queue, waiting while the connection
// has maxOutstanding requests in flight.
func (c *conn) enqueue(r *reply) bool {
	select {
	case c.replies <- r:
		return true
	case <-c.closed:
		return false
	}
}

// processLoop handles requests in arrival order. Writes are proposed as
// they come (pipelined, at most maxOutstanding in flight). A read that
// arrives while writes are in flight follows the last of them: it runs on
// the apply goroutine right after that write is applied and its reply
// queued, so it sees exactly the writes sent before it, while the
// processor goes on proposing the writes after it.
func (c *conn) processLoop() {
	var inflight []*reply // proposed writes, oldest first
	for {
		var headDone <-chan struct{}
		next := c.replies
		if len(inflight) > 0 {
			headDone = inflight[0].done
			if len(inflight) >= maxOutstanding {
				next = nil // backpressure: wait for the oldest write first
			}
		}
		var r *reply
		select {
		case <-headDone:
			w := inflight[0]
			inflight = inflight[1:]
			if w.closeAfter {
				return
			}
			continue
		case r = <-next:
		case <-c.closed:
			return
		}
		if r.proposes() {
			if refusal := c.refusal(r); refusal != nil {
				// Refused before the log: answered like a read, in order.
				r.exec = func() []byte { return refusal }
			} else if exec, local, upgrade := c.localWrite(r); exec != nil {
				// A local session's close or refused ephemeral: answered
				// here, in order, once earlier writes are applied.
				r.exec = exec
			} else {
				if !c.propose(r, local, upgrade) {
					return
				}
				inflight = append(inflight, r)
				continue
			}
		}
		if len(inflight) > 0 && !r.closeAfter && inflight[len(inflight)-1].follow(r) {
			continue
		}
		for _, w := range inflight {
			select {
			case <-w.done:
			case <-c.closed:
				return
			}
			if w.closeAfter {
				return
			}
		}
		inflight = inflight[:0]
		frame := c.run(r)
		c.observe(r)
		if r.closeAfter {
			c.sendAndClose(frame)
			return
		}
		if frame != nil {
			c.send(frame)
		}
	}
}

// follow makes r complete right after write w is applied. It fails once w
// has been applied (the caller then runs r itself).
func (w *reply) follow(r *reply) bool {
	w.followMu.Lock()
	defer w.followMu.Unlock()
	if w.applied {
		return false
	}
	w.followers = append(w.followers, r)
	return true
}

// runFollowers runs on the apply goroutine, holding the state lock, after
// w's reply is queued: the requests that followed w complete now, in order.
func (c *conn) runFollowers(w *reply) {
	w.followMu.Lock()
	w.applied = true
	followers := w.followers
	w.followers = nil
	w.followMu.Unlock()
	for _, f := range followers {
		f.underApply = true
		frame := c.run(f)
		c.observe(f)
		if frame != nil {
			c.send(frame)
		}
	}
}

// observe records a completed request in the latency statistics, once.
// It runs right before the reply is queued: a client that has its reply
// finds its latency counted.
func (c *conn) observe(r *reply) {
	if r.observed {
		return
	}
	r.observed = true
	c.srv.limits.finish(c, r)
	if r.start.IsZero() {
		return
	}
	now := c.srv.now()
	c.stats.observe(r, now)
	c.srv.stats.observe(now.Sub(r.start))
	// A request that was proposed is a write (updatelatency).
	c.srv.metrics.ObserveRequest(opName(r.op), r.proposes(), now.Sub(r.start))
}

// proposes reports whether the processor proposes r to the log: a write,
// which has neither exec nor read.
func (r *reply) proposes() bool { return r.exec == nil && r.read == nil }

// run completes a request that is not proposed: a read's handler, or exec.
func (c *conn) run(r *reply) []byte {
	if r.read != nil {
		return r.read(c, r, r.req)
	}
	return r.exec()
}

// replyFrame encodes a reply header and, when err is OK and resp is not
// nil, the response body.
func replyFrame(xid int32, zxid int64, err wire.Code, resp wire.Record) []byte {
	if err != wire.CodeOK {
		resp = nil
	}
	return wire.AppendReply(make([]byte, 0, replyCap(resp)), wire.ReplyHeader{Xid: xid, Zxid: zxid, Err: err}, resp)
}

// replyCap is a reply frame's likely size, so it is encoded in one
// allocation rather than grown: the frame and header, a stat, and the
// data or child names of the replies that carry them.
func replyCap(resp wire.Record) int {
	const fixed = 4 + 16 + 68 + 16 // length, header, stat, lengths
	switch r := resp.(type) {
	case *wire.GetDataResponse:
		return fixed + len(r.Data)
	case *wire.GetChildrenResponse:
		return fixed + namesSize(r.Children)
	case *wire.GetChildren2Response:
		return fixed + namesSize(r.Children)
	}
	return fixed + 32
}

// namesSize is the encoded size of a vector of strings.
func namesSize(names []string) int {
	n := 0
	for _, s := range names {
		n += 4 + len(s)
	}
	return n
}

// noTxnZxid is the header zxid of a notification no transaction caused:
// the catch-up events SetWatches synthesizes, as in ZooKeeper.
const noTxnZxid fsm.Zxid = -1

// eventFrame encodes a notification. zxid is the transaction that fired it
// (ZooKeeper 3.9+, ZOOKEEPER-4655), or noTxnZxid; servers before 3.9 sent
// -1 always, and clients of that age ignore the field.
func eventFrame(zxid fsm.Zxid, t wire.EventType, path string) []byte {
	return wire.AppendRecords(nil, &wire.ReplyHeader{Xid: wire.XidNotification, Zxid: int64(zxid)},
		&wire.WatcherEvent{Type: t, State: wire.StateSyncConnected, Path: path})
}

func zxidHex(z int64) string             { return fmt.Sprintf("0x%x", z) }
func sessionHex(id fsm.SessionID) string { return id.String() }
