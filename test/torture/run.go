package torture

import (
	"context"
	"crypto/rand"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/test/torture/checker"
)

// Bounds of a run's phases.
const (
	recoverDeadline = 30 * time.Second // healed → every member serving
	stopDeadline    = 30 * time.Second // schedule over → every client stopped
	checkDeadline   = 2 * time.Minute  // final reads and checks
	quietPeriod     = time.Second      // healed and serving → final reads
)

// Config is one run: a target ensemble of Members, a seed, the faults to
// inject and where to keep what a failing run leaves.
type Config struct {
	Target  Target
	Members int
	Seed    uint64
	Faults  []FaultKind
	// Out is the directory a run's logs and visualizations go to; a
	// passing run's are removed.
	Out string
}

// Report is what a run found, one JSON line in the results file.
type Report struct {
	Target   Target         `json:"target"`
	Members  int            `json:"members"`
	Seed     uint64         `json:"seed"`
	Pass     bool           `json:"pass"`
	Ops      int            `json:"ops"`
	Faults   []injection    `json:"faults"`
	Results  []checkResult  `json:"results"`
	Crashes  []string       `json:"crashes,omitempty"`
	Problems []string       `json:"problems,omitempty"`
	Unavail  map[string]int `json:"unavailable_ms"` // fault kind → longest fault-to-first-acknowledged-write
	// Reconfigs are the reconfig nemesis's membership changes.
	Reconfigs []checker.ReconfigOp `json:"reconfigs,omitempty"`
	Seconds   float64              `json:"seconds"`
	Dir       string               `json:"dir,omitempty"`
}

// checkResult is a checker's verdict as the report carries it.
type checkResult struct {
	Workload      string   `json:"workload"`
	OK            bool     `json:"ok"`
	Ops           int      `json:"ops"`
	Key           string   `json:"key,omitempty"`
	Anomalies     []string `json:"anomalies,omitempty"`
	Notes         []string `json:"notes,omitempty"`
	Visualization string   `json:"visualization,omitempty"`
}

// Verdict is the run's one-line summary.
func (r *Report) Verdict() string {
	var b strings.Builder
	verdict := "PASS"
	if !r.Pass {
		verdict = "FAIL"
	}
	fmt.Fprintf(&b, "%s %s n=%d seed=%d ops=%d faults=%d", verdict, r.Target, r.Members, r.Seed, r.Ops, len(r.Faults))
	for _, res := range r.Results {
		st := "ok"
		if !res.OK {
			st = "ANOMALY"
			if res.Key != "" {
				st += "(" + res.Key + ")"
			}
		}
		fmt.Fprintf(&b, " %s=%s", res.Workload, st)
	}
	if len(r.Crashes) > 0 {
		fmt.Fprintf(&b, " crashes=%d", len(r.Crashes))
	}
	if len(r.Problems) > 0 {
		fmt.Fprintf(&b, " problems=%d", len(r.Problems))
	}
	fmt.Fprintf(&b, " %.1fs", r.Seconds)
	for _, res := range r.Results {
		if res.Visualization != "" {
			fmt.Fprintf(&b, " porcupine=%s", res.Visualization)
		}
	}
	if !r.Pass {
		faults := ""
		if len(r.Reconfigs) > 0 {
			faults = " -faults all,reconfig"
		}
		fmt.Fprintf(&b, " (rerun: scripts/torture.sh -target %s -members %d -seeds %d%s; logs in %s)", r.Target, r.Members, r.Seed, faults, r.Dir)
	}
	return b.String()
}

// Run runs one seed: it starts the ensemble, runs every workload while
// the nemesis works through the seed's schedule, heals everything, waits
// for a quiet, serving ensemble, and checks every history. It fails t
// on any anomaly and returns the report.
func Run(t *testing.T, cfg Config) *Report {
	begin := time.Now()
	name := fmt.Sprintf("%s-n%d-seed%d", cfg.Target, cfg.Members, cfg.Seed)
	if Spares(cfg.Members, cfg.Faults) > 0 {
		name += "-reconfig"
	}
	dir := filepath.Join(cfg.Out, name)
	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	rep := &Report{Target: cfg.Target, Members: cfg.Members, Seed: cfg.Seed, Dir: dir, Unavail: map[string]int{}}
	spares := Spares(cfg.Members, cfg.Faults)
	if spares > 0 && cfg.Target != Warden {
		t.Fatalf("the reconfig faults run against warden only")
	}
	schedule := Schedule(cfg.Seed, cfg.Members+spares, cfg.Faults)
	c := startCluster(t, cfg.Target, cfg.Members, spares, runPrefix(), dir)

	e := &env{start: time.Now(), connect: c.connectString(), seed: cfg.Seed, log: clientLog(t, dir), track: c.reconfig != nil}
	if c.reconfig != nil {
		c.reconfig.e = e
	}
	root := fmt.Sprintf("/torture-%d", cfg.Seed)
	wls := []workload{
		&registers{e: e, keys: 4, clients: 4, dir: root + "/registers", vizDir: dir},
		&set{e: e, clients: 2, dir: root + "/set"},
		&queue{e: e, clients: 3, dir: root + "/queue"},
		&lock{e: e, clients: 3, dir: root + "/lock"},
		&sessions{e: e, owners: 3, dir: root + "/ephemerals", wdir: root + "/watched", wkeys: 3},
	}
	if err := setup(e, wls); err != nil {
		t.Fatalf("setup: %v", err)
	}

	// The clients work while the nemesis goes through the schedule.
	wctx, stop := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for _, w := range wls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			w.run(wctx)
		}()
	}
	for _, f := range schedule {
		time.Sleep(f.Quiet)
		rep.Crashes = append(rep.Crashes, c.reviveCrashed()...)
		inj := injection{Fault: f}
		heal, target, err := c.inject(f)
		inj.Target, inj.At = target, e.now() // the fault is in effect from here
		if err != nil {
			inj.Err = err.Error()
			rep.Problems = append(rep.Problems, fmt.Sprintf("inject %s: %v", f.Kind, err))
		} else {
			time.Sleep(f.Hold)
			if err := heal(); err != nil {
				inj.Err = err.Error()
				rep.Problems = append(rep.Problems, fmt.Sprintf("heal %s: %v", f.Kind, err))
			}
		}
		inj.End = e.now()
		rep.Faults = append(rep.Faults, inj)
		t.Logf("fault %-16s on %-10s held %v", f.Kind, target, time.Duration(inj.End-inj.At).Round(time.Millisecond))
	}
	stop()
	stopped := e.now() // the clients' last chance to acknowledge a write
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(stopDeadline):
		t.Fatalf("clients did not stop within %v of the schedule's end", stopDeadline)
	}

	// Heal whatever is left, let the ensemble settle, read and check.
	rep.Crashes = append(rep.Crashes, c.reviveCrashed()...)
	if err := c.healAll(); err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("heal: %v", err))
	}
	err := c.waitServing(recoverDeadline)
	if err == nil && c.reconfig != nil {
		err = c.settleMembership()
	}
	if err != nil {
		rep.Problems = append(rep.Problems, fmt.Sprintf("did not recover after healing: %v", err))
	} else {
		time.Sleep(quietPeriod)
		cctx, cancel := context.WithTimeout(context.Background(), checkDeadline)
		var members []string
		for _, m := range c.inMembers() {
			members = append(members, m.Addr)
		}
		if c.reconfig != nil {
			r := c.checkMembership(cctx)
			rep.Ops += r.Ops
			rep.Results = append(rep.Results, checkResult{Workload: r.Workload, OK: r.OK, Ops: r.Ops, Key: r.Key,
				Anomalies: r.Anomalies, Notes: r.Notes})
		}
		for _, w := range wls {
			for _, r := range w.check(cctx, members) {
				rep.Ops += r.Ops
				rep.Results = append(rep.Results, checkResult{Workload: r.Workload, OK: r.OK, Ops: r.Ops, Key: r.Key,
					Anomalies: r.Anomalies, Notes: r.Notes, Visualization: r.Visualization})
			}
		}
		cancel()
	}
	rep.Crashes = append(rep.Crashes, c.reviveCrashed()...)
	var ws []write
	for _, w := range wls {
		ws = append(ws, w.writes()...)
	}
	rep.Unavail = unavailability(rep.Faults, ws, stopped)
	if c.reconfig != nil {
		rep.Reconfigs = c.reconfig.ops
	}

	rep.Pass = len(rep.Problems) == 0 && len(rep.Crashes) == 0 && len(rep.Results) > 0
	for _, r := range rep.Results {
		rep.Pass = rep.Pass && r.OK
	}
	rep.Seconds = time.Since(begin).Seconds()
	if !rep.Pass {
		for _, f := range rep.Faults {
			t.Logf("schedule: at %.2fs %s on %s (healed at %.2fs) %s", float64(f.At)/1e9, f.Kind, f.Target, float64(f.End)/1e9, f.Err)
		}
		for _, p := range append(append([]string(nil), rep.Crashes...), rep.Problems...) {
			t.Errorf("%s", p)
		}
		for _, r := range rep.Results {
			for _, a := range r.Anomalies {
				t.Errorf("%s: %s", r.Workload, a)
			}
			if r.Visualization != "" {
				t.Errorf("%s: porcupine's visualization: %s", r.Workload, r.Visualization)
			}
		}
	}
	return rep
}

// clientLogEnv, when set, keeps the workload clients' own logs (Debug
// level: connects, disconnects, session moves) in clients.log of the run's
// directory, for diagnosing unavailability.
const clientLogEnv = "WARDEN_TORTURE_CLIENT_LOG"

// clientLog returns the workload clients' logger: silent unless
// clientLogEnv is set.
func clientLog(t *testing.T, dir string) *slog.Logger {
	if os.Getenv(clientLogEnv) == "" {
		return slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	f, err := os.Create(filepath.Join(dir, "clients.log"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return slog.New(slog.NewTextHandler(f, &slog.HandlerOptions{Level: slog.LevelDebug}))
}

// setup creates every workload's nodes. A lost connection (an election
// the loaded machine may cause even before any fault) is retried on a new
// session, bounded; every setup step accepts nodes an earlier attempt made.
func setup(e *env, wls []workload) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*connectTimeout)
	defer cancel()
	for {
		err := setupOnce(ctx, e, wls)
		if err == nil || outcomeOf(err) == checker.Failed || !backoff(ctx) {
			return err
		}
	}
}

func setupOnce(ctx context.Context, e *env, wls []workload) error {
	c, err := e.dialAll(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	for _, w := range wls {
		if err := w.setup(ctx, c); err != nil {
			return fmt.Errorf("%s: %w", w.name(), err)
		}
	}
	return nil
}

// reviveCrashed restarts members whose process died by itself and
// returns a line for each: a server must never exit on its own.
func (c *cluster) reviveCrashed() []string {
	var crashes []string
	for _, m := range c.members {
		if m.Exited() {
			crashes = append(crashes, fmt.Sprintf("%s exited by itself (see %s)", m.Name, m.Log))
			m.Reap(c.t)
			if err := m.restart(); err != nil {
				crashes = append(crashes, fmt.Sprintf("%s could not be restarted: %v", m.Name, err))
			}
		}
	}
	return crashes
}

// unavailability sets each injection's UnavailMs, the time from the
// fault to the first write invoked after it that was acknowledged (to end,
// when the clients stopped, when none was), and returns the longest per
// fault kind.
func unavailability(faults []injection, ws []write, end int64) map[string]int {
	out := map[string]int{}
	for i, f := range faults {
		first := end
		for _, w := range ws {
			if w.Call >= f.At && w.Outcome == checker.OK && w.Return < first {
				first = w.Return
			}
		}
		ms := int((first - f.At) / int64(time.Millisecond))
		faults[i].UnavailMs = ms
		if ms > out[string(f.Kind)] {
			out[string(f.Kind)] = ms
		}
	}
	return out
}

// runPrefix names a run's network uniquely: "wt" (the prefix whose
// leftovers netns sweeps) and four base-36 characters.
func runPrefix() string {
	const digits = "0123456789abcdefghijklmnopqrstuvwxyz"
	b := make([]byte, 4)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = digits[int(b[i])%len(digits)]
	}
	return "wt" + string(b)
}
