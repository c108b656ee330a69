package bench

import (
	"context"
	"sync"
	"time"

	"github.com/wardenzk/warden/client"
)

// floodSample is how often the flood samples the server's memory.
const floodSample = 100 * time.Millisecond

// runFlood overloads the server with large writes and measures what it
// costs the others: Config.Clients sessions set --payload bytes on
// --keys znodes (session i writes key i mod --keys, so the tree stays the
// same size) with --inflight requests pipelined each, for --duration,
// while one more session reads a small znode, one request at a time. The
// phases are the writes and the reads during them (their latency is the
// server's responsiveness under the flood); with --server-pid the
// server's resident memory is sampled every 100 ms and its peak reported
// (with several pids, an ensemble's, the largest member's at each
// sample).
//
// It is how scripts/flood-rss.sh checks the memory bound of
// docs/operations.md ("Limits and throttling").
func runFlood(ctx context.Context, e *env) error {
	conns, err := e.loadConns(ctx)
	if err != nil {
		return err
	}
	keys, err := e.keyed(ctx, conns, "flood")
	defer e.removeTree(context.WithoutCancel(ctx), conns, e.cfg.Root)
	if err != nil {
		return err
	}
	probeConns, err := e.connect(ctx, 1)
	if err != nil {
		return err
	}
	e.extra = append(e.extra, probeConns...)
	probePath := e.cfg.Root + "/flood-probe"
	if _, err := probeConns[0].Create(ctx, probePath, []byte("small"), client.Persistent, client.OpenACL); err != nil {
		return err
	}
	data := payload(e.cfg.Payload)
	n := int64(len(keys))
	write := e.phaseFor("flood: set", 0, conns, func(ctx context.Context, c *client.Conn, i int64) error {
		_, err := c.Set(ctx, keys[i%n], data, -1)
		return err
	})
	probe := phase{name: "flood: small reads from another session", conns: probeConns, inflight: 1,
		ops: e.cfg.Ops, duration: e.cfg.Duration,
		op: func(ctx context.Context, c *client.Conn, _ int64) error {
			_, _, err := c.Get(ctx, probePath)
			return err
		}}

	var base ProcStats
	if len(e.cfg.ServerPIDs) > 0 {
		base = readProcs(e.cfg.ServerPIDs)
	} else {
		e.note("flood: memory not measured: give --server-pid")
	}
	stopSampling := make(chan struct{})
	var maxRSS int64
	var sampling sync.WaitGroup
	if base.Readable {
		sampling.Go(func() {
			t := time.NewTicker(floodSample)
			defer t.Stop()
			for {
				if ps := readProcs(e.cfg.ServerPIDs); ps.Readable {
					maxRSS = max(maxRSS, ps.RSS)
				}
				select {
				case <-t.C:
				case <-stopSampling:
					return
				}
			}
		})
	}
	var probeResult PhaseResult
	var probing sync.WaitGroup
	probing.Go(func() { probeResult = e.drive(ctx, probe, nil) })
	pr, err := e.runPhase(ctx, write)
	probing.Wait()
	close(stopSampling)
	sampling.Wait()
	e.res.Phases = append(e.res.Phases, probeResult)
	if err != nil {
		return err
	}
	if pr.Seconds > 0 {
		e.metric("flood write rate", pr.Throughput*float64(e.cfg.Payload)/(1<<20), "MiB/s")
	}
	if base.Readable {
		end := readProcs(e.cfg.ServerPIDs)
		e.metric("server RSS before the flood", float64(base.RSS), "bytes")
		e.metric("server peak RSS sampled during the flood", float64(maxRSS), "bytes")
		e.metric("server peak RSS of its life (VmHWM)", float64(end.PeakRSS), "bytes")
	}
	e.metric("small read p99 during the flood", float64(probeResult.Latency.P99)/1000, "ms")
	e.metric("small read max during the flood", float64(probeResult.Latency.Max)/1000, "ms")
	return nil
}
