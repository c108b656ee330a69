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

// TestLeaderSelectorOneAtATime: with auto-requeue, candidates take turns;
// no two lead functions ever run at once, and tokens grow.
func TestLeaderSelectorOneAtATime(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const n, terms = 4, 20
	var (
		active    atomic.Int32
		mu        sync.Mutex
		tokens    []int64
		byID      = map[string]int{}
		enough    = make(chan struct{})
		closeOnce sync.Once
	)
	var sels []*LeaderSelector
	for i := range n {
		id := fmt.Sprintf("s%d", i)
		s := NewLeaderSelector(lockConn(t, srv), "/election/selector", id, func(ctx context.Context, term Leadership) error {
			if a := active.Add(1); a != 1 {
				t.Errorf("%d lead functions running at once", a)
			}
			defer active.Add(-1)
			mu.Lock()
			defer mu.Unlock()
			if len(tokens) > 0 && term.Token <= tokens[len(tokens)-1] {
				t.Errorf("token %d not above the previous term's %d", term.Token, tokens[len(tokens)-1])
			}
			tokens = append(tokens, term.Token)
			byID[id]++
			if len(tokens) == terms {
				closeOnce.Do(func() { close(enough) })
			}
			return nil
		}, WithAutoRequeue())
		sels = append(sels, s)
	}
	for _, s := range sels {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-enough:
	case <-ctx.Done():
		t.Fatal("not enough terms")
	}
	for _, s := range sels {
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
		if !errors.Is(s.Err(), ErrSelectorClosed) {
			t.Errorf("Err after Close = %v", s.Err())
		}
	}
	mu.Lock()
	defer mu.Unlock()
	// Fair queue: every candidate leads in turn.
	for i := range n {
		if byID[fmt.Sprintf("s%d", i)] == 0 {
			t.Errorf("candidate s%d never led in %d terms: %v", i, len(tokens), byID)
		}
	}
}

// TestLeaderSelectorRequeue: without auto-requeue a candidate leads once;
// Requeue queues it again.
func TestLeaderSelectorRequeue(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	led := make(chan int64, 4)
	release := make(chan struct{})
	s := NewLeaderSelector(lockConn(t, srv), "/election/requeue", "only", func(ctx context.Context, term Leadership) error {
		led <- term.Token
		<-release
		return errors.New("done")
	})
	if s.Requeue() {
		t.Error("Requeue before Start succeeded")
	}
	if err := s.Start(); err != nil {
		t.Fatal(err)
	}
	defer s.Close(ctx)
	first := <-led
	if !s.IsLeader() {
		t.Error("IsLeader false while lead runs")
	}
	if !s.Requeue() {
		t.Fatal("Requeue during the term failed")
	}
	if s.Requeue() {
		t.Error("second Requeue during the term succeeded")
	}
	release <- struct{}{}
	second := <-led
	close(release)
	if second <= first {
		t.Errorf("second term's token %d not above the first's %d", second, first)
	}
	if err := s.LastLeadErr(); err == nil || err.Error() != "done" {
		t.Errorf("LastLeadErr = %v", err)
	}
}

// TestLeaderSelectorExpiryCancelsLead: the leader's session expires; its lead
// ctx is cancelled, the next candidate leads, and the expired selector stops
// with ErrSessionExpired.
func TestLeaderSelectorExpiryCancelsLead(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	leading := make(chan string, 2)
	lead := func(id string) func(context.Context, Leadership) error {
		return func(ctx context.Context, term Leadership) error {
			leading <- id
			<-ctx.Done()
			return nil
		}
	}
	old := NewLeaderSelector(lockConn(t, srv, client.WithSessionTimeout(4*time.Second)), "/election/sel-expiry", "old", lead("old"), WithAutoRequeue())
	if err := old.Start(); err != nil {
		t.Fatal(err)
	}
	defer old.Close(ctx)
	if got := <-leading; got != "old" {
		t.Fatalf("first leader %s", got)
	}
	next := NewLeaderSelector(lockConn(t, srv, client.WithSessionTimeout(30*time.Second)), "/election/sel-expiry", "next", lead("next"))
	waiting := make(chan string, 1)
	next.lock.onWait = func(w string) { waiting <- w }
	if err := next.Start(); err != nil {
		t.Fatal(err)
	}
	defer next.Close(ctx)
	<-waiting // next is queued behind old
	ps, err := next.Participants(ctx)
	if err != nil || len(ps) != 2 || ps[0].ID != "old" || ps[1].ID != "next" {
		t.Fatalf("participants = %+v, %v", ps, err)
	}
	srv.ExpireSessions(srv.Clock.Advance(10 * time.Second))
	select {
	case got := <-leading:
		if got != "next" {
			t.Fatalf("leader after expiry: %s", got)
		}
	case <-ctx.Done():
		t.Fatal("no new leader after the old one's session expired")
	}
	select {
	case <-old.Done():
	case <-ctx.Done():
		t.Fatal("expired selector never stopped")
	}
	if !errors.Is(old.Err(), client.ErrSessionExpired) {
		t.Errorf("expired selector's Err = %v, want ErrSessionExpired", old.Err())
	}
}
