package bench

import (
	"math"
	"strconv"
	"strings"
	"testing"
)

func TestParseTarget(t *testing.T) {
	tests := []struct {
		in   string
		want target
		ok   bool
	}{
		{"≥ 2.5×", target{atLeast: true, limit: 2.5}, true},
		{"≤ 0.8×", target{limit: 0.8}, true},
		{"≤ 1×", target{limit: 1}, true},
		{"≥2×", target{atLeast: true, limit: 2}, true},
		{"", target{}, false},
		{"2×", target{}, false},
		{"≥ 2", target{}, false},
		{"≤ x×", target{}, false},
		{"≤ 0×", target{}, false},
		{">= 2x", target{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, ok := parseTarget(tt.in)
			if got != tt.want || ok != tt.ok {
				t.Errorf("parseTarget(%q) = %+v, %v; want %+v, %v", tt.in, got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestStatus: a target is met when the ratio, rounded to the two
// decimals the table shows, is within it.
func TestStatus(t *testing.T) {
	tests := []struct {
		target string
		ratio  float64
		want   string
	}{
		{"≥ 2.5×", 2.5, "met"},
		{"≥ 2.5×", 3.1, "met"},
		{"≥ 2.5×", 2.496, "met"}, // shown as 2.50×
		{"≥ 2.5×", 2.49, "not yet"},
		{"≤ 0.8×", 0.8, "met"},
		{"≤ 0.8×", 0.804, "met"}, // shown as 0.80×
		{"≤ 0.8×", 0.806, "not yet"},
		{"≤ 1×", 0.2, "met"},
		{"≤ 0.5×", math.NaN(), "not measured"},
		{"", 1.7, "–"},
		{"", math.NaN(), "–"},
	}
	for _, tt := range tests {
		if got := status(tt.target, tt.ratio); got != tt.want {
			t.Errorf("status(%q, %v) = %q, want %q", tt.target, tt.ratio, got, tt.want)
		}
	}
}

// TestGoalTargetsParse: every target of both tables is one the status
// column can judge.
func TestGoalTargetsParse(t *testing.T) {
	for _, gs := range [][]goal{standaloneGoals, ensembleGoals} {
		for _, g := range gs {
			if _, ok := parseTarget(g.target); g.target != "" && !ok {
				t.Errorf("%s: target %q does not parse", g.what, g.target)
			}
		}
	}
}

// sweepRun is a sweep result with one phase per read ratio: ratio ->
// {throughput, p99, p99.9, server CPU µs/op, server peak RSS MiB}.
func sweepRun(label string, phases map[int][5]float64) *Result {
	r := &Result{Workload: "sweep", Label: label}
	for _, ratio := range []int{0, 50, 100} {
		v, ok := phases[ratio]
		if !ok {
			continue
		}
		r.Phases = append(r.Phases, PhaseResult{
			Name: "read " + strconv.Itoa(ratio) + "%", Param: float64(ratio), Ops: 100, Throughput: v[0],
			Latency:        Summary{Count: 100, P50: int64(v[1] / 2), P99: int64(v[1]), P999: int64(v[2])},
			ServerCPUPerOp: v[3], ServerPeakRSS: int64(v[4] * (1 << 20)),
		})
	}
	return r
}

// latencyRun is a result of workload with one phase of the given p50 and
// p99.
func latencyRun(workload, label, phase string, p50, p99 int64) *Result {
	return &Result{Workload: workload, Label: label, Phases: []PhaseResult{
		{Name: phase, Ops: 100, Latency: Summary{Count: 100, P50: p50, P99: p99}},
	}}
}

// TestHeadlineTargets renders the standalone table from synthetic
// results: medians and ratios, the worst read ratio named, met and not
// yet, the disk's floor, and rows with no data kept as not measured.
func TestHeadlineTargets(t *testing.T) {
	results := []*Result{
		sweepRun("zookeeper", map[int][5]float64{
			0:   {1000, 1000, 1000, 30, 400},
			50:  {1500, 1000, 1000, 25, 400},
			100: {2000, 1000, 1000, 20, 400},
		}),
		// Warden: two runs, the medians are of the two.
		sweepRun("warden", map[int][5]float64{
			0:   {2400, 400, 900, 10, 100},
			50:  {3000, 700, 800, 9, 100},
			100: {5000, 300, 1000, 0, 100}, // CPU not read
		}),
		sweepRun("warden", map[int][5]float64{
			0:   {2600, 400, 900, 10, 300},
			50:  {3000, 700, 800, 9, 300},
			100: {5000, 300, 1000, 0, 300},
		}),
		latencyRun("create", "warden", "sync create", 500, 700),
		latencyRun("create", "zookeeper", "sync create", 1000, 1000),
		latencyRun(floorWorkload, "disk", "fdatasync", 250, 350),
		latencyRun(floorWorkload, "disk", "fdatasync", 250, 350),
		{Workload: "failover", Label: "warden", Metrics: []Metric{{Name: "failover: kill to first write, median", Value: 900, Unit: "ms"}}},
	}
	h := Headline(results, "zookeeper")
	for _, want := range []string{
		"| measure | warden | zookeeper | ratio warden / zookeeper | target | status |",
		"| write throughput, saturated (sweep, 0% reads), ops/s | 2500 | 1000 | 2.50× | ≥ 2.5× | met |",
		"| write latency p50, one client, one request at a time (create), µs | 500 | 1000 | 0.50× | ≤ 0.8× | met |",
		"| write latency p99, one client, one request at a time (create), µs | 700 | 1000 | 0.70× | ≤ 0.8× | met |",
		"| one-client create against the disk's floor (a raw write + fdatasync loop on the same disk), p50 / p99 µs | 500 / 700 | fdatasync 250 / 350 | 2.00× / 2.00× the floor | – | – |",
		"| read throughput (sweep, 100% reads), ops/s | 5000 | 2000 | 2.50× | ≥ 2.5× | met |",
		"| p99 latency at every read ratio (sweep), µs; worst: read 50% | 700 | 1000 | 0.70× | ≤ 0.5× | not yet |",
		"| p99.9 latency at every read ratio (sweep), µs; worst: read 100% | 1000 | 1000 | 1.00× | ≤ 1× | met |",
		"| memory per znode at 1M znodes (64 B data), bytes | not measured | not measured | – | ≤ 0.3× | not measured |",
		"| peak RSS under saturated writes (sweep, 0% reads), MiB | 200 | 400 | 0.50× | ≤ 0.5× | met |",
		"| server CPU per write (sweep, 0% reads), µs | 10.0 | 30.0 | 0.33× | ≤ 0.4× | met |",
		"| server CPU per read (sweep, 100% reads), µs | – | 20.0 | – | ≤ 0.4× | not measured |",
		"| mixed throughput (sweep, 80% reads), ops/s | not measured | not measured | – | – | – |",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("headline lacks\n%s\nin\n%s", want, h)
		}
	}
	if rows := strings.Count(h, "\n| "); rows != len(standaloneGoals) {
		t.Errorf("%d rows, want one per goal (%d):\n%s", rows, len(standaloneGoals), h)
	}
	if strings.Contains(h, "failover") {
		t.Errorf("the standalone table has a failover row:\n%s", h)
	}
}

// TestEnsembleHeadlineTargets: the ensemble's own targets (write
// throughput ≥ 2×, rejoin time, failover), every row present.
func TestEnsembleHeadlineTargets(t *testing.T) {
	results := []*Result{
		sweepRun("zookeeper", map[int][5]float64{0: {1000, 1000, 1000, 60, 400}}),
		sweepRun("warden", map[int][5]float64{0: {2100, 400, 900, 30, 100}}),
		{Workload: "scale", Label: "warden", Metrics: []Metric{{Name: "rejoin time at 1000000 znodes", Value: 2, Unit: "s"}}},
		{Workload: "scale", Label: "zookeeper", Metrics: []Metric{{Name: "rejoin time at 1000000 znodes", Value: 5, Unit: "s"}}},
		{Workload: "failover", Label: "warden", Metrics: []Metric{{Name: "failover: kill to first write, median", Value: 1500, Unit: "ms"}}},
		{Workload: "failover", Label: "zookeeper", Metrics: []Metric{{Name: "failover: kill to first write, median", Value: 2000, Unit: "ms"}}},
	}
	h := EnsembleHeadline(results, "zookeeper")
	for _, want := range []string{
		"| write throughput, saturated (sweep, 0% reads), ops/s | 2100 | 1000 | 2.10× | ≥ 2× | met |",
		"| rejoin time at 1M znodes (a follower restarted until it follows again), s | 2.00 | 5.00 | 0.40× | ≤ 0.3× | not yet |",
		"| failover: leader kill -9 to first acknowledged write, ms | 1500 | 2000 | 0.75× | ≤ 0.5× | not yet |",
		"| server CPU per write, all members (sweep, 0% reads), µs | 30.0 | 60.0 | 0.50× | ≤ 0.4× | not yet |",
		"| p99 latency at every read ratio (sweep), µs; worst: read 0% | 400 | 1000 | 0.40× | ≤ 0.5× | met |",
		"| write latency p99, one client, one request at a time (create), µs | not measured | not measured | – | ≤ 0.8× | not measured |",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("ensemble headline lacks\n%s\nin\n%s", want, h)
		}
	}
	if rows := strings.Count(h, "\n| "); rows != len(ensembleGoals) {
		t.Errorf("%d rows, want one per goal (%d):\n%s", rows, len(ensembleGoals), h)
	}
}

// TestReportFloorTable: the disk's floor gets a table of its own and no
// column in the servers' tables.
func TestReportFloorTable(t *testing.T) {
	results := []*Result{
		latencyRun("create", "warden", "sync create", 500, 700),
		latencyRun("create", "zookeeper", "sync create", 1000, 1000),
		latencyRun(floorWorkload, "disk", "fdatasync", 250, 350),
	}
	md := Report(results, "zookeeper", "")
	for _, want := range []string{
		"| phase | measure | warden | zookeeper | warden / zookeeper |",
		"### fsync\n\n| phase | measure | disk |\n|---|---|---|\n| fdatasync | ops/s |",
		"| fdatasync | p99 µs | **350** (350) |",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "| disk | warden") || strings.Contains(md, "| warden | disk") {
		t.Errorf("the floor has a column in a server table:\n%s", md)
	}
}
