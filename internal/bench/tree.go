package bench

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"

	"github.com/wardenzk/warden/client"
)

// ensurePath creates p and its missing ancestors (empty, persistent).
func ensurePath(ctx context.Context, c *client.Conn, p string) error {
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		_, err := c.Create(ctx, p[:i], nil, client.Persistent, client.OpenACL)
		if err != nil && !errors.Is(err, client.ErrNodeExists) {
			return fmt.Errorf("bench: create %s: %w", p[:i], err)
		}
	}
	return nil
}

// resetPath removes the tree at p and creates p empty.
func (e *env) resetPath(ctx context.Context, conns []*client.Conn, p string) error {
	if err := e.removeTree(ctx, conns, p); err != nil {
		return err
	}
	return ensurePath(ctx, conns[0], p)
}

// removeTree deletes p and everything under it, deepest level first,
// with the deletes of each level pipelined over conns.
func (e *env) removeTree(ctx context.Context, conns []*client.Conn, p string) error {
	levels := [][]string{{p}}
	for {
		var next []string
		for _, dir := range levels[len(levels)-1] {
			kids, _, err := conns[0].Children(ctx, dir)
			if errors.Is(err, client.ErrNoNode) {
				continue
			}
			if err != nil {
				return fmt.Errorf("bench: list %s: %w", dir, err)
			}
			for _, k := range kids {
				next = append(next, path.Join(dir, k))
			}
		}
		if len(next) == 0 {
			break
		}
		levels = append(levels, next)
	}
	for l := len(levels) - 1; l >= 0; l-- {
		paths := levels[l]
		err := e.bulk(ctx, conns, int64(len(paths)), func(ctx context.Context, c *client.Conn, i int64) error {
			err := c.Delete(ctx, paths[i], -1)
			if errors.Is(err, client.ErrNoNode) {
				return nil
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("bench: remove %s: %w", p, err)
		}
	}
	return nil
}

// bulk sends n unmeasured requests pipelined over conns and returns the
// first error.
func (e *env) bulk(ctx context.Context, conns []*client.Conn, n int64, op opFunc) error {
	if n == 0 {
		return nil
	}
	pr := e.drive(ctx, phase{name: "setup", conns: conns, inflight: e.cfg.Inflight, ops: n, op: op}, nil)
	if pr.Errors > 0 {
		return errors.New(pr.FirstError)
	}
	return ctx.Err()
}

// payload returns n bytes of printable filler.
func payload(n int) []byte {
	return []byte(strings.Repeat("warden-bench ", n/13+1)[:n])
}
