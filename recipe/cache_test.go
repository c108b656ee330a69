package recipe

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/wardenzk/warden/client"
)

// serverTree reads the subtree at root as the cache should hold it.
func serverTree(t *testing.T, ctx context.Context, c *client.Conn, root string) map[string]CachedNode {
	t.Helper()
	out := map[string]CachedNode{}
	if err := loadTree(ctx, c, root, out); err != nil {
		t.Fatal(err)
	}
	return out
}

// treeDiff describes how the cache differs from want (data and Mzxid; the
// child fields of a cached Stat may be stale by design), "" when equal.
func treeDiff(got, want map[string]CachedNode) string {
	var diffs []string
	for p, w := range want {
		g, ok := got[p]
		switch {
		case !ok:
			diffs = append(diffs, "missing "+p)
		case string(g.Data) != string(w.Data) || g.Stat.Mzxid != w.Stat.Mzxid || g.Stat.Czxid != w.Stat.Czxid:
			diffs = append(diffs, fmt.Sprintf("%s: cached %q@%d, server %q@%d", p, g.Data, g.Stat.Mzxid, w.Data, w.Stat.Mzxid))
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diffs = append(diffs, "extra "+p)
		}
	}
	sort.Strings(diffs)
	return strings.Join(diffs, "; ")
}

// awaitConverged waits, event by event, until the cache matches the server.
func awaitConverged(t *testing.T, ctx context.Context, tc *TreeCache, events <-chan CacheEvent, c *client.Conn, root string) {
	t.Helper()
	want := serverTree(t, ctx, c, root)
	for {
		diff := treeDiff(tc.Snapshot(), want)
		if diff == "" {
			break
		}
		select {
		case _, ok := <-events:
			if !ok {
				t.Fatalf("cache stopped (%v) with diff: %s", tc.Err(), diff)
			}
		case <-ctx.Done():
			t.Fatalf("cache never converged: %s", diff)
		}
	}
	// Children agree with the paths.
	for p := range want {
		kids, ok := tc.Children(p)
		if !ok {
			t.Fatalf("Children(%s) not cached", p)
		}
		for _, k := range kids {
			if _, ok := want[joinPath(p, k)]; !ok {
				t.Errorf("Children(%s) lists %s", p, k)
			}
		}
	}
}

// randomChanges applies n random creates, sets and deletes under root.
func randomChanges(t *testing.T, ctx context.Context, c *client.Conn, rng *rand.Rand, root string, n int) {
	t.Helper()
	for i := range n {
		tree := serverTree(t, ctx, c, root)
		paths := make([]string, 0, len(tree))
		for p := range tree {
			paths = append(paths, p)
		}
		sort.Strings(paths)
		p := paths[rng.IntN(len(paths))]
		var err error
		switch op := rng.IntN(5); {
		case op <= 1 && strings.Count(p, "/") < 4:
			_, err = c.Create(ctx, fmt.Sprintf("%s/n%08x", p, rng.Uint32()), []byte(fmt.Sprint("v", i)), client.Persistent, client.OpenACL)
		case op <= 3 || p == root:
			_, err = c.Set(ctx, p, []byte(fmt.Sprint("s", i)), -1)
		default:
			err = deleteTree(ctx, c, p)
		}
		if err != nil {
			t.Fatalf("change %d on %s: %v", i, p, err)
		}
	}
}

// deleteTree deletes p and its descendants.
func deleteTree(ctx context.Context, c *client.Conn, p string) error {
	kids, _, err := c.Children(ctx, p)
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := deleteTree(ctx, c, joinPath(p, k)); err != nil {
			return err
		}
	}
	return c.Delete(ctx, p, -1)
}

// TestTreeCacheConverges: random changes by another session; the cache
// ends up equal to the server.
func TestTreeCacheConverges(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	w := lockConn(t, srv)
	if _, err := w.Create(ctx, "/tree", []byte("root"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create(ctx, "/tree/pre", []byte("existing"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	tc, err := NewTreeCache(ctx, lockConn(t, srv), "/tree")
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	events := tc.Listen()
	if n, ok := tc.Get("/tree/pre"); !ok || string(n.Data) != "existing" {
		t.Fatalf("initial load: %+v %v", n, ok)
	}
	rng := rand.New(rand.NewPCG(7, 11))
	for round := range 3 {
		randomChanges(t, ctx, w, rng, "/tree", 60)
		awaitConverged(t, ctx, tc, events, w, "/tree")
		t.Logf("round %d: %d nodes converged", round, len(tc.Snapshot()))
	}
	// The root itself goes and comes back.
	if err := deleteTree(ctx, w, "/tree"); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create(ctx, "/tree", []byte("again"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	awaitConverged(t, ctx, tc, events, w, "/tree")
}

// gatedDialer lets a test cut the client's connection and hold the
// redial until it opens the gate.
type gatedDialer struct {
	mu   sync.Mutex
	cur  net.Conn
	gate chan struct{} // nil: dial at once
}

func (g *gatedDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	g.mu.Lock()
	gate := g.gate
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	nc, err := (&net.Dialer{}).DialContext(ctx, network, addr)
	g.mu.Lock()
	g.cur = nc
	g.mu.Unlock()
	return nc, err
}

// cut drops the live connection and holds redials until the returned
// function is called.
func (g *gatedDialer) cut() (open func()) {
	gate := make(chan struct{})
	g.mu.Lock()
	g.gate = gate
	nc := g.cur
	g.mu.Unlock()
	nc.Close()
	return func() {
		g.mu.Lock()
		g.gate = nil
		g.mu.Unlock()
		close(gate)
	}
}

// TestTreeCacheResyncAfterReconnect: changes made while the cache's client
// is disconnected produce no watch events; the re-read after the
// reconnect brings them in.
func TestTreeCacheResyncAfterReconnect(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	w := lockConn(t, srv)
	if _, err := w.Create(ctx, "/rs", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create(ctx, "/rs/a", []byte("1"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	d := &gatedDialer{}
	c := lockConn(t, srv, client.WithDialer(d.dial))
	tc, err := NewTreeCache(ctx, c, "/rs")
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	events := tc.Listen()

	open := d.cut()
	if _, err := w.Set(ctx, "/rs/a", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := w.Create(ctx, "/rs/b", []byte("new"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	open()
	resynced := false
	for !resynced {
		select {
		case ev, ok := <-events:
			if !ok {
				t.Fatalf("cache stopped: %v", tc.Err())
			}
			resynced = ev.Type == CacheResynced
		case <-ctx.Done():
			t.Fatal("no resync after the reconnect")
		}
	}
	awaitConverged(t, ctx, tc, events, w, "/rs")
}

func TestNodeCache(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	w := lockConn(t, srv)
	nc, err := NewNodeCache(ctx, lockConn(t, srv), "/single")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, ok := nc.Get(); ok {
		t.Fatal("missing node cached")
	}
	events := nc.Listen()
	next := func(want CacheEventType) CachedNode {
		t.Helper()
		select {
		case ev := <-events:
			if ev.Type != want {
				t.Fatalf("event %v, want %v", ev.Type, want)
			}
			return ev.Node
		case <-ctx.Done():
			t.Fatalf("no %v event", want)
			return CachedNode{}
		}
	}
	if _, err := w.Create(ctx, "/single", []byte("a"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if n := next(CacheNodeAdded); string(n.Data) != "a" {
		t.Errorf("added %q", n.Data)
	}
	if _, err := w.Set(ctx, "/single", []byte("b"), -1); err != nil {
		t.Fatal(err)
	}
	if n := next(CacheNodeUpdated); string(n.Data) != "b" {
		t.Errorf("updated %q", n.Data)
	}
	// A child does not enter a NodeCache.
	if _, err := w.Create(ctx, "/single/kid", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if err := deleteTree(ctx, w, "/single"); err != nil {
		t.Fatal(err)
	}
	next(CacheNodeRemoved)
	if _, ok := nc.Get(); ok {
		t.Error("deleted node still cached")
	}
	if err := nc.Resync(ctx); err != nil {
		t.Fatal(err)
	}
	next(CacheResynced)
	if err := nc.Close(); err != nil {
		t.Errorf("Close = %v", err)
	}
	if err := nc.Resync(ctx); err != nil && !errors.Is(err, client.ErrClosed) {
		t.Errorf("Resync after Close = %v", err)
	}
}
