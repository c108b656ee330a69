package netns

import (
	"errors"
	"fmt"
	"net/netip"
	"os"
	"strconv"
	"sync"
)

// ErrClosed reports a call on a Net after Close.
var ErrClosed = errors.New("netns: network is closed")

// MaxMembers is the most members a Net can have: member i has address
// 10.A.B.(11+i).
const MaxMembers = 243

// Names inside the hub and member namespaces; they cannot collide with
// the host's or another Net's, since each namespace has its own.
const (
	bridgeName    = "br0"
	hubHostPort   = "host"
	memberIfName  = "eth0"
	hostOctet     = 1
	firstMemberIP = 11
)

// Net is one run's test network: a hub namespace with a bridge, n member
// namespaces, and a link from the host namespace. See the package doc for
// the topology.
//
// Its methods are safe for concurrent use.
type Net struct {
	key      string
	subnet   netip.Prefix
	hostAddr netip.Addr
	hosts    []netip.Addr // hosts[i] is member i's address
	hub      string
	members  []string // members[i] is member i's namespace
	hostLink string

	mu sync.Mutex
	// st is what the state file records; Mounts grows with MountDisk.
	st *state
	// closed is set by the first Close; torn once teardown succeeded.
	// Invariant: torn implies closed.
	closed, torn bool
}

// Create builds the network for n members (1 <= n <= MaxMembers). prefix
// identifies the run in names: 1 to 6 characters of [a-z0-9], e.g.
// "wt3f2a" (use a "wt" prefix so that leftovers without a state file are
// swept too). The Net's key is "<prefix>-<k>" with the smallest free k,
// so several Nets may share a prefix. Create picks a 10.A.B.0/24
// (A in 200..239) that no host interface, host route or live Net uses.
//
// Create first removes what earlier Nets whose owner process is dead
// left behind (see the package doc). On failure it removes what it made.
// It fails with ErrNotRoot or ErrMissingCommand when the machine cannot
// run it.
func Create(prefix string, n int) (*Net, error) {
	if !prefixRE.MatchString(prefix) {
		return nil, fmt.Errorf("netns: prefix %q: want 1 to 6 characters of [a-z0-9]", prefix)
	}
	if n < 1 || n > MaxMembers {
		return nil, fmt.Errorf("netns: %d members: want 1 to %d", n, MaxMembers)
	}
	if err := checkPrereqs(); err != nil {
		return nil, err
	}
	l, err := lock()
	if err != nil {
		return nil, err
	}
	defer l.unlock()
	live, err := sweep()
	if err != nil {
		return nil, fmt.Errorf("netns: removing leftovers of earlier runs: %w", err)
	}

	key, err := freeKey(prefix, live)
	if err != nil {
		return nil, err
	}
	used, err := hostPrefixes()
	if err != nil {
		return nil, err
	}
	for _, s := range live {
		if p, err := netip.ParsePrefix(s.Subnet); err == nil {
			used = append(used, p)
		}
	}
	subnet, err := chooseSubnet(used)
	if err != nil {
		return nil, err
	}
	start, err := procStart(os.Getpid())
	if err != nil {
		return nil, fmt.Errorf("netns: own start time: %w", err)
	}

	base := subnet.Addr().As4()
	nt := &Net{
		key:      key,
		subnet:   subnet,
		hostAddr: netip.AddrFrom4([4]byte{base[0], base[1], base[2], hostOctet}),
		hub:      key + "-hub",
		hostLink: key + "-h",
	}
	for i := range n {
		nt.hosts = append(nt.hosts, netip.AddrFrom4([4]byte{base[0], base[1], base[2], byte(firstMemberIP + i)}))
		nt.members = append(nt.members, key+"-m"+strconv.Itoa(i))
	}
	nt.st = &state{
		Key:        key,
		OwnerPID:   os.Getpid(),
		OwnerStart: start,
		Subnet:     subnet.String(),
		Namespaces: append([]string{nt.hub}, nt.members...),
		HostLink:   nt.hostLink,
	}
	if err := nt.st.write(); err != nil {
		return nil, err
	}
	if err := nt.build(); err != nil {
		return nil, errors.Join(err, nt.Close())
	}
	return nt, nil
}

// freeKey returns "<prefix>-<k>" for the smallest k in 0..99 that no
// state file, namespace or host link uses.
func freeKey(prefix string, live []*state) (string, error) {
	taken := map[string]bool{}
	for _, s := range live {
		taken[s.Key] = true
	}
	links, err := listHostLinks()
	if err != nil {
		return "", err
	}
	linkSet := map[string]bool{}
	for _, l := range links {
		linkSet[l] = true
	}
	for k := range 100 {
		key := prefix + "-" + strconv.Itoa(k)
		if taken[key] || namespaceExists(key+"-hub") || namespaceExists(key+"-m0") || linkSet[key+"-h"] {
			continue
		}
		if _, err := os.Stat(statePath(key)); err == nil {
			continue
		}
		return key, nil
	}
	return "", fmt.Errorf("netns: prefix %q: 100 networks already exist; close some", prefix)
}

// build makes the namespaces and links; the state file already lists
// them.
func (n *Net) build() error {
	bits := strconv.Itoa(n.subnet.Bits())
	steps := [][]string{
		{"netns", "add", n.hub},
	}
	for _, ns := range n.members {
		steps = append(steps, []string{"netns", "add", ns})
	}
	steps = append(steps,
		[]string{"-n", n.hub, "link", "set", "lo", "up"},
		[]string{"-n", n.hub, "link", "add", bridgeName, "type", "bridge"},
		[]string{"-n", n.hub, "link", "set", bridgeName, "up"},
		[]string{"link", "add", n.hostLink, "type", "veth", "peer", "name", hubHostPort, "netns", n.hub},
		[]string{"addr", "add", n.hostAddr.String() + "/" + bits, "dev", n.hostLink},
		[]string{"link", "set", n.hostLink, "up"},
		[]string{"-n", n.hub, "link", "set", hubHostPort, "master", bridgeName, "up"},
	)
	for i, ns := range n.members {
		port := "m" + strconv.Itoa(i)
		steps = append(steps,
			[]string{"-n", n.hub, "link", "add", port, "type", "veth", "peer", "name", memberIfName, "netns", ns},
			[]string{"-n", n.hub, "link", "set", port, "master", bridgeName, "up"},
			[]string{"-n", ns, "addr", "add", n.hosts[i].String() + "/" + bits, "dev", memberIfName},
			[]string{"-n", ns, "link", "set", memberIfName, "up"},
			[]string{"-n", ns, "link", "set", "lo", "up"},
		)
	}
	for _, s := range steps {
		if _, err := ip(s...); err != nil {
			return err
		}
	}
	// Fail now, not at the first Partition, if nftables does not work
	// here (e.g. a kernel without nf_tables).
	if _, err := run(healRuleset, "ip", "netns", "exec", n.members[0], "nft", "-f", "-"); err != nil {
		return fmt.Errorf("netns: nftables does not work in a member namespace: %w", err)
	}
	return nil
}

// Key returns the Net's key, "<prefix>-<k>", which starts the names of
// its namespaces and host link.
func (n *Net) Key() string { return n.key }

// Hosts returns the members' addresses ("10.A.B.11", ...): index i is
// member i. The caller owns the returned slice.
func (n *Net) Hosts() []string {
	out := make([]string, len(n.hosts))
	for i, a := range n.hosts {
		out[i] = a.String()
	}
	return out
}

// HostAddr returns the host namespace's address on the test network
// ("10.A.B.1"), which members reach and Partition never cuts.
func (n *Net) HostAddr() string { return n.hostAddr.String() }

// Namespace returns member i's namespace name (as ip netns knows it), for
// running a process in it. It panics if i is out of range.
func (n *Net) Namespace(i int) string { return n.members[i] }

// Command wraps a command to run in member i's namespace: it returns
// ["ip", "netns", "exec", ns, name, args...]. ip netns exec execs the
// program, so the started process's pid is the program's. The process
// sees the host's mounts as they were when it started (ip netns exec
// gives it a slave copy of the mount namespace), so mount disks first.
// It panics if i is out of range.
func (n *Net) Command(i int, name string, args ...string) []string {
	return append([]string{"ip", "netns", "exec", n.members[i], name}, args...)
}

// Close deletes every namespace, link and mount the Net made, first
// killing (SIGKILL) any process still running in its namespaces, and
// removes its state file. It is idempotent: after a failure a later
// Close retries; after success it does nothing.
func (n *Net) Close() error {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	if n.torn {
		return nil
	}
	if err := n.st.teardown(); err != nil {
		return err
	}
	n.torn = true
	return nil
}
