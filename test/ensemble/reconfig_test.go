package ensemble

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
)

// Dynamic reconfiguration of real processes under load: members added
// (new processes on new addresses, empty data directories), removed (the
// leader too), an observer promoted and demoted, a member killed in the
// middle of a change, every member restarted on its rewritten zoo.cfg,
// and a failed host replaced, as an operator does it with `warden cli
// reconfig`. After every change every member reports the same
// /zookeeper/config, has rewritten zoo.cfg and its dynamic file, and
// srvr and mntr report the roles and the quorum the membership makes.

// Bounds of the reconfig steps.
const (
	reconfigDeadline = 30 * time.Second       // one change, its retries included
	reconfigBackoff  = 100 * time.Millisecond // before reading the outcome of a change in progress again
	cliDeadline      = 20 * time.Second       // one `warden cli` run
)

// membership returns the server lines the ensemble's members make, sorted.
func (e *ensemble) membership() []string {
	lines := make([]string, 0, len(e.members))
	for _, m := range e.members {
		lines = append(lines, e.serverLine(m.id, m.observer))
	}
	sort.Strings(lines)
	return lines
}

// roles counts the voters and observers of the ensemble's membership.
func (e *ensemble) roles() (voters, observers int) {
	for _, m := range e.members {
		if m.observer {
			observers++
		} else {
			voters++
		}
	}
	return voters, observers
}

// retire moves m out of the ensemble's members (its process is left as
// it is).
func (e *ensemble) retire(m *member) {
	e.members = slices.DeleteFunc(e.members, func(x *member) bool { return x == m })
	e.retired = append(e.retired, m)
}

// serverLines returns the sorted server.N lines of a configuration text.
func serverLines(text string) []string {
	var lines []string
	for _, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "server.") {
			lines = append(lines, l)
		}
	}
	sort.Strings(lines)
	return lines
}

// admin connects the super user to the members that serve now.
func (s *scenario) admin() *client.Conn {
	s.t.Helper()
	var addrs []string
	for _, m := range s.e.members {
		if st, err := m.status(); err == nil && st.serving {
			addrs = append(addrs, m.Addr)
		}
	}
	if len(addrs) == 0 {
		s.t.Fatal("admin: no member serves")
	}
	return connectWith(s.t, strings.Join(addrs, ","), "admin", sessionTimeout, client.WithAuth("digest", []byte(superAuth)))
}

// readConfig syncs and reads /zookeeper/config through c, as a ZooKeeper
// application learns the membership, trying again after an unknown
// outcome until deadline.
func (s *scenario) readConfig(c *client.Conn, deadline time.Time) (string, client.EnsembleConfig) {
	s.t.Helper()
	for {
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		err := c.Sync(ctx, client.ConfigPath)
		var data []byte
		if err == nil {
			data, _, err = c.GetConfig(ctx)
		}
		cancel()
		switch {
		case err == nil:
			cfg, err := client.ParseConfig(data)
			if err != nil {
				s.t.Fatalf("/zookeeper/config %q: %v", data, err)
			}
			return string(data), cfg
		case isUnknown(err) && time.Now().Before(deadline):
			continue // the client waits for its reconnect
		default:
			s.t.Fatalf("read /zookeeper/config: %v", err)
		}
	}
}

// currentConfig returns the text of /zookeeper/config.
func (s *scenario) currentConfig() string {
	s.t.Helper()
	c := s.admin()
	defer c.Close()
	text, _ := s.readConfig(c, time.Now().Add(reconfigDeadline))
	return text
}

// reconfigure makes the ensemble's configuration what its members make
// (the caller changed them) with an incremental reconfig of joining and
// leaving, as a ZooKeeper application does: conditional on the version
// it read, and after an unknown outcome (ConnectionLoss: the member it
// was connected to left, or lost its leader) or a change in progress, it
// reads /zookeeper/config to learn whether the change was made, and asks
// again if not. It returns the new configuration's text.
func (s *scenario) reconfigure(what string, joining, leaving []string) string {
	t := s.t
	t.Helper()
	c := s.admin()
	defer c.Close()
	want := s.e.membership()
	begin := time.Now()
	deadline := begin.Add(reconfigDeadline)
	for attempt := 1; ; attempt++ {
		text, cfg := s.readConfig(c, deadline)
		if slices.Equal(serverLines(text), want) {
			s.step("%s: /zookeeper/config shows it done, version %x, %v after the first attempt", what, cfg.Version, time.Since(begin).Round(time.Millisecond))
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not done within %v; /zookeeper/config is %q, want the servers %q", what, reconfigDeadline, text, want)
		}
		ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
		sent := time.Now()
		data, st, err := c.IncrementalReconfig(ctx, joining, leaving, cfg.Version)
		cancel()
		switch {
		case err == nil:
			got, perr := client.ParseConfig(data)
			if perr != nil || !slices.Equal(serverLines(string(data)), want) || st.Mzxid != got.Version || got.Version <= cfg.Version {
				t.Fatalf("%s from version %x: reply %q (mzxid %#x, %v), want the servers %q at a newer version equal to mzxid", what, cfg.Version, data, st.Mzxid, perr, want)
			}
			s.step("%s: committed as version %x in %v (attempt %d)", what, got.Version, time.Since(sent).Round(time.Millisecond), attempt)
			return string(data)
		case isUnknown(err):
			s.step("%s: %v; reading /zookeeper/config to learn the outcome", what, err)
		case errors.Is(err, client.ErrReconfigInProgress), errors.Is(err, client.ErrBadVersion), errors.Is(err, client.ErrNewConfigNoQuorum):
			// The previous attempt may still be committing, or a new member
			// not yet be in step with the leader: look again shortly.
			s.step("%s: %v; reading /zookeeper/config again", what, err)
			time.Sleep(reconfigBackoff)
		default:
			t.Fatalf("%s from version %x: %v", what, cfg.Version, err)
		}
	}
}

// checkMembership checks that every member took the configuration text
// committed last, which must be what the ensemble's members make: each
// reports it as /zookeeper/config; each rewrote zoo.cfg (no server
// lines, dynamicConfigFile naming "<zoo.cfg>.dynamic.<version>") and
// wrote that file with the configuration's server lines; srvr shows one
// leader, followers and observers as configured, and mntr the quorum
// size, and on the leader the synced followers and observers, that it
// makes. A removed member that still runs serves no client.
func (s *scenario) checkMembership(text string) {
	t := s.t
	t.Helper()
	cfg, err := client.ParseConfig([]byte(text))
	if err != nil {
		t.Fatalf("configuration %q: %v", text, err)
	}
	if want := s.e.membership(); !slices.Equal(serverLines(text), want) {
		t.Fatalf("configuration %q, want the servers %q", text, want)
	}
	s.e.waitLeader()
	var conns []*client.Conn
	for _, m := range s.e.members {
		c := connect(t, m.Addr, "config reader on "+m.String()) // this member only
		defer c.Close()
		conns = append(conns, c)
	}
	took := s.e.waitFor(fmt.Sprintf("every member's /zookeeper/config at version %x", cfg.Version), catchUpDeadline, func() (bool, string) {
		for i, m := range s.e.members {
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			err := conns[i].Sync(ctx, client.ConfigPath)
			var data []byte
			if err == nil {
				data, _, err = conns[i].GetConfig(ctx)
			}
			cancel()
			if err != nil || string(data) != text {
				return false, fmt.Sprintf("%v: %q, %v", m, data, err)
			}
		}
		return true, ""
	})
	s.e.waitFor(fmt.Sprintf("every member's zoo.cfg and dynamic file at version %x", cfg.Version), catchUpDeadline, func() (bool, string) {
		for _, m := range s.e.members {
			if ok, desc := configFiles(m, text, cfg.Version); !ok {
				return false, fmt.Sprintf("%v: %s", m, desc)
			}
		}
		return true, ""
	})
	voters, observers := s.e.roles()
	var roles string
	s.e.waitFor("srvr and mntr reporting the membership's roles", electDeadline, func() (bool, string) {
		var desc []string
		leaders := 0
		for _, m := range s.e.members {
			st, err := m.status()
			if err != nil {
				return false, err.Error()
			}
			mn, err := m.mntr()
			if err != nil {
				return false, err.Error()
			}
			desc = append(desc, fmt.Sprintf("%v: %v, quorum_size %s", m, st, mn["quorum_size"]))
			want := "follower"
			if m.observer {
				want = "observer"
			}
			switch {
			case !st.serving:
				return false, strings.Join(desc, "; ")
			case st.mode == "leader" && !m.observer:
				leaders++
				desc[len(desc)-1] += fmt.Sprintf(", learners %s, synced_followers %s, synced_observers %s", mn["learners"], mn["synced_followers"], mn["synced_observers"])
				if mn["synced_followers"] != strconv.Itoa(voters-1) || mn["synced_observers"] != strconv.Itoa(observers) ||
					mn["learners"] != strconv.Itoa(len(s.e.members)-1) {
					return false, strings.Join(desc, "; ")
				}
			case st.mode != want:
				return false, strings.Join(desc, "; ")
			}
			if mn["quorum_size"] != strconv.Itoa(voters) {
				return false, strings.Join(desc, "; ")
			}
		}
		roles = strings.Join(desc, "; ")
		return leaders == 1, roles
	})
	for _, m := range s.e.retired {
		if !m.live() {
			continue
		}
		if st, err := m.status(); err == nil && st.serving {
			t.Fatalf("%v, removed by a reconfig, still serves: %v", m, st)
		}
	}
	s.step("version %x on every member %v after the change: %s", cfg.Version, took.Round(time.Millisecond), roles)
}

// configFiles reports whether m rewrote its configuration files as
// ZooKeeper does after the reconfig that made version: zoo.cfg without
// server lines (nor clientPort: its server line carries its client
// address), naming the dynamic file "<zoo.cfg>.dynamic.<version hex>",
// which holds the configuration's server lines.
func configFiles(m *member, text string, version int64) (bool, string) {
	dynamic := fmt.Sprintf("%s.dynamic.%x", m.Config, version)
	static, err := os.ReadFile(m.Config)
	if err != nil {
		return false, err.Error()
	}
	named := false
	for _, line := range strings.Split(string(static), "\n") {
		key, value, _ := strings.Cut(strings.TrimSpace(line), "=")
		switch {
		case strings.HasPrefix(key, "server."), key == "clientPort", key == "clientPortAddress":
			return false, fmt.Sprintf("zoo.cfg still has %q", line)
		case key == "dynamicConfigFile":
			named = value == dynamic
		}
	}
	if !named {
		return false, fmt.Sprintf("zoo.cfg does not name %s: %q", dynamic, static)
	}
	b, err := os.ReadFile(dynamic)
	if err != nil {
		return false, err.Error()
	}
	if got, want := serverLines(string(b)), serverLines(text); !slices.Equal(got, want) {
		return false, fmt.Sprintf("%s holds %q, want %q", dynamic, got, want)
	}
	return true, ""
}

// addMember starts member id as operators start a new ZooKeeper member:
// its zoo.cfg lists the current members and itself, its data directory
// is empty. Then it is added with reconfig, and must serve in its role,
// catch up with the leader and hold every acknowledged write.
func (s *scenario) addMember(id int, observer bool) *member {
	s.t.Helper()
	line := s.e.serverLine(id, observer)
	m := s.e.newMember(id, observer, append(s.e.membership(), line))
	zxid := s.zxidOf(s.e.waitLeader())
	m.Start(s.t)
	s.e.members = append(s.e.members, m)
	text := s.reconfigure(fmt.Sprintf("add %s", line), []string{line}, nil)
	mode := "follower"
	if observer {
		mode = "observer"
	}
	s.e.waitMode(m, mode)
	s.e.waitCaughtUp(m, zxid)
	s.checkMembership(text)
	s.ck.check(m, false)
	return m
}

// setRole makes m an observer or a participant with reconfig.
func (s *scenario) setRole(m *member, observer bool) {
	s.t.Helper()
	m.observer = observer
	line := s.e.serverLine(m.id, observer)
	text := s.reconfigure(fmt.Sprintf("make %s", line), []string{line}, nil)
	mode := "follower"
	if observer {
		mode = "observer"
	}
	s.e.waitMode(m, mode)
	s.checkMembership(text)
}

// moveClientPort gives m another client port with reconfig, checks that
// it listens there and no longer on the old one, then moves it back.
func (s *scenario) moveClientPort(m *member) {
	s.t.Helper()
	line := s.e.serverLine(m.id, m.observer)
	s.e.movedClientPorts = map[int]int{m.id: clientPort + 1}
	moved := s.e.serverLine(m.id, m.observer)
	listens := func(port int) bool {
		nc, err := net.DialTimeout("tcp", net.JoinHostPort(m.host, strconv.Itoa(port)), time.Second)
		if err != nil {
			return false
		}
		nc.Close()
		return true
	}
	s.reconfigure(fmt.Sprintf("move %v's client port to %d", m, clientPort+1), []string{moved}, nil)
	s.e.waitFor(fmt.Sprintf("%v listening on %d only", m, clientPort+1), electDeadline, func() (bool, string) {
		return listens(clientPort+1) && !listens(clientPort), fmt.Sprintf("%d: %v, %d: %v", clientPort+1, listens(clientPort+1), clientPort, listens(clientPort))
	})
	delete(s.e.movedClientPorts, m.id)
	text := s.reconfigure(fmt.Sprintf("move %v's client port back to %d", m, clientPort), []string{line}, nil)
	s.e.waitFor(fmt.Sprintf("%v listening on %d only", m, clientPort), electDeadline, func() (bool, string) {
		return listens(clientPort) && !listens(clientPort+1), fmt.Sprintf("%d: %v, %d: %v", clientPort, listens(clientPort), clientPort+1, listens(clientPort+1))
	})
	s.checkMembership(text)
}

// removeMember removes m with reconfig: it must stop serving clients (its
// process still runs; kill says whether to kill it then, as an operator
// retires its host).
func (s *scenario) removeMember(m *member, kill bool) {
	s.t.Helper()
	s.e.retire(m)
	text := s.reconfigure(fmt.Sprintf("remove %v", m), nil, []string{strconv.Itoa(m.id)})
	s.e.waitFor(fmt.Sprintf("%v, removed, serving no client", m), electDeadline, func() (bool, string) {
		st, err := m.status()
		if err != nil {
			return false, err.Error()
		}
		return !st.serving, st.String()
	})
	// Not required: the leader's last messages tell a removed member that
	// the change committed (it then logs it, takes no new client, and
	// drains its connected clients); were they lost, it would serve no
	// client for want of a leader.
	s.step("%v serves no client; it logged its removal: %v", m, m.logCount("a reconfig removed this member") > 0)
	s.checkMembership(text)
	if kill {
		m.Kill9(s.t)
	}
}

// restartAll stops every member with SIGTERM, then starts them all on
// their rewritten zoo.cfg files: the ensemble must come back with the
// membership of text.
func (s *scenario) restartAll(text string) {
	s.t.Helper()
	stoppedAt := time.Now()
	for _, m := range s.e.members {
		if st := m.Stop(s.t); !st.Success() {
			s.t.Errorf("%v, stopped with SIGTERM, exited with %v; want status 0", m, st)
		}
	}
	for _, m := range s.e.members {
		m.Start(s.t)
	}
	leader := s.e.waitLeader()
	s.step("every member stopped and started again: %v leads, %v after the first stop", leader, time.Since(stoppedAt).Round(time.Millisecond))
	s.checkMembership(text)
	s.writesContinue(stoppedAt)
}

// TestReconfigUnderLoad changes the membership of a 3-member ensemble in
// every way reconfig allows while writers run: a participant added (a
// new process), an observer added, promoted to participant and demoted
// back, a follower removed, the leader removed (leadership moves first),
// a participant added under the new leader. Then every member is
// restarted on its rewritten zoo.cfg and the ensemble comes back with the
// new membership. A member's client port is moved and moved back on the
// way. No acknowledged write is lost, no session expires.
func TestReconfigUnderLoad(t *testing.T) {
	s := newScenarioWith(t, ensembleOptions{n: 3, spare: 3, reconfig: true}, sessionTimeout)
	s.writesContinue(s.begin)

	s.addMember(4, false)
	s.writesContinue(time.Now())
	five := s.addMember(5, true)
	s.writesContinue(time.Now())
	s.setRole(five, false)
	s.writesContinue(time.Now())
	s.setRole(five, true)
	s.writesContinue(time.Now())
	s.moveClientPort(five)
	s.writesContinue(time.Now())

	leader := s.e.waitLeader()
	var follower *member
	for _, m := range s.e.others(leader) {
		if !m.observer {
			follower = m
			break
		}
	}
	s.removeMember(follower, true)
	s.writesContinue(time.Now())

	leader = s.e.waitLeader()
	removedAt := time.Now()
	s.removeMember(leader, true)
	first := s.writesContinue(removedAt)
	s.step("the leader's removal: first write acknowledged %v after the reconfig was sent", first.end.Sub(removedAt).Round(time.Millisecond))

	s.addMember(6, false)
	s.writesContinue(time.Now())
	s.restartAll(s.currentConfig())
	s.finish()
}

// TestReconfigLeaderKilledMidChange sends a reconfig removing a follower
// to the other follower and kills the leader with SIGKILL right after.
func TestReconfigLeaderKilledMidChange(t *testing.T) { killedMidChange(t, true) }

// TestReconfigReceiverKilledMidChange sends a reconfig removing a follower
// to the other follower and kills that member, the one that received the
// request, with SIGKILL right after.
func TestReconfigReceiverKilledMidChange(t *testing.T) { killedMidChange(t, false) }

// killedMidChange: three members under load; a super user connected to
// follower X asks to remove follower F, and X or the leader is killed
// 0–8 ms later (a change takes about 5–15 ms). The killed member restarts; the change either completed
// or did not, on every member alike. The client learns which as a
// ZooKeeper application does (its call's answer, else /zookeeper/config)
// and asks again until it is done. Then the raft membership must match
// the configuration: with F still running, the loss of one of the two
// remaining members must stop the writes (F, removed, is no part of any
// quorum), and they resume when it returns.
func killedMidChange(t *testing.T, killLeader bool) {
	s := newScenarioWith(t, ensembleOptions{n: 3, reconfig: true}, sessionTimeout)
	s.writesContinue(s.begin)
	leader := s.e.waitLeader()
	fs := s.e.others(leader)
	if s.rng.IntN(2) == 0 {
		fs[0], fs[1] = fs[1], fs[0]
	}
	x, gone := fs[0], fs[1]
	victim, role := x, "the member that received the request"
	if killLeader {
		victim, role = leader, "the leader"
	}
	c := connectWith(t, x.Addr, "admin on "+x.String(), sessionTimeout, client.WithAuth("digest", []byte(superAuth)))
	before, cfg := s.readConfig(c, time.Now().Add(reconfigDeadline))

	type answer struct {
		data []byte
		err  error
	}
	answered := make(chan answer, 1)
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	sentAt := time.Now()
	go func() {
		data, _, err := c.IncrementalReconfig(ctx, nil, []string{strconv.Itoa(gone.id)}, cfg.Version)
		answered <- answer{data, err}
	}()
	// The fault's timing, not a wait for something.
	time.Sleep(time.Duration(s.rng.IntN(9)) * time.Millisecond)
	victim.Kill9(t)
	killedAt := time.Since(sentAt)
	var a answer
	select {
	case a = <-answered:
	case <-time.After(requestTimeout + time.Second):
		t.Fatalf("the reconfig call did not return within %v", requestTimeout)
	}
	c.Close()
	s.step("remove %v sent to %v, kill -9 %s %v %v after; the call returned %v after %v", gone, x, role, victim, killedAt.Round(time.Millisecond), a.err, time.Since(sentAt).Round(time.Millisecond))
	victim.Start(t)
	s.e.retire(gone) // it may serve, even lead, or not: that depends on the outcome
	s.e.waitFor("the two other members serving", electDeadline, func() (bool, string) {
		sts, desc := s.e.statuses(s.e.members)
		for _, st := range sts {
			if !st.serving {
				return false, desc
			}
		}
		return true, desc
	})

	// Every member (F too while it serves) agrees on one configuration.
	var agreed string
	s.e.waitFor("every member reporting the same /zookeeper/config", catchUpDeadline, func() (bool, string) {
		var texts []string
		for _, m := range s.e.members {
			text, err := configOn(m)
			if err != nil {
				return false, fmt.Sprintf("%v: %v", m, err)
			}
			texts = append(texts, text)
		}
		if st, err := gone.status(); err == nil && st.serving {
			if text, err := configOn(gone); err == nil {
				texts = append(texts, text)
			}
		}
		agreed = texts[0]
		for _, text := range texts[1:] {
			if text != agreed {
				return false, fmt.Sprintf("%q", texts)
			}
		}
		return true, ""
	})
	committed := !slices.Contains(serverLines(agreed), s.e.serverLine(gone.id, false))
	if agreed != before && !committed {
		t.Fatalf("/zookeeper/config changed from %q to %q, yet it still has %v", before, agreed, gone)
	}
	s.step("after the restart every member shows the configuration %s", map[bool]string{true: "without " + gone.String(), false: "of before"}[committed])
	switch {
	case a.err == nil && !committed:
		t.Fatalf("the reconfig was acknowledged (%q), but the members show %q", a.data, agreed)
	case errors.Is(a.err, client.ErrNewConfigNoQuorum) && committed:
		t.Fatalf("the reconfig failed with %v, but the members show %q", a.err, agreed)
	case a.err != nil && !isUnknown(a.err) && !errors.Is(a.err, client.ErrNewConfigNoQuorum):
		t.Fatalf("the reconfig: %v", a.err)
	}

	text := s.reconfigure(fmt.Sprintf("remove %v (as the application retries)", gone), nil, []string{strconv.Itoa(gone.id)})
	s.checkMembership(text)
	s.writesContinue(time.Now())

	// F still runs: if raft still counted it, the leader and F would be
	// a quorum without the other member.
	leader = s.e.waitLeader()
	other := s.e.others(leader)[0]
	stoppedAt := time.Now()
	other.Kill9(t)
	s.step("kill -9 %v: %v alone of the two voters, removed %v still running", other, leader, gone)
	s.e.waitNotServing([]*member{leader})
	for time.Since(stoppedAt) < noQuorumFor {
		if st, err := leader.status(); err == nil && st.serving {
			t.Fatalf("%v serves with one voter of two: %v (is removed %v still counted?)", leader, st, gone)
		}
		time.Sleep(pollInterval)
	}
	returnAt := time.Now()
	for _, w := range s.load.h.matching(func(w *write) bool {
		return w.outcome == acked && w.start.After(stoppedAt) && w.end.Before(returnAt)
	}) {
		t.Errorf("%v: sent %v and acknowledged %v after one of the two voters was killed", w,
			w.start.Sub(stoppedAt).Round(time.Millisecond), w.end.Sub(stoppedAt).Round(time.Millisecond))
	}
	other.Start(t)
	s.e.waitLeader()
	s.writesContinue(returnAt)
	s.finish()
}

// configOn reads /zookeeper/config from m alone, after a sync.
func configOn(m *member) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), requestTimeout)
	defer cancel()
	c, err := client.Connect(ctx, m.Addr, client.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return "", err
	}
	defer c.Close()
	if err := c.Sync(ctx, client.ConfigPath); err != nil {
		return "", err
	}
	data, _, err := c.GetConfig(ctx)
	return string(data), err
}

// cliReconfig runs `warden cli -server <serving members> -auth
// digest:<super> reconfig args...` as an operator does, until the
// configuration is what the ensemble's members make: a run that fails
// (its member lost its leader, say) is followed by a look at
// /zookeeper/config and, if the change is not there, another run. It
// returns the new configuration's text.
func (s *scenario) cliReconfig(args ...string) string {
	t := s.t
	t.Helper()
	want := s.e.membership()
	deadline := time.Now().Add(reconfigDeadline)
	for {
		if text := s.currentConfig(); slices.Equal(serverLines(text), want) {
			return text
		}
		if time.Now().After(deadline) {
			t.Fatalf("warden cli reconfig %q: not done within %v", args, reconfigDeadline)
		}
		var addrs []string
		for _, m := range s.e.members {
			if m.live() {
				addrs = append(addrs, m.Addr)
			}
		}
		ctx, cancel := context.WithTimeout(context.Background(), cliDeadline)
		argv := append([]string{"cli", "-server", strings.Join(addrs, ","), "-timeout", "10s", "-auth", "digest:" + superAuth, "reconfig"}, args...)
		out, err := exec.CommandContext(ctx, s.e.bin, argv...).CombinedOutput()
		cancel()
		s.step("warden %s: %v\n%s", strings.Join(argv, " "), err, out)
		if err == nil && strings.HasPrefix(string(out), "Committed new configuration:\n") {
			if got := serverLines(string(out)); !slices.Equal(got, want) {
				t.Fatalf("warden cli reconfig %q committed %q, want %q", args, got, want)
			}
			continue // the text as /zookeeper/config holds it, with its version
		}
		time.Sleep(reconfigBackoff)
	}
}

// TestReplaceFailedHost replaces a member lost for good, as
// docs/ensemble.md tells operators to: under load, with a small snapCount
// so that the leader's log is compacted, a follower is killed with
// SIGKILL and never restarted; `warden cli reconfig -remove` takes it out
// of the configuration; a new member (a new id on a new address, empty
// data directory, zoo.cfg listing the current members and itself) is
// started and added with `warden cli reconfig -add`; it catches up by
// snapshot. Then the ensemble survives the loss of another member (the
// leader, killed with SIGKILL) and no acknowledged write is lost.
func TestReplaceFailedHost(t *testing.T) {
	const snapCount = 64
	s := newScenarioWith(t, ensembleOptions{n: 3, spare: 1, reconfig: true, snapCount: snapCount}, sessionTimeout)
	s.writesContinue(s.begin)
	leader := s.e.waitLeader()
	failed := s.e.others(leader)[s.rng.IntN(2)]
	failed.Kill9(t)
	s.step("kill -9 follower %v for good", failed)
	s.e.retire(failed)
	s.checkMembership(s.cliReconfig("-remove", strconv.Itoa(failed.id)))

	// The leader's log is compacted: two snapshots after the removal, the
	// log starts after the first (and well after a new member's index 1).
	leader = s.e.waitLeader()
	snaps := leader.logCount("snapshot saved")
	s.e.waitFor(fmt.Sprintf("%v saving two snapshots", leader), ackDeadline, func() (bool, string) {
		n := leader.logCount("snapshot saved") - snaps
		return n >= 2, fmt.Sprintf("%d snapshots saved", n)
	})
	mn, err := leader.mntr()
	if err != nil {
		t.Fatal(err)
	}
	s.step("%v saved two snapshots (snapCount=%d); mntr snap_count %s", leader, snapCount, mn["snap_count"])

	zxid := s.zxidOf(leader)
	sent, _ := strconv.Atoi(mn["snap_count"])
	line := s.e.serverLine(4, false)
	fresh := s.e.newMember(4, false, append(s.e.membership(), line))
	fresh.Start(t)
	s.e.members = append(s.e.members, fresh)
	text := s.cliReconfig("-add", line)
	s.e.waitMode(fresh, "follower")
	caught := s.e.waitCaughtUp(fresh, zxid)
	if fresh.logCount("installed a snapshot from the leader") == 0 {
		t.Errorf("%v did not log a snapshot installed from the leader: it should have caught up by snapshot, the leader's log being compacted", fresh)
	}
	if now := s.e.waitLeader(); now == leader {
		after, err := leader.mntr()
		if err != nil {
			t.Fatal(err)
		}
		if n, _ := strconv.Atoi(after["snap_count"]); n <= sent {
			t.Errorf("%v's mntr snap_count went from %d to %s while %v joined: want a snapshot sent", leader, sent, after["snap_count"], fresh)
		}
		s.step("%v added, at the leader's zxid %v after; the leader's mntr snap_count %d → %s", fresh, caught.Round(time.Millisecond), sent, after["snap_count"])
	}
	s.checkMembership(text)
	s.ck.check(fresh, false)
	s.writesContinue(time.Now())

	// Three voters again: the loss of one more (the leader) is survived.
	leader = s.e.waitLeader()
	killedAt := time.Now()
	leader.Kill9(t)
	newLeader, elected := s.e.waitNewLeader(s.e.others(leader))
	s.step("kill -9 leader %v: %v leads %v after", leader, newLeader, elected.Round(time.Millisecond))
	s.writesContinue(killedAt)
	s.rejoin(leader)
	s.finish()
}
