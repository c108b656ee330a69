package torture

import (
	"fmt"
	"net"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/test/proc"
	"github.com/wardenzk/warden/test/torture/netns"
)

// Target is the system under test: Warden or, as the baseline, Apache
// ZooKeeper 3.8 from Debian.
type Target string

// The targets.
const (
	Warden    Target = "warden"
	ZooKeeper Target = "zookeeper"
)

// The members' timing, the same for both targets. With tickTime=200
// ZooKeeper's followers give up on a silent leader after syncLimit ticks
// (1 s); Warden's raft election timeout is 2×syncLimit ticks of tickTime/20
// (100–200 ms). Sessions may last up to 30 s.
const (
	tickTime          = 200
	initLimit         = 10
	syncLimit         = 5
	snapCount         = 500 // snapshots often, so snapshots are taken and installed under faults
	maxSessionTimeout = 30000

	clientPort   = 2181
	quorumPort   = 2888
	electionPort = 3888

	// diskSize is each member's data filesystem (a tmpfs that the
	// disk-full fault fills). ZooKeeper preallocates its log in 4 MiB
	// steps here (preAllocSize).
	diskSize = 128 << 20
)

// member is one ensemble member: a server process in its own network
// namespace, with its data directory on a tmpfs of its own.
type member struct {
	proc.Server
	index   int    // 0-based; myid is index+1
	host    string // its address on the test network
	dataDir string
	disk    *netns.Disk
	full    bool // its disk is filled

	// With the reconfig nemesis (see reconfig.go): in is set while the
	// member is in the ensemble's membership as the nemesis last read it,
	// observer while it is an observer there; joined is set once it has
	// been part of the membership (it is then wiped before it is added
	// again); removed while a reconfig has removed it; written is the
	// membership its zoo.cfg was written with.
	in, observer, joined, removed bool
	written                       string
}

// cluster is one run's ensemble: n members of one target on a test
// network. It is driven from the test goroutine only.
type cluster struct {
	t       *testing.T
	target  Target
	net     *netns.Net
	members []*member // every process: the ensemble, then the spares

	// reconfig is set when the run's faults change the membership; the
	// members then allow reconfig and have a super user, and the
	// history of the membership changes is kept here.
	reconfig *reconfigHistory
}

// startCluster builds the test network, writes each member's zoo.cfg and
// myid, starts every member and waits until the ensemble serves. With
// spares > 0 (the reconfig nemesis) the ensemble allows reconfig, and
// spares more processes start, not part of it: each one's zoo.cfg lists
// the n members plus itself, as an operator starts a member to be added.
func startCluster(t *testing.T, target Target, n, spares int, prefix, dir string) *cluster {
	t.Helper()
	nw, err := netns.Create(prefix, n+spares)
	if err != nil {
		t.Fatalf("test network: %v", err)
	}
	c := &cluster{t: t, target: target, net: nw}
	if spares > 0 {
		c.reconfig = &reconfigHistory{}
	}
	t.Cleanup(c.close)
	hosts := nw.Hosts()
	var servers []string
	for i, h := range hosts[:n] {
		servers = append(servers, fmt.Sprintf("server.%d=%s:%d:%d:participant;%d", i+1, h, quorumPort, electionPort, clientPort))
	}
	var bin string
	if target == Warden {
		bin = proc.Warden(t)
	}
	for i, h := range hosts {
		mdir := filepath.Join(dir, fmt.Sprintf("member%d", i+1))
		m := &member{index: i, host: h, dataDir: filepath.Join(mdir, "data"), in: i < n}
		m.Name = fmt.Sprintf("server.%d", i+1)
		m.Config = filepath.Join(mdir, "zoo.cfg")
		m.Log = filepath.Join(mdir, "server.log")
		m.Addr = net.JoinHostPort(h, strconv.Itoa(clientPort))
		if err := os.MkdirAll(mdir, 0o755); err != nil {
			t.Fatal(err)
		}
		if m.disk, err = nw.MountDisk(m.dataDir, diskSize); err != nil {
			t.Fatalf("%s: data disk: %v", m.Name, err)
		}
		if err := os.WriteFile(filepath.Join(m.dataDir, "myid"), []byte(fmt.Sprintf("%d\n", i+1)), 0o644); err != nil {
			t.Fatal(err)
		}
		lines := servers
		if !m.in {
			lines = append(slices.Clone(servers), m.serverLine(false))
		}
		if err := c.writeConfig(m, lines); err != nil {
			t.Fatal(err)
		}
		if target == Warden {
			m.Bin = bin
			m.Argv = nw.Command(i, bin, "server", m.Config)
		} else {
			m.Argv = nw.Command(i, "java", zkArgs(m.Config)...)
		}
		c.members = append(c.members, m)
	}
	for _, m := range c.members {
		m.Start(t)
	}
	if err := c.waitServing(recoverDeadline); err != nil {
		t.Fatalf("ensemble did not start: %v", err)
	}
	return c
}

// writeConfig writes member m's zoo.cfg with the server lines given.
func (c *cluster) writeConfig(m *member, servers []string) error {
	cfg := fmt.Sprintf("tickTime=%d\ninitLimit=%d\nsyncLimit=%d\nmaxSessionTimeout=%d\nsnapCount=%d\n"+
		"dataDir=%s\nclientPort=%d\n4lw.commands.whitelist=*\nadmin.enableServer=false\n%s\n",
		tickTime, initLimit, syncLimit, maxSessionTimeout, snapCount, m.dataDir, clientPort, strings.Join(servers, "\n"))
	if c.target == ZooKeeper {
		cfg += "standaloneEnabled=false\nreconfigEnabled=false\n"
	}
	if c.reconfig != nil {
		cfg += "reconfigEnabled=true\nDigestAuthenticationProvider.superDigest=" + auth.DigestID(superUser) + "\n"
	}
	m.written = canonicalLines(servers)
	return os.WriteFile(m.Config, []byte(cfg), 0o644)
}

// zkArgs are the JVM arguments that run a ZooKeeper member from config.
func zkArgs(config string) []string {
	return []string{"-Xms32m", "-Xmx160m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-Dzookeeper.4lw.commands.whitelist=*", "-Dzookeeper.admin.enableServer=false",
		"-Dzookeeper.preAllocSize=4096", "-Dzookeeper.snapCount=" + strconv.Itoa(snapCount),
		"-Dorg.slf4j.simpleLogger.showDateTime=true",
		"-cp", proc.ZooKeeperClasspath(), "org.apache.zookeeper.server.quorum.QuorumPeerMain", config}
}

// close kills every member and removes the test network; on failure it
// prints every member's log.
func (c *cluster) close() {
	for _, m := range c.members {
		if m.Paused() {
			m.Resume(c.t)
		}
		m.SignalKill()
	}
	for _, m := range c.members {
		m.Reap(c.t)
	}
	if c.t.Failed() {
		for _, m := range c.members {
			m.DumpLog(c.t)
		}
	}
	if err := c.net.Close(); err != nil {
		c.t.Errorf("test network: %v", err)
	}
}

// inMembers returns the members of the ensemble's membership (every
// process, unless the reconfig nemesis runs).
func (c *cluster) inMembers() []*member {
	var in []*member
	for _, m := range c.members {
		if m.in {
			in = append(in, m)
		}
	}
	return in
}

// connectString lists the client address of every member of the
// membership.
func (c *cluster) connectString() string {
	var addrs []string
	for _, m := range c.inMembers() {
		addrs = append(addrs, m.Addr)
	}
	return strings.Join(addrs, ",")
}

// mode asks member m for its role with the srvr command: "leader",
// "follower", "observer", or "" when it does not serve (or does not
// answer).
func (m *member) mode() string {
	if !m.Running() || m.Paused() {
		return ""
	}
	out, err := proc.FourLetterWord(m.Addr, "srvr", 500*time.Millisecond)
	if err != nil {
		return ""
	}
	for _, line := range strings.Split(out, "\n") {
		if v, ok := strings.CutPrefix(line, "Mode: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// leader returns the member that says it leads, or nil.
func (c *cluster) leader() *member {
	for _, m := range c.inMembers() {
		if m.mode() == "leader" {
			return m
		}
	}
	return nil
}

// waitServing waits until every member of the membership serves (one
// leading), bounded by d.
func (c *cluster) waitServing(d time.Duration) error {
	deadline := time.Now().Add(d)
	for {
		var modes []string
		leaders, serving := 0, 0
		in := c.inMembers()
		for _, m := range in {
			mode := m.mode()
			modes = append(modes, fmt.Sprintf("%s=%q", m.Name, mode))
			if mode != "" {
				serving++
			}
			if mode == "leader" {
				leaders++
			}
		}
		if leaders == 1 && serving == len(in) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not every member serving within %v: %s", d, strings.Join(modes, " "))
		}
		time.Sleep(50 * time.Millisecond)
	}
}
