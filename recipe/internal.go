package recipe

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/client"
)

// protectedPrefix starts every protected node name: "_c_" + a UUID + "-",
// Curator's ProtectedUtils layout, so Curator recognises our nodes.
const protectedPrefix = "_c_"

// seqDigits is the width of the suffix ZooKeeper appends to sequential
// nodes ("%010d").
const seqDigits = 10

// newUUID returns a random (version 4) UUID in canonical text form.
func newUUID() string {
	var b [16]byte
	rand.Read(b[:]) // never fails (crypto/rand panics on a broken source)
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// protectedCreate creates parent/_c_<uuid>-<name> (the server appends the
// sequence for sequential modes) and returns the created path. It is
// Curator's protected create (withProtection) with
// creatingParentContainersIfNeeded:
//
//   - if the parent is missing it is created, with its ancestors, as
//     containers (ensureParents) and the create is retried;
//   - after ErrConnectionLoss the create may or may not have been applied,
//     so the parent's children are searched for our UUID prefix before
//     creating again: no orphan node is ever left behind to block others.
//
// It retries until ctx ends; ErrSessionExpired and ErrClosed end it at once.
func protectedCreate(ctx context.Context, c *client.Conn, parent, name string, data []byte, mode client.CreateMode, acl []client.ACL) (string, error) {
	p, _, err := protectedCreateStat(ctx, c, parent, name, data, mode, acl)
	return p, err
}

// protectedCreateStat is protectedCreate that also returns the created
// node's Stat (its Czxid is the fencing token of the lock recipes).
func protectedCreateStat(ctx context.Context, c *client.Conn, parent, name string, data []byte, mode client.CreateMode, acl []client.ACL) (string, client.Stat, error) {
	prefix := protectedPrefix + newUUID() + "-"
	full := joinPath(parent, prefix+name)
	madeParents := false
	lost := false
	for {
		if lost {
			p, st, found, err := findProtected(ctx, c, parent, prefix)
			if err != nil {
				if errors.Is(err, client.ErrConnectionLoss) {
					continue
				}
				return "", client.Stat{}, err
			}
			if found {
				return p, st, nil
			}
			lost = false
		}
		p, st, err := c.CreateStat(ctx, full, data, mode, acl)
		switch {
		case err == nil:
			return p, st, nil
		case errors.Is(err, client.ErrConnectionLoss):
			lost = true
		case errors.Is(err, client.ErrNoNode) && !madeParents:
			madeParents = true
			if err := ensureParents(ctx, c, parent); err != nil {
				return "", client.Stat{}, err
			}
		default:
			return "", client.Stat{}, err
		}
		if err := ctx.Err(); err != nil {
			return "", client.Stat{}, err
		}
	}
}

// findProtected looks among parent's children for the node whose name
// starts with prefix (a protected create that may have been applied).
func findProtected(ctx context.Context, c *client.Conn, parent, prefix string) (string, client.Stat, bool, error) {
	children, _, err := c.Children(ctx, parent)
	if errors.Is(err, client.ErrNoNode) {
		return "", client.Stat{}, false, nil
	}
	if err != nil {
		return "", client.Stat{}, false, err
	}
	for _, name := range children {
		if !strings.HasPrefix(name, prefix) {
			continue
		}
		p := joinPath(parent, name)
		st, ok, err := c.Exists(ctx, p)
		if err != nil {
			return "", client.Stat{}, false, err
		}
		if ok {
			return p, st, true, nil
		}
	}
	return "", client.Stat{}, false, nil
}

// sequenceOf returns the sequence number ZooKeeper appended to name: its
// trailing ten digits.
func sequenceOf(name string) (int64, bool) {
	if len(name) < seqDigits {
		return 0, false
	}
	tail := name[len(name)-seqDigits:]
	for i := 0; i < len(tail); i++ {
		if tail[i] < '0' || tail[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.ParseInt(tail, 10, 64)
	return n, err == nil
}

// sortBySequence sorts names by their sequence suffix, keeping the order of
// equal ones; names without a suffix go last, in their original order.
// This is the order Curator's lock drivers use (fixForSorting compares the
// text after the lock name, which is the ten-digit sequence).
func sortBySequence(names []string) {
	slices.SortStableFunc(names, func(a, b string) int {
		sa, oka := sequenceOf(a)
		sb, okb := sequenceOf(b)
		switch {
		case oka && okb:
			return cmpInt64(sa, sb)
		case oka:
			return -1
		case okb:
			return 1
		}
		return 0
	})
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// ensureParents creates p and its missing ancestors as containers (plain
// persistent nodes on servers without containers), tolerating nodes that
// already exist: Curator's creatingParentContainersIfNeeded. It looks
// before it creates, so a node that exists is never created (a create can
// fail with ErrNoAuth on a parent the caller may not write even when the
// node is there).
func ensureParents(ctx context.Context, c *client.Conn, p string) error {
	if p == "/" || p == "" {
		return nil
	}
	for {
		_, ok, err := c.Exists(ctx, p)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		if err := ensureParents(ctx, c, path.Dir(p)); err != nil {
			return err
		}
		_, _, err = c.CreateContainer(ctx, p, nil, client.OpenACL)
		if errors.Is(err, client.ErrUnimplemented) {
			_, err = c.Create(ctx, p, nil, client.Persistent, client.OpenACL)
		}
		switch {
		case err == nil, errors.Is(err, client.ErrNodeExists):
			return nil
		case errors.Is(err, client.ErrConnectionLoss):
			// Applied or not: look again.
		default:
			return fmt.Errorf("recipe: create %s: %w", p, err)
		}
		if err := ctx.Err(); err != nil {
			return err
		}
	}
}

// waitDeleted returns nil once p does not exist. It watches p with GetW
// rather than ExistsW so that no watch is left behind on a missing node.
// ErrConnectionLoss is retried; other errors, ctx's end and a watch ended
// by the session (ErrSessionExpired, ErrClosed) are returned.
func waitDeleted(ctx context.Context, c *client.Conn, p string) error {
	for {
		_, _, ch, err := c.GetW(ctx, p)
		switch {
		case errors.Is(err, client.ErrNoNode):
			return nil
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil:
			return err
		}
		select {
		case ev := <-ch:
			if ev.Err != nil {
				return ev.Err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// joinPath joins a parent path and a child name.
func joinPath(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}

// cleanupTimeout bounds the deletes a recipe makes after its caller's
// context has ended (an abandoned lock node must still go).
const cleanupTimeout = 10 * time.Second

// deleteQuietly deletes p, retrying connection loss, with a context that
// survives ctx's cancellation but is bounded by cleanupTimeout. A missing
// node or an expired session (its ephemerals are gone) count as success.
func deleteQuietly(ctx context.Context, c *client.Conn, p string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
	defer cancel()
	for {
		err := c.Delete(ctx, p, -1)
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode), errors.Is(err, client.ErrSessionExpired):
			return nil
		case errors.Is(err, client.ErrConnectionLoss):
			if ctx.Err() != nil {
				return err
			}
		default:
			return err
		}
	}
}
