package metrics

import (
	"errors"
	"io"
	"net"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
)

// gather returns the Set's metric families by name.
func gather(t *testing.T, s *Set) map[string]*dto.MetricFamily {
	t.Helper()
	mfs, err := s.Registry().Gather()
	if err != nil {
		t.Fatalf("gather: %v", err)
	}
	out := make(map[string]*dto.MetricFamily, len(mfs))
	for _, mf := range mfs {
		out[mf.GetName()] = mf
	}
	return out
}

func quantiles(mf *dto.MetricFamily) []float64 {
	var qs []float64
	for _, q := range mf.GetMetric()[0].GetSummary().GetQuantile() {
		qs = append(qs, q.GetQuantile())
	}
	slices.Sort(qs)
	return qs
}

func monitorMap(s *Set) map[string]any {
	m := make(map[string]any)
	for _, v := range s.Monitor() {
		m[v.Name] = v.Value
	}
	return m
}

func TestSummariesAsZooKeeperExportsThem(t *testing.T) {
	s := New(Options{})
	for _, v := range []int64{1, 2, 3, 10} {
		s.FsyncTime.Observe(v)   // Basic
		s.ReadLatency.Observe(v) // Advanced
	}
	mfs := gather(t, s)
	tests := []struct {
		name      string
		quantiles []float64
	}{
		{"fsynctime", []float64{0.5}},
		{"readlatency", []float64{0.5, 0.9, 0.99}},
		{"election_time", []float64{0.5}},
		{"updatelatency", []float64{0.5, 0.9, 0.99}},
	}
	for _, tt := range tests {
		mf := mfs[tt.name]
		if mf == nil || mf.GetType() != dto.MetricType_SUMMARY {
			t.Errorf("%s: not exported as a summary: %v", tt.name, mf)
			continue
		}
		if got := quantiles(mf); !slices.Equal(got, tt.quantiles) {
			t.Errorf("%s quantiles = %v, want %v", tt.name, got, tt.quantiles)
		}
	}
	sum := mfs["fsynctime"].GetMetric()[0].GetSummary()
	if sum.GetSampleCount() != 4 || sum.GetSampleSum() != 16 {
		t.Errorf("fsynctime count/sum = %d/%v, want 4/16", sum.GetSampleCount(), sum.GetSampleSum())
	}

	m := monitorMap(s)
	want := map[string]any{
		"avg_fsynctime": "4.0", "min_fsynctime": int64(1), "max_fsynctime": int64(10),
		"cnt_fsynctime": int64(4), "sum_fsynctime": int64(16),
		"avg_readlatency": "4.0", "cnt_readlatency": int64(4), "max_readlatency": int64(10),
		"avg_election_time": "0.0", "min_election_time": int64(0), "cnt_election_time": int64(0),
		"commit_count": int64(0), "looking_count": int64(0), "fsync_threshold_exceed_count": int64(0),
	}
	for k, v := range want {
		if m[k] != v {
			t.Errorf("mntr %s = %#v, want %#v", k, m[k], v)
		}
	}
	for _, p := range []string{"p50_readlatency", "p95_readlatency", "p99_readlatency", "p999_readlatency"} {
		if _, ok := m[p].(int64); !ok {
			t.Errorf("mntr lacks %s for an Advanced summary", p)
		}
	}
	if m["p999_readlatency"] != int64(10) {
		t.Errorf("p999_readlatency = %v, want 10", m["p999_readlatency"])
	}
	if _, ok := m["p50_fsynctime"]; ok {
		t.Error("mntr has p50_fsynctime for a Basic summary")
	}
}

func TestJavaDouble(t *testing.T) {
	for f, want := range map[float64]string{0: "0.0", 1.5: "1.5", 7.0 / 3: "2.3333", 100: "100.0", 0.00004: "0.0"} {
		if got := javaDouble(f); got != want {
			t.Errorf("javaDouble(%v) = %q, want %q", f, got, want)
		}
	}
}

func TestExportMonitor(t *testing.T) {
	s := New(Options{})
	s.ExportMonitor(func() []Value {
		return []Value{
			{"version", "3.9.5-warden"}, {"znode_count", 5}, {"avg_latency", "0.5"},
			{"connection_rejected", int64(2)}, {"last_processed_zxid", int64(7)},
		}
	}, "connection_rejected")
	mfs := gather(t, s)
	if _, ok := mfs["version"]; ok {
		t.Error("a string value was exported")
	}
	for name, want := range map[string]struct {
		typ dto.MetricType
		v   float64
	}{
		"znode_count":         {dto.MetricType_GAUGE, 5},
		"avg_latency":         {dto.MetricType_GAUGE, 0.5},
		"connection_rejected": {dto.MetricType_COUNTER, 2},
		"last_processed_zxid": {dto.MetricType_GAUGE, 7},
	} {
		mf := mfs[name]
		if mf == nil || mf.GetType() != want.typ {
			t.Errorf("%s: %v, want type %v", name, mf, want.typ)
			continue
		}
		m := mf.GetMetric()[0]
		got := m.GetGauge().GetValue() + m.GetCounter().GetValue()
		if got != want.v {
			t.Errorf("%s = %v, want %v", name, got, want.v)
		}
	}
}

func TestExportRaft(t *testing.T) {
	s := New(Options{})
	s.ExportRaft(func() RaftState { return RaftState{Term: 3, Commit: 10, Applied: 7} })
	mfs := gather(t, s)
	for name, want := range map[string]float64{
		"warden_raft_term": 3, "warden_raft_commit_index": 10, "warden_raft_applied_index": 7, "warden_raft_apply_lag": 3,
	} {
		if mf := mfs[name]; mf == nil || mf.GetMetric()[0].GetGauge().GetValue() != want {
			t.Errorf("%s = %v, want %v", name, mf, want)
		}
	}
}

func TestRuntimeCollectors(t *testing.T) {
	if _, ok := gather(t, New(Options{}))["go_goroutines"]; ok {
		t.Error("go_goroutines exported without Options.Runtime")
	}
	mfs := gather(t, New(Options{Runtime: true}))
	for _, name := range []string{"go_goroutines", "go_memstats_alloc_bytes", "process_open_fds"} {
		if _, ok := mfs[name]; !ok {
			t.Errorf("%s not exported with Options.Runtime", name)
		}
	}
}

func TestNilSetRecordsNothing(t *testing.T) {
	var s *Set
	s.ObserveFsync(time.Second, true)
	s.ObserveSnapshot(time.Second, 10)
	s.ObserveRequest("get_data", false, time.Millisecond)
	s.ExportMonitor(nil)
	s.ExportRaft(nil)
	if s.Monitor() != nil {
		t.Error("a nil Set has mntr values")
	}
}

func lookupIn(kv map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) { v, ok := kv[k]; return v, ok }
}

func TestParseProvider(t *testing.T) {
	const class = "metricsProvider.className"
	tests := []struct {
		name    string
		kv      map[string]string
		want    Provider
		wantErr string
	}{
		{"no provider", nil, Provider{Host: "0.0.0.0", Port: 7000, Runtime: true}, ""},
		{"default provider", map[string]string{class: DefaultProvider}, Provider{Host: "0.0.0.0", Port: 7000, Runtime: true}, ""},
		{"null provider", map[string]string{class: NullProvider}, Provider{Host: "0.0.0.0", Port: 7000, Runtime: true}, ""},
		{"prometheus, defaults", map[string]string{class: PrometheusProvider},
			Provider{Prometheus: true, Host: "0.0.0.0", Port: 7000, Runtime: true}, ""},
		{"prometheus, all keys", map[string]string{class: PrometheusProvider, "metricsProvider.httpHost": "127.0.0.1",
			"metricsProvider.httpPort": "0", "metricsProvider.exportJvmInfo": "false"},
			Provider{Prometheus: true, Host: "127.0.0.1", Port: 0, Runtime: false}, ""},
		{"unknown class", map[string]string{class: "com.example.MyProvider"}, Provider{}, "com.example.MyProvider is not supported"},
		{"bad port", map[string]string{class: PrometheusProvider, "metricsProvider.httpPort": "70000"}, Provider{}, "not a port number"},
		{"https asked for", map[string]string{class: PrometheusProvider, "metricsProvider.httpsPort": "7443"}, Provider{}, "httpsPort=7443 is not supported"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseProvider(lookupIn(tt.kv))
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("err = %v, want one containing %q", err, tt.wantErr)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Fatalf("ParseProvider = %+v, %v; want %+v", got, err, tt.want)
			}
		})
	}
}

func TestServe(t *testing.T) {
	s := New(Options{})
	s.CommitCount.Add(3)
	s.ElectionTime.Observe(12)
	ep, err := Serve(s, Provider{Prometheus: true, Host: "127.0.0.1", Port: 0}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	resp, err := http.Get("http://" + ep.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET /metrics: %s", resp.Status)
	}
	for _, want := range []string{"# TYPE commit_count counter\ncommit_count 3\n", "# TYPE election_time summary\n",
		"election_time{quantile=\"0.5\"} 12\n", "election_time_sum 12\n", "election_time_count 1\n"} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
}

func TestServeFailsOnATakenPort(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	port := ln.Addr().(*net.TCPAddr).Port
	ep, err := Serve(New(Options{}), Provider{Prometheus: true, Host: "127.0.0.1", Port: port}, nil)
	if err == nil {
		ep.Close()
		t.Fatal("Serve on a port in use succeeded")
	}
	if !strings.Contains(err.Error(), "metricsProvider.httpPort") {
		t.Errorf("error does not say what to change: %v", err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) {
		t.Errorf("error does not wrap the listen error: %v", err)
	}
}

func TestSummaryConcurrentObserve(t *testing.T) {
	s := New(Options{})
	const goroutines, each = 8, 500
	done := make(chan struct{})
	for g := range goroutines {
		go func() {
			defer func() { done <- struct{}{} }()
			for i := range each {
				s.UpdateLatency.Observe(int64(g*each + i))
			}
		}()
	}
	for range goroutines {
		<-done
	}
	m := monitorMap(s)
	if m["cnt_updatelatency"] != int64(goroutines*each) || m["min_updatelatency"] != int64(0) || m["max_updatelatency"] != int64(goroutines*each-1) {
		t.Errorf("cnt/min/max = %v/%v/%v, want %d/0/%d", m["cnt_updatelatency"], m["min_updatelatency"], m["max_updatelatency"], goroutines*each, goroutines*each-1)
	}
	if got := gather(t, s)["updatelatency"].GetMetric()[0].GetSummary().GetSampleCount(); got != goroutines*each {
		t.Errorf("updatelatency_count = %d, want %d", got, goroutines*each)
	}
}
