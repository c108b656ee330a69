package torture

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/test/torture/checker"
)

// registers is the linearizability workload: a few znodes, each a
// register, written (setData, version -1), compare-and-set (setData with
// the version the client last read) and read (sync, then getData) by
// several clients at once.
type registers struct {
	e       *env
	keys    int
	clients int
	dir     string
	vizDir  string
	hist    recorder[checker.RegisterOp]
	// refused counts, by error, the writes and CASes a member refused
	// for another reason than the version (SESSIONMOVED, THROTTLEDOP):
	// they took no effect, and are left out of the history, where a
	// failed CAS means BADVERSION.
	refused recorder[string]
}

func (w *registers) name() string { return "registers" }

func (w *registers) key(i int) string { return fmt.Sprintf("%s/k%d", w.dir, i) }

func (w *registers) setup(ctx context.Context, c *client.Conn) error {
	if err := ensurePath(ctx, c, w.dir); err != nil {
		return err
	}
	for i := 0; i < w.keys; i++ {
		if _, err := c.Create(ctx, w.key(i), []byte("0"), client.Persistent, client.OpenACL); err != nil && !errors.Is(err, client.ErrNodeExists) {
			return fmt.Errorf("create %s: %w", w.key(i), err)
		}
	}
	return nil
}

func (w *registers) run(ctx context.Context) {
	w.e.drive(ctx, w.name(), w.clients, 10, func(k, i int, rng *rand.Rand, c *client.Conn) {
		value := int64(k+1)*1_000_000 + int64(i) + 1 // unique to this client and step
		key := w.key(rng.IntN(w.keys))
		op := checker.RegisterOp{Client: k, Key: key}
		var opErr error
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		defer cancel()
		switch rng.IntN(3) {
		case 0:
			op.Kind, op.Value = checker.RegWrite, value
			op.Call = w.e.now()
			_, opErr = c.Set(octx, key, []byte(strconv.FormatInt(value, 10)), -1)
		case 1:
			_, st, err := c.Get(octx, key)
			if err != nil {
				return
			}
			op.Kind, op.Value, op.Version = checker.RegCAS, value, st.Version
			op.Call = w.e.now()
			_, opErr = c.Set(octx, key, []byte(strconv.FormatInt(value, 10)), st.Version)
		default:
			op.Kind = checker.RegRead
			op.Call = w.e.now()
			opErr = c.Sync(octx, key)
			var data []byte
			var st client.Stat
			if opErr == nil {
				data, st, opErr = c.Get(octx, key)
			}
			if opErr == nil {
				v, perr := strconv.ParseInt(string(data), 10, 64)
				if perr != nil {
					// Not a value any client wrote: record it as one no
					// write produced, so the checker flags it.
					v = -1
				}
				op.Value, op.Version = v, st.Version
			}
		}
		op.Return, op.Outcome = w.e.now(), outcomeOf(opErr)
		if op.Outcome == checker.Failed && op.Kind != checker.RegRead && !errors.Is(opErr, client.ErrBadVersion) {
			w.refused.add(opErr.Error())
			return
		}
		w.hist.add(op)
	})
}

func (w *registers) check(ctx context.Context, members []string) []checker.Result {
	res := checker.CheckRegisters(w.hist.all(), 60*time.Second, w.vizDir)
	if refused := w.refused.all(); len(refused) > 0 {
		byErr := map[string]int{}
		for _, e := range refused {
			byErr[e]++
		}
		res.Notes = append(res.Notes, fmt.Sprintf("%d writes refused without effect (left out): %v", len(refused), byErr))
	}
	return []checker.Result{res}
}

func (w *registers) writes() []write {
	var ws []write
	for _, op := range w.hist.all() {
		if op.Kind != checker.RegRead {
			ws = append(ws, write{op.Span, op.Outcome})
		}
	}
	return ws
}
