package recipe

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"sync/atomic"

	"github.com/wardenzk/warden/client"
)

// ErrLeaseLost: the caller's own lease node vanished while it waited for
// room (its session expired, or someone deleted it).
var ErrLeaseLost = errors.New("recipe: our lease node vanished (session expired?)")

// Semaphore is a distributed counting semaphore with Apache Curator's
// InterProcessSemaphoreV2 layout:
//
//	<path>/locks/_c_<uuid>-lock-<seq>     a Lock serialising acquirers
//	<path>/leases/_c_<uuid>-lease-<seq>   one ephemeral node per lease
//
// To take one lease an acquirer takes the Lock at <path>/locks, creates
// its lease node (ephemeral sequential, protected) and, while holding the
// Lock, watches <path>/leases' children until there are at most
// maxLeases of them (its own included); then it releases the Lock. Only
// the Lock holder watches the leases, so a returned lease wakes one
// process, and the number of lease nodes never exceeds maxLeases once the
// holder proceeds. Like Curator, maxLeases is a convention: every user of
// a path must pass the same value.
//
// A lease is held by an ephemeral node, so a session's leases return by
// themselves when it expires or closes.
type Semaphore struct {
	c         *client.Conn
	path      string
	maxLeases int
	data      []byte

	// wakeups counts waits ended by a watch event (tests).
	wakeups atomic.Int64
	// onWait, when set (tests only, before use), is called before each
	// wait for room, with the number of lease nodes seen.
	onWait func(leases int)
}

// NewSemaphore returns a semaphore of maxLeases leases on path. data, if
// not nil, is stored in each lease node. It makes no request until
// Acquire.
func NewSemaphore(c *client.Conn, path string, maxLeases int, data []byte) *Semaphore {
	return &Semaphore{c: c, path: path, maxLeases: maxLeases, data: bytes.Clone(data)}
}

// Acquire blocks until it holds n leases, ctx ends or the session is
// lost. On error the leases taken so far are returned (deleted). Each
// Lease's Token is its node's czxid.
func (s *Semaphore) Acquire(ctx context.Context, n int) ([]Lease, error) {
	if n <= 0 {
		return nil, fmt.Errorf("recipe: Semaphore.Acquire(%d): need at least one lease", n)
	}
	if n > s.maxLeases {
		return nil, fmt.Errorf("recipe: Semaphore.Acquire(%d): more than the %d leases that exist", n, s.maxLeases)
	}
	leases := make([]Lease, 0, n)
	for range n {
		l, err := s.acquire1(ctx)
		if err != nil {
			s.Return(ctx, leases...)
			return nil, err
		}
		leases = append(leases, l)
	}
	return leases, nil
}

func (s *Semaphore) acquire1(ctx context.Context) (lease Lease, err error) {
	mutex := NewLock(s.c, joinPath(s.path, "locks"))
	if _, err := mutex.Acquire(ctx); err != nil {
		return Lease{}, err
	}
	defer mutex.Release(ctx)

	dir := joinPath(s.path, "leases")
	p, st, err := protectedCreateStat(ctx, s.c, dir, "lease-", s.data, client.EphemeralSequential, client.OpenACL)
	if err != nil {
		return Lease{}, err
	}
	defer func() {
		if err != nil {
			deleteQuietly(ctx, s.c, p)
		}
	}()
	ours := path.Base(p)
	for {
		children, _, ch, err := s.c.ChildrenW(ctx, dir)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return Lease{}, err
		}
		if !slices.Contains(children, ours) {
			return Lease{}, ErrLeaseLost
		}
		if len(children) <= s.maxLeases {
			return Lease{Token: st.Czxid, Path: p}, nil
		}
		if s.onWait != nil {
			s.onWait(len(children))
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return Lease{}, ev.Err
			}
			s.wakeups.Add(1)
		case <-ctx.Done():
			return Lease{}, ctx.Err()
		case <-mutex.Lost():
			return Lease{}, ErrNodeLost
		}
	}
}

// Return gives leases back by deleting their nodes. Like Lock.Release it
// survives ctx's cancellation for a bounded time; a lease already gone is
// not an error. It returns the first error met, after trying them all.
func (s *Semaphore) Return(ctx context.Context, leases ...Lease) error {
	var first error
	for _, l := range leases {
		if err := deleteQuietly(ctx, s.c, l.Path); err != nil && first == nil {
			first = err
		}
	}
	return first
}

// Participants returns the full paths of the current lease nodes.
func (s *Semaphore) Participants(ctx context.Context) ([]string, error) {
	dir := joinPath(s.path, "leases")
	children, _, err := s.c.Children(ctx, dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	sortBySequence(children)
	out := make([]string, len(children))
	for i, n := range children {
		out[i] = joinPath(dir, n)
	}
	return out, nil
}
