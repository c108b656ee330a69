package recipe

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"path"

	"github.com/wardenzk/warden/client"
)

// ErrOutcomeUnknown is returned (wrapping client.ErrConnectionLoss) when the
// connection dropped while a conditional write was in flight: the write may or
// may not have been applied, and retrying blindly could apply it twice.
var ErrOutcomeUnknown = errors.New("recipe: outcome unknown after connection loss")

// Counter is a distributed 64-bit counter updated by compare-and-set (the
// layout of Curator's DistributedAtomicLong, optimistic mode).
//
// Layout:
//
//	<path>     persistent; data = the value as 8 bytes, big-endian two's complement
//	           (a missing node or empty data reads as 0)
//
// Add reads the node (value and version), then writes value+delta with
// setData(version) — or create, when the node is missing — and retries from
// the read when another writer got in first (BadVersion, NodeExists, NoNode).
// Under contention every writer eventually succeeds; no write is lost or
// doubled.
type Counter struct {
	c    *client.Conn
	path string
}

// NewCounter returns the counter stored at path on c. It does not touch the
// server.
func NewCounter(c *client.Conn, path string) *Counter {
	return &Counter{c: c, path: path}
}

// Get returns the counter's current value (0 when the node does not exist).
func (n *Counter) Get(ctx context.Context) (int64, error) {
	v, _, _, err := n.read(ctx)
	if err != nil {
		return 0, fmt.Errorf("recipe: counter %s: %w", n.path, err)
	}
	return v, nil
}

// Add adds delta to the counter and returns the new value. If the connection
// drops while the write is in flight, Add returns an error wrapping both
// ErrOutcomeUnknown and client.ErrConnectionLoss: the caller decides whether
// to re-read (Get) or give up, since Add is not idempotent.
func (n *Counter) Add(ctx context.Context, delta int64) (int64, error) {
	for {
		old, version, exists, err := n.read(ctx)
		if err != nil {
			return 0, fmt.Errorf("recipe: counter %s: %w", n.path, err)
		}
		next := old + delta
		data := binary.BigEndian.AppendUint64(nil, uint64(next))
		if exists {
			_, err = n.c.Set(ctx, n.path, data, version)
		} else {
			_, err = n.c.Create(ctx, n.path, data, client.Persistent, client.OpenACL)
		}
		switch {
		case err == nil:
			return next, nil
		case errors.Is(err, client.ErrBadVersion), errors.Is(err, client.ErrNodeExists), errors.Is(err, client.ErrNoNode):
			if !exists && errors.Is(err, client.ErrNoNode) {
				// The parent is missing: create it, then retry.
				if err := ensureParents(ctx, n.c, path.Dir(n.path)); err != nil {
					return 0, fmt.Errorf("recipe: counter %s: %w", n.path, err)
				}
			}
			continue // another writer won the race: re-read
		case errors.Is(err, client.ErrConnectionLoss):
			return 0, fmt.Errorf("recipe: counter %s: add %d: %w (%w)", n.path, delta, ErrOutcomeUnknown, err)
		default:
			return 0, fmt.Errorf("recipe: counter %s: add %d: %w", n.path, delta, err)
		}
	}
}

// read returns the value, the node's data version and whether it exists.
// Reads are retried after a connection loss (they are idempotent).
func (n *Counter) read(ctx context.Context) (value int64, version int32, exists bool, err error) {
	for {
		data, st, err := n.c.Get(ctx, n.path)
		switch {
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case errors.Is(err, client.ErrNoNode):
			return 0, 0, false, nil
		case err != nil:
			return 0, 0, false, err
		}
		if len(data) == 0 {
			return 0, st.Version, true, nil // Curator reads empty data as 0
		}
		if len(data) != 8 {
			return 0, 0, false, fmt.Errorf("corrupt counter data (%d bytes, want 8)", len(data))
		}
		return int64(binary.BigEndian.Uint64(data)), st.Version, true, nil
	}
}
