//go:build compat

package compat

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"
)

// An ensemble under test: three real server processes (warden or Apache ZooKeeper's
// QuorumPeerMain), configured as a ZooKeeper ensemble is configured: a zoo.cfg per member
// with the same server.N lines, a myid file in each dataDir.
//
// Each ensemble gets its own loopback block 127.A.B.0/24 (member N listens on 127.A.B.N)
// and kernel-chosen ports, so several ensembles (and other engineers' servers on
// 127.0.0.x) can run on one machine. The three members name their client address in the
// three ways zoo.cfg allows, so that one ensemble shows how each is reported:
//
//	server.1=H1:Q1:E1            member 1's zoo.cfg has clientPortAddress=H1, clientPort=C1
//	server.2=H2:Q2:E2;H2:C2      address and port in the server line
//	server.3=H3:Q3:E3;C3         port only: member 3 listens on 0.0.0.0:C3
//
// Timing: tickTime=200 keeps ZooKeeper's elections and Warden's raft ticks (tickTime/20)
// fast; initLimit=25 (5 s) leaves a loaded 2-core machine time to sync a JVM follower;
// syncLimit=10 gives Warden an election timeout of 200–400 ms (not 100–200) so a
// scheduling hiccup does not depose a healthy leader. maxSessionTimeout=30000 lifts the
// default 20×tickTime (4 s) so a client's 10 s session outlives any failover here.
var ensembleConfig = map[string]string{
	"tickTime":               "200",
	"initLimit":              "25",
	"syncLimit":              "10",
	"maxSessionTimeout":      "30000",
	"4lw.commands.whitelist": "*",
	"admin.enableServer":     "false",
}

// Bounds of the ensemble harness. Every wait in the ensemble tests is bounded by one of
// these (or by eventDeadline for client events).
const (
	ensembleSize          = 3
	ensembleStartDeadline = 60 * time.Second // all members started and roles settled (JVMs are slow)
	failoverDeadline      = 30 * time.Second // a new leader, a restarted member back in its role
	killDeadline          = 10 * time.Second // a SIGKILLed process group reaped
	srvrTimeout           = time.Second      // one srvr/mntr/conf/cons exchange
	ensembleLogTail       = 24 << 10         // bytes of each member's log shown on failure
)

// Member is one member of an Ensemble. Its embedded Server's Addr is its client address
// (host:clientPort), Dir its own directory (zoo.cfg, data/ with myid, server.log).
type Member struct {
	Server
	ID           int
	Host         string // 127.A.B.ID
	QuorumPort   int
	ElectionPort int
	ClientPort   int

	mu   sync.Mutex
	proc *memberProc // nil while the member is stopped
}

// memberProc is one run of a member's process.
type memberProc struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once cmd.Wait returned
	err    error         // cmd.Wait's result, valid after exited
}

// Ensemble is a running 3-member ensemble of one kind ("warden" or "zookeeper").
type Ensemble struct {
	Kind    string
	Members []*Member // Members[i].ID == i+1
	opts    ensembleOptions
}

// ensembleOptions vary an ensemble from the default one (startEnsembleWith).
type ensembleOptions struct {
	// extra zoo.cfg keys, over ensembleConfig (and passed to ZooKeeper as -D flags when
	// systemProperties names them).
	extra map[string]string
	// clientInServerLines gives member 1's server line its client address too
	// (";H1:C1"), so that /zookeeper/config names every member's client address, as
	// dynamic reconfiguration wants it.
	clientInServerLines bool
}

// config returns ensembleConfig with the ensemble's extra keys.
func (e *Ensemble) config() map[string]string {
	cfg := map[string]string{}
	for k, v := range ensembleConfig {
		cfg[k] = v
	}
	for k, v := range e.opts.extra {
		cfg[k] = v
	}
	return cfg
}

// ensembleSeq numbers the ensembles of this test binary (the third octet of their block).
var ensembleSeq atomic.Int32

// loopbackBlock returns "127.A.B." for a new ensemble: A from the process id (so two test
// binaries rarely share a block), B from ensembleSeq. 127.0.x.x is left to humans.
func loopbackBlock() string {
	n := ensembleSeq.Add(1)
	return fmt.Sprintf("127.%d.%d.", 20+os.Getpid()%200, 1+n%250)
}

// freePorts returns n TCP ports free on host, distinct from each other and from taken,
// and adds them to taken. The members listen on addresses of their own, where the kernel
// may hand out the same number twice; Normalize maps a number back to one member's port,
// so every port of an ensemble must be a number of its own. The listeners are held open
// until the ports are chosen, so a rejected number is not offered again.
func freePorts(t *testing.T, host string, n int, taken map[int]bool) []int {
	t.Helper()
	var ports []int
	for attempt := 0; len(ports) < n; attempt++ {
		if attempt == 100 {
			t.Fatalf("no %d distinct free ports on %s in 100 tries (taken: %v)", n, host, taken)
		}
		l, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
		if err != nil {
			t.Fatalf("free port on %s: %v", host, err)
		}
		defer l.Close()
		port := l.Addr().(*net.TCPAddr).Port
		if taken[port] {
			continue
		}
		taken[port] = true
		ports = append(ports, port)
	}
	return ports
}

// takenPorts returns the set of the members' ports, for freePorts.
func (e *Ensemble) takenPorts() map[int]bool {
	taken := map[int]bool{}
	for _, m := range e.Members {
		taken[m.QuorumPort], taken[m.ElectionPort], taken[m.ClientPort] = true, true, true
	}
	return taken
}

// startEnsemble writes the three members' configurations, starts them together and
// returns once exactly one reports Mode: leader and the others Mode: follower. Every
// member still running is stopped in t.Cleanup; on failure the tail of each log is shown.
func startEnsemble(t *testing.T, kind string) *Ensemble {
	t.Helper()
	return startEnsembleWith(t, kind, ensembleOptions{})
}

// startEnsembleWith is startEnsemble with options.
func startEnsembleWith(t *testing.T, kind string, opts ensembleOptions) *Ensemble {
	t.Helper()
	if kind == "warden" {
		if _, err := buildWarden(); err != nil {
			t.Fatalf("warden binary: %v", err)
		}
	}
	e := &Ensemble{Kind: kind, opts: opts}
	block := loopbackBlock()
	root := t.TempDir()
	taken := map[int]bool{}
	for id := 1; id <= ensembleSize; id++ {
		host := block + strconv.Itoa(id)
		p := freePorts(t, host, 3, taken)
		client := p[2]
		if id == 3 { // listens on 0.0.0.0: the port must be free on every address
			client = freePorts(t, "0.0.0.0", 1, taken)[0]
		}
		dir := filepath.Join(root, fmt.Sprintf("member%d", id))
		e.Members = append(e.Members, &Member{
			Server: Server{
				Kind:       kind,
				Addr:       net.JoinHostPort(host, strconv.Itoa(client)),
				Dir:        dir,
				ConfigPath: filepath.Join(dir, "zoo.cfg"),
				LogPath:    filepath.Join(dir, "server.log"),
			},
			ID: id, Host: host, QuorumPort: p[0], ElectionPort: p[1], ClientPort: client,
		})
	}
	for _, m := range e.Members {
		e.writeMemberConfig(t, m)
	}
	t.Cleanup(func() {
		var wg sync.WaitGroup
		for _, m := range e.Members {
			wg.Add(1)
			go func() {
				defer wg.Done()
				e.stop(t, m)
			}()
		}
		wg.Wait()
		if t.Failed() {
			for _, m := range e.Members {
				dumpMemberLog(t, m)
			}
		}
	})
	for _, m := range e.Members {
		e.Start(t, m)
	}
	e.WaitRoles(t, e.Members, ensembleStartDeadline)
	return e
}

// serverLines are the server.N lines every member's zoo.cfg carries (see Ensemble).
func (e *Ensemble) serverLines() []string {
	var lines []string
	for _, m := range e.Members {
		line := fmt.Sprintf("server.%d=%s:%d:%d", m.ID, m.Host, m.QuorumPort, m.ElectionPort)
		switch {
		case m.ID == 1 && e.opts.clientInServerLines:
			line += fmt.Sprintf(";%s:%d", m.Host, m.ClientPort)
		case m.ID == 2:
			line += fmt.Sprintf(";%s:%d", m.Host, m.ClientPort)
		case m.ID == 3:
			line += fmt.Sprintf(";%d", m.ClientPort)
		}
		lines = append(lines, line)
	}
	return lines
}

// writeMemberConfig creates m's directory, data/myid and zoo.cfg (ensembleConfig, its
// dataDir, member 1's clientPortAddress/clientPort, the server lines).
func (e *Ensemble) writeMemberConfig(t *testing.T, m *Member) {
	t.Helper()
	data := filepath.Join(m.Dir, "data")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, "myid"), []byte(fmt.Sprintf("%d\n", m.ID)), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg := e.config()
	var keys []string
	for k := range cfg {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, cfg[k])
	}
	fmt.Fprintf(&b, "dataDir=%s\n", data)
	if m.ID == 1 {
		fmt.Fprintf(&b, "clientPortAddress=%s\nclientPort=%d\n", m.Host, m.ClientPort)
	}
	for _, l := range e.serverLines() {
		b.WriteString(l + "\n")
	}
	if err := os.WriteFile(m.ConfigPath, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// command returns the program and arguments that run member m.
func (e *Ensemble) command(m *Member) (string, []string) {
	if e.Kind == "warden" {
		return wardenBin, []string{"server", m.ConfigPath}
	}
	args := []string{"-Xms32m", "-Xmx192m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dorg.slf4j.simpleLogger.showDateTime=true", "-cp", javaClasspath()}
	var props []string
	for k, v := range e.config() {
		if p, ok := systemProperties[k]; ok {
			props = append(props, "-D"+p+"="+v)
		}
	}
	sort.Strings(props)
	args = append(args, props...)
	return "java", append(args, "org.apache.zookeeper.server.quorum.QuorumPeerMain", m.ConfigPath)
}

// Start starts m's process (appending to its log). It does not wait for a role: a member
// of an ensemble has none until a quorum runs. A member already running is a test bug.
func (e *Ensemble) Start(t *testing.T, m *Member) {
	t.Helper()
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc != nil {
		t.Fatalf("member %d already running", m.ID)
	}
	logf, err := os.OpenFile(m.LogPath, os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintf(logf, "==== harness: starting member %d at %s ====\n", m.ID, time.Now().Format(time.RFC3339Nano))
	name, args := e.command(m)
	cmd := exec.Command(name, args...)
	cmd.Dir = m.Dir
	cmd.Stdout = logf
	cmd.Stderr = logf
	// Own process group (Kill hits the JVM's children too); Pdeathsig: a test binary
	// killed by -timeout must not leave members behind.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := cmd.Start(); err != nil {
		logf.Close()
		t.Fatalf("start %s member %d: %v", e.Kind, m.ID, err)
	}
	p := &memberProc{cmd: cmd, exited: make(chan struct{})}
	go func() {
		p.err = cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	m.proc = p
}

// Kill sends SIGKILL to m's process group and waits (bounded) until it is gone: the
// kill -9 of an operator, or a power cut without the disk loss.
func (e *Ensemble) Kill(t *testing.T, m *Member) {
	t.Helper()
	m.mu.Lock()
	p := m.proc
	m.proc = nil
	m.mu.Unlock()
	if p == nil {
		t.Fatalf("kill member %d: not running", m.ID)
	}
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	select {
	case <-p.exited:
	case <-time.After(killDeadline):
		t.Fatalf("member %d (pid %d) survived SIGKILL for %v", m.ID, p.cmd.Process.Pid, killDeadline)
	}
	t.Logf("%s member %d killed (-9)", e.Kind, m.ID)
}

// stop ends m's process, if running: SIGTERM, then SIGKILL (stopProcess).
func (e *Ensemble) stop(t *testing.T, m *Member) {
	m.mu.Lock()
	p := m.proc
	m.proc = nil
	m.mu.Unlock()
	if p != nil {
		stopProcess(t, p.cmd, p.exited)
	}
}

// Heal restarts the members a previous scenario killed and left stopped (after a
// failure) and waits for the roles to settle. A member whose process exited on its own
// fails the test: members only stop when the harness stops them.
func (e *Ensemble) Heal(t *testing.T) {
	t.Helper()
	for _, m := range e.Members {
		m.mu.Lock()
		p := m.proc
		m.mu.Unlock()
		if p != nil {
			select {
			case <-p.exited:
				t.Errorf("%s member %d exited on its own: %v", e.Kind, m.ID, p.err)
				m.mu.Lock()
				m.proc = nil
				m.mu.Unlock()
			default:
				continue
			}
		}
		e.Start(t, m)
	}
	e.WaitRoles(t, e.Members, failoverDeadline)
}

// Running reports whether m's process is running (started and not exited).
func (m *Member) Running() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.proc == nil {
		return false
	}
	select {
	case <-m.proc.exited:
		return false
	default:
		return true
	}
}

// Mode is what srvr says about a member: "leader", "follower", "observer", "standalone",
// "not-serving" (the "not currently serving requests" reply), or "down" (no answer).
func (m *Member) Mode() string {
	out, err := fourLetterWord(m.Addr, "srvr", srvrTimeout)
	if err != nil || out == "" {
		return "down"
	}
	if strings.Contains(out, "not currently serving requests") {
		return "not-serving"
	}
	for _, line := range strings.Split(out, "\n") {
		if mode, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(mode)
		}
	}
	return "unknown"
}

// modes returns the modes of ms, in order.
func modes(ms []*Member) []string {
	var out []string
	for _, m := range ms {
		out = append(out, m.Mode())
	}
	return out
}

// rolesSettled is how many polls in a row must agree on the roles before WaitRoles
// believes them: right after an election a member may still report its previous role.
const rolesSettled = 3

// WaitRoles polls srvr on the members ms until exactly one reports Mode: leader and all
// others Mode: follower, rolesSettled polls in a row with the same leader, and returns
// the leader. It fails the test after deadline, or at once if a member's process has
// exited.
func (e *Ensemble) WaitRoles(t *testing.T, ms []*Member, deadline time.Duration) *Member {
	t.Helper()
	end := time.Now().Add(deadline)
	var last []string
	var settled *Member
	agreed := 0
	for {
		for _, m := range ms {
			if !m.Running() {
				t.Fatalf("%s member %d is not running (waiting for roles)", e.Kind, m.ID)
			}
		}
		last = modes(ms)
		var leader *Member
		leaders, followers := 0, 0
		for i, mode := range last {
			switch mode {
			case "leader":
				leaders++
				leader = ms[i]
			case "follower":
				followers++
			}
		}
		switch {
		case leaders != 1 || followers != len(ms)-1:
			agreed = 0
		case leader == settled:
			agreed++
		default:
			settled, agreed = leader, 1
		}
		if agreed >= rolesSettled {
			return leader
		}
		if time.Now().After(end) {
			t.Fatalf("%s members %v: no single leader with followers within %v; modes %v", e.Kind, ids(ms), deadline, last)
		}
		time.Sleep(pollInterval)
	}
}

// WaitMode polls srvr on m until it reports mode, bounded by deadline.
func (e *Ensemble) WaitMode(t *testing.T, m *Member, mode string, deadline time.Duration) {
	t.Helper()
	end := time.Now().Add(deadline)
	for {
		got := m.Mode()
		if got == mode {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("%s member %d: mode %q, want %q within %v", e.Kind, m.ID, got, mode, deadline)
		}
		time.Sleep(pollInterval)
	}
}

// Roles returns the leader and the followers (in id order) of a healthy ensemble, after
// waiting for the roles to settle.
func (e *Ensemble) Roles(t *testing.T) (leader *Member, followers []*Member) {
	t.Helper()
	leader = e.WaitRoles(t, e.Members, failoverDeadline)
	for _, m := range e.Members {
		if m != leader {
			followers = append(followers, m)
		}
	}
	return leader, followers
}

// Others returns the members other than the given ones, in id order.
func (e *Ensemble) Others(not ...*Member) []*Member {
	var out []*Member
	for _, m := range e.Members {
		skip := false
		for _, n := range not {
			skip = skip || m == n
		}
		if !skip {
			out = append(out, m)
		}
	}
	return out
}

// ConnectString lists the client addresses of ms in the given order.
func ConnectString(ms ...*Member) string {
	var addrs []string
	for _, m := range ms {
		addrs = append(addrs, m.Addr)
	}
	return strings.Join(addrs, ",")
}

// Pinned returns the client addresses with m first, then the other members in id order
// after it (wrapping around): a client that tries hosts in order starts on m.
func (e *Ensemble) Pinned(m *Member) []*Member {
	out := []*Member{m}
	for i := 1; i < len(e.Members); i++ {
		out = append(out, e.Members[(m.ID-1+i)%len(e.Members)])
	}
	return out
}

var reConsSid = regexp.MustCompile(`sid=0x([0-9a-fA-F]+)`)

// SessionMember returns the member whose cons lists session sid, polling (bounded by
// eventDeadline) while the client may still be connecting; nil members are skipped.
func (e *Ensemble) SessionMember(t *testing.T, sid int64) *Member {
	t.Helper()
	end := time.Now().Add(eventDeadline)
	for {
		for _, m := range e.Members {
			if !m.Running() {
				continue
			}
			out, err := fourLetterWord(m.Addr, "cons", srvrTimeout)
			if err != nil {
				continue
			}
			for _, g := range reConsSid.FindAllStringSubmatch(out, -1) {
				if v, err := strconv.ParseUint(g[1], 16, 64); err == nil && int64(v) == sid {
					return m
				}
			}
		}
		if time.Now().After(end) {
			t.Fatalf("%s: no member lists session %#x in cons within %v", e.Kind, sid, eventDeadline)
		}
		time.Sleep(pollInterval)
	}
}

// RoleOf names m's role relative to leader: "leader" or "follower".
func RoleOf(m, leader *Member) string {
	if m == leader {
		return "leader"
	}
	return "follower"
}

func ids(ms []*Member) []int {
	var out []int
	for _, m := range ms {
		out = append(out, m.ID)
	}
	return out
}

// Normalize replaces the members' hosts and ports by <hostN>, <quorumN>, <electionN> and
// <clientN>, then applies normalize (zxids, session ids, times, other ports, temp paths).
// A port is only replaced after ':', ';' or '=', so other numbers stay.
func (e *Ensemble) Normalize(transcript string) string {
	for _, m := range e.Members {
		transcript = regexp.MustCompile(regexp.QuoteMeta(m.Host)+`\b`).ReplaceAllString(transcript, fmt.Sprintf("<host%d>", m.ID))
		for label, port := range map[string]int{"quorum": m.QuorumPort, "election": m.ElectionPort, "client": m.ClientPort} {
			re := regexp.MustCompile(`([:;=])` + strconv.Itoa(port) + `\b`)
			transcript = re.ReplaceAllString(transcript, fmt.Sprintf("${1}<%s%d>", label, m.ID))
		}
	}
	return normalize(transcript)
}

// dumpMemberLog prints the tail of a member's log into the test output.
func dumpMemberLog(t *testing.T, m *Member) {
	b, err := os.ReadFile(m.LogPath)
	if err != nil {
		t.Logf("%s member %d log: %v", m.Kind, m.ID, err)
		return
	}
	if len(b) > ensembleLogTail {
		b = b[len(b)-ensembleLogTail:]
	}
	t.Logf("---- %s member %d log (%s), last %d bytes ----\n%s", m.Kind, m.ID, m.LogPath, len(b), b)
}

// ensembleScenario is one scenario of TestEnsemble: it runs against a healthy ensemble,
// may kill and restart members (leaving all of them running again), and returns a
// transcript that Ensemble.Normalize makes comparable between the two implementations.
type ensembleScenario struct {
	name string
	run  func(t *testing.T, e *Ensemble) string
}

// differentialEnsemble starts one ensemble per server kind (serverKinds), runs the
// scenarios against it in order (each in a subtest kind/scenario), then compares each
// scenario's normalised transcripts between the kinds (ZooKeeper's is the reference),
// after the intended differences of knownDifferences. A scenario that failed on a kind
// is not compared.
func differentialEnsemble(t *testing.T, scenarios []ensembleScenario) {
	t.Helper()
	kinds := serverKinds()
	got := map[string]map[string]string{} // scenario -> run name -> normalised transcript
	var names []string
	for i, kind := range kinds {
		name := kind
		if i > 0 && kind == kinds[0] {
			name = kind + "-peer"
		}
		names = append(names, name)
		t.Run(name, func(t *testing.T) {
			start := time.Now()
			e := startEnsemble(t, kind)
			t.Logf("%s ensemble up in %v", kind, time.Since(start).Round(time.Millisecond))
			for _, sc := range scenarios {
				t.Run(sc.name, func(t *testing.T) {
					start := time.Now()
					var raw string
					defer func() {
						if t.Failed() {
							t.Logf("transcript so far:\n%s", raw)
						}
					}()
					e.Heal(t)
					raw = sc.run(t, e)
					if !t.Failed() {
						if got[sc.name] == nil {
							got[sc.name] = map[string]string{}
						}
						got[sc.name][name] = e.Normalize(raw)
					}
					t.Logf("%s/%s took %v", kind, sc.name, time.Since(start).Round(time.Millisecond))
				})
			}
		})
	}
	for _, sc := range scenarios {
		runs := got[sc.name]
		if len(runs) == 0 {
			continue
		}
		test := t.Name() + "/" + sc.name
		ref := names[0]
		refText, ok := runs[ref]
		if !ok {
			t.Logf("%s: %s did not pass; transcripts not compared", sc.name, ref)
			continue
		}
		refText = applyKnownDifferences(test, refText)
		if len(names) == 1 {
			t.Logf("%s: only %s ran; normalised transcript:\n%s", sc.name, ref, refText)
			continue
		}
		for _, other := range names[1:] {
			text, ok := runs[other]
			if !ok {
				t.Errorf("%s: failed against %s; transcripts not compared", sc.name, other)
				continue
			}
			text = applyKnownDifferences(test, text)
			if text != refText {
				t.Errorf("%s: transcripts differ (after normalize):\n%s", sc.name, unifiedDiff(ref, other, refText, text))
			}
		}
	}
}
