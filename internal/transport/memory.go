package transport

import (
	"errors"
	"math/rand/v2"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
)

// memQueue bounds the messages waiting on one in-memory link, as TCP's
// per-peer queues are bounded.
const memQueue = 4096

// Network is an in-process network of members for tests. Links are
// reliable and ordered until a test breaks them: Partition and Isolate
// cut links, SetDrop loses a fraction of messages (from a seeded source,
// so a schedule reproduces), SetDelay holds messages back, HoldEntries
// keeps a member behind the log; Heal undoes it all. It is safe for
// concurrent use.
type Network struct {
	mu sync.Mutex
	// members maps a member id to its endpoint.
	members map[uint64]*memEndpoint
	// group maps a member to its partition group; members in different
	// groups cannot talk. Empty when the network is whole.
	group map[uint64]int
	// isolated members talk to nobody.
	isolated map[uint64]bool
	drop     float64
	delay    time.Duration
	// lost holds the message types DropTypes loses.
	lost map[raftpb.MessageType]bool
	// held maps a member whose log entries are held back (HoldEntries)
	// to the messages set aside for it, in the order they came.
	held map[uint64][]heldMsg
	rng  *rand.Rand
	// dropped counts messages lost to cuts, drops and full queues.
	dropped int
}

// NewNetwork returns a whole network whose random drops follow seed.
func NewNetwork(seed uint64) *Network {
	return &Network{
		members:  make(map[uint64]*memEndpoint),
		group:    make(map[uint64]int),
		isolated: make(map[uint64]bool),
		held:     make(map[uint64][]heldMsg),
		rng:      rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
	}
}

// Join returns the transport of member id. A member that joins again (a
// restart) replaces its earlier endpoint, which must be closed. Until its
// SetPeers is called, a member talks with every member on the network;
// from then on, only with its peers (addresses are ignored), as a TCP
// transport does.
func (n *Network) Join(id uint64, snaps Snapshots) Transport {
	return &memEndpoint{net: n, id: id, snaps: snaps, links: make(map[uint64]*memLink), closed: make(chan struct{})}
}

// Partition splits the network into the given groups: members talk only
// within their own group. A member in no group is isolated.
func (n *Network) Partition(groups ...[]uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.group = make(map[uint64]int)
	n.isolated = make(map[uint64]bool)
	for i, g := range groups {
		for _, id := range g {
			n.group[id] = i + 1
		}
	}
	for id := range n.members {
		if n.group[id] == 0 {
			n.isolated[id] = true
		}
	}
}

// Isolate cuts every link of the given members, leaving the rest as they
// are.
func (n *Network) Isolate(ids ...uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	for _, id := range ids {
		n.isolated[id] = true
	}
}

// SetDrop makes each message be lost with probability p (0 ≤ p < 1).
func (n *Network) SetDrop(p float64) {
	n.mu.Lock()
	n.drop = p
	n.mu.Unlock()
}

// SetDelay holds every message back for d before it is delivered; order
// per link is kept.
func (n *Network) SetDelay(d time.Duration) {
	n.mu.Lock()
	n.delay = d
	n.mu.Unlock()
}

// DropTypes loses every message of the given types (none: stops losing
// them) until Heal: MsgTimeoutNow, say, to make a leadership transfer
// fail while everything else goes through.
func (n *Network) DropTypes(types ...raftpb.MessageType) {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.lost = make(map[raftpb.MessageType]bool, len(types))
	for _, t := range types {
		n.lost[t] = true
	}
}

// heldMsg is a message HoldEntries set aside, with the endpoint that
// sent it.
type heldMsg struct {
	from *memEndpoint
	m    *raftpb.Message
}

// HoldEntries sets aside the messages that carry log entries to member id
// (MsgApp) until ReleaseEntries: it keeps hearing its leader's heartbeats,
// so it goes on serving, but applies nothing new, as a member whose disk
// or link is slow falls behind.
func (n *Network) HoldEntries(id uint64) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if _, ok := n.held[id]; !ok {
		n.held[id] = nil
	}
}

// ReleaseEntries delivers what HoldEntries set aside for id, in order,
// and lets later messages through.
func (n *Network) ReleaseEntries(id uint64) {
	n.mu.Lock()
	msgs := n.held[id]
	delete(n.held, id)
	n.mu.Unlock()
	for _, h := range msgs {
		h.from.deliver(id, h.m)
	}
}

// Heal reconnects everything, stops drops and delays, and releases held
// entries.
func (n *Network) Heal() {
	n.mu.Lock()
	n.group = make(map[uint64]int)
	n.isolated = make(map[uint64]bool)
	n.drop = 0
	n.delay = 0
	n.lost = nil
	held := make([]uint64, 0, len(n.held))
	for id := range n.held {
		held = append(held, id)
	}
	n.mu.Unlock()
	for _, id := range held {
		n.ReleaseEntries(id)
	}
}

// Dropped returns how many messages the network has lost so far.
func (n *Network) Dropped() int {
	n.mu.Lock()
	defer n.mu.Unlock()
	return n.dropped
}

// connected reports whether a message of type t from → to may pass now,
// and how long it is held back; the caller holds n.mu.
func (n *Network) connected(from, to uint64, t raftpb.MessageType) (bool, time.Duration) {
	if n.isolated[from] || n.isolated[to] || n.group[from] != n.group[to] {
		return false, 0
	}
	if n.drop > 0 && n.rng.Float64() < n.drop {
		return false, 0
	}
	if n.lost[t] {
		return false, 0
	}
	return true, n.delay
}

// memEndpoint is one member's Transport on a Network.
type memEndpoint struct {
	net   *Network
	id    uint64
	snaps Snapshots

	mu      sync.Mutex
	handler Handler
	links   map[uint64]*memLink // by destination
	closed  chan struct{}
	wg      sync.WaitGroup
	done    bool
	// peers is the peer set of the last SetPeers; nil before the first,
	// when every member is a peer.
	peers map[uint64]bool
}

type memMsg struct {
	m  *raftpb.Message
	at time.Time // deliver no earlier than this
}

// memLink is the ordered queue from one member to another, drained by its
// own goroutine.
type memLink struct {
	to uint64
	ch chan memMsg
}

func (e *memEndpoint) Start(h Handler) error {
	e.mu.Lock()
	e.handler = h
	e.mu.Unlock()
	e.net.mu.Lock()
	e.net.members[e.id] = e
	e.net.mu.Unlock()
	return nil
}

func (e *memEndpoint) Send(msgs []*raftpb.Message) {
	for _, m := range msgs {
		e.send(m)
	}
}

// SetPeers replaces the members e talks with; messages to or from others
// are dropped, those already queued included (Transport.SetPeers).
func (e *memEndpoint) SetPeers(peers map[uint64]string) error {
	if err := validatePeers(e.id, peers, false); err != nil {
		return err
	}
	set := make(map[uint64]bool, len(peers))
	for id := range peers {
		set[id] = true
	}
	e.mu.Lock()
	e.peers = set
	e.mu.Unlock()
	return nil
}

// isPeer reports whether e talks with member id now.
func (e *memEndpoint) isPeer(id uint64) bool {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.peers == nil || e.peers[id]
}

func (e *memEndpoint) send(m *raftpb.Message) {
	to := m.GetTo()
	if !e.isPeer(to) {
		e.mu.Lock()
		h := e.handler
		e.mu.Unlock()
		if h != nil && m.GetType() == raftpb.MessageType_MsgSnap {
			h.SnapshotSent(to, false)
		}
		return
	}
	n := e.net
	n.mu.Lock()
	ok, delay := n.connected(e.id, to, m.GetType())
	if !ok {
		n.dropped++
	}
	dst := n.members[to]
	n.mu.Unlock()
	if dst != nil && !dst.isPeer(e.id) {
		// Refused by to, as a TCP acceptor refuses a stranger.
		ok = false
	}
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return
	}
	h := e.handler
	l := e.links[to]
	if l == nil && ok {
		l = &memLink{to: to, ch: make(chan memMsg, memQueue)}
		e.links[to] = l
		e.wg.Add(1)
		go e.drain(l)
	}
	e.mu.Unlock()
	if !ok {
		if m.GetType() == raftpb.MessageType_MsgSnap {
			h.SnapshotSent(to, false)
		}
		return
	}
	select {
	case l.ch <- memMsg{m: m, at: time.Now().Add(delay)}:
	default:
		n.mu.Lock()
		n.dropped++
		n.mu.Unlock()
		h.Unreachable(to)
		if m.GetType() == raftpb.MessageType_MsgSnap {
			h.SnapshotSent(to, false)
		}
	}
}

// drain delivers a link's messages in order until the endpoint closes.
func (e *memEndpoint) drain(l *memLink) {
	defer e.wg.Done()
	for {
		var mm memMsg
		select {
		case mm = <-l.ch:
		case <-e.closed:
			return
		}
		if d := time.Until(mm.at); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-e.closed:
				t.Stop()
				return
			}
		}
		e.deliver(l.to, mm.m)
	}
}

// errUnreachable is what a snapshot send meets when the peer is gone.
var errUnreachable = errors.New("transport: peer unreachable")

// deliver hands m to member to, if it is there, still connected, and
// each is the other's peer.
func (e *memEndpoint) deliver(to uint64, m *raftpb.Message) {
	n := e.net
	n.mu.Lock()
	dst := n.members[to]
	// Cuts made after the message was queued apply too.
	ok := dst != nil && !n.isolated[e.id] && !n.isolated[to] && n.group[e.id] == n.group[to]
	if held, hold := n.held[to]; ok && hold && m.GetType() == raftpb.MessageType_MsgApp {
		n.held[to] = append(held, heldMsg{from: e, m: m})
		n.mu.Unlock()
		return
	}
	n.mu.Unlock()
	// So do peer sets, changed since.
	ok = ok && e.isPeer(to) && dst.isPeer(e.id)
	e.mu.Lock()
	h := e.handler
	e.mu.Unlock()
	if m.GetType() == raftpb.MessageType_MsgSnap {
		err := errUnreachable
		if ok {
			err = e.sendSnapshot(dst, m)
		}
		h.SnapshotSent(to, err == nil)
		if err != nil {
			return
		}
	} else if !ok {
		return
	}
	dst.mu.Lock()
	dh, closed := dst.handler, dst.done
	dst.mu.Unlock()
	if !closed && dh != nil {
		dh.Deliver(m)
	}
}

// sendSnapshot streams the snapshot body of m from this member's store to
// dst's, as the TCP transport does over the wire.
func (e *memEndpoint) sendSnapshot(dst *memEndpoint, m *raftpb.Message) error {
	meta := m.GetSnapshot().GetMetadata()
	body, err := e.snaps.Open(meta)
	if err != nil {
		return err
	}
	defer body.Close()
	return dst.snaps.Receive(meta, body)
}

func (e *memEndpoint) Close() error {
	e.mu.Lock()
	if e.done {
		e.mu.Unlock()
		return nil
	}
	e.done = true
	close(e.closed)
	e.mu.Unlock()
	e.wg.Wait()
	e.net.mu.Lock()
	if e.net.members[e.id] == e {
		delete(e.net.members, e.id)
	}
	e.net.mu.Unlock()
	return nil
}
