package metrics

import (
	"runtime"
	"strings"
	"testing"

	dto "github.com/prometheus/client_model/go"
)

// labelled returns the sample of mf whose label name has value v.
func labelled(mf *dto.MetricFamily, name, v string) *dto.Metric {
	for _, m := range mf.GetMetric() {
		for _, lp := range m.GetLabel() {
			if lp.GetName() == name && lp.GetValue() == v {
				return m
			}
		}
	}
	return nil
}

func TestJVMSeries(t *testing.T) {
	mfs := gather(t, New(Options{Runtime: true}))
	for name, typ := range map[string]dto.MetricType{
		"jvm_memory_bytes_used":      dto.MetricType_GAUGE,
		"jvm_memory_bytes_committed": dto.MetricType_GAUGE,
		"jvm_memory_bytes_max":       dto.MetricType_GAUGE,
		"jvm_threads_current":        dto.MetricType_GAUGE,
		"jvm_threads_started_total":  dto.MetricType_COUNTER,
		"jvm_gc_collection_seconds":  dto.MetricType_SUMMARY,
		"jvm_info":                   dto.MetricType_GAUGE,
	} {
		if mf := mfs[name]; mf == nil || mf.GetType() != typ {
			t.Errorf("%s: %v, want a %v", name, mf, typ)
		}
	}
	if t.Failed() {
		return
	}
	area := func(name, a string) float64 {
		m := labelled(mfs[name], "area", a)
		if m == nil {
			t.Fatalf("%s{area=%q} missing", name, a)
		}
		return m.GetGauge().GetValue()
	}
	used, committed, max := area("jvm_memory_bytes_used", "heap"), area("jvm_memory_bytes_committed", "heap"), area("jvm_memory_bytes_max", "heap")
	// ZooKeeper's JvmMemoryFillingUp: used / max over 0.8 fires.
	if ratio := used / max; !(used > 0 && used <= committed && ratio > 0 && ratio < 1) {
		t.Errorf("heap used %v, committed %v, max %v: used/max = %v, want in (0, 1)", used, committed, max, ratio)
	}
	if nu, nc := area("jvm_memory_bytes_used", "nonheap"), area("jvm_memory_bytes_committed", "nonheap"); !(nu > 0 && nu <= nc) {
		t.Errorf("nonheap used %v, committed %v", nu, nc)
	}
	if labelled(mfs["jvm_memory_bytes_max"], "area", "nonheap") != nil {
		t.Error("jvm_memory_bytes_max{area=\"nonheap\"} exported; Go has no such limit")
	}
	if n := mfs["jvm_threads_current"].GetMetric()[0].GetGauge().GetValue(); n < 1 {
		t.Errorf("jvm_threads_current = %v", n)
	}
	info := labelled(mfs["jvm_info"], "runtime", "go")
	if info == nil || info.GetGauge().GetValue() != 1 || labelled(mfs["jvm_info"], "version", runtime.Version()) == nil ||
		labelled(mfs["jvm_info"], "vendor", "Warden") == nil {
		t.Errorf("jvm_info = %v", mfs["jvm_info"])
	}
	for _, name := range []string{"go_goroutines", "process_open_fds"} {
		if mfs[name] == nil {
			t.Errorf("%s no longer exported", name)
		}
	}
}

func TestJVMGCCountsGoCycles(t *testing.T) {
	s := New(Options{Runtime: true})
	gc := func() (uint64, float64) {
		m := labelled(gather(t, s)["jvm_gc_collection_seconds"], "gc", "go")
		if m == nil {
			t.Fatal(`jvm_gc_collection_seconds{gc="go"} missing`)
		}
		return m.GetSummary().GetSampleCount(), m.GetSummary().GetSampleSum()
	}
	n0, s0 := gc()
	runtime.GC()
	runtime.GC()
	n1, s1 := gc()
	if n1 < n0+2 || s1 < s0 {
		t.Errorf("after 2 runtime.GC: count %d → %d, pause seconds %v → %v", n0, n1, s0, s1)
	}
}

func TestNoJVMSeriesWithoutRuntime(t *testing.T) {
	for name := range gather(t, New(Options{})) {
		if strings.HasPrefix(name, "jvm_") || strings.HasPrefix(name, "go_") || strings.HasPrefix(name, "process_") {
			t.Errorf("%s exported with exportJvmInfo=false", name)
		}
	}
}
