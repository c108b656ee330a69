package metrics

import (
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
	"github.com/prometheus/client_golang/prometheus"
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

// mntrQuantiles are the percentiles mntr prints for an Advanced summary.
var mntrQuantiles = []struct {
	prefix string
	q      float64
}{{"p50_", 0.5}, {"p95_", 0.95}, {"p99_", 0.99}, {"p999_", 0.999}}

// Summary is one of ZooKeeper's summaries: values (milliseconds for the
// times) whose count, sum and quantiles /metrics exports as
// name{quantile=…}, name_sum and name_count, and whose avg/min/max/cnt/sum
// (and percentiles when Advanced) mntr prints. Count, sum, min and max
// cover the server's lifetime; quantiles cover the last 10 minutes, as
// ZooKeeper's (simpleclient's) do. Safe for concurrent use; Observe takes
// one short lock (the window's).
type Summary struct {
	name  string
	level Level
	desc  *prometheus.Desc
	win   window

	count, sum atomic.Int64
	// min and max hold math.MaxInt64 and math.MinInt64 until the first
	// value.
	min, max atomic.Int64
}

func newSummary(name, help string, level Level, now func() time.Time) *Summary {
	s := &Summary{name: name, level: level, desc: prometheus.NewDesc(name, help, nil, nil)}
	s.win.init(now)
	s.min.Store(math.MaxInt64)
	s.max.Store(math.MinInt64)
	return s
}

// Observe records one value.
func (s *Summary) Observe(v int64) {
	if s == nil {
		return
	}
	s.win.record(v)
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
// quantiles (NaN while the window holds no value, as simpleclient).
func (s *Summary) Collect(ch chan<- prometheus.Metric) {
	qs := s.win.quantiles(exported[s.level])
	ch <- prometheus.MustNewConstSummary(s.desc, uint64(s.count.Load()), float64(s.sum.Load()), qs)
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
	want := make([]float64, len(mntrQuantiles))
	for i, m := range mntrQuantiles {
		want[i] = m.q
	}
	qs := s.win.quantiles(want)
	for _, m := range mntrQuantiles {
		var v int64
		if q := qs[m.q]; !math.IsNaN(q) {
			v = int64(math.Round(q))
		}
		out = append(out, Value{m.prefix + s.name, v})
	}
	return out
}

// The quantile window: like simpleclient's (and client_golang's)
// summaries, the last maxAge of values in ageBuckets rotating
// histograms. HDR histograms make a value cost one counter increment
// (client_golang's quantile streams cost far more per value); values are
// kept to two significant digits, exact below 256.
const (
	maxAge       = 10 * time.Minute
	ageBuckets   = 5
	bucketAge    = maxAge / ageBuckets
	highestValue = int64(time.Hour / time.Millisecond) // larger values count as this
	sigFigs      = 2
)

// window holds the values of the last maxAge.
type window struct {
	now func() time.Time

	mu sync.Mutex
	// buckets[cur] receives values since start; the others hold the
	// ageBuckets-1 bucketAge periods before it.
	buckets [ageBuckets]*hdrhistogram.Histogram
	cur     int
	start   time.Time
}

func (w *window) init(now func() time.Time) {
	if now == nil {
		now = time.Now
	}
	w.now = now
	for i := range w.buckets {
		w.buckets[i] = hdrhistogram.New(0, highestValue, sigFigs)
	}
	w.start = now()
}

// rotate moves the window to now. w.mu is held.
func (w *window) rotate(now time.Time) {
	steps := int(now.Sub(w.start) / bucketAge)
	if steps <= 0 {
		return
	}
	if steps >= ageBuckets {
		for _, b := range w.buckets {
			b.Reset()
		}
		w.start = now
		return
	}
	for range steps {
		w.cur = (w.cur + 1) % ageBuckets
		w.buckets[w.cur].Reset()
		w.start = w.start.Add(bucketAge)
	}
}

func (w *window) record(v int64) {
	v = min(max(v, 0), highestValue)
	now := w.now()
	w.mu.Lock()
	w.rotate(now)
	w.buckets[w.cur].RecordValue(v) // in range: cannot fail
	w.mu.Unlock()
}

// quantiles returns the values at qs (0 to 1) over the window, NaN for
// each when it is empty.
func (w *window) quantiles(qs []float64) map[float64]float64 {
	merged := hdrhistogram.New(0, highestValue, sigFigs)
	now := w.now()
	w.mu.Lock()
	w.rotate(now)
	for _, b := range w.buckets {
		merged.Merge(b)
	}
	w.mu.Unlock()
	out := make(map[float64]float64, len(qs))
	for _, q := range qs {
		out[q] = math.NaN()
		if merged.TotalCount() > 0 {
			out[q] = float64(merged.ValueAtQuantile(q * 100))
		}
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
