package transport

import (
	"errors"
	"fmt"
	"net"
	"sync"
	"testing"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// Tests of SetPeers: the peer set changing at run time (dynamic
// reconfiguration).

// dynamic makes a member's ensemble identity DynamicEnsemble, as every
// member of an ensemble with reconfigEnabled=true has.
func dynamic(_ *member, cfg *TCPConfig) { cfg.Ensemble = DynamicEnsemble }

// setPeers calls SetPeers and fails the test on an error.
func setPeers(t *testing.T, tr Transport, peers map[uint64]string) {
	t.Helper()
	if err := tr.SetPeers(peers); err != nil {
		t.Fatal(err)
	}
}

// peersOf returns the peer set of member id in ms: every other member.
func peersOf(id uint64, ms ...*member) map[uint64]string {
	peers := make(map[uint64]string)
	for _, m := range ms {
		if m.id != id {
			peers[m.id] = m.tr.Addr().String()
		}
	}
	return peers
}

// inboundOf returns m's accepted connection from peer, or nil.
func inboundOf(m *member, peer uint64) net.Conn {
	m.tr.mu.Lock()
	defer m.tr.mu.Unlock()
	return m.tr.inbound[peer]
}

// waitFor polls cond until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// connections returns the handshakes m's senders have made since the
// last call, by peer.
func connections(m *member) map[uint64]int {
	ups := make(map[uint64]int)
	for {
		select {
		case p := <-m.upc:
			ups[p]++
		default:
			return ups
		}
	}
}

// steady sends count messages a → b from index first while f runs, and
// checks that b receives them all, in order, and that the link neither
// reconnected nor reported b unreachable: f left it alone.
func steady(t *testing.T, a, b *member, first, count uint64, f func()) {
	t.Helper()
	inA, inB := inboundOf(b, a.id), inboundOf(a, b.id)
	if inA == nil || inB == nil {
		t.Fatalf("members %d and %d are not connected both ways", a.id, b.id)
	}
	connections(a)
	connections(b)
	var wg sync.WaitGroup
	wg.Go(func() { sendRange(a, b.id, first, count) })
	f()
	wg.Wait()
	expectInOrder(t, b, []uint64{a.id}, first, count)
	if ups := connections(a)[b.id] + connections(b)[a.id]; ups != 0 {
		t.Errorf("members %d and %d reconnected %d times", a.id, b.id, ups)
	}
	if inboundOf(b, a.id) != inA || inboundOf(a, b.id) != inB {
		t.Errorf("the connections between members %d and %d were replaced", a.id, b.id)
	}
	for _, m := range []*member{a, b} {
		for len(m.h.unreachablec) > 0 {
			if p := <-m.h.unreachablec; p == a.id || p == b.id {
				t.Errorf("member %d reported %d unreachable", m.id, p)
			}
		}
	}
}

// exchange checks that a and b reach each other both ways.
func exchange(t *testing.T, a, b *member, first, count uint64) {
	t.Helper()
	sendRange(a, b.id, first, count)
	sendRange(b, a.id, first, count)
	expectInOrder(t, b, []uint64{a.id}, first, count)
	expectInOrder(t, a, []uint64{b.id}, first, count)
}

// TestTCPSetPeersAdd: a member being added dials the ensemble before its
// addition reaches the others and is refused as not a member, at Warn
// once; once the others add it, it reaches them and they it, and the
// link between the others is not touched.
func TestTCPSetPeersAdd(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 2, dynamic)
	a, b := ms[0], ms[1]
	recv(t, a.upc, "member 1 connected")
	recv(t, b.upc, "member 2 connected")

	// Member 3's server lines list the old ensemble and itself.
	c := startMember(t, 3, listen(t, "127.0.0.1:0"), peersOf(3, a, b), dynamic)
	reason := "unknown member id 3: not a member of this ensemble (removed, or not yet added"
	for _, m := range []*member{a, b} {
		m.log.wait(t, "level=WARN", `msg="refused a peer connection"`, reason)
	}
	c.log.wait(t, "level=WARN", `msg="peer refused the connection"`, reason)
	// It keeps redialling, and the refusals stay at Debug.
	waitFor(t, "member 3 to be refused 5 times by member 1", func() bool {
		return len(a.log.matching(`msg="refused a peer connection"`, reason)) >= 5
	})
	if n := len(a.log.matching("level=WARN", reason)); n != 1 {
		t.Errorf("member 1 logged %d refusals of member 3 at Warn, want 1:\n%s", n, a.log)
	}

	steady(t, a, b, 0, 2000, func() {
		setPeers(t, a.tr, peersOf(1, a, b, c))
		setPeers(t, b.tr, peersOf(2, a, b, c))
	})
	a.log.wait(t, "level=INFO", `msg="peer added"`, "peer=3")
	exchange(t, a, c, 0, 500)
	exchange(t, b, c, 0, 500)
}

// TestTCPSetPeersRemove: a removed member is disconnected both ways,
// what was queued for it is dropped, and its connections are refused
// from then on; the link between the members that stay is not touched.
func TestTCPSetPeersRemove(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 3, dynamic)
	a, b, c := ms[0], ms[1], ms[2]
	exchange(t, a, c, 0, 100)
	exchange(t, a, b, 0, 100)

	steady(t, a, b, 100, 2000, func() {
		setPeers(t, a.tr, peersOf(1, a, b))
	})
	a.log.wait(t, "level=INFO", `msg="peer removed; disconnected from it"`, "peer=3")
	// Both of its connections to member 1 close: member 3's sender
	// notices its own, and redials are refused.
	c.log.wait(t, "level=WARN", `msg="lost connection to peer"`, "peer=1")
	c.log.wait(t, "level=WARN", `msg="peer refused the connection"`, "peer=1", "unknown member id 3: not a member of this ensemble")
	waitFor(t, "member 1 to close its connection from member 3", func() bool { return inboundOf(a, 3) == nil })
	waitFor(t, "member 3 to lose its connection from member 1", func() bool { return inboundOf(c, 1) == nil })

	// Member 1 sends it nothing more; a snapshot is reported not sent.
	a.tr.Send([]*raftpb.Message{msg(1, 3, 200), snapMsg(1, 3, 7)})
	if o := recv(t, a.h.snapSentc, "SnapshotSent"); o != (snapOutcome{3, false}) {
		t.Fatalf("got %+v, want SnapshotSent(3, false)", o)
	}
	// Member 3's messages do not reach member 1 either.
	c.tr.Send([]*raftpb.Message{msg(3, 1, 200)})
	if p := recv(t, c.h.unreachablec, "member 1 reported unreachable by member 3"); p != 1 {
		t.Fatalf("unreachable %d, want 1", p)
	}
	// Member 2 has not removed it: member 3 still reaches member 2.
	exchange(t, b, c, 100, 100)
	// A message sent by member 3 before the removal may still have been
	// in flight; none after it.
	for len(a.h.msgc) > 0 {
		if m := <-a.h.msgc; m.GetFrom() == 3 && m.GetIndex() >= 200 {
			t.Fatalf("member 1 delivered %v from a removed member", m)
		}
	}
}

// TestTCPSetPeersDropsQueue: what is queued for a peer that cannot be
// reached when it is removed is dropped and reported; its sender, stuck
// dialling, stops.
func TestTCPSetPeersDropsQueue(t *testing.T) {
	checkLeaks(t)
	dialling := make(chan struct{}, 1)
	m := startMember(t, 1, listen(t, "127.0.0.1:0"), map[uint64]string{2: "127.0.0.1:9"}, func(_ *member, cfg *TCPConfig) {
		cfg.DialTimeout = time.Hour
		cfg.Dial = signallingDial(dialling)
	})
	recv(t, dialling, "the first dial")
	m.tr.Send([]*raftpb.Message{msg(1, 2, 0), snapMsg(1, 2, 5), msg(1, 2, 1)})
	setPeers(t, m.tr, nil)
	if o := recv(t, m.h.snapSentc, "SnapshotSent"); o != (snapOutcome{2, false}) {
		t.Fatalf("got %+v, want SnapshotSent(2, false)", o)
	}
	if p := recv(t, m.h.unreachablec, "Unreachable"); p != 2 {
		t.Fatalf("unreachable %d, want 2", p)
	}
	m.log.wait(t, `msg="stopped sending to peer"`, "peer=2", "dropped=3")
}

// TestTCPSetPeersReaddress: a member that moved to another address is
// reached there, and the link between the others is not touched.
func TestTCPSetPeersReaddress(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 3, dynamic)
	a, b, c := ms[0], ms[1], ms[2]
	exchange(t, a, c, 0, 100)
	exchange(t, a, b, 0, 100)
	old := c.tr.Addr().String()
	if err := c.tr.Close(); err != nil {
		t.Fatal(err)
	}
	// Member 3 starts again elsewhere.
	c2 := startMember(t, 3, listen(t, "127.0.0.1:0"), peersOf(3, a, b), dynamic)
	steady(t, a, b, 100, 2000, func() {
		setPeers(t, a.tr, peersOf(1, a, b, c2))
	})
	a.log.wait(t, "level=INFO", `msg="peer's address changed; reconnecting"`, "peer=3", "addr="+c2.tr.Addr().String(), "previous="+old)
	a.log.wait(t, "level=INFO", `msg="connected to peer"`, "peer=3", "addr="+c2.tr.Addr().String())
	exchange(t, a, c2, 100, 500)
}

// TestTCPSetPeersUnchanged: a SetPeers that changes nothing touches
// nothing, and one before Start decides whom Start dials.
func TestTCPSetPeersUnchanged(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 2, nil)
	a, b := ms[0], ms[1]
	recv(t, a.upc, "member 1 connected")
	recv(t, b.upc, "member 2 connected")
	steady(t, a, b, 0, 2000, func() {
		for range 10 {
			setPeers(t, a.tr, peersOf(1, a, b))
		}
	})
	if n := len(a.log.matching(`msg="peer`)); n != 0 {
		t.Errorf("member 1 logged %d changes of its peers", n)
	}

	tr, err := NewTCP(TCPConfig{Ensemble: testEnsemble, ID: 3, Listen: "127.0.0.1:0", Peers: map[uint64]string{1: "127.0.0.1:9"}, Snapshots: &fakeSnaps{}, Logger: newLogSink().logger()})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close()
	setPeers(t, tr, peersOf(3, b))
	setPeers(t, b.tr, map[uint64]string{1: a.tr.Addr().String(), 3: tr.Addr().String()})
	if err := tr.Start(newRecorder()); err != nil {
		t.Fatal(err)
	}
	tr.Send([]*raftpb.Message{msg(3, 2, 0)})
	if got := recv(t, b.h.msgc, "member 3's message"); got.GetFrom() != 3 {
		t.Fatalf("member 2 got %v", got)
	}
}

// TestTCPSetPeersInvalid: an invalid peer set is refused and changes
// nothing; after Close, SetPeers does nothing.
func TestTCPSetPeersInvalid(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 2, nil)
	a, b := ms[0], ms[1]
	for _, peers := range []map[uint64]string{
		{1: "127.0.0.1:1", 2: b.tr.Addr().String()},
		{0: "127.0.0.1:1"},
		{2: "no port"},
	} {
		if err := a.tr.SetPeers(peers); !errors.Is(err, ErrInvalidConfig) {
			t.Errorf("SetPeers(%v) = %v, want ErrInvalidConfig", peers, err)
		}
	}
	exchange(t, a, b, 0, 10)
	if err := a.tr.Close(); err != nil {
		t.Fatal(err)
	}
	setPeers(t, a.tr, map[uint64]string{3: "127.0.0.1:9"})
}

// TestTCPSetPeersConcurrent: SetPeers from several goroutines, racing
// Send and the peers' own redials, leaves the transport working with the
// last set (run with -race).
func TestTCPSetPeersConcurrent(t *testing.T) {
	checkLeaks(t)
	ms := newEnsemble(t, 3, dynamic)
	a, b, c := ms[0], ms[1], ms[2]
	full, onlyB, moved := peersOf(1, a, b, c), peersOf(1, a, b), peersOf(1, a, b, c)
	moved[3] = "127.0.0.1:9"
	sets := []map[uint64]string{full, onlyB, nil, moved, full}
	// The churn makes more handshakes and reports than the recorders
	// hold.
	stop := make(chan struct{})
	var drainers sync.WaitGroup
	defer drainers.Wait()
	defer close(stop)
	for _, ch := range []chan uint64{a.upc, b.upc, c.upc, a.h.unreachablec} {
		drainers.Go(func() {
			for {
				select {
				case <-ch:
				case <-stop:
					return
				}
			}
		})
	}
	drainers.Go(func() {
		for {
			select {
			case <-a.h.snapSentc:
			case <-stop:
				return
			}
		}
	})
	var wg sync.WaitGroup
	for _, to := range []uint64{2, 3} {
		wg.Go(func() {
			for i := range uint64(1000) {
				a.tr.Send([]*raftpb.Message{msg(1, to, i), snapMsg(1, to, i)})
			}
		})
	}
	for g := range 3 {
		wg.Go(func() {
			for i := range 100 {
				if err := a.tr.SetPeers(sets[(g+i)%len(sets)]); err != nil {
					t.Error(err)
				}
			}
		})
	}
	wg.Wait()
	setPeers(t, a.tr, full)

	// Member 1 reaches both again: probe until a message gets through
	// (messages sent before the connections came back are dropped).
	for _, m := range []*member{b, c} {
		const probe = 1 << 40
		waitFor(t, fmt.Sprintf("a message from member 1 to reach member %d", m.id), func() bool {
			a.tr.Send([]*raftpb.Message{msg(1, m.id, probe)})
			for {
				select {
				case got := <-m.h.msgc:
					if got.GetFrom() == 1 && got.GetIndex() == probe {
						return true
					}
				default:
					return false
				}
			}
		})
	}
}

// TestMemorySetPeers: on the in-memory network, a member talks with
// everyone until its first SetPeers, then only with its peers, both
// ways.
func TestMemorySetPeers(t *testing.T) {
	checkLeaks(t)
	n := NewNetwork(1)
	trs := make(map[uint64]Transport)
	hs := make(map[uint64]*recorder)
	for id := uint64(1); id <= 3; id++ {
		trs[id], hs[id] = n.Join(id, &fakeSnaps{}), newRecorder()
		if err := trs[id].Start(hs[id]); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { trs[id].Close() })
	}
	deliver := func(from, to, index uint64) {
		t.Helper()
		trs[from].Send([]*raftpb.Message{msg(from, to, index)})
		if got := recv(t, hs[to].msgc, fmt.Sprintf("a message from %d to %d", from, to)); got.GetFrom() != from || got.GetIndex() != index {
			t.Fatalf("member %d got %v, want message %d from %d", to, got, index, from)
		}
	}
	deliver(1, 3, 0)
	deliver(3, 1, 0)

	if err := trs[1].SetPeers(map[uint64]string{1: "self"}); !errors.Is(err, ErrInvalidConfig) {
		t.Fatalf("SetPeers with its own id: %v, want ErrInvalidConfig", err)
	}
	setPeers(t, trs[1], map[uint64]string{2: "anywhere"})
	// Dropped both ways; a snapshot is reported not sent.
	trs[1].Send([]*raftpb.Message{msg(1, 3, 1), snapMsg(1, 3, 5)})
	trs[3].Send([]*raftpb.Message{msg(3, 1, 1), snapMsg(3, 1, 5)})
	for _, h := range []*recorder{hs[1], hs[3]} {
		if o := recv(t, h.snapSentc, "SnapshotSent"); o.ok {
			t.Fatalf("got %+v, want a snapshot not sent", o)
		}
	}
	deliver(1, 2, 1)
	deliver(2, 1, 1)
	// Peers again: what is sent now arrives, and nothing from before.
	setPeers(t, trs[1], map[uint64]string{2: "anywhere", 3: "anywhere"})
	deliver(1, 3, 2)
	deliver(3, 1, 2)
	if n := len(hs[1].msgc) + len(hs[3].msgc); n != 0 {
		t.Fatalf("%d messages sent outside the peer set were delivered", n)
	}
}
