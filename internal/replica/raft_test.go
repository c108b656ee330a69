package replica

import (
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"go.etcd.io/raft/v3"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"

	"github.com/wardenzk/warden/internal/transport"
)

// memWAL records what the node saved, as a real WAL would make durable.
type memWAL struct {
	mu    sync.Mutex
	hs    *raftpb.HardState
	ents  []*raftpb.Entry
	snap  *raftpb.SnapshotMetadata
	saves int
	// syncs counts the saves raft said must be durable.
	syncs int
	// released is the highest index passed to ReleaseTo.
	released uint64
	// snapFull makes that many SaveSnapshot calls fail as on a full disk.
	snapFull int
}

func (w *memWAL) Save(hs *raftpb.HardState, ents []*raftpb.Entry, mustSync bool) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saves++
	if mustSync {
		w.syncs++
	}
	if hs != nil && !raft.IsEmptyHardState(hs) {
		w.hs = proto.Clone(hs).(*raftpb.HardState)
	}
	for _, e := range ents {
		// A later entry replaces the suffix from its index on.
		for len(w.ents) > 0 && w.ents[len(w.ents)-1].GetIndex() >= e.GetIndex() {
			w.ents = w.ents[:len(w.ents)-1]
		}
		w.ents = append(w.ents, proto.Clone(e).(*raftpb.Entry))
	}
	return nil
}

func (w *memWAL) SaveSnapshot(meta *raftpb.SnapshotMetadata) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.snapFull > 0 {
		w.snapFull--
		return fmt.Errorf("write snapshot marker: %w", syscall.ENOSPC)
	}
	w.snap = proto.Clone(meta).(*raftpb.SnapshotMetadata)
	return nil
}

func (w *memWAL) ReleaseTo(index uint64) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.released = index
	return nil
}

// recover builds the raft storage a restart would see.
func (w *memWAL) recover(t *testing.T) (*raft.MemoryStorage, uint64) {
	t.Helper()
	w.mu.Lock()
	defer w.mu.Unlock()
	ms := raft.NewMemoryStorage()
	if err := ms.ApplySnapshot(&raftpb.Snapshot{Metadata: w.snap}); err != nil {
		t.Fatal(err)
	}
	if w.hs != nil {
		ms.SetHardState(w.hs)
	}
	var after []*raftpb.Entry
	for _, e := range w.ents {
		if e.GetIndex() > w.snap.GetIndex() {
			after = append(after, e)
		}
	}
	if err := ms.Append(after); err != nil {
		t.Fatal(err)
	}
	return ms, w.snap.GetIndex()
}

// member is one raft loop under test and what it handed over.
type member struct {
	id      uint64
	wal     *memWAL
	node    *Node
	updates chan Update

	mu       sync.Mutex
	pending  [][]byte
	applied  []string
	statuses []Status
	// diffs counts, by peer, PeerSync's catch-ups by log entries;
	// snaps those by snapshot.
	diffs, snaps map[uint64]int
}

func (m *member) peerSync(peer uint64, bySnapshot bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if bySnapshot {
		m.snaps[peer]++
	} else {
		m.diffs[peer]++
	}
}

// syncs returns how many times peer was caught up by log entries and by
// snapshot, as this member led.
func (m *member) syncs(peer uint64) (diffs, snaps int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.diffs[peer], m.snaps[peer]
}

func (m *member) proposals() []Proposal {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []Proposal
	for _, p := range m.pending {
		out = append(out, Proposal{Data: p})
	}
	m.pending = nil
	return out
}

func (m *member) propose(data string) {
	m.mu.Lock()
	m.pending = append(m.pending, []byte(data))
	m.mu.Unlock()
	m.node.Wake()
}

// drain records what the loop hands over, checking that every entry was
// in the WAL first.
func (m *member) drain(t *testing.T, done <-chan struct{}) {
	for {
		select {
		case u := <-m.updates:
			m.wal.mu.Lock()
			var walLast uint64
			if n := len(m.wal.ents); n > 0 {
				walLast = m.wal.ents[n-1].GetIndex()
			}
			m.wal.mu.Unlock()
			m.mu.Lock()
			for _, e := range u.Entries {
				if e.GetIndex() > walLast {
					t.Errorf("member %d: entry %d handed over before it was in the WAL (last %d)", m.id, e.GetIndex(), walLast)
				}
				if e.GetType() == raftpb.EntryType_EntryNormal && len(e.GetData()) > 0 {
					m.applied = append(m.applied, string(e.GetData()))
				}
			}
			if u.Status != nil {
				m.statuses = append(m.statuses, *u.Status)
			}
			m.mu.Unlock()
		case <-done:
			return
		}
	}
}

func (m *member) got() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.applied...)
}

// startMembers starts n raft loops over an in-memory network.
func startMembers(t *testing.T, n int) ([]*member, *transport.Network) {
	t.Helper()
	return startMembersWith(t, n, nil)
}

// startMembersWith is startMembers with each member's Config passed
// through adjust (when not nil) before the member starts.
func startMembersWith(t *testing.T, n int, adjust func(*Config)) ([]*member, *transport.Network) {
	t.Helper()
	netw := transport.NewNetwork(1)
	var voters []uint64
	for i := 1; i <= n; i++ {
		voters = append(voters, uint64(i))
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	var ms []*member
	for i := 1; i <= n; i++ {
		m := &member{id: uint64(i), wal: &memWAL{snap: BootstrapSnapshot(voters, nil)}, updates: make(chan Update, 16),
			diffs: make(map[uint64]int), snaps: make(map[uint64]int)}
		st, applied := m.wal.recover(t)
		tr := netw.Join(m.id, nil)
		cfg := Config{
			ID: m.id, Storage: st, Applied: applied, WAL: m.wal, Transport: tr,
			Updates: m.updates, Proposals: m.proposals, Tick: time.Millisecond,
			Campaign: n == 1, Fatal: func(err error) { t.Errorf("fatal: %v", err) }, PeerSync: m.peerSync,
		}
		if adjust != nil {
			adjust(&cfg)
		}
		node, err := StartNode(cfg)
		if err != nil {
			t.Fatal(err)
		}
		tr.Start(node)
		m.node = node
		wg.Add(1)
		go func() { defer wg.Done(); m.drain(t, done) }()
		t.Cleanup(func() { tr.Close() })
		ms = append(ms, m)
	}
	t.Cleanup(func() {
		for _, m := range ms {
			m.node.Stop()
		}
		close(done)
		wg.Wait()
	})
	return ms, netw
}

// waitUntil polls cond (bounded at 10s).
func waitUntil(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func leaderOf(ms []*member) *member {
	for _, m := range ms {
		if m.node.Status().State == raft.StateLeader {
			return m
		}
	}
	return nil
}

func TestAloneCampaignsAndHandsOverInOrderAfterTheWAL(t *testing.T) {
	ms, _ := startMembers(t, 1)
	m := ms[0]
	waitUntil(t, "leadership", func() bool { return leaderOf(ms) == m })
	const n = 500
	for i := 0; i < n; i++ {
		m.propose(fmt.Sprint(i))
	}
	waitUntil(t, "every entry handed over", func() bool { return len(m.got()) == n })
	for i, g := range m.got() {
		if g != fmt.Sprint(i) {
			t.Fatalf("entry %d handed over as %q", i, g)
		}
	}
	m.wal.mu.Lock()
	defer m.wal.mu.Unlock()
	if m.wal.syncs == 0 || m.wal.syncs > m.wal.saves {
		t.Fatalf("%d synced saves of %d", m.wal.syncs, m.wal.saves)
	}
}

func TestThreeMembersReplicateAndFollowersForwardProposals(t *testing.T) {
	ms, _ := startMembers(t, 3)
	waitUntil(t, "a leader", func() bool { return leaderOf(ms) != nil })
	l := leaderOf(ms)
	var f *member
	for _, m := range ms {
		if m != l {
			f = m
		}
	}
	waitUntil(t, "the follower knows the leader", func() bool { return f.node.Status().Lead == l.id })
	l.propose("from the leader")
	f.propose("from a follower")
	for _, m := range ms {
		waitUntil(t, fmt.Sprintf("member %d applies both", m.id), func() bool { return len(m.got()) == 2 })
	}
	want := fmt.Sprint(ms[0].got())
	for _, m := range ms {
		if got := fmt.Sprint(m.got()); got != want {
			t.Fatalf("member %d applied %s, member 1 %s", m.id, got, want)
		}
		m.mu.Lock()
		last := m.statuses[len(m.statuses)-1]
		m.mu.Unlock()
		if last.Lead != l.id {
			t.Fatalf("member %d's last status names leader %d, want %d", m.id, last.Lead, l.id)
		}
	}
}

func TestLeaderReportsFollowersCaughtUpByEntries(t *testing.T) {
	ms, netw := startMembers(t, 3)
	waitUntil(t, "a leader", func() bool { return leaderOf(ms) != nil })
	l := leaderOf(ms)
	var fs []*member
	for _, m := range ms {
		if m != l {
			fs = append(fs, m)
		}
	}
	// A new leader probes every follower, then streams entries to it.
	for _, f := range fs {
		waitUntil(t, fmt.Sprintf("follower %d caught up at election", f.id), func() bool { d, _ := l.syncs(f.id); return d >= 1 })
	}
	if d, s := l.syncs(l.id); d != 0 || s != 0 {
		t.Errorf("the leader reported itself caught up: %d, %d", d, s)
	}
	for _, f := range fs {
		if d, s := f.syncs(l.id); d != 0 || s != 0 {
			t.Errorf("follower %d reported catch-ups: %d, %d", f.id, d, s)
		}
	}
	// A follower cut off while entries are committed is caught up by them
	// once it is back (the leader's log is not compacted: no snapshot).
	f := fs[0]
	before, _ := l.syncs(f.id)
	netw.Isolate(f.id)
	l.propose("while cut off")
	waitUntil(t, "the leader and the other follower apply it", func() bool { return len(l.got()) == 1 && len(fs[1].got()) == 1 })
	netw.Heal()
	waitUntil(t, "the cut-off follower applies it", func() bool { return len(f.got()) == 1 })
	waitUntil(t, "the cut-off follower reported caught up", func() bool { d, _ := l.syncs(f.id); return d > before })
	if _, s := l.syncs(f.id); s != 0 {
		t.Errorf("%d snapshot catch-ups reported, want none", s)
	}
}

func TestMinorityPartitionCannotCommit(t *testing.T) {
	ms, netw := startMembers(t, 3)
	waitUntil(t, "a leader", func() bool { return leaderOf(ms) != nil })
	l := leaderOf(ms)
	netw.Isolate(l.id)
	waitUntil(t, "the isolated leader steps down", func() bool { return l.node.Status().State != raft.StateLeader })
	l.propose("lost")
	var others []*member
	for _, m := range ms {
		if m != l {
			others = append(others, m)
		}
	}
	waitUntil(t, "a new leader", func() bool { nl := leaderOf(others); return nl != nil })
	nl := leaderOf(others)
	nl.propose("kept")
	netw.Heal()
	for _, m := range ms {
		waitUntil(t, fmt.Sprintf("member %d applies the majority's entry", m.id), func() bool { return len(m.got()) >= 1 })
		for _, g := range m.got() {
			if g == "lost" {
				t.Fatalf("member %d applied an entry proposed in a minority", m.id)
			}
		}
	}
}

func TestProposeWithoutLeaderIsDropped(t *testing.T) {
	ms, netw := startMembers(t, 3)
	netw.Partition() // nobody talks: no leader can be elected
	m := ms[0]
	dropped := make(chan error, 1)
	m.mu.Lock()
	m.pending = nil
	m.mu.Unlock()
	m.node.cfg.Proposals = func() []Proposal {
		return []Proposal{{Data: []byte("x"), Dropped: func(err error) { dropped <- err }}}
	}
	m.node.Wake()
	select {
	case err := <-dropped:
		if err != raft.ErrProposalDropped {
			t.Fatalf("dropped with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("a proposal without a leader was neither committed nor dropped")
	}
}

// A snapshot marker that meets a full disk waits for space like any WAL
// write: it used to stop the member with a fatal error.
func TestSnapshotMarkerWaitsOutAFullDisk(t *testing.T) {
	defer func(d time.Duration) { diskFullRetry = d }(diskFullRetry)
	diskFullRetry = 5 * time.Millisecond
	ms, _ := startMembers(t, 1)
	m := ms[0]
	waitUntil(t, "leadership", func() bool { return leaderOf(ms) == m })
	for i := 0; i < 10; i++ {
		m.propose(fmt.Sprint(i))
	}
	waitUntil(t, "every entry handed over", func() bool { return len(m.got()) == 10 })
	m.wal.mu.Lock()
	last := m.wal.ents[len(m.wal.ents)-1]
	m.wal.snapFull = 3
	m.wal.mu.Unlock()
	m.node.SnapshotSaved(&raftpb.SnapshotMetadata{Index: proto.Uint64(last.GetIndex()), Term: proto.Uint64(last.GetTerm()),
		ConfState: &raftpb.ConfState{Voters: []uint64{1}}})
	waitUntil(t, "the snapshot marker, once the disk has room", func() bool {
		m.wal.mu.Lock()
		defer m.wal.mu.Unlock()
		return m.wal.snap.GetIndex() == last.GetIndex()
	})
	m.propose("after")
	waitUntil(t, "a write after the full disk", func() bool { return len(m.got()) == 11 })
}

// gatedWAL is a memWAL whose next Save, once hold is set, waits for
// release; it records how many entries each Save carried.
type gatedWAL struct {
	*memWAL
	hold    atomic.Bool
	held    chan struct{}
	release chan struct{}

	mu    sync.Mutex
	sizes []int // entries per Save that had any
}

func (w *gatedWAL) Save(hs *raftpb.HardState, ents []*raftpb.Entry, mustSync bool) error {
	if w.hold.CompareAndSwap(true, false) {
		w.held <- struct{}{}
		<-w.release
	}
	if len(ents) > 0 {
		w.mu.Lock()
		w.sizes = append(w.sizes, len(ents))
		w.mu.Unlock()
	}
	return w.memWAL.Save(hs, ents, mustSync)
}

func TestMessagesQueuedDuringAWriteShareTheNextOne(t *testing.T) {
	wal := &gatedWAL{memWAL: &memWAL{snap: BootstrapSnapshot([]uint64{1}, nil)},
		held: make(chan struct{}), release: make(chan struct{})}
	m := &member{id: 1, wal: wal.memWAL, updates: make(chan Update, 16)}
	st, applied := wal.recover(t)
	node, err := StartNode(Config{
		ID: 1, Storage: st, Applied: applied, WAL: wal, Updates: m.updates, Proposals: m.proposals,
		Tick: time.Millisecond, Campaign: true, Fatal: func(err error) { t.Errorf("fatal: %v", err) },
	})
	if err != nil {
		t.Fatal(err)
	}
	m.node = node
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); m.drain(t, done) }()
	t.Cleanup(func() { node.Stop(); close(done); wg.Wait() })
	waitUntil(t, "leadership", func() bool { return leaderOf([]*member{m}) == m })

	// The loop blocks writing "first"; meanwhile proposals forwarded by
	// another member queue up, each in a message of its own.
	wal.hold.Store(true)
	m.propose("first")
	<-wal.held
	const k = 20
	for i := range k {
		node.Deliver(&raftpb.Message{Type: raftpb.MessageType_MsgProp.Enum(), From: proto.Uint64(2), To: proto.Uint64(1),
			Entries: []*raftpb.Entry{{Data: []byte(fmt.Sprint("forwarded ", i))}}})
	}
	if got := len(node.recvc); got != k {
		t.Fatalf("%d messages queued, want %d", got, k)
	}
	wal.mu.Lock()
	before := len(wal.sizes)
	wal.mu.Unlock()
	close(wal.release)
	waitUntil(t, "every entry handed over", func() bool { return len(m.got()) == k+1 })
	wal.mu.Lock()
	defer wal.mu.Unlock()
	if after := wal.sizes[before:]; len(after) != 2 || after[0] != 1 || after[1] != k {
		t.Fatalf("writes after the held one carried %v entries, want [1 %d]: the queued messages should share one write", after, k)
	}
}

// A leader that a conf change removed hands leadership over; when raft
// gives up on the transfer (here its MsgTimeoutNow is lost), the leader
// tries again rather than leading on, out of the voters, for ever (the
// others hear its heartbeats, so they never elect a leader of their own).
func TestRemovedLeaderHandsOverAgainWhenATransferFails(t *testing.T) {
	ms, netw := startMembers(t, 3)
	waitUntil(t, "a leader", func() bool { return leaderOf(ms) != nil })
	l := leaderOf(ms)
	netw.DropTypes(raftpb.MessageType_MsgTimeoutNow)
	l.node.ProposeConfChange(&raftpb.ConfChangeV2{Changes: []*raftpb.ConfChangeSingle{
		{Type: raftpb.ConfChangeType_ConfChangeRemoveNode.Enum(), NodeId: proto.Uint64(l.id)}}})
	// One MsgTimeoutNow lost is the first transfer; raft gives it up after
	// an election timeout, and a second one lost is the leader trying again.
	waitUntil(t, "the leader's second try at handing over", func() bool { return netw.Dropped() >= 2 })
	if leaderOf(ms) != l {
		t.Fatal("leadership moved although every MsgTimeoutNow was lost")
	}
	netw.DropTypes()
	waitUntil(t, "a voter leading", func() bool {
		nl := leaderOf(ms)
		return nl != nil && nl != l
	})
}

// startUnticked starts three members whose raft ticks never come (an hour
// each): member 1, told to campaign once all are up, leads, and no
// election timeout can elect anyone else, so only a fast election
// (PeerGone) can replace it. It returns once "before" is applied
// everywhere. stagger, when not zero, replaces fastStagger.
func startUnticked(t *testing.T, stagger time.Duration) ([]*member, *transport.Network) {
	t.Helper()
	ms, netw := startMembersWith(t, 3, func(c *Config) { c.Tick, c.stagger = time.Hour, stagger })
	ms[0].node.report(func(rn *raft.RawNode) { rn.Campaign() })
	waitUntil(t, "member 1 leading", func() bool { return leaderOf(ms) == ms[0] })
	ms[0].propose("before")
	for _, m := range ms {
		waitUntil(t, fmt.Sprintf("member %d applying the first entry", m.id), func() bool { return len(m.got()) == 1 })
	}
	return ms, netw
}

// killBehindThree commits an entry member 3 does not get, then cuts
// member 1, the leader, off: member 3's log is behind member 2's.
func killBehindThree(t *testing.T, ms []*member, netw *transport.Network) {
	t.Helper()
	netw.HoldEntries(3)
	ms[0].propose("member 3 lacks this")
	waitUntil(t, "member 2 applying the entry member 3 lacks", func() bool { return len(ms[1].got()) == 2 })
	netw.Isolate(1)
}

// releaseThree lets member 3 have the entry again and waits until it has
// caught up under member 2.
func releaseThree(t *testing.T, ms []*member, netw *transport.Network) {
	t.Helper()
	netw.ReleaseEntries(3)
	waitUntil(t, "member 3 catching up under member 2", func() bool { return len(ms[2].got()) == 2 })
}

// The voter with the highest id campaigns when it learns that its
// leader's process is gone, before the other follower has learnt it (that
// one, still following, refuses the pre-vote). It must ask again soon,
// not on its next tick: here ticks never come, so without the quick retry
// there would be no leader at all.
func TestFastElectionAsksAgainBeforeItsNextTick(t *testing.T) {
	ms, netw := startUnticked(t, 0)
	netw.Isolate(1)
	ms[2].node.PeerGone(1)
	waitUntil(t, "member 3 campaigning", func() bool { return ms[2].node.Status().State == raft.StatePreCandidate })
	ms[1].node.PeerGone(1)
	// Member 3 wins on its next try; member 2 would campaign too after
	// fastStagger, so on a very slow machine either may win.
	waitUntil(t, "a new leader", func() bool { return leaderOf(ms[1:]) != nil })
}

// When the voter with the highest id cannot win (its log is behind
// another follower's, whose vote it needs), the next voter campaigns a
// little later: the dead leader is still replaced without waiting for an
// election timeout (none ever comes here).
func TestFastElectionFallsToTheNextVoterWhenTheHighestCannotWin(t *testing.T) {
	ms, netw := startUnticked(t, 0)
	killBehindThree(t, ms, netw)
	ms[2].node.PeerGone(1)
	ms[1].node.PeerGone(1)
	waitUntil(t, "a new leader", func() bool { return leaderOf(ms[1:]) != nil })
	if l := leaderOf(ms[1:]); l != ms[1] {
		t.Fatalf("member %d leads; want member 2 (member 3's log is behind)", l.id)
	}
	releaseThree(t, ms, netw)
}

// The voter whose turn has not come campaigns at once when the candidate
// asking for its vote has a log behind its own: here its turn never comes
// (a stagger of an hour), so only that makes a leader.
func TestFastElectionVoterAheadOfTheCandidateCampaignsAtOnce(t *testing.T) {
	ms, netw := startUnticked(t, time.Hour)
	killBehindThree(t, ms, netw)
	ms[1].node.PeerGone(1)
	ms[2].node.PeerGone(1)
	waitUntil(t, "member 2 leading", func() bool { return leaderOf(ms[1:]) == ms[1] })
	releaseThree(t, ms, netw)
}

func TestDurableCommittedLeavesOutWhatTheReadyWrites(t *testing.T) {
	ents := func(idx ...uint64) []*raftpb.Entry {
		var out []*raftpb.Entry
		for _, i := range idx {
			out = append(out, &raftpb.Entry{Index: proto.Uint64(i), Term: proto.Uint64(1), Data: []byte{1}})
		}
		return out
	}
	indexes := func(es []*raftpb.Entry) []uint64 {
		var out []uint64
		for _, e := range es {
			out = append(out, e.GetIndex())
		}
		return out
	}
	conf := ents(3, 4, 5)
	conf[1].Type = raftpb.EntryType_EntryConfChangeV2.Enum()
	for _, tc := range []struct {
		name string
		rd   raft.Ready
		want []uint64
	}{
		{"nothing written now", raft.Ready{CommittedEntries: ents(3, 4, 5)}, []uint64{3, 4, 5}},
		{"a leader's next batch", raft.Ready{CommittedEntries: ents(3, 4), Entries: ents(5, 6)}, []uint64{3, 4}},
		{"a follower learning an entry and its commit together", raft.Ready{CommittedEntries: ents(3, 4, 5), Entries: ents(5, 6)}, []uint64{3, 4}},
		{"every committed entry written now", raft.Ready{CommittedEntries: ents(5), Entries: ents(5)}, nil},
		{"up to a membership change", raft.Ready{CommittedEntries: conf}, []uint64{3}},
		{"a snapshot", raft.Ready{CommittedEntries: ents(3), Snapshot: &raftpb.Snapshot{Metadata: &raftpb.SnapshotMetadata{Index: proto.Uint64(2), Term: proto.Uint64(1)}}}, nil},
	} {
		if got := indexes(durableCommitted(tc.rd)); !slices.Equal(got, tc.want) {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}
