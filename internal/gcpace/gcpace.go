// Package gcpace sets how much the garbage collector lets the heap grow
// past its live data (GOGC), process-wide.
//
// Go's default (GOGC=100) lets a heap of live data L grow to 2L before it
// collects. For a large tree that doubles the resident memory (a million
// znodes of 64 bytes: some 190 MB live, 380 MB resident); for a small heap
// it means a collection every few MB allocated, which costs throughput.
// Tune keeps the headroom at max(MinHeadroom, L/8) instead: GOGC above 100
// while the live heap is under MinHeadroom (at most 400), falling to 12 at
// 8 × MinHeadroom, which costs more frequent collections of a heap that
// is mostly the tree (memory is what a large tree runs short of first).
// Relax takes the collector out of the way while a snapshot is loaded,
// when almost everything allocated is kept.
//
// A GOGC environment variable is the operator's choice: Tune then leaves
// the setting alone (Relax still applies during loads).
package gcpace

import (
	"math"
	"os"
	"runtime/debug"
	"runtime/metrics"
	"sync"
	"time"
)

// MinHeadroom is the least headroom Tune leaves over the live heap.
const MinHeadroom = 32 << 20

// Bounds of the GOGC Tune sets.
const (
	maxPercent = 400 // a live heap under MinHeadroom/4 gets less than MinHeadroom
	minPercent = 12  // never less than an eighth of live
)

// relaxedPercent is GOGC while a snapshot loads when the process's
// memory bound is unknown.
const relaxedPercent = 400

// interval is how often Tune reads the live heap.
const interval = 250 * time.Millisecond

// readFile reads the /proc and cgroup files MemoryMax needs (tests swap it).
var readFile = os.ReadFile

// state guards the process's GOGC and memory limit between Relax and Tune.
var state struct {
	sync.Mutex
	loads     int   // Relax calls not yet restored
	prev      int   // GOGC before the first of them
	prevLimit int64 // the memory limit before the first of them
}

// Relax takes the garbage collector out of the way until the returned
// function is called: a load allocates what it keeps (the tree), so
// collections during it find little garbage, and even at GOGC=400 they
// took a quarter of a start-up's CPU. When the process's memory bound is
// known (MemoryMax) the collector is off (GOGC=off) with a soft memory
// limit of half that bound, unless a lower limit is set (GOMEMLIMIT), so
// that it still collects before the machine runs short; otherwise it runs
// at GOGC=400. Concurrent loads share the setting; the last to finish
// restores the previous one. Tune does not change it meanwhile.
func Relax() (restore func()) {
	state.Lock()
	if state.loads == 0 {
		state.prevLimit = debug.SetMemoryLimit(-1)
		if bound, ok := MemoryMax(math.MaxInt64, readFile); ok {
			debug.SetMemoryLimit(min(state.prevLimit, int64(bound/2)))
			state.prev = debug.SetGCPercent(-1)
		} else {
			state.prev = debug.SetGCPercent(relaxedPercent)
		}
	}
	state.loads++
	state.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			state.Lock()
			state.loads--
			if state.loads == 0 {
				debug.SetGCPercent(state.prev)
				debug.SetMemoryLimit(state.prevLimit)
			}
			state.Unlock()
		})
	}
}

// Percent is the GOGC that leaves max(MinHeadroom, live/8) of headroom
// over a live heap of live bytes, between 12 and 400.
func Percent(live uint64) int {
	if live == 0 {
		return maxPercent
	}
	headroom := max(uint64(MinHeadroom), live/8)
	p := headroom * 100 / live
	return int(min(max(p, minPercent), maxPercent))
}

// Tune sets GOGC from the live heap now and every quarter second until
// the returned function is called, which puts back the setting Tune
// found; see the package comment. With GOGC set in the environment it
// does nothing.
func Tune() (stop func()) {
	if _, ok := os.LookupEnv("GOGC"); ok {
		return func() {}
	}
	return tune(readLive, interval)
}

// tune is Tune with the live-heap reading and the interval given.
func tune(live func() uint64, every time.Duration) (stop func()) {
	done := make(chan struct{})
	finished := make(chan struct{})
	state.Lock()
	orig := debug.SetGCPercent(-1)
	debug.SetGCPercent(orig)
	state.Unlock()
	set := func() {
		state.Lock()
		if state.loads == 0 {
			debug.SetGCPercent(Percent(live()))
		}
		state.Unlock()
	}
	set()
	go func() {
		defer close(finished)
		t := time.NewTicker(every)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				set()
			case <-done:
				return
			}
		}
	}()
	var once sync.Once
	return func() {
		once.Do(func() {
			close(done)
			<-finished
			state.Lock()
			if state.loads == 0 {
				debug.SetGCPercent(orig)
			} else {
				state.prev = orig
			}
			state.Unlock()
		})
	}
}

// liveMetric is the heap the last collection found live.
const liveMetric = "/gc/heap/live:bytes"

func readLive() uint64 {
	s := []metrics.Sample{{Name: liveMetric}}
	metrics.Read(s)
	if s[0].Value.Kind() != metrics.KindUint64 {
		return 0
	}
	return s[0].Value.Uint64()
}
