package transport

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The dialling side of the TCP transport: one sender goroutine per peer.

// errPeerClosed is why a connection ends when the peer closes it.
var errPeerClosed = errors.New("transport: the peer closed the connection")

// refusedError is a handshake the acceptor refused, with its reason.
type refusedError struct {
	reason string
	// logKey, when not "", is the acceptor's log limiter key for the
	// refusal, instead of the remote host and the reason.
	logKey string
}

func (e *refusedError) Error() string { return "transport: handshake refused: " + e.reason }

// peer is the sending side of the link to one peer, at one address.
type peer struct {
	t    *TCP
	id   uint64
	addr string
	host string // of addr: what DialTLS is given
	// ctx is cancelled when the peer leaves the peer set, or is
	// readdressed (SetPeers), and by Close: the sender stops, and its
	// connection, dial and handshake end.
	ctx    context.Context
	cancel context.CancelFunc
	// queuec is the peer's send queue: Send puts, the sender goroutine
	// takes.
	queuec chan *raftpb.Message
	// kickc ends a backoff wait early: the peer has just connected to
	// this member, so it is up (a member elected while this one waited
	// would otherwise not be reachable for up to MaxBackoff).
	kickc chan struct{}
	// kickAt is when the peer last connected to this member (UnixNano),
	// set before kickc is sent: a kick from before the failure burst
	// began is stale.
	kickAt atomic.Int64

	// Owned by the sender goroutine (run).
	everUp bool
	// downSince is when the current failure burst began.
	down      bool // from the first failure until the next connection
	downSince time.Time
	// reported is set once the peer was reported Unreachable in the
	// current failure burst.
	reported bool
	// goneReported is set once the peer was reported gone (PeerGone) in
	// the current failure burst.
	goneReported bool
	// lastFail is the class of the last failure logged in the current
	// burst: the same failure again is logged at Debug.
	lastFail string
	// buf is reused to encode messages.
	buf []byte
}

// run is the peer's sender goroutine: connect, stream the queue, and on
// failure wait (dropping what is queued) and connect again, until the
// peer's context ends.
func (p *peer) run() {
	defer p.t.wg.Done()
	defer p.stopped()
	cfg := &p.t.cfg
	delay := cfg.MinBackoff
	var wait time.Duration // before the next dial
	for {
		if wait > 0 && !p.idle(jitter(wait)) {
			return
		}
		oc, err := p.connect()
		if err != nil {
			if p.ctx.Err() != nil {
				return
			}
			p.dialFailed(err)
			wait, delay = delay, min(2*delay, cfg.MaxBackoff)
			continue
		}
		p.connected(oc.isTLS)
		start := time.Now()
		err = p.stream(oc)
		oc.stopClose()
		p.t.untrack(oc.raw, 0)
		<-oc.donec
		if p.ctx.Err() != nil {
			return
		}
		p.lost(err)
		// A connection that lasted redials at once (a refused dial then
		// tells at once that the peer's process is gone: PeerGone); one
		// that broke quickly backs off, so two dialers claiming the same
		// id cannot make the peer spin.
		if time.Since(start) >= p.t.steadyAfter() {
			wait, delay = 0, cfg.MinBackoff
		} else {
			wait, delay = delay, min(2*delay, cfg.MaxBackoff)
		}
	}
}

// stopped drops what is left in the queue of a sender that stopped
// because SetPeers removed or readdressed its peer; SetPeers has made sure
// nothing more is queued. After Close the queue is left as it is.
func (p *peer) stopped() {
	if p.t.ctx.Err() != nil {
		return
	}
	n := len(p.queuec)
	for range n {
		p.drop(<-p.queuec)
	}
	p.t.log.Debug("stopped sending to peer", "peer", p.t.name(p.id), "addr", p.addr, "dropped", n)
}

// steadyConn is how long a connection must have lasted for its loss to be
// redialled at once rather than after a backoff: at most one dial a second
// when a peer keeps closing connections that old.
const steadyConn = time.Second

// steadyAfter is steadyConn, or MaxBackoff when that is shorter (a
// backoff shorter than a second needs no shortcut), or the tests'
// override.
func (t *TCP) steadyAfter() time.Duration {
	if t.cfg.steady != 0 {
		return t.cfg.steady
	}
	return min(steadyConn, t.cfg.MaxBackoff)
}

// jitter draws a wait from the upper half of d.
func jitter(d time.Duration) time.Duration { return d/2 + rand.N(d/2+1) }

// idle waits for d, dropping every message queued meanwhile. It returns
// false when the transport closes.
func (p *peer) idle(d time.Duration) bool {
	timer := time.NewTimer(d)
	defer timer.Stop()
	for {
		select {
		case <-p.ctx.Done():
			return false
		case <-timer.C:
			return true
		case <-p.kickc:
			// The peer connected to us since the failure began: it is
			// up, dial now.
			if p.kickAt.Load() >= p.downSince.UnixNano() {
				return true
			}
		case m := <-p.queuec:
			p.drop(m)
		}
	}
}

// drop discards a message the peer cannot be sent now.
func (p *peer) drop(m *raftpb.Message) {
	h := p.t.handler
	switch m.GetType() {
	case raftpb.MessageType_MsgSnap:
		h.SnapshotSent(p.id, false)
	case raftpb.MessageType_MsgProp:
		// Raft never resends a forwarded proposal: its proposer must
		// learn of every one lost, not once per failure burst.
		h.Unreachable(p.id)
		return
	}
	p.unreachable()
}

// unreachable reports the peer Unreachable, once per failure burst.
func (p *peer) unreachable() {
	if !p.reported {
		p.reported = true
		p.t.handler.Unreachable(p.id)
	}
}

// connected records a successful handshake.
func (p *peer) connected(isTLS bool) {
	if p.everUp {
		p.t.log.Info("reconnected to peer", "peer", p.t.name(p.id), "addr", p.addr, "tls", isTLS, "down_for", time.Since(p.downSince).Round(time.Millisecond))
	} else {
		p.t.log.Info("connected to peer", "peer", p.t.name(p.id), "addr", p.addr, "tls", isTLS)
	}
	p.everUp, p.down, p.reported, p.lastFail, p.goneReported = true, false, false, "", false
	if hook := p.t.testHookUp; hook != nil {
		hook(p.id)
	}
}

// markDown starts a failure burst, if one has not started.
func (p *peer) markDown() {
	if !p.down {
		p.down, p.downSince = true, time.Now()
	}
}

// lost records the end of a connection that was up.
func (p *peer) lost(err error) {
	p.markDown()
	p.lastFail = "unreachable"
	p.t.log.Warn("lost connection to peer", "peer", p.t.name(p.id), "addr", p.addr, "err", err)
	// Whatever was in flight is gone.
	p.reported = true
	p.t.handler.Unreachable(p.id)
}

// dialFailed records a dial or handshake that failed, logging each class
// of failure once per burst.
func (p *peer) dialFailed(err error) {
	p.markDown()
	var (
		ref  *refusedError
		terr *tlsError
	)
	class, lvl, msg := "unreachable", slog.LevelInfo, "cannot reach peer"
	switch {
	case errors.As(err, &ref):
		class, lvl, msg = "refused: "+ref.reason, slog.LevelWarn, "peer refused the connection"
	case errors.As(err, &terr):
		class, lvl, msg = "tls: "+terr.reason, slog.LevelWarn, "TLS handshake with peer failed"
	case errors.Is(err, errProtocol):
		class, lvl, msg = "protocol", slog.LevelWarn, "peer answered with something other than the Warden peer protocol; is its address right?"
	}
	if class == p.lastFail {
		lvl = slog.LevelDebug
	}
	// Refused, or reset before the handshake's reply: the port has no
	// process behind it, or one that is dying (its listening socket
	// still takes connections while the kernel closes its sockets).
	if (errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET)) && p.everUp && !p.goneReported {
		p.goneReported = true
		p.t.handler.PeerGone(p.id)
	}
	p.lastFail = class
	attrs := []any{"peer", p.t.name(p.id), "addr", p.addr}
	switch {
	case ref != nil:
		attrs = append(attrs, "reason", ref.reason)
	case terr != nil:
		attrs = append(attrs, "reason", terr.reason)
		if terr.err != nil {
			attrs = append(attrs, "err", terr.err)
		}
	default:
		attrs = append(attrs, "err", err)
	}
	p.t.log.Log(context.Background(), lvl, msg, attrs...)
}

// outConn is a connection this member dialled. The sender goroutine
// writes to it; an ack reader goroutine reads the peer's snapshot acks.
type outConn struct {
	// raw is the TCP connection: the one tracked and closed. c carries
	// the peer protocol: raw, or TLS over it.
	raw, c net.Conn
	fr     *frameReader
	isTLS  bool
	// donec is closed when the ack reader has stopped (the connection is
	// closed by then); err says why it stopped.
	donec chan struct{}
	err   error
	// stopClose unregisters the closing of raw when the peer's context
	// ends.
	stopClose func() bool

	mu sync.Mutex
	// pending holds the indexes of the snapshots sent and not yet acked,
	// oldest first.
	pending []uint64
	// dead is set when the ack reader stops: nothing more will be acked.
	// Invariant: pending is empty once dead is set.
	dead bool
}

// expect registers a snapshot about to be sent. It returns false when the
// connection is already dead.
func (oc *outConn) expect(index uint64) bool {
	oc.mu.Lock()
	defer oc.mu.Unlock()
	if oc.dead {
		return false
	}
	oc.pending = append(oc.pending, index)
	return true
}

// connect dials the peer and makes the handshake: TLS when DialTLS says
// so, then the hello.
func (p *peer) connect() (*outConn, error) {
	t := p.t
	ctx, cancel := context.WithTimeout(p.ctx, t.cfg.DialTimeout)
	raw, err := t.cfg.Dial(ctx, "tcp", p.addr)
	cancel()
	if err != nil {
		return nil, err
	}
	if !t.track(raw) {
		return nil, ErrClosed
	}
	// The peer removed: the handshake, or the writes, end at once.
	stopClose := context.AfterFunc(p.ctx, func() { raw.Close() })
	var (
		c      net.Conn
		tlsCfg *tls.Config // nil: plaintext
		fr     *frameReader
	)
	// One deadline for the whole handshake: TLS, and the hello.
	err = raw.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
	if err == nil {
		c, tlsCfg, err = p.dialSecure(raw)
	}
	if err == nil {
		fr, err = p.handshake(c)
		if tlsCfg != nil && err != nil {
			if reason := replyTLSReason(err, hasClientCert(tlsCfg)); reason != "" {
				err = &tlsError{reason: reason, err: err}
			}
		}
	}
	if err == nil {
		err = raw.SetDeadline(time.Time{})
	}
	if err != nil {
		stopClose()
		t.untrack(raw, 0)
		return nil, err
	}
	oc := &outConn{raw: raw, c: c, fr: fr, isTLS: tlsCfg != nil, donec: make(chan struct{}), stopClose: stopClose}
	t.wg.Add(1)
	go p.readAcks(oc)
	return oc, nil
}

// handshake sends the hello on c and reads the reply. The caller has set
// the handshake deadline.
func (p *peer) handshake(c net.Conn) (*frameReader, error) {
	t := p.t
	h := hello{version: protocolVersion, from: t.cfg.ID, to: p.id, ensemble: t.cfg.Ensemble}
	if _, err := c.Write(frameBytes(kindHello, h.encode())); err != nil {
		return nil, err
	}
	fr := newFrameReader(c, maxHandshakeFrame)
	kind, payload, err := fr.next()
	if err != nil {
		return nil, fmt.Errorf("reading the handshake reply: %w", err)
	}
	if kind != kindReply {
		return nil, protocolErr("a %s frame instead of a handshake reply", kind)
	}
	r, err := decodeReply(payload)
	if err != nil {
		return nil, err
	}
	if !r.accepted {
		return nil, &refusedError{reason: r.reason}
	}
	return fr, nil
}

// readAcks is the ack reader of a dialled connection: it reports the
// outcome of each snapshot sent, and notices when the connection breaks.
func (p *peer) readAcks(oc *outConn) {
	defer p.t.wg.Done()
	var err error
	for err == nil {
		err = p.readAck(oc)
	}
	if err == io.EOF {
		err = errPeerClosed
	}
	oc.raw.Close()
	oc.mu.Lock()
	oc.dead = true
	pending := oc.pending
	oc.pending = nil
	oc.mu.Unlock()
	for _, index := range pending {
		p.t.log.Debug("snapshot not acknowledged before the connection ended", "peer", p.t.name(p.id), "index", index)
		p.t.handler.SnapshotSent(p.id, false)
	}
	oc.err = err
	close(oc.donec)
}

func (p *peer) readAck(oc *outConn) error {
	kind, payload, err := oc.fr.next()
	if err != nil {
		return err
	}
	if kind != kindSnapAck {
		return protocolErr("a %s frame from the acceptor; only snapshot acks come this way", kind)
	}
	a, err := decodeSnapAck(payload)
	if err != nil {
		return err
	}
	oc.mu.Lock()
	ok := len(oc.pending) > 0 && oc.pending[0] == a.index
	if ok {
		oc.pending = oc.pending[1:]
	}
	oc.mu.Unlock()
	if !ok {
		return protocolErr("an ack for snapshot %d, which is not the one awaiting an ack", a.index)
	}
	if a.stored {
		p.t.log.Info("peer stored the snapshot sent to it", "peer", p.t.name(p.id), "index", a.index)
	} else {
		p.t.log.Warn("peer could not store the snapshot sent to it", "peer", p.t.name(p.id), "index", a.index, "reason", a.reason)
	}
	p.t.handler.SnapshotSent(p.id, a.stored)
	return nil
}

// stream writes the queue's messages to the connection until it breaks
// or the transport closes.
func (p *peer) stream(oc *outConn) error {
	bw := bufio.NewWriterSize(oc.c, 64<<10)
	for {
		var m *raftpb.Message
		select {
		case <-p.ctx.Done():
			return ErrClosed
		case <-oc.donec:
			return oc.err
		case m = <-p.queuec:
		}
		err := p.write(oc, bw, m)
		if err == nil && len(p.queuec) == 0 {
			err = p.flush(oc, bw)
		}
		if err != nil {
			select {
			case <-oc.donec: // the ack reader knows better why
				return oc.err
			default:
				return err
			}
		}
	}
}

// write writes one message; a MsgSnap is followed by its body.
func (p *peer) write(oc *outConn, bw *bufio.Writer, m *raftpb.Message) error {
	frame, err := p.encode(m)
	if err != nil {
		p.t.log.Error("cannot send a raft message; dropped", "peer", p.t.name(p.id), "type", m.GetType(), "err", err)
		if m.GetType() == raftpb.MessageType_MsgSnap {
			p.t.handler.SnapshotSent(p.id, false)
		}
		p.t.handler.Unreachable(p.id)
		return nil
	}
	if m.GetType() == raftpb.MessageType_MsgSnap {
		return p.sendSnapshot(oc, bw, m, frame)
	}
	if err := oc.c.SetWriteDeadline(time.Now().Add(p.t.cfg.WriteTimeout)); err != nil {
		return err
	}
	_, err = bw.Write(frame)
	return err
}

func (p *peer) flush(oc *outConn, bw *bufio.Writer) error {
	if err := oc.c.SetWriteDeadline(time.Now().Add(p.t.cfg.WriteTimeout)); err != nil {
		return err
	}
	return bw.Flush()
}

// encode returns the frame of m, in p.buf.
func (p *peer) encode(m *raftpb.Message) ([]byte, error) {
	b := append(p.buf[:0], make([]byte, frameHeaderSize)...)
	b, err := proto.MarshalOptions{}.MarshalAppend(b, m)
	if err != nil {
		return nil, err
	}
	if size := len(b) - frameHeaderSize + 1; size > maxFrame {
		return nil, fmt.Errorf("the message takes %d bytes, more than the frame limit of %d", size, maxFrame)
	}
	putFrameHeader(b, kindMsg)
	if cap(b) <= keepReadBuf {
		p.buf = b
	}
	return b, nil
}

// sendSnapshot writes a MsgSnap's frame, then its body in chunks, then the
// end frame. The outcome is reported when the peer's ack arrives, or as a
// failure when the connection ends first. A body that cannot be read
// breaks the connection, so the peer discards what it received.
func (p *peer) sendSnapshot(oc *outConn, bw *bufio.Writer, m *raftpb.Message, frame []byte) error {
	t, h := p.t, p.t.handler
	meta := m.GetSnapshot().GetMetadata()
	if meta == nil {
		t.log.Error("cannot send a MsgSnap without snapshot metadata; dropped", "peer", p.t.name(p.id))
		h.SnapshotSent(p.id, false)
		return nil
	}
	body, err := t.cfg.Snapshots.Open(meta)
	if err != nil {
		t.log.Warn("cannot open the snapshot to send to peer", "peer", p.t.name(p.id), "index", meta.GetIndex(), "err", err)
		h.SnapshotSent(p.id, false)
		return nil
	}
	defer body.Close()
	if !oc.expect(meta.GetIndex()) {
		h.SnapshotSent(p.id, false)
		<-oc.donec
		return oc.err
	}
	t.log.Debug("sending snapshot to peer", "peer", p.t.name(p.id), "index", meta.GetIndex())
	deadline := func() error { return oc.c.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout)) }
	if err := deadline(); err != nil {
		return err
	}
	if _, err := bw.Write(frame); err != nil {
		return err
	}
	chunk := make([]byte, t.cfg.SnapshotChunk)
	var sent int64
	for {
		n, rerr := io.ReadFull(body, chunk)
		if n > 0 {
			if err := deadline(); err != nil {
				return err
			}
			// Flushed chunk by chunk: the receiver gets each chunk while
			// the next is read, however slow the body is.
			if err := writeFrame(bw, kindChunk, chunk[:n]); err != nil {
				return err
			}
			if err := bw.Flush(); err != nil {
				return err
			}
			sent += int64(n)
		}
		if rerr == io.EOF || rerr == io.ErrUnexpectedEOF {
			break
		}
		if rerr != nil {
			t.log.Warn("cannot read the snapshot being sent to peer; closing the connection so the peer discards it",
				"peer", p.t.name(p.id), "index", meta.GetIndex(), "after_bytes", sent, "err", rerr)
			return fmt.Errorf("reading the body of snapshot %d: %w", meta.GetIndex(), rerr)
		}
	}
	if err := deadline(); err != nil {
		return err
	}
	if err := writeFrame(bw, kindSnapEnd, nil); err != nil {
		return err
	}
	t.log.Debug("sent snapshot body to peer; waiting for its ack", "peer", p.t.name(p.id), "index", meta.GetIndex(), "bytes", sent)
	return bw.Flush()
}
