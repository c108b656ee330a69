package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// The accepting side of the TCP transport: one goroutine per accepted
// connection reads what a peer sends and delivers it.

var (
	// errSnapCut is what Snapshots.Receive reads when the connection
	// breaks before the end of a snapshot body.
	errSnapCut = errors.New("transport: the connection to the sender broke before the end of the snapshot body")
	// errReceiveReturned is what the pipe feeding Snapshots.Receive
	// answers once Receive has returned.
	errReceiveReturned = errors.New("transport: Snapshots.Receive returned before the end of the body")
)

// acceptLoop accepts connections until the listener closes.
func (t *TCP) acceptLoop() {
	defer t.wg.Done()
	const minDelay, maxDelay = 5 * time.Millisecond, time.Second
	delay := minDelay
	for {
		c, err := t.ln.Accept()
		if err != nil {
			if t.ctx.Err() != nil || errors.Is(err, net.ErrClosed) {
				return
			}
			// Out of file descriptors, most likely: wait and retry.
			t.log.Warn("cannot accept peer connections; retrying", "addr", t.ln.Addr(), "err", err, "retry_in", delay)
			timer := time.NewTimer(delay)
			select {
			case <-t.ctx.Done():
				timer.Stop()
				return
			case <-timer.C:
			}
			delay = min(2*delay, maxDelay)
			continue
		}
		delay = minDelay
		if !t.track(c) {
			continue
		}
		t.wg.Add(1)
		go t.serve(c)
	}
}

// inbound is an accepted connection after its handshake.
type inbound struct {
	t *TCP
	// c carries the peer protocol: the TCP connection, or TLS over it.
	c      net.Conn
	fr     *frameReader
	from   uint64 // the peer, from the hello
	remote string
	// snap is the snapshot whose body is arriving; nil between snapshots.
	snap *snapRecv
}

// snapRecv is a snapshot body being received.
type snapRecv struct {
	m     *raftpb.Message // the MsgSnap, delivered once the body is stored
	index uint64
	start time.Time
	bytes int64
	// pw feeds Snapshots.Receive; nil when the body is discarded.
	pw *io.PipeWriter
	// resc receives Receive's result.
	resc chan error
	// discard says why the body is discarded, when it is.
	discard string
	// writeErr is set when the pipe refused a chunk: Receive has
	// returned.
	writeErr error
}

// serve runs the handshake of an accepted connection, then reads it
// until it ends. raw is the TCP connection: the one tracked, closed, and
// named in logs; the peer protocol runs on it or, with TLS, inside it.
func (t *TCP) serve(raw net.Conn) {
	defer t.wg.Done()
	remote := raw.RemoteAddr().String()
	var (
		c     net.Conn
		fr    *frameReader
		isTLS bool
		from  uint64
	)
	// One deadline for the whole handshake: the first byte, TLS, and the
	// hello.
	err := raw.SetDeadline(time.Now().Add(t.cfg.HandshakeTimeout))
	if err == nil {
		c, isTLS, err = t.acceptSecure(raw)
	}
	if err == nil {
		refuse := ""
		if !isTLS && t.cfg.ServerTLS != nil && !t.cfg.PortUnification {
			refuse = reasonPlainOnTLS
		}
		fr = newFrameReader(c, maxHandshakeFrame)
		from, err = t.accept(c, fr, refuse)
	}
	// The connection replaces the peer's previous one before the peer
	// hears it is accepted, so of two connections the later accepted
	// wins; a peer SetPeers removed since the hello was checked is
	// refused.
	if err == nil && !t.setInbound(from, raw, remote) {
		err = t.refuse(c, notMember(from))
	}
	if err != nil {
		t.untrack(raw, 0)
		t.logServeError(remote, 0, err)
		return
	}
	if _, err = c.Write(frameBytes(kindReply, reply{accepted: true}.encode())); err == nil {
		// The handshake deadline ends here.
		err = raw.SetDeadline(time.Time{})
	}
	if err == nil {
		t.log.Debug("accepted a connection from peer", "peer", t.name(from), "remote", remote, "tls", isTLS)
		if p := t.peer(from); p != nil {
			p.kickAt.Store(time.Now().UnixNano())
			select {
			case p.kickc <- struct{}{}:
			default:
			}
		}
		fr.limit = maxFrame
		in := &inbound{t: t, c: c, fr: fr, from: from, remote: remote}
		err = in.loop()
	}
	t.untrack(raw, from)
	t.logServeError(remote, from, err)
}

// accept reads the hello and checks it, answering a refusal. It returns
// the peer's id. refuse, when not "", is a reason to refuse any hello
// with. The caller has set the handshake deadline.
func (t *TCP) accept(c net.Conn, fr *frameReader, refuse string) (uint64, error) {
	kind, payload, err := fr.next()
	if err != nil {
		return 0, err
	}
	if kind != kindHello {
		return 0, protocolErr("the first frame is a %s frame, not a hello", kind)
	}
	h, err := decodeHello(payload)
	if err != nil {
		return 0, err
	}
	if refuse != "" {
		return 0, t.refuse(c, &refusedError{reason: refuse})
	}
	if ref := t.check(h); ref != nil {
		return 0, t.refuse(c, ref)
	}
	return h.from, nil
}

// refuse answers a hello with ref's reason and returns ref.
func (t *TCP) refuse(c net.Conn, ref *refusedError) error {
	// Best effort: the dialer logs the reason too.
	c.Write(frameBytes(kindReply, reply{reason: ref.reason}.encode()))
	return ref
}

// check returns why a hello is refused, or nil when it is accepted.
func (t *TCP) check(h hello) *refusedError {
	id := t.cfg.ID
	reason := ""
	switch {
	case h.version != protocolVersion:
		reason = fmt.Sprintf("peer speaks version %d of the peer protocol; this member speaks version %d", h.version, protocolVersion)
	case h.ensemble != t.cfg.Ensemble && (h.ensemble == DynamicEnsemble || t.cfg.Ensemble == DynamicEnsemble):
		reason = fmt.Sprintf("peer's membership is %s but this member's is %s: reconfigEnabled must be the same on every member", membershipKind(h.ensemble), membershipKind(t.cfg.Ensemble))
	case h.ensemble != t.cfg.Ensemble:
		reason = fmt.Sprintf("peer from another ensemble (or with different server lines): its ensemble is %q, this member's is %q", h.ensemble, t.cfg.Ensemble)
	case h.from == id:
		reason = fmt.Sprintf("duplicate myid: a peer claims to be member %d, which is this member's id (two servers with the same myid, or a server line pointing at this server)", h.from)
	case h.to != id:
		reason = fmt.Sprintf("peer thinks it is talking to member %d but this is member %d (check the server lines)", h.to, id)
	case t.peer(h.from) == nil:
		return notMember(h.from)
	default:
		return nil
	}
	return &refusedError{reason: reason}
}

// membershipKind describes an ensemble identity for a refusal.
func membershipKind(ensemble string) string {
	if ensemble == DynamicEnsemble {
		return "dynamic (reconfigEnabled=true)"
	}
	return "static (reconfigEnabled=false)"
}

// notMember is the refusal of a hello from a member that is not a peer.
// A member being added dials before its addition commits here, and one
// removed may not know it yet, so both retry: the refusal is logged at
// Warn once a minute per member id.
func notMember(id uint64) *refusedError {
	return &refusedError{
		reason: fmt.Sprintf("unknown member id %d: not a member of this ensemble (removed, or not yet added; check the server lines)", id),
		logKey: fmt.Sprintf("not a member %d", id),
	}
}

// setInbound makes c the connection of peer from, closing an older one
// (left over from before the peer redialled). It returns false, changing
// nothing, when from is not a peer.
func (t *TCP) setInbound(from uint64, c net.Conn, remote string) bool {
	t.mu.Lock()
	if t.peers[from] == nil {
		t.mu.Unlock()
		return false
	}
	old := t.inbound[from]
	t.inbound[from] = c
	t.mu.Unlock()
	if old != nil {
		lvl := t.limit.level(fmt.Sprintf("replace %d", from), slog.LevelInfo)
		t.log.Log(context.Background(), lvl, "a new connection from peer replaces its previous one", "peer", t.name(from), "remote", remote, "previous", old.RemoteAddr().String())
		old.Close()
	}
	return true
}

// logServeError logs why an accepted connection ended; from is 0 before
// the handshake.
func (t *TCP) logServeError(remote string, from uint64, err error) {
	var (
		ref  *refusedError
		terr *tlsError
	)
	warn := func(key, msg string, attrs ...any) {
		lvl := t.limit.level(key, slog.LevelWarn)
		t.log.Log(context.Background(), lvl, msg, append([]any{"remote", remote}, attrs...)...)
	}
	host := hostOf(remote) + " "
	var nerr net.Error
	switch {
	case t.ctx.Err() != nil || errors.Is(err, net.ErrClosed):
		// Closed here: Close, a newer connection from the peer, or the
		// peer removed.
		t.log.Debug("closed a peer connection", "remote", remote, "peer", t.name(from))
	case errors.As(err, &ref) && ref.logKey != "":
		warn(ref.logKey, "refused a peer connection", "reason", ref.reason)
	case errors.As(err, &ref):
		warn(host+ref.reason, "refused a peer connection", "reason", ref.reason)
	case errors.As(err, &terr):
		attrs := []any{"reason", terr.reason}
		if terr.err != nil {
			attrs = append(attrs, "err", terr.err)
		}
		warn(host+terr.reason, "TLS handshake of a connection to the quorum port failed; closing it", attrs...)
	case errors.Is(err, errProtocol):
		warn(host+"protocol", "closing a connection that breaks the Warden peer protocol", "peer", t.name(from), "err", err)
	case from == 0 && errors.Is(err, io.EOF):
		t.log.Debug("connection closed before its handshake", "remote", remote)
	case from == 0 && errors.As(err, &nerr) && nerr.Timeout():
		warn(host+"timeout", "no handshake on a connection to the quorum port; closing it", "timeout", t.cfg.HandshakeTimeout)
	case from == 0 && errors.Is(err, io.ErrUnexpectedEOF):
		warn(host+"protocol", "connection to the quorum port closed in the middle of a frame; not a Warden peer?")
	case errors.Is(err, io.EOF):
		t.log.Debug("peer closed its connection", "peer", t.name(from), "remote", remote)
	default:
		t.log.Debug("connection from peer broken", "peer", t.name(from), "remote", remote, "err", err)
	}
}

// loop reads frames until the connection ends.
func (in *inbound) loop() error {
	defer in.abortSnap()
	for {
		kind, payload, err := in.fr.next()
		if err != nil {
			return err
		}
		switch kind {
		case kindMsg:
			err = in.message(payload)
		case kindChunk:
			err = in.chunk(payload)
		case kindSnapEnd:
			err = in.snapEnd(payload)
		default:
			err = protocolErr("a %s frame from a dialer", kind)
		}
		if err != nil {
			return err
		}
	}
}

// message decodes and delivers a raft message; a MsgSnap starts a
// snapshot body instead.
func (in *inbound) message(payload []byte) error {
	t := in.t
	if in.snap != nil {
		return protocolErr("a message inside the body of snapshot %d", in.snap.index)
	}
	m := new(raftpb.Message)
	if err := proto.Unmarshal(payload, m); err != nil {
		return protocolErr("undecodable raft message: %v", err)
	}
	var drop string
	switch {
	case m.GetFrom() != in.from && m.GetType() != raftpb.MessageType_MsgProp:
		// Raft passes a proposal on to the leader with its proposer as
		// From (a member that just stepped down forwards what it was
		// sent), so only proposals may arrive from another member.
		drop = fmt.Sprintf("a message from %s on the connection of %s", t.name(m.GetFrom()), t.name(in.from))
	case m.GetTo() != t.cfg.ID:
		drop = fmt.Sprintf("a message to %s reached %s", t.name(m.GetTo()), t.name(t.cfg.ID))
	}
	if drop != "" {
		lvl := t.limit.level(fmt.Sprintf("drop %d", in.from), slog.LevelWarn)
		t.log.Log(context.Background(), lvl, "dropped a raft message that does not belong on its connection",
			"peer", t.name(in.from), "remote", in.remote, "type", m.GetType(), "reason", drop)
	}
	if m.GetType() == raftpb.MessageType_MsgSnap {
		in.beginSnap(m, drop)
		return nil
	}
	if drop == "" {
		t.handler.Deliver(m)
	}
	return nil
}

// beginSnap starts receiving the body of the snapshot of m, into
// Snapshots.Receive or, when discard says why, nowhere.
func (in *inbound) beginSnap(m *raftpb.Message, discard string) {
	t := in.t
	meta := m.GetSnapshot().GetMetadata()
	if discard == "" && meta == nil {
		discard = "a MsgSnap without snapshot metadata"
	}
	s := &snapRecv{m: m, index: meta.GetIndex(), start: time.Now(), discard: discard}
	in.snap = s
	if discard != "" {
		return
	}
	t.log.Debug("receiving a snapshot from peer", "peer", t.name(in.from), "index", s.index)
	pr, pw := io.Pipe()
	s.pw, s.resc = pw, make(chan error, 1)
	t.wg.Add(1)
	go func() {
		defer t.wg.Done()
		err := t.cfg.Snapshots.Receive(meta, pr)
		if err != nil {
			pr.CloseWithError(err)
		} else {
			pr.CloseWithError(errReceiveReturned)
		}
		s.resc <- err
	}()
}

// chunk passes the next part of a snapshot body to Receive.
func (in *inbound) chunk(payload []byte) error {
	s := in.snap
	if s == nil {
		return protocolErr("a snapshot chunk outside a snapshot")
	}
	s.bytes += int64(len(payload))
	if s.pw == nil || s.writeErr != nil {
		return nil
	}
	// Write returns once Receive has read it all, so payload may be
	// reused.
	if _, err := s.pw.Write(payload); err != nil {
		s.writeErr = err
	}
	return nil
}

// snapEnd ends a snapshot body: it waits for Receive, delivers the
// MsgSnap if the body was stored, and acks the outcome to the dialer.
func (in *inbound) snapEnd(payload []byte) error {
	t, s := in.t, in.snap
	if s == nil {
		return protocolErr("a snapshot end outside a snapshot")
	}
	if len(payload) != 0 {
		return protocolErr("a snapshot end frame with a %d-byte payload", len(payload))
	}
	in.snap = nil
	reason := s.discard
	if s.pw != nil {
		s.pw.Close()
		err := <-s.resc
		switch {
		case err != nil:
			reason = "storing it failed: " + err.Error()
		case s.writeErr != nil:
			reason = errReceiveReturned.Error()
		}
	}
	if reason == "" {
		t.log.Info("received a snapshot from peer", "peer", t.name(in.from), "index", s.index, "bytes", s.bytes, "took", time.Since(s.start).Round(time.Millisecond))
		t.handler.Deliver(s.m)
	} else {
		t.log.Warn("could not receive a snapshot from peer", "peer", t.name(in.from), "index", s.index, "reason", reason)
	}
	if err := in.c.SetWriteDeadline(time.Now().Add(t.cfg.WriteTimeout)); err != nil {
		return err
	}
	_, err := in.c.Write(frameBytes(kindSnapAck, snapAck{stored: reason == "", index: s.index, reason: reason}.encode()))
	return err
}

// abortSnap fails a snapshot cut short by the end of the connection:
// Receive reads an error and nothing is delivered.
func (in *inbound) abortSnap() {
	if s := in.snap; s != nil && s.pw != nil {
		in.t.log.Info("snapshot from peer cut short: the connection ended", "peer", in.t.name(in.from), "index", s.index, "after_bytes", s.bytes)
		s.pw.CloseWithError(errSnapCut)
	}
	in.snap = nil
}
