package main

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/server"
)

func startForMetrics(t *testing.T, raw map[string]string) (server.Config, *server.Server) {
	t.Helper()
	cfg := server.DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	for k, v := range raw {
		cfg.Raw[k] = v
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := server.Start(cfg, server.Options{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		ln.Close()
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return cfg, srv
}

func TestServeMetricsWithThePrometheusProvider(t *testing.T) {
	cfg, srv := startForMetrics(t, map[string]string{
		"metricsProvider.className": metrics.PrometheusProvider,
		"metricsProvider.httpHost":  "127.0.0.1",
		"metricsProvider.httpPort":  "0",
	})
	ep, err := serveMetrics(cfg, srv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil || ep == nil {
		t.Fatalf("serveMetrics = %v, %v", ep, err)
	}
	defer ep.Close()
	resp, err := http.Get("http://" + ep.Addr().String() + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	for _, want := range []string{"\nznode_count ", "\nfsynctime_count ", "\ngo_goroutines "} {
		if !strings.Contains(string(body), want) {
			t.Errorf("/metrics lacks %q", strings.TrimSpace(want))
		}
	}
}

func TestServeMetricsOffByDefault(t *testing.T) {
	cfg, srv := startForMetrics(t, nil)
	if ep, err := serveMetrics(cfg, srv, nil); ep != nil || err != nil {
		t.Fatalf("serveMetrics without a provider = %v, %v; want nothing served", ep, err)
	}
}

func TestServeMetricsPortInUse(t *testing.T) {
	taken, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer taken.Close()
	cfg, srv := startForMetrics(t, map[string]string{
		"metricsProvider.className": metrics.PrometheusProvider,
		"metricsProvider.httpHost":  "127.0.0.1",
		"metricsProvider.httpPort":  strconv.Itoa(taken.Addr().(*net.TCPAddr).Port),
	})
	ep, err := serveMetrics(cfg, srv, nil)
	if err == nil {
		ep.Close()
		t.Fatal("serveMetrics on a port in use succeeded")
	}
	if !strings.Contains(err.Error(), "metricsProvider.httpPort") {
		t.Errorf("error does not say what to change: %v", err)
	}
}

// TestServerRefusesHTTPSItCannotServe checks that a zoo.cfg asking for an
// HTTPS AdminServer or metrics endpoint stops the start, before anything
// listens, instead of serving plain HTTP.
func TestServerRefusesHTTPSItCannotServe(t *testing.T) {
	for _, extra := range []string{
		"admin.forceHttps=true\n",
		"admin.enableServer=false\nmetricsProvider.className=" + metrics.PrometheusProvider + "\nmetricsProvider.httpsPort=7443\n",
	} {
		dir := t.TempDir()
		cfg := filepath.Join(dir, "zoo.cfg")
		free, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := free.Addr().(*net.TCPAddr).Port
		free.Close()
		text := "tickTime=2000\ndataDir=" + dir + "\nclientPortAddress=127.0.0.1\nclientPort=" + strconv.Itoa(port) + "\n" + extra
		if err := os.WriteFile(cfg, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		go func() { done <- runServer([]string{cfg}, serverOptions{level: "error"}) }()
		select {
		case err = <-done:
		case <-time.After(10 * time.Second):
			// It started: stop it the way an operator would.
			syscall.Kill(os.Getpid(), syscall.SIGTERM)
			err = <-done
		}
		if err == nil || !strings.Contains(err.Error(), "not supported") {
			t.Errorf("%q: runServer = %v, want a refusal", extra, err)
		}
	}
}
