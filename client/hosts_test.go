package client

import (
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/wardenzk/warden/server/servertest"
)

func addrs(ports ...int) []string {
	var out []string
	for _, p := range ports {
		out = append(out, fmt.Sprintf("10.0.0.%d:2181", p))
	}
	return out
}

func seeded(seed uint64) *rand.Rand { return rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)) }

// TestHostListRoundRobin: the list is shuffled once, then tried in order,
// wrapping around.
func TestHostListRoundRobin(t *testing.T) {
	h := newHostList(addrs(1, 2, 3), seeded(1))
	first := h.list()
	var got []string
	for range 6 {
		got = append(got, h.next())
	}
	want := append(slices.Clone(first), first...)
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("picks %v, want %v", got, want)
	}
	sorted := slices.Clone(first)
	slices.Sort(sorted)
	if !reflect.DeepEqual(sorted, addrs(1, 2, 3)) {
		t.Fatalf("list %v is not a permutation of the input", first)
	}
}

// TestHostListUpdate covers the cases of ZooKeeper's updateServerList
// that do not depend on chance.
func TestHostListUpdate(t *testing.T) {
	t.Run("current stays, list shrinks: no move, round robin goes on", func(t *testing.T) {
		h := newHostList(addrs(1, 2, 3), seeded(2))
		cur := h.next()
		keep := []string{cur, otherThan(addrs(1, 2, 3), cur)}
		if h.update(keep, cur) {
			t.Fatal("moved although its server stays and the list shrank")
		}
		if n := h.next(); n == cur || !slices.Contains(keep, n) {
			t.Fatalf("next after update = %s, want the other kept server", n)
		}
	})
	t.Run("current removed, list shrinks: move to a kept server", func(t *testing.T) {
		h := newHostList(addrs(1, 2, 3), seeded(3))
		cur := h.next()
		rest := slices.DeleteFunc(addrs(1, 2, 3), func(a string) bool { return a == cur })
		if !h.update(rest, cur) {
			t.Fatal("did not move off a removed server")
		}
		seen := map[string]bool{}
		for range 2 {
			seen[h.next()] = true
		}
		if len(seen) != 2 || seen[cur] {
			t.Fatalf("picks after the move %v, want both remaining servers", seen)
		}
	})
	t.Run("current replaced: move to the new server first", func(t *testing.T) {
		h := newHostList(addrs(1, 2, 3), seeded(4))
		cur := h.next()
		next := slices.DeleteFunc(addrs(1, 2, 3), func(a string) bool { return a == cur })
		next = append(next, addrs(9)...)
		if !h.update(next, cur) {
			t.Fatal("did not move off a removed server")
		}
		if n := h.next(); n != addrs(9)[0] {
			t.Fatalf("first pick %s, want the new server %s", n, addrs(9)[0])
		}
	})
	t.Run("current removed, list grows: new servers first, then the kept ones, then round robin", func(t *testing.T) {
		h := newHostList(addrs(1, 2), seeded(5))
		cur := h.next()
		kept := otherThan(addrs(1, 2), cur)
		if !h.update([]string{kept, addrs(8)[0], addrs(9)[0]}, cur) {
			t.Fatal("did not move off a removed server")
		}
		var picks []string
		for range 3 {
			picks = append(picks, h.next())
		}
		if slices.Index(picks, kept) != 2 || !slices.Contains(picks, addrs(8)[0]) || !slices.Contains(picks, addrs(9)[0]) {
			t.Fatalf("picks %v, want both new servers, then %s", picks, kept)
		}
		// Round robin goes on from the last pick.
		round := h.list()
		at := slices.Index(round, kept)
		for i := 1; i <= 3; i++ {
			if n := h.next(); n != round[(at+i)%3] {
				t.Fatalf("pick %d after rebalancing = %s, want round robin %v after %s", i, n, round, kept)
			}
		}
	})
	t.Run("not connected: the last server tried stands for the current one", func(t *testing.T) {
		h := newHostList(addrs(1, 2, 3), seeded(6))
		last := h.next()
		if h.update(addrs(1, 2, 3), "") {
			t.Fatal("moved on an unchanged list")
		}
		if n := h.next(); n == last {
			t.Fatalf("next = %s again, want the one after it", n)
		}
	})
	t.Run("host names compare without case", func(t *testing.T) {
		h := newHostList([]string{"ZK1:2181"}, seeded(7))
		if h.update([]string{"zk1:2181"}, "ZK1:2181") {
			t.Fatal("moved: zk1 and ZK1 are the same server")
		}
	})
}

func otherThan(list []string, not string) string {
	for _, a := range list {
		if a != not {
			return a
		}
	}
	return ""
}

// TestHostListSpreadsLoad simulates many clients (seeded, so the test is
// deterministic) and checks the purpose of the algorithm: after growing
// the ensemble from 3 to 5 servers the clients spread evenly with about
// 2/5 of them moving; after shrinking it from 5 to 3 only the clients of
// the removed servers move, and the load is even again.
func TestHostListSpreadsLoad(t *testing.T) {
	const clients = 6000
	rnd := seeded(42)
	three, five := addrs(1, 2, 3), addrs(1, 2, 3, 4, 5)
	type client struct {
		h   *hostList
		cur string
	}
	cs := make([]client, clients)
	for i := range cs {
		cs[i].h = newHostList(three, seeded(rnd.Uint64()))
		cs[i].cur = cs[i].h.next()
	}
	load := func() map[string]int {
		m := map[string]int{}
		for _, c := range cs {
			m[c.cur]++
		}
		return m
	}
	even := func(m map[string]int, servers []string) {
		t.Helper()
		want := float64(clients) / float64(len(servers))
		for _, s := range servers {
			if math.Abs(float64(m[s])-want) > 0.1*want {
				t.Errorf("load %v, want about %.0f on each of %v", m, want, servers)
				return
			}
		}
	}
	even(load(), three)

	moved := 0
	for i := range cs {
		if cs[i].h.update(five, cs[i].cur) {
			moved++
			cs[i].cur = cs[i].h.next()
		}
	}
	if f := float64(moved) / clients; math.Abs(f-0.4) > 0.03 {
		t.Errorf("growing 3→5: %.3f of the clients moved, want about 0.4", f)
	}
	even(load(), five)

	moved = 0
	for i := range cs {
		before := cs[i].cur
		if cs[i].h.update(three, cs[i].cur) {
			moved++
			cs[i].cur = cs[i].h.next()
		} else if !slices.Contains(three, before) {
			t.Fatalf("client on removed %s did not move", before)
		}
	}
	if f := float64(moved) / clients; math.Abs(f-0.4) > 0.03 {
		t.Errorf("shrinking 5→3: %.3f of the clients moved, want about 0.4 (those of the removed servers)", f)
	}
	even(load(), three)
}

// TestUpdateServersMovesSession runs against an in-process Warden
// ensemble: a Conn on member 0 whose server list is replaced by members 1
// and 2 moves there at once, keeping its session and watches.
func TestUpdateServersMovesSession(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3)
	c := connect(t, e.Addr(0))
	ctx := ctxT(t)
	events := sessionWatcher{t, c.SessionEvents()}
	events.waitFor(StateConnected)
	sid := c.SessionID()
	must[string](t)(c.Create(ctx, "/n", nil, Ephemeral, OpenACL))
	_, _, ch, err := c.GetW(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateServers(e.Addr(1) + "," + e.Addr(2)); err != nil {
		t.Fatal(err)
	}
	events.waitFor(StateDisconnected)
	ev := events.waitFor(StateConnected)
	if ev.SessionID != sid || (ev.Server != e.Addr(1) && ev.Server != e.Addr(2)) {
		t.Fatalf("reconnected to %s with session %#x; want member 1 or 2, session %#x", ev.Server, ev.SessionID, sid)
	}
	if _, err := c.Set(ctx, "/n", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, ch); ev.Type != 3 { // NodeDataChanged
		t.Fatalf("watch after the move: %+v", ev)
	}
	// An unchanged list (in another order) does not move the client.
	if err := c.UpdateServers(e.Addr(2) + "," + e.Addr(1)); err != nil {
		t.Fatal(err)
	}
	if err := c.UpdateServers(""); err == nil {
		t.Fatal("UpdateServers with no servers succeeded")
	}
	// A move drops the link inside UpdateServers, so the state tells.
	if st, srv := c.State(), c.Server(); st != StateConnected || srv != ev.Server {
		t.Fatalf("after an update that keeps the server: %v on %q, want Connected on %s", st, srv, ev.Server)
	}
}
