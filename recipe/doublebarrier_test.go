package recipe

import (
	"context"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

var uuidName = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// TestDoubleBarrierEnterLeave: nobody gets through Enter before all members
// have arrived, nobody gets through Leave before all have started leaving,
// and the barrier is empty afterwards.
func TestDoubleBarrierEnterLeave(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const n = 5
	const path = "/barriers/double/round"
	var arrived, leaving atomic.Int64
	errc := make(chan error, n)
	for range n {
		b := NewDoubleBarrier(lockConn(t, srv), path, n)
		go func() {
			errc <- func() error {
				arrived.Add(1)
				if err := b.Enter(ctx); err != nil {
					return err
				}
				if got := arrived.Load(); got != n {
					t.Errorf("entered with %d of %d arrived", got, n)
				}
				leaving.Add(1)
				if err := b.Leave(ctx); err != nil {
					return err
				}
				if got := leaving.Load(); got != n {
					t.Errorf("left with %d of %d leaving", got, n)
				}
				return nil
			}()
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	kids, _, err := lockConn(t, srv).Children(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(kids) != 0 {
		t.Errorf("children after everyone left: %v", kids)
	}
}

// TestDoubleBarrierLayout: participant nodes are ephemeral UUIDs and the
// quorum creates "ready" (Curator's layout).
func TestDoubleBarrierLayout(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	c := lockConn(t, srv)
	b := NewDoubleBarrier(c, "/barriers/double/layout", 1)
	if err := b.Enter(ctx); err != nil {
		t.Fatal(err)
	}
	kids, _, err := c.Children(ctx, "/barriers/double/layout")
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(kids)
	if len(kids) != 2 || kids[1] != "ready" || !uuidName.MatchString(kids[0]) {
		t.Fatalf("children = %v, want [<uuid> ready]", kids)
	}
	_, st, err := c.Get(ctx, b.Node())
	if err != nil || st.EphemeralOwner != c.SessionID() {
		t.Errorf("participant node owner %#x, %v; want %#x", st.EphemeralOwner, err, c.SessionID())
	}
	if err := b.Leave(ctx); err != nil {
		t.Fatal(err)
	}
}

// TestDoubleBarrierEnterWaitsForQuorum: with fewer than members arrived,
// Enter blocks until its ctx ends, and then withdraws its node.
func TestDoubleBarrierEnterWaitsForQuorum(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	c := lockConn(t, srv)
	b := NewDoubleBarrier(c, "/barriers/double/quorum", 2)
	if err := b.Enter(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Enter alone = %v, want DeadlineExceeded", err)
	}
	// The abandoned Enter took its node back: it does not count later.
	if _, ok, err := c.Exists(ctx, b.Node()); ok || err != nil {
		t.Errorf("abandoned participant's node exists=%v, %v", ok, err)
	}
}

// TestDoubleBarrierCrashedParticipant: a participant that entered and then
// died (Conn closed, or session expired) does not hold the others in Leave,
// whether its node was the lowest (which the others wait on) or the highest
// (which the lowest waits on).
func TestDoubleBarrierCrashedParticipant(t *testing.T) {
	for _, tc := range []struct {
		name   string
		lowest bool // crash the participant with the lowest node, else the highest
		expire bool // expire the session, else close the Conn
	}{
		{"lowest closed", true, false},
		{"highest closed", false, false},
		{"lowest expired", true, true},
		{"highest expired", false, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := startLockServer(t)
			ctx := testCtx(t)
			const n = 4
			const path = "/barriers/double/crash"
			// Names are fixed at construction: sort the handles by name,
			// then give the victim a session short enough to expire in
			// the step below while the others' survive it.
			var members []*DoubleBarrier
			for range n {
				members = append(members, NewDoubleBarrier(nil, path, n))
			}
			slices.SortFunc(members, func(a, b *DoubleBarrier) int { return strings.Compare(a.name, b.name) })
			victimAt := n - 1
			if tc.lowest {
				victimAt = 0
			}
			for i, m := range members {
				timeout := 30 * time.Second
				if i == victimAt {
					timeout = 4 * time.Second
				}
				m.c = lockConn(t, srv, client.WithSessionTimeout(timeout))
			}
			errc := make(chan error, n)
			for _, m := range members {
				go func() { errc <- m.Enter(ctx) }()
			}
			for range n {
				if err := <-errc; err != nil {
					t.Fatal(err)
				}
			}
			victim := members[victimAt]
			members = slices.Delete(members, victimAt, victimAt+1)
			for _, m := range members {
				go func() { errc <- m.Leave(ctx) }()
			}
			if tc.expire {
				srv.ExpireSessions(srv.Clock.Advance(10 * time.Second))
			} else {
				victim.c.Close()
			}
			for range members {
				if err := <-errc; err != nil {
					t.Fatalf("Leave with a crashed participant = %v", err)
				}
			}
		})
	}
}
