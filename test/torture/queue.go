package torture

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/test/torture/checker"
)

// queue is the exactly-once workload: clients enqueue values as
// sequential children of one node and dequeue the head (read it, delete
// it; a delete that finds the node gone moves on to the next). After
// healing the harness drains what is left.
type queue struct {
	e       *env
	clients int
	dir     string
	enq     recorder[checker.Enqueue]
	deq     recorder[checker.Dequeue]
}

func (w *queue) name() string { return "queue" }

func (w *queue) setup(ctx context.Context, c *client.Conn) error { return ensurePath(ctx, c, w.dir) }

func (w *queue) run(ctx context.Context) {
	w.e.drive(ctx, w.name(), w.clients, 10, func(k, i int, rng *rand.Rand, c *client.Conn) {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		if rng.IntN(2) == 1 {
			w.dequeue(octx, c, k)
			return
		}
		v := fmt.Sprintf("v-%d-%d", k, i)
		op := checker.Enqueue{Client: k, Value: v}
		op.Call = w.e.now()
		_, err := c.Create(octx, w.dir+"/q-", []byte(v), client.PersistentSequential, client.OpenACL)
		op.Return, op.Outcome = w.e.now(), outcomeOf(err)
		w.enq.add(op)
	})
}

// dequeue removes the head of the queue, recording what it removed.
func (w *queue) dequeue(ctx context.Context, c *client.Conn, k int) {
	call := w.e.now()
	kids, _, err := c.Children(ctx, w.dir)
	if err != nil {
		return
	}
	sort.Strings(kids) // "q-" + 10-digit sequence: name order is queue order
	for _, kid := range kids {
		p := w.dir + "/" + kid
		data, _, err := c.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return
		}
		err = c.Delete(ctx, p, -1)
		if errors.Is(err, client.ErrNoNode) {
			continue // another client took it
		}
		op := checker.Dequeue{Client: k, Value: string(data)}
		op.Call, op.Return, op.Outcome = call, w.e.now(), outcomeOf(err)
		w.deq.add(op)
		return
	}
}

func (w *queue) check(ctx context.Context, members []string) []checker.Result {
	// Every member must list the same queue; then one client drains it.
	final, err := readEach(ctx, w.e, members, w.dir, func(ctx context.Context, c *client.Conn) ([]string, error) {
		kids, _, err := c.Children(ctx, w.dir)
		sort.Strings(kids)
		return kids, err
	})
	if err == nil {
		err = sameEverywhere(final)
	}
	var drained []string
	if err == nil {
		drained, err = w.drain(ctx, members[0])
	}
	if err != nil {
		return []checker.Result{{Workload: w.name(), Anomalies: []string{err.Error()}}}
	}
	return []checker.Result{checker.CheckQueue(w.enq.all(), w.deq.all(), drained)}
}

// drain reads and deletes every element left in the queue. The clients
// have stopped, so nobody else deletes: an element gone after a delete
// whose outcome was unknown was removed by that delete, and a lost
// connection is retried on a new session until ctx ends.
func (w *queue) drain(ctx context.Context, addr string) ([]string, error) {
	var values []string
	s := &session{e: w.e}
	defer s.close()
	taken := map[string]string{} // path → value read before a delete of unknown outcome
	for {
		c := s.get(ctx)
		if c == nil {
			return nil, fmt.Errorf("drain: %w", ctx.Err())
		}
		kids, _, err := c.Children(ctx, w.dir)
		if err != nil {
			if outcomeOf(err) == checker.Failed || !backoff(ctx) {
				return nil, fmt.Errorf("drain: %w", err)
			}
			continue
		}
		sort.Strings(kids)
		for p, v := range taken {
			if !contains(kids, p[len(w.dir)+1:]) {
				values = append(values, v)
				delete(taken, p)
			}
		}
		if len(kids) == 0 && len(taken) == 0 {
			return values, nil
		}
		for _, kid := range kids {
			p := w.dir + "/" + kid
			data, _, err := c.Get(ctx, p)
			if errors.Is(err, client.ErrNoNode) {
				continue // removed since the listing, by a delete of ours in taken
			}
			if err == nil {
				if _, ok := taken[p]; !ok {
					taken[p] = string(data)
				}
				err = c.Delete(ctx, p, -1)
				if errors.Is(err, client.ErrNoNode) {
					err = nil // a delete of ours of unknown outcome took effect late
				}
			}
			if err != nil {
				if outcomeOf(err) == checker.Failed || !backoff(ctx) {
					return nil, fmt.Errorf("drain %s: %w", p, err)
				}
				break // look again on a (new) session
			}
			values = append(values, taken[p])
			delete(taken, p)
		}
	}
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

// sameEverywhere reports an error when the members' lists differ.
func sameEverywhere(lists map[string][]string) error {
	var first string
	var want []string
	for addr, l := range lists {
		if first == "" || addr < first {
			first, want = addr, l
		}
	}
	for addr, l := range lists {
		if fmt.Sprint(l) != fmt.Sprint(want) {
			return fmt.Errorf("members disagree: %s lists %d nodes, %s lists %d (%v vs %v)", first, len(want), addr, len(l), want, l)
		}
	}
	return nil
}

func (w *queue) writes() []write {
	var ws []write
	for _, op := range w.enq.all() {
		ws = append(ws, write{op.Span, op.Outcome})
	}
	return ws
}
