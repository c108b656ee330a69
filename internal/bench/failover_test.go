package bench

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/wardenzk/warden/server/servertest"
)

// TestFailoverTracker: a session has failed over at the reply to its
// first write sent at or after the mark; writes sent before the mark
// count for nothing, even when their reply comes after it.
func TestFailoverTracker(t *testing.T) {
	t0 := time.Unix(1000, 0)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	type ack struct{ c, sent, acked int } // milliseconds after t0
	tests := []struct {
		name      string
		sessions  int
		acks      []ack
		wantN     int
		wantFirst time.Duration
		wantAll   time.Duration
		wantDone  bool
	}{
		{"nothing yet", 2, nil, 0, 0, 0, false},
		{"sent before the kill, acknowledged after: not a failover", 2,
			[]ack{{0, -5, 300}, {1, -1, 10}}, 0, 0, 0, false},
		{"one session back", 2,
			[]ack{{0, -5, 300}, {0, 300, 1200}}, 1, 1200 * time.Millisecond, 1200 * time.Millisecond, false},
		{"both back: first and last", 2,
			[]ack{{1, 1, 1500}, {0, 2, 900}, {1, 1500, 1501}}, 2, 900 * time.Millisecond, 1500 * time.Millisecond, true},
		{"only a session's first write after the kill counts", 1,
			[]ack{{0, 0, 700}, {0, 700, 701}}, 1, 700 * time.Millisecond, 700 * time.Millisecond, true},
		{"a write sent at the kill instant counts", 1,
			[]ack{{0, 0, 3}}, 1, 3 * time.Millisecond, 3 * time.Millisecond, true},
		{"no sessions: done at once", 0, nil, 0, 0, 0, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := newFailoverTracker(tt.sessions)
			// Writes before any mark only count for the timeline.
			tr.ack(0, ms(-3000), ms(-2000))
			done := tr.start(t0)
			for _, a := range tt.acks {
				tr.ack(a.c, ms(a.sent), ms(a.acked))
			}
			first, all, n := tr.recovery()
			if n != tt.wantN || first != tt.wantFirst || all != tt.wantAll {
				t.Errorf("recovery() = %v, %v, %d; want %v, %v, %d", first, all, n, tt.wantFirst, tt.wantAll, tt.wantN)
			}
			select {
			case <-done:
				if !tt.wantDone {
					t.Error("done, want waiting")
				}
			default:
				if tt.wantDone {
					t.Error("waiting, want done")
				}
			}
		})
	}
}

// TestFailoverTrackerRestart: a new mark starts a new measurement.
func TestFailoverTrackerRestart(t *testing.T) {
	t0 := time.Unix(1000, 0)
	tr := newFailoverTracker(1)
	tr.start(t0)
	tr.ack(0, t0, t0.Add(time.Second))
	done := tr.start(t0.Add(10 * time.Second))
	if _, _, n := tr.recovery(); n != 0 {
		t.Fatalf("%d sessions recovered right after a new mark, want 0", n)
	}
	tr.ack(0, t0.Add(10*time.Second), t0.Add(12*time.Second))
	<-done
	if first, _, _ := tr.recovery(); first != 2*time.Second {
		t.Errorf("first = %v, want 2s", first)
	}
}

// TestFailoverTimeline: acknowledged writes per 100 ms around a mark.
func TestFailoverTimeline(t *testing.T) {
	mark := time.Unix(1000, 0)
	tr := newFailoverTracker(1)
	at := func(ms int) time.Time { return mark.Add(time.Duration(ms) * time.Millisecond) }
	for _, ms := range []int{-1001, -1000, -950, -901, -1, 0, 99, 100, 250, 499, 500} {
		tr.ack(0, at(ms-1), at(ms))
	}
	got := tr.timeline(mark, time.Second, 500*time.Millisecond)
	want := []int64{3, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 1, 1, 0, 1}
	if !slices.Equal(got, want) {
		t.Errorf("timeline = %v, want %v", got, want)
	}
}

// fakeMember answers srvr like a member in its current mode ("": not
// serving) and counts the connections it accepted.
type fakeMember struct {
	ln   net.Listener
	mu   sync.Mutex
	mode string
}

func startFakeMember(t *testing.T, mode string) *fakeMember {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	m := &fakeMember{ln: ln, mode: mode}
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer nc.Close()
				buf := make([]byte, 4)
				if _, err := io.ReadFull(nc, buf); err != nil || string(buf) != "srvr" {
					return
				}
				m.mu.Lock()
				mode := m.mode
				m.mu.Unlock()
				if mode == "" {
					io.WriteString(nc, "This ZooKeeper instance is not currently serving requests\n")
					return
				}
				io.WriteString(nc, "Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.1/3\nReceived: 10\nSent: 9\n"+
					"Connections: 1\nOutstanding: 0\nZxid: 0x100000003\nMode: "+mode+"\nNode count: 5\n")
			}()
		}
	}()
	return m
}

func (m *fakeMember) addr() string { return m.ln.Addr().String() }

func (m *fakeMember) set(mode string) {
	m.mu.Lock()
	m.mode = mode
	m.mu.Unlock()
}

func TestSrvrMode(t *testing.T) {
	tests := []struct{ answer, want string }{
		{"Zookeeper version: 3.8.0-x\nLatency min/avg/max: 0/0.2/5\nMode: follower\nNode count: 5\n", "follower"},
		{"Mode: leader\n", "leader"},
		{"Zookeeper version: 3.9.0\r\nMode: standalone\r\n", "standalone"},
		{"This ZooKeeper instance is not currently serving requests\n", ""},
		{"", ""},
	}
	for _, tt := range tests {
		t.Run(tt.want, func(t *testing.T) {
			if got := srvrMode(tt.answer); got != tt.want {
				t.Errorf("srvrMode(%q) = %q, want %q", tt.answer, got, tt.want)
			}
		})
	}
}

// TestFindLeader: the leader is the only member saying so; while there
// is none, or two, the search goes on until the context ends.
func TestFindLeader(t *testing.T) {
	f, l, dead := startFakeMember(t, "follower"), startFakeMember(t, "leader"), startFakeMember(t, "")
	gone, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	goneAddr := gone.Addr().String()
	gone.Close()
	ctx := context.Background()

	t.Run("one leader", func(t *testing.T) {
		got, err := findLeader(ctx, []string{f.addr(), goneAddr, dead.addr(), l.addr()})
		if err != nil || got != l.addr() {
			t.Errorf("findLeader = %q, %v; want %q", got, err, l.addr())
		}
	})
	t.Run("no leader", func(t *testing.T) {
		ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
		defer cancel()
		if got, err := findLeader(ctx, []string{f.addr(), dead.addr(), goneAddr}); err == nil {
			t.Errorf("findLeader = %q, want an error", got)
		}
	})
	t.Run("two leaders until one steps down", func(t *testing.T) {
		f.set("leader")
		time.AfterFunc(50*time.Millisecond, func() { f.set("follower") })
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		got, err := findLeader(ctx, []string{f.addr(), l.addr()})
		if err != nil || got != l.addr() {
			t.Errorf("findLeader = %q, %v; want %q", got, err, l.addr())
		}
	})
	t.Run("wait for follower", func(t *testing.T) {
		dead.set("")
		time.AfterFunc(30*time.Millisecond, func() { dead.set("follower") })
		ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		if err := waitMode(ctx, dead.addr(), "follower"); err != nil {
			t.Error(err)
		}
	})
}

func TestExpandAddr(t *testing.T) {
	tests := []struct{ cmd, addr, want string }{
		{"kill -9 $(cat /run/pid.{addr})", "127.0.42.1:21810", "kill -9 $(cat /run/pid.127.0.42.1:21810)"},
		{"stop {host} {port} {host}", "127.0.42.2:2181", "stop 127.0.42.2 2181 127.0.42.2"},
		{"stop {host} {port}", "[::1]:2181", "stop ::1 2181"},
		{"no placeholders", "h:1", "no placeholders"},
	}
	for _, tt := range tests {
		t.Run(tt.cmd, func(t *testing.T) {
			if got := expandAddr(tt.cmd, tt.addr); got != tt.want {
				t.Errorf("expandAddr = %q, want %q", got, tt.want)
			}
		})
	}
}

// TestShellControl: the commands run with the address substituted; a
// failing one reports its output; a restart without a command is
// errNoRestart; a command that leaves a process holding its output does
// not hang.
func TestShellControl(t *testing.T) {
	dir := t.TempDir()
	out := filepath.Join(dir, "out")
	ctx := context.Background()
	sc := shellControl{kill: "echo killed {host} {port} >> " + out, restart: "echo restarted {addr} >> " + out}
	if err := sc.Kill(ctx, "127.0.42.3:21810"); err != nil {
		t.Fatal(err)
	}
	if err := sc.Restart(ctx, "127.0.42.3:21810"); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	if want := "killed 127.0.42.3 21810\nrestarted 127.0.42.3:21810\n"; string(b) != want {
		t.Errorf("commands wrote %q, want %q", b, want)
	}
	err = shellControl{kill: "echo no such member >&2; exit 3"}.Kill(ctx, "h:1")
	if err == nil || !strings.Contains(err.Error(), "no such member") {
		t.Errorf("failing kill: %v, want an error with its output", err)
	}
	if err := (shellControl{kill: "true"}).Restart(ctx, "h:1"); !errors.Is(err, errNoRestart) {
		t.Errorf("restart without a command: %v, want errNoRestart", err)
	}
	start := time.Now()
	if err := (shellControl{restart: "sleep 5 &"}).Restart(ctx, "h:1"); err != nil {
		t.Errorf("restart leaving a process behind: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("restart leaving a process behind took %v", d)
	}
}

// TestPIDFileControl: the process named by the member's pid file dies of
// SIGKILL; a missing or garbled pid file is an error.
func TestPIDFileControl(t *testing.T) {
	dir := t.TempDir()
	victim := exec.Command("sleep", "60")
	if err := victim.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { victim.Process.Kill(); victim.Wait() })
	if err := os.WriteFile(filepath.Join(dir, "pid.127.0.42.2"), []byte(strconv.Itoa(victim.Process.Pid)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "pid.127.0.42.3"), []byte("none"), 0o644); err != nil {
		t.Fatal(err)
	}
	pc := pidFileControl{pidFile: filepath.Join(dir, "pid.{host}")}
	if err := pc.Kill(context.Background(), "127.0.42.2:21810"); err != nil {
		t.Fatal(err)
	}
	err := victim.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Errorf("victim ended with %v, want killed by SIGKILL", err)
	}
	for _, addr := range []string{"127.0.42.3:21810", "127.0.42.4:21810"} {
		if err := pc.Kill(context.Background(), addr); err == nil {
			t.Errorf("Kill(%s): no error", addr)
		}
	}
}

// ensembleControl kills and restarts members of an in-process ensemble.
type ensembleControl struct {
	e     *servertest.Ensemble
	mu    sync.Mutex
	kills []string
}

func (c *ensembleControl) member(addr string) int {
	for i := range c.e.All() {
		if c.e.Addr(i) == addr {
			return i
		}
	}
	return -1
}

func (c *ensembleControl) Kill(_ context.Context, addr string) error {
	i := c.member(addr)
	if i < 0 {
		return errors.New("no member at " + addr)
	}
	c.mu.Lock()
	c.kills = append(c.kills, addr)
	c.mu.Unlock()
	c.e.Stop(i)
	return nil
}

func (c *ensembleControl) Restart(_ context.Context, addr string) error {
	i := c.member(addr)
	if i < 0 {
		return errors.New("no member at " + addr)
	}
	c.e.Restart(i)
	return nil
}

// TestFailoverWorkload runs the failover workload against an in-process
// ensemble (fast elections): each round kills the member srvr names as
// leader, every session writes again, and the member comes back as a
// follower.
func TestFailoverWorkload(t *testing.T) {
	ens := servertest.StartTestEnsemble(t, 3)
	ctl := &ensembleControl{e: ens}
	cfg := testConfig(ens.ConnectString(), "failover")
	cfg.Clients, cfg.Inflight, cfg.Payload = 3, 1, 10
	cfg.Duration, cfg.Failovers = 100*time.Millisecond, 2
	members, err := parseMembers(cfg.Servers)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{cfg: cfg, clock: wallClock{}, res: &Result{}, members: members, control: ctl}
	t.Cleanup(e.closeAll)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	if err := runFailover(ctx, e); err != nil {
		t.Fatal(err)
	}
	if len(e.res.Failovers) != 2 {
		t.Fatalf("%d failovers, want 2", len(e.res.Failovers))
	}
	for i, f := range e.res.Failovers {
		if f.Leader != ctl.kills[i] {
			t.Errorf("failover %d: sample says %s was killed, the control killed %s", i, f.Leader, ctl.kills[i])
		}
		if f.NewLeader == "" || f.NewLeader == f.Leader {
			t.Errorf("failover %d: new leader %q after killing %q", i, f.NewLeader, f.Leader)
		}
		if f.FirstWriteMs <= 0 || f.FirstWriteMs > f.AllClientsMs {
			t.Errorf("failover %d: first write at %v ms, every client at %v ms", i, f.FirstWriteMs, f.AllClientsMs)
		}
		if f.RejoinMs <= 0 {
			t.Errorf("failover %d: rejoin %v ms", i, f.RejoinMs)
		}
		if len(f.Timeline) == 0 || f.TimelineStepMs != 100 {
			t.Errorf("failover %d: timeline of %d buckets of %v ms", i, len(f.Timeline), f.TimelineStepMs)
		}
	}
	if len(e.res.Phases) != 1 || e.res.Phases[0].Name != "failover writes" || e.res.Phases[0].Latency.Count == 0 {
		t.Errorf("phases %+v, want one failover writes phase with writes", e.res.Phases)
	}
	var names []string
	for _, m := range e.res.Metrics {
		names = append(names, m.Name)
	}
	for _, want := range []string{"failover: kill to first write, median", "failover: kill to every client writing, max",
		"failover: kill to new leader in srvr, median", "failover: restart to follower, median"} {
		if !slices.Contains(names, want) {
			t.Errorf("no metric %q in %q", want, names)
		}
	}
	ens.WaitServing(ens.All()...)
}

// TestFailoverNeedsAnEnsemble: the workload refuses a single server
// before touching it.
func TestFailoverNeedsAnEnsemble(t *testing.T) {
	cfg := testConfig("127.0.0.1:1", "failover")
	e := &env{cfg: cfg, clock: wallClock{}, res: &Result{}, members: []string{"127.0.0.1:1"}, control: shellControl{kill: "true"}}
	if err := runFailover(context.Background(), e); err == nil || !strings.Contains(err.Error(), "ensemble") {
		t.Errorf("runFailover on one server: %v", err)
	}
}

func TestFailoverConfig(t *testing.T) {
	tests := []struct {
		name    string
		change  func(*Config)
		wantErr string
	}{
		{"complete", func(c *Config) {}, ""},
		{"no kill command", func(c *Config) { c.KillLeaderCmd = "" }, "--kill-leader-cmd"},
		{"pid file instead", func(c *Config) { c.KillLeaderCmd, c.KillLeaderPIDFile = "", "/run/pid.{host}" }, ""},
		{"pid file and command", func(c *Config) { c.KillLeaderPIDFile = "/run/pid.{host}" }, "one of"},
		{"several kills, no restart", func(c *Config) { c.RestartCmd = "" }, "--restart-cmd"},
		{"one kill, no restart", func(c *Config) { c.RestartCmd, c.Failovers = "", 1 }, ""},
		{"no duration", func(c *Config) { c.Duration, c.Ops = 0, 10 }, "--duration"},
		{"bad spread", func(c *Config) { c.Spread = "random" }, "spread"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.Workload, cfg.KillLeaderCmd, cfg.RestartCmd = "failover", "kill", "restart"
			tt.change(&cfg)
			err := cfg.Validate()
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("Validate() = %v, want an error mentioning %q", err, tt.wantErr)
			}
		})
	}
}

// TestEnsembleReport: the ensemble target table, the connection string
// note and the failover timeline plot.
func TestEnsembleReport(t *testing.T) {
	mk := func(label string, tput float64, p99 int64, failMs []float64) []*Result {
		sw := &Result{Workload: "sweep", Label: label, Settings: Settings{ConnectServers: 3, Spread: SpreadRoundRobin, ReadRatios: []int{0, 100}}}
		for _, ratio := range []int{0, 100} {
			sw.Phases = append(sw.Phases, PhaseResult{Name: map[int]string{0: "read 0%", 100: "read 100%"}[ratio], Param: float64(ratio),
				Ops: 10, Throughput: tput * float64(1+ratio/100), Latency: Summary{Count: 10, P50: 100, P99: p99, P999: 2 * p99}})
		}
		fo := &Result{Workload: "failover", Label: label, Settings: Settings{ConnectServers: 3, Spread: SpreadRoundRobin}}
		for _, ms := range failMs {
			fo.Failovers = append(fo.Failovers, FailoverSample{FirstWriteMs: ms / 2, AllClientsMs: ms,
				Timeline: []int64{100, 100, 0, 50}, TimelineStepMs: 100, TimelineBeforeMs: 200})
		}
		fo.Metrics = []Metric{
			{"failover: kill to first write, median", failMs[1] / 2, "ms"},
			{"failover: kill to every client writing, median", failMs[1], "ms"},
		}
		return []*Result{sw, fo}
	}
	results := append(mk("warden", 2000, 200, []float64{1000, 2000, 3000}), mk("zookeeper", 1000, 400, []float64{400, 500, 600})...)
	h := EnsembleHeadline(results, "zookeeper")
	for _, want := range []string{
		"| measure | warden | zookeeper | ratio warden / zookeeper | target | status |",
		"| write throughput, saturated (sweep, 0% reads), ops/s | 2000 | 1000 | 2.00× | ≥ 2× | met |",
		"| p99.9 latency at every read ratio (sweep), µs; worst: read 0% | 400 | 800 | 0.50× | ≤ 1× | met |",
		"| failover: leader kill -9 to first acknowledged write, ms | 1000 | 250 | 4.00× | ≤ 0.5× | not yet |",
		"| failover: kill to every client writing again, ms | 2000 | 500 | 4.00× | – | – |",
	} {
		if !strings.Contains(h, want) {
			t.Errorf("target table lacks %q:\n%s", want, h)
		}
	}
	md := Report(results, "zookeeper", "perf/ensemble")
	for _, want := range []string{
		"### failover",
		"Connection string: 3 servers, sessions spread round-robin (session i starts on member i mod 3).",
		"![acknowledged writes around the leader kill](perf/ensemble/failover-timeline.svg)",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	dir := t.TempDir()
	if err := WritePlots(dir, results); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, failoverPlotName))
	if err != nil {
		t.Fatal(err)
	}
	// The median kill of each server is the one in the legend.
	for _, want := range []string{"warden (all in 2.00 s)", "zookeeper (all in 0.50 s)"} {
		if !strings.Contains(string(b), want) {
			t.Errorf("plot lacks %q", want)
		}
	}
	d := xml.NewDecoder(strings.NewReader(string(b)))
	for {
		if _, err := d.Token(); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("failover plot is not well-formed XML: %v", err)
		}
	}
}
