package console

import (
	"strconv"
	"time"

	"github.com/wardenzk/warden/server"
)

// sample is one point of the live charts, derived from two consecutive
// readings of the server's mntr values.
type sample struct {
	// At is the reading's time in Unix milliseconds.
	At int64 `json:"t"`
	// Requests is packets_received per second since the previous reading.
	Requests float64 `json:"rps"`
	// Sent is packets_sent per second since the previous reading.
	Sent float64 `json:"sps"`
	// AvgLatency and MaxLatency are mntr's avg_latency and max_latency,
	// in milliseconds (since start or the last srst).
	AvgLatency  float64 `json:"avgLatency"`
	MaxLatency  float64 `json:"maxLatency"`
	Connections int64   `json:"connections"`
	Outstanding int64   `json:"outstanding"`
	Znodes      int64   `json:"znodes"`
}

// reading is what one sample is computed from.
type reading struct {
	at                 time.Time
	received, sent     int64
	avgLat, maxLat     float64
	conns, outstanding int64
	znodes             int64
}

// readMetrics picks the charted values out of srv.Monitor().
func readMetrics(at time.Time, metrics []server.Metric) reading {
	r := reading{at: at}
	for _, m := range metrics {
		switch m.Name {
		case "packets_received":
			r.received = int64(number(m.Value))
		case "packets_sent":
			r.sent = int64(number(m.Value))
		case "avg_latency":
			r.avgLat = number(m.Value)
		case "max_latency":
			r.maxLat = number(m.Value)
		case "num_alive_connections":
			r.conns = int64(number(m.Value))
		case "outstanding_requests":
			r.outstanding = int64(number(m.Value))
		case "znode_count":
			r.znodes = int64(number(m.Value))
		}
	}
	return r
}

// number reads a mntr value as a float64; a value that is not a number
// is 0.
func number(v any) float64 {
	switch x := v.(type) {
	case int:
		return float64(x)
	case int32:
		return float64(x)
	case int64:
		return float64(x)
	case uint64:
		return float64(x)
	case float64:
		return x
	case float32:
		return float64(x)
	case string:
		f, _ := strconv.ParseFloat(x, 64)
		return f
	case interface{ String() string }:
		f, _ := strconv.ParseFloat(x.String(), 64)
		return f
	}
	return 0
}

// history is a ring of the last samples. It is pure: the caller reads the
// server and the clock and passes the reading in.
type history struct {
	// Invariant: len(samples) <= size; samples are in time order.
	samples []sample
	size    int
	last    reading
	primed  bool
}

func newHistory(size int) *history { return &history{size: size} }

// add turns r into a sample against the previous reading and appends it,
// dropping the oldest past the ring's size. The first reading only primes
// the rates. A counter that went backwards (srst) counts as 0 requests.
func (h *history) add(r reading) {
	if !h.primed {
		h.last, h.primed = r, true
		return
	}
	dt := r.at.Sub(h.last.at).Seconds()
	if dt <= 0 {
		return
	}
	rate := func(now, before int64) float64 {
		if now < before {
			return 0
		}
		return float64(now-before) / dt
	}
	s := sample{
		At:          r.at.UnixMilli(),
		Requests:    rate(r.received, h.last.received),
		Sent:        rate(r.sent, h.last.sent),
		AvgLatency:  r.avgLat,
		MaxLatency:  r.maxLat,
		Connections: r.conns,
		Outstanding: r.outstanding,
		Znodes:      r.znodes,
	}
	h.last = r
	if len(h.samples) == h.size {
		copy(h.samples, h.samples[1:])
		h.samples = h.samples[:h.size-1]
	}
	h.samples = append(h.samples, s)
}

// snapshot returns a copy of the samples, oldest first.
func (h *history) snapshot() []sample {
	return append([]sample(nil), h.samples...)
}
