package metrics

import (
	"math"
	"testing"
	"time"
)

// fakeClock is a clock tests move by hand.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

func TestSummaryQuantilesCoverTheLastTenMinutes(t *testing.T) {
	clock := &fakeClock{t: time.Unix(1e9, 0)}
	s := newSummary("x", "x", Advanced, clock.now)
	for v := int64(0); v <= 1000; v++ {
		s.Observe(v)
	}
	q := s.win.quantiles([]float64{0.5, 0.9, 0.99, 0.999})
	for _, tt := range []struct{ q, want float64 }{{0.5, 500}, {0.9, 900}, {0.99, 990}, {0.999, 999}} {
		if got := q[tt.q]; math.Abs(got-tt.want) > tt.want*0.01+1 {
			t.Errorf("quantile %v = %v, want %v (±1%%)", tt.q, got, tt.want)
		}
	}
	// Four minutes later the values are still in the window; values
	// larger than an hour count as an hour; negatives as 0.
	clock.t = clock.t.Add(4 * time.Minute)
	s.Observe(int64(3 * time.Hour / time.Millisecond))
	s.Observe(-5)
	if got := s.win.quantiles([]float64{1})[1]; math.Abs(got-float64(highestValue)) > float64(highestValue)*0.01 {
		t.Errorf("max in window = %v, want about %d", got, highestValue)
	}
	// Ten minutes after the first values, only the later two remain.
	clock.t = clock.t.Add(6*time.Minute + time.Second)
	if got := s.win.quantiles([]float64{0})[0]; got != 0 {
		t.Errorf("min in window = %v, want 0 (the negative value)", got)
	}
	if got := s.win.quantiles([]float64{0.9})[0.9]; got < 1000 {
		t.Errorf("quantile 0.9 = %v: the first values should have left the window", got)
	}
	// After a quiet window, no quantile; the lifetime figures stay.
	clock.t = clock.t.Add(11 * time.Minute)
	if got := s.win.quantiles([]float64{0.5})[0.5]; !math.IsNaN(got) {
		t.Errorf("median of an empty window = %v, want NaN", got)
	}
	if s.Count() != 1003 {
		t.Errorf("count = %d, want 1003", s.Count())
	}
	m := map[string]any{}
	for _, v := range s.monitor(nil) {
		m[v.Name] = v.Value
	}
	if m["p50_x"] != int64(0) || m["cnt_x"] != int64(1003) || m["max_x"] != int64(3*time.Hour/time.Millisecond) || m["min_x"] != int64(-5) {
		t.Errorf("mntr lines = %v", m)
	}
}

func BenchmarkSummaryObserve(b *testing.B) {
	s := newSummary("x", "x", Advanced, nil)
	b.RunParallel(func(pb *testing.PB) {
		v := int64(0)
		for pb.Next() {
			s.Observe(v % 50)
			v++
		}
	})
}
