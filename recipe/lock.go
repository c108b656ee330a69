package recipe

import (
	"bytes"
	"context"
	"errors"
	"path"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// Errors of the lock recipes.
var (
	// ErrLockHeld: Acquire was called on a Lock value that already holds
	// the lock or is acquiring it. A Lock is not re-entrant: use one Lock
	// value per holder (e.g. per goroutine).
	ErrLockHeld = errors.New("recipe: lock already held or being acquired through this Lock value")
	// ErrNotHeld: Release was called on a Lock value that does not hold
	// the lock.
	ErrNotHeld = errors.New("recipe: lock not held by this Lock value")
	// ErrNodeLost: the caller's own sequential node vanished while it was
	// waiting (its session expired, or someone deleted it). Acquire again
	// with a live Conn.
	ErrNodeLost = errors.New("recipe: our sequential node vanished (session expired?)")
)

// Lease is one grant of a lock or of a semaphore lease.
type Lease struct {
	// Token is the fencing token: the czxid of the node that holds the
	// grant. A later holder of the same lock always has a larger token,
	// so a guarded resource that remembers the largest token it has seen
	// can refuse a holder that lost the lock without knowing.
	Token int64
	// Path is the node that holds the grant (what Revoke takes).
	Path string
}

// LockOption configures a Lock or RWLock.
type LockOption func(*lockOptions)

type lockOptions struct {
	data      []byte
	revocable bool
}

// WithLockData sets the data stored in the lock's nodes (Curator stores
// the host's address; default empty). Ignored for revocable locks, whose
// nodes start empty so that the revoke marker is recognised.
func WithLockData(data []byte) LockOption {
	return func(o *lockOptions) { o.data = bytes.Clone(data) }
}

// Node names of the lock recipes (Curator's LOCK_NAME, READ_LOCK_NAME,
// WRITE_LOCK_NAME).
const (
	mutexName = "lock-"
	readName  = "__READ__"
	writeName = "__WRIT__"
)

type lockKind int

const (
	kindMutex lockKind = iota
	kindRead
	kindWrite
)

// Lock is a distributed exclusive lock with Apache Curator's
// InterProcessMutex layout, and also each half of an RWLock.
//
// Algorithm and layout. Each contender creates an ephemeral sequential,
// protected node under the lock path (its parents are created as
// containers when missing):
//
//	<path>/_c_<uuid>-lock-<seq>      exclusive lock (NewLock)
//	<path>/_c_<uuid>-__WRIT__<seq>   write half of an RWLock
//	<path>/_c_<uuid>-__READ__<seq>   read half of an RWLock
//
// and sorts the children by sequence. An exclusive (or write) contender
// holds the lock when its node is first; otherwise it watches, with a
// getData watch, only the node just before its own, and looks again when
// that node changes. A reader holds the lock when no write node precedes
// its own, or when the write half of the same RWLock value is held;
// otherwise it watches the nearest write node before its own. Release
// deletes the node, which wakes the one contender watching it.
//
// A Lock value is not re-entrant and serves one holder at a time:
// Acquire while held (or while another Acquire on the same value is
// running) fails with ErrLockHeld. This differs from Curator, whose
// mutex is re-entrant per thread; Go has no thread identity to key on.
//
// Session expiry. The lock node is ephemeral, so a holder whose session
// expires has lost the lock and the next waiter already has it. Lost
// reports that. A mere disconnection is not a loss: the holder cannot
// know until the client reconnects or declares the session expired, so
// use the Lease's fencing Token to protect the guarded resource.
//
// A Lock is safe for concurrent use.
type Lock struct {
	c    *client.Conn
	dir  string
	name string
	kind lockKind
	// writer is the write half of the same RWLock (kindRead only).
	writer *Lock
	opts   lockOptions

	// wakeups counts waits ended by a watch event (herd-freedom tests).
	wakeups atomic.Int64
	// onWait, when set (tests only, before use), is called with the
	// watched node's name before each wait.
	onWait func(watched string)

	mu sync.Mutex
	// busy: an Acquire is running or the lock is held.
	// Invariant: hold != nil implies busy.
	busy bool
	hold *hold
}

// hold is one tenure of a Lock.
type hold struct {
	lease   Lease
	lostc   chan struct{} // closed when the node or session is lost
	revokec chan struct{} // closed when a revoke request arrives
	stop    context.CancelFunc
	done    chan struct{} // closed when the watcher goroutine has ended
}

// NewLock returns an exclusive lock on path (Curator InterProcessMutex
// layout). It makes no request until Acquire.
func NewLock(c *client.Conn, path string, opts ...LockOption) *Lock {
	return newLock(c, path, mutexName, kindMutex, opts)
}

func newLock(c *client.Conn, dir, name string, kind lockKind, opts []LockOption) *Lock {
	l := &Lock{c: c, dir: dir, name: name, kind: kind}
	for _, o := range opts {
		o(&l.opts)
	}
	return l
}

// Acquire blocks until the lock is held, ctx ends or the session is
// lost, and returns the grant. On any error the caller's node is
// removed (ErrConnectionLoss is retried internally). Errors: ErrLockHeld,
// ErrNodeLost, client.ErrSessionExpired, client.ErrClosed, ctx.Err().
func (l *Lock) Acquire(ctx context.Context) (Lease, error) {
	l.mu.Lock()
	if l.busy {
		l.mu.Unlock()
		return Lease{}, ErrLockHeld
	}
	l.busy = true
	l.mu.Unlock()

	lease, err := l.acquire(ctx)

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil {
		l.busy = false
		return Lease{}, err
	}
	l.hold = l.startHold(lease)
	return lease, nil
}

func (l *Lock) acquire(ctx context.Context) (lease Lease, err error) {
	data := l.opts.data
	if l.opts.revocable {
		data = nil
	}
	p, st, err := protectedCreateStat(ctx, l.c, l.dir, l.name, data, client.EphemeralSequential, client.OpenACL)
	if err != nil {
		return Lease{}, err
	}
	defer func() {
		if err != nil {
			deleteQuietly(ctx, l.c, p)
		}
	}()
	ours := path.Base(p)
	for {
		children, _, err := l.c.Children(ctx, l.dir)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return Lease{}, err
		}
		sortBySequence(children)
		watch, got, err := l.predicate(children, ours)
		if err != nil {
			return Lease{}, err
		}
		if got {
			return Lease{Token: st.Czxid, Path: p}, nil
		}
		_, _, ch, err := l.c.GetW(ctx, joinPath(l.dir, watch))
		switch {
		case errors.Is(err, client.ErrNoNode), errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil:
			return Lease{}, err
		}
		if l.onWait != nil {
			l.onWait(watch)
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return Lease{}, ev.Err
			}
			l.wakeups.Add(1)
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		}
	}
}

// predicate decides, from the sorted children, whether the node named
// ours holds the lock, and if not which node to watch.
func (l *Lock) predicate(children []string, ours string) (watch string, got bool, err error) {
	if l.kind == kindRead {
		if l.writer.held() {
			return "", true, nil
		}
		lastWriter := -1
		for i, n := range children {
			if n == ours {
				if lastWriter < 0 {
					return "", true, nil
				}
				return children[lastWriter], false, nil
			}
			if strings.Contains(n, writeName) {
				lastWriter = i
			}
		}
		return "", false, ErrNodeLost
	}
	i := indexOf(children, ours)
	switch {
	case i < 0:
		return "", false, ErrNodeLost
	case i == 0:
		return "", true, nil
	}
	return children[i-1], false, nil
}

func indexOf(names []string, name string) int {
	for i, n := range names {
		if n == name {
			return i
		}
	}
	return -1
}

// startHold begins a tenure: a goroutine watches the lock node, closing
// lostc when the node or the session goes and revokec when a revoke
// request is written to it.
func (l *Lock) startHold(lease Lease) *hold {
	ctx, cancel := context.WithCancel(context.Background())
	h := &hold{
		lease:   lease,
		lostc:   make(chan struct{}),
		revokec: make(chan struct{}),
		stop:    cancel,
		done:    make(chan struct{}),
	}
	go l.watchHold(ctx, h)
	return h
}

func (l *Lock) watchHold(ctx context.Context, h *hold) {
	defer close(h.done)
	revoked := false
	for {
		data, _, ch, err := l.c.GetW(ctx, h.lease.Path)
		switch {
		case ctx.Err() != nil:
			return
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil: // ErrNoNode, ErrSessionExpired, ErrClosed
			close(h.lostc)
			return
		}
		if l.opts.revocable && !revoked && bytes.Equal(data, revokeMessage) {
			revoked = true
			close(h.revokec)
		}
		select {
		case ev := <-ch:
			if ev.Err != nil || ev.Type == wire.EventNodeDeleted {
				close(h.lostc)
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// Release deletes the lock node, handing the lock to the next waiter. It
// retries connection loss, surviving ctx's cancellation for a bounded
// time (the node must not outlive the tenure); if it still fails the node
// stays until the session ends and the error is returned. A node already
// gone (lost lock) is not an error. Errors: ErrNotHeld, client errors.
func (l *Lock) Release(ctx context.Context) error {
	l.mu.Lock()
	h := l.hold
	if h == nil {
		l.mu.Unlock()
		return ErrNotHeld
	}
	l.hold = nil
	l.mu.Unlock()

	h.stop()
	<-h.done
	err := deleteQuietly(ctx, l.c, h.lease.Path)

	l.mu.Lock()
	l.busy = false
	l.mu.Unlock()
	return err
}

// closedCh is returned by Lost when nothing is held.
var closedCh = func() chan struct{} {
	ch := make(chan struct{})
	close(ch)
	return ch
}()

// Lost returns a channel closed when the current tenure is lost: the
// session expired (or the Conn was closed), or the lock node was deleted
// by someone else. Once it is closed another contender may hold the
// lock; stop using the guarded resource and call Release (which then
// only clears the Lock value). When the lock is not held, Lost returns a
// closed channel.
func (l *Lock) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold == nil {
		return closedCh
	}
	return l.hold.lostc
}

// Lease returns the current grant and whether the lock is held.
func (l *Lock) Lease() (Lease, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold == nil {
		return Lease{}, false
	}
	return l.hold.lease, true
}

func (l *Lock) held() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.hold != nil
}

// Participants returns the full paths of the nodes contending for this
// lock (for an RWLock half, only that half's nodes), in queue order: the
// first is the holder (for readers, the first readers hold together).
func (l *Lock) Participants(ctx context.Context) ([]string, error) {
	children, _, err := l.c.Children(ctx, l.dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sortBySequence(children)
	var out []string
	for _, n := range children {
		if strings.Contains(n, l.name) {
			out = append(out, joinPath(l.dir, n))
		}
	}
	return out, nil
}
