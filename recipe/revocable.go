package recipe

import (
	"context"
	"errors"

	"github.com/wardenzk/warden/client"
)

// revokeMessage is the data a revoker writes into a holder's lock node
// (Curator's LockInternals.REVOKE_MESSAGE).
var revokeMessage = []byte("__REVOKE__")

// WithRevocable makes a Lock (or both halves of an RWLock) revocable, the
// ZooKeeper "revocable shared locks" recipe in Curator's form: the lock
// node is created empty and the holder watches it; when another process
// calls Revoke on the node, Revoked's channel is closed. Revocation is a
// request: the holder decides when to Release.
func WithRevocable() LockOption {
	return func(o *lockOptions) { o.revocable = true }
}

// Revoke asks the holder of the lock node nodePath to release it, by
// setting the node's data to "__REVOKE__" (Curator's Revoker.attemptRevoke;
// a Curator holder made revocable reacts to it too). A node that no longer
// exists is not an error: there is nothing left to revoke. Find node paths
// with Lock.Participants.
func Revoke(ctx context.Context, c *client.Conn, nodePath string) error {
	for {
		_, err := c.Set(ctx, nodePath, revokeMessage, -1)
		switch {
		case err == nil, errors.Is(err, client.ErrNoNode):
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

// Revoked returns a channel closed when a revoke request (Revoke) arrives
// for the current tenure of a lock made WithRevocable; a request written
// while the caller was still waiting is seen as soon as it holds the lock.
// It returns nil (never ready) when the lock is not held or not revocable.
func (l *Lock) Revoked() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.hold == nil || !l.opts.revocable {
		return nil
	}
	return l.hold.revokec
}
