package recipe

import (
	"context"
	"errors"
	"github.com/wardenzk/warden/server/servertest"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

// twoPhase sets up a transaction at path with the named sites, each on its
// own session, joined before it returns.
func twoPhase(t *testing.T, srv *servertest.Server, ctx context.Context, path string, sites ...string) (*Transaction, map[string]*TxSite, map[string]*client.Conn) {
	t.Helper()
	tx, err := NewTransaction(ctx, lockConn(t, srv), path, sites)
	if err != nil {
		t.Fatal(err)
	}
	ss := map[string]*TxSite{}
	conns := map[string]*client.Conn{}
	for _, s := range sites {
		c := lockConn(t, srv)
		site, err := JoinTransaction(ctx, c, path, s)
		if err != nil {
			t.Fatal(err)
		}
		ss[s], conns[s] = site, c
	}
	return tx, ss, conns
}

func TestTwoPhaseCommit(t *testing.T) {
	for _, tc := range []struct {
		name  string
		votes map[string]bool
		want  Decision
	}{
		{"all commit", map[string]bool{"a": true, "b": true, "c": true}, TxCommit},
		{"one aborts", map[string]bool{"a": true, "b": false, "c": true}, TxAbort},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startLockServer(t)
			ctx := testCtx(t)
			tx, sites, _ := twoPhase(t, srv, ctx, "/tx/t1", "a", "b", "c")
			decided := make(chan Decision, 1)
			go func() {
				d, err := tx.Decide(ctx)
				if err != nil {
					t.Error(err)
				}
				decided <- d
			}()
			for s, v := range tc.votes {
				if err := sites[s].Vote(ctx, v); err != nil {
					t.Fatal(err)
				}
			}
			if d := <-decided; d != tc.want {
				t.Errorf("coordinator decided %v, want %v", d, tc.want)
			}
			for s, site := range sites {
				if d, err := site.Outcome(ctx); err != nil || d != tc.want {
					t.Errorf("site %s outcome %v, %v; want %v", s, d, err, tc.want)
				}
			}
		})
	}
}

// TestTwoPhaseSiteFailureAborts: a site that has joined and voted commit
// fails (its session ends) before the last vote: the coordinator aborts
// and the surviving sites learn it.
func TestTwoPhaseSiteFailureAborts(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	tx, sites, conns := twoPhase(t, srv, ctx, "/tx/t2", "a", "b", "c")
	if err := sites["a"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	joins := make(chan string, 3)
	tx.onJoin = func(s string) { joins <- s }
	decided := make(chan Decision, 1)
	go func() {
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Error(err)
		}
		decided <- d
	}()
	for range 3 {
		<-joins // the coordinator has seen every site
	}
	conns["b"].Close() // b crashes without voting
	if d := <-decided; d != TxAbort {
		t.Fatalf("coordinator decided %v after a site failed, want abort", d)
	}
	for _, s := range []string{"a", "c"} {
		if d, err := sites[s].Outcome(ctx); err != nil || d != TxAbort {
			t.Errorf("site %s outcome %v, %v", s, d, err)
		}
	}
	// A late commit vote changes nothing.
	if err := sites["c"].Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	if d, _ := sites["c"].Outcome(ctx); d != TxAbort {
		t.Errorf("decision changed to %v", d)
	}
}

// TestTwoPhaseTimeoutAborts: a site that never joins makes Decide abort
// when its ctx ends.
func TestTwoPhaseTimeoutAborts(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	tx, err := NewTransaction(ctx, lockConn(t, srv), "/tx/t3", []string{"a", "ghost"})
	if err != nil {
		t.Fatal(err)
	}
	a, err := JoinTransaction(ctx, lockConn(t, srv), "/tx/t3", "a")
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Vote(ctx, true); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	d, err := tx.Decide(short)
	if d != TxAbort || !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Decide = %v, %v; want abort, deadline exceeded", d, err)
	}
	if d, err := a.Outcome(ctx); err != nil || d != TxAbort {
		t.Errorf("site outcome %v, %v", d, err)
	}
}

func TestRendezvous(t *testing.T) {
	const parties = 4
	srv := startLockServer(t)
	ctx := testCtx(t)
	var wg sync.WaitGroup
	results := make([][]string, parties)
	for i := range parties {
		r := NewRendezvous(lockConn(t, srv), "/meet", parties)
		wg.Add(1)
		go func() {
			defer wg.Done()
			names, err := r.Meet(ctx, string(rune('a'+i)))
			if err != nil {
				t.Error(err)
				return
			}
			results[i] = names
		}()
	}
	wg.Wait()
	for i, names := range results {
		sorted := slices.Sorted(slices.Values(names))
		if !slices.Equal(sorted, []string{"a", "b", "c", "d"}) {
			t.Errorf("party %d met %v", i, names)
		}
	}
}

// TestRendezvousIncomplete: with a party missing, Meet ends with ctx and
// takes its node away.
func TestRendezvousIncomplete(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	c := lockConn(t, srv)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := NewRendezvous(c, "/meet2", 2).Meet(short, "alone"); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Meet = %v, want deadline exceeded", err)
	}
	kids, _, err := c.Children(ctx, "/meet2/parties")
	if err != nil || len(kids) != 0 {
		t.Errorf("parties left behind: %v, %v", kids, err)
	}
}

// TestIDGeneratorUnique: concurrent generators on many sessions never hand
// out the same id, each sees its ids increase, and no node is left.
func TestIDGeneratorUnique(t *testing.T) {
	const gens, each = 5, 40
	srv := startLockServer(t)
	ctx := testCtx(t)
	var mu sync.Mutex
	seen := map[int64]bool{}
	var wg sync.WaitGroup
	for g := range gens {
		gen := NewIDGenerator(lockConn(t, srv), "/ids/orders")
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := int64(-1)
			for range each {
				id, err := gen.Next(ctx)
				if err != nil {
					t.Errorf("generator %d: %v", g, err)
					return
				}
				if id <= last {
					t.Errorf("generator %d: id %d after %d", g, id, last)
				}
				last = id
				mu.Lock()
				if seen[id] {
					t.Errorf("id %d handed out twice", id)
				}
				seen[id] = true
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	if len(seen) != gens*each {
		t.Errorf("%d ids, want %d", len(seen), gens*each)
	}
	kids, _, err := lockConn(t, srv).Children(ctx, "/ids/orders")
	if err != nil || len(kids) != 0 {
		t.Errorf("nodes left: %v, %v", kids, err)
	}
}
