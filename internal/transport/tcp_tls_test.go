package transport

import (
	"bytes"
	"cmp"
	"crypto/tls"
	"fmt"
	"io"
	"net"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// The log lines of TLS handshakes that fail.
const (
	tlsAcceptFailed = `msg="TLS handshake of a connection to the quorum port failed; closing it"`
	tlsDialFailed   = `msg="TLS handshake with peer failed"`
	plainRefused    = `msg="refused a peer connection"`
	plainDialRefusd = `msg="peer refused the connection"`
)

// memberTLS returns a tweak for startMember and newEnsemble that gives
// every member a certificate of ca for both ends (sslQuorum=true).
func memberTLS(t *testing.T, ca *testCA) func(*member, *TCPConfig) {
	return func(m *member, cfg *TCPConfig) {
		q := quorumTLS{cert: ca.issue(t, certSpec{name: fmt.Sprintf("server.%d", m.id)}), trust: ca.pool}
		cfg.ServerTLS, cfg.DialTLS = q.server(), q.dial()
	}
}

func TestTCPTLSExchange(t *testing.T) {
	ca := newTestCA(t, "quorum CA")
	body := randomBody(1<<20 + 77)
	for _, tt := range []struct {
		n          int
		maxVersion uint16
	}{{2, 0}, {3, 0}, {2, tls.VersionTLS12}} {
		n := tt.n
		t.Run(fmt.Sprintf("%d members, %s", n, tls.VersionName(cmp.Or(tt.maxVersion, tls.VersionTLS13))), func(t *testing.T) {
			checkLeaks(t)
			storedc := make(chan []byte, 1)
			ms := newEnsemble(t, n, func(m *member, cfg *TCPConfig) {
				q := quorumTLS{cert: ca.issue(t, certSpec{name: fmt.Sprintf("server.%d", m.id)}), trust: ca.pool, maxVersion: tt.maxVersion}
				cfg.ServerTLS, cfg.DialTLS = q.server(), q.dial()
				cfg.SnapshotChunk = 64 << 10
				m.snaps.open = func(*raftpb.SnapshotMetadata) (io.ReadCloser, error) {
					return io.NopCloser(bytes.NewReader(body)), nil
				}
				m.snaps.receive = func(_ *raftpb.SnapshotMetadata, r io.Reader) error {
					b, err := io.ReadAll(r)
					if err == nil {
						storedc <- b
					}
					return err
				}
			})
			const count = 500
			for _, m := range ms {
				for _, p := range ms {
					if p != m {
						sendRange(m, p.id, 0, count)
					}
				}
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

			// A snapshot from the last member to the first, between two
			// messages.
			last, first := ms[n-1], ms[0]
			last.tr.Send([]*raftpb.Message{snapMsg(last.id, 1, 77), msg(last.id, 1, count)})
			if got := recv(t, first.h.msgc, "the MsgSnap"); got.GetType() != raftpb.MessageType_MsgSnap || got.GetSnapshot().GetMetadata().GetIndex() != 77 {
				t.Fatalf("got %v, want the MsgSnap of index 77", got)
			}
			if got := recv(t, storedc, "the stored body"); !bytes.Equal(got, body) {
				t.Fatalf("stored %d bytes, want the %d of the body", len(got), len(body))
			}
			if got := recv(t, first.h.msgc, "the message after the snapshot"); got.GetIndex() != count {
				t.Fatalf("got %v, want the message of index %d", got, count)
			}
			if o := recv(t, last.h.snapSentc, "SnapshotSent"); o != (snapOutcome{1, true}) {
				t.Fatalf("got %+v, want SnapshotSent(1, true)", o)
			}

			// Every connection was TLS.
			for _, m := range ms {
				if got := len(m.log.matching(`msg="connected to peer"`, "tls=true")); got != n-1 {
					t.Errorf("member %d made %d TLS connections, want %d:\n%s", m.id, got, n-1, m.log)
				}
				if got := m.log.matching("tls=false"); len(got) != 0 {
					t.Errorf("member %d has plaintext connections: %s", m.id, got)
				}
			}
		})
	}
}

// TestTCPTLSRefused: a handshake that fails for TLS reasons is refused by
// both sides with one Warn line each, saying why and what to check, and
// the dialer backs off and retries; nothing is delivered.
func TestTCPTLSRefused(t *testing.T) {
	ca, other := newTestCA(t, "quorum CA"), newTestCA(t, "another CA")
	good := func(name string) quorumTLS {
		return quorumTLS{cert: ca.issue(t, certSpec{name: name}), trust: ca.pool}
	}
	fromOther := quorumTLS{cert: other.issue(t, certSpec{name: "rogue"}), trust: ca.pool}
	insistOther := fromOther
	insistOther.insist = true
	expired := quorumTLS{cert: ca.issue(t, certSpec{name: "old", expired: true}), trust: ca.pool}
	none := quorumTLS{trust: ca.pool}
	none12 := quorumTLS{trust: ca.pool, maxVersion: tls.VersionTLS12}
	elsewhere := quorumTLS{cert: ca.issue(t, certSpec{name: "elsewhere", hosts: []string{"warden-9.example"}}), trust: ca.pool}

	type side struct {
		q      *quorumTLS // nil: plaintext
		msg    string     // the Warn line's msg
		reason string     // in it
	}
	tests := []struct {
		name             string
		acceptor, dialer side
	}{
		{"the dialer's certificate is from another CA",
			// crypto/tls presents no certificate that the acceptor's CAs
			// did not sign.
			side{&quorumTLS{}, tlsAcceptFailed, "peer presented no certificate, or none signed by a CA in this member's ssl.quorum.trustStore"},
			side{&fromOther, tlsDialFailed, "peer requires a certificate signed by a CA it trusts, and this member's is not, so none was sent"}},
		{"the dialer presents a certificate from another CA",
			side{&quorumTLS{}, tlsAcceptFailed, "peer's certificate is not signed by a CA in this member's quorum trust store: check ssl.quorum.keyStore on the peer and ssl.quorum.trustStore here"},
			side{&insistOther, tlsDialFailed, "peer does not trust this member's certificate: its CA is not in the peer's ssl.quorum.trustStore"}},
		{"the dialer's certificate has expired",
			side{&quorumTLS{}, tlsAcceptFailed, "peer's certificate has expired or is not valid yet: renew ssl.quorum.keyStore on the peer"},
			side{&expired, tlsDialFailed, "peer says this member's certificate has expired or is not valid yet: renew ssl.quorum.keyStore here"}},
		{"the dialer has no certificate",
			side{&quorumTLS{}, tlsAcceptFailed, "peer presented no certificate, or none signed by a CA in this member's ssl.quorum.trustStore: sslQuorum needs ssl.quorum.keyStore on every member"},
			side{&none, tlsDialFailed, "peer requires a certificate and this member presented none (tls: certificate required): sslQuorum needs ssl.quorum.keyStore on every member"}},
		{"the dialer has no certificate, TLS 1.2",
			side{&quorumTLS{}, tlsAcceptFailed, "peer presented no certificate, or none signed by a CA in this member's ssl.quorum.trustStore: sslQuorum needs ssl.quorum.keyStore on every member"},
			side{&none12, tlsDialFailed, "peer requires a certificate and this member presented none (tls: handshake failure): sslQuorum needs ssl.quorum.keyStore on every member"}},
		{"the acceptor's certificate is from another CA",
			side{&fromOther, tlsAcceptFailed, "peer refused this member's certificate (tls: bad certificate)"},
			side{&quorumTLS{}, tlsDialFailed, "peer's certificate is not signed by a CA in this member's quorum trust store"}},
		{"the acceptor's certificate has expired",
			side{&expired, tlsAcceptFailed, "peer refused this member's certificate (tls: bad certificate)"},
			side{&quorumTLS{}, tlsDialFailed, "peer's certificate has expired or is not valid yet: renew ssl.quorum.keyStore on the peer"}},
		{"the acceptor has no certificate",
			side{&none, tlsAcceptFailed, "this member has no certificate to present: check ssl.quorum.keyStore here"},
			side{&quorumTLS{}, tlsDialFailed, "peer has no certificate to present (tls: unrecognized name): check ssl.quorum.keyStore on the peer"}},
		{"the acceptor's certificate names another host",
			side{&elsewhere, tlsAcceptFailed, "peer refused this member's certificate (tls: bad certificate)"},
			side{&quorumTLS{}, tlsDialFailed, "peer's certificate does not name the host 127.0.0.1: its ssl.quorum.keyStore must match the host of its server line"}},
		{"a plaintext dialer to a TLS-only port",
			side{&quorumTLS{}, plainRefused, reasonPlainOnTLS},
			side{nil, plainDialRefusd, reasonPlainOnTLS}},
		{"a TLS dialer to a plaintext port",
			side{nil, tlsAcceptFailed, reasonTLSOnPlain},
			side{&quorumTLS{}, tlsDialFailed, "peer closed the connection during the TLS handshake: its quorum port may accept only plaintext"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			// A zero quorumTLS stands for a good one.
			for s, name := range map[*side]string{&tt.acceptor: "server.2", &tt.dialer: "server.1"} {
				if s.q != nil && s.q.trust == nil {
					q := good(name)
					s.q = &q
				}
			}
			acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
				cfg.Dial = blockingDial // it only accepts
				if q := tt.acceptor.q; q != nil {
					cfg.ServerTLS = q.server()
				}
			})
			dialer := startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: acc.tr.Addr().String()}, func(_ *member, cfg *TCPConfig) {
				if q := tt.dialer.q; q != nil {
					cfg.DialTLS = q.dial()
				}
			})
			line := acc.log.wait(t, "level=WARN", tt.acceptor.msg, tt.acceptor.reason)
			if !strings.Contains(line, "remote=127.0.0.1:") {
				t.Errorf("the acceptor's line does not name the remote address: %s", line)
			}
			dialer.log.wait(t, "level=WARN", tt.dialer.msg, "peer=2", tt.dialer.reason)
			// The dialer retries, and neither side logs it at Warn again.
			acc.log.wait(t, "level=DEBUG", tt.acceptor.msg, tt.acceptor.reason)
			dialer.log.wait(t, "level=DEBUG", tt.dialer.msg, tt.dialer.reason)

			dialer.tr.Send([]*raftpb.Message{msg(1, 2, 0)})
			if p := recv(t, dialer.h.unreachablec, "Unreachable"); p != 2 {
				t.Fatalf("unreachable %d, want 2", p)
			}
			if err := dialer.tr.Close(); err != nil {
				t.Fatal(err)
			}
			if err := acc.tr.Close(); err != nil {
				t.Fatal(err)
			}
			if n := len(acc.h.msgc); n != 0 {
				t.Fatalf("the acceptor delivered %d messages", n)
			}
			for _, m := range []*member{acc, dialer} {
				if warns := m.log.matching("level=WARN"); len(warns) != 1 {
					t.Errorf("member %d logged %d lines at Warn, want 1:\n%s", m.id, len(warns), m.log)
				}
			}
		})
	}
}

// TestTCPTLSBadMemberIsolated: in an ensemble with sslQuorum, a member
// whose certificate is bad can neither reach the others nor be reached,
// and the others go on.
func TestTCPTLSBadMemberIsolated(t *testing.T) {
	ca, other := newTestCA(t, "quorum CA"), newTestCA(t, "another CA")
	tests := []struct {
		name string
		q    quorumTLS // member 3's
	}{
		{"a certificate from another CA", quorumTLS{cert: other.issue(t, certSpec{name: "server.3"}), trust: ca.pool}},
		{"an expired certificate", quorumTLS{cert: ca.issue(t, certSpec{name: "server.3", expired: true}), trust: ca.pool}},
		{"no certificate", quorumTLS{trust: ca.pool}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			checkLeaks(t)
			ms := newEnsemble(t, 3, func(m *member, cfg *TCPConfig) {
				if m.id != 3 {
					memberTLS(t, ca)(m, cfg)
					return
				}
				cfg.ServerTLS, cfg.DialTLS = tt.q.server(), tt.q.dial()
			})
			a, b, bad := ms[0], ms[1], ms[2]
			sendRange(a, 2, 0, 100)
			sendRange(b, 1, 0, 100)
			expectInOrder(t, b, []uint64{1}, 0, 100)
			expectInOrder(t, a, []uint64{2}, 0, 100)

			// Each good member has refused member 3 and failed to reach it;
			// member 3 has failed to reach either.
			for _, m := range []*member{a, b} {
				m.log.wait(t, "level=WARN", tlsAcceptFailed, "remote=127.0.0.1:")
				m.log.wait(t, "level=WARN", tlsDialFailed, "peer=3")
			}
			bad.log.wait(t, "level=WARN", "peer=1", "failed")
			bad.log.wait(t, "level=WARN", "peer=2", "failed")
			sendRange(bad, 1, 0, 10)
			sendRange(bad, 2, 0, 10)
			sendRange(a, 3, 0, 10)
			sendRange(b, 3, 0, 10)
			for _, m := range ms {
				if err := m.tr.Close(); err != nil {
					t.Fatal(err)
				}
			}
			for _, m := range ms {
				if n := len(m.h.msgc); n != 0 {
					t.Errorf("member %d delivered %d messages that involve member 3", m.id, n)
				}
				involving3 := m.log.matching(`msg="connected to peer"`, "peer=3")
				if m == bad {
					involving3 = m.log.matching(`msg="connected to peer"`)
				}
				if len(involving3) != 0 {
					t.Errorf("member %d has a connection involving member 3: %s", m.id, involving3)
				}
			}
		})
	}
}

func TestTCPTLSPortUnification(t *testing.T) {
	checkLeaks(t)
	ca := newTestCA(t, "quorum CA")
	q := func(id uint64) quorumTLS {
		return quorumTLS{cert: ca.issue(t, certSpec{name: fmt.Sprintf("server.%d", id)}), trust: ca.pool}
	}
	acc := startMember(t, 3, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9", 2: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial // it only accepts
		cfg.ServerTLS, cfg.PortUnification = q(3).server(), true
	})
	peers := map[uint64]string{3: acc.tr.Addr().String()}
	tlsDialer := startMember(t, 1, listen(t, "127.0.0.1:0"), peers, func(_ *member, cfg *TCPConfig) {
		cfg.DialTLS = q(1).dial()
	})
	plainDialer := startMember(t, 2, listen(t, "127.0.0.1:0"), peers, nil)
	sendRange(tlsDialer, 3, 0, 50)
	sendRange(plainDialer, 3, 0, 50)
	expectInOrder(t, acc, []uint64{1, 2}, 0, 50)
	acc.log.wait(t, `msg="accepted a connection from peer"`, "peer=1", "tls=true")
	acc.log.wait(t, `msg="accepted a connection from peer"`, "peer=2", "tls=false")
	tlsDialer.log.wait(t, `msg="connected to peer"`, "peer=3", "tls=true")
	plainDialer.log.wait(t, `msg="connected to peer"`, "peer=3", "tls=false")
	if warns := acc.log.matching("level=WARN"); len(warns) != 0 {
		t.Errorf("the acceptor warned: %s", warns)
	}
}

// TestTCPTLSRollingEnablement walks three members through ZooKeeper's
// rolling enablement of quorum TLS, one member restarted at a time (see
// tlsStep): at every point, the members are at most one step apart and
// every member reaches every other, both ways.
func TestTCPTLSRollingEnablement(t *testing.T) {
	checkLeaks(t)
	ca := newTestCA(t, "quorum CA")
	ids := []uint64{1, 2, 3}
	qs := make(map[uint64]quorumTLS)
	lns := make(map[uint64]net.Listener)
	addrs := make(map[uint64]string)
	for _, id := range ids {
		qs[id] = quorumTLS{cert: ca.issue(t, certSpec{name: fmt.Sprintf("server.%d", id)}), trust: ca.pool}
		lns[id] = listen(t, "127.0.0.1:0")
		addrs[id] = lns[id].Addr().String()
	}
	steps := make(map[uint64]int)
	ms := make(map[uint64]*member)
	start := func(id uint64, ln net.Listener) {
		peers := make(map[uint64]string)
		for _, p := range ids {
			if p != id {
				peers[p] = addrs[p]
			}
		}
		ms[id] = startMember(t, id, ln, peers, func(_ *member, cfg *TCPConfig) { tlsStep(cfg, steps[id], qs[id]) })
	}
	// awaitUp waits until m has connected to every one of peers since
	// its upc was last drained.
	awaitUp := func(m *member, peers ...uint64) {
		t.Helper()
		peers = slices.Clone(peers)
		for len(peers) > 0 {
			p := recv(t, m.upc, fmt.Sprintf("member %d connecting to %v (steps %v)", m.id, peers, steps))
			peers = slices.DeleteFunc(peers, func(id uint64) bool { return id == p })
		}
	}
	var index uint64
	allPairs := func() {
		t.Helper()
		for _, from := range ids {
			for _, to := range ids {
				if from == to {
					continue
				}
				index++
				ms[from].tr.Send([]*raftpb.Message{msg(from, to, index)})
				got := recv(t, ms[to].h.msgc, fmt.Sprintf("a message from %d to %d (steps %v)", from, to, steps))
				if got.GetFrom() != from || got.GetIndex() != index {
					t.Fatalf("member %d got message %d from %d, want %d from %d (steps %v)", to, got.GetIndex(), got.GetFrom(), index, from, steps)
				}
			}
		}
	}

	for _, id := range ids {
		start(id, lns[id])
	}
	for _, id := range ids {
		awaitUp(ms[id], slices.DeleteFunc(slices.Clone(ids), func(p uint64) bool { return p == id })...)
	}
	allPairs()
	for step := 1; step <= 3; step++ {
		for _, id := range ids {
			var others []uint64
			for _, p := range ids {
				if p != id {
					others = append(others, p)
					for len(ms[p].upc) > 0 {
						<-ms[p].upc
					}
				}
			}
			if err := ms[id].tr.Close(); err != nil {
				t.Fatal(err)
			}
			steps[id] = step
			start(id, listen(t, addrs[id]))
			awaitUp(ms[id], others...)
			for _, p := range others {
				awaitUp(ms[p], id)
			}
			allPairs()
			// The restarted member dials TLS from step 2 on.
			wantTLS := fmt.Sprintf("tls=%t", step >= 2)
			if n := len(ms[id].log.matching(`msg="connected to peer"`, wantTLS)); n != len(others) {
				t.Fatalf("at steps %v, member %d made %d connections with %s, want %d:\n%s", steps, id, n, wantTLS, len(others), ms[id].log)
			}
		}
	}
}

// TestTCPTLSCertificateReload: the server configuration is used as it is,
// so a certificate its GetConfigForClient serves is the one the next
// handshake sees.
func TestTCPTLSCertificateReload(t *testing.T) {
	checkLeaks(t)
	ca := newTestCA(t, "quorum CA")
	var served atomic.Pointer[tls.Certificate]
	served.Store(ca.issue(t, certSpec{name: "server.2 first"}))
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial // it only accepts
		cfg.ServerTLS = &tls.Config{GetConfigForClient: func(*tls.ClientHelloInfo) (*tls.Config, error) {
			q := quorumTLS{cert: served.Load(), trust: ca.pool}
			return q.server(), nil
		}}
	})
	// seenc receives the name on the certificate each handshake of the
	// dialer was shown.
	seenc := make(chan string, 1<<10)
	dialerCert := ca.issue(t, certSpec{name: "server.1"})
	dial := func() *member {
		return startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: acc.tr.Addr().String()}, func(_ *member, cfg *TCPConfig) {
			cfg.DialTLS = func(uint64, string) *tls.Config {
				return &tls.Config{
					Certificates: []tls.Certificate{*dialerCert},
					RootCAs:      ca.pool,
					VerifyConnection: func(cs tls.ConnectionState) error {
						seenc <- cs.PeerCertificates[0].Subject.CommonName
						return nil
					},
				}
			}
		})
	}
	exchange := func(d *member, index uint64) {
		t.Helper()
		d.tr.Send([]*raftpb.Message{msg(1, 2, index)})
		if got := recv(t, acc.h.msgc, "a message"); got.GetIndex() != index {
			t.Fatalf("got %v, want the message of index %d", got, index)
		}
	}

	d := dial()
	if name := recv(t, seenc, "the first handshake"); name != "server.2 first" {
		t.Fatalf("the first handshake saw %q", name)
	}
	exchange(d, 1)

	served.Store(ca.issue(t, certSpec{name: "server.2 second"}))
	d.tr.Close()
	d = dial()
	if name := recv(t, seenc, "the handshake after the swap"); name != "server.2 second" {
		t.Fatalf("the handshake after the swap saw %q", name)
	}
	exchange(d, 2)

	served.Store(ca.issue(t, certSpec{name: "server.2 expired", expired: true}))
	d.tr.Close()
	d = dial()
	d.log.wait(t, "level=WARN", tlsDialFailed, "peer's certificate has expired")
	d.tr.Close()
	if len(acc.h.msgc) != 0 {
		t.Fatal("a message was delivered over a certificate that had expired")
	}
}

// TestTCPTLSServerName: the transport checks a peer's certificate against
// the host of its address unless the dialling configuration names a
// server itself.
func TestTCPTLSServerName(t *testing.T) {
	checkLeaks(t)
	ca := newTestCA(t, "quorum CA")
	named := quorumTLS{cert: ca.issue(t, certSpec{name: "server.2", hosts: []string{"warden-2.example"}}), trust: ca.pool}
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial // it only accepts
		cfg.ServerTLS = named.server()
	})
	type call struct {
		id   uint64
		host string
	}
	callc := make(chan call, 1<<10)
	q := quorumTLS{cert: ca.issue(t, certSpec{name: "server.1"}), trust: ca.pool}
	d := startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: acc.tr.Addr().String()}, func(_ *member, cfg *TCPConfig) {
		cfg.DialTLS = func(id uint64, host string) *tls.Config {
			callc <- call{id, host}
			c := q.dial()(id, host)
			c.ServerName = "warden-2.example"
			return c
		}
	})
	if c := recv(t, callc, "DialTLS"); c != (call{2, "127.0.0.1"}) {
		t.Fatalf("DialTLS(%d, %q), want DialTLS(2, \"127.0.0.1\")", c.id, c.host)
	}
	d.tr.Send([]*raftpb.Message{msg(1, 2, 1)})
	if got := recv(t, acc.h.msgc, "a message"); got.GetIndex() != 1 {
		t.Fatalf("got %v", got)
	}
}

// TestTCPTLSHandshakeTimeout: a connection that does not finish its
// handshake, TLS or not, is closed after HandshakeTimeout.
func TestTCPTLSHandshakeTimeout(t *testing.T) {
	checkLeaks(t)
	ca := newTestCA(t, "quorum CA")
	q := quorumTLS{cert: ca.issue(t, certSpec{name: "server.2"}), trust: ca.pool}
	acc := startMember(t, 2, listen(t, "127.0.0.1:0"), map[uint64]string{1: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.Dial = blockingDial // it only accepts
		cfg.ServerTLS, cfg.PortUnification = q.server(), true
		cfg.HandshakeTimeout = 50 * time.Millisecond
	})
	for _, tt := range []struct {
		name  string
		bytes []byte
	}{
		{"nothing", nil},
		{"the start of a TLS record", []byte{tlsRecordHandshake, 3, 1}},
		{"the start of a hello", []byte{0, 0}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			c := dialRaw(t, acc.tr.Addr().String())
			if len(tt.bytes) > 0 {
				c.write(tt.bytes)
			}
			c.waitClosed()
			acc.log.wait(t, "remote="+c.LocalAddr().String(), `msg="no handshake on a connection to the quorum port; closing it"`)
		})
	}
}

// TestTCPTLSDialHandshakeTimeout: a dialer whose TLS handshake gets no
// answer gives up after HandshakeTimeout and dials again.
func TestTCPTLSDialHandshakeTimeout(t *testing.T) {
	checkLeaks(t)
	ca := newTestCA(t, "quorum CA")
	// A quorum port that accepts and never answers.
	ln := listen(t, "127.0.0.1:0")
	acceptedc := make(chan net.Conn, 1<<10)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			acceptedc <- c
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		for len(acceptedc) > 0 {
			(<-acceptedc).Close()
		}
	})
	q := quorumTLS{cert: ca.issue(t, certSpec{name: "server.1"}), trust: ca.pool}
	d := startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: ln.Addr().String()}, func(_ *member, cfg *TCPConfig) {
		cfg.DialTLS = q.dial()
		cfg.HandshakeTimeout = 50 * time.Millisecond
	})
	d.log.wait(t, `msg="cannot reach peer"`, "peer=2", "i/o timeout")
	recv(t, acceptedc, "the first connection")
	recv(t, acceptedc, "the second connection")
}

// FuzzServeConnUnified plays arbitrary bytes to a quorum port with port
// unification, which reads TLS and plaintext alike: nothing may panic or
// hang, and the connection's goroutines must end when the bytes do.
func FuzzServeConnUnified(f *testing.F) {
	ca := newTestCA(f, "quorum CA")
	acceptor := quorumTLS{cert: ca.issue(f, certSpec{name: "server.2"}), trust: ca.pool}
	dialer := quorumTLS{cert: ca.issue(f, certSpec{name: "server.1"}), trust: ca.pool}
	for _, seed := range plaintextSeeds() {
		f.Add(seed)
	}
	for _, version := range []uint16{tls.VersionTLS12, tls.VersionTLS13} {
		dialer.maxVersion = version
		cfg := dialer.dial()(2, "127.0.0.1")
		cfg.ServerName = "127.0.0.1"
		ch := clientHello(f, cfg)
		f.Add(ch)
		f.Add(ch[:len(ch)/2])
		f.Add(append(slices.Clone(ch), ch...))
	}
	f.Add([]byte{tlsRecordHandshake})
	f.Add([]byte{tlsRecordHandshake, 3, 1, 0, 0})
	f.Add([]byte{tlsRecordHandshake, 3, 3, 0xff, 0xff, 1, 0, 0xff, 0xfb})
	fuzzServe(f, func(cfg *TCPConfig) {
		cfg.ServerTLS, cfg.PortUnification = acceptor.server(), true
	})
}

// clientHello returns the first bytes a TLS client with cfg sends.
func clientHello(t testing.TB, cfg *tls.Config) []byte {
	t.Helper()
	c, s := net.Pipe()
	done := make(chan struct{})
	go func() {
		defer close(done)
		tls.Client(c, cfg).Handshake() // fails once s is closed
		c.Close()
	}()
	buf := make([]byte, 64<<10)
	n, err := s.Read(buf)
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	c.Close()
	<-done
	return buf[:n]
}
