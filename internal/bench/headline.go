package bench

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
)

// The headline tables put Warden's numbers next to ZooKeeper's for the
// measures issue 14 sets targets for, one table for a standalone server
// (Headline) and one for a 3-member ensemble (EnsembleHeadline):
//
//	| measure | warden | zookeeper | ratio warden / zookeeper | target | status |
//
// Each value is the median over the runs; the ratio is of the medians.
// A target is a bound on the ratio, "≥ 2.5×" or "≤ 0.8×", and the status
// says whether the ratio, rounded to the two decimals it is shown with,
// meets it ("met", "not yet"), or that a server was not measured. Rows
// without a target are there to inform. A row nothing was measured for
// is kept, with "not measured" in its cells, so that every target shows.

// floorWorkload is the workload of the disk's floor (fsync.go): it has
// no server, so its results stay out of the server columns of the report.
const floorWorkload = "fsync"

// goal is one row of a headline table.
type goal struct {
	// what names the measure and its unit.
	what     string
	workload string
	// The value of a run is f of its phase named phase or, with f nil,
	// its metric named metric. f returns NaN for "not measured".
	phase, metric string
	f             func(PhaseResult) float64
	// worst: the row is the phase of the workload (the sweep's read
	// ratios) whose ratio is the largest, and names it.
	worst bool
	// floor: the row puts the first server's p50 and p99 of phase next
	// to the disk's floor (the fdatasync phase of floorWorkload).
	floor bool
	// target is the bound on the ratio ("≥ 2.5×", "≤ 0.8×"), "" for none.
	target string
}

func throughput(p PhaseResult) float64 { return p.Throughput }
func p50(p PhaseResult) float64        { return float64(p.Latency.P50) }
func p99(p PhaseResult) float64        { return float64(p.Latency.P99) }
func p999(p PhaseResult) float64       { return float64(p.Latency.P999) }

// cpuPerOp is the server's CPU per request, µs; NaN when it was not read.
func cpuPerOp(p PhaseResult) float64 { return measured(p.ServerCPUPerOp) }

// peakRSS is the server's (largest member's) peak RSS, MiB; NaN when it
// was not read.
func peakRSS(p PhaseResult) float64 { return measured(float64(p.ServerPeakRSS) / (1 << 20)) }

// measured maps the zero of a number read from /proc, which means it was
// not read, to NaN.
func measured(v float64) float64 {
	if v == 0 {
		return math.NaN()
	}
	return v
}

// standaloneGoals are the rows of Headline: issue 14's targets for one
// server, then rows to inform.
var standaloneGoals = []goal{
	{what: "write throughput, saturated (sweep, 0% reads), ops/s", workload: "sweep", phase: "read 0%", f: throughput, target: "≥ 2.5×"},
	{what: "write latency p50, one client, one request at a time (create), µs", workload: "create", phase: "sync create", f: p50, target: "≤ 0.8×"},
	{what: "write latency p99, one client, one request at a time (create), µs", workload: "create", phase: "sync create", f: p99, target: "≤ 0.8×"},
	{what: "one-client create against the disk's floor (a raw write + fdatasync loop on the same disk), p50 / p99 µs", workload: "create", phase: "sync create", floor: true},
	{what: "read throughput (sweep, 100% reads), ops/s", workload: "sweep", phase: "read 100%", f: throughput, target: "≥ 2.5×"},
	{what: "p99 latency at every read ratio (sweep), µs", workload: "sweep", f: p99, worst: true, target: "≤ 0.5×"},
	{what: "p99.9 latency at every read ratio (sweep), µs", workload: "sweep", f: p999, worst: true, target: "≤ 1×"},
	{what: "memory per znode at 1M znodes (64 B data), bytes", workload: "scale", metric: "bytes per znode at 1000000 znodes", target: "≤ 0.3×"},
	{what: "peak RSS under saturated writes (sweep, 0% reads), MiB", workload: "sweep", phase: "read 0%", f: peakRSS, target: "≤ 0.5×"},
	{what: "restart time at 1M znodes, s", workload: "scale", metric: "restart time at 1000000 znodes", target: "≤ 0.3×"},
	{what: "server CPU per write (sweep, 0% reads), µs", workload: "sweep", phase: "read 0%", f: cpuPerOp, target: "≤ 0.4×"},
	{what: "server CPU per read (sweep, 100% reads), µs", workload: "sweep", phase: "read 100%", f: cpuPerOp, target: "≤ 0.4×"},
	{what: "mixed throughput (sweep, 80% reads), ops/s", workload: "sweep", phase: "read 80%", f: throughput},
	{what: "multi-heavy mix throughput, ops/s", workload: "multi", phase: "multi mix", f: throughput},
	{what: "lock hand-offs per second", workload: "lock", metric: "hand-offs per second"},
	{what: "watch fan-out, time to last event (p50), µs", workload: "fanout", phase: "fanout time to last event", f: p50},
}

// ensembleGoals are the rows of EnsembleHeadline: issue 14's targets for
// a 3-member ensemble (memory of the largest member, CPU summed over the
// members), then rows to inform.
var ensembleGoals = []goal{
	{what: "write throughput, saturated (sweep, 0% reads), ops/s", workload: "sweep", phase: "read 0%", f: throughput, target: "≥ 2×"},
	{what: "write latency p50, one client, one request at a time (create), µs", workload: "create", phase: "sync create", f: p50},
	{what: "write latency p99, one client, one request at a time (create), µs", workload: "create", phase: "sync create", f: p99, target: "≤ 0.8×"},
	{what: "read throughput (sweep, 100% reads), ops/s", workload: "sweep", phase: "read 100%", f: throughput, target: "≥ 2.5×"},
	{what: "p99 latency at every read ratio (sweep), µs", workload: "sweep", f: p99, worst: true, target: "≤ 0.5×"},
	{what: "p99.9 latency at every read ratio (sweep), µs", workload: "sweep", f: p999, worst: true, target: "≤ 1×"},
	{what: "memory per znode at 1M znodes (64 B data), member that grew most, bytes", workload: "scale", metric: "bytes per znode at 1000000 znodes", target: "≤ 0.3×"},
	{what: "peak RSS under saturated writes (sweep, 0% reads), largest member, MiB", workload: "sweep", phase: "read 0%", f: peakRSS, target: "≤ 0.5×"},
	{what: "rejoin time at 1M znodes (a follower restarted until it follows again), s", workload: "scale", metric: "rejoin time at 1000000 znodes", target: "≤ 0.3×"},
	{what: "failover: leader kill -9 to first acknowledged write, ms", workload: "failover", metric: "failover: kill to first write, median", target: "≤ 0.5×"},
	{what: "server CPU per write, all members (sweep, 0% reads), µs", workload: "sweep", phase: "read 0%", f: cpuPerOp, target: "≤ 0.4×"},
	{what: "server CPU per read, all members (sweep, 100% reads), µs", workload: "sweep", phase: "read 100%", f: cpuPerOp, target: "≤ 0.4×"},
	{what: "failover: kill to every client writing again, ms", workload: "failover", metric: "failover: kill to every client writing, median"},
	{what: "failover: kill to a new leader in srvr, ms", workload: "failover", metric: "failover: kill to new leader in srvr, median"},
}

// Headline renders the target table of a standalone comparison
// (scripts/bench-compare.sh) between the two labels of results, ratios
// taken against baseline; "" unless there are exactly two.
func Headline(results []*Result, baseline string) string {
	return headline(results, baseline, standaloneGoals)
}

// EnsembleHeadline renders the target table of the ensemble comparison
// (scripts/bench-compare-ensemble.sh). For failover the values are the
// medians over runs of each run's median over its kills.
func EnsembleHeadline(results []*Result, baseline string) string {
	return headline(results, baseline, ensembleGoals)
}

// target is a bound on a ratio: at least or at most limit.
type target struct {
	atLeast bool
	limit   float64
}

// parseTarget reads a target written "≥ 2.5×" or "≤ 0.5×".
func parseTarget(s string) (target, bool) {
	var t target
	rest, ok := strings.CutPrefix(s, "≥")
	if ok {
		t.atLeast = true
	} else if rest, ok = strings.CutPrefix(s, "≤"); !ok {
		return target{}, false
	}
	num, ok := strings.CutSuffix(strings.TrimSpace(rest), "×")
	if !ok {
		return target{}, false
	}
	v, err := strconv.ParseFloat(num, 64)
	if err != nil || v <= 0 {
		return target{}, false
	}
	t.limit = v
	return t, true
}

// met reports whether ratio, rounded to two decimals as the table shows
// it, is within the target.
func (t target) met(ratio float64) bool {
	r := math.Round(ratio*100) / 100
	if t.atLeast {
		return r >= t.limit
	}
	return r <= t.limit
}

// status is the last column of a row: whether ratio meets the target.
func status(tgt string, ratio float64) string {
	if tgt == "" {
		return "–"
	}
	t, ok := parseTarget(tgt)
	if !ok {
		panic(fmt.Sprintf("bench: unreadable target %q", tgt))
	}
	switch {
	case math.IsNaN(ratio):
		return "not measured"
	case t.met(ratio):
		return "met"
	default:
		return "not yet"
	}
}

// notMeasured is the cell of a value no run has.
const notMeasured = "not measured"

// ratioOf is a / z, NaN when either is missing or z is zero.
func ratioOf(a, z float64) float64 {
	if math.IsNaN(a) || math.IsNaN(z) || z == 0 {
		return math.NaN()
	}
	return a / z
}

// headlineRow is a rendered row.
type headlineRow struct {
	what, a, z, ratio string
	// r is the ratio the status is judged on (NaN: none).
	r float64
}

// values returns one value per run of label for g's phase or metric,
// those not measured left out.
func (g goal) values(gs map[[2]string]*group, label, phase string) []float64 {
	grp := gs[[2]string{g.workload, label}]
	if grp == nil {
		return nil
	}
	var vs []float64
	if g.f != nil {
		vs = grp.phaseValues(phase, g.f)
	} else {
		vs, _ = grp.metricValues(g.metric)
	}
	return slices.DeleteFunc(vs, math.IsNaN)
}

// row computes g's row for the servers other and baseline.
func (g goal) row(gs map[[2]string]*group, other, baseline string) headlineRow {
	switch {
	case g.worst:
		return g.worstRow(gs, other, baseline)
	case g.floor:
		return g.floorRow(gs, other)
	}
	a, z := median(g.values(gs, other, g.phase)), median(g.values(gs, baseline, g.phase))
	return valueRow(g.what, a, z)
}

// valueRow is the row of medians a and z.
func valueRow(what string, a, z float64) headlineRow {
	if math.IsNaN(a) && math.IsNaN(z) {
		return headlineRow{what: what, a: notMeasured, z: notMeasured, ratio: "–", r: math.NaN()}
	}
	return headlineRow{what: what, a: fmtNum(a), z: fmtNum(z), ratio: fmtRatio(a, z), r: ratioOf(a, z)}
}

// worstRow is the phase of g.workload with the largest ratio: "at every
// read ratio" holds when it holds at the worst one.
func (g goal) worstRow(gs map[[2]string]*group, other, baseline string) headlineRow {
	var phases []string
	for _, l := range []string{other, baseline} {
		if grp := gs[[2]string{g.workload, l}]; grp != nil {
			for _, r := range grp.runs {
				for _, p := range r.Phases {
					if !slices.Contains(phases, p.Name) {
						phases = append(phases, p.Name)
					}
				}
			}
		}
	}
	worst := valueRow(g.what, math.NaN(), math.NaN())
	for _, ph := range phases {
		a, z := median(g.values(gs, other, ph)), median(g.values(gs, baseline, ph))
		if r := ratioOf(a, z); !math.IsNaN(r) && (math.IsNaN(worst.r) || r > worst.r) {
			worst = valueRow(fmt.Sprintf("%s; worst: %s", g.what, ph), a, z)
		}
	}
	return worst
}

// floorRow puts other's p50 and p99 of g's phase next to the disk's
// floor, the fdatasync phase of every floorWorkload run.
func (g goal) floorRow(gs map[[2]string]*group, other string) headlineRow {
	var floor50, floor99 []float64
	for k, grp := range gs {
		if k[0] == floorWorkload {
			floor50 = append(floor50, grp.phaseValues("fdatasync", p50)...)
			floor99 = append(floor99, grp.phaseValues("fdatasync", p99)...)
		}
	}
	var a50, a99 []float64
	if grp := gs[[2]string{g.workload, other}]; grp != nil {
		a50, a99 = grp.phaseValues(g.phase, p50), grp.phaseValues(g.phase, p99)
	}
	row := headlineRow{what: g.what, a: notMeasured, z: notMeasured, ratio: "–", r: math.NaN()}
	if len(a50) == 0 && len(floor50) == 0 {
		return row
	}
	pair := func(x, y []float64) string { return fmtNum(median(x)) + " / " + fmtNum(median(y)) }
	row.a = pair(a50, a99)
	row.z = "fdatasync " + pair(floor50, floor99)
	if len(a50) > 0 && len(floor50) > 0 {
		row.ratio = fmt.Sprintf("%s / %s the floor", fmtRatio(median(a50), median(floor50)), fmtRatio(median(a99), median(floor99)))
	}
	return row
}

func headline(results []*Result, baseline string, goals []goal) string {
	ls := labels(results, baseline)
	if len(ls) != 2 || ls[1] != baseline {
		return ""
	}
	other := ls[0]
	gs := groupResults(results)
	var b strings.Builder
	fmt.Fprintf(&b, "| measure | %s | %s | ratio %s / %s | target | status |\n|---|---|---|---|---|---|\n",
		other, baseline, other, baseline)
	for _, g := range goals {
		r := g.row(gs, other, baseline)
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %s |\n", r.what, r.a, r.z, r.ratio, cmp.Or(g.target, "–"), status(g.target, r.r))
	}
	fmt.Fprintf(&b, "\nValues are medians over the runs, ratios %s / %s of the medians. A target is met when the ratio, "+
		"rounded to the two decimals shown, is within it. A row \"at every read ratio\" shows the sweep phase whose ratio is "+
		"the largest (the worst): the target holds at every read ratio when it holds there.\n", other, baseline)
	return b.String()
}
