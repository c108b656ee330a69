package recipe

import (
	"context"
	"errors"
	"fmt"
	"github.com/wardenzk/warden/server/servertest"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

// TestLockMutualExclusion: N sessions each add 1 to a counter node M
// times under the lock, with an unconditional read-modify-write that
// would lose updates if two held it at once. Tokens must grow with each
// grant.
func TestLockMutualExclusion(t *testing.T) {
	const n, m = 6, 15
	srv := startLockServer(t)
	ctx := testCtx(t)
	admin := lockConn(t, srv)
	if _, err := admin.Create(ctx, "/counter", []byte("0"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	var (
		inside    atomic.Int32
		tokenMu   sync.Mutex
		lastToken int64
		wg        sync.WaitGroup
		errs      = make(chan error, n)
	)
	for i := range n {
		c := lockConn(t, srv)
		wg.Add(1)
		go func() {
			defer wg.Done()
			l := NewLock(c, "/locks/counter")
			for range m {
				lease, err := l.Acquire(ctx)
				if err != nil {
					errs <- fmt.Errorf("client %d: acquire: %w", i, err)
					return
				}
				if k := inside.Add(1); k != 1 {
					errs <- fmt.Errorf("client %d: %d holders at once", i, k)
				}
				tokenMu.Lock()
				if lease.Token <= lastToken {
					errs <- fmt.Errorf("client %d: token %d not above previous %d", i, lease.Token, lastToken)
				}
				lastToken = lease.Token
				tokenMu.Unlock()
				data, _, err := c.Get(ctx, "/counter")
				if err == nil {
					v, _ := strconv.Atoi(string(data))
					_, err = c.Set(ctx, "/counter", []byte(strconv.Itoa(v+1)), -1)
				}
				inside.Add(-1)
				if err != nil {
					errs <- fmt.Errorf("client %d: counter: %w", i, err)
				}
				if err := l.Release(ctx); err != nil {
					errs <- fmt.Errorf("client %d: release: %w", i, err)
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
	data, _, err := admin.Get(ctx, "/counter")
	if err != nil || string(data) != strconv.Itoa(n*m) {
		t.Fatalf("counter = %q, %v; want %d", data, err, n*m)
	}
	// Every lock node is gone; the container parent stays until the
	// server's container sweep.
	children, _, err := admin.Children(ctx, "/locks/counter")
	if err != nil || len(children) != 0 {
		t.Errorf("lock children after all released = %v, %v", children, err)
	}
}

// queueWaiters starts k contenders on path one after the other, each on
// its own session, returning once each is waiting on its predecessor.
// Acquired leases arrive on the returned channel.
func queueWaiters(t *testing.T, srv *servertest.Server, ctx context.Context, path string, k int) ([]*Lock, chan *Lock) {
	t.Helper()
	acquired := make(chan *Lock, k)
	locks := make([]*Lock, k)
	for i := range k {
		waiting := make(chan string, 16)
		l := NewLock(lockConn(t, srv), path)
		l.onWait = func(w string) { waiting <- w }
		locks[i] = l
		go func() {
			if _, err := l.Acquire(ctx); err != nil {
				t.Errorf("waiter %d: %v", i, err)
				return
			}
			acquired <- l
		}()
		select {
		case <-waiting:
		case <-ctx.Done():
			t.Fatalf("waiter %d never waited", i)
		}
	}
	return locks, acquired
}

// TestLockReleaseWakesOneWaiter: with k waiters queued, each watches only
// its predecessor, so the k releases of the chain wake exactly k waits in
// total, one per waiter (a herd would wake every remaining waiter on each
// release).
func TestLockReleaseWakesOneWaiter(t *testing.T) {
	const k = 6
	srv := startLockServer(t)
	ctx := testCtx(t)
	holder := NewLock(lockConn(t, srv), "/herd")
	if _, err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	locks, acquired := queueWaiters(t, srv, ctx, "/herd", k)
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for i := range k {
		var l *Lock
		select {
		case l = <-acquired:
		case <-ctx.Done():
			t.Fatalf("waiter %d never acquired", i)
		}
		if l != locks[i] {
			t.Fatalf("grant %d went to another waiter than the next in line", i)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, l := range locks {
		if w := l.wakeups.Load(); w != 1 {
			t.Errorf("waiter %d woke %d times, want 1", i, w)
		}
	}
}

// TestLockExpiryHandsOff: the holder's session expires; its node goes, the
// next waiter gets the lock and the old holder's Lost channel closes.
func TestLockExpiryHandsOff(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	hc := lockConn(t, srv, client.WithSessionTimeout(4*time.Second))
	holder := NewLock(hc, "/expiry")
	first, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-holder.Lost():
		t.Fatal("Lost closed while the session is alive")
	default:
	}
	waiter := NewLock(lockConn(t, srv, client.WithSessionTimeout(30*time.Second)), "/expiry")
	got := make(chan Lease, 1)
	waiting := make(chan string, 1)
	waiter.onWait = func(w string) { waiting <- w }
	go func() {
		lease, err := waiter.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- lease
	}()
	<-waiting
	// Past the holder's deadline, well before the waiter's.
	srv.ExpireSessions(srv.Clock.Advance(10 * time.Second))
	select {
	case lease := <-got:
		if lease.Token <= first.Token {
			t.Errorf("new token %d not above expired holder's %d", lease.Token, first.Token)
		}
	case <-ctx.Done():
		t.Fatal("waiter never got the lock after the holder's session expired")
	}
	select {
	case <-holder.Lost():
	case <-ctx.Done():
		t.Fatal("expired holder's Lost never closed")
	}
	if err := holder.Release(ctx); err != nil {
		t.Errorf("Release after loss = %v, want nil", err)
	}
	if err := waiter.Release(ctx); err != nil {
		t.Error(err)
	}
}

// TestLockCancelledWaiterLeavesQueue: a waiter in the middle of the queue
// gives up; its node goes and the waiter behind it is not stranded.
func TestLockCancelledWaiterLeavesQueue(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	hc := lockConn(t, srv)
	holder := NewLock(hc, "/cancel")
	if _, err := holder.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	mid := NewLock(lockConn(t, srv), "/cancel")
	midWaiting := make(chan string, 1)
	mid.onWait = func(w string) { midWaiting <- w }
	midCtx, cancelMid := context.WithCancel(ctx)
	midErr := make(chan error, 1)
	go func() {
		_, err := mid.Acquire(midCtx)
		midErr <- err
	}()
	<-midWaiting
	_, acquired := queueWaiters(t, srv, ctx, "/cancel", 1)
	cancelMid()
	if err := <-midErr; !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled Acquire = %v", err)
	}
	parts, err := holder.Participants(ctx)
	if err != nil || len(parts) != 2 {
		t.Fatalf("participants after cancel = %v, %v; want holder and last waiter", parts, err)
	}
	if err := holder.Release(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case l := <-acquired:
		l.Release(ctx)
	case <-ctx.Done():
		t.Fatal("waiter behind the cancelled one never acquired")
	}
}

func TestLockMisuse(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	l := NewLock(lockConn(t, srv), "/misuse", WithLockData([]byte("host-1")))
	if err := l.Release(ctx); !errors.Is(err, ErrNotHeld) {
		t.Errorf("Release before Acquire = %v, want ErrNotHeld", err)
	}
	select {
	case <-l.Lost():
	default:
		t.Error("Lost of an unheld lock is not closed")
	}
	lease, err := l.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := l.Acquire(ctx); !errors.Is(err, ErrLockHeld) {
		t.Errorf("second Acquire = %v, want ErrLockHeld", err)
	}
	data, st, err := l.c.Get(ctx, lease.Path)
	if err != nil || string(data) != "host-1" || st.Czxid != lease.Token || st.EphemeralOwner != l.c.SessionID() {
		t.Errorf("lock node = %q %+v %v; want data host-1, czxid %d, ephemeral", data, st, err, lease.Token)
	}
	if got, ok := l.Lease(); !ok || got != lease {
		t.Errorf("Lease() = %+v, %v", got, ok)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if _, ok := l.Lease(); ok {
		t.Error("Lease() reports held after Release")
	}
}

// BenchmarkLockHandoff measures the time from a holder's Release to the
// queued waiter (another session) returning from Acquire.
func BenchmarkLockHandoff(b *testing.B) {
	srv := startLockServer(b)
	ctx := testCtx(b)
	holder := NewLock(lockConn(b, srv), "/bench")
	waiter := NewLock(lockConn(b, srv), "/bench")
	waiting := make(chan string, 1)
	holder.onWait = func(w string) { waiting <- w }
	waiter.onWait = holder.onWait
	if _, err := holder.Acquire(ctx); err != nil {
		b.Fatal(err)
	}
	done := make(chan error, 1)
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		go func() {
			_, err := waiter.Acquire(ctx)
			done <- err
		}()
		<-waiting
		b.StartTimer()
		if err := holder.Release(ctx); err != nil {
			b.Fatal(err)
		}
		if err := <-done; err != nil {
			b.Fatal(err)
		}
		holder, waiter = waiter, holder
	}
	b.StopTimer()
	holder.Release(ctx)
}
