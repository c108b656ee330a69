package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"runtime/pprof"
	"strconv"
	"strings"
	"syscall"
	"text/tabwriter"

	"github.com/wardenzk/warden/internal/bench"
)

const benchDoc = `Load-generates against any ZooKeeper-protocol server and prints throughput
and latency percentiles (HDR histograms); --json writes the full result,
--plot DIR writes SVG plots. 'warden bench report' turns the results of
several runs against several servers into a Markdown comparison.

With several servers in --servers (an ensemble), session i starts on
member i mod n and moves to the next member when it loses its own
(--spread round-robin); --spread shuffle leaves the choice to the client's
random order, as ZooKeeper's clients do.

Workloads (--workload):
`

// benchFlags is `warden bench`; `warden bench report` is benchReportFlags.
func benchFlags(fs *flag.FlagSet) func(args []string) error {
	def := bench.DefaultConfig()
	cfg := def
	fs.StringVar(&cfg.Servers, "servers", def.Servers, "connection string host:port[,host:port...]")
	fs.StringVar(&cfg.Spread, "spread", def.Spread, "how sessions pick a member of --servers: round-robin (session i starts on member i mod n) or shuffle (the client's random order)")
	fs.StringVar(&cfg.Workload, "workload", def.Workload, "workload to run (see above)")
	fs.StringVar(&cfg.Label, "label", def.Label, "name of the server under test, recorded in the result")
	fs.IntVar(&cfg.Clients, "clients", def.Clients, "sessions sending requests (lock: contenders)")
	fs.IntVar(&cfg.Inflight, "inflight", def.Inflight, "requests pipelined per session")
	fs.IntVar(&cfg.Payload, "payload", def.Payload, "value size in bytes")
	fs.DurationVar(&cfg.Duration, "duration", def.Duration, "length of each timed phase")
	fs.Int64Var(&cfg.Ops, "ops", 0, "requests per phase instead of --duration")
	fs.DurationVar(&cfg.Warmup, "warmup", 0, "unmeasured warm-up before each timed phase")
	fs.Float64Var(&cfg.Rate, "rate", 0, "open loop: total requests per second (latency from each request's due time)")
	fs.IntVar(&cfg.Znodes, "znodes", def.Znodes, "latencies: znodes per phase")
	fs.IntVar(&cfg.Keys, "keys", def.Keys, "sweep, multi: znodes read and written")
	fs.IntVar(&cfg.Watchers, "watchers", def.Watchers, "fanout: watching sessions")
	fs.IntVar(&cfg.Rounds, "rounds", def.Rounds, "fanout: writes")
	fs.IntVar(&cfg.Sessions, "sessions", def.Sessions, "storm: sessions")
	ratios := fs.String("read-ratios", joinInts(def.ReadRatios), "sweep: read percentages")
	sizes := fs.String("scale-sizes", joinInts(def.ScaleSizes), "scale: znode counts")
	fs.BoolVar(&cfg.Keep, "keep", false, "scale: leave the znodes in place")
	fs.Var((*pidList)(&cfg.ServerPIDs), "server-pid", "server process to read CPU time and memory of (/proc): one pid, or for an ensemble one per member separated by commas (CPU time summed, memory of the largest member)")
	fs.StringVar(&cfg.Dir, "dir", def.Dir, "fsync: directory to write the file in (on the disk to measure)")
	fs.StringVar(&cfg.Root, "root", def.Root, "znode the workloads work under (removed before and after)")
	fs.IntVar(&cfg.Failovers, "failovers", def.Failovers, "failover: leader kills, each after --duration of steady writes")
	fs.StringVar(&cfg.KillLeaderPIDFile, "kill-leader-pidfile", "", "failover: file with the pid of the member at {addr} ({host}, {port}); the bench kill -9s the leader's")
	fs.StringVar(&cfg.KillLeaderCmd, "kill-leader-cmd", "", "failover: instead of --kill-leader-pidfile, a sh -c command that kill -9s the leader; {addr}, {host}, {port} name its client address")
	fs.StringVar(&cfg.RestartCmd, "restart-cmd", "", "failover: sh -c command that starts the killed member again (same substitutions; redirect its output)")
	jsonOut := fs.String("json", "", "write the result as JSON to this file")
	plotDir := fs.String("plot", "", "write SVG plots into this directory")
	cpuProfile := fs.String("cpuprofile", "", "write the generator's CPU profile to this file")
	fs.Usage = func() {
		fmt.Fprint(fs.Output(), "Usage: warden bench [flags]\n       warden bench report [flags] result.json...\n\n"+benchDoc)
		for _, n := range bench.WorkloadNames() {
			fmt.Fprintf(fs.Output(), "  %-10s %s\n", n, bench.WorkloadDoc(n))
		}
		fmt.Fprint(fs.Output(), "\nFlags:\n")
		fs.PrintDefaults()
	}
	return func(args []string) error {
		return runBench(args, cfg, *ratios, *sizes, *jsonOut, *plotDir, *cpuProfile)
	}
}

func runBench(args []string, cfg bench.Config, ratios, sizes, jsonOut, plotDir, cpuProfile string) error {
	if len(args) > 0 {
		return badUsage("unexpected arguments %q", args)
	}
	var err error
	if cfg.ReadRatios, err = parseInts(ratios); err != nil {
		return fmt.Errorf("bench: --read-ratios: %w", err)
	}
	if cfg.ScaleSizes, err = parseInts(sizes); err != nil || len(cfg.ScaleSizes) == 0 {
		return fmt.Errorf("bench: --scale-sizes: need a comma-separated list of counts")
	}
	if cpuProfile != "" {
		f, err := os.Create(cpuProfile)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	var progress io.Writer
	if bench.IsTerminal(os.Stderr) {
		progress = os.Stderr
	}
	res, runErr := bench.Run(ctx, cfg, progress)
	if res != nil {
		printResult(os.Stdout, res)
		if jsonOut != "" {
			b, err := json.MarshalIndent(res, "", "  ")
			if err != nil {
				return err
			}
			if err := os.WriteFile(jsonOut, append(b, '\n'), 0o644); err != nil {
				return err
			}
		}
		if plotDir != "" {
			if err := bench.WritePlots(plotDir, []*bench.Result{res}); err != nil {
				return err
			}
		}
	}
	return runErr
}

// benchReportFlags is `warden bench report`.
func benchReportFlags(fs *flag.FlagSet) func(args []string) error {
	out := fs.String("out", "", "write the Markdown here (default stdout)")
	plotDir := fs.String("plot", "", "write SVG plots into this directory")
	plotRef := fs.String("plot-ref", "", "how the Markdown refers to the plot directory (default: --plot)")
	baseline := fs.String("baseline", "zookeeper", "label ratios are taken against")
	headline := fs.String("headline", "standalone", "target table on top: standalone (the targets for one server), ensemble (for a 3-member ensemble), or none")
	return func(args []string) error {
		return runBenchReport(args, *out, *plotDir, *plotRef, *baseline, *headline)
	}
}

func runBenchReport(args []string, out, plotDir, plotRef, baseline, headline string) error {
	var results []*bench.Result
	for _, name := range args {
		b, err := os.ReadFile(name)
		if err != nil {
			return err
		}
		var r bench.Result
		if err := json.Unmarshal(b, &r); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		results = append(results, &r)
	}
	if plotDir != "" {
		if err := bench.WritePlots(plotDir, results); err != nil {
			return err
		}
	}
	ref := plotRef
	if ref == "" {
		ref = plotDir
	}
	md := bench.Report(results, baseline, ref)
	switch headline {
	case "standalone":
		if h := bench.Headline(results, baseline); h != "" {
			md = "## Targets\n\n" + h + "\n## All results\n\n" + md
		}
	case "ensemble":
		if h := bench.EnsembleHeadline(results, baseline); h != "" {
			md = "### Targets\n\n" + h + "\n" + md
		}
	case "none":
	default:
		return fmt.Errorf("bench report: --headline %q: want standalone, ensemble or none", headline)
	}
	if out == "" {
		_, err := io.WriteString(os.Stdout, md)
		return err
	}
	return os.WriteFile(out, []byte(md), 0o644)
}

func printResult(w io.Writer, r *bench.Result) {
	if n := r.Settings.ConnectServers; n > 1 {
		fmt.Fprintf(w, "%d servers in the connection string, sessions spread %s\n", n, r.Settings.Spread)
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintf(tw, "phase\tops\terrors\tops/s\tp50 µs\tp90 µs\tp99 µs\tp99.9 µs\tmax µs\tgen cpu\t\n")
	for _, p := range r.Phases {
		sat := ""
		if p.Saturated {
			sat = " SATURATED"
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.0f\t%d\t%d\t%d\t%d\t%d\t%.0f%%%s\t\n", p.Name, p.Ops, p.Errors, p.Throughput,
			p.Latency.P50, p.Latency.P90, p.Latency.P99, p.Latency.P999, p.Latency.Max, p.GeneratorCPU*100, sat)
	}
	tw.Flush()
	for _, m := range r.Metrics {
		fmt.Fprintf(w, "%s: %s %s\n", m.Name, strconv.FormatFloat(m.Value, 'f', -1, 64), m.Unit)
	}
	for _, p := range r.Phases {
		if p.FirstError != "" {
			fmt.Fprintf(w, "%s: first error: %s\n", p.Name, p.FirstError)
		}
		if p.Saturated {
			fmt.Fprintf(w, "%s: the generator used %.0f%% of its cores: the numbers measure the generator, not the server\n", p.Name, p.GeneratorCPU*100)
		}
	}
	for i, f := range r.Failovers {
		fmt.Fprintf(w, "failover %d: killed %s; new leader %s at %.0f ms; first write at %.0f ms, every client at %.0f ms; kill took %.0f ms",
			i+1, f.Leader, f.NewLeader, f.NewLeaderMs, f.FirstWriteMs, f.AllClientsMs, f.KillMs)
		if f.RejoinMs > 0 {
			fmt.Fprintf(w, "; back as follower %.1f s after its restart", f.RejoinMs/1000)
		}
		fmt.Fprintln(w)
	}
	for _, n := range r.Notes {
		fmt.Fprintln(w, "note:", n)
	}
}

// pidList is the value of --server-pid: one process id, or several
// separated by commas.
type pidList []int

// String returns the pids as the flag takes them.
func (l *pidList) String() string { return joinInts(*l) }

// Set replaces the list with the pids in s.
func (l *pidList) Set(s string) error {
	pids, err := parseInts(s)
	if err != nil {
		return fmt.Errorf("want pids separated by commas: %w", err)
	}
	for _, pid := range pids {
		if pid <= 0 {
			return fmt.Errorf("pid %d: want a positive process id", pid)
		}
	}
	*l = pids
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, x := range v {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ",")
}

func parseInts(s string) ([]int, error) {
	var out []int
	for f := range strings.SplitSeq(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		n, err := strconv.Atoi(f)
		if err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, nil
}
