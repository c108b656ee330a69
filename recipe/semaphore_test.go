package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

// TestSemaphoreNeverExceedsMax: many sessions take and return leases; at
// no time are more than max held, in process or as nodes on the server.
func TestSemaphoreNeverExceedsMax(t *testing.T) {
	const max, n, rounds = 3, 8, 6
	srv := startLockServer(t)
	ctx := testCtx(t)
	admin := lockConn(t, srv)
	var (
		inUse atomic.Int32
		wg    sync.WaitGroup
		errs  = make(chan error, n*rounds)
	)
	for i := range n {
		s := NewSemaphore(lockConn(t, srv), "/sem", max, []byte(fmt.Sprint(i)))
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				leases, err := s.Acquire(ctx, 1)
				if err != nil {
					errs <- err
					return
				}
				if k := inUse.Add(1); k > max {
					errs <- fmt.Errorf("%d leases in use, max %d", k, max)
				}
				parts, err := s.Participants(ctx)
				if err != nil || len(parts) > max {
					errs <- fmt.Errorf("lease nodes %v, %v; max %d", parts, err, max)
				}
				inUse.Add(-1)
				if err := s.Return(ctx, leases...); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if kids, _, err := admin.Children(ctx, "/sem/leases"); err != nil || len(kids) != 0 {
		t.Errorf("leases left: %v, %v", kids, err)
	}
}

// TestSemaphoreMultiAndExpiry: a session holding leases expires; its
// leases return and a waiter for several leases gets them.
func TestSemaphoreMultiAndExpiry(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	short := NewSemaphore(lockConn(t, srv, client.WithSessionTimeout(4*time.Second)), "/sem2", 3, nil)
	held, err := short.Acquire(ctx, 2)
	if err != nil || len(held) != 2 || held[1].Token <= held[0].Token {
		t.Fatalf("Acquire(2) = %+v, %v", held, err)
	}
	long := NewSemaphore(lockConn(t, srv, client.WithSessionTimeout(30*time.Second)), "/sem2", 3, nil)
	waiting := make(chan int, 16)
	long.onWait = func(n int) { waiting <- n }
	got := make(chan []Lease, 1)
	go func() {
		leases, err := long.Acquire(ctx, 2)
		if err != nil {
			t.Error(err)
		}
		got <- leases
	}()
	// The waiter holds one lease and waits, alone, for a second.
	select {
	case n := <-waiting:
		if n != 4 {
			t.Fatalf("waiter saw %d lease nodes, want 4", n)
		}
	case <-ctx.Done():
		t.Fatal("waiter never waited")
	}
	select {
	case <-got:
		t.Fatal("waiter got 2 leases while only 1 was free")
	default:
	}
	srv.ExpireSessions(srv.Clock.Advance(10 * time.Second))
	select {
	case leases := <-got:
		if len(leases) != 2 {
			t.Fatalf("waiter got %d leases", len(leases))
		}
		if err := long.Return(ctx, leases...); err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatal("waiter never got its leases after the holder expired")
	}
}

func TestSemaphoreCancelAndArgs(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	s := NewSemaphore(lockConn(t, srv), "/sem3", 2, nil)
	for _, n := range []int{0, -1, 3} {
		if _, err := s.Acquire(ctx, n); err == nil {
			t.Errorf("Acquire(%d) succeeded", n)
		}
	}
	held, err := s.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	other := NewSemaphore(lockConn(t, srv), "/sem3", 2, nil)
	cctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := other.Acquire(cctx, 1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire with no free lease = %v, want DeadlineExceeded", err)
	}
	if parts, err := s.Participants(ctx); err != nil || len(parts) != 2 {
		t.Errorf("after a timed-out Acquire lease nodes = %v, %v; want the 2 held", parts, err)
	}
	if err := s.Return(ctx, held...); err != nil {
		t.Fatal(err)
	}
	if err := s.Return(ctx, held...); err != nil {
		t.Errorf("second Return = %v, want nil", err)
	}
}
