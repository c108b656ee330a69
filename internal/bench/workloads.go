package bench

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

// workload is one named workload of `warden bench`.
type workload struct {
	doc string
	run func(ctx context.Context, e *env) error
}

var workloads = map[string]workload{
	"latencies": {"zk-latencies phases (create/set/get/exists+watch/delete/create-ephemeral), sync and async, --znodes each", runLatencies},
	"sweep":     {"saturation sweep over --read-ratios, --payload values on --keys znodes", runSweep},
	"create":    {"sync create latency: one client, create then async delete", runCreate},
	"lock":      {"lock contention via recipe.Lock among --clients contenders: hand-offs/s, hand-off latency", runLock},
	"fanout":    {"one znode watched by --watchers sessions: time from the write to the last event, --rounds writes", runFanout},
	"storm":     {"--sessions sessions connect at once, lose their connections and reconnect, then close", runStorm},
	"multi":     {"one third writes (three quarters of them multi), two thirds reads, on --keys znodes", runMulti},
	"scale":     {"server memory (needs --server-pid; of an ensemble, the member that grew most) at each of --scale-sizes znodes", runScale},
	"flood":     {"--clients sessions set --payload bytes on --keys znodes for --duration while another session reads a small znode: its latency, and the server's peak memory (--server-pid)", runFlood},
	"fsync":     {"no server: --payload bytes written at increasing offsets of a preallocated file in --dir, each followed by fdatasync, one at a time: the disk's floor for a durable write", runFsync},
	"failover":  {"--clients writing steadily to an ensemble; --failovers times: kill the leader (--kill-leader-pidfile or --kill-leader-cmd), time until writes succeed again, restart it (--restart-cmd)", runFailover},
}

// WorkloadNames lists the workloads, sorted.
func WorkloadNames() []string {
	names := make([]string, 0, len(workloads))
	for n := range workloads {
		names = append(names, n)
	}
	slices.Sort(names)
	return names
}

// WorkloadDoc returns the one-line description of a workload.
func WorkloadDoc(name string) string { return workloads[name].doc }

func runLatencies(ctx context.Context, e *env) error {
	conns, err := e.loadConns(ctx)
	if err != nil {
		return err
	}
	base := e.cfg.Root + "/latencies"
	if err := e.resetPath(ctx, conns, base); err != nil {
		return err
	}
	defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)
	data := payload(e.cfg.Payload)
	modes := []struct {
		name     string
		conns    []*client.Conn
		inflight int
	}{
		{"sync", conns[:1], 1},
		{"async", conns, e.cfg.Inflight},
	}
	for _, m := range modes {
		dir := base + "/" + m.name
		if err := ensurePath(ctx, conns[0], dir); err != nil {
			return err
		}
		node := func(i int64) string { return dir + "/n" + strconv.FormatInt(i, 10) }
		eph := func(i int64) string { return dir + "/e" + strconv.FormatInt(i, 10) }
		steps := []struct {
			name string
			op   opFunc
		}{
			{"create", func(ctx context.Context, c *client.Conn, i int64) error {
				_, err := c.Create(ctx, node(i), data, client.Persistent, client.OpenACL)
				return err
			}},
			{"set", func(ctx context.Context, c *client.Conn, i int64) error {
				_, err := c.Set(ctx, node(i), data, -1)
				return err
			}},
			{"get", func(ctx context.Context, c *client.Conn, i int64) error {
				_, _, err := c.Get(ctx, node(i))
				return err
			}},
			{"exists+watch", func(ctx context.Context, c *client.Conn, i int64) error {
				_, _, _, err := c.ExistsW(ctx, node(i))
				return err
			}},
			{"delete", func(ctx context.Context, c *client.Conn, i int64) error {
				return c.Delete(ctx, node(i), -1)
			}},
			{"create-ephemeral", func(ctx context.Context, c *client.Conn, i int64) error {
				_, err := c.Create(ctx, eph(i), data, client.Ephemeral, client.OpenACL)
				return err
			}},
			{"delete-ephemeral", func(ctx context.Context, c *client.Conn, i int64) error {
				return c.Delete(ctx, eph(i), -1)
			}},
		}
		for _, s := range steps {
			p := phase{name: m.name + " " + s.name, conns: m.conns, inflight: m.inflight,
				ops: int64(e.cfg.Znodes), rate: e.cfg.Rate, op: s.op}
			if _, err := e.runPhase(ctx, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// keyed prepares the --keys znodes of sweep and multi and returns their
// paths.
func (e *env) keyed(ctx context.Context, conns []*client.Conn, name string) ([]string, error) {
	dir := e.cfg.Root + "/" + name
	if err := e.resetPath(ctx, conns, dir); err != nil {
		return nil, err
	}
	keys := make([]string, e.cfg.Keys)
	for i := range keys {
		keys[i] = dir + "/k" + strconv.Itoa(i)
	}
	data := payload(e.cfg.Payload)
	err := e.bulk(ctx, conns, int64(len(keys)), func(ctx context.Context, c *client.Conn, i int64) error {
		_, err := c.Create(ctx, keys[i], data, client.Persistent, client.OpenACL)
		return err
	})
	return keys, err
}

// isRead spreads ratio reads evenly over every hundred requests: 37 is
// prime to 100, so i*37 mod 100 visits each residue once per hundred.
func isRead(i int64, ratio int) bool { return (i*37)%100 < int64(ratio) }

func runSweep(ctx context.Context, e *env) error {
	conns, err := e.loadConns(ctx)
	if err != nil {
		return err
	}
	keys, err := e.keyed(ctx, conns, "sweep")
	defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)
	if err != nil {
		return err
	}
	data := payload(e.cfg.Payload)
	n := int64(len(keys))
	for _, r := range e.cfg.ReadRatios {
		op := func(ctx context.Context, c *client.Conn, i int64) error {
			k := keys[i%n]
			if isRead(i, r) {
				_, _, err := c.Get(ctx, k)
				return err
			}
			_, err := c.Set(ctx, k, data, -1)
			return err
		}
		if _, err := e.runPhase(ctx, e.phaseFor(fmt.Sprintf("read %d%%", r), float64(r), conns, op)); err != nil {
			return err
		}
	}
	return nil
}

func runCreate(ctx context.Context, e *env) error {
	cs, err := e.connect(ctx, 1)
	if err != nil {
		return err
	}
	e.extra = append(e.extra, cs...)
	dir := e.cfg.Root + "/create"
	if err := e.resetPath(ctx, cs, dir); err != nil {
		return err
	}
	defer e.removeTree(context.WithoutCancel(ctx), cs, e.cfg.Root)
	data := payload(e.cfg.Payload)
	var deletes sync.WaitGroup
	var deleteErrs atomic.Int64
	op := func(ctx context.Context, c *client.Conn, _ int64) error {
		p, err := c.Create(ctx, dir+"/c-", data, client.PersistentSequential, client.OpenACL)
		if err != nil {
			return err
		}
		deletes.Go(func() {
			if c.Delete(ctx, p, -1) != nil {
				deleteErrs.Add(1)
			}
		})
		return nil
	}
	p := e.phaseFor("sync create", 0, cs, op)
	p.inflight = 1
	_, err = e.runPhase(ctx, p)
	deletes.Wait()
	if n := deleteErrs.Load(); n > 0 && err == nil {
		err = fmt.Errorf("bench: %d async deletes failed", n)
	}
	return err
}

func runLock(ctx context.Context, e *env) error {
	conns, err := e.loadConns(ctx)
	if err != nil {
		return err
	}
	dir := e.cfg.Root + "/lock"
	if err := e.resetPath(ctx, conns, dir); err != nil {
		return err
	}
	defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)

	var lastRelease atomic.Int64 // UnixNano of the latest release, 0 before the first
	var acquired atomic.Int64
	hists := make([]*Histogram, len(conns))
	errs := make([]error, len(conns))
	start := time.Now()
	deadline := start.Add(e.cfg.Duration)
	var wg sync.WaitGroup
	for k, c := range conns {
		hists[k] = NewHistogram()
		wg.Go(func() {
			l := recipe.NewLock(c, dir+"/mutex")
			for ctx.Err() == nil {
				if _, err := l.Acquire(ctx); err != nil {
					errs[k] = err
					return
				}
				got := time.Now()
				if lr := lastRelease.Load(); lr != 0 {
					hists[k].Record(got.Sub(time.Unix(0, lr)))
				}
				n := acquired.Add(1)
				stop := (e.cfg.Ops > 0 && n >= e.cfg.Ops) || (e.cfg.Ops <= 0 && !got.Before(deadline))
				lastRelease.Store(time.Now().UnixNano())
				if err := l.Release(ctx); err != nil {
					errs[k] = err
					return
				}
				if stop {
					return
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	all := NewHistogram()
	for _, h := range hists {
		all.Merge(h)
	}
	if err := errors.Join(errs...); err != nil && ctx.Err() == nil {
		return fmt.Errorf("bench: lock: %w", err)
	}
	e.recordPhase("lock hand-off", len(conns), all, 0, elapsed)
	e.metric("hand-offs per second", float64(all.Count())/elapsed.Seconds(), "1/s")
	e.metric("contenders", float64(len(conns)), "sessions")
	return ctx.Err()
}

func runFanout(ctx context.Context, e *env) error {
	writer, err := e.connect(ctx, 1)
	if err != nil {
		return err
	}
	e.extra = append(e.extra, writer...)
	node := e.cfg.Root + "/fanout"
	if err := e.resetPath(ctx, writer, node); err != nil {
		return err
	}
	defer e.removeTree(context.WithoutCancel(ctx), writer, e.cfg.Root)
	ws, err := e.connect(ctx, e.cfg.Watchers)
	if err != nil {
		return err
	}
	e.extra = append(e.extra, ws...)

	last, each := NewHistogram(), NewHistogram()
	data := payload(e.cfg.Payload)
	start := time.Now()
	for range e.cfg.Rounds {
		chans := make([]<-chan client.Event, len(ws))
		errs := make([]error, len(ws))
		var wg sync.WaitGroup
		for i, c := range ws {
			wg.Go(func() { _, _, chans[i], errs[i] = c.GetW(ctx, node) })
		}
		wg.Wait()
		if err := errors.Join(errs...); err != nil {
			return fmt.Errorf("bench: fanout watch: %w", err)
		}
		arrived := make([]time.Time, len(ws))
		for i, ch := range chans {
			wg.Go(func() {
				select {
				case ev := <-ch:
					if ev.Err == nil {
						arrived[i] = time.Now()
					}
				case <-ctx.Done():
				}
			})
		}
		t0 := time.Now()
		if _, err := writer[0].Set(ctx, node, data, -1); err != nil {
			return fmt.Errorf("bench: fanout write: %w", err)
		}
		wg.Wait()
		if err := ctx.Err(); err != nil {
			return err
		}
		var latest time.Time
		for i, at := range arrived {
			if at.IsZero() {
				return fmt.Errorf("bench: fanout: watcher %d got no event", i)
			}
			each.Record(at.Sub(t0))
			if at.After(latest) {
				latest = at
			}
		}
		last.Record(latest.Sub(t0))
	}
	elapsed := time.Since(start)
	e.recordPhase("fanout time to last event", len(ws), last, 0, elapsed)
	e.recordPhase("fanout time to each event", len(ws), each, 0, elapsed)
	e.metric("watchers", float64(len(ws)), "sessions")
	return nil
}

func runStorm(ctx context.Context, e *env) error {
	var mu sync.Mutex
	var sockets []net.Conn
	record := func(ctx context.Context, network, addr string) (net.Conn, error) {
		var d net.Dialer
		nc, err := d.DialContext(ctx, network, addr)
		if err == nil {
			mu.Lock()
			sockets = append(sockets, nc)
			mu.Unlock()
		}
		return nc, err
	}
	n := e.cfg.Sessions
	conns := make([]*client.Conn, n)
	errs := make([]error, n)
	hists := make([]*Histogram, n)
	dials := make([]dialFunc, n)
	for i := range dials {
		dials[i] = e.sessionDialer(record)
	}
	cctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	start := time.Now()
	var wg sync.WaitGroup
	for i := range conns {
		hists[i] = NewHistogram()
		wg.Go(func() {
			t0 := time.Now()
			conns[i], errs[i] = client.Connect(cctx, e.cfg.Servers, client.WithDialer(dials[i]),
				client.WithBackoff(time.Millisecond, 100*time.Millisecond))
			hists[i].Record(time.Since(t0))
		})
	}
	wg.Wait()
	connectTime := time.Since(start)
	e.extra = append(e.extra, conns...)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bench: storm connect: %w", err)
	}
	e.recordPhase("storm connect", n, merge(hists), 0, connectTime)
	e.metric("time to connect all sessions", connectTime.Seconds(), "s")

	// Reconnect: cut every socket at once; each session must come back
	// on a new connection (same session id).
	subs := make([]<-chan client.SessionEvent, n)
	for i, c := range conns {
		subs[i] = c.SessionEvents()
		hists[i] = NewHistogram()
	}
	mu.Lock()
	cut := sockets
	sockets = nil
	mu.Unlock()
	start = time.Now()
	for _, nc := range cut {
		nc.Close()
	}
	rctx, rcancel := context.WithTimeout(ctx, connectTimeout)
	defer rcancel()
	for i, sub := range subs {
		wg.Go(func() {
			down := false
			for {
				select {
				case ev, ok := <-sub:
					if !ok {
						errs[i] = fmt.Errorf("session %d ended", i)
						return
					}
					switch ev.State {
					case client.StateDisconnected:
						down = true
					case client.StateConnected:
						if down {
							hists[i].Record(time.Since(start))
							return
						}
					case client.StateExpired:
						errs[i] = client.ErrSessionExpired
						return
					}
				case <-rctx.Done():
					errs[i] = rctx.Err()
					return
				}
			}
		})
	}
	wg.Wait()
	reconnectTime := time.Since(start)
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("bench: storm reconnect: %w", err)
	}
	e.recordPhase("storm reconnect", n, merge(hists), 0, reconnectTime)
	e.metric("time to reconnect all sessions", reconnectTime.Seconds(), "s")

	start = time.Now()
	closeConns(conns)
	e.metric("time to close all sessions", time.Since(start).Seconds(), "s")
	return nil
}

func merge(hs []*Histogram) *Histogram {
	all := NewHistogram()
	for _, h := range hs {
		all.Merge(h)
	}
	return all
}

func runMulti(ctx context.Context, e *env) error {
	conns, err := e.loadConns(ctx)
	if err != nil {
		return err
	}
	keys, err := e.keyed(ctx, conns, "multi")
	defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)
	if err != nil {
		return err
	}
	data := payload(e.cfg.Payload)
	n := int64(len(keys))
	op := func(ctx context.Context, c *client.Conn, i int64) error {
		k := keys[i%n]
		switch {
		case i%3 != 0:
			_, _, err := c.Get(ctx, k)
			return err
		case (i/3)%4 == 3:
			_, err := c.Set(ctx, k, data, -1)
			return err
		default:
			_, err := c.Multi(ctx,
				client.CheckOp(keys[(i+2)%n], -1),
				client.SetDataOp(k, data, -1),
				client.SetDataOp(keys[(i+1)%n], data, -1))
			return err
		}
	}
	_, err = e.runPhase(ctx, e.phaseFor("multi mix", 0, conns, op))
	return err
}

// scaleBucket is the number of znodes per parent in the scale workload,
// so that no getChildren reply grows past the default 1 MiB buffer.
const scaleBucket = 1000

func runScale(ctx context.Context, e *env) error {
	conns, err := e.loadConns(ctx)
	if err != nil {
		return err
	}
	dir := e.cfg.Root + "/scale"
	if err := e.resetPath(ctx, conns, dir); err != nil {
		return err
	}
	if !e.cfg.Keep {
		defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)
	}
	sizes := slices.Clone(e.cfg.ScaleSizes)
	slices.Sort(sizes)
	largest := sizes[len(sizes)-1]
	buckets := (largest + scaleBucket - 1) / scaleBucket
	if err := e.bulk(ctx, conns, int64(buckets), func(ctx context.Context, c *client.Conn, i int64) error {
		_, err := c.Create(ctx, dir+"/b"+strconv.FormatInt(i, 10), nil, client.Persistent, client.OpenACL)
		return err
	}); err != nil {
		return err
	}
	var base []ProcStats
	if len(e.cfg.ServerPIDs) > 0 {
		base = readEach(e.cfg.ServerPIDs)
	} else {
		e.note("scale: memory not measured: give --server-pid")
	}
	e.note("scale: restart time (standalone) and rejoin time (a follower of an ensemble) are measured by scripts/bench-compare.sh and scripts/bench-compare-ensemble.sh, which restart the server, not by warden bench")
	data := payload(e.cfg.Payload)
	have := 0
	for _, size := range sizes {
		from := int64(have)
		op := func(ctx context.Context, c *client.Conn, i int64) error {
			j := from + i
			p := dir + "/b" + strconv.FormatInt(j/scaleBucket, 10) + "/n" + strconv.FormatInt(j%scaleBucket, 10)
			_, err := c.Create(ctx, p, data, client.Persistent, client.OpenACL)
			return err
		}
		p := phase{name: "create to " + strconv.Itoa(size), param: float64(size), conns: conns,
			inflight: e.cfg.Inflight, ops: int64(size - have), rate: e.cfg.Rate, op: op}
		pr, err := e.runPhase(ctx, p)
		if err != nil {
			return err
		}
		if pr.Errors > 0 {
			return fmt.Errorf("bench: scale: %d creates failed: %s", pr.Errors, pr.FirstError)
		}
		have = size
		if base == nil {
			continue
		}
		now := readEach(e.cfg.ServerPIDs)
		if growth, ok := maxRSSGrowth(base, now); ok {
			e.metric(fmt.Sprintf("server RSS at %d znodes", size), float64(combineProcs(now).RSS), "bytes")
			e.metric(fmt.Sprintf("bytes per znode at %d znodes", size), float64(growth)/float64(size), "bytes")
		}
	}
	return nil
}
