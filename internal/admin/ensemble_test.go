package admin

import (
	"fmt"
	"net/http"
	"strconv"
	"testing"

	"github.com/wardenzk/warden/client"

	"github.com/wardenzk/warden/server/servertest"
)

func TestEnsembleRolesLeaderVotingViewZabState(t *testing.T) {
	// Members 1–3 vote, member 4 observes.
	e := servertest.StartTestEnsemble(t, 4, servertest.WithObservers(1))
	leader := e.Leader()
	admins := make([]*Server, 4)
	for i := range admins {
		admins[i] = startAdmin(t, e.Member(i), nil)
	}
	c := connect(t, e.Addr(leader))
	if _, err := c.Create(ctxT(t), "/x", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	e.WaitApplied()

	for i, a := range admins {
		myid := int64(i + 1)
		t.Run(fmt.Sprintf("member%d", myid), func(t *testing.T) {
			lead := run(t, a, "lead", "leader")
			if lead["is_leader"] != (i == leader) || num(t, lead, "leader_id") != int64(leader+1) || lead["leader_ip"] != "127.0.0.1" {
				t.Errorf("leader = %v (leader is member %d)", lead, leader+1)
			}

			view := obj(t, run(t, a, "voting_view", "voting_view"), "current_config")
			if len(view) != 3 {
				t.Fatalf("voting view has %d members, want the 3 voters: %v", len(view), view)
			}
			for id := 1; id <= 3; id++ {
				m := obj(t, view, strconv.Itoa(id))
				if fmt.Sprint(m["server_addresses"]) != fmt.Sprintf("[127.0.0.1:%d]", 2887+id) || fmt.Sprint(m["election_addresses"]) != fmt.Sprintf("[127.0.0.1:%d]", 3887+id) ||
					m["learner_type"] != "participant" {
					t.Errorf("voting view of %d: %v", id, m)
				}
			}

			zab := run(t, a, "zabstate", "zabstate")
			zxid := e.Member(i).LastZxid()
			if num(t, zab, "myid") != myid || zab["is_leader"] != (i == leader) || zab["voting"] != (i < 3) ||
				zab["zabstate"] != "broadcast" || zab["last_zxid"] != fmt.Sprintf("0x%x", zxid) ||
				num(t, zab, "zab_epoch") != zxid>>32 || num(t, zab, "zab_counter") != zxid&0xffffffff {
				t.Errorf("zabstate = %v (zxid %x)", zab, zxid)
			}
			if qa := obj(t, zab, "quorum_address"); qa["one"] != fmt.Sprintf("127.0.0.1:%d", 2888+i) || fmt.Sprint(qa["all_ports"]) != fmt.Sprintf("[%d]", 2888+i) {
				t.Errorf("quorum_address = %v", qa)
			}

			srvr := run(t, a, "srvr", "server_stats")
			_, hasProposals := srvr["proposal_stats"]
			if hasProposals != (i == leader) {
				t.Errorf("proposal_stats present %v on member %d (leader %d)", hasProposals, myid, leader+1)
			}
			wantState := map[bool]string{true: "leader", false: "follower"}[i == leader]
			if i == 3 {
				wantState = "observer"
			}
			if s := obj(t, srvr, "server_stats")["server_state"]; s != wantState {
				t.Errorf("server_state = %v, want %s", s, wantState)
			}
			if num(t, run(t, a, "conf", "configuration"), "server_id") != myid {
				t.Error("configuration's server_id is not myid")
			}
		})
	}

	// The leader sees its observer once it streams to it.
	eventually(t, "the observer synced", func() bool {
		m := run(t, admins[leader], "obsr", "observers")
		return num(t, m, "synced_observers") == 1
	})
	obs := list(t, run(t, admins[leader], "obsr", "observers"), "observers")
	if o := obs[0].(map[string]any); num(t, o, "sid") != 4 || o["remote_socket_address"] != "/127.0.0.1:2891" {
		t.Errorf("observer = %v", o)
	}
	f := e.Followers()[0]
	if m := run(t, admins[f], "obsr", "observers"); num(t, m, "synced_observers") != 0 {
		t.Errorf("a follower lists observers: %v", m)
	}

	// A member that lost its quorum is not serving: most commands say so,
	// monitor and zabstate still answer.
	lone := e.Followers()[0]
	for _, i := range e.All() {
		if i != lone {
			e.Stop(i)
		}
	}
	e.WaitNotServing(lone)
	r := do(t, admins[lone], http.MethodGet, "/commands/ruok", "", nil)
	if m := r.json(t); r.status != http.StatusOK || m["error"] != "This ZooKeeper instance is not currently serving requests" {
		t.Errorf("ruok while electing: %d %s", r.status, r.body)
	}
	if m := run(t, admins[lone], "zabstate", "zabstate"); m["zabstate"] != "election" {
		t.Errorf("zabstate while electing: %v", m["zabstate"])
	}
	if m := run(t, admins[lone], "mntr", "monitor"); m["server_state"] != "looking" {
		t.Errorf("mntr while electing: %v", m["server_state"])
	}
}
