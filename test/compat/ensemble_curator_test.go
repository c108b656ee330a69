//go:build compat

package compat

import (
	"strconv"
	"strings"
	"testing"
	"time"
)

// lockQuiet is how long a waiting lock contender must stay waiting, after the holder's
// session is back, for the test to say the lock was kept.
const lockQuiet = time.Second

// ensembleCurator: Curator's LeaderLatch and InterProcessMutex with each participant's
// session pinned to a member (curator/EnsembleRecipes.java), through member kills.
func ensembleCurator(t *testing.T, e *Ensemble, cp string) string {
	tr := &transcript{}
	j := startAgent(t, "EnsembleRecipes", "java", "-Xss512k", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", "-cp", cp, "EnsembleRecipes")
	ensembleLatch(t, e, j, tr)
	ensembleMutex(t, e, j, tr)
	tr.printf("most at once: %s", j.call(t, "max"))
	j.call(t, "quit")
	return tr.String()
}

// pin starts a latch or lock participant on a session that starts on m, checks (with
// cons) that it did, and returns its session id.
func pin(t *testing.T, e *Ensemble, j *agent, tr *transcript, kind, id, path string, m, leader *Member) string {
	t.Helper()
	session := strings.TrimPrefix(j.call(t, "%s %s %s %s", kind, id, path, ConnectString(e.Pinned(m)...)), "session=")
	sid, err := strconv.ParseUint(strings.TrimPrefix(session, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("%s %s: session %q: %v", kind, id, session, err)
	}
	if got := e.SessionMember(t, int64(sid)); got != m {
		t.Fatalf("%s %s: session on member %d, want %d", kind, id, got.ID, m.ID)
	}
	tr.printf("%s %s on the %s", kind, id, RoleOf(m, leader))
	return session
}

// curatorEvents returns the agent's events from index from on that concern ids, sorted:
// Curator notifies connection-state listeners and latch listeners on different threads,
// so their relative order is not fixed.
func curatorEvents(j *agent, from int, ids ...string) string {
	var out []string
	for _, ev := range j.eventsSince(from) {
		f := strings.Fields(ev)
		if len(f) >= 2 && containsString(ids, f[len(f)-1]) || len(f) >= 3 && containsString(ids, f[1]) {
			out = append(out, ev)
		}
	}
	return strings.Join(sortedCopy(out), ", ")
}

// waitLatchSettled polls "leaders" (bounded) until exactly one participant holds
// leadership, it is Curator's getLeader and the first of n participants, and returns
// the reply.
func waitLatchSettled(t *testing.T, j *agent, n int) string {
	t.Helper()
	end := time.Now().Add(failoverDeadline)
	for {
		reply := j.call(t, "leaders")
		f := strings.Fields(reply) // holding=a leader=a queue=a,b,c
		if len(f) == 3 {
			holding := strings.TrimPrefix(f[0], "holding=")
			leader := strings.TrimPrefix(f[1], "leader=")
			queue := strings.Split(strings.TrimPrefix(f[2], "queue="), ",")
			if !strings.Contains(holding, ",") && holding != "-" && holding == leader && len(queue) == n && queue[0] == leader {
				return reply
			}
		}
		if time.Now().After(end) {
			t.Fatalf("latch not settled within %v: %s", failoverDeadline, reply)
		}
		time.Sleep(pollInterval)
	}
}

// ensembleLatch: three LeaderLatch participants, p0 on a follower (first in the queue),
// p1 on the other follower, p2 on the leader. p0's member is killed: p0 is deposed when
// its connection is suspended and, its session and node kept, leads again once
// reconnected elsewhere (Curator 5.4 checks its node on RECONNECTED). Then the ensemble
// leader is killed: whoever leads afterwards, exactly one does, first in the queue.
// Finally the latch leader leaves and leadership passes to the next in the queue.
func ensembleLatch(t *testing.T, e *Ensemble, j *agent, tr *transcript) {
	const path = "/ens-curator/latch"
	leader, followers := e.Roles(t)
	f1, f2 := followers[0], followers[1]
	ids := []string{"p0", "p1", "p2"}
	for i, m := range []*Member{f1, f2, leader} {
		pin(t, e, j, tr, "latch", ids[i], path, m, leader)
	}
	j.waitEvent(t, 0, "elected p0")
	tr.printf("latch: %s", waitLatchSettled(t, j, 3))
	sessions := j.call(t, "sessions")

	mark := j.mark()
	e.Kill(t, f1)
	e.WaitRoles(t, e.Others(f1), failoverDeadline)
	j.waitEvent(t, j.waitEvent(t, mark, "conn p0 RECONNECTED"), "elected p0")
	settled := waitLatchSettled(t, j, 3)
	tr.printf("latch holder's member killed: %s; %s", curatorEvents(j, mark, ids...), settled)
	e.Start(t, f1)
	e.WaitRoles(t, e.Members, failoverDeadline)

	mark = j.mark()
	e.Kill(t, leader)
	e.WaitRoles(t, e.Others(leader), failoverDeadline)
	settled = waitLatchSettled(t, j, 3)
	t.Logf("ensemble leader %d killed: latch events %s; %s", leader.ID, curatorEvents(j, mark, ids...), settled)
	tr.printf("ensemble leader killed: one latch leader, first of 3 in the queue")
	e.Start(t, leader)
	e.WaitRoles(t, e.Members, failoverDeadline)
	tr.printf("latch sessions kept: %v", j.call(t, "sessions") == sessions)

	f := strings.Fields(settled) // holding=a leader=a queue=a,b,c
	queue := strings.Split(strings.TrimPrefix(f[2], "queue="), ",")
	mark = j.mark()
	j.call(t, "close %s", queue[0])
	j.waitEvent(t, mark, "elected "+queue[1])
	t.Logf("latch leader %s closed: %s", queue[0], waitLatchSettled(t, j, 2))
	tr.printf("latch leader closed: the next in the queue leads, alone")
}

// ensembleMutex: three InterProcessMutex contenders, h0 on a follower holding the lock,
// h1 (on the other follower) waiting. h0's member is killed: h0's session moves on and
// keeps the lock, h1 keeps waiting, and gets it when h0 releases. Then h2 (on the
// leader) waits behind h1 and the leader is killed: h1 keeps the lock, h2 keeps
// waiting and gets it when h1 releases.
func ensembleMutex(t *testing.T, e *Ensemble, j *agent, tr *transcript) {
	const path = "/ens-curator/lock"
	leader, followers := e.Roles(t)
	f1, f2 := followers[0], followers[1]
	ids := []string{"h0", "h1", "h2"}
	for i, m := range []*Member{f1, f2, leader} {
		pin(t, e, j, tr, "lock", ids[i], path, m, leader)
	}
	sessions := j.call(t, "sessions")

	mark := j.mark()
	j.call(t, "acquire h0")
	j.waitEvent(t, mark, "acquired h0")
	j.call(t, "acquire h1")
	e.Kill(t, f1)
	e.WaitRoles(t, e.Others(f1), failoverDeadline)
	j.waitEvent(t, mark, "conn h0 RECONNECTED")
	time.Sleep(lockQuiet)
	tr.printf("lock holder's member killed: %s; %s", curatorEvents(j, mark, ids...), j.call(t, "holders"))
	j.call(t, "release h0")
	j.waitEvent(t, mark, "acquired h1")
	tr.printf("h0 released: %s", j.call(t, "holders"))
	e.Start(t, f1)
	e.WaitRoles(t, e.Members, failoverDeadline)

	mark = j.mark()
	j.call(t, "acquire h2")
	e.Kill(t, leader)
	e.WaitRoles(t, e.Others(leader), failoverDeadline)
	waitCuratorConnected(t, j, "h1", "h2")
	time.Sleep(lockQuiet)
	t.Logf("ensemble leader %d killed: events %s", leader.ID, curatorEvents(j, mark, ids...))
	tr.printf("ensemble leader killed: h2 acquired=%v; %s", containsString(j.eventsSince(mark), "acquired h2"), j.call(t, "holders"))
	j.call(t, "release h1")
	j.waitEvent(t, mark, "acquired h2")
	tr.printf("h1 released: %s", j.call(t, "holders"))
	j.call(t, "release h2")
	e.Start(t, leader)
	e.WaitRoles(t, e.Members, failoverDeadline)
	tr.printf("lock sessions kept: %v", j.call(t, "sessions") == sessions)
}

// waitCuratorConnected polls (bounded) until the sessions of ids are connected.
func waitCuratorConnected(t *testing.T, j *agent, ids ...string) {
	t.Helper()
	end := time.Now().Add(failoverDeadline)
	for _, id := range ids {
		for j.call(t, "connected %s", id) != "true" {
			if time.Now().After(end) {
				t.Fatalf("Curator session %s not connected within %v", id, failoverDeadline)
			}
			time.Sleep(pollInterval)
		}
	}
}
