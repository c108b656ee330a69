package bench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/wardenzk/warden/client"
)

// Run connects to cfg.Servers, runs the workload and returns its result.
// Progress, when progress is not nil, receives a line now and then
// (the command passes the terminal's stderr).
func Run(ctx context.Context, cfg Config, progress io.Writer) (*Result, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	members, err := parseMembers(cfg.Servers)
	if err != nil {
		return nil, err
	}
	e := &env{cfg: cfg, clock: wallClock{}, progress: progress, members: members}
	if cfg.Workload == "failover" {
		sc := shellControl{kill: cfg.KillLeaderCmd, restart: cfg.RestartCmd}
		e.control = sc
		if cfg.KillLeaderPIDFile != "" {
			e.control = pidFileControl{pidFile: cfg.KillLeaderPIDFile, restart: sc}
		}
	}
	spread := SpreadRoundRobin
	if cfg.Spread == SpreadShuffle {
		spread = SpreadShuffle
	}
	e.res = &Result{
		Workload: cfg.Workload,
		Label:    cfg.Label,
		Started:  time.Now().UTC(),
		Settings: Settings{
			Servers: cfg.Servers, Clients: cfg.Clients, Inflight: cfg.Inflight,
			Payload: cfg.Payload, Duration: cfg.Duration.Seconds(), Ops: cfg.Ops,
			Warmup: cfg.Warmup.Seconds(), Rate: cfg.Rate, Cores: runtime.GOMAXPROCS(0),
			ServerPIDs: cfg.ServerPIDs, ConnectServers: len(members), Spread: spread,
		},
	}
	switch cfg.Workload {
	case "sweep":
		e.res.Settings.ReadRatios = cfg.ReadRatios
	case "failover":
		e.res.Settings.Failovers = cfg.Failovers
	case "fsync":
		// No server: one writer, one write at a time, in Dir.
		s := &e.res.Settings
		s.Servers, s.ConnectServers, s.Spread = "", 0, ""
		s.Clients, s.Inflight, s.Dir = 1, 1, cfg.Dir
	}
	defer e.closeAll()
	if err := workloads[cfg.Workload].run(ctx, e); err != nil {
		return e.res, err
	}
	return e.res, nil
}

// env is the state of one run: its sessions and its result so far.
type env struct {
	cfg      Config
	clock    Clock
	progress io.Writer
	res      *Result
	// members are the host:port members of cfg.Servers, in order.
	members []string
	// sessions counts the sessions opened so far (for round-robin
	// spreading, see sessionDialer).
	sessions atomic.Int64
	// control kills and restarts members (failover only).
	control memberControl

	// conns are the cfg.Clients load sessions, opened on first use.
	conns []*client.Conn
	// extra are other sessions to close at the end.
	extra []*client.Conn
}

// connectTimeout bounds how long a run waits for its sessions (a server
// refusing connections, say for maxClientCnxns, makes the client retry
// for ever).
const connectTimeout = 60 * time.Second

// connect opens n sessions at once, spread over the members (see
// sessionDialer): they are numbered on from the sessions opened before,
// in order.
func (e *env) connect(ctx context.Context, n int, opts ...client.Option) ([]*client.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, connectTimeout)
	defer cancel()
	cs := make([]*client.Conn, n)
	errs := make([]error, n)
	dials := make([]dialFunc, n)
	for i := range dials {
		dials[i] = e.sessionDialer(nil)
	}
	var wg sync.WaitGroup
	for i := range cs {
		o := append(slices.Clip(opts), client.WithDialer(dials[i]))
		wg.Go(func() { cs[i], errs[i] = client.Connect(ctx, e.cfg.Servers, o...) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		closeConns(cs)
		return nil, fmt.Errorf("bench: connect: %w", err)
	}
	return cs, nil
}

// loadConns returns the cfg.Clients load sessions.
func (e *env) loadConns(ctx context.Context) ([]*client.Conn, error) {
	if e.conns == nil {
		cs, err := e.connect(ctx, e.cfg.Clients)
		if err != nil {
			return nil, err
		}
		e.conns = cs
	}
	return e.conns, nil
}

func (e *env) closeAll() {
	closeConns(e.conns)
	closeConns(e.extra)
	e.conns, e.extra = nil, nil
}

// closeConns closes sessions in parallel (each Close waits for its
// closeSession reply).
func closeConns(cs []*client.Conn) {
	var wg sync.WaitGroup
	for _, c := range cs {
		if c != nil {
			wg.Go(func() { c.Close() })
		}
	}
	wg.Wait()
}

// opFunc sends request i of a phase on c.
type opFunc func(ctx context.Context, c *client.Conn, i int64) error

// phase is one measured stretch of load.
type phase struct {
	name  string
	param float64
	conns []*client.Conn
	// inflight workers per session.
	inflight int
	// ops > 0: exactly ops requests, numbered 0..ops-1; else duration.
	ops      int64
	duration time.Duration
	warmup   time.Duration
	// rate > 0: open loop.
	rate float64
	op   opFunc
}

// phaseFor builds a phase with the run's load settings: every session,
// cfg.Inflight each, cfg.Ops or cfg.Duration, warmup and rate.
func (e *env) phaseFor(name string, param float64, conns []*client.Conn, op opFunc) phase {
	return phase{
		name: name, param: param, conns: conns, inflight: e.cfg.Inflight,
		ops: e.cfg.Ops, duration: e.cfg.Duration, warmup: e.cfg.Warmup, rate: e.cfg.Rate, op: op,
	}
}

// runPhase runs p (after its warmup) and appends its result.
func (e *env) runPhase(ctx context.Context, p phase) (PhaseResult, error) {
	if p.warmup > 0 && p.ops <= 0 {
		w := p
		w.duration, w.warmup = p.warmup, 0
		e.drive(ctx, w, nil)
	}
	var before ProcStats
	if len(e.cfg.ServerPIDs) > 0 {
		before = readProcs(e.cfg.ServerPIDs)
	}
	cpu0 := selfCPU()
	pr := e.drive(ctx, p, e.progress)
	cpu := selfCPU() - cpu0
	if pr.Seconds > 0 {
		pr.GeneratorCPU = round3(cpu.Seconds() / pr.Seconds / float64(runtime.GOMAXPROCS(0)))
		pr.Saturated = pr.GeneratorCPU >= 0.9
	}
	if before.Readable {
		after := readProcs(e.cfg.ServerPIDs)
		if after.Readable && pr.Ops > 0 {
			pr.ServerCPUPerOp = round3(float64((after.CPU - before.CPU).Microseconds()) / float64(pr.Ops))
			pr.ServerRSS, pr.ServerPeakRSS = after.RSS, after.PeakRSS
		}
	}
	e.res.Phases = append(e.res.Phases, pr)
	if err := ctx.Err(); err != nil {
		return pr, err
	}
	return pr, nil
}

// workerStats is what one worker goroutine counted.
type workerStats struct {
	hist     *Histogram
	errors   int64
	firstErr error
}

// drive runs the phase's workers and counts. Request numbers are handed
// out from one counter, so with p.ops > 0 every number below p.ops is
// sent exactly once.
func (e *env) drive(ctx context.Context, p phase, progress io.Writer) PhaseResult {
	clk := e.clock
	workers := len(p.conns) * p.inflight
	stats := make([]workerStats, workers)
	var next, done atomic.Int64
	start := clk.Now()
	var deadline time.Time
	if p.ops <= 0 {
		deadline = start.Add(p.duration)
	}
	sched := schedule{start: start, rate: p.rate}

	stopProgress := startProgress(progress, p.name, &done, start)
	var wg sync.WaitGroup
	for w := range workers {
		c := p.conns[w%len(p.conns)]
		st := &stats[w]
		st.hist = NewHistogram()
		wg.Go(func() {
			for ctx.Err() == nil {
				i := next.Add(1) - 1
				if p.ops > 0 && i >= p.ops {
					return
				}
				var t0 time.Time
				if p.rate > 0 {
					if !deadline.IsZero() && !sched.due(i).Before(deadline) {
						return
					}
					t0 = sched.await(clk, i)
				} else {
					t0 = clk.Now()
					if !deadline.IsZero() && !t0.Before(deadline) {
						return
					}
				}
				err := p.op(ctx, c, i)
				lat := clk.Now().Sub(t0)
				done.Add(1)
				if err != nil {
					if st.errors == 0 {
						st.firstErr = err
					}
					st.errors++
					continue
				}
				st.hist.Record(lat)
			}
		})
	}
	wg.Wait()
	elapsed := clk.Now().Sub(start)
	stopProgress()

	all := NewHistogram()
	pr := PhaseResult{Name: p.name, Param: p.param, Mode: "closed", Clients: len(p.conns), Inflight: p.inflight}
	if p.rate > 0 {
		pr.Mode = "open"
	}
	for _, st := range stats {
		all.Merge(st.hist)
		pr.Errors += st.errors
		if st.firstErr != nil && pr.FirstError == "" {
			pr.FirstError = st.firstErr.Error()
		}
	}
	pr.Ops = all.Count() + pr.Errors
	pr.Seconds = round3(elapsed.Seconds())
	if elapsed > 0 {
		pr.Throughput = round3(float64(all.Count()) / elapsed.Seconds())
	}
	pr.Latency = all.Summary()
	pr.Curve = all.Curve()
	return pr
}

// recordPhase appends a phase measured by the workload itself (lock
// hand-offs, fan-out rounds) from its histogram.
func (e *env) recordPhase(name string, clients int, h *Histogram, errs int64, elapsed time.Duration) {
	pr := PhaseResult{
		Name: name, Mode: "closed", Clients: clients, Inflight: 1,
		Ops: h.Count() + errs, Errors: errs, Seconds: round3(elapsed.Seconds()),
		Latency: h.Summary(), Curve: h.Curve(),
	}
	if elapsed > 0 {
		pr.Throughput = round3(float64(h.Count()) / elapsed.Seconds())
	}
	e.res.Phases = append(e.res.Phases, pr)
}

func (e *env) metric(name string, v float64, unit string) {
	e.res.Metrics = append(e.res.Metrics, Metric{Name: name, Value: round3(v), Unit: unit})
}

func (e *env) note(s string) { e.res.Notes = append(e.res.Notes, s) }

func round3(v float64) float64 {
	return math.Round(v*1000) / 1000
}
