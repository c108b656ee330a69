package bench

import (
	"fmt"
	"os"
	"time"
)

// Config is one `warden bench` run. Zero fields take the defaults of
// DefaultConfig.
type Config struct {
	// Servers is the connection string, "host:port[,host:port...]". With
	// several members the sessions are spread over them (see Spread).
	Servers string
	// Spread is how sessions pick their member: SpreadRoundRobin (the
	// default, also when empty) starts session j on member j mod n;
	// SpreadShuffle leaves it to the client library's random order, as
	// ZooKeeper's clients do.
	Spread string
	// Workload names the workload (see Workloads).
	Workload string
	// Label names the server under test in the results ("warden",
	// "zookeeper"); the report groups by it.
	Label string
	// Clients is the number of sessions that send requests. Default 8.
	Clients int
	// Inflight is the number of requests pipelined on each session.
	// Default 16.
	Inflight int
	// Payload is the size of written values, bytes. Default 1024.
	Payload int
	// Duration bounds each duration-mode phase. Default 10s.
	Duration time.Duration
	// Ops, when > 0, makes phases count requests instead of time: each
	// phase sends exactly Ops requests (for latencies and scale the
	// znode counts are Znodes and ScaleSizes instead).
	Ops int64
	// Warmup runs each duration-mode phase unmeasured for this long
	// first. Default 0.
	Warmup time.Duration
	// Rate, when > 0, makes phases open-loop: this many requests per
	// second in total, latency measured from each request's due time.
	Rate float64
	// Znodes is the number of znodes of the latencies workload.
	// Default 10000.
	Znodes int
	// Keys is the number of znodes sweep and multi read and write.
	// Default 1000.
	Keys int
	// Keep leaves the scale workload's znodes in place (the server is
	// about to be thrown away) instead of deleting them.
	Keep bool
	// Watchers is the number of sessions of the fanout workload.
	// Default 1000.
	Watchers int
	// Sessions is the number of sessions of the storm workload.
	// Default 1000.
	Sessions int
	// Rounds is the number of writes of the fanout workload. Default 20.
	Rounds int
	// ReadRatios are the read percentages of the sweep. Default
	// 0,20,50,80,90,100.
	ReadRatios []int
	// ScaleSizes are the znode counts at which scale measures memory,
	// ascending. Default 100000, 1000000.
	ScaleSizes []int
	// ServerPIDs, when not empty, are the server's processes, one per
	// ensemble member (or the one standalone server): their CPU time and
	// memory are read from /proc around every phase. CPU time is summed
	// over them (the ensemble's CPU per op); RSS and peak RSS are the
	// largest member's. A phase gets these numbers only when every
	// process could be read. Default none.
	ServerPIDs []int
	// Dir (fsync) is the directory the fsync workload writes its file in:
	// put it on the disk to measure. Default os.TempDir().
	Dir string
	// Root is the znode under which the workloads work. Default
	// "/warden-bench". It is removed before and after.
	Root string

	// KillLeaderCmd (failover) is a shell command (run with sh -c) that
	// kills the leader's process at once (kill -9). {addr}, {host} and
	// {port} in it are replaced by the leader's client address, as it is
	// spelled in Servers. The kill is taken to have happened when the
	// command exits. KillLeaderPIDFile is the precise alternative.
	KillLeaderCmd string
	// KillLeaderPIDFile (failover), instead of KillLeaderCmd, names the
	// file holding the pid of the member at {addr} ({host}, {port}): the
	// bench sends that process SIGKILL itself, and the kill instant is
	// when kill(2) returns.
	KillLeaderPIDFile string
	// RestartCmd (failover) starts the killed member again (same
	// substitutions); the bench then waits for it to answer srvr as a
	// follower. Needed for more than one failover. It must not keep its
	// standard output open (start the member with its output redirected).
	RestartCmd string
	// Failovers (failover) is the number of leader kills. Default 3.
	// Each comes after Duration of steady writes.
	Failovers int
}

// DefaultConfig returns the defaults.
func DefaultConfig() Config {
	return Config{
		Servers:    "127.0.0.1:2181",
		Spread:     SpreadRoundRobin,
		Workload:   "sweep",
		Label:      "server",
		Clients:    8,
		Inflight:   16,
		Payload:    1024,
		Duration:   10 * time.Second,
		Znodes:     10000,
		Keys:       1000,
		Watchers:   1000,
		Sessions:   1000,
		Rounds:     20,
		ReadRatios: []int{0, 20, 50, 80, 90, 100},
		ScaleSizes: []int{100_000, 1_000_000},
		Root:       "/warden-bench",
		Dir:        os.TempDir(),
		Failovers:  3,
	}
}

// Validate reports the first unusable setting.
func (c Config) Validate() error {
	switch {
	case c.Servers == "":
		return fmt.Errorf("bench: no servers")
	case c.Clients < 1 || c.Inflight < 1:
		return fmt.Errorf("bench: clients and inflight must be at least 1")
	case c.Payload < 0:
		return fmt.Errorf("bench: negative payload")
	case c.Ops <= 0 && c.Duration <= 0:
		return fmt.Errorf("bench: give a duration or a number of ops")
	case c.Rate < 0:
		return fmt.Errorf("bench: negative rate")
	case c.Znodes < 1 || c.Keys < 1 || c.Watchers < 1 || c.Sessions < 1 || c.Rounds < 1:
		return fmt.Errorf("bench: znodes, keys, watchers, sessions and rounds must be at least 1")
	case len(c.Root) < 2 || c.Root[0] != '/':
		return fmt.Errorf("bench: root must be an absolute path other than /")
	case c.Spread != "" && c.Spread != SpreadRoundRobin && c.Spread != SpreadShuffle:
		return fmt.Errorf("bench: spread %q: want %s or %s", c.Spread, SpreadRoundRobin, SpreadShuffle)
	}
	if c.Workload == "failover" {
		switch {
		case (c.KillLeaderCmd == "") == (c.KillLeaderPIDFile == ""):
			return fmt.Errorf("bench: failover needs one of --kill-leader-pidfile (the pid file of the member at {addr}) and --kill-leader-cmd (a shell command killing it)")
		case c.Failovers < 1:
			return fmt.Errorf("bench: failovers must be at least 1")
		case c.Failovers > 1 && c.RestartCmd == "":
			return fmt.Errorf("bench: %d failovers need --restart-cmd to bring each killed member back", c.Failovers)
		case c.Duration <= 0:
			return fmt.Errorf("bench: failover needs --duration (steady writes before each kill)")
		}
	}
	if c.Workload == "fsync" {
		switch {
		case c.Dir == "":
			return fmt.Errorf("bench: fsync needs --dir (a directory on the disk to measure)")
		case c.Payload < 1:
			return fmt.Errorf("bench: fsync needs a payload of at least 1 byte")
		}
	}
	for _, pid := range c.ServerPIDs {
		if pid <= 0 {
			return fmt.Errorf("bench: server pid %d is not a process id", pid)
		}
	}
	for _, r := range c.ReadRatios {
		if r < 0 || r > 100 {
			return fmt.Errorf("bench: read ratio %d%% is not a percentage", r)
		}
	}
	if _, ok := workloads[c.Workload]; !ok {
		return fmt.Errorf("bench: unknown workload %q (have %v)", c.Workload, WorkloadNames())
	}
	return nil
}
