package torture

import (
	"context"
	"math/rand/v2"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
	"github.com/wardenzk/warden/test/torture/checker"
)

// lock is the mutual-exclusion workload: clients take the recipe's
// exclusive Lock in turn, hold it briefly and release it, recording each
// grant's fencing token and whether the holder learnt it lost the lock.
type lock struct {
	e       *env
	clients int
	dir     string
	hist    recorder[checker.Grant]
}

func (w *lock) name() string { return "lock" }

func (w *lock) setup(ctx context.Context, c *client.Conn) error { return ensurePath(ctx, c, w.dir) }

func (w *lock) run(ctx context.Context) {
	w.e.drive(ctx, w.name(), w.clients, 20, func(k, _ int, rng *rand.Rand, c *client.Conn) {
		l := recipe.NewLock(c, w.dir)
		g := checker.Grant{Client: k}
		g.Acquire.Call = w.e.now()
		actx, cancel := context.WithTimeout(ctx, opTimeout)
		lease, err := l.Acquire(actx)
		cancel()
		g.Acquire.Return = w.e.now()
		if err != nil {
			return
		}
		g.Token = lease.Token
		hold := time.NewTimer(time.Duration(5+rng.IntN(45)) * time.Millisecond)
		lost := false
		select {
		case <-l.Lost():
			lost = true
		case <-hold.C:
		case <-ctx.Done():
		}
		hold.Stop()
		select {
		case <-l.Lost():
			lost = true
		default:
		}
		g.Release.Call = w.e.now()
		// Release even after ctx ended: a grant left held would block
		// the final state; it is bounded by its own timeout.
		rctx, cancel := context.WithTimeout(context.Background(), opTimeout)
		err = l.Release(rctx)
		cancel()
		g.Release.Return = w.e.now()
		g.Lost = lost || err != nil
		g.Released = !g.Lost
		w.hist.add(g)
	})
}

func (w *lock) check(ctx context.Context, members []string) []checker.Result {
	return []checker.Result{checker.CheckLock(w.hist.all())}
}

func (w *lock) writes() []write { return nil }
