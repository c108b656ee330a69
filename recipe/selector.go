package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/wardenzk/warden/client"
)

// ErrSelectorClosed is what LeaderSelector.Err reports after Close.
var ErrSelectorClosed = errors.New("recipe: leader selector closed")

// SelectorOption configures a LeaderSelector.
type SelectorOption func(*LeaderSelector)

// WithAutoRequeue makes the selector queue for leadership again every time
// its lead function returns (Curator's autoRequeue). Without it the selector
// leads at most once per Start or Requeue.
func WithAutoRequeue() SelectorOption {
	return func(s *LeaderSelector) { s.autoRequeue = true }
}

// LeaderSelector runs a function while this process leads (Curator
// LeaderSelector): candidates queue on a Lock at the election path, and the
// holder runs lead(ctx, term) until it returns or leadership is lost; then it
// releases the lock, handing leadership to the next candidate in line, and —
// with WithAutoRequeue, or after Requeue — queues again at the back.
//
// Layout: a Lock's (Curator InterProcessMutex, which Curator's LeaderSelector
// uses too), with the candidate id as the node data, so Go and Java selectors
// can share an election:
//
//	<path>/_c_<uuid>-lock-<seq>    protected ephemeral sequential; data = id (UTF-8)
//
// Leadership is fair (first come, first served) and herd-free: each waiting
// candidate watches only its predecessor.
//
// The ctx passed to lead is cancelled when leadership is lost (the lock node
// deleted, the session expired, the Conn closed) or when Close is called;
// lead must then return promptly. Its term's Lost channel is ctx.Done().
type LeaderSelector struct {
	c           *client.Conn
	path        string
	id          string
	lead        func(ctx context.Context, term Leadership) error
	autoRequeue bool
	lock        *Lock

	mu sync.Mutex
	// queued: the loop is contending for the lock (or about to).
	queued bool
	// leading: lead is running. Invariant: not both queued and leading.
	leading bool
	// again: Requeue was called during the current term.
	again   bool
	started bool
	closed  bool
	err     error         // why the loop stopped
	leadErr error         // what the last run of lead returned
	requeue chan struct{} // capacity 1: a pending Requeue
	cancel  context.CancelFunc
	done    chan struct{}
}

// NewLeaderSelector returns a selector for the election at path. id is stored
// in the lock node (what Participants report). lead is run each time this
// candidate wins; an error it returns is only recorded (LastLeadErr). It does
// not touch the server; call Start.
func NewLeaderSelector(c *client.Conn, path, id string, lead func(ctx context.Context, term Leadership) error, opts ...SelectorOption) *LeaderSelector {
	s := &LeaderSelector{
		c:       c,
		path:    path,
		id:      id,
		lead:    lead,
		lock:    NewLock(c, path, WithLockData([]byte(id))),
		requeue: make(chan struct{}, 1),
		done:    make(chan struct{}),
	}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Start queues this candidate for leadership and returns at once; lead runs
// in its own goroutine when the candidate wins. It fails if called twice.
func (s *LeaderSelector) Start() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.started || s.closed {
		return errors.New("recipe: leader selector: Start called twice or after Close")
	}
	s.started = true
	s.queued = true
	ctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	go s.run(ctx)
	return nil
}

// Requeue queues the candidate again (without WithAutoRequeue a candidate
// leads once per Start or Requeue). Called while lead runs, it queues the
// candidate again once the term ends. It returns false if the candidate is
// already queued, or the selector is not running.
func (s *LeaderSelector) Requeue() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case !s.started || s.closed || s.err != nil:
		return false
	case s.leading:
		if s.again || s.autoRequeue {
			return false
		}
		s.again = true
		return true
	case s.queued:
		return false
	}
	s.queued = true
	s.requeue <- struct{}{}
	return true
}

// run contends, leads and requeues until Close or a fatal error.
func (s *LeaderSelector) run(ctx context.Context) {
	defer close(s.done)
	for {
		led, err := s.once(ctx)
		if err != nil {
			if ctx.Err() != nil {
				err = ErrSelectorClosed
			}
			s.mu.Lock()
			s.queued = false
			s.err = err
			s.mu.Unlock()
			return
		}
		if !led {
			continue
		}
		s.mu.Lock()
		again := s.autoRequeue || s.again
		s.again = false
		if again {
			s.queued = true
		}
		s.mu.Unlock()
		if again {
			continue
		}
		select {
		case <-s.requeue:
		case <-ctx.Done():
			s.mu.Lock()
			s.err = ErrSelectorClosed
			s.mu.Unlock()
			return
		}
	}
}

// once acquires the lock, runs lead and releases. Its error stops the loop:
// the session is gone, the Conn closed, or Close cancelled ctx. When the lock
// node vanished before the lock was won (deleted by someone), it returns nil
// without leading, and the loop contends again.
func (s *LeaderSelector) once(ctx context.Context) (led bool, err error) {
	lease, err := s.lock.Acquire(ctx)
	if errors.Is(err, ErrNodeLost) && ctx.Err() == nil {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	leadCtx, cancel := context.WithCancel(ctx)
	lost := s.lock.Lost()
	go func() {
		select {
		case <-lost:
			cancel()
		case <-leadCtx.Done():
		}
	}()
	s.mu.Lock()
	s.queued = false
	s.leading = true
	s.mu.Unlock()
	leadErr := s.lead(leadCtx, Leadership{Token: lease.Token, Node: lease.Path, Lost: leadCtx.Done()})
	cancel()
	s.mu.Lock()
	s.leading = false
	s.leadErr = leadErr
	s.mu.Unlock()
	// Release deletes the node (or only forgets it when it is already
	// gone). If the session ended, the next Acquire reports it.
	if err := s.lock.Release(context.WithoutCancel(ctx)); err != nil && ctx.Err() == nil {
		return true, err
	}
	return true, ctx.Err()
}

// IsLeader reports whether lead is running now.
func (s *LeaderSelector) IsLeader() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leading
}

// LastLeadErr returns the error the last run of lead returned.
func (s *LeaderSelector) LastLeadErr() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.leadErr
}

// Err returns why the selector stopped (nil while it runs): ErrSelectorClosed
// after Close, client.ErrSessionExpired or client.ErrClosed when the session
// ended. A stopped selector cannot lead again; make a new one (with a new
// Conn if the session ended).
func (s *LeaderSelector) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// Done returns a channel closed when the selector has stopped (see Err).
func (s *LeaderSelector) Done() <-chan struct{} { return s.done }

// Participants returns the candidates in queue order, the leader first.
func (s *LeaderSelector) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, s.c, s.path, mutexName)
}

// Close leaves the election: a running lead function sees its ctx cancelled;
// Close waits (bounded by ctx) until it has returned and the lock node is
// deleted, which hands leadership to the next candidate. Idempotent.
func (s *LeaderSelector) Close(ctx context.Context) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	started, cancel := s.started, s.cancel
	s.mu.Unlock()
	if !started {
		return nil
	}
	cancel()
	select {
	case <-s.done:
		return nil
	case <-ctx.Done():
		return fmt.Errorf("recipe: leader selector %s: close: %w", s.path, ctx.Err())
	}
}
