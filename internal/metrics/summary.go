package metrics

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
)

// Level is how much detail a Summary keeps, as ZooKeeper's
// MetricsContext.DetailLevel.
type Level int

const (
	// Basic summaries show avg/min/max/cnt/sum in mntr and the median in
	// /metrics.
	Basic Level = iota
	// Advanced summaries add p50/p95/p99/p999 to mntr and the 0.9 and 0.99
	// quantiles to /metrics.
	Advanced
)

// objectives are the quantiles /metrics exports, with their tolerated
// errors, as ZooKeeper's Prometheus provider (3.9) declares them.
var objectives = map[Level]map[float64]float64{
	Basic:    {0.5: 0.05},
	Advanced: {0.5: 0.05, 0.9: 0.01, 0.99: 0.001},
}

// mntrQuantiles are the percentiles mntr prints for an Advanced summary.
var mntrQuantiles = []struct {
	prefix string
	q      float64
}{{"p50_", 0.5}, {"p95_", 0.95}, {"p99_", 0.99}, {"p999_", 0.999}}

// Summary is one of ZooKeeper's summaries: values (milliseconds for the
// times) whose count, sum and quantiles /metrics exports as
// name{quantile=…}, name_sum and name_count, and whose avg/min/max/cnt/sum
// (and percentiles when Advanced) mntr prints. Safe for concurrent use.
type Summary struct {
	name  string
	level Level
	prom  prometheus.Summary
	// pct computes mntr's percentiles of an Advanced summary; nil for
	// Basic ones.
	pct prometheus.Summary

	mu sync.Mutex
	// Invariant: count == 0 implies sum == min == max == 0.
	count, sum, min, max int64
}

func newSummary(name, help string, level Level) *Summary {
	s := &Summary{name: name, level: level}
	s.prom = prometheus.NewSummary(prometheus.SummaryOpts{Name: name, Help: help, Objectives: objectives[level]})
	if level == Advanced {
		obj := make(map[float64]float64, len(mntrQuantiles))
		for _, q := range mntrQuantiles {
			obj[q.q] = 0.0005
		}
		s.pct = prometheus.NewSummary(prometheus.SummaryOpts{Name: name, Help: help, Objectives: obj})
	}
	return s
}

// Observe records one value.
func (s *Summary) Observe(v int64) {
	if s == nil {
		return
	}
	s.prom.Observe(float64(v))
	if s.pct != nil {
		s.pct.Observe(float64(v))
	}
	s.mu.Lock()
	if s.count == 0 || v < s.min {
		s.min = v
	}
	if s.count == 0 || v > s.max {
		s.max = v
	}
	s.sum += v
	s.count++
	s.mu.Unlock()
}

// ObserveDuration records d in whole milliseconds, ZooKeeper's unit.
func (s *Summary) ObserveDuration(d time.Duration) { s.Observe(d.Milliseconds()) }

// Count returns how many values were recorded.
func (s *Summary) Count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.count
}

// monitor appends mntr's lines for s: avg_, min_, max_, cnt_, sum_ and,
// for an Advanced summary, p50_, p95_, p99_ and p999_.
func (s *Summary) monitor(out []Value) []Value {
	s.mu.Lock()
	count, sum, lo, hi := s.count, s.sum, s.min, s.max
	s.mu.Unlock()
	avg := 0.0
	if count > 0 {
		avg = float64(sum) / float64(count)
	}
	out = append(out,
		Value{"avg_" + s.name, javaDouble(avg)},
		Value{"min_" + s.name, lo},
		Value{"max_" + s.name, hi},
		Value{"cnt_" + s.name, count},
		Value{"sum_" + s.name, sum},
	)
	if s.pct == nil {
		return out
	}
	var m dto.Metric
	if err := s.pct.Write(&m); err != nil {
		return out
	}
	qs := m.GetSummary().GetQuantile()
	for _, want := range mntrQuantiles {
		var v int64
		for _, q := range qs {
			if q.GetQuantile() == want.q && !math.IsNaN(q.GetValue()) {
				v = int64(math.Round(q.GetValue()))
			}
		}
		out = append(out, Value{want.prefix + s.name, v})
	}
	return out
}

// javaDouble formats f rounded to 4 decimal places as Java's
// Double.toString prints it, as mntr shows averages: "0.0", "1.5", "2.3333".
func javaDouble(f float64) string {
	s := strconv.FormatFloat(f, 'f', 4, 64)
	s = strings.TrimRight(s, "0")
	if strings.HasSuffix(s, ".") {
		s += "0"
	}
	return s
}

// Counter is one of ZooKeeper's counters: /metrics exports it as a
// counter named as in ZooKeeper, mntr prints its value. Safe for
// concurrent use; a nil *Counter ignores Add.
type Counter struct {
	name, help string
	v          atomic.Int64
}

// Add adds n (n ≥ 0).
func (c *Counter) Add(n int64) {
	if c != nil {
		c.v.Add(n)
	}
}

// Inc adds one.
func (c *Counter) Inc() { c.Add(1) }

// Value returns the count.
func (c *Counter) Value() int64 { return c.v.Load() }
