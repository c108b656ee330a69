package node

import (
	"testing"
	"time"

	"go.etcd.io/raft/v3"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/replica"
	"github.com/wardenzk/warden/wire"
)

// summary returns mntr's cnt_ and sum_ of a summary.
func summary(m *metrics.Set, name string) (cnt, sum int64) {
	for _, v := range m.Monitor() {
		switch v.Name {
		case "cnt_" + name:
			cnt = v.Value.(int64)
		case "sum_" + name:
			sum = v.Value.(int64)
		}
	}
	return cnt, sum
}

func TestElectionClock(t *testing.T) {
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	type step struct {
		ms    int    // when
		role  Role   // new role (roleChanged)
		lead  uint64 // new leader
		term  uint64
		apply uint64 // instead of a role change: an entry of this term applied
	}
	tests := []struct {
		name  string
		steps []step
		want  map[string][2]int64 // summary → count, sum (ms)
		look  int64               // looking_count, the start's included
	}{
		{"starts and leads", []step{{ms: 40, role: Leading, lead: 1, term: 2}},
			map[string][2]int64{"election_time": {1, 40}, "unavailable_time": {1, 40}, "leader_unavailable_time": {1, 40}, "follower_sync_time": {0, 0}}, 1},
		{"starts, follows, syncs", []step{{ms: 30, role: Following, lead: 2, term: 2}, {ms: 35, apply: 1}, {ms: 50, apply: 2}},
			map[string][2]int64{"election_time": {1, 30}, "follower_sync_time": {1, 20}, "unavailable_time": {1, 50}, "leader_unavailable_time": {0, 0}}, 1},
		{"loses the leader and follows another", []step{
			{ms: 10, role: Following, lead: 2, term: 2}, {ms: 10, apply: 2},
			{ms: 100, role: Looking, lead: 0, term: 3}, {ms: 130, role: Following, lead: 3, term: 3}, {ms: 140, apply: 3}},
			map[string][2]int64{"election_time": {2, 40}, "follower_sync_time": {2, 10}, "unavailable_time": {2, 50}}, 2},
		{"starts, observes, syncs", []step{{ms: 30, role: Observing, lead: 2, term: 2}, {ms: 45, apply: 2}},
			map[string][2]int64{"election_time": {1, 30}, "observer_sync_time": {1, 15}, "follower_sync_time": {0, 0}, "unavailable_time": {1, 45}}, 1},
		{"moved straight to a new leader", []step{
			{ms: 10, role: Following, lead: 2, term: 2}, {ms: 10, apply: 2},
			{ms: 100, role: Following, lead: 3, term: 3}, {ms: 104, apply: 3}},
			map[string][2]int64{"election_time": {2, 10}, "follower_sync_time": {2, 4}, "unavailable_time": {2, 14}}, 2},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			m := metrics.New(metrics.Options{})
			n := &Node{cfg: Config{Members: []Member{{ID: 1}, {ID: 2}, {ID: 3}}, Metrics: m}}
			n.elect.lookingSince, n.elect.unavailableSince = t0, t0 // as Run does
			m.LookingCount.Inc()
			old, lead := Looking, uint64(0)
			for _, s := range tt.steps {
				if s.apply > 0 {
					n.elect.synced(m, s.apply, func() time.Time { return at(s.ms) })
					continue
				}
				n.observeRole(old, s.role, lead, &replica.Status{Lead: s.lead, State: raft.StateFollower, Term: s.term}, at(s.ms))
				old, lead = s.role, s.lead
			}
			for name, want := range tt.want {
				if cnt, sum := summary(m, name); cnt != want[0] || sum != want[1] {
					t.Errorf("%s: count %d, sum %d ms; want %d, %d", name, cnt, sum, want[0], want[1])
				}
			}
			if got := m.LookingCount.Value(); got != tt.look {
				t.Errorf("looking_count = %d, want %d", got, tt.look)
			}
		})
	}
}

func TestCommittedEntriesCountOnTheLeaderOnly(t *testing.T) {
	entries := []fsm.Entry{
		{Op: wire.OpCreate, Time: time.Now().UnixMilli()},
		{Op: wire.OpSetData, Time: time.Now().UnixMilli()},
		{Op: wire.OpPing},  // a touch: Warden's own
		{Op: fsm.OpAttach}, // Warden's own
		{Op: fsm.OpRejoin}, // Warden's own
	}
	for _, tt := range []struct {
		role                   Role
		commits, quorum, propo int64
	}{
		{Leading, 2, 2, 0},
		{Following, 0, 0, 2},
		{Observing, 0, 0, 2},
		{Standalone, 0, 0, 0},
	} {
		m := metrics.New(metrics.Options{})
		n := &Node{cfg: Config{Metrics: m}}
		n.role.Store(int32(tt.role))
		n.observeCommitted(entries)
		q, _ := summary(m, "quorum_ack_latency")
		p, _ := summary(m, "proposal_latency")
		if got := m.CommitCount.Value(); got != tt.commits || q != tt.quorum || p != tt.propo {
			t.Errorf("%s: commit_count %d, quorum_ack_latency %d, proposal_latency %d; want %d, %d, %d",
				tt.role.Mode(), got, q, p, tt.commits, tt.quorum, tt.propo)
		}
	}
}
