package recipe

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/wardenzk/warden/client"
)

// ReadyConfig is a set of configuration keys guarded by a "ready" flag
// node, the ZooKeeper recipes-page pattern for updating several znodes so
// that readers never act on a half-applied update.
//
// Layout:
//
//	<path>              container
//	<path>/ready        persistent, empty: present = the keys are consistent
//	<path>/keys/<key>   persistent; data = the key's value
//
// Writer (Update): delete ready, write every key, create ready. Writers
// must be serialised (one writer process, or hold a Lock around Update):
// two writers interleaving would let one recreate ready while the other is
// still writing.
//
// Reader (Read): exists(ready) with a watch; while it is absent, wait for
// the watch. When present (remember its czxid), read the keys, then check
// that ready still exists with the same czxid. Every update deletes ready
// before touching a key, so an unchanged czxid proves no update overlapped
// the reads; otherwise the reader starts again. Watch re-reads each time
// ready is recreated.
type ReadyConfig struct {
	c    *client.Conn
	path string
}

// NewReadyConfig returns the ready-flag configuration at path on c. It does
// not touch the server.
func NewReadyConfig(c *client.Conn, path string) *ReadyConfig {
	return &ReadyConfig{c: c, path: path}
}

func (rc *ReadyConfig) ready() string { return joinPath(rc.path, "ready") }
func (rc *ReadyConfig) keys() string  { return joinPath(rc.path, "keys") }

// Update applies set: a nil value deletes the key, any other value creates
// or replaces it. Readers see either the previous or the new configuration,
// never a mix, provided writers are serialised.
func (rc *ReadyConfig) Update(ctx context.Context, set map[string][]byte) error {
	if err := ensureParents(ctx, rc.c, rc.keys()); err != nil {
		return fmt.Errorf("recipe: config %s: update: %w", rc.path, err)
	}
	if err := retryLoss(ctx, func() error {
		err := rc.c.Delete(ctx, rc.ready(), -1)
		if errors.Is(err, client.ErrNoNode) {
			return nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("recipe: config %s: update: clear ready: %w", rc.path, err)
	}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		p := joinPath(rc.keys(), k)
		v := set[k]
		err := retryLoss(ctx, func() error {
			if v == nil {
				err := rc.c.Delete(ctx, p, -1)
				if errors.Is(err, client.ErrNoNode) {
					return nil
				}
				return err
			}
			_, err := rc.c.Set(ctx, p, v, -1)
			if errors.Is(err, client.ErrNoNode) {
				_, err = rc.c.Create(ctx, p, v, client.Persistent, client.OpenACL)
				if errors.Is(err, client.ErrNodeExists) {
					_, err = rc.c.Set(ctx, p, v, -1)
				}
			}
			return err
		})
		if err != nil {
			return fmt.Errorf("recipe: config %s: update %s: %w", rc.path, k, err)
		}
	}
	if err := retryLoss(ctx, func() error {
		_, err := rc.c.Create(ctx, rc.ready(), nil, client.Persistent, client.OpenACL)
		if errors.Is(err, client.ErrNodeExists) {
			return nil
		}
		return err
	}); err != nil {
		return fmt.Errorf("recipe: config %s: update: set ready: %w", rc.path, err)
	}
	return nil
}

// Read returns a consistent snapshot of every key, waiting while an update
// is in progress (ready absent) until ctx ends.
func (rc *ReadyConfig) Read(ctx context.Context) (map[string][]byte, error) {
	kv, _, err := rc.read(ctx)
	return kv, err
}

// read returns a snapshot and the watch on ready set by its final check:
// it fires when the next update starts.
func (rc *ReadyConfig) read(ctx context.Context) (map[string][]byte, <-chan client.Event, error) {
	for {
		st, ok, ev, err := rc.c.ExistsW(ctx, rc.ready())
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("recipe: config %s: read: %w", rc.path, err)
		}
		if !ok {
			select {
			case e := <-ev:
				if e.Err != nil {
					return nil, nil, fmt.Errorf("recipe: config %s: read: %w", rc.path, e.Err)
				}
				continue
			case <-ctx.Done():
				return nil, nil, ctx.Err()
			}
		}
		kv, err := readKeys(ctx, rc.c, rc.keys())
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("recipe: config %s: read: %w", rc.path, err)
		}
		st2, ok, err := rc.c.Exists(ctx, rc.ready())
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, nil, fmt.Errorf("recipe: config %s: read: %w", rc.path, err)
		}
		if ok && st2.Czxid == st.Czxid {
			return kv, ev, nil
		}
	}
}

// Watch sends a consistent snapshot now and again after every completed
// update, until ctx ends or the session ends; then it closes the channel.
// A slow receiver gets the latest snapshot (intermediate ones are skipped).
func (rc *ReadyConfig) Watch(ctx context.Context) <-chan map[string][]byte {
	ch := make(chan map[string][]byte)
	go func() {
		defer close(ch)
		for {
			kv, ev, err := rc.read(ctx)
			if err != nil {
				return
			}
			select {
			case ch <- kv:
			case <-ctx.Done():
				return
			}
			select {
			case e := <-ev: // an update started: wait for ready again
				if e.Err != nil {
					return
				}
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// readKeys reads every child of dir into a map. A child deleted between
// the listing and the read is skipped.
func readKeys(ctx context.Context, c *client.Conn, dir string) (map[string][]byte, error) {
	names, _, err := c.Children(ctx, dir)
	if errors.Is(err, client.ErrNoNode) {
		return map[string][]byte{}, nil
	}
	if err != nil {
		return nil, err
	}
	kv := make(map[string][]byte, len(names))
	for _, n := range names {
		data, _, err := c.Get(ctx, joinPath(dir, n))
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, err
		}
		kv[n] = data
	}
	return kv, nil
}

// retryLoss runs op until it returns something other than
// ErrConnectionLoss or ctx ends. op must be idempotent.
func retryLoss(ctx context.Context, op func() error) error {
	for {
		err := op()
		if !errors.Is(err, client.ErrConnectionLoss) {
			return err
		}
		if ctx.Err() != nil {
			return err
		}
	}
}

// AtomicConfig is a set of configuration keys updated all at once with
// multi: every key write and a bump of a version node commit in one
// transaction, so there is no half-applied state to hide, and concurrent
// writers are safe (the version check makes each update a compare-and-set).
//
// Layout:
//
//	<path>              container
//	<path>/version      persistent; data = generation in decimal; its
//	                    Stat.Version equals the generation
//	<path>/keys/<key>   persistent; data = the key's value
//
// Read takes a snapshot with one multiRead (ZooKeeper 3.6+): the version
// node, the key list, every key, the version node again. The server need
// not run those reads atomically, so Read retries until both version reads
// agree and the key list matches the keys read: no update committed in
// between, and the values belong to that generation.
type AtomicConfig struct {
	c    *client.Conn
	path string
}

// NewAtomicConfig returns the multi-based configuration at path on c. It
// does not touch the server.
func NewAtomicConfig(c *client.Conn, path string) *AtomicConfig {
	return &AtomicConfig{c: c, path: path}
}

func (ac *AtomicConfig) version() string { return joinPath(ac.path, "version") }
func (ac *AtomicConfig) keys() string    { return joinPath(ac.path, "keys") }

// ConfigSnapshot is a consistent view of an AtomicConfig.
type ConfigSnapshot struct {
	// Generation counts committed updates (0: never updated).
	Generation int64
	Values     map[string][]byte
}

// Update applies set (a nil value deletes the key) as one transaction and
// returns the new generation. It retries from a fresh read when another
// writer commits first, until ctx ends.
func (ac *AtomicConfig) Update(ctx context.Context, set map[string][]byte) (int64, error) {
	if err := ac.init(ctx); err != nil {
		return 0, fmt.Errorf("recipe: config %s: update: %w", ac.path, err)
	}
	for {
		names, _, err := ac.c.Children(ctx, ac.keys())
		if err == nil {
			var vst client.Stat
			vst, _, err = ac.c.Exists(ctx, ac.version())
			if err == nil {
				gen, err := ac.commit(ctx, names, vst.Version, set)
				if err == nil {
					return gen, nil
				}
				if !errors.Is(err, client.ErrBadVersion) && !errors.Is(err, client.ErrNodeExists) &&
					!errors.Is(err, client.ErrNoNode) && !errors.Is(err, client.ErrConnectionLoss) {
					return 0, fmt.Errorf("recipe: config %s: update: %w", ac.path, err)
				}
				// Lost a race (or the answer): re-read and try again. A
				// commit whose answer was lost is re-applied, which is
				// harmless: the same values at the next generation.
				if ctx.Err() != nil {
					return 0, ctx.Err()
				}
				continue
			}
		}
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		return 0, fmt.Errorf("recipe: config %s: update: %w", ac.path, err)
	}
}

// commit builds and sends the transaction: the version check-and-bump
// first, then the key writes.
func (ac *AtomicConfig) commit(ctx context.Context, existing []string, version int32, set map[string][]byte) (int64, error) {
	have := make(map[string]bool, len(existing))
	for _, n := range existing {
		have[n] = true
	}
	gen := int64(version) + 1
	ops := []client.Op{client.SetDataOp(ac.version(), []byte(strconv.FormatInt(gen, 10)), version)}
	for _, k := range slices.Sorted(maps.Keys(set)) {
		p := joinPath(ac.keys(), k)
		v := set[k]
		switch {
		case v == nil && have[k]:
			ops = append(ops, client.DeleteOp(p, -1))
		case v == nil:
		case have[k]:
			ops = append(ops, client.SetDataOp(p, v, -1))
		default:
			ops = append(ops, client.CreateOp(p, v, client.Persistent, client.OpenACL))
		}
	}
	if _, err := ac.c.Multi(ctx, ops...); err != nil {
		return 0, err
	}
	return gen, nil
}

// init creates the keys and version nodes when missing.
func (ac *AtomicConfig) init(ctx context.Context) error {
	if err := ensureParents(ctx, ac.c, ac.keys()); err != nil {
		return err
	}
	return retryLoss(ctx, func() error {
		_, err := ac.c.Create(ctx, ac.version(), []byte("0"), client.Persistent, client.OpenACL)
		if errors.Is(err, client.ErrNodeExists) {
			return nil
		}
		return err
	})
}

// Read returns a consistent snapshot. A configuration never updated reads
// as generation 0 with no values.
func (ac *AtomicConfig) Read(ctx context.Context) (ConfigSnapshot, error) {
	for {
		names, _, err := ac.c.Children(ctx, ac.keys())
		if errors.Is(err, client.ErrNoNode) {
			return ConfigSnapshot{Values: map[string][]byte{}}, nil
		}
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return ConfigSnapshot{}, fmt.Errorf("recipe: config %s: read: %w", ac.path, err)
		}
		slices.Sort(names)
		ops := make([]client.ReadOp, 0, len(names)+3)
		ops = append(ops, client.GetDataReadOp(ac.version()), client.ChildrenReadOp(ac.keys()))
		for _, n := range names {
			ops = append(ops, client.GetDataReadOp(joinPath(ac.keys(), n)))
		}
		ops = append(ops, client.GetDataReadOp(ac.version()))
		res, err := ac.c.MultiRead(ctx, ops...)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return ConfigSnapshot{}, fmt.Errorf("recipe: config %s: read: %w", ac.path, err)
		}
		first, list, last := res[0], res[1], res[len(res)-1]
		if errors.Is(first.Err, client.ErrNoNode) && errors.Is(last.Err, client.ErrNoNode) {
			return ConfigSnapshot{Values: map[string][]byte{}}, nil // never updated
		}
		if first.Err != nil || list.Err != nil || last.Err != nil ||
			first.Stat.Version != last.Stat.Version {
			continue // an update committed during the reads
		}
		listed := slices.Sorted(slices.Values(list.Children))
		if !slices.Equal(listed, names) {
			continue // keys added or removed since the listing
		}
		snap := ConfigSnapshot{Generation: int64(first.Stat.Version), Values: make(map[string][]byte, len(names))}
		consistent := true
		for i, n := range names {
			r := res[i+2]
			if r.Err != nil {
				consistent = false
				break
			}
			snap.Values[n] = r.Data
		}
		if !consistent {
			continue
		}
		return snap, nil
	}
}
