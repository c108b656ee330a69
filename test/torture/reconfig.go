package torture

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/test/torture/checker"
)

// The reconfig nemesis: fault kinds that change the ensemble's membership
// with incremental reconfigs (client.IncrementalReconfig), alone or while
// a partition or a kill is in effect. A run with any of them starts its
// ensemble with reconfigEnabled=true and a super user, plus spare
// processes (Spares) that are not members: each runs with a zoo.cfg
// listing the ensemble and itself, as an operator starts a member before
// adding it.
//
// Every reconfig is conditional on the version the nemesis read just
// before it (sync, then getConfig), is recorded with its outcome, and is
// followed, when its outcome is unknown, by another read that learns
// it. The nemesis keeps at least three voters and changes at most one
// voter a reconfig (a swap adds one voter and removes another, a joint
// consensus change). A member that is added again after a reconfig removed
// it is killed, its data directory emptied (all but myid) and started with
// a zoo.cfg listing the current membership and itself, as ZooKeeper's
// operators do; so is a spare whose zoo.cfg no longer lists the current
// membership.
const (
	// ReconfigAdd: add a process that is not a member (a spare, or a
	// member removed earlier), as a participant or (one time in three)
	// an observer.
	ReconfigAdd FaultKind = "reconfig-add"
	// ReconfigRemove: remove a member other than the leader (with three
	// voters, swap in a spare for it in one reconfig).
	ReconfigRemove FaultKind = "reconfig-remove"
	// ReconfigRemoveLeader: remove the leader (with three voters, swap
	// in a spare for it), which hands leadership over first.
	ReconfigRemoveLeader FaultKind = "reconfig-remove-leader"
	// ReconfigRole: promote an observer, else demote a voter (the leader
	// one time in four) when there are more than three, else add a spare
	// as an observer.
	ReconfigRole FaultKind = "reconfig-role"
	// ReconfigPartition: partition the members (the leader alone, or two
	// random halves), then issue one of the reconfigs above while the
	// partition holds.
	ReconfigPartition FaultKind = "reconfig-partition"
	// ReconfigKill: kill -9 a member (the reconfig's own subject, the
	// leader, or another), then issue one of the reconfigs above; the
	// member is restarted when the fault heals.
	ReconfigKill FaultKind = "reconfig-kill"
)

// ReconfigFaults lists the reconfig nemesis's kinds, "reconfig" in
// ParseFaults.
var ReconfigFaults = []FaultKind{ReconfigAdd, ReconfigRemove, ReconfigRemoveLeader, ReconfigRole, ReconfigPartition, ReconfigKill}

func isReconfig(k FaultKind) bool { return slices.Contains(ReconfigFaults, k) }

// Spares returns how many spare processes a run of members needs for
// faults: none without a reconfig kind, two beside three members, one
// beside five.
func Spares(members int, faults []FaultKind) int {
	if !slices.ContainsFunc(faults, isReconfig) {
		return 0
	}
	if members <= 3 {
		return 2
	}
	return 1
}

// superUser is the digest user (user:password) the nemesis reconfigures
// as: reconfig needs WRITE on /zookeeper/config.
const superUser = "super:torture"

// Bounds of the reconfig nemesis.
const (
	reconfigTimeout = 6 * time.Second  // one reconfig request, call to giving up (outcome unknown)
	readTimeout     = 15 * time.Second // reading the configuration from some member
	settleRounds    = 4                // final reads of the configuration until two agree
)

// reconfigHistory is what the reconfig nemesis did and saw.
type reconfigHistory struct {
	e     *env
	ops   []checker.ReconfigOp
	reads []checker.ConfigRead
	data  string // the newest configuration read, as /zookeeper/config holds it
}

// serverLine is m's line in a dynamic configuration.
func (m *member) serverLine(observer bool) string {
	role := "participant"
	if observer {
		role = "observer"
	}
	return fmt.Sprintf("server.%d=%s:%d:%d:%s;%s:%d", m.index+1, m.host, quorumPort, electionPort, role, m.host, clientPort)
}

// canonical spells each server of cfg one way, sorted: id, quorum host,
// role and client address (the ports of the quorum are the harness's).
func canonical(cfg client.EnsembleConfig) []string {
	var out []string
	for _, s := range cfg.Servers {
		role := "participant"
		if s.Observer {
			role = "observer"
		}
		addr := client.EnsembleConfig{Servers: []client.ConfigServer{s}}.ClientAddrs()
		out = append(out, fmt.Sprintf("server.%d=%s:%s;%s", s.ID, s.QuorumHost, role, strings.Join(addr, "")))
	}
	slices.Sort(out)
	return out
}

// canonicalLines is the canonical form of server lines, on one line.
func canonicalLines(lines []string) string {
	cfg, err := client.ParseConfig([]byte(strings.Join(lines, "\n")))
	if err != nil {
		return "unparsable: " + err.Error()
	}
	return strings.Join(canonical(cfg), " ")
}

// serverLines returns the server.N lines of configuration data.
func serverLines(data string) []string {
	var out []string
	for _, l := range strings.Split(data, "\n") {
		if l = strings.TrimSpace(l); strings.HasPrefix(l, "server.") {
			out = append(out, l)
		}
	}
	return out
}

// observed turns configuration data into what the checker compares.
func observed(data []byte) (checker.EnsembleConfig, error) {
	cfg, err := client.ParseConfig(data)
	if err != nil {
		return checker.EnsembleConfig{}, err
	}
	return checker.EnsembleConfig{Version: cfg.Version, Servers: canonical(cfg)}, nil
}

// learn takes the membership from configuration data: which processes
// are members, observers, removed; the clients' server list follows.
func (c *cluster) learn(data []byte) error {
	cfg, err := client.ParseConfig(data)
	if err != nil {
		return err
	}
	c.reconfig.data = string(data)
	for _, m := range c.members {
		i := slices.IndexFunc(cfg.Servers, func(s client.ConfigServer) bool { return s.ID == int64(m.index+1) })
		in := i >= 0
		if m.in && !in {
			m.removed = true
		}
		if in {
			m.observer = cfg.Servers[i].Observer
			m.joined, m.removed = true, false
		}
		m.in = in
	}
	c.reconfig.e.setServers(c.connectString())
	return nil
}

// readConfig reads /zookeeper/config after a sync from one member of the
// membership after another (from the one the seed's pick names) until
// one answers, bounded by d; it records the read and learns the
// membership from it.
func (c *cluster) readConfig(d time.Duration, pick int) ([]byte, error) {
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var last error
	for try := 0; ; try++ {
		in := c.inMembers()
		m := in[(pick+try)%len(in)]
		mctx, mcancel := context.WithTimeout(ctx, 3*time.Second)
		data, err := readOne(mctx, c.reconfig.e, m.Addr, client.ConfigPath, getConfig)
		mcancel()
		if err == nil {
			obs, err := observed(data)
			if err != nil {
				return nil, fmt.Errorf("%s: /zookeeper/config %q: %v", m.Name, data, err)
			}
			c.reconfig.reads = append(c.reconfig.reads, checker.ConfigRead{At: c.reconfig.e.now(), Member: m.Name, EnsembleConfig: obs})
			return data, c.learn(data)
		}
		last = fmt.Errorf("%s: %w", m.Name, err)
		if !backoff(ctx) {
			return nil, fmt.Errorf("no member answered within %v; the last: %v", d, last)
		}
	}
}

// getConfig reads /zookeeper/config's data.
func getConfig(ctx context.Context, conn *client.Conn) ([]byte, error) {
	data, _, err := conn.GetConfig(ctx)
	return data, err
}

// plan is one reconfig the nemesis is about to issue.
type plan struct {
	desc     string
	joining  []string
	leaving  []string
	joiner   *member // a process to (re)start before the reconfig, or nil
	observer bool    // the joiner's role
	subject  *member // the member whose membership changes
}

// planReconfig chooses a reconfig of kind k (ReconfigAdd, ReconfigRemove,
// ReconfigRemoveLeader, ReconfigRole) from the membership the nemesis
// last read. A kind that is impossible (nothing to add, too few voters)
// falls back to another, so that every step changes the membership.
func (c *cluster) planReconfig(f Fault, k FaultKind) plan {
	var voters, observers, outs []*member
	for _, i := range f.Perm {
		switch m := c.members[i]; {
		case !m.in:
			outs = append(outs, m)
		case m.observer:
			observers = append(observers, m)
		default:
			voters = append(voters, m)
		}
	}
	leader := c.leader()
	if leader == nil || !slices.Contains(voters, leader) {
		leader = voters[0]
	}
	var followers []*member
	for _, v := range voters {
		if v != leader {
			followers = append(followers, v)
		}
	}
	choose := func(ms []*member) *member { return ms[f.Pick%len(ms)] }
	add := func(m *member, observer bool) plan {
		role := "participant"
		if observer {
			role = "observer"
		}
		return plan{desc: fmt.Sprintf("add %s as %s", m.Name, role), joining: []string{m.serverLine(observer)}, joiner: m, observer: observer, subject: m}
	}
	remove := func(m *member) plan {
		return plan{desc: "remove " + m.Name, leaving: []string{fmt.Sprint(m.index + 1)}, subject: m}
	}
	swap := func(in, out *member) plan {
		p := add(in, false)
		p.desc = fmt.Sprintf("swap %s in for %s", in.Name, out.Name)
		p.leaving, p.subject = []string{fmt.Sprint(out.index + 1)}, out
		return p
	}
	switch k {
	case ReconfigAdd:
		if len(outs) > 0 {
			return add(choose(outs), f.Pick%3 == 0)
		}
		return c.planReconfig(f, ReconfigRemove)
	case ReconfigRemove:
		removable := slices.Clone(observers)
		if len(voters) > 3 {
			removable = append(removable, followers...)
		}
		switch {
		case len(removable) > 0:
			return remove(choose(removable))
		case len(outs) > 0:
			return swap(choose(outs), choose(followers))
		}
		return c.planReconfig(f, ReconfigRole)
	case ReconfigRemoveLeader:
		switch {
		case len(voters) > 3:
			return remove(leader)
		case len(outs) > 0:
			return swap(choose(outs), leader)
		}
		return c.planReconfig(f, ReconfigRemove)
	default: // ReconfigRole
		switch {
		case len(observers) > 0:
			m := choose(observers)
			p := add(m, false)
			p.desc, p.joiner = "promote "+m.Name, nil
			return p
		case len(voters) > 3:
			m := choose(followers)
			if f.Pick%4 == 0 {
				m = leader
			}
			p := add(m, true)
			p.desc, p.joiner = "demote "+m.Name, nil
			return p
		case len(outs) > 0:
			return add(choose(outs), true)
		}
		return c.planReconfig(f, ReconfigAdd)
	}
}

// prepareJoin makes m ready to be added with the role given: a spare
// already running with a zoo.cfg of the current membership and itself
// stays as it is; otherwise m is killed, its data directory emptied and
// it is started with such a zoo.cfg.
func (c *cluster) prepareJoin(m *member, observer bool) error {
	lines := append(serverLines(c.reconfig.data), m.serverLine(observer))
	if m.Running() && !m.joined && m.written == canonicalLines(lines) {
		return nil
	}
	m.Kill9(c.t)
	if m.full {
		m.full = false
		if err := m.disk.Free(); err != nil {
			return err
		}
	}
	if err := m.disk.Wipe("myid"); err != nil {
		return err
	}
	if err := c.writeConfig(m, lines); err != nil {
		return err
	}
	m.joined = false
	return m.restart()
}

// reconfigOutcome classifies a reconfig's error: the refusals (the
// ensemble said it did not take effect) are Failed.
func reconfigOutcome(err error) checker.Outcome {
	if err == nil {
		return checker.OK
	}
	for _, refused := range []error{client.ErrBadVersion, client.ErrNewConfigNoQuorum, client.ErrReconfigInProgress,
		client.ErrBadArguments, client.ErrNoAuth, client.ErrReconfigDisabled} {
		if errors.Is(err, refused) {
			return checker.Failed
		}
	}
	return checker.Unknown
}

// issue sends the reconfig p, conditional on the version last read, as
// the super user on a session with the membership's members, records it
// and, when its outcome is unknown, tries to learn it (a read that fails
// now is left to the next step's).
func (c *cluster) issue(p plan, pick int) checker.ReconfigOp {
	h := c.reconfig
	cur, _ := client.ParseConfig([]byte(h.data))
	next := append([]string(nil), serverLines(h.data)...)
	next = slices.DeleteFunc(next, func(l string) bool {
		for _, id := range p.leaving {
			if strings.HasPrefix(l, "server."+id+"=") {
				return true
			}
		}
		for _, j := range p.joining {
			id, _, _ := strings.Cut(j, "=")
			if strings.HasPrefix(l, id+"=") {
				return true
			}
		}
		return false
	})
	next = append(next, p.joining...)
	op := checker.ReconfigOp{Desc: p.desc, From: cur.Version, Want: strings.Fields(canonicalLines(next))}
	op.Call = h.e.now()
	ctx, cancel := context.WithTimeout(context.Background(), reconfigTimeout)
	defer cancel()
	servers := c.connectString()
	conn, err := h.e.dial(ctx, func() string { return servers }, client.WithAuth("digest", []byte(superUser)))
	var data []byte
	if err == nil {
		data, _, err = conn.IncrementalReconfig(ctx, p.joining, p.leaving, cur.Version)
		conn.Close()
	}
	op.Return, op.Outcome = h.e.now(), reconfigOutcome(err)
	if err != nil {
		op.Err = err.Error()
	} else if obs, perr := observed(data); perr != nil {
		op.Err = fmt.Sprintf("reply %q: %v", data, perr)
	} else {
		op.Reply = &obs
		if lerr := c.learn(data); lerr != nil {
			op.Err = lerr.Error()
		}
	}
	h.ops = append(h.ops, op)
	if op.Outcome == checker.Unknown {
		_, _ = c.readConfig(reconfigTimeout, pick)
	}
	return op
}

// injectReconfig runs one reconfig fault step; the heal function undoes
// the partition or the kill of a compound one.
func (c *cluster) injectReconfig(f Fault) (heal func() error, target string, err error) {
	if _, err := c.readConfig(readTimeout, f.Pick); err != nil {
		return nil, "", fmt.Errorf("read the configuration: %w", err)
	}
	k := f.Kind
	if k == ReconfigPartition || k == ReconfigKill {
		kinds := []FaultKind{ReconfigAdd, ReconfigRemove, ReconfigRemoveLeader, ReconfigRole}
		k = kinds[(f.Pick/7)%len(kinds)]
	}
	p := c.planReconfig(f, k)
	if p.joiner != nil {
		if err := c.prepareJoin(p.joiner, p.observer); err != nil {
			return nil, p.desc, fmt.Errorf("start %s to add it: %w", p.joiner.Name, err)
		}
	}
	switch f.Kind {
	case ReconfigPartition:
		perm := c.order(f)
		var groups [][]int
		if l := c.leader(); l != nil && f.Pick%2 == 0 {
			groups = [][]int{{l.index}, slices.DeleteFunc(perm, func(i int) bool { return i == l.index })}
		} else {
			cut := 1 + f.Pick%(len(perm)-1)
			groups = [][]int{perm[:cut], perm[cut:]}
		}
		heal, desc, err := c.partition(groups)
		if err != nil {
			return nil, desc, err
		}
		return c.reconfigUnder(f, p, heal, desc)
	case ReconfigKill:
		victim := c.members[c.order(f)[f.Pick%len(c.order(f))]]
		switch f.Pick % 3 {
		case 0:
			if p.subject != nil && p.subject.Running() {
				victim = p.subject
			}
		case 1:
			if l := c.leader(); l != nil {
				victim = l
			}
		}
		victim.Kill9(c.t)
		return c.reconfigUnder(f, p, victim.restart, victim.Name)
	}
	return c.reconfigUnder(f, p, func() error { return nil }, "")
}

// reconfigUnder issues p (with another fault in effect, healFault undoing
// it) and returns the step's heal function and description.
func (c *cluster) reconfigUnder(f Fault, p plan, healFault func() error, what string) (func() error, string, error) {
	op := c.issue(p, f.Pick)
	target := fmt.Sprintf("%s: %s", p.desc, op.Outcome)
	if op.Outcome != checker.OK {
		target += " (" + op.Err + ")"
	}
	if what != "" {
		target = what + "; " + target
	}
	return healFault, target, nil
}

// settleMembership, at the end of a run (everything healed), reads the
// configuration until two reads a quiet period apart agree and every
// member of that membership serves, so that a reconfig left pending has
// committed or been aborted.
func (c *cluster) settleMembership() error {
	var last string
	for round := 0; round < settleRounds; round++ {
		data, err := c.readConfig(readTimeout, round)
		if err != nil {
			return err
		}
		if err := c.waitServing(recoverDeadline); err != nil {
			return err
		}
		if string(data) == last {
			return nil
		}
		last = string(data)
		time.Sleep(quietPeriod)
	}
	return fmt.Errorf("the configuration still changed after %d reads", settleRounds)
}

// checkMembership reads /zookeeper/config from every member of the final
// membership, asks every removed member still running for a session, and
// judges the history of the reconfigs.
func (c *cluster) checkMembership(ctx context.Context) checker.Result {
	h := c.reconfig
	var addrs []string
	names := map[string]string{}
	for _, m := range c.inMembers() {
		addrs = append(addrs, m.Addr)
		names[m.Addr] = m.Name
	}
	final := map[string]checker.EnsembleConfig{}
	datas, err := readEach(ctx, h.e, addrs, client.ConfigPath, getConfig)
	var problems []string
	if err != nil {
		problems = append(problems, err.Error())
	}
	for addr, data := range datas {
		obs, err := observed(data)
		if err != nil {
			problems = append(problems, fmt.Sprintf("%s: /zookeeper/config %q: %v", names[addr], data, err))
			continue
		}
		final[names[addr]] = obs
	}
	var serving []string
	var notes []string
	for _, m := range c.members {
		if m.in || !m.Running() {
			continue
		}
		if m.removed && servesClients(ctx, h.e, m) {
			serving = append(serving, m.Name)
		}
		if !m.joined {
			notes = append(notes, fmt.Sprintf("%s is not a member (a spare, or emptied to be added again); srvr mode %q", m.Name, m.mode()))
		}
	}
	r := checker.CheckReconfig(h.ops, h.reads, final, serving)
	for _, p := range problems {
		r.OK = false
		r.Anomalies = append(r.Anomalies, p)
	}
	r.Notes = append(r.Notes, notes...)
	return r
}

// servesClients reports whether member m answers srvr as a serving
// member or gives a client a session.
func servesClients(ctx context.Context, e *env, m *member) bool {
	if m.mode() != "" {
		return true
	}
	cctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	conn, err := client.Connect(cctx, m.Addr, client.WithSessionTimeout(sessionTimeout), client.WithLogger(e.log))
	if err != nil {
		return false
	}
	conn.Close()
	return true
}
