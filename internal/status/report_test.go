package status

import (
	"errors"
	"reflect"
	"testing"
)

func TestLagOf(t *testing.T) {
	cases := []struct {
		name           string
		leader, member Zxid
		want           Lag
		text           string
	}{
		{"in step", 0x200000007, 0x200000007, Lag{Kind: LagTxns}, "0"},
		{"two behind", 0x200000007, 0x200000005, Lag{Kind: LagTxns, Txns: 2}, "2"},
		{"asked after the leader moved on", 0x200000007, 0x200000009, Lag{Kind: LagTxns}, "0"},
		{"whole epoch", 0x2ffffffff, 0x200000000, Lag{Kind: LagTxns, Txns: 0xffffffff}, "4294967295"},
		{"older epoch", 0x200000001, 0x1000000ff, Lag{Kind: LagEpochBehind}, "epoch behind"},
		{"newer epoch", 0x200000001, 0x300000000, Lag{Kind: LagEpochAhead}, "epoch ahead"},
		{"standalone counters", 0x3, 0x1, Lag{Kind: LagTxns, Txns: 2}, "2"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := LagOf(tc.leader, tc.member)
			if got != tc.want || got.String() != tc.text {
				t.Errorf("LagOf(%v, %v) = %+v %q, want %+v %q", tc.leader, tc.member, got, got, tc.want, tc.text)
			}
		})
	}
	if s := (Lag{}).String(); s != "-" {
		t.Errorf("no lag = %q", s)
	}
}

// member builds a Member from canned replies ("" for mntr: not asked).
func member(t *testing.T, addr, srvr, mntr string) Member {
	t.Helper()
	m := Member{Addr: addr}
	m.Srvr, m.Err = ParseSrvr(srvr)
	if mntr != "" {
		m.Mntr, m.MntrErr = ParseMntr(mntr)
	}
	return m
}

func down(addr, msg string) Member { return Member{Addr: addr, Err: errors.New(msg)} }

func TestSummarize(t *testing.T) {
	type rowWant struct {
		mode string // Row.ModeText
		lag  string
	}
	cases := []struct {
		name    string
		members func(t *testing.T) []Member
		rows    []rowWant
		leaders []string
		synced  int64
		voters  int
		serving int
		quorum  bool
		ok      bool
	}{
		{
			name: "healthy ensemble, mntr allowed on the leader",
			members: func(t *testing.T) []Member {
				return []Member{
					member(t, "a:2181", srvrFollower, mntrNotAllowed),
					member(t, "b:2181", srvrLeader, mntrLeader),
					member(t, "c:2181", srvrFollower, ""),
				}
			},
			rows:    []rowWant{{"follower", "2"}, {"leader", "-"}, {"follower", "2"}},
			leaders: []string{"b:2181"}, synced: 1, voters: 3, serving: 3, quorum: true, ok: true,
		},
		{
			name: "observer is not a voter; its epoch is behind",
			members: func(t *testing.T) []Member {
				return []Member{
					member(t, "a:2181", srvrLeader, ""),
					member(t, "b:2181", srvrFollower, ""),
					member(t, "o:2181", srvrObserver, ""),
				}
			},
			rows:    []rowWant{{"leader", "-"}, {"follower", "2"}, {"observer", "epoch behind"}},
			leaders: []string{"a:2181"}, synced: -1, voters: 2, serving: 2, quorum: true, ok: true,
		},
		{
			name: "one member down: quorum, but not OK",
			members: func(t *testing.T) []Member {
				return []Member{
					member(t, "a:2181", srvrLeader, mntrLeader),
					member(t, "b:2181", srvrFollower, mntrFollowerSyncing),
					down("c:2181", "connection refused"),
				}
			},
			rows:    []rowWant{{"leader", "-"}, {"follower (synchronization)", "2"}, {"down: connection refused", "-"}},
			leaders: []string{"a:2181"}, synced: 1, voters: 3, serving: 2, quorum: true, ok: false,
		},
		{
			name: "electing: nobody serves",
			members: func(t *testing.T) []Member {
				return []Member{
					member(t, "a:2181", notServing, ""),
					member(t, "b:2181", notServing, ""),
					down("c:2181", "no answer within 2s"),
				}
			},
			rows:    []rowWant{{"not serving", "-"}, {"not serving", "-"}, {"down: no answer within 2s", "-"}},
			leaders: nil, synced: -1, voters: 3, serving: 0, quorum: false, ok: false,
		},
		{
			name: "two leaders: no lag, not OK",
			members: func(t *testing.T) []Member {
				return []Member{
					member(t, "a:2181", srvrLeader, mntrLeader),
					member(t, "b:2181", srvrLeader, ""),
					member(t, "c:2181", srvrFollower, ""),
				}
			},
			rows:    []rowWant{{"leader", "-"}, {"leader", "-"}, {"follower", "-"}},
			leaders: []string{"a:2181", "b:2181"}, synced: -1, voters: 3, serving: 3, quorum: true, ok: false,
		},
		{
			name: "single standalone",
			members: func(t *testing.T) []Member {
				return []Member{member(t, "localhost:2181", srvrStandalone, mntrNotAllowed)}
			},
			rows:    []rowWant{{"standalone", "-"}},
			leaders: nil, synced: -1, voters: 1, serving: 1, quorum: true, ok: true,
		},
		{
			name: "two standalone servers are not an ensemble",
			members: func(t *testing.T) []Member {
				return []Member{member(t, "a:2181", srvrStandalone, ""), member(t, "b:2181", srvrStandalone, "")}
			},
			rows:    []rowWant{{"standalone", "-"}, {"standalone", "-"}},
			leaders: nil, synced: -1, voters: 2, serving: 2, quorum: true, ok: false,
		},
		{
			name: "read-only member: outside the quorum, not OK",
			members: func(t *testing.T) []Member {
				return []Member{
					member(t, "a:2181", srvrLeader, ""),
					member(t, "b:2181", srvrFollower, ""),
					member(t, "c:2181", srvrReadOnly, ""),
				}
			},
			rows:    []rowWant{{"leader", "-"}, {"follower", "2"}, {"read-only", "3"}},
			leaders: []string{"a:2181"}, synced: -1, voters: 3, serving: 2, quorum: true, ok: false,
		},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			r := Summarize(tc.members(t))
			if len(r.Rows) != len(tc.rows) {
				t.Fatalf("%d rows, want %d", len(r.Rows), len(tc.rows))
			}
			for i, want := range tc.rows {
				if got := r.Rows[i]; got.ModeText() != want.mode || got.Lag.String() != want.lag {
					t.Errorf("row %d (%s): mode %q lag %q, want %q %q", i, got.Addr, got.ModeText(), got.Lag, want.mode, want.lag)
				}
			}
			if !reflect.DeepEqual(r.Leaders, tc.leaders) || r.SyncedFollowers != tc.synced ||
				r.Voters != tc.voters || r.ServingVoters != tc.serving || r.Quorum != tc.quorum || r.OK != tc.ok {
				t.Errorf("leaders %v synced %d, %d of %d voters serving, quorum %v, ok %v\nwant leaders %v synced %d, %d of %d, quorum %v, ok %v",
					r.Leaders, r.SyncedFollowers, r.ServingVoters, r.Voters, r.Quorum, r.OK,
					tc.leaders, tc.synced, tc.serving, tc.voters, tc.quorum, tc.ok)
			}
		})
	}
}

// TestSummarizeMntr checks what a Row says about the mntr word.
func TestSummarizeMntr(t *testing.T) {
	r := Summarize([]Member{
		member(t, "a:2181", srvrLeader, mntrLeader),
		member(t, "b:2181", srvrFollower, mntrNotAllowed),
		member(t, "c:2181", srvrFollower, ""),
		{Addr: "d:2181", Srvr: Srvr{Mode: ModeFollower}, MntrErr: errors.New("no answer within 2s")},
	})
	for i, want := range []string{"ok", "not allowed", "", "no answer within 2s"} {
		if got := r.Rows[i].Mntr; got != want {
			t.Errorf("row %d: mntr %q, want %q", i, got, want)
		}
	}
	if got := r.Rows[0].PeerState; got != "leading - broadcast" {
		t.Errorf("leader's peer state %q", got)
	}
}
