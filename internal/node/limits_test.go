package node

import (
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/replica"
	"github.com/wardenzk/warden/wire"
)

func createWith(path string, data []byte) *fsm.Entry {
	return &fsm.Entry{Op: wire.OpCreate, Session: 1,
		Body: wire.Marshal(&wire.CreateRequest{Path: path, Data: data, ACL: wire.OpenACLUnsafe})}
}

// TestTheInMemoryLogStaysUnderMaxLogBytes floods a member with large
// proposals all at once: snapshots by bytes compact the log, and while it
// is over MaxLogBytes no proposal is handed to raft, so the log never
// holds more than MaxLogBytes plus what was in flight when it filled.
func TestTheInMemoryLogStaysUnderMaxLogBytes(t *testing.T) {
	const (
		entry       = 16 << 10
		maxLog      = 256 << 10
		maxProposal = 2 * entry
	)
	var mu sync.Mutex
	var c *cluster
	peak := uint64(0)
	c = startCluster(t, 1, func(cfg *Config) {
		cfg.MaxLogBytes, cfg.MaxProposalBytes = maxLog, maxProposal
		cfg.Hooks.Applied = func(*fsm.Entry, fsm.Output) {
			// The apply goroutine runs while the raft loop appends: each
			// apply samples the log as it stands.
			if nd := c.nodes[0]; nd != nil {
				mu.Lock()
				peak = max(peak, nd.raft.LogBytes())
				mu.Unlock()
			}
		}
	})
	c.leader()
	c.session(0)
	data := make([]byte, entry)
	const n = 200
	errs := make(chan error, n)
	for k := range n {
		e := createWith(fmt.Sprintf("/big%03d", k), data)
		if err := c.nodes[0].Propose(e, time.Now(), func(out fsm.Output, err error) {
			if err == nil && out.Err != wire.CodeOK {
				err = fmt.Errorf("create: %v", out.Err)
			}
			errs <- err
		}); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(20 * time.Second):
			t.Fatal("proposals not answered within 20s")
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Entries carry their encoding's few bytes of framing.
	if bound := uint64(maxLog + maxProposal + 2*entry); peak > bound {
		t.Fatalf("in-memory log reached %d bytes, bound %d", peak, bound)
	}
	if peak == 0 {
		t.Fatal("the log was never sampled")
	}
	t.Logf("peak in-memory log %d bytes (bound %d)", peak, maxLog)
	if c.nodes[0].lastSnap.Load() == nil {
		t.Fatal("no snapshot was taken although 3 MiB were written under a 256 KiB log bound")
	}
}

// TestAHeldBackProposalAnsweredMeanwhileIsNeverProposed: a proposal
// waiting in the pending queue (this member's proposals in flight are at
// MaxProposalBytes) that is answered meanwhile — here the leader steps
// down — is dropped unproposed: it is not applied when the ensemble can
// commit again. While it waits, its deadline does not run.
func TestAHeldBackProposalAnsweredMeanwhileIsNeverProposed(t *testing.T) {
	c := startCluster(t, 3, func(cfg *Config) {
		cfg.ProposeTimeout = time.Minute
		cfg.MaxProposalBytes = 1 // one proposal in flight at a time
	})
	l := c.leader()
	c.session(l)
	c.stopAllBut(l)
	answers := make(chan error, 2)
	for _, p := range []string{"/first", "/held"} {
		if err := c.nodes[l].Propose(create(p), time.Now(), func(_ fsm.Output, err error) { answers <- err }); err != nil {
			t.Fatal(err)
		}
	}
	// Alone, the leader steps down after an election timeout (check
	// quorum): both proposals are answered.
	for range 2 {
		select {
		case err := <-answers:
			if !errors.Is(err, ErrProposalLost) {
				t.Fatalf("a proposal that cannot commit was answered %v, want ErrProposalLost", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("proposals not answered within 10s of the leader losing its quorum")
		}
	}
	c.nodes[l].waitMu.Lock()
	inFlight := c.nodes[l].inFlight
	c.nodes[l].waitMu.Unlock()
	if inFlight != 0 {
		t.Fatalf("%d bytes still counted in flight after both proposals were answered", inFlight)
	}
	for i := range c.nodes {
		if i != l {
			c.start(i)
		}
	}
	nl := c.leader()
	c.waitFor("members serving", func() bool { return c.nodes[nl].Role().Serving() && c.nodes[l].Role().Serving() })
	// Through l, whose session it is: from another member (a new leader)
	// the create would be SESSIONMOVED.
	if out, err := c.propose(l, create("/after")); err != nil || out.Err != wire.CodeOK {
		t.Fatalf("create after the members came back: %v %v", out.Err, err)
	}
	for i, nd := range c.nodes {
		c.waitFor("member caught up", func() bool { return nd.Applied() >= c.nodes[nl].Applied() })
		nd.RLock()
		_, _, held := nd.FSM().Tree().Lookup("/held")
		nd.RUnlock()
		if held {
			t.Fatalf("member %d applied the held-back proposal its client was told was lost", i+1)
		}
	}
}

// TestTheInMemoryLogKeepsOnlyATail: with no snapshot due, a lone
// member's in-memory log is compacted right behind the applied index, to
// its tail, as writes go on (the WAL keeps them).
func TestTheInMemoryLogKeepsOnlyATail(t *testing.T) {
	const tail = 8 << 10
	c := startCluster(t, 1, func(cfg *Config) { cfg.MemTailBytes = tail })
	l := c.leader()
	c.session(l)
	data := make([]byte, 1<<10)
	for k := range 300 {
		if out, err := c.propose(l, createWith(fmt.Sprintf("/t%03d", k), data)); err != nil || out.Err != wire.CodeOK {
			t.Fatalf("create: %v %v", out.Err, err)
		}
	}
	if c.nodes[l].lastSnap.Load() != nil {
		t.Fatal("a snapshot was taken: this test wants none")
	}
	// The loop compacts at least once a tick.
	c.waitFor("the log compacted to its tail", func() bool { return c.nodes[l].raft.LogBytes() <= 2*tail })
}

// TestALoneMemberKeepsASmallTail: a member alone in its configuration
// keeps at most replica.SoloTailBytes of the default tail.
func TestALoneMemberKeepsASmallTail(t *testing.T) {
	c := startCluster(t, 1, nil)
	l := c.leader()
	c.session(l)
	data := make([]byte, 16<<10)
	for k := range 200 { // 3.2 MiB, past twice the solo tail
		if out, err := c.propose(l, createWith(fmt.Sprintf("/s%03d", k), data)); err != nil || out.Err != wire.CodeOK {
			t.Fatalf("create: %v %v", out.Err, err)
		}
	}
	if c.nodes[l].lastSnap.Load() != nil {
		t.Fatal("a snapshot was taken: this test wants none")
	}
	c.waitFor("the log compacted to the solo tail", func() bool { return c.nodes[l].raft.LogBytes() <= 2*replica.SoloTailBytes })
}

// TestAMemberBehindTheLogGetsAFreshSnapshot: a member cut off while the
// leader wrote more than it keeps for it (MaxLogBytes/2) is past the
// log's start and past the newest snapshot too (the log is compacted
// behind the applied index, not behind a snapshot): the leader takes a
// fresh snapshot for it, and it catches up.
func TestAMemberBehindTheLogGetsAFreshSnapshot(t *testing.T) {
	c := startCluster(t, 3, func(cfg *Config) {
		cfg.MemTailBytes = 1 << 10
		cfg.MaxLogBytes = 1 << 20 // keeps 512 KiB for a member; a snapshot every 256 KiB
	})
	l := c.leader()
	c.session(l)
	f := (l + 1) % 3
	c.net.Isolate(c.nodes[f].ID().RaftID())
	data := make([]byte, 4<<10)
	for k := range 200 { // 800 KiB: the last snapshot is at 768 KiB, the log starts 1 KiB from the end
		if out, err := c.propose(l, createWith(fmt.Sprintf("/f%03d", k), data)); err != nil || out.Err != wire.CodeOK {
			t.Fatalf("create: %v %v", out.Err, err)
		}
	}
	c.waitFor("the leader's log compacted past the cut-off member", func() bool { return c.nodes[l].raft.LogBytes() < 256<<10 })
	before := c.nodes[l].lastSnap.Load()
	c.net.Heal()
	want := c.nodes[l].Applied()
	c.waitFor("the cut-off member caught up", func() bool { return c.nodes[f].Applied() >= want })
	c.nodes[f].RLock()
	_, _, ok := c.nodes[f].FSM().Tree().Lookup("/f199")
	c.nodes[f].RUnlock()
	if !ok {
		t.Fatal("the member that caught up lacks /f199")
	}
	if after := c.nodes[l].lastSnap.Load(); before == nil || after == before {
		t.Fatal("no fresh snapshot was taken for the cut-off member")
	}
}
