// Package metrics holds one server's metrics and serves them to
// Prometheus.
//
// A Set carries ZooKeeper's metrics under ZooKeeper's names, with no
// prefix, so dashboards and alert rules written for ZooKeeper's
// Prometheus provider work unchanged, and Warden's own, prefixed warden_:
//
//	ZooKeeper summary  name{quantile="0.5"} (Basic), plus 0.9 and 0.99 (Advanced),
//	                   name_sum, name_count; mntr: avg_/min_/max_/cnt_/sum_name,
//	                   plus p50_/p95_/p99_/p999_name (Advanced). Times in ms.
//	ZooKeeper counter  name; mntr: name
//	mntr gauges        exported at each scrape from the server's mntr values
//	                   (ExportMonitor), so both always agree
//	warden_*           histograms in seconds, sizes in bytes, raft gauges
//	jvm_*              with Options.Runtime (exportJvmInfo): ZooKeeper's
//	                   JVM series that have a Go meaning, computed from the
//	                   Go runtime at each scrape (jvm.go), beside go_* and
//	                   process_*
//
// The code that measures records into the Set where the event happens:
// the server (request latencies), the node (elections, commits,
// snapshots), the WAL (fsyncs, through storage.WALOptions.OnSync). A nil
// *Set, and each nil field, records nothing.
//
// Each Set has its own registry, never Prometheus' global one: tests run
// several servers in one process. ParseProvider reads the
// metricsProvider.* keys of zoo.cfg and Serve runs the /metrics endpoint.
// docs/metrics.md lists every metric.
package metrics
