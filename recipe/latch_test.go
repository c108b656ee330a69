package recipe

import (
	"context"
	"errors"
	"fmt"
	"github.com/wardenzk/warden/server/servertest"
	"regexp"
	"slices"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

// startLatches starts n latches on path, each on its own session, and
// returns them in queue order (latch i holds the i-th lowest node). Each is
// closed at cleanup.
func startLatches(t *testing.T, srv *servertest.Server, ctx context.Context, path string, n int, opts ...client.Option) []*LeaderLatch {
	t.Helper()
	var latches []*LeaderLatch
	for i := range n {
		l := NewLeaderLatch(lockConn(t, srv, opts...), path, fmt.Sprintf("p%d", i))
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close(context.Background()) })
		latches = append(latches, l)
	}
	return latches
}

// leaders returns the latches that currently believe they lead.
func leaders(latches []*LeaderLatch) []*LeaderLatch {
	var out []*LeaderLatch
	for _, l := range latches {
		if l.IsLeader() {
			out = append(out, l)
		}
	}
	return out
}

// TestLeaderLatchHandOver: over several hand-overs exactly one participant
// leads at a time, it is the one the server lists first, the fencing token
// grows, and closing the leader wakes only its successor.
func TestLeaderLatchHandOver(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const n = 5
	latches := startLatches(t, srv, ctx, "/election/handover", n)

	var lastToken int64
	for round := range n {
		next := latches[0]
		term, err := next.Await(ctx)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		if got := leaders(latches); len(got) != 1 || got[0] != next {
			t.Fatalf("round %d: %d participants lead, want exactly %s", round, len(got), next.ID())
		}
		if term.Token <= lastToken {
			t.Errorf("round %d: token %d not above the previous leader's %d", round, term.Token, lastToken)
		}
		lastToken = term.Token
		if term.Node != next.Node() {
			t.Errorf("round %d: term node %s, latch node %s", round, term.Node, next.Node())
		}
		leader, ok, err := next.Leader(ctx)
		if err != nil || !ok || leader.ID != next.ID() || !leader.IsLeader {
			t.Errorf("round %d: server's leader = %+v, %v, %v; want %s", round, leader, ok, err, next.ID())
		}
		ps, err := next.Participants(ctx)
		if err != nil || len(ps) != len(latches) {
			t.Fatalf("round %d: participants = %+v, %v", round, ps, err)
		}

		// Every round trip on the others' sessions delivers any event the
		// previous hand-over caused: a herd would show up as extra wakeups.
		var wakeups int64
		for _, l := range latches[1:] {
			if _, _, err := l.c.Exists(ctx, "/"); err != nil {
				t.Fatal(err)
			}
		}
		for _, l := range latches {
			wakeups += l.wakeups.Swap(0)
		}
		if round > 0 && wakeups != 1 {
			t.Errorf("round %d: hand-over woke %d participants, want 1", round, wakeups)
		}

		if err := next.Close(ctx); err != nil {
			t.Fatal(err)
		}
		select {
		case <-term.Lost:
		default:
			t.Errorf("round %d: Lost still open after Close", round)
		}
		if next.IsLeader() {
			t.Errorf("round %d: closed latch still leads", round)
		}
		if _, err := next.Await(ctx); !errors.Is(err, ErrLatchClosed) {
			t.Errorf("round %d: Await after Close = %v, want ErrLatchClosed", round, err)
		}
		latches = latches[1:]
	}
}

// TestLeaderLatchLayout: the node is Curator's protected latch node holding
// the participant id, owned by the participant's session.
func TestLeaderLatchLayout(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	c := lockConn(t, srv)
	l := NewLeaderLatch(c, "/election/layout", "worker-1")
	if err := l.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer l.Close(ctx)
	re := regexp.MustCompile(`^/election/layout/_c_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}-latch-[0-9]{10}$`)
	if !re.MatchString(l.Node()) {
		t.Errorf("node %q does not match Curator's LeaderLatch layout", l.Node())
	}
	data, st, err := c.Get(ctx, l.Node())
	if err != nil {
		t.Fatal(err)
	}
	if string(data) != "worker-1" || st.EphemeralOwner != c.SessionID() {
		t.Errorf("node data %q owner %#x; want %q owned by %#x", data, st.EphemeralOwner, "worker-1", c.SessionID())
	}
	term, err := l.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if term.Token != st.Czxid {
		t.Errorf("token %d, node czxid %d", term.Token, st.Czxid)
	}
	select {
	case v := <-l.Changes():
		if !v {
			t.Error("Changes carried false while leading")
		}
	case <-ctx.Done():
		t.Fatal("no value on Changes")
	}
}

// TestLeaderLatchExpiredLeaderReplaced: the leader's session expires; the
// next participant leads with a larger token, and the old leader's term is
// lost and Await reports the expiry.
func TestLeaderLatchExpiredLeaderReplaced(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	old := startLatches(t, srv, ctx, "/election/expiry", 1, client.WithSessionTimeout(4*time.Second))[0]
	rest := startLatches(t, srv, ctx, "/election/expiry", 2, client.WithSessionTimeout(30*time.Second))
	first, err := old.Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// Past the old leader's deadline, well before the others'.
	srv.ExpireSessions(srv.Clock.Advance(10 * time.Second))
	second, err := rest[0].Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if second.Token <= first.Token {
		t.Errorf("new token %d not above the expired leader's %d", second.Token, first.Token)
	}
	select {
	case <-first.Lost:
	case <-ctx.Done():
		t.Fatal("expired leader's Lost never closed")
	}
	if _, err := old.Await(ctx); !errors.Is(err, client.ErrSessionExpired) {
		t.Errorf("Await on the expired latch = %v, want ErrSessionExpired", err)
	}
	if got := leaders(append(rest, old)); len(got) != 1 || got[0] != rest[0] {
		t.Errorf("%d leaders after expiry, want only %s", len(got), rest[0].ID())
	}
}

// TestLeaderLatchNodeDeleted: an administrator deletes the leader's node; the
// leader loses its term and rejoins at the back of the queue.
func TestLeaderLatchNodeDeleted(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	latches := startLatches(t, srv, ctx, "/election/deleted", 2)
	term, err := latches[0].Await(ctx)
	if err != nil {
		t.Fatal(err)
	}
	admin := lockConn(t, srv)
	if err := admin.Delete(ctx, term.Node, -1); err != nil {
		t.Fatal(err)
	}
	select {
	case <-term.Lost:
	case <-ctx.Done():
		t.Fatal("Lost never closed after the leader's node was deleted")
	}
	if _, err := latches[1].Await(ctx); err != nil {
		t.Fatal(err)
	}
	ps, err := latches[1].Participants(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]string, 0, len(ps))
	for _, p := range ps {
		ids = append(ids, p.ID)
	}
	// The old leader may still be re-creating its node.
	if !slices.Equal(ids, []string{"p1", "p0"}) && !slices.Equal(ids, []string{"p1"}) {
		t.Errorf("queue after deletion = %v, want [p1 p0]", ids)
	}
	if err := latches[1].Close(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := latches[0].Await(ctx); err != nil {
		t.Fatalf("rejoined participant never led again: %v", err)
	}
}

// TestLeaderLatchAwaitContext: a participant that is not first waits until
// its ctx ends; a latch never started reports ErrLatchClosed.
func TestLeaderLatchAwaitContext(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	latches := startLatches(t, srv, ctx, "/election/ctx", 2)
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := latches[1].Await(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Errorf("Await of the second participant = %v, want DeadlineExceeded", err)
	}
	idle := NewLeaderLatch(latches[0].c, "/election/ctx", "idle")
	if _, err := idle.Await(ctx); !errors.Is(err, ErrLatchClosed) {
		t.Errorf("Await before Start = %v, want ErrLatchClosed", err)
	}
	if err := latches[0].Start(ctx); err == nil {
		t.Error("second Start succeeded")
	}
}
