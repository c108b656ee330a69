package ensemble

import (
	"slices"
	"testing"
	"time"
)

// e. Three members under load are restarted one at a time, as an operator
// rolls a configuration change or a new binary through an ensemble: each
// is stopped with SIGTERM, started again on its data directory, and
// waited for (serving as a follower at the leader's zxid) before the next.
// The followers go first and the leader last, as ZooKeeper's operators do,
// so that the ensemble elects a new leader once rather than at every step.
// No acknowledged write is lost, no session expires (each still owns its
// ephemeral on every member), and the writers see only ConnectionLoss,
// after which they reconnect and go on.
func TestThreeMembersRollingRestart(t *testing.T) { rollingRestart(t, true) }

// f. The rolling restart of e, with kill -9 instead of SIGTERM: a member
// that crashes at any moment loses nothing either.
func TestThreeMembersRollingRestartKill9(t *testing.T) { rollingRestart(t, false) }

// The sessions of the rolling restarts are short, and each member stays
// down longer than one, so that a session expiring for want of a member
// (its clients not moving, the leader not hearing of them, a new leader
// with stale deadlines) fails the test.
const (
	rollingSession = 3 * time.Second
	rollingDown    = 3 * rollingSession / 2
)

// rollingRestart restarts every member in turn under load, gracefully
// (SIGTERM, and the member must exit with status 0) or with SIGKILL.
func rollingRestart(t *testing.T, graceful bool) {
	s := newScenarioSessions(t, 3, rollingSession)
	for _, sess := range s.sessions {
		if got := sess.c.SessionTimeout(); got != rollingSession {
			t.Fatalf("%s: negotiated session timeout %v, want %v", sess.name, got, rollingSession)
		}
	}
	s.writesContinue(s.begin)
	remaining := slices.Clone(s.e.members)
	for len(remaining) > 0 {
		// As an operator does before each step: ask who leads now, and
		// take a follower still to restart (the lowest id), or the leader
		// when only it is left.
		leader := s.e.waitLeader()
		m := remaining[0]
		if m == leader && len(remaining) > 1 {
			m = remaining[1]
		}
		remaining = slices.DeleteFunc(remaining, func(x *member) bool { return x == m })
		role := "follower"
		if m == leader {
			role = "leader"
		}
		stoppedAt := time.Now()
		if graceful {
			st := m.Stop(t)
			s.step("SIGTERM %s %v: exited (%v) after %v", role, m, st, time.Since(stoppedAt).Round(time.Millisecond))
			if !st.Success() {
				t.Errorf("%v, stopped with SIGTERM, exited with %v; want status 0", m, st)
			}
		} else {
			m.Kill9(t)
			s.step("kill -9 %s %v", role, m)
		}
		if m == leader {
			newLeader, elected := s.e.waitNewLeader(s.e.others(m))
			s.step("%v leads, seen %v after the stop", newLeader, elected.Round(time.Millisecond))
		} else if now := s.e.waitLeader(); now != leader {
			// Not an error (an election may follow any stall of a loaded
			// machine), but worth seeing: a follower's restart should not
			// disturb the leader.
			s.step("the leader changed from %v to %v while follower %v was down", leader, now, m)
		}
		first := s.writesContinue(stoppedAt)
		// The outage is the fault itself, not a wait for something: hold it.
		if left := rollingDown - time.Since(stoppedAt); left > 0 {
			time.Sleep(left)
		}
		s.step("%v down for %v: %d writes acknowledged, the first %v after the stop", m, time.Since(stoppedAt).Round(time.Millisecond),
			len(s.load.h.ackedSince(stoppedAt)), first.end.Sub(stoppedAt).Round(time.Millisecond))
		s.rejoin(m)
		s.writesContinue(time.Now())
	}
	for class, n := range s.load.h.retries() {
		if class != "ConnectionLoss" {
			t.Errorf("the writers retried after %d × %s during the rolling restart; want ConnectionLoss only", n, class)
		}
	}
	s.finish()
}
