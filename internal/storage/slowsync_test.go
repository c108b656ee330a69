package storage

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// steppingClock is a clock that moves by step at every reading, so each
// timed fsync looks exactly step long.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(c.step)
	return c.now
}

func TestWALSlowSync(t *testing.T) {
	tests := []struct {
		name      string
		threshold time.Duration // WALOptions.SlowSync
		took      time.Duration // how long each fsync looks
		wantSlow  bool
	}{
		{"default threshold, fast", 0, 999 * time.Millisecond, false},
		{"default threshold, at it", 0, time.Second, false},
		{"default threshold, over it", 0, 1001 * time.Millisecond, true},
		{"custom threshold, over it", 10 * time.Millisecond, 11 * time.Millisecond, true},
		{"every fsync", -1, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			log, buf := testLogger()
			type sync struct {
				d    time.Duration
				slow bool
			}
			var syncs []sync
			w := mustOpenWAL(t, NewMemFS(), WALOptions{
				Logger:   log,
				SlowSync: tt.threshold,
				Now:      (&steppingClock{now: time.Unix(0, 0), step: tt.took}).Now,
				OnSync:   func(d time.Duration, slow bool) { syncs = append(syncs, sync{d, slow}) },
			})
			syncs = nil // forget what opening did
			buf.Reset()
			if err := w.Save(hardState(1, 1, 0), ents(1, 3, 1), true); err != nil {
				t.Fatal(err)
			}
			if len(syncs) != 1 {
				t.Fatalf("OnSync called %d times for one Save, want 1", len(syncs))
			}
			if syncs[0].d != tt.took || syncs[0].slow != tt.wantSlow {
				t.Errorf("OnSync(%v, %v), want (%v, %v)", syncs[0].d, syncs[0].slow, tt.took, tt.wantSlow)
			}
			logged := strings.Contains(buf.String(), "level=WARN") && strings.Contains(buf.String(), "fsync of the write-ahead log was slow")
			if logged != tt.wantSlow {
				t.Errorf("warning logged = %v, want %v; log:\n%s", logged, tt.wantSlow, buf.String())
			}
			if tt.wantSlow && !strings.Contains(buf.String(), "file="+testDir+"/") {
				t.Errorf("the warning does not name the segment file:\n%s", buf.String())
			}
		})
	}
}

func TestWALNoSyncReportsNothing(t *testing.T) {
	calls := 0
	w := mustOpenWAL(t, NewMemFS(), WALOptions{NoSync: true, OnSync: func(time.Duration, bool) { calls++ }})
	if err := w.Save(hardState(1, 1, 0), ents(1, 3, 1), true); err != nil {
		t.Fatal(err)
	}
	if calls != 0 {
		t.Errorf("OnSync called %d times with NoSync, want 0", calls)
	}
}
