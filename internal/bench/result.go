package bench

import "time"

// Result is the machine-readable outcome of one run (`--json`).
type Result struct {
	Workload string    `json:"workload"`
	Label    string    `json:"label"`
	Started  time.Time `json:"started"`
	Settings Settings  `json:"settings"`
	// Phases are the measured phases in the order they ran.
	Phases []PhaseResult `json:"phases"`
	// Metrics are the workload's own numbers (hand-offs/s, bytes per
	// znode, ...).
	Metrics []Metric `json:"metrics,omitempty"`
	// Notes say what was not measured and why.
	Notes []string `json:"notes,omitempty"`
	// Failovers are the leader kills of the failover workload, in order.
	Failovers []FailoverSample `json:"failovers,omitempty"`
}

// Settings echoes the configuration a result was measured with.
type Settings struct {
	Servers string `json:"servers"`
	// ConnectServers is the number of members in Servers; Spread how the
	// sessions were spread over them (SpreadRoundRobin, SpreadShuffle).
	ConnectServers int    `json:"connect_string_servers"`
	Spread         string `json:"spread"`
	// Failovers is the number of leader kills asked for (failover).
	Failovers  int     `json:"failovers,omitempty"`
	Clients    int     `json:"clients"`
	Inflight   int     `json:"inflight"`
	Payload    int     `json:"payload_bytes"`
	Duration   float64 `json:"duration_s,omitempty"`
	Ops        int64   `json:"ops,omitempty"`
	Warmup     float64 `json:"warmup_s,omitempty"`
	Rate       float64 `json:"rate,omitempty"`
	Cores      int     `json:"generator_cores"`
	ReadRatios []int   `json:"read_ratios,omitempty"`
	// ServerPIDs are the server processes read from /proc, one per
	// member (Config.ServerPIDs). Results written before ensembles were
	// measured have a single "server_pid" instead, which is ignored.
	ServerPIDs []int `json:"server_pids,omitempty"`
	// Dir is the directory the fsync workload wrote in.
	Dir string `json:"dir,omitempty"`
}

// PhaseResult is one measured phase.
type PhaseResult struct {
	Name string `json:"name"`
	// Param is the phase's variable (the read ratio of a sweep step).
	Param float64 `json:"param"`
	// Mode is "closed" or "open" (fixed rate).
	Mode       string  `json:"mode"`
	Clients    int     `json:"clients"`
	Inflight   int     `json:"inflight"`
	Ops        int64   `json:"ops"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	Throughput float64 `json:"ops_per_s"`
	// FirstError is the text of the first failed request, if any.
	FirstError string       `json:"first_error,omitempty"`
	Latency    Summary      `json:"latency"`
	Curve      []CurvePoint `json:"curve,omitempty"`
	// GeneratorCPU is the generator's CPU use as a fraction of its cores
	// (1 = every core busy).
	GeneratorCPU float64 `json:"generator_cpu"`
	// Saturated: the generator used at least 90% of its cores, so the
	// throughput measures the generator, not the server.
	Saturated bool `json:"generator_saturated"`
	// Server* are read from /proc when the server's pid is known.
	ServerCPUPerOp float64 `json:"server_cpu_us_per_op,omitempty"`
	ServerRSS      int64   `json:"server_rss_bytes,omitempty"`
	ServerPeakRSS  int64   `json:"server_peak_rss_bytes,omitempty"`
}

// Metric is a named number a workload reports besides its phases.
type Metric struct {
	Name  string  `json:"name"`
	Value float64 `json:"value"`
	Unit  string  `json:"unit"`
}
