package ensemble

import (
	"context"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

const (
	writers       = 4
	ephemeralPath = rootPath + "/owned"
	// pauseFor is how long a paused leader stays stopped: five times the
	// longest election timeout.
	pauseFor = 5 * electionTimeout
	// noQuorumFor is how long scenario d watches 2 of 5 members for a
	// write acknowledged without a quorum.
	noQuorumFor = 1500 * time.Millisecond
	seedEnv     = "WARDEN_ENSEMBLE_SEED"
)

// baseSeed is WARDEN_ENSEMBLE_SEED, or the clock; each test derives its
// own stream from it and its name, so one seed replays any test alone.
var baseSeed = sync.OnceValues(func() (uint64, error) {
	if s := os.Getenv(seedEnv); s != "" {
		return strconv.ParseUint(s, 10, 64)
	}
	return uint64(time.Now().UnixNano()), nil
})

// scenario is one test's ensemble with writers running on it, a session
// that owns an ephemeral node for the whole test, and a checker.
type scenario struct {
	t     *testing.T
	rng   *rand.Rand
	e     *ensemble
	load  *load
	ck    *checker
	owner *client.Conn
	// sessions are the owner's and the writers' sessions: each owns an
	// ephemeral node and must live through the scenario.
	sessions []*session
	begin    time.Time
}

// newScenario starts n members, the ephemeral's owner and the writers,
// with sessions of sessionTimeout.
func newScenario(t *testing.T, n int) *scenario {
	t.Helper()
	return newScenarioSessions(t, n, sessionTimeout)
}

// newScenarioSessions is newScenario with the timeout the owner's and the
// writers' sessions ask for.
func newScenarioSessions(t *testing.T, n int, timeout time.Duration) *scenario {
	t.Helper()
	return newScenarioWith(t, ensembleOptions{n: n}, timeout)
}

// newScenarioWith is newScenarioSessions with the ensemble's options; a
// zero snapCount is chosen at random.
func newScenarioWith(t *testing.T, opts ensembleOptions, timeout time.Duration) *scenario {
	t.Helper()
	seed, err := baseSeed()
	if err != nil {
		t.Fatalf("%s: %v", seedEnv, err)
	}
	t.Logf("seed %d (%s=%d go test -run '^%s$' ./test/ensemble/ replays the fault choices)", seed, seedEnv, seed, t.Name())
	name := fnv.New64a()
	name.Write([]byte(t.Name()))
	s := &scenario{t: t, rng: rand.New(rand.NewPCG(seed, name.Sum64())), begin: time.Now()}
	// A small snapCount makes members snapshot and compact under fault,
	// so a returning member may be caught up by a streamed snapshot.
	if opts.snapCount == 0 {
		opts.snapCount = []int{64, 100_000}[s.rng.IntN(2)]
	}
	s.e = startEnsembleWith(t, opts)
	s.step("%d members serving (snapCount=%d)", opts.n, opts.snapCount)

	s.owner = connectWith(t, s.e.connect, "owner", timeout, s.e.clientOptions()...)
	s.sessions = []*session{watchSession(s.owner, "owner", ephemeralPath)}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	if _, err := s.owner.Create(ctx, rootPath, nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatalf("create %s: %v", rootPath, err)
	}
	if _, err := s.owner.Create(ctx, ephemeralPath, []byte("owned"), client.Ephemeral, client.OpenACL); err != nil {
		t.Fatalf("create %s: %v", ephemeralPath, err)
	}
	s.load = startLoad(t, s.e, s.rng, writers, timeout)
	s.sessions = append(s.sessions, s.load.sessions...)
	s.ck = newChecker(t, s.load.h)
	// Registered last, run first: a failed test cuts the writers' requests
	// and kills every member, so no client waits on a stopped member.
	t.Cleanup(func() {
		if t.Failed() {
			s.load.abort()
			all := s.e.all()
			for _, m := range all {
				m.SignalKill()
			}
			for _, m := range all {
				m.Reap(t)
			}
		}
	})
	return s
}

// step logs what the scenario does, with the time since it began.
func (s *scenario) step(format string, args ...any) {
	s.t.Helper()
	s.t.Logf("[%6.3fs] %s", time.Since(s.begin).Seconds(), fmt.Sprintf(format, args...))
}

// writesContinue waits for a random number of acknowledged writes sent
// after since, and returns the first of them to be acknowledged. The
// number is the length of a fault window: enough writes that a member
// away for it may have to be caught up by snapshot when snapCount is small.
func (s *scenario) writesContinue(since time.Time) write {
	s.t.Helper()
	n := 60 + s.rng.IntN(300)
	acks := s.load.h.waitAcks(s.t, n, since)
	first := slices.MinFunc(acks, func(a, b write) int { return a.end.Compare(b.end) })
	s.step("%d writes sent after %s acknowledged, the first %v after it", n, since.Format("15:04:05.000"), first.end.Sub(since).Round(time.Millisecond))
	return first
}

// probe creates nodes under prefix from a new session on ms only until
// one create is acknowledged (an unknown outcome tries the next name);
// the writes join the history, so the checks cover them.
func (s *scenario) probe(prefix string, ms []*member) {
	s.t.Helper()
	var addrs []string
	for _, m := range ms {
		addrs = append(addrs, m.Addr)
	}
	c := connect(s.t, strings.Join(addrs, ","), "probe")
	defer c.Close()
	deadline := time.Now().Add(ackDeadline)
	for try := 0; ; try++ {
		path := fmt.Sprintf("%s-%d", prefix, try)
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		w := s.load.h.begin(path, 1, true)
		_, st, err := c.CreateStat(ctx, path, []byte("1"), client.Persistent, client.OpenACL)
		cancel()
		switch {
		case err == nil:
			s.load.h.finish(w, acked, st.Version)
			s.step("create %s acknowledged by %v, %v after it was sent", path, ms, w.end.Sub(w.start).Round(time.Millisecond))
			return
		case isUnknown(err) && time.Now().Before(deadline):
			s.load.h.finish(w, unknown, 0)
			s.step("create %s on %v: %v; trying again", path, ms, err)
		default:
			s.load.h.finish(w, unknown, 0)
			s.t.Fatalf("no create acknowledged by %v within %v: create %s: %v", ms, ackDeadline, path, err)
		}
	}
}

// zxidOf returns the zxid m reports.
func (s *scenario) zxidOf(m *member) uint64 {
	s.t.Helper()
	var zxid uint64
	s.e.waitFor(fmt.Sprintf("%v serving and telling its zxid", m), electDeadline, func() (bool, string) {
		st, err := m.status()
		if err != nil {
			return false, err.Error()
		}
		zxid = st.zxid
		return st.serving, st.String()
	})
	return zxid
}

// rejoin restarts m, waits until it serves as a follower and reaches the
// zxid the leader had when it restarted, and checks it. The first mode it
// serves in must be follower: a leader is in place, and raft's pre-vote
// keeps a returning member from disturbing it.
func (s *scenario) rejoin(m *member) {
	s.t.Helper()
	zxid := s.zxidOf(s.e.waitLeader())
	ready := m.Start(s.t)
	seen := s.e.waitMode(m, "follower")
	for _, st := range seen {
		if st.serving {
			if st.mode != "follower" {
				s.t.Errorf("%v restarted: it served as %s first (statuses seen: %v), want follower under the running leader", m, st.mode, seen)
			}
			break
		}
	}
	caught := s.e.waitCaughtUp(m, zxid)
	s.step("%v restarted: listening after %v, statuses %v, reached the leader's zxid %#x %v after",
		m, ready.Round(time.Millisecond), seen, zxid, caught.Round(time.Millisecond))
	s.ck.check(m, false)
}

// finish heals the ensemble, stops the writers, waits until every member
// serves at the same zxid, and checks every member, one at a time, against
// the history; then the ephemeral of the owner's session, on each.
func (s *scenario) finish() {
	t := s.t
	t.Helper()
	s.e.heal()
	s.step("healed: every member serving")
	stopping := time.Now()
	s.load.stop()
	s.step("writers stopped in %v; the slowest writes: %v", time.Since(stopping).Round(time.Millisecond), s.load.h.slowest(3))
	zxid, desc := s.e.waitSameZxid()
	s.step("every member at zxid %#x: %s", zxid, desc)
	for _, p := range s.load.h.problemList() {
		t.Errorf("writer saw: %s", p)
	}

	var first map[string]node
	for _, m := range s.e.members {
		shown := s.ck.check(m, true)
		if first == nil {
			first = shown
			continue
		}
		for p, n := range shown {
			if n != first[p] {
				t.Errorf("%v shows %s as %v, %v as %v, at the same zxid %#x", m, p, n, s.e.members[0], first[p], zxid)
			}
		}
	}

	disconnects := 0
	for _, sess := range s.sessions {
		s.checkSession(sess)
		disconnects += sess.count(client.StateDisconnected)
	}
	n := s.load.h.counts()
	s.step("checked %d keys on each of %d members: %d writes acknowledged, %d unknown outcome, %d refused; "+
		"%d sessions alive, each owning its ephemeral on every member, after %d disconnections; writers retried after %v",
		len(first), len(s.e.members), n[acked], n[unknown], n[refused], len(s.sessions), disconnects, s.load.h.retries())
}

// checkSession checks that sess lived through the scenario: it never
// reported StateExpired, it is connected, and it still owns its ephemeral
// node, as it sees it and on every member.
func (s *scenario) checkSession(sess *session) {
	t := s.t
	t.Helper()
	id := sess.c.SessionID()
	if n := sess.count(client.StateExpired); n > 0 {
		t.Fatalf("%s: session %#x expired (states seen: %v)", sess.name, id, sess.states())
	}
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	st, ok, err := sess.c.Exists(ctx, sess.ephemeral)
	switch {
	case err != nil:
		t.Fatalf("%s, session %#x: exists %s: %v (states seen: %v)", sess.name, id, sess.ephemeral, err, sess.states())
	case !ok:
		t.Fatalf("%s: the ephemeral %s of session %#x, which survived the scenario, is gone", sess.name, sess.ephemeral, id)
	case st.EphemeralOwner != id:
		t.Fatalf("%s: %s is owned by %#x, want the surviving session %#x", sess.name, sess.ephemeral, st.EphemeralOwner, id)
	}
	for _, m := range s.e.members {
		checkEphemeral(t, m, sess.ephemeral, id)
	}
}

// a. Three members: the leader is killed with SIGKILL; the two others elect
// a new leader and the writers carry on; the old leader restarts on its
// data directory, rejoins as a follower and catches up. Twice.
func TestThreeMembersLeaderKilled(t *testing.T) {
	s := newScenario(t, 3)
	s.writesContinue(s.begin)
	for round := 1; round <= 2; round++ {
		leader := s.e.waitLeader()
		killedAt := time.Now()
		leader.Kill9(t)
		s.step("round %d: kill -9 leader %v", round, leader)
		newLeader, elected := s.e.waitNewLeader(s.e.others(leader))
		s.step("%v leads, seen %v after the kill", newLeader, elected.Round(time.Millisecond))
		first := s.writesContinue(killedAt)
		t.Logf("round %d: client-side failover (kill -9 of the leader → first acknowledged write sent after it): %v; %v was seen leading after %v",
			round, first.end.Sub(killedAt).Round(time.Millisecond), newLeader, elected.Round(time.Millisecond))
		s.rejoin(leader)
		s.writesContinue(time.Now())
	}
	s.finish()
}

// b. Three members: a follower is killed with SIGKILL; the two others keep
// serving; it restarts, rejoins as a follower and catches up. Twice.
func TestThreeMembersFollowerKilled(t *testing.T) {
	s := newScenario(t, 3)
	s.writesContinue(s.begin)
	for round := 1; round <= 2; round++ {
		leader := s.e.waitLeader()
		followers := s.e.others(leader)
		f := followers[s.rng.IntN(len(followers))]
		killedAt := time.Now()
		f.Kill9(t)
		s.step("round %d: kill -9 follower %v (leader %v)", round, f, leader)
		s.writesContinue(killedAt)
		s.rejoin(f)
		s.writesContinue(time.Now())
	}
	s.finish()
}

// c. Three members: the leader is stopped with SIGSTOP for longer than the
// election timeout; the two others elect a new leader meanwhile and
// acknowledge writes; on SIGCONT the old leader learns of the newer term,
// steps down and rejoins as a follower. Twice.
func TestThreeMembersLeaderPaused(t *testing.T) {
	s := newScenario(t, 3)
	s.writesContinue(s.begin)
	for round := 1; round <= 2; round++ {
		leader := s.e.waitLeader()
		pausedAt := time.Now()
		leader.Pause(t)
		s.step("round %d: SIGSTOP leader %v", round, leader)
		newLeader, elected := s.e.waitNewLeader(s.e.others(leader))
		s.step("%v leads, seen %v after the pause", newLeader, elected.Round(time.Millisecond))
		// The writers may be stuck on the stopped member (a connection it
		// no longer answers, or a handshake the client gives up on only
		// after sessionTimeout/3): a client on the two others must get its
		// writes through.
		s.probe(fmt.Sprintf("%s/probe%d", rootPath, round), s.e.others(leader))
		// The pause is the fault itself, not a wait for something: hold it.
		if left := pauseFor - time.Since(pausedAt); left > 0 {
			time.Sleep(left)
		}
		zxid := s.zxidOf(s.e.waitLeader())
		s.step("%d writes acknowledged while %v is stopped", len(s.load.h.ackedSince(pausedAt)), leader)
		leader.Resume(t)
		s.step("SIGCONT %v after %v stopped", leader, time.Since(pausedAt).Round(time.Millisecond))
		// It may say leader for a moment after SIGCONT, until a message of
		// the newer term reaches it; then it must step down and follow.
		seen := s.e.waitMode(leader, "follower")
		caught := s.e.waitCaughtUp(leader, zxid)
		s.step("%v resumed: statuses %v, reached zxid %#x %v after", leader, seen, zxid, caught.Round(time.Millisecond))
		s.ck.check(leader, false)
		s.writesContinue(time.Now())
	}
	s.finish()
}

// d. Five members: two followers are killed at once and the three others
// keep serving; then the leader is killed too, leaving 2 of 5: no member
// serves and no write sent from then on is acknowledged; the three restart
// and service resumes.
func TestFiveMembersLoseAndRegainQuorum(t *testing.T) {
	s := newScenario(t, 5)
	s.writesContinue(s.begin)
	leader := s.e.waitLeader()
	followers := s.e.others(leader)
	perm := s.rng.Perm(len(followers))
	killed := []*member{followers[perm[0]], followers[perm[1]]}
	killedAt := time.Now()
	for _, m := range killed {
		m.SignalKill()
	}
	for _, m := range killed {
		m.Reap(t)
	}
	s.step("kill -9 followers %v and %v at once (leader %v)", killed[0], killed[1], leader)
	s.writesContinue(killedAt)

	leader = s.e.waitLeader()
	leader.Kill9(t)
	lostAt := time.Now() // the third member is reaped: from now on no quorum
	killed = append(killed, leader)
	survivors := s.e.live()
	s.step("kill -9 leader %v: %v and %v left", leader, survivors[0], survivors[1])
	took := s.e.waitNotServing(survivors)
	s.step("no survivor serving %v after the kill", took.Round(time.Millisecond))
	// Watch the survivors for the rest of the window: without a quorum
	// none may serve again.
watch:
	for time.Since(lostAt) < noQuorumFor {
		sts, desc := s.e.statuses(survivors)
		for _, st := range sts {
			if st.serving {
				t.Errorf("%v after the quorum was lost, a member serves without one: %s", time.Since(lostAt).Round(time.Millisecond), desc)
				break watch
			}
		}
		time.Sleep(pollInterval)
	}
	returnAt := time.Now()
	attempted := s.load.h.matching(func(w *write) bool { return w.start.After(lostAt) && w.start.Before(returnAt) })
	bad := s.load.h.matching(func(w *write) bool {
		return w.outcome == acked && w.start.After(lostAt) && w.end.Before(returnAt)
	})
	s.step("%v without a quorum: %d writes sent, %d acknowledged", returnAt.Sub(lostAt).Round(time.Millisecond), len(attempted), len(bad))
	for _, w := range bad {
		t.Errorf("%v: sent %v and acknowledged %v after the quorum was lost (2 of 5 members running)",
			w, w.start.Sub(lostAt).Round(time.Millisecond), w.end.Sub(lostAt).Round(time.Millisecond))
	}

	for _, m := range killed {
		m.Start(t)
	}
	leader = s.e.waitLeader()
	s.step("%v, %v and %v restarted: %v leads, every member serving %v after the first restart",
		killed[0], killed[1], killed[2], leader, time.Since(returnAt).Round(time.Millisecond))
	s.writesContinue(returnAt)
	for _, m := range killed {
		s.ck.check(m, false)
	}
	s.finish()
}
