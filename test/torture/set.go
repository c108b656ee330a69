package torture

import (
	"context"
	"fmt"
	"math/rand/v2"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/test/torture/checker"
)

// set is the durability workload: clients create unique children of one
// node; after healing, every acknowledged create must be on every member.
type set struct {
	e       *env
	clients int
	dir     string
	hist    recorder[checker.SetAdd]
}

func (w *set) name() string { return "set" }

func (w *set) setup(ctx context.Context, c *client.Conn) error { return ensurePath(ctx, c, w.dir) }

func (w *set) run(ctx context.Context) {
	w.e.drive(ctx, w.name(), w.clients, 10, func(k, i int, _ *rand.Rand, c *client.Conn) {
		el := fmt.Sprintf("e-%d-%d", k, i)
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		op := checker.SetAdd{Client: k, Element: el}
		op.Call = w.e.now()
		_, err := c.Create(octx, w.dir+"/"+el, nil, client.Persistent, client.OpenACL)
		op.Return, op.Outcome = w.e.now(), outcomeOf(err)
		w.hist.add(op)
	})
}

func (w *set) check(ctx context.Context, members []string) []checker.Result {
	final, err := readEach(ctx, w.e, members, w.dir, func(ctx context.Context, c *client.Conn) ([]string, error) {
		kids, _, err := c.Children(ctx, w.dir)
		return kids, err
	})
	if err != nil {
		return []checker.Result{{Workload: w.name(), Anomalies: []string{err.Error()}}}
	}
	return []checker.Result{checker.CheckSet(w.hist.all(), final)}
}

func (w *set) writes() []write {
	var ws []write
	for _, op := range w.hist.all() {
		ws = append(ws, write{op.Span, op.Outcome})
	}
	return ws
}
