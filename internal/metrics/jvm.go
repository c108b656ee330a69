package metrics

import (
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/wardenzk/warden/internal/gcpace"
)

// The JVM series of ZooKeeper's Prometheus provider (simpleclient_hotspot
// 0.9.0's DefaultExports, ZooKeeper 3.8 and 3.9) that have an honest Go
// counterpart, under the same names, types and labels, so dashboards and
// the JvmMemoryFillingUp alert work unchanged. The others (memory pools,
// buffer pools, class loading, daemon and peak threads, deadlocks,
// jvm_memory_bytes_init) have no Go meaning and are left out.
var (
	jvmMemUsedDesc = prometheus.NewDesc("jvm_memory_bytes_used",
		"Used bytes of a given JVM memory area. Warden: heap = Go heap spans in use; nonheap = goroutine and OS stacks, runtime metadata.",
		[]string{"area"}, nil)
	jvmMemCommittedDesc = prometheus.NewDesc("jvm_memory_bytes_committed",
		"Committed (bytes) of a given JVM memory area. Warden: the memory of the area obtained from the OS and not returned to it.",
		[]string{"area"}, nil)
	jvmMemMaxDesc = prometheus.NewDesc("jvm_memory_bytes_max",
		"Max (bytes) of a given JVM memory area. Warden, heap only: the Go memory limit if set, else the cgroup's memory.max, else physical memory.",
		[]string{"area"}, nil)
	jvmThreadsDesc = prometheus.NewDesc("jvm_threads_current",
		"Current thread count of a JVM. Warden: OS threads of the process.", nil, nil)
	jvmThreadsStartedDesc = prometheus.NewDesc("jvm_threads_started_total",
		"Started thread count of a JVM. Warden: OS threads the Go runtime created.", nil, nil)
	jvmGCDesc = prometheus.NewDesc("jvm_gc_collection_seconds",
		"Time spent in a given JVM garbage collector in seconds. Warden: gc=\"go\", Go GC cycles and their stop-the-world pauses.",
		[]string{"gc"}, nil)
	jvmInfoDesc = prometheus.NewDesc("jvm_info", "JVM version info. Warden: the Go runtime.",
		[]string{"version", "vendor", "runtime"}, nil)
)

// jvmCollector computes the JVM series from the Go runtime at each scrape
// (one runtime.ReadMemStats, a few small /proc and cgroup reads).
type jvmCollector struct {
	// readFile reads /proc and cgroup files (os.ReadFile; tests swap it).
	readFile func(string) ([]byte, error)
}

func newJVMCollector() *jvmCollector { return &jvmCollector{readFile: os.ReadFile} }

func (c *jvmCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{jvmMemUsedDesc, jvmMemCommittedDesc, jvmMemMaxDesc,
		jvmThreadsDesc, jvmThreadsStartedDesc, jvmGCDesc, jvmInfoDesc} {
		ch <- d
	}
}

func (c *jvmCollector) Collect(ch chan<- prometheus.Metric) {
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	gauge := func(d *prometheus.Desc, v float64, labels ...string) {
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, labels...)
	}
	gauge(jvmMemUsedDesc, float64(ms.HeapInuse), "heap")
	gauge(jvmMemUsedDesc, float64(nonHeapUsed(&ms)), "nonheap")
	gauge(jvmMemCommittedDesc, float64(ms.HeapSys-ms.HeapReleased), "heap")
	gauge(jvmMemCommittedDesc, float64(nonHeapCommitted(&ms)), "nonheap")
	if hm, ok := gcpace.MemoryMax(debug.SetMemoryLimit(-1), c.readFile); ok {
		gauge(jvmMemMaxDesc, float64(hm), "heap")
	}
	gauge(jvmThreadsDesc, float64(c.threads()))
	ch <- prometheus.MustNewConstMetric(jvmThreadsStartedDesc, prometheus.CounterValue,
		float64(pprof.Lookup("threadcreate").Count()))
	ch <- prometheus.MustNewConstSummary(jvmGCDesc, uint64(ms.NumGC),
		float64(ms.PauseTotalNs)/1e9, nil, "go")
	gauge(jvmInfoDesc, 1, runtime.Version(), "Warden", "go")
}

// nonHeapUsed is the JVM's non-heap "used" in Go terms: goroutine stacks
// in use and the runtime's metadata (spans, per-P caches, profiling
// buckets, GC metadata, the rest).
func nonHeapUsed(ms *runtime.MemStats) uint64 {
	return ms.StackInuse + ms.MSpanInuse + ms.MCacheInuse + ms.BuckHashSys + ms.GCSys + ms.OtherSys
}

// nonHeapCommitted is the non-heap memory obtained from the OS: every
// stack (OS threads' included) and the runtime's metadata, used or not.
func nonHeapCommitted(ms *runtime.MemStats) uint64 {
	return ms.StackSys + ms.MSpanSys + ms.MCacheSys + ms.BuckHashSys + ms.GCSys + ms.OtherSys
}

// threads counts the process's OS threads (Threads: in
// /proc/self/status), or, without /proc, the threads the Go runtime
// created (it rarely ends one).
func (c *jvmCollector) threads() int {
	if b, err := c.readFile("/proc/self/status"); err == nil {
		for _, line := range strings.Split(string(b), "\n") {
			if v, ok := strings.CutPrefix(line, "Threads:"); ok {
				if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil {
					return n
				}
			}
		}
	}
	return pprof.Lookup("threadcreate").Count()
}
