//go:build torture

package torture

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/wardenzk/warden/test/proc"
)

var (
	flagSeeds   = flag.String("torture.seeds", "", "seeds to run: N, N-M or a comma-separated list of those (default: the CI slice)")
	flagMembers = flag.String("torture.members", "3", "ensemble sizes, comma-separated (3,5)")
	flagTarget  = flag.String("torture.target", "warden", "warden or zookeeper (the baseline: Apache ZooKeeper 3.8 from Debian)")
	flagFaults  = flag.String("torture.faults", "all", "fault kinds, comma-separated, or all / none")
	flagOut     = flag.String("torture.out", "", "directory for logs and visualizations of failing runs (default: a temporary directory, kept on failure)")
	flagResults = flag.String("torture.results", "", "append one JSON report per run to this file")
	flagKeep    = flag.Bool("torture.keep", false, "keep the logs of passing runs too")
)

// ciSlice is what CI runs when no seeds are given: every workload and
// every fault kind (each run goes through all of them), on three and
// five members, bounded to a few minutes; and three runs that add the
// reconfig nemesis's kinds to them (faults "all,reconfig", whatever
// -torture.faults says).
var ciSlice = []struct {
	members  int
	seeds    []uint64
	reconfig bool
}{
	{3, []uint64{1, 2, 3, 4, 5, 6}, false},
	{5, []uint64{1, 2, 3, 4}, false},
	{3, []uint64{1, 2}, true},
	{5, []uint64{1}, true},
}

func TestMain(m *testing.M) {
	code := m.Run()
	proc.RemoveBuild()
	os.Exit(code)
}

// TestTorture runs the seeds the flags name (the CI slice by default)
// against real server processes, each member in a network namespace of
// its own, under the seeds' faults; any anomaly fails it.
func TestTorture(t *testing.T) {
	preflight(t)
	target := Target(*flagTarget)
	if target != Warden && target != ZooKeeper {
		t.Fatalf("-torture.target %q: want warden or zookeeper", target)
	}
	faults, err := ParseFaults(*flagFaults)
	if err != nil {
		t.Fatal(err)
	}
	out := *flagOut
	if out == "" {
		if out, err = os.MkdirTemp("", "warden-torture-"); err != nil {
			t.Fatal(err)
		}
	}
	res := &results{path: *flagResults}
	type job struct {
		members int
		seed    uint64
		faults  []FaultKind
	}
	var jobs []job
	if *flagSeeds == "" {
		both := append(append([]FaultKind(nil), AllFaults...), ReconfigFaults...)
		for _, s := range ciSlice {
			for _, seed := range s.seeds {
				j := job{s.members, seed, faults}
				if s.reconfig {
					j.faults = both
				}
				jobs = append(jobs, j)
			}
		}
	} else {
		seeds, err := parseSeeds(*flagSeeds)
		if err != nil {
			t.Fatal(err)
		}
		for _, ms := range strings.Split(*flagMembers, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(ms))
			if err != nil || (n != 3 && n != 5) {
				t.Fatalf("-torture.members %q: want 3, 5 or 3,5", *flagMembers)
			}
			for _, seed := range seeds {
				jobs = append(jobs, job{n, seed, faults})
			}
		}
	}
	for _, j := range jobs {
		name := fmt.Sprintf("%s/n%d/seed%d", target, j.members, j.seed)
		if Spares(j.members, j.faults) > 0 {
			if target != Warden {
				continue // the baseline's members run without reconfig
			}
			name += "/reconfig"
		}
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			rep := Run(t, Config{Target: target, Members: j.members, Seed: j.seed, Faults: j.faults, Out: out})
			fmt.Println(rep.Verdict())
			if err := res.add(rep); err != nil {
				t.Errorf("results: %v", err)
			}
			if rep.Pass && !*flagKeep {
				os.RemoveAll(rep.Dir)
			}
		})
	}
	t.Cleanup(func() {
		if !t.Failed() && *flagOut == "" {
			os.RemoveAll(out)
		}
	})
}

// preflight fails, loudly, when the machine lacks what the harness needs.
func preflight(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Fatal("the torture harness needs root (network namespaces, nftables, tmpfs mounts); run it as root, as CI does")
	}
	need := []string{"ip", "nft"}
	if Target(*flagTarget) == ZooKeeper {
		need = append(need, "java")
		if _, err := os.Stat(filepath.Join("/usr/share/java", "zookeeper.jar")); err != nil {
			t.Fatal("the zookeeper target needs Apache ZooKeeper from Debian: apt-get install zookeeper (scripts/install-test-deps.sh does)")
		}
	}
	for _, c := range need {
		if _, err := exec.LookPath(c); err != nil {
			t.Fatalf("the torture harness needs %q on PATH (scripts/torture.sh installs iproute2 and nftables)", c)
		}
	}
}

// parseSeeds reads "7", "1-300" or "1-5,9,20-22".
func parseSeeds(s string) ([]uint64, error) {
	var seeds []uint64
	for _, part := range strings.Split(s, ",") {
		lo, hi, isRange := strings.Cut(strings.TrimSpace(part), "-")
		a, err := strconv.ParseUint(lo, 10, 64)
		if err != nil {
			return nil, fmt.Errorf("seeds %q: %v", s, err)
		}
		b := a
		if isRange {
			if b, err = strconv.ParseUint(hi, 10, 64); err != nil || b < a {
				return nil, fmt.Errorf("seeds %q: bad range %q", s, part)
			}
		}
		for x := a; x <= b; x++ {
			seeds = append(seeds, x)
		}
	}
	return seeds, nil
}

// results appends reports to a JSON-lines file, from parallel runs.
type results struct {
	mu   sync.Mutex
	path string
}

func (r *results) add(rep *Report) error {
	if r.path == "" {
		return nil
	}
	b, err := json.Marshal(rep)
	if err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	f, err := os.OpenFile(r.path, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	_, err = f.Write(append(b, '\n'))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}
