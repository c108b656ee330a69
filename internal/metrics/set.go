package metrics

import (
	"math"
	"strconv"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
)

// Value is one line of mntr: a name without mntr's "zk_" prefix, and a
// number or a string.
type Value struct {
	Name  string
	Value any
}

// Set is one server's metrics: ZooKeeper's, under ZooKeeper's names, and
// Warden's own, prefixed warden_. Each server has its own Set and
// registry (several servers run in one test process). The code that
// measures records into the fields; nil fields and a nil *Set are valid
// and record nothing, so packages can be used without metrics.
type Set struct {
	reg *prometheus.Registry

	// ZooKeeper's summaries (ServerMetrics.java), times in milliseconds.

	// ElectionTime is the time from the start of a leader election (the
	// member lost its leader, or started) to the member leading or
	// following. Basic.
	ElectionTime *Summary
	// FsyncTime is the duration of each fsync of the write-ahead log. Basic.
	FsyncTime *Summary
	// SnapshotTime is the time to write a snapshot of the state. Basic.
	SnapshotTime *Summary
	// DBInitTime is the time to load the state at start: the snapshot,
	// then the write-ahead log replayed. Basic.
	DBInitTime *Summary
	// ReadLatency is the time from receiving a client request that is not
	// a write (pings included) to its reply. Advanced.
	ReadLatency *Summary
	// UpdateLatency is the time from receiving a client write to its reply,
	// once it was committed and applied. Advanced.
	UpdateLatency *Summary
	// ProposalLatency is, on a member that does not lead, the time from a
	// write's proposal to its arrival in this member's state. Advanced.
	ProposalLatency *Summary
	// QuorumAckLatency is, on the leader, the time from a write's proposal
	// to its commit by a quorum. Advanced.
	QuorumAckLatency *Summary
	// FollowerSyncTime is, on a follower, the time from learning a new
	// leader to being in sync with it. Basic.
	FollowerSyncTime *Summary
	// ObserverSyncTime is FollowerSyncTime for an observer. Basic.
	ObserverSyncTime *Summary
	// UnavailableTime is the time a member spent without serving (no
	// leader known), each time it serves again. Basic.
	UnavailableTime *Summary
	// LeaderUnavailableTime is UnavailableTime when the member ends it as
	// leader. Basic.
	LeaderUnavailableTime *Summary

	// ZooKeeper's counters.

	// CommitCount counts, on the leader, the writes committed (ZooKeeper's
	// Leader.commit: one per proposal; a follower's stays 0, and so does
	// a standalone server's).
	CommitCount *Counter
	// LookingCount counts the times the member started looking for a
	// leader.
	LookingCount *Counter
	// FsyncThresholdExceeded counts write-ahead log fsyncs slower than
	// fsync.warningthresholdms (ZooKeeper's ServerStats
	// fsync_threshold_exceed_count).
	FsyncThresholdExceeded *Counter
	// BytesReceived counts the bytes of client requests read, each
	// frame's 4-byte length prefix included, and 4 per four-letter word
	// (ZooKeeper's ServerCnxn.packetReceived).
	BytesReceived *Counter
	// SnapCount counts, on the leader, the snapshots sent to catch up a
	// member: raft sends one when the entries the member lacks were
	// compacted away (a wiped member, or one down for long). Each attempt
	// counts, as ZooKeeper counts each SNAP sync it starts
	// (LearnerHandler).
	SnapCount *Counter
	// DiffCount counts, on the leader, the members brought back in step
	// by log entries alone: each time the leader had to find where a
	// member's log stands (it was elected, the member restarted or came
	// back after a partition, messages to it were lost) and resumed
	// streaming entries from there with no snapshot sent (ZooKeeper's
	// LearnerHandler: a DIFF or TRUNC sync).
	DiffCount *Counter

	// Admission control (ZooKeeper 3.6+'s throttles; docs/operations.md
	// "Limits and throttling").

	// ConnectionRequestCount counts the session establishments the
	// connection throttler let through (ZooKeeper counts them while the
	// throttler is off too).
	ConnectionRequestCount *Counter
	// ConnectionDropCount counts client connections whose client closed
	// its end (the server read end of stream).
	ConnectionDropCount *Counter
	// ConnectionRevalidateCount counts reconnections that asked to
	// re-attach an existing session.
	ConnectionRevalidateCount *Counter
	// ConnectionTokenDeficit is, after each session establishment the
	// connection throttler let through, how many tokens its bucket lacks.
	// Basic.
	ConnectionTokenDeficit *Summary
	// RequestThrottleWaitCount counts the times a request found the
	// server at request_throttle_max_requests and waited (once per
	// request_throttle_stall_time period).
	RequestThrottleWaitCount *Counter
	// RequestThrottleQueueTime is the time each request spent in the
	// request throttler, in ms. Advanced.
	RequestThrottleQueueTime *Summary
	// StaleRequests counts requests found stale (their connection closed,
	// or, with request_stale_latency_check, older than their session
	// timeout) in the request throttler.
	StaleRequests *Counter
	// StaleRequestsDropped counts the stale requests dropped
	// (request_throttle_drop_stale).
	StaleRequestsDropped *Counter
	// LargeRequestsRejected counts connections closed because a large
	// request would have passed largeRequestMaxBytes.
	LargeRequestsRejected *Counter

	// Warden's own.

	// WALFsync is warden_wal_fsync_duration_seconds.
	WALFsync prometheus.Histogram
	// SnapshotDuration is warden_snapshot_duration_seconds.
	SnapshotDuration prometheus.Histogram
	// SnapshotBytes is warden_snapshot_size_bytes.
	SnapshotBytes prometheus.Gauge
	// RequestDuration is warden_request_duration_seconds{op}.
	RequestDuration *prometheus.HistogramVec
	// requestObservers caches RequestDuration's child of each op
	// (string → prometheus.Observer): finding it again hashes the label
	// on every request.
	requestObservers sync.Map
	// LeaderChanges is warden_leader_changes_total.
	LeaderChanges prometheus.Counter

	summaries []*Summary
	counters  []*Counter

	mu sync.Mutex
	// monitor and counterNames are set by ExportMonitor.
	monitor      func() []Value
	counterNames map[string]bool
	// raft is set by ExportRaft.
	raft func() RaftState
}

// RaftState is what ExportRaft reads at each scrape.
type RaftState struct {
	Term, Commit, Applied uint64
	// LogBytes is the entry data held in the in-memory raft log.
	LogBytes uint64
}

// Options configure a Set.
type Options struct {
	// Runtime (metricsProvider.exportJvmInfo) adds the Go runtime and
	// process collectors (go_*, process_*) and the JVM series of
	// ZooKeeper's provider that have a Go counterpart (jvm_memory_bytes_*,
	// jvm_threads_*, jvm_gc_collection_seconds, jvm_info), computed from
	// the Go runtime at each scrape.
	Runtime bool
	// Now is the clock of the summaries' 10-minute quantile windows; nil
	// means time.Now. Tests pass a fake one.
	Now func() time.Time
}

// New returns a Set with its own registry.
func New(opts Options) *Set {
	s := &Set{reg: prometheus.NewRegistry()}
	sum := func(name, help string, level Level) *Summary {
		x := newSummary(name, help, level, opts.Now)
		s.summaries = append(s.summaries, x)
		s.reg.MustRegister(x)
		return x
	}
	s.ElectionTime = sum("election_time", "Time from the start of a leader election to leading or following, in ms.", Basic)
	s.FsyncTime = sum("fsynctime", "Duration of each fsync of the write-ahead log, in ms.", Basic)
	s.SnapshotTime = sum("snapshottime", "Time to write a snapshot, in ms.", Basic)
	s.DBInitTime = sum("dbinittime", "Time to load the state at start (snapshot and log replay), in ms.", Basic)
	s.ReadLatency = sum("readlatency", "Latency of client requests that are not writes (pings included), in ms.", Advanced)
	s.UpdateLatency = sum("updatelatency", "Latency of client writes, from receipt to reply, in ms.", Advanced)
	s.ProposalLatency = sum("proposal_latency", "On a non-leader, time from a write's proposal to its arrival in this member's state, in ms.", Advanced)
	s.QuorumAckLatency = sum("quorum_ack_latency", "On the leader, time from a write's proposal to its commit by a quorum, in ms.", Advanced)
	s.FollowerSyncTime = sum("follower_sync_time", "On a follower, time from learning a new leader to being in sync with it, in ms.", Basic)
	s.ObserverSyncTime = sum("observer_sync_time", "On an observer, time from learning a new leader to being in sync with it, in ms.", Basic)
	s.UnavailableTime = sum("unavailable_time", "Time the member spent without a leader, each time it serves again, in ms.", Basic)
	s.LeaderUnavailableTime = sum("leader_unavailable_time", "unavailable_time of the periods that ended with this member leading, in ms.", Basic)
	s.ConnectionTokenDeficit = sum("connection_token_deficit", "Tokens missing from the connection throttler's bucket after each session it let through.", Basic)
	s.RequestThrottleQueueTime = sum("request_throttle_queue_time_ms", "Time each request spent in the request throttler, in ms.", Advanced)

	counter := func(name, help string) *Counter {
		c := &Counter{name: name, help: help}
		s.counters = append(s.counters, c)
		s.reg.MustRegister(prometheus.NewCounterFunc(prometheus.CounterOpts{Name: name, Help: help},
			func() float64 { return float64(c.Value()) }))
		return c
	}
	s.CommitCount = counter("commit_count", "On the leader, writes committed by a quorum.")
	s.LookingCount = counter("looking_count", "Times this member started looking for a leader.")
	s.FsyncThresholdExceeded = counter("fsync_threshold_exceed_count", "Write-ahead log fsyncs slower than fsync.warningthresholdms.")
	s.BytesReceived = counter("bytes_received_count", "Bytes of client requests received, length prefixes included.")
	s.SnapCount = counter("snap_count", "On the leader, snapshots sent to catch up a member whose missing entries were compacted away.")
	s.DiffCount = counter("diff_count", "On the leader, members brought in step by log entries alone (no snapshot).")
	s.ConnectionRequestCount = counter("connection_request_count", "Session establishments the connection throttler let through.")
	s.ConnectionDropCount = counter("connection_drop_count", "Client connections closed by their client.")
	s.ConnectionRevalidateCount = counter("connection_revalidate_count", "Reconnections that asked to re-attach an existing session.")
	s.RequestThrottleWaitCount = counter("request_throttle_wait_count", "Times a request waited in the request throttler (once per stall period).")
	s.StaleRequests = counter("stale_requests", "Requests found stale in the request throttler.")
	s.StaleRequestsDropped = counter("stale_requests_dropped", "Stale requests dropped by the request throttler.")
	s.LargeRequestsRejected = counter("large_requests_rejected", "Connections closed for a large request past largeRequestMaxBytes.")

	s.WALFsync = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "warden_wal_fsync_duration_seconds",
		Help:    "Duration of each fsync of the write-ahead log, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 17), // 100µs to 6.5s
	})
	s.SnapshotDuration = prometheus.NewHistogram(prometheus.HistogramOpts{
		Name:    "warden_snapshot_duration_seconds",
		Help:    "Time to write a snapshot file, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.001, 2, 17), // 1ms to 65s
	})
	s.SnapshotBytes = prometheus.NewGauge(prometheus.GaugeOpts{
		Name: "warden_snapshot_size_bytes",
		Help: "Size of the state written by the last snapshot, in bytes.",
	})
	s.RequestDuration = prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name:    "warden_request_duration_seconds",
		Help:    "Latency of client requests by operation, from receipt to reply, in seconds.",
		Buckets: prometheus.ExponentialBuckets(0.0001, 2, 18), // 100µs to 13s
	}, []string{"op"})
	s.LeaderChanges = prometheus.NewCounter(prometheus.CounterOpts{
		Name: "warden_leader_changes_total",
		Help: "Times this member learned of a new leader (its first one included).",
	})
	s.reg.MustRegister(s.WALFsync, s.SnapshotDuration, s.SnapshotBytes, s.RequestDuration, s.LeaderChanges,
		&monitorCollector{s}, &raftCollector{s})
	if opts.Runtime {
		s.reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}),
			newJVMCollector())
	}
	return s
}

// Registry returns the Set's registry, for /metrics and for tests.
func (s *Set) Registry() *prometheus.Registry { return s.reg }

// Monitor returns mntr's lines for the Set: its counters, then each
// summary as avg_/min_/max_/cnt_/sum_<name> (and p50_/p95_/p99_/p999_
// for Advanced ones), as ZooKeeper prints them.
func (s *Set) Monitor() []Value {
	if s == nil {
		return nil
	}
	var out []Value
	for _, c := range s.counters {
		out = append(out, Value{c.name, c.Value()})
	}
	for _, x := range s.summaries {
		out = x.monitor(out)
	}
	return out
}

// ExportMonitor has /metrics export, at each scrape, the numeric values fn
// returns (the server's mntr values: ZooKeeper's gauges), so mntr and
// /metrics always agree. Names in counters are exported as counters, the
// others as gauges; strings that are not numbers are left out.
func (s *Set) ExportMonitor(fn func() []Value, counters ...string) {
	if s == nil {
		return
	}
	names := make(map[string]bool, len(counters))
	for _, c := range counters {
		names[c] = true
	}
	s.mu.Lock()
	s.monitor, s.counterNames = fn, names
	s.mu.Unlock()
}

// ExportRaft has /metrics export warden_raft_term,
// warden_raft_commit_index, warden_raft_applied_index,
// warden_raft_apply_lag and warden_raft_log_bytes from fn at each scrape.
func (s *Set) ExportRaft(fn func() RaftState) {
	if s == nil {
		return
	}
	s.mu.Lock()
	s.raft = fn
	s.mu.Unlock()
}

// ObserveRequest records a client request's latency: readlatency or
// updatelatency (ms), and warden_request_duration_seconds{op}.
func (s *Set) ObserveRequest(op string, write bool, d time.Duration) {
	if s == nil {
		return
	}
	if write {
		s.UpdateLatency.ObserveDuration(d)
	} else {
		s.ReadLatency.ObserveDuration(d)
	}
	o, ok := s.requestObservers.Load(op)
	if !ok {
		o, _ = s.requestObservers.LoadOrStore(op, s.RequestDuration.WithLabelValues(op))
	}
	o.(prometheus.Observer).Observe(d.Seconds())
}

// ObserveFsync records one fsync of the write-ahead log: fsynctime (ms),
// warden_wal_fsync_duration_seconds and, when slow,
// fsync_threshold_exceed_count.
func (s *Set) ObserveFsync(d time.Duration, slow bool) {
	if s == nil {
		return
	}
	s.FsyncTime.ObserveDuration(d)
	s.WALFsync.Observe(d.Seconds())
	if slow {
		s.FsyncThresholdExceeded.Inc()
	}
}

// ObserveSnapshot records a snapshot written in d, holding size bytes of
// state: snapshottime (ms), warden_snapshot_duration_seconds and
// warden_snapshot_size_bytes.
func (s *Set) ObserveSnapshot(d time.Duration, size int64) {
	if s == nil {
		return
	}
	// The summary last: a scrape that sees it sees the other two.
	s.SnapshotDuration.Observe(d.Seconds())
	s.SnapshotBytes.Set(float64(size))
	s.SnapshotTime.ObserveDuration(d)
}

// monitorCollector exports ExportMonitor's values.
type monitorCollector struct{ s *Set }

// Describe sends nothing: the values are only known at scrape time (an
// unchecked collector).
func (c *monitorCollector) Describe(chan<- *prometheus.Desc) {}

func (c *monitorCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	fn, counters := c.s.monitor, c.s.counterNames
	c.s.mu.Unlock()
	if fn == nil {
		return
	}
	seen := make(map[string]bool)
	for _, v := range fn() {
		f, ok := number(v.Value)
		if !ok || seen[v.Name] {
			continue
		}
		seen[v.Name] = true
		typ := prometheus.GaugeValue
		if counters[v.Name] {
			typ = prometheus.CounterValue
		}
		desc := prometheus.NewDesc(v.Name, v.Name+" (as in mntr)", nil, nil)
		m, err := prometheus.NewConstMetric(desc, typ, f)
		if err != nil {
			ch <- prometheus.NewInvalidMetric(desc, err)
			continue
		}
		ch <- m
	}
}

// raftCollector exports ExportRaft's values.
type raftCollector struct{ s *Set }

var (
	termDesc    = prometheus.NewDesc("warden_raft_term", "Current raft term.", nil, nil)
	commitDesc  = prometheus.NewDesc("warden_raft_commit_index", "Index of the last log entry known committed.", nil, nil)
	appliedDesc = prometheus.NewDesc("warden_raft_applied_index", "Index of the last log entry applied to the state.", nil, nil)
	lagDesc     = prometheus.NewDesc("warden_raft_apply_lag", "Committed log entries not yet applied (commit index − applied index).", nil, nil)
	logDesc     = prometheus.NewDesc("warden_raft_log_bytes", "Bytes of entry data in the in-memory raft log.", nil, nil)
)

func (c *raftCollector) Describe(ch chan<- *prometheus.Desc) {
	ch <- termDesc
	ch <- commitDesc
	ch <- appliedDesc
	ch <- lagDesc
	ch <- logDesc
}

func (c *raftCollector) Collect(ch chan<- prometheus.Metric) {
	c.s.mu.Lock()
	fn := c.s.raft
	c.s.mu.Unlock()
	if fn == nil {
		return
	}
	st := fn()
	lag := uint64(0)
	if st.Commit > st.Applied {
		lag = st.Commit - st.Applied
	}
	ch <- prometheus.MustNewConstMetric(termDesc, prometheus.GaugeValue, float64(st.Term))
	ch <- prometheus.MustNewConstMetric(commitDesc, prometheus.GaugeValue, float64(st.Commit))
	ch <- prometheus.MustNewConstMetric(appliedDesc, prometheus.GaugeValue, float64(st.Applied))
	ch <- prometheus.MustNewConstMetric(lagDesc, prometheus.GaugeValue, float64(lag))
	ch <- prometheus.MustNewConstMetric(logDesc, prometheus.GaugeValue, float64(st.LogBytes))
}

// number converts an mntr value to a float: integers, floats, and strings
// holding a number (mntr prints some doubles as strings).
func number(v any) (float64, bool) {
	switch x := v.(type) {
	case int:
		return float64(x), true
	case int32:
		return float64(x), true
	case int64:
		return float64(x), true
	case uint64:
		return float64(x), true
	case float64:
		return x, !math.IsNaN(x)
	case string:
		f, err := strconv.ParseFloat(x, 64)
		return f, err == nil
	}
	return 0, false
}
