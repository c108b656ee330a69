package netns

import (
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// Environment of the helper process TestStaleLeftoversRemoved starts:
// it creates a Net and a disk and exits without closing them.
const (
	helperEnv    = "WARDEN_NETNS_HELPER"
	helperDirEnv = "WARDEN_NETNS_HELPER_DIR"
)

func TestMain(m *testing.M) {
	if os.Getenv(helperEnv) == "leak" {
		nt, err := Create("wtleak", 2)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		if _, err := nt.MountDisk(os.Getenv(helperDirEnv), 1<<20); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Println(nt.Key())
		os.Exit(0) // no Close: the leftovers are the point
	}
	os.Exit(m.Run())
}

// requireRoot fails the test, loudly, when the machine cannot run it.
func requireRoot(t *testing.T) {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Fatal("netns tests need root (network namespaces, veth links, nftables, tmpfs mounts); run them as root, as CI does")
	}
	for _, c := range requiredCommands {
		if _, err := exec.LookPath(c.name); err != nil {
			t.Fatalf("netns tests need the %q command: apt-get install %s", c.name, c.pkg)
		}
	}
}

func create(t *testing.T, n int) *Net {
	t.Helper()
	requireRoot(t)
	nt, err := Create("wttest", n)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := nt.Close(); err != nil {
			t.Error(err)
		}
	})
	return nt
}

// memberPort is where every member's echo listener listens.
const memberPort = "7000"

const (
	okTimeout  = 2 * time.Second
	cutTimeout = 300 * time.Millisecond
)

// serveEcho starts an echo listener on l, closed at the end of the test.
func serveEcho(t *testing.T, l net.Listener) {
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				io.Copy(c, c)
			}()
		}
	}()
}

// listenMembers starts an echo listener on every member's port 7000 and
// one on the host address; it returns the host listener's address.
func listenMembers(t *testing.T, nt *Net) string {
	t.Helper()
	for i := range nt.Hosts() {
		err := nt.Do(i, func() error {
			l, err := net.Listen("tcp", ":"+memberPort)
			if err == nil {
				serveEcho(t, l)
			}
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	l, err := net.Listen("tcp", net.JoinHostPort(nt.HostAddr(), "0"))
	if err != nil {
		t.Fatal(err)
	}
	serveEcho(t, l)
	return l.Addr().String()
}

// echo dials addr and round-trips one byte, all within timeout.
func echo(addr string, timeout time.Duration) error {
	c, err := net.DialTimeout("tcp", addr, timeout)
	if err != nil {
		return err
	}
	defer c.Close()
	return roundTrip(c, timeout)
}

func roundTrip(c net.Conn, timeout time.Duration) error {
	c.SetDeadline(time.Now().Add(timeout))
	if _, err := c.Write([]byte{'x'}); err != nil {
		return err
	}
	b := make([]byte, 1)
	_, err := io.ReadFull(c, b)
	return err
}

// host is the index checkReach uses for the host namespace.
const host = -1

// checkReach checks every ordered pair among the members and the host:
// from reaches to iff !cut(from, to). Dials run in parallel.
func checkReach(t *testing.T, nt *Net, hostAddr string, cut func(from, to int) bool) {
	t.Helper()
	n := len(nt.Hosts())
	type pair struct{ from, to int }
	var pairs []pair
	for from := host; from < n; from++ {
		for to := host; to < n; to++ {
			if from != to && !(from == host && to == host) {
				pairs = append(pairs, pair{from, to})
			}
		}
	}
	var mu sync.Mutex
	var bad []string
	var wg sync.WaitGroup
	for _, p := range pairs {
		wg.Go(func() {
			want := !cut(p.from, p.to)
			timeout := okTimeout
			if !want {
				timeout = cutTimeout
			}
			addr := hostAddr
			if p.to != host {
				addr = net.JoinHostPort(nt.Hosts()[p.to], memberPort)
			}
			var err error
			if p.from == host {
				err = echo(addr, timeout)
			} else {
				err = nt.Do(p.from, func() error { return echo(addr, timeout) })
			}
			if got := err == nil; got != want {
				mu.Lock()
				bad = append(bad, fmt.Sprintf("%s -> %s: reachable=%v, want %v (err %v)", name(p.from), name(p.to), got, want, err))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(bad)
	for _, b := range bad {
		t.Error(b)
	}
}

func name(i int) string {
	if i == host {
		return "host"
	}
	return fmt.Sprintf("member %d", i)
}

// cutPairs returns a cut function that cuts exactly the given unordered
// member pairs.
func cutPairs(pairs ...[2]int) func(from, to int) bool {
	return func(from, to int) bool {
		for _, p := range pairs {
			if (p[0] == from && p[1] == to) || (p[0] == to && p[1] == from) {
				return true
			}
		}
		return false
	}
}

func TestNetwork(t *testing.T) {
	nt := create(t, 3)

	hosts := nt.Hosts()
	prefix := strings.TrimSuffix(nt.HostAddr(), ".1")
	if want := []string{prefix + ".11", prefix + ".12", prefix + ".13"}; !slices.Equal(hosts, want) {
		t.Fatalf("Hosts() = %v, want %v", hosts, want)
	}
	if got, want := nt.Command(1, "server", "-c", "x"), []string{"ip", "netns", "exec", nt.Namespace(1), "server", "-c", "x"}; !slices.Equal(got, want) {
		t.Fatalf("Command = %v, want %v", got, want)
	}
	out, err := exec.Command("ip", "-n", nt.Namespace(0), "-br", "addr", "show", "dev", "eth0").Output()
	if err != nil || !strings.Contains(string(out), hosts[0]+"/24") {
		t.Fatalf("member 0 eth0: %q, %v; want %s/24", out, err, hosts[0])
	}

	hostAddr := listenMembers(t, nt)
	for _, step := range []struct {
		name   string
		groups [][]int // nil: Heal
		cut    func(from, to int) bool
	}{
		{"connected", nil, cutPairs()},
		{"isolate 0", [][]int{{0}, {1, 2}}, cutPairs([2]int{0, 1}, [2]int{0, 2})},
		{"bridge 1", [][]int{{0, 1}, {1, 2}}, cutPairs([2]int{0, 2})},
		{"nobody", [][]int{}, cutPairs([2]int{0, 1}, [2]int{0, 2}, [2]int{1, 2})},
		{"healed", nil, cutPairs()},
	} {
		t.Run(step.name, func(t *testing.T) {
			var err error
			if step.groups == nil {
				err = nt.Heal()
			} else {
				err = nt.Partition(step.groups)
			}
			if err != nil {
				t.Fatal(err)
			}
			checkReach(t, nt, hostAddr, step.cut)
		})
	}
}

func TestPartitionCutsEstablishedConnections(t *testing.T) {
	nt := create(t, 2)
	listenMembers(t, nt)
	var c net.Conn
	err := nt.Do(0, func() (err error) {
		c, err = net.DialTimeout("tcp", net.JoinHostPort(nt.Hosts()[1], memberPort), okTimeout)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := roundTrip(c, okTimeout); err != nil {
		t.Fatalf("before partition: %v", err)
	}
	if err := nt.Partition([][]int{{0}, {1}}); err != nil {
		t.Fatal(err)
	}
	if err := roundTrip(c, cutTimeout); err == nil {
		t.Fatal("established connection still carries data after Partition")
	}
}

func TestPartitionRejectsUnknownMember(t *testing.T) {
	nt := create(t, 2)
	if err := nt.Partition([][]int{{0, 2}}); !errors.Is(err, ErrBadGroups) {
		t.Fatalf("Partition with member 2 of 2: %v, want ErrBadGroups", err)
	}
}

func TestTwoNets(t *testing.T) {
	a, b := create(t, 1), create(t, 1)
	if a.Key() == b.Key() || a.HostAddr() == b.HostAddr() || a.Namespace(0) == b.Namespace(0) {
		t.Fatalf("two Nets collide: keys %s %s, host addresses %s %s", a.Key(), b.Key(), a.HostAddr(), b.HostAddr())
	}
	for _, nt := range []*Net{a, b} {
		listenMembers(t, nt)
		if err := echo(net.JoinHostPort(nt.Hosts()[0], memberPort), okTimeout); err != nil {
			t.Errorf("%s: host -> member 0: %v", nt.Key(), err)
		}
	}
}

func TestDisk(t *testing.T) {
	nt := create(t, 1)
	dir := filepath.Join(t.TempDir(), "data")
	d, err := nt.MountDisk(dir, 4<<20)
	if err != nil {
		t.Fatal(err)
	}
	if mountSource(t, dir) != nt.Key() {
		t.Fatalf("%s is not a tmpfs from %s", dir, nt.Key())
	}
	write := func(name string) error {
		return os.WriteFile(filepath.Join(dir, name), make([]byte, 8192), 0o644)
	}
	if err := write("myid"); err != nil {
		t.Fatal(err)
	}
	if err := d.Fill(); err != nil {
		t.Fatal(err)
	}
	if err := write("log.1"); !errors.Is(err, unix.ENOSPC) {
		t.Fatalf("write to a full disk: %v, want ENOSPC", err)
	}
	if err := d.Free(); err != nil {
		t.Fatal(err)
	}
	if err := write("log.1"); err != nil {
		t.Fatalf("write after Free: %v", err)
	}
	if err := os.Mkdir(filepath.Join(dir, "snap"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := d.Wipe("myid"); err != nil {
		t.Fatal(err)
	}
	if got := dirNames(t, dir); !slices.Equal(got, []string{"myid"}) {
		t.Fatalf("after Wipe(myid): %v, want [myid]", got)
	}
	if err := nt.Close(); err != nil {
		t.Fatal(err)
	}
	if mountSource(t, dir) != "" {
		t.Fatalf("%s still mounted after Close", dir)
	}
}

func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	es, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names
}

// mountSource returns the source of the tmpfs mounted on dir, or "".
func mountSource(t *testing.T, dir string) string {
	t.Helper()
	ms, err := listTmpfsMounts()
	if err != nil {
		t.Fatal(err)
	}
	src := ""
	for _, m := range ms {
		if m.point == dir {
			src = m.source
		}
	}
	return src
}

// leftovers lists the namespaces, host links and state file that carry
// key.
func leftovers(t *testing.T, key string) []string {
	t.Helper()
	var out []string
	nss, err := listNamespaces()
	if err != nil {
		t.Fatal(err)
	}
	links, err := listHostLinks()
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range append(nss, links...) {
		if strings.HasPrefix(x, key+"-") {
			out = append(out, x)
		}
	}
	if _, err := os.Stat(statePath(key)); err == nil {
		out = append(out, statePath(key))
	}
	return out
}

func TestCloseRemovesEverything(t *testing.T) {
	nt := create(t, 3)
	key := nt.Key()
	if got := leftovers(t, key); len(got) != 6 { // hub, 3 members, host link, state file
		t.Fatalf("before Close: %v, want hub, 3 members, host link, state file", got)
	}
	// A process still running in a member namespace must not keep it.
	cmd := exec.Command(nt.Command(0, "sleep", "30")[0], nt.Command(0, "sleep", "30")[1:]...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	waitc := make(chan error, 1)
	go func() { waitc <- cmd.Wait() }()
	time.Sleep(50 * time.Millisecond) // let ip netns exec exec sleep

	for range 2 {
		if err := nt.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if got := leftovers(t, key); len(got) != 0 {
		t.Fatalf("after Close: %v left", got)
	}
	select {
	case <-waitc:
	case <-time.After(5 * time.Second):
		cmd.Process.Kill()
		t.Fatal("process in a member namespace survived Close")
	}
	if err := nt.Partition(nil); !errors.Is(err, ErrClosed) {
		t.Fatalf("Partition after Close: %v, want ErrClosed", err)
	}
}

func TestStaleLeftoversRemoved(t *testing.T) {
	requireRoot(t)
	dir := filepath.Join(t.TempDir(), "leaked")
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), helperEnv+"=leak", helperDirEnv+"="+dir)
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("helper: %v", err)
	}
	key := strings.TrimSpace(string(out))
	// Make sure the dead owner is removed even if unmount fails below.
	t.Cleanup(func() {
		s := &state{Key: key, Namespaces: []string{key + "-hub", key + "-m0", key + "-m1"}, HostLink: key + "-h", Mounts: []string{dir}}
		s.teardown()
	})
	if got := leftovers(t, key); len(got) != 5 {
		t.Fatalf("helper left %v, want hub, 2 members, host link, state file", got)
	}
	if mountSource(t, dir) != key {
		t.Fatalf("helper left no disk on %s", dir)
	}
	// An orphan: a namespace named like ours but with no state file.
	orphan := "wtorph-7-m0"
	if _, err := ip("netns", "add", orphan); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { deleteNamespace(orphan) })

	create(t, 1) // sweeps

	if got := leftovers(t, key); len(got) != 0 {
		t.Errorf("after Create: %v of dead owner left", got)
	}
	if mountSource(t, dir) != "" {
		t.Errorf("after Create: dead owner's disk still mounted on %s", dir)
	}
	if namespaceExists(orphan) {
		t.Errorf("after Create: orphan namespace %s left", orphan)
	}
}

func TestCreateValidates(t *testing.T) {
	for _, tc := range []struct {
		prefix string
		n      int
	}{
		{"", 3}, {"toolong7", 3}, {"Bad", 3}, {"wt-x", 3}, {"wt", 0}, {"wt", MaxMembers + 1},
	} {
		if _, err := Create(tc.prefix, tc.n); err == nil {
			t.Errorf("Create(%q, %d) succeeded", tc.prefix, tc.n)
		}
	}
}

func TestCreateNamesMissingCommand(t *testing.T) {
	requireRoot(t)
	t.Setenv("PATH", t.TempDir())
	_, err := Create("wttest", 1)
	if !errors.Is(err, ErrMissingCommand) || !strings.Contains(err.Error(), `"ip"`) {
		t.Fatalf("Create without ip in PATH: %v, want ErrMissingCommand naming ip", err)
	}
}
