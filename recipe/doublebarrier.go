package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wardenzk/warden/client"
)

// doubleBarrierReady is the name of the node whose creation releases Enter.
const doubleBarrierReady = "ready"

// DoubleBarrier is a distributed double barrier (the ZooKeeper recipe, and
// Curator's DistributedDoubleBarrier): a group of processes enters together
// once enough have arrived, and leaves together once all have finished.
//
// Layout (same as Curator, so Go and Java participants can share a barrier):
//
//	<path>/<uuid>     ephemeral, one per participant; a random UUID (not sequential)
//	<path>/ready      persistent; created by the participant that completes the quorum
//
// Enter:
//  1. exists(<path>/ready, watch)
//  2. create <path>/<uuid> (ephemeral; missing ancestors as containers)
//  3. if ready existed in step 1: entered
//  4. children := getChildren(<path>); if len(children) >= members: create
//     <path>/ready (NodeExists is fine) and return
//  5. otherwise wait for the watch of step 1 (ready was created)
//
// Leave (the ZooKeeper recipe's wake-up optimisation: only the lowest node
// waits for the others, everyone else waits for the lowest one alone):
//  1. L := getChildren(<path>) without "ready", sorted by name
//  2. if L is empty: done
//  3. if L is just our node: delete it, done
//  4. if ours is the lowest in L: wait until the highest node of L is deleted
//  5. else delete ours (if still there) and wait until the lowest node of L is deleted
//  6. go to 1
//
// Then ready is deleted (NoNode ignored), as Curator does, so the path can be
// used for another round.
//
// A participant that crashes (its session ends) loses its ephemeral node, so it
// cannot hold the others in Leave: the waits are on node deletions, which the
// session's end causes. A participant that crashes before Enter completes
// reduces the count, so the others wait in Enter (bounded by their ctx) until
// a replacement arrives. Members is a threshold, not a limit: more may enter.
//
// A DoubleBarrier is for one process's single pass through the barrier: call
// Enter once, then Leave once. Use a new DoubleBarrier for the next round.
type DoubleBarrier struct {
	c       *client.Conn
	path    string
	members int
	name    string // our node's name: a random UUID
}

// NewDoubleBarrier returns this process's handle on the double barrier at path
// for members participants. It does not touch the server. members must be > 0.
func NewDoubleBarrier(c *client.Conn, path string, members int) *DoubleBarrier {
	if members <= 0 {
		panic("recipe: NewDoubleBarrier: members must be > 0")
	}
	return &DoubleBarrier{c: c, path: path, members: members, name: newUUID()}
}

// Node returns the path of this participant's node.
func (b *DoubleBarrier) Node() string { return joinPath(b.path, b.name) }

// Enter joins the barrier and blocks until members participants have joined
// (or ctx ends, or the session ends). On error our node is removed again, so
// an abandoned Enter does not count towards the quorum.
func (b *DoubleBarrier) Enter(ctx context.Context) error {
	err := b.enter(ctx)
	if err != nil {
		deleteQuietly(ctx, b.c, b.Node())
	}
	return err
}

func (b *DoubleBarrier) enter(ctx context.Context) error {
	readyPath := joinPath(b.path, doubleBarrierReady)
	_, ready, readyc, err := b.c.ExistsW(ctx, readyPath)
	if err != nil {
		return fmt.Errorf("recipe: double barrier %s: enter: %w", b.path, err)
	}
	if err := ensureParents(ctx, b.c, b.path); err != nil {
		return fmt.Errorf("recipe: double barrier %s: enter: %w", b.path, err)
	}
	if err := b.createOurs(ctx); err != nil {
		return fmt.Errorf("recipe: double barrier %s: enter: %w", b.path, err)
	}
	if ready {
		return nil
	}
	children, err := b.children(ctx)
	if err != nil {
		return fmt.Errorf("recipe: double barrier %s: enter: %w", b.path, err)
	}
	if len(children) >= b.members {
		if err := createIgnoreExists(ctx, b.c, readyPath); err != nil {
			return fmt.Errorf("recipe: double barrier %s: enter: create ready: %w", b.path, err)
		}
		return nil
	}
	select {
	case ev := <-readyc:
		if ev.Err != nil {
			return fmt.Errorf("recipe: double barrier %s: enter: %w", b.path, ev.Err)
		}
		return nil
	case <-ctx.Done():
		return fmt.Errorf("recipe: double barrier %s: enter: %w", b.path, ctx.Err())
	}
}

// createOurs creates our ephemeral node. The name is unique to this handle, so
// after a connection loss a retry that finds the node existing means the
// first attempt was applied.
func (b *DoubleBarrier) createOurs(ctx context.Context) error {
	for {
		_, err := b.c.Create(ctx, b.Node(), nil, client.Ephemeral, client.OpenACL)
		switch {
		case err == nil, errors.Is(err, client.ErrNodeExists):
			return nil
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		default:
			return err
		}
	}
}

// children returns the participant nodes (without ready), sorted by name. A
// missing barrier node reads as no participants.
func (b *DoubleBarrier) children(ctx context.Context) ([]string, error) {
	var names []string
	for {
		kids, _, err := b.c.Children(ctx, b.path)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if errors.Is(err, client.ErrNoNode) {
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		names = kids
		break
	}
	names = slices.DeleteFunc(names, func(n string) bool { return n == doubleBarrierReady })
	slices.Sort(names)
	return names, nil
}

// Leave withdraws from the barrier and blocks until every participant has
// left (or ctx ends, or the session ends). See the type's doc for the
// algorithm; each round it waits on exactly one node.
func (b *DoubleBarrier) Leave(ctx context.Context) error {
	if err := b.leave(ctx); err != nil {
		return fmt.Errorf("recipe: double barrier %s: leave: %w", b.path, err)
	}
	return nil
}

func (b *DoubleBarrier) leave(ctx context.Context) error {
	for {
		children, err := b.children(ctx)
		if err != nil {
			return err
		}
		ours := slices.Index(children, b.name)
		var watch string
		switch {
		case len(children) == 0:
			return b.deleteReady(ctx)
		case len(children) == 1 && ours == 0:
			if err := deleteIgnoreMissing(ctx, b.c, b.Node()); err != nil {
				return err
			}
			return b.deleteReady(ctx)
		case ours == 0:
			watch = children[len(children)-1]
		default:
			if ours > 0 {
				if err := deleteIgnoreMissing(ctx, b.c, b.Node()); err != nil {
					return err
				}
			}
			watch = children[0]
		}
		// getData rather than exists: no watch is left on a node already gone.
		_, _, evc, err := b.c.GetW(ctx, joinPath(b.path, watch))
		switch {
		case errors.Is(err, client.ErrNoNode), errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil:
			return err
		}
		select {
		case ev := <-evc:
			if ev.Err != nil {
				return ev.Err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// deleteReady removes the ready node so the path can host another round.
func (b *DoubleBarrier) deleteReady(ctx context.Context) error {
	return deleteIgnoreMissing(ctx, b.c, joinPath(b.path, doubleBarrierReady))
}

// createIgnoreExists creates a persistent empty node at p, retrying after a
// connection loss; NodeExists counts as success.
func createIgnoreExists(ctx context.Context, c *client.Conn, p string) error {
	for {
		_, err := c.Create(ctx, p, nil, client.Persistent, client.OpenACL)
		switch {
		case err == nil, errors.Is(err, client.ErrNodeExists):
			return nil
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		default:
			return err
		}
	}
}

// deleteIgnoreMissing deletes p (any version), retrying after a connection
// loss; NoNode counts as success.
func deleteIgnoreMissing(ctx context.Context, c *client.Conn, p string) error {
	for {
		err := c.Delete(ctx, p, -1)
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
			return nil
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		default:
			return err
		}
	}
}
