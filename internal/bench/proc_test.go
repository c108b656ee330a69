package bench

import (
	"os"
	"testing"
	"time"
)

// TestCombineProcs: the readings of an ensemble's members add up their
// CPU time and keep the largest member's memory, and are readable only
// when every member was.
func TestCombineProcs(t *testing.T) {
	const mib = 1 << 20
	leader := ProcStats{CPU: 3 * time.Second, RSS: 300 * mib, PeakRSS: 310 * mib, Readable: true}
	follower := ProcStats{CPU: 2 * time.Second, RSS: 200 * mib, PeakRSS: 400 * mib, Readable: true}
	idle := ProcStats{CPU: time.Second, RSS: 100 * mib, PeakRSS: 120 * mib, Readable: true}
	tests := []struct {
		name string
		in   []ProcStats
		want ProcStats
	}{
		{"none", nil, ProcStats{}},
		{"one", []ProcStats{leader}, leader},
		{"three: CPU summed, RSS and peak of the largest", []ProcStats{idle, leader, follower},
			ProcStats{CPU: 6 * time.Second, RSS: 300 * mib, PeakRSS: 400 * mib, Readable: true}},
		{"one unreadable", []ProcStats{leader, {}, follower}, ProcStats{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := combineProcs(tt.in); got != tt.want {
				t.Errorf("combineProcs = %+v, want %+v", got, tt.want)
			}
		})
	}
}

// TestMaxRSSGrowth: bytes per znode of an ensemble are those of the
// member that grew most, not of the largest one.
func TestMaxRSSGrowth(t *testing.T) {
	rss := func(b int64) ProcStats { return ProcStats{RSS: b, Readable: true} }
	tests := []struct {
		name          string
		before, after []ProcStats
		want          int64
		ok            bool
	}{
		{"one", []ProcStats{rss(100)}, []ProcStats{rss(1100)}, 1000, true},
		{"the member that grew most", []ProcStats{rss(500), rss(100), rss(100)},
			[]ProcStats{rss(900), rss(1300), rss(1200)}, 1200, true},
		{"shrank", []ProcStats{rss(500)}, []ProcStats{rss(400)}, -100, true},
		{"one unreadable", []ProcStats{rss(1), rss(1)}, []ProcStats{rss(2), {}}, 0, false},
		{"different lengths", []ProcStats{rss(1)}, []ProcStats{rss(2), rss(3)}, 0, false},
		{"none", nil, nil, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := maxRSSGrowth(tt.before, tt.after)
			if got != tt.want || ok != tt.ok {
				t.Errorf("maxRSSGrowth = %d, %v; want %d, %v", got, ok, tt.want, tt.ok)
			}
		})
	}
}

// TestReadProcsSelf: this test process read twice as two members is
// readable, with twice its CPU time and its own memory.
func TestReadProcsSelf(t *testing.T) {
	pid := os.Getpid()
	one := readProcs([]int{pid})
	two := readProcs([]int{pid, pid})
	if !one.Readable || !two.Readable || one.RSS <= 0 {
		t.Fatalf("readProcs(self) = %+v, (self, self) = %+v", one, two)
	}
	// The two readings of the pair are taken after the single one.
	if two.CPU < 2*one.CPU {
		t.Errorf("CPU of (self, self) %v < twice self's %v", two.CPU, one.CPU)
	}
	if readProcs([]int{pid, 1 << 30}).Readable {
		t.Error("a missing process read as readable")
	}
}
