package bench

import "time"

// Clock is the time source of a phase: the wall clock in real runs, a
// fake one in tests of the open-loop scheduling.
type Clock interface {
	Now() time.Time
	// Sleep blocks for d (no-op when d <= 0).
	Sleep(d time.Duration)
}

// wallClock is the real clock.
type wallClock struct{}

func (wallClock) Now() time.Time        { return time.Now() }
func (wallClock) Sleep(d time.Duration) { time.Sleep(d) }

// schedule is the open-loop plan of a phase: request i is due at
// start + i/rate, whatever happened to the requests before it.
type schedule struct {
	start time.Time
	rate  float64 // requests per second, > 0
}

// due returns when request i should be sent.
func (s schedule) due(i int64) time.Time {
	return s.start.Add(time.Duration(float64(i) * float64(time.Second) / s.rate))
}

// await waits until request i is due and returns the instant its latency
// is measured from: the due time, even when the caller is already late
// (a late send is latency the server caused, not a request that did not
// happen).
func (s schedule) await(clk Clock, i int64) time.Time {
	due := s.due(i)
	clk.Sleep(due.Sub(clk.Now()))
	return due
}
