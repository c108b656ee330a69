package bench

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// workloadOrder is the order the report presents workloads in.
var workloadOrder = []string{"sweep", "latencies", "create", "multi", "lock", "fanout", "storm", "scale", "failover"}

// plotPhases are the phases whose latency distribution gets a percentile
// plot.
var plotPhases = map[string]bool{
	"read 0%": true, "read 80%": true, "read 100%": true, "sync create": true,
	"multi mix": true, "sync set": true, "sync get": true, "lock hand-off": true,
	"fanout time to each event": true,
}

// group is every run of one workload against one server.
type group struct {
	label, workload string
	runs            []*Result
}

// groupResults groups results by (workload, label).
func groupResults(results []*Result) map[[2]string]*group {
	gs := map[[2]string]*group{}
	for _, r := range results {
		k := [2]string{r.Workload, r.Label}
		if gs[k] == nil {
			gs[k] = &group{label: r.Label, workload: r.Workload}
		}
		gs[k].runs = append(gs[k].runs, r)
	}
	return gs
}

// labels returns the labels of the servers in results, the baseline
// last. The disk's floor (floorWorkload) is not a server: its labels are
// left out.
func labels(results []*Result, baseline string) []string {
	var ls []string
	for _, r := range results {
		if r.Workload != floorWorkload && !slices.Contains(ls, r.Label) {
			ls = append(ls, r.Label)
		}
	}
	slices.SortFunc(ls, func(a, b string) int {
		if (a == baseline) != (b == baseline) {
			if a == baseline {
				return 1
			}
			return -1
		}
		return cmp.Compare(a, b)
	})
	return ls
}

// phaseValues returns one number per run of g for the named phase.
func (g *group) phaseValues(name string, f func(PhaseResult) float64) []float64 {
	var vs []float64
	for _, r := range g.runs {
		for _, p := range r.Phases {
			if p.Name == name {
				vs = append(vs, f(p))
			}
		}
	}
	return vs
}

func (g *group) metricValues(name string) (vs []float64, unit string) {
	for _, r := range g.runs {
		for _, m := range r.Metrics {
			if m.Name == name {
				vs, unit = append(vs, m.Value), m.Unit
			}
		}
	}
	return vs, unit
}

// median of vs (NaN for none).
func median(vs []float64) float64 {
	if len(vs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(vs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

func fmtNum(v float64) string {
	switch {
	case math.IsNaN(v):
		return "–"
	case math.Abs(v) >= 100:
		return fmt.Sprintf("%.0f", v)
	case math.Abs(v) >= 10:
		return fmt.Sprintf("%.1f", v)
	default:
		return fmt.Sprintf("%.2f", v)
	}
}

func cell(vs []float64) string {
	if len(vs) == 0 {
		return "–"
	}
	raw := make([]string, len(vs))
	for i, v := range vs {
		raw[i] = fmtNum(v)
	}
	return fmt.Sprintf("**%s** (%s)", fmtNum(median(vs)), strings.Join(raw, ", "))
}

// measure is one row kind of a phase table.
type measure struct {
	name string
	f    func(PhaseResult) float64
	// skip hides the row when every value is zero (not measured).
	skip bool
}

var measures = []measure{
	{"ops/s", func(p PhaseResult) float64 { return p.Throughput }, false},
	{"p50 µs", func(p PhaseResult) float64 { return float64(p.Latency.P50) }, false},
	{"p99 µs", func(p PhaseResult) float64 { return float64(p.Latency.P99) }, false},
	{"p99.9 µs", func(p PhaseResult) float64 { return float64(p.Latency.P999) }, false},
	{"server CPU µs/op", func(p PhaseResult) float64 { return p.ServerCPUPerOp }, true},
}

// Report renders results of one or more servers as Markdown: one table
// per workload with the median and raw values of every run and the
// ratio of each server to baseline. plotRef is the directory the plots
// are linked from ("" for none).
func Report(results []*Result, baseline, plotRef string) string {
	var b strings.Builder
	ls := labels(results, baseline)
	gs := groupResults(results)
	other := ""
	for _, l := range ls {
		if l != baseline {
			other = l
			break
		}
	}
	ratioHead := ""
	if other != "" && slices.Contains(ls, baseline) {
		ratioHead = fmt.Sprintf(" %s / %s |", other, baseline)
	}
	var wls []string
	for _, w := range workloadOrder {
		for _, l := range ls {
			if gs[[2]string{w, l}] != nil && !slices.Contains(wls, w) {
				wls = append(wls, w)
			}
		}
	}
	var fls []string // the floor's labels
	for _, r := range results {
		if r.Workload == floorWorkload && !slices.Contains(fls, r.Label) {
			fls = append(fls, r.Label)
		}
	}
	if len(fls) > 0 {
		wls = append(wls, floorWorkload)
	}
	var notes, saturated []string
	for _, w := range wls {
		// The floor has no server: its own columns, no ratio.
		cols, colsRatio := ls, ratioHead
		if w == floorWorkload {
			cols, colsRatio = fls, ""
		}
		fmt.Fprintf(&b, "### %s\n\n", w)
		if c := connectNote(gs, w, cols); c != "" {
			b.WriteString(c + "\n\n")
		}
		fmt.Fprintf(&b, "| phase | measure |")
		for _, l := range cols {
			fmt.Fprintf(&b, " %s |", l)
		}
		b.WriteString(colsRatio + "\n|---|---|")
		for range cols {
			b.WriteString("---|")
		}
		if colsRatio != "" {
			b.WriteString("---|")
		}
		b.WriteString("\n")
		row := func(phase, meas string, vals map[string][]float64) {
			fmt.Fprintf(&b, "| %s | %s |", phase, meas)
			for _, l := range cols {
				fmt.Fprintf(&b, " %s |", cell(vals[l]))
			}
			if colsRatio != "" {
				fmt.Fprintf(&b, " %s |", fmtRatio(median(vals[other]), median(vals[baseline])))
			}
			b.WriteString("\n")
		}
		var phases []string
		var metrics []string
		for _, l := range cols {
			g := gs[[2]string{w, l}]
			if g == nil {
				continue
			}
			for _, r := range g.runs {
				for _, p := range r.Phases {
					if !slices.Contains(phases, p.Name) {
						phases = append(phases, p.Name)
					}
					if p.Saturated {
						saturated = append(saturated, fmt.Sprintf("%s / %s / %s", l, w, p.Name))
					}
					if p.Errors > 0 {
						notes = append(notes, fmt.Sprintf("%s / %s / %s: %d errors, first: %s", l, w, p.Name, p.Errors, p.FirstError))
					}
				}
				for _, m := range r.Metrics {
					if !slices.Contains(metrics, m.Name) {
						metrics = append(metrics, m.Name)
					}
				}
				for _, n := range r.Notes {
					if !slices.Contains(notes, n) {
						notes = append(notes, n)
					}
				}
			}
		}
		for _, ph := range phases {
			for _, m := range measures {
				vals := map[string][]float64{}
				any := false
				for _, l := range cols {
					if g := gs[[2]string{w, l}]; g != nil {
						vals[l] = g.phaseValues(ph, m.f)
						for _, v := range vals[l] {
							any = any || v != 0
						}
					}
				}
				if m.skip && !any {
					continue
				}
				row(ph, m.name, vals)
			}
		}
		peak := map[string][]float64{}
		anyPeak := false
		for _, l := range cols {
			if g := gs[[2]string{w, l}]; g != nil {
				for _, r := range g.runs {
					var mx int64
					for _, p := range r.Phases {
						mx = max(mx, p.ServerPeakRSS)
					}
					if mx > 0 {
						peak[l] = append(peak[l], float64(mx)/(1<<20))
						anyPeak = true
					}
				}
			}
		}
		if anyPeak {
			row("(all)", "server peak RSS MiB", peak)
		}
		for _, m := range metrics {
			vals := map[string][]float64{}
			unit := ""
			for _, l := range cols {
				if g := gs[[2]string{w, l}]; g != nil {
					var u string
					vals[l], u = g.metricValues(m)
					unit = cmp.Or(unit, u)
				}
			}
			row("", m+" ("+unit+")", vals)
		}
		b.WriteString("\n")
		if plotRef != "" {
			if w == "sweep" {
				fmt.Fprintf(&b, "![throughput vs read ratio](%s/sweep-throughput.svg)\n\n", plotRef)
			}
			if w == "failover" {
				fmt.Fprintf(&b, "![acknowledged writes around the leader kill](%s/%s)\n\n", plotRef, failoverPlotName)
			}
			for _, ph := range phases {
				if plotPhases[ph] {
					fmt.Fprintf(&b, "![%s latency](%s/%s)\n", ph, plotRef, latencyPlotName(w, ph))
				}
			}
			b.WriteString("\n")
		}
	}
	if len(saturated) > 0 {
		b.WriteString("**Generator saturated** (its numbers measure the load generator, not the server): " +
			strings.Join(saturated, "; ") + ".\n\n")
	}
	if len(notes) > 0 {
		b.WriteString("Notes from the runs:\n\n")
		for _, n := range notes {
			fmt.Fprintf(&b, "- %s\n", n)
		}
		b.WriteString("\n")
	}
	return b.String()
}

// connectNote says how many servers the connection strings of workload
// w had and how the sessions were spread, when some had more than one.
func connectNote(gs map[[2]string]*group, w string, ls []string) string {
	var seen []string
	for _, l := range ls {
		g := gs[[2]string{w, l}]
		if g == nil {
			continue
		}
		for _, r := range g.runs {
			if n := r.Settings.ConnectServers; n > 1 {
				s := fmt.Sprintf("%d servers, sessions spread round-robin (session i starts on member i mod %d)", n, n)
				if r.Settings.Spread == SpreadShuffle {
					s = fmt.Sprintf("%d servers, sessions spread by the client's random shuffle", n)
				}
				if !slices.Contains(seen, s) {
					seen = append(seen, s)
				}
			}
		}
	}
	if len(seen) == 0 {
		return ""
	}
	return "Connection string: " + strings.Join(seen, "; ") + "."
}

func fmtRatio(a, base float64) string {
	if math.IsNaN(a) || math.IsNaN(base) || base == 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f×", a/base)
}

// latencyPlotName is the file name of a phase's percentile plot.
func latencyPlotName(workload, phase string) string {
	slug := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r == '%':
			return 'p'
		}
		return '-'
	}, strings.ToLower(phase))
	return "latency-" + workload + "-" + slug + ".svg"
}

// WritePlots writes into dir the throughput-vs-read-ratio plot of the
// sweep results and a percentile plot for the main phases, one line per
// server (medians over repetitions; for the percentile plot the run with
// the median p99).
func WritePlots(dir string, results []*Result) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	gs := groupResults(results)
	ls := labels(results, "")
	write := func(name string, c *chart) error {
		return os.WriteFile(filepath.Join(dir, name), []byte(c.svg()), 0o644)
	}

	sweep := &chart{title: "Throughput vs read ratio", xlabel: "read ratio (%)", ylabel: "operations per second"}
	maxY := 0.0
	for _, l := range ls {
		g := gs[[2]string{"sweep", l}]
		if g == nil {
			continue
		}
		s := series{name: l}
		for _, r := range g.runs[0].Settings.ReadRatios {
			v := median(g.phaseValues(fmt.Sprintf("read %d%%", r), func(p PhaseResult) float64 { return p.Throughput }))
			if !math.IsNaN(v) {
				s.xs, s.ys = append(s.xs, float64(r)), append(s.ys, v)
				maxY = max(maxY, v)
			}
		}
		sweep.lines = append(sweep.lines, s)
	}
	if len(sweep.lines) > 0 {
		sweep.xticks = linearTicks(100, 5, func(v float64) string { return fmt.Sprintf("%.0f", v) })
		sweep.yticks = linearTicks(maxY, 6, func(v float64) string { return fmt.Sprintf("%gk", v/1000) })
		if err := write("sweep-throughput.svg", sweep); err != nil {
			return err
		}
	}

	if c := failoverChart(gs, ls); c != nil {
		if err := write(failoverPlotName, c); err != nil {
			return err
		}
	}

	for _, w := range workloadOrder {
		var phases []string
		for _, l := range ls {
			if g := gs[[2]string{w, l}]; g != nil {
				for _, p := range g.runs[0].Phases {
					if plotPhases[p.Name] && !slices.Contains(phases, p.Name) {
						phases = append(phases, p.Name)
					}
				}
			}
		}
		for _, ph := range phases {
			c := &chart{title: w + ": " + ph + " latency by percentile", xlabel: "percentile", ylabel: "latency (log scale)"}
			lo, hi := math.Inf(1), math.Inf(-1)
			for _, l := range ls {
				g := gs[[2]string{w, l}]
				if g == nil {
					continue
				}
				curve := medianRunCurve(g, ph)
				s := series{name: l}
				for _, pt := range curve {
					if pt.Percentile >= 100 || pt.Micros <= 0 {
						continue
					}
					y := math.Log10(float64(pt.Micros))
					s.xs, s.ys = append(s.xs, nines(pt.Percentile)), append(s.ys, y)
					lo, hi = math.Min(lo, y), math.Max(hi, y)
				}
				if len(s.xs) > 0 {
					c.lines = append(c.lines, s)
				}
			}
			if len(c.lines) == 0 {
				continue
			}
			c.xticks = []tick{{0, "0%"}, {1, "90%"}, {2, "99%"}, {3, "99.9%"}, {4, "99.99%"}, {5, "99.999%"}}
			c.yticks = log10Ticks(lo, hi)
			if err := write(latencyPlotName(w, ph), c); err != nil {
				return err
			}
		}
	}
	return nil
}

// failoverPlotName is the file of the failover timeline plot.
const failoverPlotName = "failover-timeline.svg"

// failoverChart plots, for each server, the acknowledged writes per
// second around the kill of its median failover (the kill, over every
// run, whose time until every client wrote again is the median one).
// nil when no result has failovers.
func failoverChart(gs map[[2]string]*group, ls []string) *chart {
	c := &chart{title: "failover: writes around the leader kill (median kill)",
		xlabel: "seconds since the kill", ylabel: "writes per second"}
	minX, maxX, maxY := 0.0, 0.0, 0.0
	for _, l := range ls {
		g := gs[[2]string{"failover", l}]
		if g == nil {
			continue
		}
		var all []FailoverSample
		for _, r := range g.runs {
			all = append(all, r.Failovers...)
		}
		if len(all) == 0 {
			continue
		}
		slices.SortStableFunc(all, func(a, b FailoverSample) int { return cmp.Compare(a.AllClientsMs, b.AllClientsMs) })
		f := all[(len(all)-1)/2]
		if f.TimelineStepMs <= 0 {
			continue
		}
		s := series{name: fmt.Sprintf("%s (all in %.2f s)", l, f.AllClientsMs/1000)}
		step := f.TimelineStepMs / 1000
		for i, n := range f.Timeline {
			x := -f.TimelineBeforeMs/1000 + (float64(i)+0.5)*step
			y := float64(n) / step
			s.xs, s.ys = append(s.xs, x), append(s.ys, y)
			minX, maxX, maxY = min(minX, x), max(maxX, x), max(maxY, y)
		}
		c.lines = append(c.lines, s)
	}
	if len(c.lines) == 0 {
		return nil
	}
	for v := math.Floor(minX); v <= math.Ceil(maxX); v++ {
		c.xticks = append(c.xticks, tick{v, fmt.Sprintf("%g", v)})
	}
	c.yticks = linearTicks(maxY, 6, func(v float64) string { return fmt.Sprintf("%gk", v/1000) })
	return c
}

// medianRunCurve returns the percentile curve of the run of g whose p99
// for phase is the median one.
func medianRunCurve(g *group, phase string) []CurvePoint {
	var ps []PhaseResult
	for _, r := range g.runs {
		for _, p := range r.Phases {
			if p.Name == phase && len(p.Curve) > 0 {
				ps = append(ps, p)
			}
		}
	}
	if len(ps) == 0 {
		return nil
	}
	slices.SortFunc(ps, func(a, b PhaseResult) int { return cmp.Compare(a.Latency.P99, b.Latency.P99) })
	return ps[len(ps)/2].Curve
}
