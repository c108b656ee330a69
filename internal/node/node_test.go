package node

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/internal/transport"
	"github.com/wardenzk/warden/wire"
)

// cluster is n nodes over an in-memory network.
type cluster struct {
	t     *testing.T
	net   *transport.Network
	nodes []*Node
	cfgs  []Config
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func startCluster(t *testing.T, n int, tweak func(*Config)) *cluster {
	t.Helper()
	c := &cluster{t: t, net: transport.NewNetwork(1)}
	var members []Member
	for i := 1; i <= n; i++ {
		members = append(members, Member{ID: MemberID(i)})
	}
	for i := 1; i <= n; i++ {
		dir := t.TempDir()
		id := MemberID(i)
		cfg := Config{
			ID: id, Members: members, FS: storage.OSFS, DataDir: dir, DataLogDir: dir, ForceSync: true,
			Tick: 5 * time.Millisecond, Logger: quiet(),
			Transport: func(s transport.Snapshots) (transport.Transport, error) { return c.net.Join(id.RaftID(), s), nil },
			Fatal:     func(err error) { t.Errorf("member %d fatal: %v", id, err) },
		}
		if tweak != nil {
			tweak(&cfg)
		}
		c.cfgs = append(c.cfgs, cfg)
	}
	c.nodes = make([]*Node, n)
	var wg sync.WaitGroup
	for i := range c.cfgs {
		wg.Add(1)
		go func() { defer wg.Done(); c.start(i) }()
	}
	wg.Wait()
	t.Cleanup(func() {
		for _, nd := range c.nodes {
			if nd != nil {
				nd.Stop()
			}
		}
	})
	return c
}

func (c *cluster) start(i int) {
	nd, err := Open(c.cfgs[i])
	if err != nil {
		c.t.Errorf("open member %d: %v", i+1, err)
		return
	}
	if err := nd.Run(); err != nil {
		c.t.Errorf("run member %d: %v", i+1, err)
		return
	}
	c.nodes[i] = nd
}

// stopAllBut stops every member except member l.
func (c *cluster) stopAllBut(l int) {
	for i := range c.nodes {
		if i != l {
			c.nodes[i].Stop()
			c.nodes[i] = nil
		}
	}
}

func (c *cluster) waitFor(what string, cond func() bool) {
	c.t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			c.t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

func (c *cluster) leader() int {
	c.t.Helper()
	l := -1
	c.waitFor("a leader", func() bool {
		for i, nd := range c.nodes {
			if nd != nil && nd.Role() == Leading {
				l = i
				return true
			}
		}
		return false
	})
	return l
}

// session makes the create entries of session 1 valid.
func (c *cluster) session(i int) {
	c.t.Helper()
	if _, err := c.propose(i, &fsm.Entry{Op: wire.OpCreateSession, Session: 1,
		Body: wire.Marshal(&fsm.SessionRecord{Timeout: 1000, Passwd: make([]byte, 16)})}); err != nil {
		c.t.Fatal(err)
	}
}

// propose proposes e on member i and waits for its answer.
func (c *cluster) propose(i int, e *fsm.Entry) (fsm.Output, error) {
	type res struct {
		out fsm.Output
		err error
	}
	ch := make(chan res, 1)
	if err := c.nodes[i].Propose(e, time.Now(), func(out fsm.Output, err error) { ch <- res{out, err} }); err != nil {
		return fsm.Output{}, err
	}
	select {
	case r := <-ch:
		return r.out, r.err
	case <-time.After(20 * time.Second):
		c.t.Fatal("a proposal was never answered")
		return fsm.Output{}, nil
	}
}

func create(path string) *fsm.Entry {
	return &fsm.Entry{Op: wire.OpCreate, Session: 1, Body: wire.Marshal(&wire.CreateRequest{Path: path, ACL: wire.OpenACLUnsafe})}
}

func TestProposalsFromEveryMemberApplyEverywhereInOneOrder(t *testing.T) {
	c := startCluster(t, 3, nil)
	l := c.leader()
	c.session(l)
	var wg sync.WaitGroup
	for i := range c.nodes {
		c.waitFor("serving", func() bool { return c.nodes[i].Role().Serving() })
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := 0; k < 50; k++ {
				e := create(fmt.Sprintf("/m%d-%02d", i, k))
				e.Origin = int64(i + 1)
				out, err := c.propose(i, e)
				if err != nil || out.Err == wire.ErrSessionMoved {
					continue // other members' proposals for session 1 are moved: the owner is the leader
				}
			}
		}()
	}
	wg.Wait()
	var want uint64
	for _, nd := range c.nodes {
		want = max(want, nd.Applied())
	}
	c.waitFor("every member applied as far as the leader", func() bool {
		for _, nd := range c.nodes {
			if nd.Applied() < want {
				return false
			}
		}
		return true
	})
	zxids := map[fsm.Zxid]bool{}
	for _, nd := range c.nodes {
		nd.RLock()
		zxids[nd.FSM().LastZxid()] = true
		nd.RUnlock()
	}
	if len(zxids) != 1 {
		t.Fatalf("members at different zxids: %v", zxids)
	}
}

func TestAProposalCutOffFromTheQuorumIsAnsweredNotLeftWaiting(t *testing.T) {
	c := startCluster(t, 3, nil)
	l := c.leader()
	c.session(l)
	c.net.Isolate(c.nodes[l].ID().RaftID())
	_, err := c.propose(l, create("/cut-off"))
	if !errors.Is(err, ErrProposalLost) {
		t.Fatalf("a proposal on an isolated leader: %v, want ErrProposalLost", err)
	}
}

func TestAProposalPastItsDeadlineIsAnswered(t *testing.T) {
	c := startCluster(t, 3, func(cfg *Config) {
		cfg.ProposeTimeout = 50 * time.Millisecond
		cfg.ElectionTicks = 60 // the leader notices it lost its quorum only after 300 ms
	})
	l := c.leader()
	c.session(l)
	c.stopAllBut(l)
	_, err := c.propose(l, create("/late"))
	if !errors.Is(err, ErrProposalLost) || !strings.Contains(err.Error(), "not applied within") {
		t.Fatalf("a proposal that cannot commit: %v, want ErrProposalLost", err)
	}
}

func TestStopAnswersWaitingProposals(t *testing.T) {
	c := startCluster(t, 3, func(cfg *Config) { cfg.ElectionTicks = 60 })
	l := c.leader()
	c.session(l)
	c.stopAllBut(l)
	ch := make(chan error, 1)
	if err := c.nodes[l].Propose(create("/x"), time.Now(), func(_ fsm.Output, err error) { ch <- err }); err != nil {
		t.Fatal(err)
	}
	c.nodes[l].Stop()
	c.nodes[l] = nil
	select {
	case err := <-ch:
		if !errors.Is(err, ErrProposalLost) {
			t.Fatalf("answered with %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Stop left a proposal waiting")
	}
	if err := (&Node{stopped: true}).Propose(create("/y"), time.Now(), nil); !errors.Is(err, ErrNotServing) {
		t.Fatalf("Propose on a stopped node: %v", err)
	}
}

func TestAMemberBehindTheCompactedLogInstallsASnapshot(t *testing.T) {
	c := startCluster(t, 3, func(cfg *Config) { cfg.SnapCount = 10 })
	l := c.leader()
	c.session(l)
	f := (l + 1) % 3
	c.net.Isolate(c.nodes[f].ID().RaftID())
	for k := 0; k < 60; k++ {
		if out, err := c.propose(l, create(fmt.Sprintf("/n%02d", k))); err != nil || out.Err != wire.CodeOK {
			t.Fatalf("create: %v %v", out.Err, err)
		}
	}
	c.net.Heal()
	want := c.nodes[l].Applied()
	c.waitFor("the cut-off member caught up", func() bool { return c.nodes[f].Applied() >= want })
	c.nodes[f].RLock()
	_, _, ok := c.nodes[f].FSM().Tree().Lookup("/n59")
	c.nodes[f].RUnlock()
	if !ok {
		t.Fatal("the member that caught up lacks /n59")
	}
}
