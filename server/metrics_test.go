package server

import (
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/wire"
)

// scrape is one parsed GET /metrics.
type scrape map[string]*dto.MetricFamily

// scrapeMetrics serves srv's metrics as /metrics does and parses a scrape
// with Prometheus' own text parser.
func scrapeMetrics(t *testing.T, srv *Server) scrape {
	t.Helper()
	hs := httptest.NewServer(metrics.Handler(srv.Metrics()))
	defer hs.Close()
	resp, err := http.Get(hs.URL + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	p := expfmt.NewTextParser(model.UTF8Validation)
	mfs, err := p.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatalf("parse /metrics: %v", err)
	}
	return mfs
}

// metric returns the sample of family name whose labels include the given
// name=value pairs, or nil.
func (s scrape) metric(name string, labels ...string) *dto.Metric {
	mf := s[name]
	if mf == nil {
		return nil
	}
next:
	for _, m := range mf.GetMetric() {
		for i := 0; i+1 < len(labels); i += 2 {
			found := false
			for _, lp := range m.GetLabel() {
				found = found || lp.GetName() == labels[i] && lp.GetValue() == labels[i+1]
			}
			if !found {
				continue next
			}
		}
		return m
	}
	return nil
}

// value returns a gauge's or counter's value, a summary's or histogram's
// count; 0 when absent.
func (s scrape) value(name string, labels ...string) float64 {
	m := s.metric(name, labels...)
	if m == nil {
		return 0
	}
	switch s[name].GetType() {
	case dto.MetricType_SUMMARY:
		return float64(m.GetSummary().GetSampleCount())
	case dto.MetricType_HISTOGRAM:
		return float64(m.GetHistogram().GetSampleCount())
	case dto.MetricType_COUNTER:
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue() + m.GetUntyped().GetValue()
}

// waitMetric polls srv's /metrics until cond holds, for at most 10s, and
// returns the last scrape.
func waitMetric(t *testing.T, srv *Server, what string, cond func(scrape) bool) scrape {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		s := scrapeMetrics(t, srv)
		if cond(s) {
			return s
		}
		if time.Now().After(deadline) {
			t.Fatalf("metrics: %s not reached within 10s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// zkNames are the metrics ZooKeeper's Prometheus provider exports that a
// standalone Warden exports too, with ZooKeeper's types.
var zkNames = map[string]dto.MetricType{
	"znode_count": dto.MetricType_GAUGE, "watch_count": dto.MetricType_GAUGE,
	"ephemerals_count": dto.MetricType_GAUGE, "approximate_data_size": dto.MetricType_GAUGE,
	"outstanding_requests": dto.MetricType_GAUGE, "avg_latency": dto.MetricType_GAUGE,
	"min_latency": dto.MetricType_GAUGE, "max_latency": dto.MetricType_GAUGE,
	"num_alive_connections": dto.MetricType_GAUGE, "packets_received": dto.MetricType_GAUGE,
	"packets_sent": dto.MetricType_GAUGE, "global_sessions": dto.MetricType_GAUGE,
	"local_sessions": dto.MetricType_GAUGE, "open_file_descriptor_count": dto.MetricType_GAUGE,
	"max_file_descriptor_count": dto.MetricType_GAUGE, "uptime": dto.MetricType_GAUGE,
	"auth_failed_count": dto.MetricType_GAUGE, "connection_drop_probability": dto.MetricType_GAUGE,

	"commit_count": dto.MetricType_COUNTER, "connection_rejected": dto.MetricType_COUNTER,
	"throttled_ops": dto.MetricType_COUNTER, "looking_count": dto.MetricType_COUNTER,
	"bytes_received_count": dto.MetricType_COUNTER, "snap_count": dto.MetricType_COUNTER,
	"diff_count": dto.MetricType_COUNTER, "connection_request_count": dto.MetricType_COUNTER,
	"connection_drop_count": dto.MetricType_COUNTER, "connection_revalidate_count": dto.MetricType_COUNTER,
	"request_throttle_wait_count": dto.MetricType_COUNTER, "stale_requests": dto.MetricType_COUNTER,
	"stale_requests_dropped": dto.MetricType_COUNTER, "large_requests_rejected": dto.MetricType_COUNTER,

	"election_time": dto.MetricType_SUMMARY, "fsynctime": dto.MetricType_SUMMARY,
	"snapshottime": dto.MetricType_SUMMARY, "readlatency": dto.MetricType_SUMMARY,
	"updatelatency": dto.MetricType_SUMMARY, "proposal_latency": dto.MetricType_SUMMARY,
	"quorum_ack_latency": dto.MetricType_SUMMARY, "follower_sync_time": dto.MetricType_SUMMARY,
	"unavailable_time": dto.MetricType_SUMMARY, "leader_unavailable_time": dto.MetricType_SUMMARY,
	"dbinittime": dto.MetricType_SUMMARY, "observer_sync_time": dto.MetricType_SUMMARY,
	"connection_token_deficit": dto.MetricType_SUMMARY, "request_throttle_queue_time_ms": dto.MetricType_SUMMARY,
}

// wardenNames are Warden's own metrics and the Go runtime's.
var wardenNames = map[string]dto.MetricType{
	"fsync_threshold_exceed_count":      dto.MetricType_COUNTER,
	"warden_raft_term":                  dto.MetricType_GAUGE,
	"warden_raft_commit_index":          dto.MetricType_GAUGE,
	"warden_raft_applied_index":         dto.MetricType_GAUGE,
	"warden_raft_apply_lag":             dto.MetricType_GAUGE,
	"warden_raft_log_bytes":             dto.MetricType_GAUGE,
	"warden_wal_fsync_duration_seconds": dto.MetricType_HISTOGRAM,
	"warden_snapshot_duration_seconds":  dto.MetricType_HISTOGRAM,
	"warden_snapshot_size_bytes":        dto.MetricType_GAUGE,
	"warden_request_duration_seconds":   dto.MetricType_HISTOGRAM,
	"warden_leader_changes_total":       dto.MetricType_COUNTER,
	"go_goroutines":                     dto.MetricType_GAUGE,
	"process_open_fds":                  dto.MetricType_GAUGE,
}

func TestMetricsEveryNameExported(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	if _, err := c.Create("/a", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	// A write's latency is recorded once its reply is queued.
	s := waitMetric(t, srv, "the create's latency", func(s scrape) bool { return s.value("updatelatency") >= 1 })
	for _, names := range []map[string]dto.MetricType{zkNames, wardenNames} {
		for name, typ := range names {
			mf := s[name]
			switch {
			case mf == nil:
				t.Errorf("/metrics lacks %s", name)
			case mf.GetType() != typ:
				t.Errorf("%s is a %v, want a %v", name, mf.GetType(), typ)
			}
		}
	}
	if got := s.value("dbinittime"); got != 1 {
		t.Errorf("dbinittime_count = %v, want 1 (the start)", got)
	}
	// Summaries carry ZooKeeper's quantiles: the median, plus 0.9 and 0.99
	// for the latencies.
	for name, want := range map[string]int{"fsynctime": 1, "election_time": 1, "readlatency": 3, "updatelatency": 3} {
		if m := s.metric(name); m == nil || len(m.GetSummary().GetQuantile()) != want {
			t.Errorf("%s has quantiles %v, want %d", name, m.GetSummary().GetQuantile(), want)
		}
	}
}

func TestMetricsMoveWithAWorkload(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	const creates, reads = 5, 4
	// Every request gets one reply: the server is quiet once it sent as
	// many packets as it received (a packet is counted once written, maybe
	// after the client has read it).
	quiet := func(s scrape) bool { return s.value("packets_sent") == s.value("packets_received") }
	before := waitMetric(t, srv, "quiet", quiet)
	for i := range creates {
		if _, err := c.Create(fmt.Sprintf("/n%d", i), []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	for i := range reads {
		if _, _, err := c.Get(fmt.Sprintf("/n%d", i)); err != nil {
			t.Fatal(err)
		}
	}
	delta := func(s scrape, name string, labels ...string) float64 {
		return s.value(name, labels...) - before.value(name, labels...)
	}
	// A write's latency is recorded once its reply is queued: wait for it.
	after := waitMetric(t, srv, "updatelatency_count +5 and quiet", func(s scrape) bool {
		return delta(s, "updatelatency") >= creates && delta(s, "readlatency") >= reads && quiet(s)
	})
	pings := delta(after, "warden_request_duration_seconds", "op", "ping") // the client's, if one fell in
	for _, tt := range []struct {
		name   string
		labels []string
		want   float64
	}{
		{"updatelatency", nil, creates},
		{"readlatency", nil, reads + pings}, // ZooKeeper counts pings as reads
		{"warden_request_duration_seconds", []string{"op", "create"}, creates},
		{"warden_request_duration_seconds", []string{"op", "get_data"}, reads},
		{"znode_count", nil, creates},
		{"commit_count", nil, 0}, // a standalone ZooKeeper has no Leader.commit
	} {
		if got := delta(after, tt.name, tt.labels...); got != tt.want {
			t.Errorf("%s%v moved by %v, want %v", tt.name, tt.labels, got, tt.want)
		}
	}
	if got := delta(after, "packets_received"); got != creates+reads+pings {
		t.Errorf("packets_received moved by %v, want %v", got, creates+reads+pings)
	}
	if got := delta(after, "packets_sent"); got != creates+reads+pings {
		t.Errorf("packets_sent moved by %v, want %v", got, creates+reads+pings)
	}
	// Each create waited for its own fsync.
	for _, name := range []string{"fsynctime", "warden_wal_fsync_duration_seconds"} {
		if got := delta(after, name); got < creates {
			t.Errorf("%s_count moved by %v, want at least %d", name, got, creates)
		}
	}
	if got := delta(after, "warden_raft_applied_index"); got < creates {
		t.Errorf("warden_raft_applied_index moved by %v, want at least %d", got, creates)
	}
	if after.value("warden_raft_term") < 1 || after.value("warden_raft_commit_index") < after.value("warden_raft_applied_index") {
		t.Errorf("raft gauges: term %v, commit %v, applied %v", after.value("warden_raft_term"),
			after.value("warden_raft_commit_index"), after.value("warden_raft_applied_index"))
	}
}

func TestMetricsAuthFailedAndConnectionRejected(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.MaxClientCnxns = 1 })
	c := connect(t, srv)
	if err := c.AddAuth("no-such-scheme", []byte("x")); err == nil {
		t.Fatal("addauth with an unknown scheme succeeded")
	}
	waitMetric(t, srv, "auth_failed_count 1", func(s scrape) bool { return s.value("auth_failed_count") == 1 })
	c.Close()
	waitMetric(t, srv, "no connection", func(s scrape) bool { return s.value("num_alive_connections") == 0 })

	rawSession(t, srv)
	nc, err := net.Dial("tcp", srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	s := waitMetric(t, srv, "connection_rejected 1", func(s scrape) bool { return s.value("connection_rejected") >= 1 })
	if got := s.value("connection_rejected"); got != 1 {
		t.Errorf("connection_rejected = %v, want 1", got)
	}
}

func TestMetricsSnapshot(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.SnapCount = 5 })
	c := connect(t, srv)
	for i := range 10 {
		if _, err := c.Create(fmt.Sprintf("/s%d", i), []byte("payload"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
	}
	s := waitMetric(t, srv, "a snapshot", func(s scrape) bool { return s.value("snapshottime") >= 1 })
	if s.value("warden_snapshot_duration_seconds") < 1 || s.value("warden_snapshot_size_bytes") <= 0 {
		t.Errorf("snapshot: duration count %v, size %v bytes", s.value("warden_snapshot_duration_seconds"), s.value("warden_snapshot_size_bytes"))
	}
}

func TestMetricsEveryFsyncSlowWithThresholdZero(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.Raw["fsync.warningthresholdms"] = "0" })
	c := connect(t, srv)
	if _, err := c.Create("/slow", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	s := scrapeMetrics(t, srv)
	if n := s.value("fsync_threshold_exceed_count"); n < 1 || n != s.value("fsynctime") {
		t.Errorf("fsync_threshold_exceed_count = %v, fsynctime_count = %v: want every fsync counted slow", n, s.value("fsynctime"))
	}
}

func TestMetricsConfigErrorsStopTheServer(t *testing.T) {
	for _, tt := range []struct {
		raw  map[string]string
		want string
	}{
		{map[string]string{"metricsProvider.className": "com.example.Provider"}, "com.example.Provider is not supported"},
		{map[string]string{"metricsProvider.className": metrics.PrometheusProvider, "metricsProvider.httpPort": "x"}, "not a port number"},
		{map[string]string{"fsync.warningthresholdms": "soon"}, "fsync.warningthresholdms"},
	} {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		cfg.DataLogDir = cfg.DataDir
		for k, v := range tt.raw {
			cfg.Raw[k] = v
		}
		srv, err := Start(cfg, Options{Listener: mustListen(t), Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
		if err == nil {
			srv.Close()
			t.Errorf("%v: the server started", tt.raw)
			continue
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%v: error %q, want one containing %q", tt.raw, err, tt.want)
		}
	}
}

// mntrValues parses mntr's output into name → value (without "zk_").
func mntrValues(out string) map[string]string {
	m := make(map[string]string)
	for _, line := range strings.Split(strings.TrimSpace(out), "\n") {
		k, v, _ := strings.Cut(line, "\t")
		m[strings.TrimPrefix(k, "zk_")] = v
	}
	return m
}

func TestMntrHasTheSummariesAndAgreesWithMetrics(t *testing.T) {
	srv, _ := startServer(t, nil)
	c := connect(t, srv)
	if _, err := c.Create("/m", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	waitMetric(t, srv, "the create's latency", func(s scrape) bool { return s.value("updatelatency") >= 1 })
	mntr := mntrValues(fourLetter(t, srv, "mntr"))
	summaries := []string{"election_time", "fsynctime", "snapshottime", "readlatency", "updatelatency",
		"proposal_latency", "quorum_ack_latency", "follower_sync_time", "unavailable_time", "leader_unavailable_time", "dbinittime", "observer_sync_time"}
	for _, name := range summaries {
		for _, p := range []string{"avg_", "min_", "max_", "cnt_", "sum_"} {
			if _, ok := mntr[p+name]; !ok {
				t.Errorf("mntr lacks zk_%s%s", p, name)
			}
		}
	}
	for _, name := range []string{"readlatency", "updatelatency", "proposal_latency", "quorum_ack_latency"} {
		for _, p := range []string{"p50_", "p95_", "p99_", "p999_"} {
			if _, ok := mntr[p+name]; !ok {
				t.Errorf("mntr lacks zk_%s%s", p, name)
			}
		}
	}
	if _, ok := mntr["p50_fsynctime"]; ok {
		t.Error("mntr has percentiles for fsynctime, a Basic summary in ZooKeeper")
	}
	if mntr["cnt_updatelatency"] != "1" || mntr["avg_election_time"] != "0.0" {
		t.Errorf("zk_cnt_updatelatency = %s, zk_avg_election_time = %s; want 1 and 0.0", mntr["cnt_updatelatency"], mntr["avg_election_time"])
	}

	// mntr and /metrics read the same values: once the server is quiet
	// (the client may ping, and mntr itself is a packet), both agree.
	var diffs []string
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		s := scrapeMetrics(t, srv)
		mntr := mntrValues(fourLetter(t, srv, "mntr"))
		s2 := scrapeMetrics(t, srv)
		diffs = nil
		for _, name := range summaries {
			if got, want := mntr["cnt_"+name], strconv.Itoa(int(s.value(name))); got != want {
				diffs = append(diffs, fmt.Sprintf("zk_cnt_%s = %s, %s_count = %s", name, got, name, want))
			}
		}
		for _, name := range []string{"znode_count", "ephemerals_count", "approximate_data_size", "global_sessions",
			"commit_count", "connection_rejected", "looking_count", "auth_failed_count"} {
			if got, want := mntr[name], strconv.Itoa(int(s.value(name))); got != want {
				diffs = append(diffs, fmt.Sprintf("zk_%s = %s, /metrics %s = %s", name, got, name, want))
			}
		}
		// mntr's own connection is alive while it runs, and its request is
		// counted before its reply is written.
		if got, want := mntr["num_alive_connections"], strconv.Itoa(int(s.value("num_alive_connections"))+1); got != want {
			diffs = append(diffs, fmt.Sprintf("zk_num_alive_connections = %s, /metrics num_alive_connections + 1 = %s", got, want))
		}
		if got, want := mntr["packets_received"], strconv.Itoa(int(s2.value("packets_received"))); got != want {
			diffs = append(diffs, fmt.Sprintf("zk_packets_received = %s, /metrics after it %s", got, want))
		}
		if len(diffs) == 0 {
			return
		}
	}
	t.Errorf("mntr and /metrics disagree:\n%s", strings.Join(diffs, "\n"))
}

// jvmNames are the JVM series of ZooKeeper's provider (simpleclient_hotspot)
// that Warden computes from the Go runtime with exportJvmInfo=true.
var jvmNames = map[string]dto.MetricType{
	"jvm_memory_bytes_used":      dto.MetricType_GAUGE,
	"jvm_memory_bytes_committed": dto.MetricType_GAUGE,
	"jvm_memory_bytes_max":       dto.MetricType_GAUGE,
	"jvm_threads_current":        dto.MetricType_GAUGE,
	"jvm_threads_started_total":  dto.MetricType_COUNTER,
	"jvm_gc_collection_seconds":  dto.MetricType_SUMMARY,
	"jvm_info":                   dto.MetricType_GAUGE,
}

func TestMetricsJVMSeries(t *testing.T) {
	srv, _ := startServer(t, nil) // exportJvmInfo defaults to true
	s := scrapeMetrics(t, srv)
	for name, typ := range jvmNames {
		if mf := s[name]; mf == nil || mf.GetType() != typ {
			t.Errorf("/metrics %s: %v, want a %v", name, mf, typ)
		}
	}
	if t.Failed() {
		return
	}
	// ZooKeeper's JvmMemoryFillingUp:
	// jvm_memory_bytes_used{area="heap"} / jvm_memory_bytes_max{area="heap"} > 0.8
	used, max := s.value("jvm_memory_bytes_used", "area", "heap"), s.value("jvm_memory_bytes_max", "area", "heap")
	if ratio := used / max; !(used > 0 && used <= max && ratio > 0 && ratio < 1) {
		t.Errorf("heap used %v, max %v: the alert's ratio %v is not in (0, 1)", used, max, ratio)
	}
	if s.value("jvm_threads_current") < 1 || s.value("jvm_info", "runtime", "go", "vendor", "Warden") != 1 {
		t.Errorf("jvm_threads_current %v, jvm_info %v", s.value("jvm_threads_current"), s["jvm_info"])
	}
	gcs := s.value("jvm_gc_collection_seconds", "gc", "go")
	runtime.GC()
	if got := scrapeMetrics(t, srv).value("jvm_gc_collection_seconds", "gc", "go"); got < gcs+1 {
		t.Errorf("jvm_gc_collection_seconds_count{gc=\"go\"} %v → %v after runtime.GC", gcs, got)
	}
}

func TestMetricsWithoutJVMInfo(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) {
		c.Raw["metricsProvider.className"] = metrics.PrometheusProvider
		c.Raw["metricsProvider.exportJvmInfo"] = "false"
	})
	for name := range scrapeMetrics(t, srv) {
		if strings.HasPrefix(name, "jvm_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			t.Errorf("%s exported with metricsProvider.exportJvmInfo=false", name)
		}
	}
}

func TestMetricsBytesReceived(t *testing.T) {
	srv, _ := startServer(t, nil)
	before := scrapeMetrics(t, srv).value("bytes_received_count")
	nc, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	// A known sequence of frames, each answered before the next: the
	// counter moves by their sizes, length prefixes included.
	connectReq := wire.ConnectRequest{TimeOut: 30000, Passwd: make([]byte, 16)}
	frames := [][]byte{
		wire.AppendFrame(nil, connectReq.Encode),
		wire.AppendRecords(nil, &wire.RequestHeader{Xid: 1, Type: wire.OpCreate},
			&wire.CreateRequest{Path: "/bytes", Data: []byte("twelve bytes"), ACL: wire.OpenACLUnsafe}),
		wire.AppendRecords(nil, &wire.RequestHeader{Xid: 2, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/bytes"}),
		wire.AppendRecords(nil, &wire.RequestHeader{Xid: 3, Type: wire.OpExists}, &wire.ExistsRequest{Path: "/none"}),
	}
	want := 0
	for i, f := range frames {
		if _, err := nc.Write(f); err != nil {
			t.Fatal(err)
		}
		if _, err := wire.ReadFrame(nc, wire.DefaultMaxBuffer, nil); err != nil {
			t.Fatalf("frame %d: %v", i, err)
		}
		want += len(f)
	}
	fourLetter(t, srv, "ruok") // 4 bytes, as ZooKeeper counts a four-letter word
	want += 4
	if got := scrapeMetrics(t, srv).value("bytes_received_count") - before; got != float64(want) {
		t.Errorf("bytes_received_count moved by %v, want %d", got, want)
	}
	if typ := scrapeMetrics(t, srv)["bytes_received_count"].GetType(); typ != dto.MetricType_COUNTER {
		t.Errorf("bytes_received_count is a %v, want a counter", typ)
	}
}
