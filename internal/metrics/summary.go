package metrics

import (
	"math"
	"strconv"
	"strings"
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

// exported are the quantiles /metrics shows for each level, as
// ZooKeeper's Prometheus provider (3.9) declares them.
var exported = map[Level][]float64{
	Basic:    {0.5},
	Advanced: {0.5, 0.9, 0.99},
}

// objectives are the quantiles a summary tracks, with their tolerated
// errors: ZooKeeper's for the exported ones (0.05, 0.01, 0.001), and for
// an Advanced summary the extra ones mntr prints.
var objectives = map[Level]map[float64]float64{
	Basic:    {0.5: 0.05},
	Advanced: {0.5: 0.05, 0.9: 0.01, 0.95: 0.005, 0.99: 0.001, 0.999: 0.0001},
}

// mntrQuantiles are the percentiles mntr prints for an Advanced summary.
var mntrQuantiles = []struct {
	prefix string
	q      float64
}{{"p50_", 0.5}, {"p95_", 0.95}, {"p99_", 0.99}, {"p999_", 0.999}}

// Summary is one of ZooKeeper's summaries: values (milliseconds for the
// times) whose count, sum and quantiles /metrics exports as
// name{quantile=…}, name_sum and name_count, and whose avg/min/max/cnt/sum
// (and percentiles when Advanced) mntr prints. Quantiles cover the last
// 10 minutes (client_golang's default window, as ZooKeeper's simpleclient);
// the mntr figures cover the server's lifetime. Safe for concurrent use;
// Observe takes one lock (the quantile stream's).
type Summary struct {
	name  string
	level Level
	desc  *prometheus.Desc
	// prom tracks every quantile of objectives[level]; Collect exports
	// those of exported[level].
	prom prometheus.Summary

	count, sum atomic.Int64
	// min and max hold math.MaxInt64 and math.MinInt64 until the first
	// value.
	min, max atomic.Int64
}

func newSummary(name, help string, level Level) *Summary {
	s := &Summary{name: name, level: level, desc: prometheus.NewDesc(name, help, nil, nil)}
	s.prom = prometheus.NewSummary(prometheus.SummaryOpts{Name: name, Help: help, Objectives: objectives[level]})
	s.min.Store(math.MaxInt64)
	s.max.Store(math.MinInt64)
	return s
}

// Observe records one value.
func (s *Summary) Observe(v int64) {
	if s == nil {
		return
	}
	s.prom.Observe(float64(v))
	s.count.Add(1)
	s.sum.Add(v)
	for cur := s.min.Load(); v < cur && !s.min.CompareAndSwap(cur, v); cur = s.min.Load() {
	}
	for cur := s.max.Load(); v > cur && !s.max.CompareAndSwap(cur, v); cur = s.max.Load() {
	}
}

// ObserveDuration records d in whole milliseconds, ZooKeeper's unit.
func (s *Summary) ObserveDuration(d time.Duration) { s.Observe(d.Milliseconds()) }

// Count returns how many values were recorded.
func (s *Summary) Count() int64 { return s.count.Load() }

// Describe implements prometheus.Collector.
func (s *Summary) Describe(ch chan<- *prometheus.Desc) { ch <- s.desc }

// Collect implements prometheus.Collector: the summary with ZooKeeper's
// quantiles only.
func (s *Summary) Collect(ch chan<- prometheus.Metric) {
	count, sum, qs, err := s.read()
	if err != nil {
		ch <- prometheus.NewInvalidMetric(s.desc, err)
		return
	}
	out := make(map[float64]float64, len(exported[s.level]))
	for _, q := range exported[s.level] {
		out[q] = qs[q]
	}
	ch <- prometheus.MustNewConstSummary(s.desc, count, sum, out)
}

// read returns the windowed count, sum and quantiles.
func (s *Summary) read() (count uint64, sum float64, qs map[float64]float64, err error) {
	var m dto.Metric
	if err := s.prom.Write(&m); err != nil {
		return 0, 0, nil, err
	}
	qs = make(map[float64]float64)
	for _, q := range m.GetSummary().GetQuantile() {
		qs[q.GetQuantile()] = q.GetValue()
	}
	return m.GetSummary().GetSampleCount(), m.GetSummary().GetSampleSum(), qs, nil
}

// monitor appends mntr's lines for s: avg_, min_, max_, cnt_, sum_ and,
// for an Advanced summary, p50_, p95_, p99_ and p999_.
func (s *Summary) monitor(out []Value) []Value {
	count, sum, lo, hi := s.count.Load(), s.sum.Load(), s.min.Load(), s.max.Load()
	avg := 0.0
	if count > 0 {
		avg = float64(sum) / float64(count)
	}
	if lo == math.MaxInt64 {
		lo = 0 // no value yet, as ZooKeeper prints it
	}
	if hi == math.MinInt64 {
		hi = 0
	}
	out = append(out,
		Value{"avg_" + s.name, javaDouble(avg)},
		Value{"min_" + s.name, lo},
		Value{"max_" + s.name, hi},
		Value{"cnt_" + s.name, count},
		Value{"sum_" + s.name, sum},
	)
	if s.level != Advanced {
		return out
	}
	_, _, qs, err := s.read()
	for _, want := range mntrQuantiles {
		var v int64
		if q, ok := qs[want.q]; err == nil && ok && !math.IsNaN(q) {
			v = int64(math.Round(q))
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
