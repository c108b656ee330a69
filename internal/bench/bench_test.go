package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"encoding/xml"
	"io"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

// mntr reads one numeric key of the server's mntr output.
func mntr(t *testing.T, addr, key string) int64 {
	t.Helper()
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	if _, err := io.WriteString(nc, "mntr"); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(nc)
	for sc.Scan() {
		k, v, _ := strings.Cut(sc.Text(), "\t")
		if k == "zk_"+key {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				t.Fatalf("mntr %s = %q", key, v)
			}
			return n
		}
	}
	t.Fatalf("mntr has no %s", key)
	return 0
}

func testConfig(addr, workload string) Config {
	cfg := DefaultConfig()
	cfg.Servers, cfg.Workload, cfg.Label = addr, workload, "test"
	cfg.Clients, cfg.Inflight = 3, 4
	return cfg
}

// TestCountingMatchesServer: the requests a phase counts are the
// requests the server received, and a create phase of N ops makes N
// znodes.
func TestCountingMatchesServer(t *testing.T) {
	srv := servertest.Start(t)
	addr := srv.Addr().String()
	ctx := context.Background()
	e := &env{cfg: testConfig(addr, "sweep"), clock: wallClock{}, res: &Result{}}
	t.Cleanup(e.closeAll)
	conns, err := e.loadConns(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := ensurePath(ctx, conns[0], "/c"); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name     string
		ops      int64
		op       opFunc
		newNodes int64
	}{
		{"get", 777, func(ctx context.Context, c *client.Conn, i int64) error {
			_, _, err := c.Get(ctx, "/c")
			return err
		}, 0},
		{"create", 501, func(ctx context.Context, c *client.Conn, i int64) error {
			_, err := c.Create(ctx, "/c/n"+strconv.FormatInt(i, 10), nil, client.Persistent, client.OpenACL)
			return err
		}, 501},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			nodes0 := mntr(t, addr, "znode_count")
			packets0 := mntr(t, addr, "packets_received")
			pr, err := e.runPhase(ctx, phase{name: tt.name, conns: conns, inflight: 4, ops: tt.ops, op: tt.op})
			if err != nil {
				t.Fatal(err)
			}
			// The second mntr is itself a received packet.
			if got := mntr(t, addr, "packets_received") - packets0 - 1; got != tt.ops {
				t.Errorf("server received %d requests, want %d", got, tt.ops)
			}
			if pr.Ops != tt.ops || pr.Errors != 0 || pr.Latency.Count != tt.ops {
				t.Errorf("counted ops %d errors %d latencies %d, want %d, 0, %d", pr.Ops, pr.Errors, pr.Latency.Count, tt.ops, tt.ops)
			}
			if got := mntr(t, addr, "znode_count") - nodes0; got != tt.newNodes {
				t.Errorf("znodes grew by %d, want %d", got, tt.newNodes)
			}
		})
	}
}

// TestRunLatencies runs the latencies workload end to end: every phase
// sends exactly --znodes requests without error, and the workload
// leaves no znode behind.
func TestRunLatencies(t *testing.T) {
	srv := servertest.Start(t)
	addr := srv.Addr().String()
	nodes0 := mntr(t, addr, "znode_count")
	cfg := testConfig(addr, "latencies")
	cfg.Znodes = 40
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Phases) != 14 {
		t.Fatalf("%d phases, want 14", len(res.Phases))
	}
	for _, p := range res.Phases {
		if p.Ops != 40 || p.Errors != 0 || p.Latency.Count != 40 {
			t.Errorf("%s: ops %d errors %d (%s) latencies %d, want 40 ops", p.Name, p.Ops, p.Errors, p.FirstError, p.Latency.Count)
		}
	}
	if got := mntr(t, addr, "znode_count"); got != nodes0 {
		t.Errorf("znode_count %d after the run, want %d (left over znodes)", got, nodes0)
	}
}

// TestWorkloadsRun runs every other workload at a tiny size.
func TestWorkloadsRun(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.MaxClientCnxns = 0 }))
	addr := srv.Addr().String()
	for _, w := range []string{"sweep", "create", "multi", "lock", "fanout", "storm", "scale", "flood"} {
		t.Run(w, func(t *testing.T) {
			cfg := testConfig(addr, w)
			cfg.Ops, cfg.Keys, cfg.Watchers, cfg.Sessions, cfg.Rounds = 120, 10, 20, 30, 3
			cfg.ReadRatios, cfg.ScaleSizes = []int{0, 50, 100}, []int{1500, 2500}
			cfg.ServerPIDs = []int{os.Getpid()}
			res, err := Run(context.Background(), cfg, nil)
			if err != nil {
				t.Fatal(err)
			}
			if len(res.Phases) == 0 {
				t.Fatal("no phases")
			}
			for _, p := range res.Phases {
				if p.Errors != 0 || p.Ops == 0 {
					t.Errorf("%s: ops %d errors %d (%s)", p.Name, p.Ops, p.Errors, p.FirstError)
				}
			}
		})
	}
}

func TestHistogramPercentiles(t *testing.T) {
	h := NewHistogram()
	for us := 1; us <= 10000; us++ {
		h.Record(time.Duration(us) * time.Microsecond)
	}
	s := h.Summary()
	tests := []struct {
		name      string
		got, want int64
	}{
		{"p50", s.P50, 5000},
		{"p90", s.P90, 9000},
		{"p99", s.P99, 9900},
		{"p99.9", s.P999, 9990},
		{"max", s.Max, 10000},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// Three significant digits: within 0.1%.
			if d := tt.got - tt.want; d < -tt.want/1000 || d > tt.want/1000+1 {
				t.Errorf("%s = %d µs, want %d ± 0.1%%", tt.name, tt.got, tt.want)
			}
		})
	}
	if s.Count != 10000 {
		t.Errorf("count %d", s.Count)
	}
	if c := h.Curve(); c[0].Micros != 1 || c[len(c)-1].Percentile != 100 {
		t.Errorf("curve ends %v, %v", c[0], c[len(c)-1])
	}
}

// fakeClock is a clock only the test moves: Sleep jumps to the end of the
// sleep, and the fake op advances it by its service time.
type fakeClock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) Sleep(d time.Duration) {
	if d > 0 {
		c.advance(d)
	}
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	c.now = c.now.Add(d)
	c.mu.Unlock()
}

// TestOpenLoopScheduling: one worker, requests due every millisecond,
// each taking 5 ms. Request k is due at k ms but can only start when
// k-1 finishes, at 5k ms, and ends at 5(k+1) ms: its latency from the
// due time is 5 + 4k ms. Closed-loop timing would report 5 ms for all of
// them (coordinated omission).
func TestOpenLoopScheduling(t *testing.T) {
	const service = 5 * time.Millisecond
	tests := []struct {
		name     string
		rate     float64
		ops      int64
		duration time.Duration
		wantOps  int64
		wantMin  time.Duration
		wantMax  time.Duration
	}{
		{"open loop, ops", 1000, 10, 0, 10, 5 * time.Millisecond, 41 * time.Millisecond},
		{"closed loop, ops", 0, 10, 0, 10, 5 * time.Millisecond, 5 * time.Millisecond},
		// Duration mode sends the requests due before the deadline: 10 ms
		// at 1000/s is requests 0..9.
		{"open loop, duration", 1000, 0, 10 * time.Millisecond, 10, 5 * time.Millisecond, 41 * time.Millisecond},
		{"closed loop, duration", 0, 0, 10 * time.Millisecond, 2, 5 * time.Millisecond, 5 * time.Millisecond},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clk := &fakeClock{now: time.Unix(1000, 0)}
			e := &env{cfg: DefaultConfig(), clock: clk, res: &Result{}}
			op := func(context.Context, *client.Conn, int64) error { clk.advance(service); return nil }
			pr := e.drive(context.Background(), phase{name: tt.name, conns: []*client.Conn{nil}, inflight: 1,
				ops: tt.ops, duration: tt.duration, rate: tt.rate, op: op}, nil)
			if pr.Ops != tt.wantOps {
				t.Errorf("ops %d, want %d", pr.Ops, tt.wantOps)
			}
			if got := time.Duration(pr.Curve[0].Micros) * time.Microsecond; got != tt.wantMin {
				t.Errorf("min latency %v, want %v", got, tt.wantMin)
			}
			// HDR buckets: max is the top of its bucket, within 0.1%.
			if got := time.Duration(pr.Latency.Max) * time.Microsecond; got < tt.wantMax || got > tt.wantMax+tt.wantMax/1000 {
				t.Errorf("max latency %v, want %v", got, tt.wantMax)
			}
		})
	}
}

func TestScheduleDue(t *testing.T) {
	start := time.Unix(0, 0)
	s := schedule{start: start, rate: 3}
	tests := []struct {
		i    int64
		want time.Duration
	}{{0, 0}, {1, 333333333}, {3, time.Second}, {3000, 1000 * time.Second}}
	for _, tt := range tests {
		t.Run(strconv.FormatInt(tt.i, 10), func(t *testing.T) {
			if got := s.due(tt.i).Sub(start); got != tt.want {
				t.Errorf("due(%d) = %v, want %v", tt.i, got, tt.want)
			}
		})
	}
	// A late caller is not waited for and is measured from the due time.
	clk := &fakeClock{now: start.Add(5 * time.Second)}
	if got := s.await(clk, 3); !got.Equal(start.Add(time.Second)) || !clk.Now().Equal(start.Add(5*time.Second)) {
		t.Errorf("late await = %v, clock %v", got, clk.Now())
	}
	if got := s.await(clk, 30); !got.Equal(start.Add(10*time.Second)) || !clk.Now().Equal(got) {
		t.Errorf("early await = %v, clock %v", got, clk.Now())
	}
}

func TestIsReadRatio(t *testing.T) {
	for _, r := range []int{0, 20, 50, 80, 90, 100} {
		t.Run(strconv.Itoa(r), func(t *testing.T) {
			for block := int64(0); block < 3; block++ {
				n := 0
				for i := block * 100; i < block*100+100; i++ {
					if isRead(i, r) {
						n++
					}
				}
				if n != r {
					t.Errorf("block %d: %d reads in 100, want %d", block, n, r)
				}
			}
		})
	}
}

func TestResultJSONShape(t *testing.T) {
	srv := servertest.Start(t)
	cfg := testConfig(srv.Addr().String(), "sweep")
	cfg.Ops, cfg.ReadRatios = 100, []int{0, 100}
	res, err := Run(context.Background(), cfg, nil)
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	phases := m["phases"].([]any)
	if len(phases) != 2 {
		t.Fatalf("%d phases", len(phases))
	}
	p := phases[1].(map[string]any)
	lat := p["latency"].(map[string]any)
	settings := m["settings"].(map[string]any)
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"workload", m["workload"], "sweep"},
		{"label", m["label"], "test"},
		{"settings.clients", settings["clients"], 3.0},
		{"settings.connect_string_servers", settings["connect_string_servers"], 1.0},
		{"settings.spread", settings["spread"], "round-robin"},
		{"settings.read_ratios", len(settings["read_ratios"].([]any)), 2},
		{"phase name", p["name"], "read 100%"},
		{"phase param", p["param"], 100.0},
		{"phase mode", p["mode"], "closed"},
		{"phase ops", p["ops"], 100.0},
		{"latency count", lat["count"], 100.0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if tt.got != tt.want {
				t.Errorf("%s = %v, want %v", tt.name, tt.got, tt.want)
			}
		})
	}
	for _, k := range []string{"p50_us", "p90_us", "p99_us", "p99_9_us", "max_us", "mean_us"} {
		if _, ok := lat[k]; !ok {
			t.Errorf("latency has no %s", k)
		}
	}
	for _, k := range []string{"ops_per_s", "seconds", "errors", "generator_cpu", "generator_saturated", "curve"} {
		if _, ok := p[k]; !ok {
			t.Errorf("phase has no %s", k)
		}
	}
}

func TestReportAndPlots(t *testing.T) {
	mk := func(label string, tput float64, p99 int64) *Result {
		r := &Result{Workload: "sweep", Label: label, Settings: Settings{ReadRatios: []int{0, 100}}}
		for _, ratio := range []int{0, 100} {
			r.Phases = append(r.Phases, PhaseResult{Name: "read " + strconv.Itoa(ratio) + "%", Param: float64(ratio),
				Ops: 10, Throughput: tput, Latency: Summary{Count: 10, P50: 100, P99: p99},
				Curve: []CurvePoint{{0, 50}, {50, 100}, {99, p99}, {100, p99}}})
		}
		return r
	}
	results := []*Result{mk("zookeeper", 1000, 400), mk("warden", 2000, 200), mk("warden", 3000, 100), mk("zookeeper", 1000, 400)}
	md := Report(results, "zookeeper", "perf")
	for _, want := range []string{
		"| read 0% | ops/s | **2500** (2000, 3000) | **1000** (1000, 1000) | 2.50× |",
		"| read 100% | p99 µs | **150** (200, 100) | **400** (400, 400) | 0.38× |",
		"![throughput vs read ratio](perf/sweep-throughput.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := WritePlots(dir, results); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"sweep-throughput.svg", "latency-sweep-read-0p.svg", "latency-sweep-read-100p.svg"} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		d := xml.NewDecoder(strings.NewReader(string(b)))
		for {
			if _, err := d.Token(); err == io.EOF {
				break
			} else if err != nil {
				t.Fatalf("%s is not well-formed XML: %v", name, err)
			}
		}
	}
}
