package recipe

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/wardenzk/warden/client"
)

// IDGenerator hands out unique, increasing int64 ids from the sequence
// counter of one parent node (ZooKeeper's "unique names" use of sequential
// nodes).
//
// Algorithm: Next creates a protected ephemeral sequential node
// <path>/_c_<uuid>-id-<seq>, takes <seq> as the id, and deletes the node
// (the counter lives on in the parent's cversion, so nothing needs to
// stay). Protected mode means a create cut by connection loss is found
// again rather than repeated, and an abandoned node is ephemeral: it goes
// with the session.
//
// Layout:
//
//	<path>                         persistent (created with missing ancestors;
//	                               not a container, which would be removed
//	                               when empty and restart the counter)
//	<path>/_c_<uuid>-id-<seq>      ephemeral sequential, deleted right away
//
// Guarantees and limits: ids are unique and increasing for the life of
// <path> across every process using it (each is a distinct value of the
// parent's child counter), but not dense (any other child created under
// <path> consumes a value). The server's counter is 32 bits: after
// 2147483647 ids ZooKeeper wraps to negative sequences; Next returns an
// error from then on. Deleting <path> restarts the sequence at 0.
type IDGenerator struct {
	c      *client.Conn
	path   string
	parent atomic.Bool // <path> is known to exist
}

// NewIDGenerator returns the generator at path on c. It does not touch the
// server.
func NewIDGenerator(c *client.Conn, path string) *IDGenerator {
	return &IDGenerator{c: c, path: path}
}

// Next returns a new id.
func (g *IDGenerator) Next(ctx context.Context) (int64, error) {
	if !g.parent.Load() {
		if err := ensurePersistent(ctx, g.c, g.path); err != nil {
			return 0, fmt.Errorf("recipe: idgen %s: %w", g.path, err)
		}
		g.parent.Store(true)
	}
	p, err := protectedCreate(ctx, g.c, g.path, "id-", nil, client.EphemeralSequential, client.OpenACL)
	if err != nil {
		return 0, fmt.Errorf("recipe: idgen %s: %w", g.path, err)
	}
	id, ok := sequenceOf(p)
	if err := deleteQuietly(ctx, g.c, p); err != nil {
		return 0, fmt.Errorf("recipe: idgen %s: delete %s: %w", g.path, p, err)
	}
	if !ok {
		return 0, fmt.Errorf("recipe: idgen %s: sequence counter exhausted (node %s)", g.path, p)
	}
	return id, nil
}

// ensurePersistent creates p as a persistent node (its ancestors as
// containers) unless it exists.
func ensurePersistent(ctx context.Context, c *client.Conn, p string) error {
	_, ok, err := c.Exists(ctx, p)
	if err != nil || ok {
		return err
	}
	if err := ensureParents(ctx, c, parentPath(p)); err != nil {
		return err
	}
	return retryLoss(ctx, func() error {
		_, err := c.Create(ctx, p, nil, client.Persistent, client.OpenACL)
		if errors.Is(err, client.ErrNodeExists) {
			return nil
		}
		return err
	})
}
