package server_test

import (
	"fmt"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

// gathered returns a member's metrics by name: a gauge's or counter's
// value, a summary's count.
func gathered(t *testing.T, srv *server.Server) map[string]float64 {
	t.Helper()
	mfs, err := srv.Metrics().Registry().Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]float64)
	for _, mf := range mfs {
		for _, m := range mf.GetMetric() {
			if len(m.GetLabel()) > 0 {
				continue
			}
			switch mf.GetType() {
			case dto.MetricType_SUMMARY:
				out[mf.GetName()] = float64(m.GetSummary().GetSampleCount())
			case dto.MetricType_COUNTER:
				out[mf.GetName()] = m.GetCounter().GetValue()
			case dto.MetricType_GAUGE:
				out[mf.GetName()] = m.GetGauge().GetValue()
			}
		}
	}
	return out
}

// waitGathered polls member i's metrics until cond holds (10s at most).
func waitGathered(t *testing.T, e *servertest.Ensemble, i int, what string, cond func(map[string]float64) bool) map[string]float64 {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		m := gathered(t, e.Member(i))
		if cond(m) {
			return m
		}
		if time.Now().After(deadline) {
			t.Fatalf("member %d: %s not reached within 10s: %v", i+1, what, m)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestEnsembleMetrics(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3)
	l := e.Leader()
	followers := e.Followers()

	// Every member elected once at least, and is available again.
	for _, i := range e.All() {
		m := waitGathered(t, e, i, "back in service", func(m map[string]float64) bool { return m["unavailable_time"] >= 1 })
		for _, name := range []string{"election_time", "looking_count", "warden_leader_changes_total", "warden_raft_term"} {
			if m[name] < 1 {
				t.Errorf("member %d: %s = %v, want at least 1", i+1, name, m[name])
			}
		}
	}
	lm := waitGathered(t, e, l, "two synced followers", func(m map[string]float64) bool {
		return m["learners"] == 2 && m["synced_followers"] == 2
	})
	if lm["leader_unavailable_time"] < 1 || lm["quorum_size"] != 3 {
		t.Errorf("leader: leader_unavailable_time count %v, quorum_size %v", lm["leader_unavailable_time"], lm["quorum_size"])
	}
	for _, f := range followers {
		m := waitGathered(t, e, f, "synced with the leader", func(m map[string]float64) bool { return m["follower_sync_time"] >= 1 })
		if m["leader_unavailable_time"] != 0 || m["learners"] != 0 {
			t.Errorf("follower %d: leader_unavailable_time count %v, learners %v; want 0 and none", f+1, m["leader_unavailable_time"], m["learners"])
		}
	}

	c := connectTo(t, e, l)
	e.WaitApplied()
	before := make(map[int]map[string]float64)
	for _, i := range e.All() {
		before[i] = gathered(t, e.Member(i))
	}
	const creates = 6
	for i := range creates {
		mustCreate(t, c, fmt.Sprintf("/m%d", i), "x")
	}
	// commit_count: one per write committed, on the leader only.
	lm = waitGathered(t, e, l, "commit_count +6", func(m map[string]float64) bool {
		return m["commit_count"]-before[l]["commit_count"] >= creates
	})
	if got := lm["commit_count"] - before[l]["commit_count"]; got != creates {
		t.Errorf("leader's commit_count moved by %v, want %d", got, creates)
	}
	if got := lm["quorum_ack_latency"] - before[l]["quorum_ack_latency"]; got != creates {
		t.Errorf("leader's quorum_ack_latency_count moved by %v, want %d", got, creates)
	}
	for _, f := range followers {
		m := waitGathered(t, e, f, "proposal_latency +6", func(m map[string]float64) bool {
			return m["proposal_latency"]-before[f]["proposal_latency"] >= creates
		})
		if got := m["proposal_latency"] - before[f]["proposal_latency"]; got != creates {
			t.Errorf("follower %d: proposal_latency_count moved by %v, want %d", f+1, got, creates)
		}
		if m["commit_count"] != 0 || m["quorum_ack_latency"] != 0 {
			t.Errorf("follower %d: commit_count %v, quorum_ack_latency count %v; want 0 (leader only)", f+1, m["commit_count"], m["quorum_ack_latency"])
		}
		if m["fsynctime"] <= before[f]["fsynctime"] {
			t.Errorf("follower %d: fsynctime_count did not grow with the writes", f+1)
		}
	}

	// The leader goes: a new election on the others.
	e.Stop(l)
	e.WaitServing(followers...)
	for _, f := range followers {
		waitGathered(t, e, f, "a second election", func(m map[string]float64) bool {
			return m["election_time"] >= before[f]["election_time"]+1 && m["looking_count"] >= before[f]["looking_count"]+1
		})
	}
}

// TestEnsembleSyncCounts checks ZooKeeper's snap_count and diff_count on
// the leader: a member caught up by snapshot (the entries it lacked were
// compacted away) counts in snap_count, one caught up by log entries
// alone in diff_count.
func TestEnsembleSyncCounts(t *testing.T) {
	for _, tc := range []struct {
		name      string
		snapCount int  // the members' snapCount
		down      int  // writes while the follower is down
		wipe      bool // the follower's data is wiped while it is down
		snap      bool // the follower is caught up by snapshot
	}{
		// The leader still holds the entries the follower missed.
		{"restarted follower gets a diff", 100000, 5, false, false},
		// The leader compacted its log past the follower's last entry.
		{"follower behind a compacted log gets a snapshot", 20, 80, false, true},
		// An empty member: the leader may hand leadership over (Warden
		// resets a member that lost its log that way); whichever member
		// leads then sends it a snapshot.
		{"wiped follower gets a snapshot", 20, 60, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := servertest.StartTestEnsemble(t, 3, servertest.WithMemberConfig(func(c *server.Config) {
				c.SnapCount = tc.snapCount
			}))
			l := e.Leader()
			f := e.Followers()[0]
			// Each follower was brought in step when the leader was elected:
			// by log entries, as every member started from the same state.
			waitGathered(t, e, l, "both followers in step", func(m map[string]float64) bool {
				return m["diff_count"] >= 2 && m["synced_followers"] == 2
			})
			for _, i := range e.All() {
				m := gathered(t, e.Member(i))
				if m["snap_count"] != 0 || (i != l && m["diff_count"] != 0) {
					t.Errorf("member %d: snap_count %v, diff_count %v at start; want none but the leader's diffs", i+1, m["snap_count"], m["diff_count"])
				}
			}
			c := connectTo(t, e, l)
			mustCreate(t, c, "/before", "x")
			e.WaitCaughtUp()
			e.Stop(f)
			if tc.wipe {
				e.Wipe(f)
			}
			for i := range tc.down {
				mustCreate(t, c, fmt.Sprintf("/while-down%03d", i), "x")
			}
			before := gathered(t, e.Member(l))
			e.Restart(f)
			e.WaitServing(f)
			e.WaitCaughtUp()
			if tc.wipe {
				// Whichever member leads sent the snapshot.
				waitFor(t, "a snapshot sent to the wiped member", func() bool {
					n := 0.0
					for _, i := range e.All() {
						n += gathered(t, e.Member(i))["snap_count"]
					}
					return n >= 1
				})
				return
			}
			if got := e.Leader(); got != l {
				t.Fatalf("the leader changed from member %d to %d", l+1, got+1)
			}
			grown, same := "diff_count", "snap_count"
			if tc.snap {
				grown, same = same, grown
			}
			m := waitGathered(t, e, l, grown+" +1", func(m map[string]float64) bool {
				return m[grown] >= before[grown]+1
			})
			if m[same] != before[same] {
				t.Errorf("%s moved from %v to %v; want only %s to move", same, before[same], m[same], grown)
			}
		})
	}
}

// waitFor polls cond until it holds (10s at most).
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("%s not reached within 10s", what)
		}
	}
}
