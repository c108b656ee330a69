package recipe

import (
	"context"
	"errors"
	"testing"
	"time"
)

// TestBarrierReleasesAll: waiters block while the barrier is set and all
// return once it is removed.
func TestBarrierReleasesAll(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const n = 6
	b := NewBarrier(lockConn(t, srv), "/barriers/simple/b")
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Set(ctx); err != nil {
		t.Fatalf("second Set: %v", err)
	}

	// A bounded wait on a set barrier times out: Wait blocks.
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := NewBarrier(lockConn(t, srv), "/barriers/simple/b").Wait(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Wait on a set barrier = %v, want DeadlineExceeded", err)
	}

	done := make(chan error, n)
	for range n {
		w := NewBarrier(lockConn(t, srv), "/barriers/simple/b")
		go func() { done <- w.Wait(ctx) }()
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := <-done; err != nil {
			t.Errorf("Wait = %v", err)
		}
	}
	if err := b.Remove(ctx); err != nil {
		t.Errorf("Remove of an open barrier = %v", err)
	}
	if err := b.Wait(ctx); err != nil {
		t.Errorf("Wait on an open barrier = %v", err)
	}
}

// TestBarrierWaitEndsWithSession: a waiter whose Conn closes gets the
// client's error instead of hanging.
func TestBarrierWaitEndsWithSession(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	b := NewBarrier(lockConn(t, srv), "/barriers/closed")
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	c := lockConn(t, srv)
	done := make(chan error, 1)
	go func() { done <- NewBarrier(c, "/barriers/closed").Wait(ctx) }()
	// The waiter may be before or inside its wait; either way it must end.
	c.Close()
	if err := <-done; err == nil {
		t.Error("Wait returned nil after the Conn closed, with the barrier still set")
	}
}
