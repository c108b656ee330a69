package ensemble

import (
	"fmt"
	"math/rand/v2"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/test/proc"
)

// The members' timing. With tickTime=200 a raft tick is 10 ms and the
// election timeout 2×syncLimit = 10 ticks (randomised up to 20): 100–200 ms.
const (
	tickTime          = 200
	initLimit         = 10
	syncLimit         = 5
	maxSessionTimeout = 30 * time.Second // above the default 20×tickTime = 4 s, so sessions outlive a lost quorum
	electionTimeout   = 200 * time.Millisecond

	clientPort   = 2181
	quorumPort   = 2888
	electionPort = 3888
)

// logsEnv, when set, prints every member's log at the end of each test,
// not only of failed ones.
const logsEnv = "WARDEN_ENSEMBLE_LOGS"

// Bounds of the ensemble waits.
const (
	electDeadline   = 10 * time.Second // a fault → a leader (or every member serving)
	catchUpDeadline = 20 * time.Second // a restarted member → the leader's zxid
)

// ensemble is n members started from zoo.cfg files naming each other. It
// belongs to one test and is used from its goroutine only.
type ensemble struct {
	t    *testing.T
	opts ensembleOptions
	bin  string
	// members are the members of the ensemble's current configuration, in
	// the order they were added (ids 1..n at the start). A member a
	// reconfig removed moves to retired; its process may still run.
	members []*member
	retired []*member
	hosts   []string // the subnet's addresses: hosts[i] is 127.a.b.(11+i), for member i+1
	connect string   // the first members' client addresses: the clients' connect string
	// movedClientPorts holds the client port of a member a reconfig moved
	// off clientPort, by id.
	movedClientPorts map[int]int
}

// ensembleOptions vary an ensemble from the plain one.
type ensembleOptions struct {
	n         int // members started
	snapCount int
	// reconfig starts the members with reconfigEnabled=true and the super
	// user (superDigest) that reconfig needs.
	reconfig bool
	// spare is how many more addresses of the subnet must be free, for
	// members added later (ids n+1..n+spare).
	spare int
}

// superAuth is the super user's digest credentials of a reconfig ensemble.
const superAuth = "super:reconfig-test"

// startEnsembleWith starts opts.n members and waits until one leads and
// all serve. Every process is killed and reaped in t.Cleanup, and every
// member's log printed if the test failed.
func startEnsembleWith(t *testing.T, opts ensembleOptions) *ensemble {
	t.Helper()
	e := &ensemble{t: t, opts: opts, bin: proc.Warden(t)}
	e.hosts = freeSubnet(t, opts.n+opts.spare)
	var servers, addrs []string
	for id := 1; id <= opts.n; id++ {
		servers = append(servers, e.serverLine(id, false))
		addrs = append(addrs, net.JoinHostPort(e.hosts[id-1], fmt.Sprint(clientPort)))
	}
	e.connect = strings.Join(addrs, ",")
	for id := 1; id <= opts.n; id++ {
		e.members = append(e.members, e.newMember(id, false, servers))
	}
	t.Cleanup(func() {
		all := e.all()
		for _, m := range all {
			m.SignalKill()
		}
		for _, m := range all {
			m.Reap(t)
		}
		if t.Failed() || os.Getenv(logsEnv) != "" {
			for _, m := range all {
				m.DumpLog(t)
			}
		}
	})
	for _, m := range e.members {
		m.Start(t)
	}
	e.waitLeader()
	return e
}

// serverLine is member id's server line, with its client address.
func (e *ensemble) serverLine(id int, observer bool) string {
	role := "participant"
	if observer {
		role = "observer"
	}
	host := e.hosts[id-1]
	port := clientPort
	if p, ok := e.movedClientPorts[id]; ok {
		port = p
	}
	return fmt.Sprintf("server.%d=%s:%d:%d:%s;%s:%d", id, host, quorumPort, electionPort, role, host, port)
}

// newMember writes the data directory, myid and zoo.cfg of member id,
// whose zoo.cfg lists servers (its own line among them), without
// starting it.
func (e *ensemble) newMember(id int, observer bool, servers []string) *member {
	t := e.t
	t.Helper()
	dir := t.TempDir()
	m := &member{
		Server: proc.Server{
			Name:   fmt.Sprintf("server.%d", id),
			Bin:    e.bin,
			Config: filepath.Join(dir, "zoo.cfg"),
			Log:    filepath.Join(dir, "server.log"),
			Addr:   net.JoinHostPort(e.hosts[id-1], fmt.Sprint(clientPort)),
		},
		id:       id,
		host:     e.hosts[id-1],
		dataDir:  filepath.Join(dir, "data"),
		observer: observer,
	}
	cfg := fmt.Sprintf("tickTime=%d\ninitLimit=%d\nsyncLimit=%d\nmaxSessionTimeout=%d\nsnapCount=%d\n"+
		"dataDir=%s\nclientPortAddress=%s\nclientPort=%d\nadmin.enableServer=false\n",
		tickTime, initLimit, syncLimit, maxSessionTimeout.Milliseconds(), e.opts.snapCount,
		m.dataDir, m.host, clientPort)
	if e.opts.reconfig {
		cfg += fmt.Sprintf("reconfigEnabled=true\nstandaloneEnabled=false\nDigestAuthenticationProvider.superDigest=%s\n", auth.DigestID(superAuth))
	}
	cfg += strings.Join(servers, "\n") + "\n"
	if err := os.MkdirAll(m.dataDir, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(m.dataDir, "myid"), []byte(fmt.Sprintf("%d\n", id)), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(m.Config, []byte(cfg), 0o644); err != nil {
		t.Fatal(err)
	}
	return m
}

// clientOptions are the options of the scenario's long-lived clients: in
// a reconfig ensemble they follow the membership, as a ZooKeeper
// application with Curator's EnsembleTracker does.
func (e *ensemble) clientOptions() []client.Option {
	if e.opts.reconfig {
		return []client.Option{client.WithEnsembleTracking()}
	}
	return nil
}

// all returns the members and the retired members.
func (e *ensemble) all() []*member { return append(slices.Clone(e.members), e.retired...) }

// freeSubnet picks a random 127.a.b.0/24 where n members can listen on
// 127.a.b.(10+id) at the client and quorum ports. The ports are below
// Linux's ephemeral range, so no outgoing connection takes them while a
// member is down; 127.0.0.0/24, where people run things by hand, is
// skipped.
func freeSubnet(t *testing.T, n int) []string {
	t.Helper()
	for try := 0; try < 50; try++ {
		a, b := 1+rand.IntN(254), rand.IntN(256)
		hosts := make([]string, n)
		free := true
		for i := range hosts {
			hosts[i] = fmt.Sprintf("127.%d.%d.%d", a, b, 11+i)
			for _, port := range []int{clientPort, quorumPort} {
				l, err := net.Listen("tcp", net.JoinHostPort(hosts[i], fmt.Sprint(port)))
				if err != nil {
					free = false
					break
				}
				l.Close()
			}
		}
		if free {
			t.Logf("ensemble of %d on %s..%s", n, hosts[0], hosts[n-1])
			return hosts
		}
	}
	t.Fatalf("no 127.a.b.0/24 with %d free members found in 50 tries (is 127.0.0.0/8 routed to lo?)", n)
	return nil
}

// live returns the members that are running and not paused.
func (e *ensemble) live() []*member {
	var ms []*member
	for _, m := range e.members {
		if m.live() {
			ms = append(ms, m)
		}
	}
	return ms
}

// statuses asks each of ms for srvr; a member that does not answer is
// reported as not serving, with its error in the description.
func (e *ensemble) statuses(ms []*member) ([]memberStatus, string) {
	sts := make([]memberStatus, len(ms))
	desc := make([]string, len(ms))
	for i, m := range ms {
		st, err := m.status()
		sts[i] = st
		if err != nil {
			desc[i] = fmt.Sprintf("%v: %v", m, err)
		} else {
			desc[i] = fmt.Sprintf("%v: %v", m, st)
		}
	}
	return sts, strings.Join(desc, "; ")
}

// waitFor polls cond until it holds, failing the test after d with what
// cond last described.
func (e *ensemble) waitFor(what string, d time.Duration, cond func() (bool, string)) time.Duration {
	e.t.Helper()
	begin := time.Now()
	deadline := begin.Add(d)
	for {
		ok, desc := cond()
		if ok {
			return time.Since(begin)
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("%s: not within %v; last seen: %s", what, d, desc)
		}
		time.Sleep(pollInterval)
	}
}

// waitLeader waits until every live member serves and exactly one of
// them leads, and returns the leader.
func (e *ensemble) waitLeader() *member {
	e.t.Helper()
	var leader *member
	e.waitFor("one leader, every live member serving", electDeadline, func() (bool, string) {
		ms := e.live()
		sts, desc := e.statuses(ms)
		leader = nil
		leaders := 0
		for i, st := range sts {
			if !st.serving {
				return false, desc
			}
			if st.mode == "leader" {
				leader = ms[i]
				leaders++
			}
		}
		return leaders == 1, desc
	})
	return leader
}

// waitNewLeader waits until exactly one of ms leads, and returns it.
// Members of ms that do not answer (without a leader, or still starting)
// are allowed: this is the moment a quorum elected someone, seen from
// the members that can say so.
func (e *ensemble) waitNewLeader(ms []*member) (*member, time.Duration) {
	e.t.Helper()
	var leader *member
	took := e.waitFor("a leader among the survivors", electDeadline, func() (bool, string) {
		sts, desc := e.statuses(ms)
		leader = nil
		leaders := 0
		for i, st := range sts {
			if st.serving && st.mode == "leader" {
				leader = ms[i]
				leaders++
			}
		}
		return leaders == 1, desc
	})
	return leader, took
}

// waitMode waits until m serves in the given mode and returns every
// distinct status it reported on the way (the first serving one tells how
// it rejoined).
func (e *ensemble) waitMode(m *member, mode string) []memberStatus {
	e.t.Helper()
	var seen []memberStatus
	e.waitFor(fmt.Sprintf("%v serving as %s", m, mode), electDeadline, func() (bool, string) {
		st, err := m.status()
		if err != nil {
			return false, err.Error()
		}
		if len(seen) == 0 || seen[len(seen)-1].serving != st.serving || seen[len(seen)-1].mode != st.mode {
			seen = append(seen, st)
		}
		return st.serving && st.mode == mode, st.String()
	})
	return seen
}

// waitNotServing waits until none of ms serves.
func (e *ensemble) waitNotServing(ms []*member) time.Duration {
	e.t.Helper()
	return e.waitFor("no survivor serving", electDeadline, func() (bool, string) {
		sts, desc := e.statuses(ms)
		for _, st := range sts {
			if st.serving {
				return false, desc
			}
		}
		return true, desc
	})
}

// waitCaughtUp waits until m serves at a zxid at least zxid.
func (e *ensemble) waitCaughtUp(m *member, zxid uint64) time.Duration {
	e.t.Helper()
	return e.waitFor(fmt.Sprintf("%v at zxid %#x or later", m, zxid), catchUpDeadline, func() (bool, string) {
		st, err := m.status()
		if err != nil {
			return false, err.Error()
		}
		return st.serving && st.zxid >= zxid, st.String()
	})
}

// waitSameZxid waits until every member runs and serves at the same zxid,
// one as leader and the others as followers (or observers, for the
// members that are); it returns that zxid and the statuses.
func (e *ensemble) waitSameZxid() (uint64, string) {
	e.t.Helper()
	var (
		zxid uint64
		last string
	)
	e.waitFor("every member serving at the same zxid, one leader and the others followers", catchUpDeadline, func() (bool, string) {
		sts, desc := e.statuses(e.members)
		last = desc
		leaders := 0
		for i, st := range sts {
			if !st.serving || st.zxid != sts[0].zxid {
				return false, desc
			}
			switch {
			case st.mode == "leader":
				leaders++
			case st.mode == "follower" && !e.members[i].observer:
			case st.mode == "observer" && e.members[i].observer:
			default:
				return false, desc
			}
		}
		zxid = sts[0].zxid
		return leaders == 1, desc
	})
	return zxid, last
}

// heal restarts every killed member and resumes every paused one, then
// waits until one leads and all serve.
func (e *ensemble) heal() {
	e.t.Helper()
	for _, m := range e.members {
		switch {
		case m.Paused():
			m.Resume(e.t)
		case !m.Running():
			m.Start(e.t)
		}
	}
	e.waitLeader()
}

// others returns the members other than the given ones.
func (e *ensemble) others(not ...*member) []*member {
	var ms []*member
outer:
	for _, m := range e.members {
		for _, n := range not {
			if m == n {
				continue outer
			}
		}
		ms = append(ms, m)
	}
	return ms
}
