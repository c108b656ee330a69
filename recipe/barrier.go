package recipe

import (
	"context"
	"fmt"
	"path"

	"github.com/wardenzk/warden/client"
)

// Barrier is a distributed barrier (Curator DistributedBarrier): one znode at
// a fixed path blocks every process that waits on it until it is removed.
//
// Algorithm: Set creates the node (persistent, missing ancestors created);
// Wait loops on exists(path, watch) and returns once the node is absent; Remove
// deletes it, which fires every waiter's watch. Every waiter watches the one
// node: releasing all of them is the point of a barrier.
//
// Layout (same as Curator):
//
//	<path>            persistent, empty data; present = closed, absent = open
//
// A Barrier holds no state of its own: any process may Set, Remove or Wait.
type Barrier struct {
	c    *client.Conn
	path string
}

// NewBarrier returns the barrier at path on c. It does not touch the server.
func NewBarrier(c *client.Conn, path string) *Barrier {
	return &Barrier{c: c, path: path}
}

// Set closes the barrier: it creates the barrier node (and missing ancestors).
// Setting a barrier that is already set is not an error.
func (b *Barrier) Set(ctx context.Context) error {
	if err := ensureParents(ctx, b.c, path.Dir(b.path)); err != nil {
		return fmt.Errorf("recipe: barrier %s: %w", b.path, err)
	}
	if err := createIgnoreExists(ctx, b.c, b.path); err != nil {
		return fmt.Errorf("recipe: barrier %s: set: %w", b.path, err)
	}
	return nil
}

// Remove opens the barrier: it deletes the barrier node, releasing every
// waiter. Removing an open barrier is not an error.
func (b *Barrier) Remove(ctx context.Context) error {
	if err := deleteIgnoreMissing(ctx, b.c, b.path); err != nil {
		return fmt.Errorf("recipe: barrier %s: remove: %w", b.path, err)
	}
	return nil
}

// Wait blocks until the barrier is open (its node does not exist), ctx ends
// (ctx.Err()), or the session ends (client.ErrSessionExpired, client.ErrClosed).
func (b *Barrier) Wait(ctx context.Context) error {
	if err := waitDeleted(ctx, b.c, b.path); err != nil {
		return fmt.Errorf("recipe: barrier %s: wait: %w", b.path, err)
	}
	return nil
}
