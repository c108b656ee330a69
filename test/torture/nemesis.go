package torture

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"time"
)

// FaultKind is one kind of fault the nemesis injects.
type FaultKind string

// The fault kinds. Each is injected, held for a while, and healed before
// the next one starts.
const (
	// KillAny: kill -9 a random member, then restart it.
	KillAny FaultKind = "kill"
	// KillLeader: kill -9 the leader, then restart it.
	KillLeader FaultKind = "kill-leader"
	// Pause: SIGSTOP a member (the leader half the time) for longer
	// than the election timeout, then SIGCONT.
	Pause FaultKind = "pause"
	// PartitionHalves: cut the members into two random halves.
	PartitionHalves FaultKind = "partition-halves"
	// PartitionLeader: isolate the leader from every other member.
	PartitionLeader FaultKind = "partition-leader"
	// PartitionBridge: two halves that share one member, which talks
	// to both while they cannot talk to each other.
	PartitionBridge FaultKind = "partition-bridge"
	// Wipe: kill a member, delete its data directory (all but myid)
	// and restart it empty, so it rejoins from the others.
	Wipe FaultKind = "wipe"
	// DiskFull: fill a member's data filesystem, then free it.
	DiskFull FaultKind = "disk-full"
)

// AllFaults lists every fault kind that keeps the membership, in a fixed
// order ("all" in ParseFaults); ReconfigFaults (reconfig.go) lists those
// that change it.
var AllFaults = []FaultKind{KillAny, KillLeader, Pause, PartitionHalves, PartitionLeader, PartitionBridge, Wipe, DiskFull}

// ParseFaults reads a comma-separated list of fault kinds and groups:
// "all" for AllFaults, "reconfig" for ReconfigFaults ("all,reconfig" for
// both), "none" alone for none. A kind named twice counts once.
func ParseFaults(s string) ([]FaultKind, error) {
	switch s {
	case "":
		return AllFaults, nil
	case "none":
		return nil, nil
	}
	var kinds []FaultKind
	for _, f := range strings.Split(s, ",") {
		k := FaultKind(strings.TrimSpace(f))
		group := []FaultKind{k}
		switch {
		case k == "all":
			group = AllFaults
		case k == "reconfig":
			group = ReconfigFaults
		case !slices.Contains(AllFaults, k) && !slices.Contains(ReconfigFaults, k):
			return nil, fmt.Errorf("unknown fault %q (known: all %v, reconfig %v)", k, AllFaults, ReconfigFaults)
		}
		for _, g := range group {
			if !slices.Contains(kinds, g) {
				kinds = append(kinds, g)
			}
		}
	}
	return kinds, nil
}

// Fault is one step of a schedule: wait Quiet, inject Kind, hold it for
// Hold, heal. Pick chooses among the candidate members and Perm orders
// them for partitions, so the same seed gives the same choices.
type Fault struct {
	Kind  FaultKind
	Quiet time.Duration
	Hold  time.Duration
	Pick  int
	Perm  []int
}

// String describes the step ("pause hold=1.8s after 0.6s").
func (f Fault) String() string {
	return fmt.Sprintf("%s hold=%v after %v", f.Kind, f.Hold.Round(10*time.Millisecond), f.Quiet.Round(10*time.Millisecond))
}

// Schedule derives a run's faults from its seed, for procs processes
// (the members, and the spares of the reconfig nemesis): every enabled kind
// once, in a seeded order, each after a quiet spell of 0.2–1 s and held
// 0.8–2 s (a pause 1.2–2.4 s: longer than the election timeouts of both
// targets).
func Schedule(seed uint64, procs int, kinds []FaultKind) []Fault {
	rng := rand.New(rand.NewPCG(seed, 0x746f7274757265))
	order := append([]FaultKind(nil), kinds...)
	rng.Shuffle(len(order), func(i, j int) { order[i], order[j] = order[j], order[i] })
	var s []Fault
	for _, k := range order {
		hold := 800 + rng.IntN(1200)
		if k == Pause {
			hold += 400 // well past ZooKeeper's syncLimit×tickTime (1 s) too
		}
		s = append(s, Fault{
			Kind:  k,
			Quiet: time.Duration(200+rng.IntN(800)) * time.Millisecond,
			Hold:  time.Duration(hold) * time.Millisecond,
			Pick:  rng.IntN(1 << 20),
			Perm:  rng.Perm(procs),
		})
	}
	return s
}

// injection is what the nemesis did for one fault: when, to whom, and
// how it ended. Times are nanoseconds since the run began.
type injection struct {
	Fault
	Target  string // the member(s) affected
	At, End int64  // in effect from (the injection done), healed
	Err     string // why the fault could not be injected or healed
	// UnavailMs is how long after At the first write invoked after it
	// was acknowledged.
	UnavailMs int
}

// inject applies f to the cluster and returns a heal function and a
// description of its target. Faults choose among the members of the
// membership (every process, unless the reconfig nemesis runs), in the
// order f.Perm gives them.
func (c *cluster) inject(f Fault) (heal func() error, target string, err error) {
	if isReconfig(f.Kind) {
		return c.injectReconfig(f)
	}
	return c.injectClassic(f)
}

// order returns the members of the membership in the order f.Perm gives.
func (c *cluster) order(f Fault) []int {
	var in []int
	for _, i := range f.Perm {
		if i < len(c.members) && c.members[i].in {
			in = append(in, i)
		}
	}
	return in
}

// injectClassic injects one of the faults that do not change the
// membership.
func (c *cluster) injectClassic(f Fault) (heal func() error, target string, err error) {
	perm := c.order(f)
	n := len(perm)
	pick := func() *member { return c.members[perm[f.Pick%n]] }
	leaderOr := func() *member {
		if l := c.leader(); l != nil {
			return l
		}
		return pick()
	}
	switch f.Kind {
	case KillAny, KillLeader:
		m := pick()
		if f.Kind == KillLeader {
			m = leaderOr()
		}
		m.Kill9(c.t)
		return m.restart, m.Name, nil
	case Pause:
		m := pick()
		if f.Pick%2 == 0 {
			m = leaderOr()
		}
		if !m.Running() {
			return nil, m.Name, fmt.Errorf("%s is not running (it could not be restarted)", m.Name)
		}
		m.Pause(c.t)
		return func() error { m.Resume(c.t); return nil }, m.Name, nil
	case Wipe:
		m := pick()
		m.Kill9(c.t)
		if err := m.disk.Wipe("myid"); err != nil {
			return nil, m.Name, err
		}
		return m.restart, m.Name, nil
	case DiskFull:
		m := pick()
		if err := m.disk.Fill(); err != nil {
			return nil, m.Name, err
		}
		m.full = true
		return func() error { m.full = false; return m.disk.Free() }, m.Name, nil
	case PartitionHalves:
		cut := 1 + f.Pick%(n-1) // 1..n-1 members on one side
		groups := [][]int{perm[:cut], perm[cut:]}
		return c.partition(groups)
	case PartitionLeader:
		l := leaderOr()
		var rest []int
		for _, i := range perm {
			if c.members[i] != l {
				rest = append(rest, i)
			}
		}
		return c.partition([][]int{{l.index}, rest})
	case PartitionBridge:
		// perm[0] is the bridge; the others split in two.
		others := perm[1:]
		half := len(others) / 2
		a := append([]int{perm[0]}, others[:half]...)
		b := append([]int{perm[0]}, others[half:]...)
		return c.partition([][]int{a, b})
	}
	return nil, "", fmt.Errorf("unknown fault %q", f.Kind)
}

// partition cuts the network into groups (of member indexes). Processes
// outside the membership (spares, removed members) join the last group.
func (c *cluster) partition(groups [][]int) (func() error, string, error) {
	var out []int
	for _, m := range c.members {
		if !m.in {
			out = append(out, m.index)
		}
	}
	if len(out) > 0 {
		last := len(groups) - 1
		groups[last] = append(slices.Clone(groups[last]), out...)
	}
	var desc []string
	for _, g := range groups {
		g = append([]int(nil), g...)
		sort.Ints(g)
		var names []string
		for _, i := range g {
			names = append(names, fmt.Sprint(i+1))
		}
		desc = append(desc, "{"+strings.Join(names, ",")+"}")
	}
	if err := retry(func() error { return c.net.Partition(groups) }); err != nil {
		return nil, "", err
	}
	return func() error { return retry(c.net.Heal) }, strings.Join(desc, " "), nil
}

// retry runs an idempotent network change up to three times: on a
// loaded machine one `ip netns exec … nft` can fail to finish in time.
func retry(f func() error) error {
	var err error
	for try := 0; try < 3; try++ {
		if err = f(); err == nil {
			return nil
		}
	}
	return err
}

// healAll undoes whatever may still be broken at the end of a run:
// partitions, full disks, paused or dead members.
func (c *cluster) healAll() error {
	err := retry(c.net.Heal)
	for _, m := range c.members {
		if m.full {
			m.full = false
			if e := m.disk.Free(); e != nil && err == nil {
				err = e
			}
		}
		if m.Paused() {
			m.Resume(c.t)
		}
		if !m.Running() {
			if e := m.restart(); e != nil && err == nil {
				err = e
			}
		}
	}
	return err
}

// restart starts a member that is not running.
func (m *member) restart() error {
	_, err := m.TryStart()
	return err
}
