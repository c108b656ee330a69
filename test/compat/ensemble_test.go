//go:build compat

package compat

import (
	"fmt"
	"io"
	"os/exec"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"
)

// TestEnsemble runs the ensemble scenarios against a 3-member Apache ZooKeeper 3.8
// ensemble and a 3-member Warden ensemble (real processes, see ensemble_harness_test.go)
// and compares each scenario's normalised transcripts. Scenarios leave every member
// running, so they share one ensemble per implementation:
//
//	4lw      srvr modes and keys by role, mntr's quorum keys, conf member by member
//	config   zkCli `config -s` (/zookeeper/config and its stat) through each member
//	roles    a follower killed and restarted (the leader stays); quorum lost and regained
//	clients  go-zookeeper on the leader, kazoo on a follower: writes and watches across
//	         members; the leader killed during a stream of writes: sessions, ephemerals,
//	         watches and every acknowledged write survive
//	curator  Curator LeaderLatch and InterProcessMutex pinned to members: the latch
//	         holder's member killed (leadership dropped while suspended, taken back on
//	         reconnection), the lock holder's member killed (the lock stays), the leader
//	         killed (one latch leader, lock kept); leadership and lock passed on release
//	climt    the C client's shell with every member in its connect string: create and
//	         get, leader killed, get and create again on the same session
func TestEnsemble(t *testing.T) {
	cp := compileJava(t, "curator/EnsembleRecipes.java")
	differentialEnsemble(t, []ensembleScenario{
		{"4lw", ensembleFourLetterWords},
		{"config", ensembleConfigNode},
		{"roles", ensembleRoles},
		{"clients", ensembleClients},
		{"curator", func(t *testing.T, e *Ensemble) string { return ensembleCurator(t, e, cp) }},
		{"climt", ensembleCliMt},
	})
}

// mntrQuorumKeys are the mntr keys that describe a member's place in the ensemble
// (zookeeper-operations.md: quorum members and leader-only keys).
var mntrQuorumKeys = []string{
	"zk_server_state", "zk_peer_state", "zk_quorum_size", "zk_learners", "zk_synced_followers",
	"zk_synced_non_voting_followers", "zk_synced_observers", "zk_pending_syncs", "zk_followers",
}

// confPerRun are conf keys whose values are paths or sizes of the data directory.
var confPerRun = map[string]bool{"dataDir": true, "dataLogDir": true, "dataDirSize": true, "dataLogSize": true}

// ensembleFourLetterWords: what srvr, mntr and conf say about a healthy ensemble.
func ensembleFourLetterWords(t *testing.T, e *Ensemble) string {
	tr := &transcript{}
	leader, followers := e.Roles(t)
	tr.printf("modes=%s", sortedModes(e.Members))

	// srvr and mntr, by role: the keys srvr prints, mntr's quorum keys with their values.
	for _, m := range []*Member{leader, followers[0]} {
		role := RoleOf(m, leader)
		srvr := mustFourLetterWord(t, m, "srvr")
		tr.printf("== srvr %s\n%s", role, fourLetterShape("srvr", srvr))
		mntr := map[string]string{}
		for _, l := range strings.Split(mustFourLetterWord(t, m, "mntr"), "\n") {
			if k, v, ok := strings.Cut(l, "\t"); ok {
				mntr[k] = v
			}
		}
		for _, k := range mntrQuorumKeys {
			v, ok := mntr[k]
			if !ok {
				v = "<absent>"
			}
			tr.printf("mntr %s %s=%s", role, k, v)
		}
	}

	// conf, member by member (each names its client address in its own way, see Ensemble).
	for _, m := range e.Members {
		conf := mustFourLetterWord(t, m, "conf")
		tr.printf("== conf member %d", m.ID)
		for _, l := range strings.Split(strings.TrimRight(conf, "\n"), "\n") {
			if k, _, _ := strings.Cut(l, "="); !confPerRun[k] {
				tr.printf("%s", l)
			}
		}
		t.Logf("member %d conf ends with a newline: %v", m.ID, strings.HasSuffix(conf, "\n"))
	}
	return tr.String()
}

// ensembleConfigNode: /zookeeper/config and its stat, read with zkCli through each member
// (each names its client address in its own way, see Ensemble).
func ensembleConfigNode(t *testing.T, e *Ensemble) string {
	tr := &transcript{}
	for _, m := range e.Members {
		out, rc := runZkCli(t, m.Addr, "config", "-s")
		tr.printf("== zkCli config -s via member %d\n%src=%d", m.ID, out, rc)
	}
	return tr.String()
}

// ensembleRoles: how the roles move when members die and come back.
func ensembleRoles(t *testing.T, e *Ensemble) string {
	tr := &transcript{}
	leader, followers := e.Roles(t)
	tr.printf("modes=%s", sortedModes(e.Members))

	// A follower dies: the leader and the other follower carry on; back, it follows.
	f := followers[0]
	e.Kill(t, f)
	after := e.WaitRoles(t, e.Others(f), failoverDeadline)
	tr.printf("follower killed: others=%s leader-kept=%v killed=%s", sortedModes(e.Others(f)), after == leader, f.Mode())
	e.Start(t, f)
	after = e.WaitRoles(t, e.Members, failoverDeadline)
	tr.printf("follower restarted: modes=%s leader-kept=%v", sortedModes(e.Members), after == leader)

	// Both followers die: the leader has no quorum and stops serving; they return and
	// the ensemble elects again.
	for _, f := range followers {
		e.Kill(t, f)
	}
	e.WaitMode(t, leader, "not-serving", failoverDeadline)
	tr.printf("both followers killed: lone member srvr=%q", mustFourLetterWord(t, leader, "srvr"))
	for _, f := range followers {
		e.Start(t, f)
	}
	e.WaitRoles(t, e.Members, failoverDeadline)
	tr.printf("followers restarted: modes=%s", sortedModes(e.Members))
	return tr.String()
}

// sortedModes returns the srvr modes of ms, sorted, comma-separated.
func sortedModes(ms []*Member) string {
	m := modes(ms)
	sort.Strings(m)
	return strings.Join(m, ",")
}

// mustFourLetterWord sends a 4lw command to m; an error fails the test.
func mustFourLetterWord(t *testing.T, m *Member, cmd string) string {
	t.Helper()
	out, err := fourLetterWord(m.Addr, cmd, srvrTimeout)
	if err != nil {
		t.Fatalf("%s to member %d: %v", cmd, m.ID, err)
	}
	return out
}

// cliMtSessionEvent matches the C client's session event lines, which depend on which
// member it picked (it shuffles the connect string) and on when the members closed it;
// cliMtLog its own log lines (ZOO_ERROR@... on a refused connection).
var (
	cliMtSessionEvent = regexp.MustCompile(`(?m)^Watcher SESSION_EVENT state = \w+\n`)
	cliMtLog          = regexp.MustCompile(`(?m)^.*ZOO_(DEBUG|INFO|WARN|ERROR)@.*\n`)
)

// cliMtShell is a running cli_mt with every ensemble member in its connect string.
type cliMtShell struct {
	stdin   io.WriteCloser
	out     *syncBuffer
	exited  chan struct{} // closed when the process has exited
	waitErr error         // cmd.Wait's result, valid once exited is closed
}

// cliMtReply matches the whole reply to a create (rc line, then the name line when rc
// is 0) or a get (rc line, then "null" or the stat ending in ephemeralOwner).
func cliMtReply(cmd, path string) *regexp.Regexp {
	q := regexp.QuoteMeta(path)
	if cmd == "create" {
		return regexp.MustCompile(`\[` + q + `\]: rc = (?:(0)\n\tname = \S+|(-\d+))\n`)
	}
	return regexp.MustCompile(q + `: rc = (-?\d+)\n(?s:.*?)(?:null|ephemeralOwner = [0-9a-f]+)\n`)
}

// do sends "cmd path", waits (bounded) for its reply and returns the reply's rc and
// the output since the command with session events and client logs removed.
func (c *cliMtShell) do(t *testing.T, cmd, path string) (rc string, text string) {
	t.Helper()
	from := len(c.out.String())
	if _, err := io.WriteString(c.stdin, cmd+" "+path+"\n"); err != nil {
		t.Fatalf("cli_mt %s %s: %v", cmd, path, err)
	}
	re := cliMtReply(cmd, path)
	var m []int
	waitForFunc(t, c.out, eventDeadline, cmd+" "+path+" reply", func(s string) bool {
		m = re.FindStringSubmatchIndex(s[from:])
		return m != nil
	})
	all := c.out.String()[from:]
	text = cliMtLog.ReplaceAllString(cliMtSessionEvent.ReplaceAllString(all[:m[1]], ""), "")
	for g := 1; 2*g+1 < len(m); g++ { // the rc is the group that matched
		if m[2*g] >= 0 {
			rc = all[m[2*g]:m[2*g+1]]
		}
	}
	return rc, cliMtRewrite(text)
}

// ensembleCliMt: cli_mt with every member in its connect string survives the leader's
// kill on the same session. A request that meets the reconnection gets -4
// (ConnectionLoss) from the C client, as on ZooKeeper; the get is repeated until it
// succeeds, as a user would.
func ensembleCliMt(t *testing.T, e *Ensemble) string {
	leader, _ := e.Roles(t)
	cmd := exec.Command("stdbuf", "-oL", cliMtPath, "-h", ConnectString(e.Members...))
	c := &cliMtShell{out: newSyncBuffer(), exited: make(chan struct{})}
	cmd.Stdout = c.out
	cmd.Stderr = c.out
	var err error
	if c.stdin, err = cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		c.waitErr = cmd.Wait()
		close(c.exited)
	}()
	t.Cleanup(func() {
		select {
		case <-c.exited:
		default:
			_ = cmd.Process.Kill()
			<-c.exited
		}
	})
	c.out.waitFor(t, "Got a new session id", eventDeadline)
	sid := regexp.MustCompile(`Got a new session id: 0x([0-9a-f]+)`).FindStringSubmatch(c.out.String())
	var sessionID uint64
	fmt.Sscanf(sid[1], "%x", &sessionID)
	t.Logf("cli_mt connected to member %d (leader is %d)", e.SessionMember(t, int64(sessionID)).ID, leader.ID)

	var tr strings.Builder
	step := func(cmd, path string) {
		t.Helper()
		rc, text := c.do(t, cmd, path)
		fmt.Fprintf(&tr, "$ %s %s\n%s", cmd, path, text)
		if rc != "0" {
			t.Errorf("cli_mt %s %s: rc %s", cmd, path, rc)
		}
	}
	step("create", "/mt")
	step("create", "/mt/a")
	step("get", "/mt/a")
	marker := len(c.out.String())

	e.Kill(t, leader)
	e.WaitRoles(t, e.Others(leader), failoverDeadline)
	fmt.Fprintf(&tr, "-- leader killed\n")
	var rc, text string
	tries := 0
	for end := time.Now().Add(failoverDeadline); ; {
		tries++
		if rc, text = c.do(t, "get", "/mt/a"); rc != "-4" || time.Now().After(end) {
			break
		}
		time.Sleep(pollInterval)
	}
	t.Logf("get /mt/a after the leader kill: rc %s after %d tries", rc, tries)
	fmt.Fprintf(&tr, "$ get /mt/a (until not -4)\n%s", text)
	step("create", "/mt/b")
	step("get", "/mt/b")
	e.Start(t, leader)
	e.WaitRoles(t, e.Members, failoverDeadline)
	step("get", "/mt/b")

	if _, err := io.WriteString(c.stdin, "quit\n"); err != nil {
		t.Fatal(err)
	}
	c.out.waitFor(t, "Quitting...", eventDeadline)
	c.stdin.Close()
	select {
	case <-c.exited:
		if c.waitErr != nil {
			t.Errorf("cli_mt: %v", c.waitErr)
		}
	case <-time.After(eventDeadline):
		t.Fatalf("cli_mt did not exit within %v after quit", eventDeadline)
	}
	all := c.out.String()
	t.Logf("cli_mt session events after the leader kill: %q", cliMtSessionEvent.FindAllString(all[marker:], -1))
	fmt.Fprintf(&tr, "new sessions=%d expired=%v\n", strings.Count(all, "Got a new session id"),
		strings.Contains(all, "Session expired") || strings.Contains(all, "EXPIRED_SESSION_STATE"))
	return tr.String()
}

// waitForFunc waits (bounded) until ok holds for the whole output so far.
func waitForFunc(t *testing.T, s *syncBuffer, deadline time.Duration, what string, ok func(string) bool) {
	t.Helper()
	timeout := time.After(deadline)
	for {
		s.mu.Lock()
		found := ok(s.b.String())
		ch := s.changed
		s.mu.Unlock()
		if found {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("no %s within %v; output:\n%s", what, deadline, s.String())
		}
	}
}
