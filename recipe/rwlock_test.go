package recipe

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
)

// acquireAsync starts l.Acquire in a goroutine and returns once it waits
// on a node (whose name is returned) or has acquired (""), with the
// channel its result arrives on.
func acquireAsync(t *testing.T, ctx context.Context, l *Lock) (string, chan error) {
	t.Helper()
	waiting := make(chan string, 16)
	l.onWait = func(w string) { waiting <- w }
	res := make(chan error, 1)
	go func() {
		_, err := l.Acquire(ctx)
		res <- err
	}()
	select {
	case w := <-waiting:
		return w, res
	case err := <-res:
		if err != nil {
			t.Fatalf("Acquire: %v", err)
		}
		res <- nil
		return "", res
	case <-ctx.Done():
		t.Fatal("Acquire neither waited nor returned")
		return "", nil
	}
}

func mustResult(t *testing.T, ctx context.Context, res chan error, what string) {
	t.Helper()
	select {
	case err := <-res:
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	case <-ctx.Done():
		t.Fatalf("%s: never acquired", what)
	}
}

func nameOf(t *testing.T, l *Lock) string {
	t.Helper()
	lease, ok := l.Lease()
	if !ok {
		t.Fatal("lock not held")
	}
	return lease.Path[len(l.dir)+1:]
}

// TestRWLockQueue: readers share; a writer waits for the readers before it;
// a reader arriving after a waiting writer waits for that writer (fair),
// watching it rather than its predecessor reader.
func TestRWLockQueue(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	r1 := NewRWLock(lockConn(t, srv), "/rw").ReadLock()
	r2 := NewRWLock(lockConn(t, srv), "/rw").ReadLock()
	w := NewRWLock(lockConn(t, srv), "/rw").WriteLock()
	r3 := NewRWLock(lockConn(t, srv), "/rw").ReadLock()

	if _, err := r1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if watched, res := acquireAsync(t, ctx, r2); watched != "" {
		t.Fatalf("second reader waits on %s, want shared grant", watched)
	} else {
		mustResult(t, ctx, res, "second reader")
	}
	watched, wres := acquireAsync(t, ctx, w)
	if watched != nameOf(t, r2) {
		t.Fatalf("writer watches %q, want the node just before it (%s)", watched, nameOf(t, r2))
	}
	watched, r3res := acquireAsync(t, ctx, r3)
	if _, ok := w.Lease(); ok {
		t.Fatal("writer holds while readers do")
	}
	parts, err := w.Participants(ctx)
	if err != nil || len(parts) != 1 || parts[0][len("/rw/"):] != watched {
		t.Fatalf("late reader watches %q; write participants %v, %v", watched, parts, err)
	}
	if err := r1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r2.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustResult(t, ctx, wres, "writer")
	select {
	case err := <-r3res:
		t.Fatalf("late reader got the lock while the writer holds it (%v)", err)
	default:
	}
	if err := w.Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustResult(t, ctx, r3res, "late reader")
	if n := r3.wakeups.Load(); n != 1 {
		t.Errorf("late reader woke %d times, want 1", n)
	}
	r3.Release(ctx)
}

// TestRWLockDowngrade: the write holder takes the read half at once, then
// drops the write half; a writer queued later still waits for the read.
func TestRWLockDowngrade(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	rw := NewRWLock(lockConn(t, srv), "/down")
	if _, err := rw.WriteLock().Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	if watched, res := acquireAsync(t, ctx, rw.ReadLock()); watched != "" {
		t.Fatalf("write holder's read waits on %s", watched)
	} else {
		mustResult(t, ctx, res, "downgrade read")
	}
	other := NewRWLock(lockConn(t, srv), "/down").WriteLock()
	watched, res := acquireAsync(t, ctx, other)
	if watched != nameOf(t, rw.ReadLock()) {
		t.Fatalf("later writer watches %q, want the read node", watched)
	}
	if err := rw.WriteLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.ReadLock().Release(ctx); err != nil {
		t.Fatal(err)
	}
	mustResult(t, ctx, res, "later writer")
	other.Release(ctx)
}

// TestRWLockExclusion: writers increment under the write half while
// readers check that no writer is inside with them.
func TestRWLockExclusion(t *testing.T) {
	const writers, readers, rounds = 4, 4, 10
	srv := startLockServer(t)
	ctx := testCtx(t)
	var (
		wIn, rIn atomic.Int32
		count    atomic.Int32
		wg       sync.WaitGroup
		errs     = make(chan error, writers+readers)
	)
	for i := range writers + readers {
		rw := NewRWLock(lockConn(t, srv), "/rwx")
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := rw.ReadLock()
			if i < writers {
				l = rw.WriteLock()
			}
			for range rounds {
				if _, err := l.Acquire(ctx); err != nil {
					errs <- err
					return
				}
				if i < writers {
					if w, r := wIn.Add(1), rIn.Load(); w != 1 || r != 0 {
						errs <- fmt.Errorf("writer inside with %d writers, %d readers", w, r)
					}
					count.Add(1)
					wIn.Add(-1)
				} else {
					rIn.Add(1)
					if w := wIn.Load(); w != 0 {
						errs <- fmt.Errorf("reader inside with %d writers", w)
					}
					rIn.Add(-1)
				}
				if err := l.Release(ctx); err != nil {
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
	if count.Load() != writers*rounds {
		t.Errorf("count = %d, want %d", count.Load(), writers*rounds)
	}
}
