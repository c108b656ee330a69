package recipe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"
	"sync"

	"github.com/wardenzk/warden/client"
)

// VersionedCount is a SharedCount value with the znode data version it was
// read at; pass Version to TrySetCount.
type VersionedCount struct {
	Count   int32
	Version int32
}

// SharedCount is an int32 shared by every process that opens the same path,
// changed by compare-and-set on the znode's data version (Curator SharedCount
// / SharedValue layout).
//
// Layout (same as Curator):
//
//	<path>     persistent; data = the count as 4 bytes, big-endian two's complement
//
// Start creates the node with the seed value if it is missing (ancestors as
// containers), reads it with a data watch, and keeps a background goroutine
// that re-reads (re-arming the watch) after every change, so Count is the
// latest value this client has seen and Changes reports every new version.
// TrySetCount is setData(path, count, expectedVersion): it fails, and updates
// the local view, when another writer got in first.
type SharedCount struct {
	c    *client.Conn
	path string
	seed int32

	mu sync.Mutex
	// cur is the newest value seen (Version -1 before Start). Invariant:
	// cur.Version only grows.
	cur     VersionedCount
	started bool
	closed  bool
	err     error // why the watch loop stopped, if it did

	changesCh chan VersionedCount // conflated, capacity 1
	cancel    context.CancelFunc
	done      chan struct{}
}

// NewSharedCount returns the shared count at path; seed is the value the node
// is created with if Start finds it missing. It does not touch the server.
func NewSharedCount(c *client.Conn, path string, seed int32) *SharedCount {
	return &SharedCount{
		c:         c,
		path:      path,
		seed:      seed,
		cur:       VersionedCount{Count: seed, Version: -1},
		changesCh: make(chan VersionedCount, 1),
		done:      make(chan struct{}),
	}
}

// Start creates the node if needed, reads the current value and starts
// following changes. It fails if called twice.
func (s *SharedCount) Start(ctx context.Context) error {
	s.mu.Lock()
	if s.started || s.closed {
		s.mu.Unlock()
		return errors.New("recipe: shared count: Start called twice or after Close")
	}
	s.started = true
	s.mu.Unlock()
	if err := s.start(ctx); err != nil {
		close(s.done)
		return fmt.Errorf("recipe: shared count %s: start: %w", s.path, err)
	}
	return nil
}

func (s *SharedCount) start(ctx context.Context) error {
	if err := ensureParents(ctx, s.c, path.Dir(s.path)); err != nil {
		return err
	}
	for {
		_, err := s.c.Create(ctx, s.path, encodeCount(s.seed), client.Persistent, client.OpenACL)
		if err == nil || errors.Is(err, client.ErrNodeExists) {
			break
		}
		if !errors.Is(err, client.ErrConnectionLoss) {
			return err
		}
	}
	evc, err := s.read(ctx)
	if err != nil {
		return err
	}
	runCtx, cancel := context.WithCancel(context.Background())
	s.mu.Lock()
	s.cancel = cancel
	s.mu.Unlock()
	go s.run(runCtx, evc)
	return nil
}

// run re-reads the node after each watch event until Close or the session's end.
func (s *SharedCount) run(ctx context.Context, evc <-chan client.Event) {
	defer close(s.done)
	for {
		select {
		case ev := <-evc:
			if ev.Err != nil {
				s.stop(ev.Err)
				return
			}
		case <-ctx.Done():
			return
		}
		var err error
		evc, err = s.read(ctx)
		if err != nil {
			if ctx.Err() == nil {
				s.stop(err)
			}
			return
		}
	}
}

// read gets the value with a watch and records it. It retries connection
// loss; a missing node (deleted by someone) is watched until it comes back.
func (s *SharedCount) read(ctx context.Context) (<-chan client.Event, error) {
	for {
		data, st, evc, err := s.c.GetW(ctx, s.path)
		switch {
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case errors.Is(err, client.ErrNoNode):
			_, ok, evc, err := s.c.ExistsW(ctx, s.path)
			if err != nil && !errors.Is(err, client.ErrConnectionLoss) {
				return nil, err
			}
			if err != nil || ok {
				continue
			}
			return evc, nil
		case err != nil:
			return nil, err
		}
		n, err := decodeCount(data)
		if err != nil {
			return nil, err
		}
		s.update(VersionedCount{Count: n, Version: st.Version})
		return evc, nil
	}
}

// update records v if it is newer than the current value and publishes it.
func (s *SharedCount) update(v VersionedCount) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if v.Version <= s.cur.Version {
		return
	}
	s.cur = v
	select {
	case <-s.changesCh:
	default:
	}
	s.changesCh <- v
}

func (s *SharedCount) stop(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err == nil {
		s.err = err
	}
}

// Count returns the newest value this client has seen and its version.
func (s *SharedCount) Count() VersionedCount {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}

// Err returns why the count stopped following changes (nil while it follows
// them): client.ErrSessionExpired, client.ErrClosed, or a read error.
func (s *SharedCount) Err() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.err
}

// TrySetCount sets the count to n if the node's version is still
// expectedVersion (as returned by Count). It returns false, with no error,
// when another writer changed the count first; Count then returns a value at
// least as new as that writer's. After a connection loss during the write it
// returns an error wrapping ErrOutcomeUnknown and client.ErrConnectionLoss.
func (s *SharedCount) TrySetCount(ctx context.Context, n int32, expectedVersion int32) (bool, error) {
	st, err := s.c.Set(ctx, s.path, encodeCount(n), expectedVersion)
	switch {
	case err == nil:
		s.update(VersionedCount{Count: n, Version: st.Version})
		return true, nil
	case errors.Is(err, client.ErrBadVersion):
		if _, err := s.refresh(ctx); err != nil {
			return false, fmt.Errorf("recipe: shared count %s: %w", s.path, err)
		}
		return false, nil
	case errors.Is(err, client.ErrConnectionLoss):
		return false, fmt.Errorf("recipe: shared count %s: set: %w (%w)", s.path, ErrOutcomeUnknown, err)
	default:
		return false, fmt.Errorf("recipe: shared count %s: set: %w", s.path, err)
	}
}

// SetCount sets the count to n whatever its current value.
func (s *SharedCount) SetCount(ctx context.Context, n int32) error {
	st, err := s.c.Set(ctx, s.path, encodeCount(n), -1)
	if err != nil {
		return fmt.Errorf("recipe: shared count %s: set: %w", s.path, err)
	}
	s.update(VersionedCount{Count: n, Version: st.Version})
	return nil
}

// refresh reads the node without a watch and records the value.
func (s *SharedCount) refresh(ctx context.Context) (VersionedCount, error) {
	for {
		data, st, err := s.c.Get(ctx, s.path)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return VersionedCount{}, err
		}
		n, err := decodeCount(data)
		if err != nil {
			return VersionedCount{}, err
		}
		v := VersionedCount{Count: n, Version: st.Version}
		s.update(v)
		return v, nil
	}
}

// Changes returns a channel carrying each new value this client sees (newer
// versions only). Values are conflated (capacity 1: a newer value replaces
// an unread one), so a reader always ends on the latest. Never closed.
func (s *SharedCount) Changes() <-chan VersionedCount { return s.changesCh }

// Close stops following changes. The node stays. Close is idempotent.
func (s *SharedCount) Close() {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return
	}
	s.closed = true
	started, cancel := s.started, s.cancel
	s.mu.Unlock()
	if cancel != nil {
		cancel()
	}
	if started {
		<-s.done
	}
}

// encodeCount is Curator's SharedCount encoding: 4 bytes, big-endian.
func encodeCount(n int32) []byte { return binary.BigEndian.AppendUint32(nil, uint32(n)) }

func decodeCount(b []byte) (int32, error) {
	if len(b) != 4 {
		return 0, fmt.Errorf("corrupt shared count data (%d bytes, want 4)", len(b))
	}
	return int32(binary.BigEndian.Uint32(b)), nil
}
