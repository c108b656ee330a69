package bench

import (
	"math"
	"time"

	"github.com/HdrHistogram/hdrhistogram-go"
)

// Histogram range: 1 µs to 5 minutes, three significant digits.
const (
	histMinMicros = 1
	histMaxMicros = 5 * 60 * 1_000_000
	histSigFigs   = 3
)

// Histogram records latencies with microsecond resolution. It is not safe
// for concurrent use: each worker records into its own and Merge combines
// them.
type Histogram struct {
	h *hdrhistogram.Histogram
}

// NewHistogram returns an empty histogram.
func NewHistogram() *Histogram {
	return &Histogram{h: hdrhistogram.New(histMinMicros, histMaxMicros, histSigFigs)}
}

// Record adds one latency. Values outside the range are clamped to it.
func (h *Histogram) Record(d time.Duration) {
	us := d.Microseconds()
	us = min(max(us, histMinMicros), histMaxMicros)
	_ = h.h.RecordValue(us) // in range by construction
}

// Merge adds every value recorded in o.
func (h *Histogram) Merge(o *Histogram) { h.h.Merge(o.h) }

// Count is the number of recorded values.
func (h *Histogram) Count() int64 { return h.h.TotalCount() }

// Summary is a latency distribution in microseconds.
type Summary struct {
	Count int64   `json:"count"`
	Mean  float64 `json:"mean_us"`
	P50   int64   `json:"p50_us"`
	P90   int64   `json:"p90_us"`
	P99   int64   `json:"p99_us"`
	P999  int64   `json:"p99_9_us"`
	Max   int64   `json:"max_us"`
}

// Summary returns the percentiles of the recorded values (zero when
// nothing was recorded).
func (h *Histogram) Summary() Summary {
	if h.h.TotalCount() == 0 {
		return Summary{}
	}
	return Summary{
		Count: h.h.TotalCount(),
		Mean:  math.Round(h.h.Mean()*10) / 10,
		P50:   h.h.ValueAtQuantile(50),
		P90:   h.h.ValueAtQuantile(90),
		P99:   h.h.ValueAtQuantile(99),
		P999:  h.h.ValueAtQuantile(99.9),
		Max:   h.h.Max(),
	}
}

// CurvePoint is one point of a percentile curve: the latency at or under
// which Percentile per cent of the requests completed.
type CurvePoint struct {
	Percentile float64 `json:"percentile"`
	Micros     int64   `json:"us"`
}

// curvePercentiles are the points of Curve: evenly spaced on the
// "number of nines" axis the percentile plot uses.
var curvePercentiles = []float64{0, 10, 25, 50, 75, 90, 95, 99, 99.5, 99.9, 99.95, 99.99, 99.999, 100}

// Curve returns the latency at each of a fixed set of percentiles, for
// the percentile plot.
func (h *Histogram) Curve() []CurvePoint {
	if h.h.TotalCount() == 0 {
		return nil
	}
	out := make([]CurvePoint, 0, len(curvePercentiles))
	for _, p := range curvePercentiles {
		v := h.h.ValueAtQuantile(p)
		if p == 0 {
			v = h.h.Min()
		}
		out = append(out, CurvePoint{Percentile: p, Micros: v})
	}
	return out
}
