package transport

import (
	"bytes"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func TestTCPExchangeInOrder(t *testing.T) {
	for _, n := range []int{2, 3} {
		t.Run(fmt.Sprintf("%d members", n), func(t *testing.T) {
			checkLeaks(t)
			ms := newEnsemble(t, n, nil)
			// Sent at once: what is queued while dialling goes out after
			// the handshake. 3000 fit in the default queue of 4096.
			const count = 3000
			var wg sync.WaitGroup
			for _, m := range ms {
				wg.Go(func() {
					for _, p := range ms {
						if p != m {
							sendRange(m, p.id, 0, count)
						}
					}
				})
			}
			for _, m := range ms {
				var senders []uint64
				for _, p := range ms {
					if p != m {
						senders = append(senders, p.id)
					}
				}
				expectInOrder(t, m, senders, 0, count)
			}
			wg.Wait()
			for _, m := range ms {
				if len(m.h.unreachablec) != 0 || len(m.h.msgc) != 0 {
					t.Fatalf("member %d: %d peers reported unreachable, %d extra messages", m.id, len(m.h.unreachablec), len(m.h.msgc))
				}
				// Quiet: above Debug, only the first connection to each peer.
				for _, l := range m.log.matching("") {
					if !strings.Contains(l, "level=DEBUG") && !strings.Contains(l, `msg="connected to peer"`) {
						t.Errorf("member %d logged above Debug: %s", m.id, l)
					}
				}
				if got := len(m.log.matching(`level=INFO msg="connected to peer"`)); got != n-1 {
					t.Errorf("member %d logged %d connections, want %d", m.id, got, n-1)
				}
			}
		})
	}
}

func TestTCPPeerRestart(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 2, nil)
	a, b := ms[0], ms[1]
	recv(t, a.upc, "member 1 connected")
	recv(t, b.upc, "member 2 connected")
	sendRange(a, 2, 0, 10)
	expectInOrder(t, b, []uint64{1}, 0, 10)

	addr := b.tr.Addr().String()
	if err := b.tr.Close(); err != nil {
		t.Fatal(err)
	}
	// Member 1 notices at once: its connection's reader sees the close.
	if p := recv(t, a.h.unreachablec, "member 2 reported unreachable"); p != 2 {
		t.Fatalf("unreachable %d, want 2", p)
	}
	a.log.wait(t, "level=WARN", `msg="lost connection to peer"`, "peer=2")
	// Its port now refuses connections: its process is gone.
	if p := recv(t, a.h.gonec, "member 2 reported gone"); p != 2 {
		t.Fatalf("gone %d, want 2", p)
	}

	// Member 2 comes back on the same address (a new process, in effect).
	b2 := startMember(t, 2, listen(t, addr), map[uint64]string{1: a.tr.Addr().String()}, nil)
	if p := recv(t, a.upc, "member 1 reconnected"); p != 2 {
		t.Fatalf("member 1 connected to %d, want 2", p)
	}
	recv(t, b2.upc, "the new member 2 connected")
	a.log.wait(t, "level=INFO", `msg="reconnected to peer"`, "peer=2", "down_for=")

	sendRange(a, 2, 100, 500)
	sendRange(b2, 1, 100, 500)
	expectInOrder(t, b2, []uint64{1}, 100, 500)
	expectInOrder(t, a, []uint64{2}, 100, 500)
	if n := len(a.log.matching(`msg="lost connection to peer"`)); n != 1 {
		t.Errorf("member 1 logged the loss %d times, want once:\n%s", n, a.log)
	}
}

// TestTCPLostSteadyConnectionRedialsAtOnce: when a connection that had
// lasted breaks, the member dials again at once, whatever its backoff (an
// hour here), so a peer whose process died is reported gone in a round
// trip: a fast election waits for that.
func TestTCPLostSteadyConnectionRedialsAtOnce(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 2, func(_ *member, cfg *TCPConfig) {
		cfg.MinBackoff, cfg.MaxBackoff, cfg.steady = time.Hour, time.Hour, time.Nanosecond
	})
	a, b := ms[0], ms[1]
	recv(t, a.upc, "member 1 connected")
	recv(t, b.upc, "member 2 connected")
	sendRange(a, 2, 0, 10)
	expectInOrder(t, b, []uint64{1}, 0, 10)
	if err := b.tr.Close(); err != nil {
		t.Fatal(err)
	}
	if p := recv(t, a.h.gonec, "member 2 reported gone"); p != 2 {
		t.Fatalf("gone %d, want 2", p)
	}
}

// TestTCPPeerResettingHandshakesIsGone: a port that takes connections
// and resets them before the handshake's reply is a process being killed
// (its listening socket not closed yet): the peer is reported gone, as
// when the port refuses.
func TestTCPPeerResettingHandshakesIsGone(t *testing.T) {
	checkLeaks(t)
	lnA := listen(t, "127.0.0.1:0")
	lnB := newHandOver(listen(t, "127.0.0.1:0"))
	t.Cleanup(lnB.stop)
	a := startMember(t, 1, lnA, map[uint64]string{2: lnB.Addr().String()}, nil)
	b := startMember(t, 2, lnB, map[uint64]string{1: lnA.Addr().String()}, nil)
	recv(t, a.upc, "member 1 connected")
	recv(t, b.upc, "member 2 connected")
	if err := b.tr.Close(); err != nil {
		t.Fatal(err)
	}
	// The port stays open: every connection is reset after its hello.
	go func() {
		for c := range lnB.conns {
			c.Read(make([]byte, 64))
			c.(*net.TCPConn).SetLinger(0)
			c.Close()
		}
	}()
	if p := recv(t, a.h.gonec, "member 2 reported gone"); p != 2 {
		t.Fatalf("gone %d, want 2", p)
	}
	a.log.wait(t, `msg="cannot reach peer"`, "connection reset by peer")
}

// handOver is a listener whose Close leaves the socket open: the
// connections it has not handed out go on arriving on conns.
type handOver struct {
	net.Listener
	conns  chan net.Conn
	closed chan struct{}
	once   sync.Once
	done   chan struct{}
}

func newHandOver(ln net.Listener) *handOver {
	h := &handOver{Listener: ln, conns: make(chan net.Conn), closed: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(h.done)
		defer close(h.conns)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			h.conns <- c
		}
	}()
	return h
}

func (h *handOver) Accept() (net.Conn, error) {
	select {
	case c, ok := <-h.conns:
		if ok {
			return c, nil
		}
	case <-h.closed:
	}
	return nil, net.ErrClosed
}

func (h *handOver) Close() error {
	h.once.Do(func() { close(h.closed) })
	return nil
}

// stop closes the socket and waits for the accepting goroutine.
func (h *handOver) stop() {
	h.Listener.Close()
	<-h.done
}

func TestTCPSteadyConnection(t *testing.T) {
	for _, tt := range []struct {
		min, max, want time.Duration
	}{
		{0, 0, time.Second},
		{time.Millisecond, 20 * time.Millisecond, 20 * time.Millisecond},
		{time.Hour, time.Hour, time.Second},
	} {
		cfg := TCPConfig{MinBackoff: tt.min, MaxBackoff: tt.max}.withDefaults()
		if got := (&TCP{cfg: cfg}).steadyAfter(); got != tt.want {
			t.Errorf("backoff %v..%v: a connection is steady after %v, want %v", tt.min, tt.max, got, tt.want)
		}
	}
}

func TestTCPFullQueueDrops(t *testing.T) {
	checkLeaks(t)
	dialling := make(chan struct{}, 1)
	m := startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.QueueLen = 8
		cfg.DialTimeout = time.Hour
		cfg.Dial = signallingDial(dialling)
	})
	// The sender is stuck dialling: nothing drains the queue.
	recv(t, dialling, "the first dial")

	done := make(chan struct{})
	go func() {
		defer close(done)
		var fill []*raftpb.Message
		for i := range uint64(8) {
			fill = append(fill, msg(1, 2, i))
		}
		m.tr.Send(fill)
		m.tr.Send([]*raftpb.Message{msg(1, 2, 8), msg(1, 2, 9), snapMsg(1, 2, 5)})
		m.tr.Send([]*raftpb.Message{msg(1, 3, 0), snapMsg(1, 3, 5)}) // not a peer
	}()
	recv(t, done, "Send to return with a full queue")

	// Send made its reports before returning: one Unreachable for the
	// call that overflowed, and the snapshots as not sent.
	if len(m.h.unreachablec) != 1 || <-m.h.unreachablec != 2 {
		t.Fatal("want exactly one Unreachable(2)")
	}
	if len(m.h.snapSentc) != 2 || <-m.h.snapSentc != (snapOutcome{2, false}) || <-m.h.snapSentc != (snapOutcome{3, false}) {
		t.Fatal("want SnapshotSent(2, false) then SnapshotSent(3, false)")
	}
	if err := m.tr.Close(); err != nil {
		t.Fatal(err)
	}
	m.tr.Send([]*raftpb.Message{msg(1, 2, 10), snapMsg(1, 2, 6)})
	if len(m.h.unreachablec)+len(m.h.snapSentc)+len(m.h.msgc) != 0 {
		t.Fatal("Send after Close reported something")
	}
}

func TestTCPDownPeerDropsQuietly(t *testing.T) {
	checkLeaks(t)
	var dials atomic.Int64
	manyDials := make(chan struct{})
	m := startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = func(ctx context.Context, network, addr string) (net.Conn, error) {
			// Dial 21 starts after failure 20 was logged.
			if dials.Add(1) == 21 {
				close(manyDials)
			}
			return nil, errors.New("connection refused (fake)")
		}
	})
	m.tr.Send([]*raftpb.Message{msg(1, 2, 0), snapMsg(1, 2, 5)})
	if p := recv(t, m.h.unreachablec, "Unreachable"); p != 2 {
		t.Fatalf("unreachable %d, want 2", p)
	}
	if o := recv(t, m.h.snapSentc, "SnapshotSent"); o != (snapOutcome{2, false}) {
		t.Fatalf("got %+v, want SnapshotSent(2, false)", o)
	}
	recv(t, manyDials, "21 dials")
	m.tr.Send([]*raftpb.Message{msg(1, 2, 1)})
	if err := m.tr.Close(); err != nil {
		t.Fatal(err)
	}
	// One failure burst: one report, one line above Debug.
	if n := len(m.h.unreachablec); n != 0 {
		t.Errorf("%d more Unreachable reports in the same burst", n)
	}
	if n := len(m.log.matching(`level=INFO msg="cannot reach peer"`, "peer=2", "connection refused (fake)")); n != 1 {
		t.Errorf("%d Info lines for the down peer, want 1:\n%s", n, m.log)
	}
	if n := len(m.log.matching(`msg="cannot reach peer"`)); n < 20 {
		t.Errorf("%d dial failures logged (at Debug), want at least 20", n)
	}
}

func TestJitter(t *testing.T) {
	for _, d := range []time.Duration{time.Millisecond, 50 * time.Millisecond, 2 * time.Second} {
		for range 1000 {
			if j := jitter(d); j < d/2 || j > d {
				t.Fatalf("jitter(%v) = %v, outside [%v, %v]", d, j, d/2, d)
			}
		}
	}
}

func TestTCPSnapshotStreaming(t *testing.T) {
	body := randomBody(5<<20 + 123)
	for _, chunk := range []int{DefaultSnapshotChunk, 64 << 10} {
		t.Run(fmt.Sprintf("chunk %d", chunk), func(t *testing.T) {
			checkLeaks(t)
			// The gate opens once the receiver has read the first two
			// chunks.
			gateAt := 2 * chunk
			gateRead := make(chan struct{})
			var mu sync.Mutex
			stored := make(map[uint64][]byte)
			storedAtDeliver := make(chan []byte, 1)
			ms := newEnsemble(t, 2, func(m *member, cfg *TCPConfig) {
				cfg.SnapshotChunk = chunk
				switch m.id {
				case 1:
					m.snaps.open = func(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error) {
						return &gatedBody{body: body, at: gateAt, gate: gateRead}, nil
					}
				case 2:
					m.snaps.receive = func(meta *raftpb.SnapshotMetadata, r io.Reader) error {
						var got bytes.Buffer
						buf := make([]byte, 32<<10)
						var once sync.Once
						for {
							n, err := r.Read(buf)
							got.Write(buf[:n])
							if got.Len() >= gateAt {
								once.Do(func() { close(gateRead) })
							}
							if err == io.EOF {
								break
							}
							if err != nil {
								return err
							}
						}
						mu.Lock()
						stored[meta.GetIndex()] = got.Bytes()
						mu.Unlock()
						return nil
					}
					m.h.onDeliver = func(msg *raftpb.Message) {
						if msg.GetType() == raftpb.MessageType_MsgSnap {
							mu.Lock()
							storedAtDeliver <- stored[msg.GetSnapshot().GetMetadata().GetIndex()]
							mu.Unlock()
						}
					}
				}
			})
			a, b := ms[0], ms[1]
			a.tr.Send([]*raftpb.Message{msg(1, 2, 0), snapMsg(1, 2, 77), msg(1, 2, 1)})

			if got := recv(t, b.h.msgc, "the message before the snapshot"); got.GetIndex() != 0 {
				t.Fatalf("first message %v", got)
			}
			got := recv(t, b.h.msgc, "the MsgSnap")
			if got.GetType() != raftpb.MessageType_MsgSnap || got.GetSnapshot().GetMetadata().GetIndex() != 77 {
				t.Fatalf("second message %v, want the MsgSnap of index 77", got)
			}
			if atDeliver := recv(t, storedAtDeliver, "the check at Deliver"); !bytes.Equal(atDeliver, body) {
				t.Fatalf("at Deliver, the store held %d bytes, want the %d of the body", len(atDeliver), len(body))
			}
			if got := recv(t, b.h.msgc, "the message after the snapshot"); got.GetIndex() != 1 {
				t.Fatalf("third message %v", got)
			}
			if o := recv(t, a.h.snapSentc, "SnapshotSent"); o != (snapOutcome{2, true}) {
				t.Fatalf("got %+v, want SnapshotSent(2, true)", o)
			}
			b.log.wait(t, `msg="received a snapshot from peer"`, "index=77", fmt.Sprintf("bytes=%d", len(body)))
			a.log.wait(t, `msg="peer stored the snapshot sent to it"`, "peer=2", "index=77")
		})
	}
}

func TestTCPSnapshotFailures(t *testing.T) {
	body := randomBody(3 << 20)
	readSome := func(r io.Reader) error {
		_, err := io.ReadFull(r, make([]byte, 1<<20))
		return err
	}
	tests := []struct {
		name    string
		open    func(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error)
		receive func(meta *raftpb.SnapshotMetadata, r io.Reader) error
		// breaks: the sender closes its connection (and redials).
		breaks       bool
		senderLog    string
		receiverLog  string
		receiveError error // what Receive must have met, if it ran
	}{
		{
			name: "Receive fails",
			receive: func(meta *raftpb.SnapshotMetadata, r io.Reader) error {
				if err := readSome(r); err != nil {
					return err
				}
				return errors.New("disk full (fake)")
			},
			senderLog:   "disk full (fake)",
			receiverLog: `msg="could not receive a snapshot from peer"`,
		},
		{
			name: "Receive returns nil before the end of the body",
			receive: func(meta *raftpb.SnapshotMetadata, r io.Reader) error {
				return readSome(r)
			},
			senderLog:   "returned before the end of the body",
			receiverLog: "returned before the end of the body",
		},
		{
			name: "Open fails",
			open: func(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error) {
				return nil, errors.New("no such snapshot (fake)")
			},
			senderLog: `msg="cannot open the snapshot to send to peer"`,
		},
		{
			name: "the body cannot be read to the end",
			open: func(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error) {
				r := io.MultiReader(bytes.NewReader(body), errReader{errors.New("bad sector (fake)")})
				return io.NopCloser(r), nil
			},
			breaks:       true,
			senderLog:    "bad sector (fake)",
			receiverLog:  `msg="snapshot from peer cut short: the connection ended"`,
			receiveError: errSnapCut,
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			receiveErr := make(chan error, 1)
			ms := newEnsemble(t, 2, func(m *member, cfg *TCPConfig) {
				cfg.SnapshotChunk = 256 << 10
				switch m.id {
				case 1:
					m.snaps.open = tt.open
					if tt.open == nil {
						m.snaps.open = func(*raftpb.SnapshotMetadata) (io.ReadCloser, error) {
							return io.NopCloser(bytes.NewReader(body)), nil
						}
					}
				case 2:
					m.snaps.receive = func(meta *raftpb.SnapshotMetadata, r io.Reader) error {
						var err error
						if tt.receive != nil {
							err = tt.receive(meta, r)
						} else {
							_, err = io.Copy(io.Discard, r)
						}
						receiveErr <- err
						return err
					}
				}
			})
			a, b := ms[0], ms[1]
			recv(t, a.upc, "member 1 connected")
			a.tr.Send([]*raftpb.Message{snapMsg(1, 2, 77)})
			if o := recv(t, a.h.snapSentc, "SnapshotSent"); o != (snapOutcome{2, false}) {
				t.Fatalf("got %+v, want SnapshotSent(2, false)", o)
			}
			a.log.wait(t, tt.senderLog)
			if tt.receiverLog != "" {
				b.log.wait(t, tt.receiverLog, "index=77")
			}
			if tt.receiveError != nil {
				if err := recv(t, receiveErr, "Receive's outcome"); !errors.Is(err, tt.receiveError) {
					t.Fatalf("Receive met %v, want %v", err, tt.receiveError)
				}
			}
			if tt.breaks {
				recv(t, a.upc, "member 1 reconnected")
			}
			// The link still works, and the MsgSnap was never delivered.
			a.tr.Send([]*raftpb.Message{msg(1, 2, 5)})
			if got := recv(t, b.h.msgc, "the message after the snapshot"); got.GetType() != raftpb.MessageType_MsgApp || got.GetIndex() != 5 {
				t.Fatalf("member 2 got %v, want the MsgApp of index 5", got)
			}
		})
	}
}

func TestTCPHandshakeRefused(t *testing.T) {
	tests := []struct {
		name   string
		id     uint64 // the dialer's
		ens    string
		as     uint64 // the id the dialer gives the acceptor (member 2)
		reason string
	}{
		{"wrong ensemble", 1, "another-ensemble", 2,
			`peer from another ensemble (or with different server lines): its ensemble is \"another-ensemble\", this member's is \"test-ensemble\"`},
		{"wrong receiver id", 1, testEnsemble, 3, "peer thinks it is talking to member 3 but this is member 2"},
		{"unknown sender", 7, testEnsemble, 2, "unknown member id 7: not a member of this ensemble (removed, or not yet added; check the server lines)"},
		{"dynamic meets static", 1, DynamicEnsemble, 2,
			"peer's membership is dynamic (reconfigEnabled=true) but this member's is static (reconfigEnabled=false): reconfigEnabled must be the same on every member"},
		{"duplicate id", 2, testEnsemble, 3, "duplicate myid: a peer claims to be member 2, which is this member's id"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
				cfg.Dial = blockingDial // it only accepts
			})
			dialer := startMember(t, tt.id, listen(t, "127.0.0.1:0"), map[uint64]string{tt.as: acc.tr.Addr().String()}, func(_ *member, cfg *TCPConfig) {
				cfg.Ensemble = tt.ens
			})
			line := acc.log.wait(t, "level=WARN", `msg="refused a peer connection"`, tt.reason)
			if !strings.Contains(line, "remote=127.0.0.1:") {
				t.Errorf("the refusal does not name the remote address: %s", line)
			}
			dialer.log.wait(t, "level=WARN", `msg="peer refused the connection"`, fmt.Sprintf("peer=%d", tt.as), tt.reason)

			dialer.tr.Send([]*raftpb.Message{msg(tt.id, tt.as, 0)})
			if p := recv(t, dialer.h.unreachablec, "Unreachable"); p != tt.as {
				t.Fatalf("unreachable %d, want %d", p, tt.as)
			}
			if err := dialer.tr.Close(); err != nil {
				t.Fatal(err)
			}
			if n := len(acc.h.msgc); n != 0 {
				t.Fatalf("the acceptor delivered %d messages", n)
			}
			if n := len(dialer.log.matching("level=WARN", `msg="peer refused the connection"`)); n != 1 {
				t.Errorf("the dialer logged %d refusals at Warn, want 1:\n%s", n, dialer.log)
			}
		})
	}
}

func TestTCPHandshakeVersion(t *testing.T) {
	checkLeaks(t)
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial
	})
	c := dialRaw(t, acc.tr.Addr().String())
	r := c.hello(hello{version: 2, from: 1, to: 2, ensemble: testEnsemble})
	want := "peer speaks version 2 of the peer protocol; this member speaks version 1"
	if r.accepted || r.reason != want {
		t.Fatalf("reply %+v, want refused: %s", r, want)
	}
	c.waitClosed()
	acc.log.wait(t, `msg="refused a peer connection"`, want)
}

func TestTCPGarbageBeforeHandshake(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 2, nil)
	a, b := ms[0], ms[1]
	random := randomBody(512)
	tests := []struct {
		name  string
		bytes []byte
		want  string
	}{
		{"random bytes", random, `msg="closing a connection that breaks the Warden peer protocol"`},
		{"an HTTP request", []byte("GET / HTTP/1.1\r\nHost: warden\r\n\r\n"), "exceeds the limit of 65536 bytes"},
		{"the largest length", []byte{0xff, 0xff, 0xff, 0xff, 1}, "frame of 4294967295 bytes exceeds the limit of 65536 bytes"},
		{"length 0", []byte{0, 0, 0, 0}, "frame of length 0"},
		{"a message first", frameBytes(kindMsg, []byte{8, 3}), "the first frame is a message frame, not a hello"},
		{"another magic", frameBytes(kindHello, append([]byte("WRDNPEEX"), make([]byte, 18)...)), `hello without the magic \"WRDNPEER\": not a Warden peer`},
		{"a short hello", frameBytes(kindHello, []byte("WRDNPEER\x00")), "hello of 9 bytes is shorter than 26"},
		{"a cut frame", []byte{0, 0, 0, 100, 1, 'W'}, "closed in the middle of a frame"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, b.tr.Addr().String())
			c.write(tt.bytes)
			c.Conn.(*net.TCPConn).CloseWrite()
			c.waitClosed()
			b.log.wait(t, "remote="+c.LocalAddr().String(), tt.want)
		})
	}
	if len(b.log.matching("level=WARN", "breaks the Warden peer protocol")) == 0 {
		t.Errorf("no garbage logged at Warn:\n%s", b.log)
	}
	// The members still talk.
	sendRange(a, 2, 0, 100)
	sendRange(b, 1, 0, 100)
	expectInOrder(t, b, []uint64{1}, 0, 100)
	expectInOrder(t, a, []uint64{2}, 0, 100)
}

func TestTCPBadFramesAfterHandshake(t *testing.T) {
	checkLeaks(t)
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9", 3: "127.0.0.1:9"}, func(m *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial
		m.snaps.receive = func(meta *raftpb.SnapshotMetadata, r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			return err
		}
	})
	encoded := func(m *raftpb.Message) []byte {
		b, _ := proto.Marshal(m)
		return b
	}
	tests := []struct {
		name   string
		frames func(c *rawConn)
		want   string
		closes bool // the transport closes the connection
	}{
		{"a message from another member", func(c *rawConn) { c.send(msg(3, 2, 0)) },
			"a message from 3 on the connection of 1", false},
		{"a message to another member", func(c *rawConn) { c.send(msg(1, 5, 0)) },
			"a message to 5 reached 2", false},
		{"an undecodable message", func(c *rawConn) { c.frame(kindMsg, []byte{0xff}) },
			"undecodable raft message", true},
		{"a frame over 64 MiB", func(c *rawConn) { c.write([]byte{0x04, 0, 0, 1, byte(kindMsg)}) },
			"frame of 67108865 bytes exceeds the limit of 67108864 bytes", true},
		{"a chunk outside a snapshot", func(c *rawConn) { c.frame(kindChunk, []byte("x")) },
			"a snapshot chunk outside a snapshot", true},
		{"an end outside a snapshot", func(c *rawConn) { c.frame(kindSnapEnd, nil) },
			"a snapshot end outside a snapshot", true},
		{"a second hello", func(c *rawConn) {
			c.frame(kindHello, hello{version: 1, from: 1, to: 2, ensemble: testEnsemble}.encode())
		},
			"a hello frame from a dialer", true},
		{"an unknown kind", func(c *rawConn) { c.frame(frameKind(9), nil) },
			"a kind 9 frame from a dialer", true},
		{"a message inside a snapshot", func(c *rawConn) {
			c.frame(kindMsg, encoded(snapMsg(1, 2, 3)))
			c.frame(kindChunk, []byte("body"))
			c.send(msg(1, 2, 0))
		}, "a message inside the body of snapshot 3", true},
		{"a snapshot from another member", func(c *rawConn) {
			c.frame(kindMsg, encoded(snapMsg(3, 2, 4)))
			c.frame(kindChunk, []byte("body"))
			c.frame(kindSnapEnd, nil)
			kind, payload, err := c.fr.next()
			if err != nil || kind != kindSnapAck {
				c.t.Fatalf("want a snapshot ack, got %s, %v", kind, err)
			}
			if a, err := decodeSnapAck(payload); err != nil || a.stored || a.index != 4 {
				c.t.Fatalf("ack %+v, %v; want snapshot 4 not stored", a, err)
			}
		}, "a message from 3 on the connection of 1", false},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, acc.tr.Addr().String())
			if r := c.hello(hello{version: 1, from: 1, to: 2, ensemble: testEnsemble}); !r.accepted {
				t.Fatalf("refused: %s", r.reason)
			}
			tt.frames(c)
			acc.log.wait(t, "level=", tt.want)
			if tt.closes {
				c.waitClosed()
				return
			}
			// The connection goes on.
			c.send(msg(1, 2, uint64(100+i)))
			if got := recv(t, acc.h.msgc, "the next message"); got.GetIndex() != uint64(100+i) {
				t.Fatalf("delivered %v, want the message of index %d", got, 100+i)
			}
		})
	}
	if n := len(acc.h.msgc); n != 0 {
		t.Fatalf("%d messages delivered that should not have been", n)
	}
}

// TestTCPForwardedProposalFromAnotherMember: raft passes a proposal on
// with its proposer as From, so a MsgProp may arrive on another member's
// connection, and is delivered.
func TestTCPForwardedProposalFromAnotherMember(t *testing.T) {
	checkLeaks(t)
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9", 3: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial
	})
	c := dialRaw(t, acc.tr.Addr().String())
	if r := c.hello(hello{version: 1, from: 1, to: 2, ensemble: testEnsemble}); !r.accepted {
		t.Fatalf("refused: %s", r.reason)
	}
	prop := msg(3, 2, 7)
	prop.Type = raftpb.MessageType_MsgProp.Enum()
	c.send(prop)
	if got := recv(t, acc.h.msgc, "the forwarded proposal"); got.GetType() != raftpb.MessageType_MsgProp || got.GetFrom() != 3 {
		t.Fatalf("delivered %v, want the MsgProp from 3", got)
	}
}

func TestTCPNewConnectionReplacesOld(t *testing.T) {
	checkLeaks(t)
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial
	})
	h := hello{version: 1, from: 1, to: 2, ensemble: testEnsemble}
	old := dialRaw(t, acc.tr.Addr().String())
	old.hello(h)
	c := dialRaw(t, acc.tr.Addr().String())
	c.hello(h)
	old.waitClosed()
	acc.log.wait(t, `msg="a new connection from peer replaces its previous one"`, "peer=1")
	c.send(msg(1, 2, 1))
	if got := recv(t, acc.h.msgc, "a message on the new connection"); got.GetIndex() != 1 {
		t.Fatalf("got %v", got)
	}
}

func TestTCPConfigValidate(t *testing.T) {
	ln := listen(t, "127.0.0.1:0")
	defer ln.Close()
	good := func() TCPConfig {
		return TCPConfig{Ensemble: "e", ID: 1, Listen: "127.0.0.1:0", Peers: map[uint64]string{2: "h2:2888"}, Snapshots: &fakeSnaps{}}
	}
	tests := []struct {
		name   string
		change func(*TCPConfig)
		want   string // "" when valid
	}{
		{"good", func(*TCPConfig) {}, ""},
		{"listener instead of address", func(c *TCPConfig) { c.Listen, c.Listener = "", ln }, ""},
		{"no peers (an ensemble of one)", func(c *TCPConfig) { c.Peers = nil }, ""},
		{"only a max backoff below the default min", func(c *TCPConfig) { c.MaxBackoff = 10 * time.Millisecond }, ""},
		{"id 0", func(c *TCPConfig) { c.ID = 0 }, "ID is 0"},
		{"no ensemble", func(c *TCPConfig) { c.Ensemble = "" }, "Ensemble is empty"},
		{"long ensemble", func(c *TCPConfig) { c.Ensemble = strings.Repeat("e", 1025) }, "1025 bytes long"},
		{"nowhere to listen", func(c *TCPConfig) { c.Listen = "" }, "neither Listen nor Listener"},
		{"no snapshots", func(c *TCPConfig) { c.Snapshots = nil }, "Snapshots is not set"},
		{"self in peers", func(c *TCPConfig) { c.Peers[1] = "h1:2888" }, "own ID 1"},
		{"peer 0", func(c *TCPConfig) { c.Peers[0] = "h0:2888" }, "id 0"},
		{"bad peer address", func(c *TCPConfig) { c.Peers[2] = "h2" }, `address "h2" of peer 2 is not host:port`},
		{"negative queue", func(c *TCPConfig) { c.QueueLen = -1 }, "QueueLen -1"},
		{"negative timeout", func(c *TCPConfig) { c.WriteTimeout = -time.Second }, "negative"},
		{"backoffs crossed", func(c *TCPConfig) { c.MinBackoff, c.MaxBackoff = time.Second, time.Millisecond }, "at most MaxBackoff"},
		{"huge chunk", func(c *TCPConfig) { c.SnapshotChunk = maxFrame }, "SnapshotChunk"},
		{"TLS", func(c *TCPConfig) {
			c.ServerTLS = &tls.Config{Certificates: []tls.Certificate{{}}}
			c.DialTLS = func(uint64, string) *tls.Config { return nil }
		}, ""},
		{"TLS with a certificate callback", func(c *TCPConfig) {
			c.ServerTLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) { return nil, nil }}
			c.PortUnification = true
		}, ""},
		{"port unification without TLS", func(c *TCPConfig) { c.PortUnification = true }, "PortUnification is set without ServerTLS"},
		{"TLS without a certificate", func(c *TCPConfig) { c.ServerTLS = &tls.Config{} }, "ServerTLS has no certificate"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := good()
			tt.change(&c)
			err := c.Validate()
			if tt.want == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if !errors.Is(err, ErrInvalidConfig) || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("got %v, want an ErrInvalidConfig containing %q", err, tt.want)
			}
		})
	}
}

func TestTCPStartAndClose(t *testing.T) {
	checkLeaks(t)
	tr, err := NewTCP(TCPConfig{Ensemble: "e", ID: 1, Listen: "127.0.0.1:0", Snapshots: &fakeSnaps{}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(nil); err == nil {
		t.Fatal("Start(nil) succeeded")
	}
	if err := tr.Start(newRecorder()); err != nil {
		t.Fatal(err)
	}
	if err := tr.Start(newRecorder()); err == nil {
		t.Fatal("a second Start succeeded")
	}
	if err := tr.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tr.Close(); err != nil {
		t.Fatalf("a second Close: %v", err)
	}
	if err := tr.Start(newRecorder()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Start after Close: %v, want ErrClosed", err)
	}
	// A Listener given to a config that fails is closed too.
	ln := listen(t, "127.0.0.1:0")
	if _, err := NewTCP(TCPConfig{Listener: ln}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("got %v, want ErrInvalidConfig", err)
	}
	if _, err := ln.Accept(); !errors.Is(err, net.ErrClosed) {
		t.Fatalf("the listener is still open: %v", err)
	}
}

// FuzzServeConn plays arbitrary bytes to the accepting side of a
// transport, as a dialer would send them: nothing may panic or hang, and
// the connection's goroutines must end when the bytes do.
func FuzzServeConn(f *testing.F) {
	for _, seed := range plaintextSeeds() {
		f.Add(seed)
	}
	fuzzServe(f, nil)
}

// plaintextSeeds are byte streams a plaintext dialer could send, good and
// bad.
func plaintextSeeds() [][]byte {
	helloFrame := frameBytes(kindHello, hello{version: 1, from: 1, to: 2, ensemble: testEnsemble}.encode())
	frames := func(parts ...[]byte) []byte { return slices.Concat(append([][]byte{helloFrame}, parts...)...) }
	enc := func(m *raftpb.Message) []byte {
		b, _ := proto.Marshal(m)
		return frameBytes(kindMsg, b)
	}
	return [][]byte{
		frames(enc(msg(1, 2, 0)), enc(msg(1, 2, 1))),
		frames(enc(snapMsg(1, 2, 3)), frameBytes(kindChunk, []byte("body")), frameBytes(kindSnapEnd, nil), enc(msg(1, 2, 4))),
		frames(enc(snapMsg(1, 2, 3)), frameBytes(kindChunk, []byte("body"))),
		frames(enc(msg(3, 2, 0)), frameBytes(kindMsg, []byte{0xff})),
		frames([]byte{0xff, 0xff, 0xff, 0xff}),
		frameBytes(kindHello, hello{version: 1, from: 2, to: 2, ensemble: testEnsemble}.encode()),
		[]byte("GET / HTTP/1.1\r\n\r\n"),
	}
}

// fuzzServe runs the fuzz target of FuzzServeConn against member 2 of an
// ensemble of two, whose configuration tweak, if not nil, adjusts.
func fuzzServe(f *testing.F, tweak func(*TCPConfig)) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		f.Fatal(err)
	}
	cfg := TCPConfig{
		Ensemble: testEnsemble, ID: 2, Listener: ln, Peers: map[uint64]string{1: "127.0.0.1:9"},
		Snapshots: &fakeSnaps{receive: func(_ *raftpb.SnapshotMetadata, r io.Reader) error {
			_, err := io.Copy(io.Discard, r)
			return err
		}},
		Logger:           slog.New(slog.NewTextHandler(io.Discard, nil)),
		HandshakeTimeout: waitTimeout,
		Dial:             blockingDial,
	}
	if tweak != nil {
		tweak(&cfg)
	}
	tr, err := NewTCP(cfg)
	if err != nil {
		f.Fatal(err)
	}
	if err := tr.Start(discardHandler{}); err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { tr.Close() })

	f.Fuzz(func(t *testing.T, data []byte) {
		client, server := net.Pipe()
		if !tr.track(server) {
			t.Fatal("transport closed")
		}
		done := make(chan struct{})
		tr.wg.Add(1)
		go func() {
			tr.serve(server)
			close(done)
		}()
		go func() {
			// Written in pieces, as a network would cut them.
			for len(data) > 0 {
				n := min(len(data), 1+len(data)/3)
				if _, err := client.Write(data[:n]); err != nil {
					break
				}
				data = data[n:]
			}
			client.Close()
		}()
		io.Copy(io.Discard, client)
		select {
		case <-done:
		case <-time.After(waitTimeout):
			t.Fatal("serve did not return after the connection closed")
		}
	})
}

// TestTCPPeerConnectingEndsBackoff: a member waiting out a long backoff
// towards a peer dials again as soon as that peer connects to it (the peer
// is up), instead of staying unreachable for the rest of the wait.
func TestTCPPeerConnectingEndsBackoff(t *testing.T) {
	checkLeaks(t)
	lnB := listen(t, "127.0.0.1:0")
	addrB := lnB.Addr().String()
	lnB.Close() // B is not up yet: A's first dial is refused
	lnA := listen(t, "127.0.0.1:0")
	a := startMember(t, 1, lnA, map[uint64]string{2: addrB}, func(_ *member, cfg *TCPConfig) {
		cfg.MinBackoff, cfg.MaxBackoff = time.Hour, time.Hour
	})
	a.log.wait(t, `msg="cannot reach peer"`, "peer=2")
	b := startMember(t, 2, listen(t, addrB), map[uint64]string{1: lnA.Addr().String()}, nil)
	recv(t, b.upc, "member 2 connected to member 1")
	if p := recv(t, a.upc, "member 1 connected to member 2 within its hour of backoff"); p != 2 {
		t.Fatalf("member 1 connected to %d, want 2", p)
	}
}
