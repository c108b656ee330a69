package recipe

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/wardenzk/warden/client"
)

// Rendezvous lets a fixed number of parties meet: Meet returns once all
// of them have arrived.
//
// Algorithm (herd-free): each party creates a protected ephemeral
// sequential node under <path>/parties, then lists the parties. The party
// that sees the count reach N creates <path>/ready; every other party waits
// on exists(ready) only. The last party to create its node always lists
// after every other creation, so someone always sees N and opens the
// meeting. A party that leaves or crashes before the set is complete (its
// ephemeral node is gone) no longer counts: the others wait, until their
// ctx ends, for a replacement.
//
// Layout:
//
//	<path>                                  container
//	<path>/parties/_c_<uuid>-party-<seq>    ephemeral sequential; data = the party's name
//	<path>/ready                            persistent, created by the party that completes the set
//
// A Rendezvous is single use: after the meeting, Reset (by any one party,
// after all have met) removes ready so the path can host the next one.
type Rendezvous struct {
	c       *client.Conn
	path    string
	parties int
	node    string // this party's node after Meet
}

// NewRendezvous returns the meeting of n parties at path on c. It does not
// touch the server.
func NewRendezvous(c *client.Conn, path string, n int) *Rendezvous {
	return &Rendezvous{c: c, path: path, parties: n}
}

func (r *Rendezvous) partiesDir() string { return joinPath(r.path, "parties") }
func (r *Rendezvous) readyPath() string  { return joinPath(r.path, "ready") }

// Meet registers this party (name is stored as its node's data) and blocks
// until all parties have arrived, ctx ends (its node is then removed), or
// the session ends. It returns the parties' names in arrival order.
func (r *Rendezvous) Meet(ctx context.Context, name string) ([]string, error) {
	if r.parties <= 0 {
		return nil, errors.New("recipe: rendezvous: party count must be positive")
	}
	p, err := protectedCreate(ctx, r.c, r.partiesDir(), "party-", []byte(name), client.EphemeralSequential, client.OpenACL)
	if err != nil {
		return nil, fmt.Errorf("recipe: rendezvous %s: join: %w", r.path, err)
	}
	r.node = p
	if err := r.await(ctx); err != nil {
		deleteQuietly(ctx, r.c, p)
		r.node = ""
		return nil, fmt.Errorf("recipe: rendezvous %s: %w", r.path, err)
	}
	names, err := r.names(ctx)
	if err != nil {
		return nil, fmt.Errorf("recipe: rendezvous %s: %w", r.path, err)
	}
	return names, nil
}

func (r *Rendezvous) await(ctx context.Context) error {
	for {
		kids, _, err := r.c.Children(ctx, r.partiesDir())
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return err
		}
		if len(kids) >= r.parties {
			err := retryLoss(ctx, func() error {
				_, err := r.c.Create(ctx, r.readyPath(), nil, client.Persistent, client.OpenACL)
				if errors.Is(err, client.ErrNodeExists) {
					return nil
				}
				return err
			})
			return err
		}
		_, ok, ev, err := r.c.ExistsW(ctx, r.readyPath())
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return err
		}
		if ok {
			return nil
		}
		select {
		case e := <-ev:
			if e.Err != nil {
				return e.Err
			}
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// names returns the names of the parties present, in arrival order.
func (r *Rendezvous) names(ctx context.Context) ([]string, error) {
	kids, _, err := r.c.Children(ctx, r.partiesDir())
	if err != nil {
		return nil, err
	}
	sortBySequence(kids)
	out := make([]string, 0, len(kids))
	for _, k := range kids {
		if !strings.HasPrefix(k, protectedPrefix) {
			continue
		}
		data, _, err := r.c.Get(ctx, joinPath(r.partiesDir(), k))
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, string(data))
	}
	return out, nil
}

// Leave removes this party's node (it also goes when the session ends).
func (r *Rendezvous) Leave(ctx context.Context) error {
	if r.node == "" {
		return nil
	}
	if err := deleteQuietly(ctx, r.c, r.node); err != nil {
		return fmt.Errorf("recipe: rendezvous %s: leave: %w", r.path, err)
	}
	r.node = ""
	return nil
}

// Reset removes the ready node so the path can host another meeting. Call
// it once every party has returned from Meet and left.
func (r *Rendezvous) Reset(ctx context.Context) error {
	if err := deleteQuietly(ctx, r.c, r.readyPath()); err != nil {
		return fmt.Errorf("recipe: rendezvous %s: reset: %w", r.path, err)
	}
	return nil
}
