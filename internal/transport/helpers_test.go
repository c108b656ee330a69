package transport

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"go.uber.org/goleak"
	"google.golang.org/protobuf/proto"
)

// waitTimeout bounds every wait of these tests; nothing waits on a clock
// otherwise.
const waitTimeout = 10 * time.Second

const testEnsemble = "test-ensemble"

// checkLeaks verifies, after every other cleanup of the test (transports
// closed), that no goroutine is left.
func checkLeaks(t *testing.T) {
	t.Cleanup(func() { goleak.VerifyNone(t) })
}

// recv waits for a value on ch.
func recv[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatalf("timed out waiting for %s", what)
		panic("unreachable")
	}
}

func msg(from, to, index uint64) *raftpb.Message {
	return &raftpb.Message{
		Type:    raftpb.MessageType_MsgApp.Enum(),
		From:    proto.Uint64(from),
		To:      proto.Uint64(to),
		Term:    proto.Uint64(1),
		Index:   proto.Uint64(index),
		Entries: []*raftpb.Entry{{Index: proto.Uint64(index + 1), Data: []byte("payload")}},
	}
}

func snapMsg(from, to, index uint64) *raftpb.Message {
	return &raftpb.Message{
		Type: raftpb.MessageType_MsgSnap.Enum(),
		From: proto.Uint64(from),
		To:   proto.Uint64(to),
		Term: proto.Uint64(1),
		Snapshot: &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{
			Index:     proto.Uint64(index),
			Term:      proto.Uint64(1),
			ConfState: &raftpb.ConfState{Voters: []uint64{1, 2}},
		}},
	}
}

// recorder is a Handler that records everything in channels.
type recorder struct {
	msgc         chan *raftpb.Message
	unreachablec chan uint64
	snapSentc    chan snapOutcome
	gonec        chan uint64
	// onDeliver, when set before Start, is called first by Deliver.
	onDeliver func(m *raftpb.Message)
}

type snapOutcome struct {
	peer uint64
	ok   bool
}

func newRecorder() *recorder {
	return &recorder{
		msgc:         make(chan *raftpb.Message, 1<<16),
		unreachablec: make(chan uint64, 1<<10),
		snapSentc:    make(chan snapOutcome, 1<<10),
		gonec:        make(chan uint64, 1<<10),
	}
}

func (r *recorder) Deliver(m *raftpb.Message) {
	if r.onDeliver != nil {
		r.onDeliver(m)
	}
	r.msgc <- m
}
func (r *recorder) Unreachable(peer uint64)           { r.unreachablec <- peer }
func (r *recorder) PeerGone(peer uint64)              { r.gonec <- peer }
func (r *recorder) SnapshotSent(peer uint64, ok bool) { r.snapSentc <- snapOutcome{peer, ok} }

// logSink collects a transport's log lines (slog's text handler writes
// one line per call).
type logSink struct {
	mu       sync.Mutex
	lines    []string
	changedc chan struct{} // signalled after each line
}

func newLogSink() *logSink { return &logSink{changedc: make(chan struct{}, 1)} }

func (s *logSink) Write(p []byte) (int, error) {
	s.mu.Lock()
	s.lines = append(s.lines, string(p))
	s.mu.Unlock()
	select {
	case s.changedc <- struct{}{}:
	default:
	}
	return len(p), nil
}

func (s *logSink) logger() *slog.Logger {
	return slog.New(slog.NewTextHandler(s, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// matching returns the lines that contain every one of subs.
func (s *logSink) matching(subs ...string) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for _, l := range s.lines {
		if containsAll(l, subs...) {
			out = append(out, l)
		}
	}
	return out
}

func containsAll(s string, subs ...string) bool {
	for _, sub := range subs {
		if !strings.Contains(s, sub) {
			return false
		}
	}
	return true
}

func (s *logSink) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.lines, "")
}

// wait waits for a line containing every one of subs and returns it.
func (s *logSink) wait(t *testing.T, subs ...string) string {
	t.Helper()
	timer := time.NewTimer(waitTimeout)
	defer timer.Stop()
	for {
		if ls := s.matching(subs...); len(ls) > 0 {
			return ls[0]
		}
		select {
		case <-s.changedc:
		case <-timer.C:
			t.Fatalf("no log line contains all of %q; the log:\n%s", subs, s)
		}
	}
}

// fakeSnaps is a Snapshots whose behaviour each test sets before Start.
type fakeSnaps struct {
	open    func(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error)
	receive func(meta *raftpb.SnapshotMetadata, body io.Reader) error
}

func (f *fakeSnaps) Open(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error) {
	if f.open == nil {
		return nil, errors.New("fake: no snapshot to open")
	}
	return f.open(meta)
}

func (f *fakeSnaps) Receive(meta *raftpb.SnapshotMetadata, body io.Reader) error {
	if f.receive == nil {
		io.Copy(io.Discard, body)
		return errors.New("fake: not storing snapshots")
	}
	return f.receive(meta, body)
}

// member is one running TCP transport and what it reports.
type member struct {
	id    uint64
	tr    *TCP
	h     *recorder
	log   *logSink
	snaps *fakeSnaps
	upc   chan uint64 // the peer of every successful handshake it dialled
}

func listen(t *testing.T, addr string) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	return ln
}

// startMember starts a transport on ln; tweak, if not nil, adjusts its
// configuration (and the member's recorder and fakes) before NewTCP.
func startMember(t *testing.T, id uint64, ln net.Listener, peers map[uint64]string, tweak func(*member, *TCPConfig)) *member {
	t.Helper()
	m := &member{id: id, h: newRecorder(), log: newLogSink(), snaps: &fakeSnaps{}, upc: make(chan uint64, 1<<10)}
	cfg := TCPConfig{
		Ensemble:   testEnsemble,
		ID:         id,
		Listener:   ln,
		Peers:      peers,
		Snapshots:  m.snaps,
		Logger:     m.log.logger(),
		MinBackoff: time.Millisecond,
		MaxBackoff: 20 * time.Millisecond,
	}
	if tweak != nil {
		tweak(m, &cfg)
	}
	tr, err := NewTCP(cfg)
	if err != nil {
		t.Fatal(err)
	}
	m.tr = tr
	tr.testHookUp = func(p uint64) { m.upc <- p }
	if err := tr.Start(m.h); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tr.Close() })
	return m
}

// newEnsemble starts n members on 127.0.0.1 (ids 1..n), each a peer of
// every other.
func newEnsemble(t *testing.T, n int, tweak func(*member, *TCPConfig)) []*member {
	t.Helper()
	lns := make([]net.Listener, n)
	addrs := make(map[uint64]string)
	for i := range lns {
		lns[i] = listen(t, "127.0.0.1:0")
		addrs[uint64(i+1)] = lns[i].Addr().String()
	}
	ms := make([]*member, n)
	for i, ln := range lns {
		id := uint64(i + 1)
		peers := make(map[uint64]string)
		for pid, addr := range addrs {
			if pid != id {
				peers[pid] = addr
			}
		}
		ms[i] = startMember(t, id, ln, peers, tweak)
	}
	return ms
}

// blockingDial never connects: it returns when its context ends.
func blockingDial(ctx context.Context, _, _ string) (net.Conn, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// signallingDial is blockingDial that first signals each dial on c
// (without blocking when c is full).
func signallingDial(c chan struct{}) func(ctx context.Context, network, addr string) (net.Conn, error) {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		select {
		case c <- struct{}{}:
		default:
		}
		return blockingDial(ctx, network, addr)
	}
}

// expectInOrder receives count messages from each of senders on m and
// checks that each sender's indexes arrive as 0, 1, 2, ...
func expectInOrder(t *testing.T, m *member, senders []uint64, first, count uint64) {
	t.Helper()
	next := make(map[uint64]uint64)
	for _, s := range senders {
		next[s] = first
	}
	for range count * uint64(len(senders)) {
		got := recv(t, m.h.msgc, fmt.Sprintf("messages on member %d", m.id))
		from := got.GetFrom()
		want, ok := next[from]
		if !ok || got.GetIndex() != want || got.GetTo() != m.id {
			t.Fatalf("member %d got message %d from %d to %d, want %d from %d", m.id, got.GetIndex(), from, got.GetTo(), want, from)
		}
		next[from]++
	}
}

func sendRange(m *member, to, first, count uint64) {
	const batch = 100
	for i := first; i < first+count; i += batch {
		var msgs []*raftpb.Message
		for j := i; j < min(i+batch, first+count); j++ {
			msgs = append(msgs, msg(m.id, to, j))
		}
		m.tr.Send(msgs)
	}
}

// gatedBody serves body up to at, then waits until gate is closed (the
// receiver has read that much) before serving the rest: a transport that
// held the body back, whole or in part, would never get past at.
type gatedBody struct {
	body []byte
	off  int
	at   int
	gate <-chan struct{}
}

func (g *gatedBody) Read(p []byte) (int, error) {
	if g.off == len(g.body) {
		return 0, io.EOF
	}
	end := len(g.body)
	if g.off < g.at {
		end = g.at
	} else if g.gate != nil {
		select {
		case <-g.gate:
			g.gate = nil
		case <-time.After(waitTimeout):
			return 0, errors.New("the receiver never got the first part: the body is not streamed")
		}
	}
	n := copy(p, g.body[g.off:end])
	g.off += n
	return n, nil
}

func (g *gatedBody) Close() error { return nil }

func randomBody(size int) []byte {
	b := make([]byte, size)
	r := rand.New(rand.NewPCG(1, 2))
	for i := range b {
		b[i] = byte(r.Uint32())
	}
	return b
}

// errReader fails every read with err.
type errReader struct{ err error }

func (r errReader) Read([]byte) (int, error) { return 0, r.err }

// rawConn is a test's own end of a connection to a transport.
type rawConn struct {
	t *testing.T
	net.Conn
	fr *frameReader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	t.Helper()
	c, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	c.SetDeadline(time.Now().Add(waitTimeout))
	return &rawConn{t: t, Conn: c, fr: newFrameReader(c, maxHandshakeFrame)}
}

func (c *rawConn) write(b []byte) {
	c.t.Helper()
	if _, err := c.Write(b); err != nil {
		c.t.Fatal(err)
	}
}

func (c *rawConn) frame(kind frameKind, payload []byte) { c.write(frameBytes(kind, payload)) }

func (c *rawConn) send(m *raftpb.Message) {
	c.t.Helper()
	b, err := proto.Marshal(m)
	if err != nil {
		c.t.Fatal(err)
	}
	c.frame(kindMsg, b)
}

// hello makes a handshake and returns the reply.
func (c *rawConn) hello(h hello) reply {
	c.t.Helper()
	c.frame(kindHello, h.encode())
	kind, payload, err := c.fr.next()
	if err != nil || kind != kindReply {
		c.t.Fatalf("handshake: %s frame, %v", kind, err)
	}
	r, err := decodeReply(payload)
	if err != nil {
		c.t.Fatal(err)
	}
	return r
}

// waitClosed reads until the transport closes the connection.
func (c *rawConn) waitClosed() {
	c.t.Helper()
	_, err := io.Copy(io.Discard, c)
	var nerr net.Error
	if errors.As(err, &nerr) && nerr.Timeout() {
		c.t.Fatal("the transport did not close the connection")
	}
}

// discardHandler drops what it is handed.
type discardHandler struct{}

func (discardHandler) Deliver(*raftpb.Message)   {}
func (discardHandler) Unreachable(uint64)        {}
func (discardHandler) SnapshotSent(uint64, bool) {}
func (discardHandler) PeerGone(uint64)           {}
