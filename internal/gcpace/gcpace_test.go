package gcpace

import (
	"io/fs"
	"math"
	"runtime/debug"
	"sync/atomic"
	"testing"
	"time"
)

// gogc reads the process's GOGC without changing it.
func gogc() int {
	p := debug.SetGCPercent(100)
	debug.SetGCPercent(p)
	return p
}

func TestPercentLeavesAnEighthOfLiveOrMinHeadroom(t *testing.T) {
	const mib = 1 << 20
	tests := []struct {
		live uint64
		want int
	}{
		{0, 400},
		{4 * mib, 400},   // 32 MiB over 4 MiB would be 800: at most 400
		{16 * mib, 200},  // 32 MiB over 16 MiB
		{32 * mib, 100},  // 32 MiB over 32 MiB
		{64 * mib, 50},   // 32 MiB over 64 MiB
		{128 * mib, 25},  // 32 MiB over 128 MiB
		{256 * mib, 12},  // 32 MiB = an eighth of 256 MiB (12.5)
		{1024 * mib, 12}, // an eighth
	}
	for _, tt := range tests {
		if got := Percent(tt.live); got != tt.want {
			t.Errorf("Percent(%d MiB) = %d, want %d", tt.live/mib, got, tt.want)
		}
	}
}

// withFiles makes MemoryMax read files (nil: none exists) during the test.
func withFiles(t *testing.T, files map[string]string) {
	old := readFile
	readFile = func(p string) ([]byte, error) {
		if s, ok := files[p]; ok {
			return []byte(s), nil
		}
		return nil, fs.ErrNotExist
	}
	t.Cleanup(func() { readFile = old })
}

// Overlapping snapshot loads turn the collector off once, under a soft
// memory limit of half the machine, and the settings come back when the
// last of them ends, whatever the order.
func TestRelaxTurnsTheCollectorOffUnderALimit(t *testing.T) {
	withFiles(t, map[string]string{"/proc/meminfo": "MemTotal:       8388608 kB\n"}) // 8 GiB
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	oldLimit := debug.SetMemoryLimit(math.MaxInt64)
	defer debug.SetMemoryLimit(oldLimit)
	a := Relax()
	b := Relax()
	if got, limit := gogc(), debug.SetMemoryLimit(-1); got != -1 || limit != 4<<30 {
		t.Fatalf("during loads: GOGC %d, memory limit %d; want off (-1) under 4 GiB", got, limit)
	}
	a()
	a() // twice: counted once
	if got := gogc(); got != -1 {
		t.Fatalf("GOGC while a load runs %d, want off", got)
	}
	b()
	if got, limit := gogc(), debug.SetMemoryLimit(-1); got != 77 || limit != math.MaxInt64 {
		t.Fatalf("after the loads: GOGC %d, memory limit %d; want 77 and none", got, limit)
	}
}

// A memory limit set lower than half the machine (GOMEMLIMIT) stays.
func TestRelaxKeepsALowerMemoryLimit(t *testing.T) {
	withFiles(t, map[string]string{"/proc/meminfo": "MemTotal:       8388608 kB\n"})
	oldLimit := debug.SetMemoryLimit(1 << 30)
	defer debug.SetMemoryLimit(oldLimit)
	restore := Relax()
	limit := debug.SetMemoryLimit(-1)
	restore()
	if limit != 1<<30 {
		t.Fatalf("memory limit during a load %d, want the 1 GiB set before", limit)
	}
}

// Without a known memory bound the collector only slows down.
func TestRelaxWithoutAMemoryBound(t *testing.T) {
	withFiles(t, nil)
	old := debug.SetGCPercent(77)
	defer debug.SetGCPercent(old)
	restore := Relax()
	got := gogc()
	restore()
	if got != relaxedPercent {
		t.Fatalf("GOGC during a load %d, want %d", got, relaxedPercent)
	}
	if got := gogc(); got != 77 {
		t.Fatalf("GOGC after the load %d, want 77", got)
	}
}

// awaitGOGC waits (bounded) for the tuner to set want.
func awaitGOGC(t *testing.T, want int, what string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for gogc() != want {
		if time.Now().After(deadline) {
			t.Fatalf("%s: GOGC %d, want %d", what, gogc(), want)
		}
		time.Sleep(time.Millisecond)
	}
}

// The tuner follows the live heap, leaves a load's relaxed setting alone,
// and puts back what it found when stopped.
func TestTuneFollowsTheLiveHeapAndYieldsToLoads(t *testing.T) {
	old := debug.SetGCPercent(90)
	defer debug.SetGCPercent(old)
	var live atomic.Uint64
	live.Store(1 << 30)
	stop := tune(live.Load, time.Millisecond)
	defer stop()
	if got := gogc(); got != 12 {
		t.Fatalf("GOGC with 1 GiB live right after tune: %d, want 12", got)
	}
	live.Store(64 << 20)
	awaitGOGC(t, 50, "64 MiB live")

	withFiles(t, nil)
	restore := Relax()
	live.Store(1 << 30)
	// Several ticks pass with the load under way: the relaxed setting holds.
	for range 20 {
		time.Sleep(time.Millisecond)
		if got := gogc(); got != relaxedPercent {
			restore()
			t.Fatalf("GOGC during a load %d, want %d", got, relaxedPercent)
		}
	}
	restore()
	awaitGOGC(t, 12, "1 GiB live after the load")

	stop()
	if got := gogc(); got != 90 {
		t.Fatalf("GOGC after stop %d, want the 90 found at the start", got)
	}
}
