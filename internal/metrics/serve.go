package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// The metricsProvider.className values Warden knows.
const (
	// PrometheusProvider serves /metrics.
	PrometheusProvider = "org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider"
	// DefaultProvider is ZooKeeper's default: metrics in mntr only.
	DefaultProvider = "org.apache.zookeeper.metrics.impl.DefaultMetricsProvider"
	// NullProvider is ZooKeeper's no-op provider. Warden treats it as
	// DefaultProvider (mntr still shows its summaries).
	NullProvider = "org.apache.zookeeper.metrics.impl.NullMetricsProvider"
)

// Provider is the metricsProvider.* configuration.
type Provider struct {
	// Prometheus is set when metricsProvider.className names ZooKeeper's
	// Prometheus provider: /metrics is served on Host:Port.
	Prometheus bool
	// Host is metricsProvider.httpHost. Default 0.0.0.0.
	Host string
	// Port is metricsProvider.httpPort; 0 picks a free port. Default 7000.
	Port int
	// Runtime is metricsProvider.exportJvmInfo: export go_* and process_*
	// (Warden's counterpart of ZooKeeper's jvm_*). Default true.
	Runtime bool
}

// ParseProvider reads the metricsProvider.* keys through lookup
// (config.Config.Lookup). An unknown className is an error, as in
// ZooKeeper, which fails to start when it cannot load the class.
func ParseProvider(lookup func(key string) (string, bool)) (Provider, error) {
	p := Provider{Host: "0.0.0.0", Port: 7000, Runtime: true}
	class, _ := lookup("metricsProvider.className")
	switch class = strings.TrimSpace(class); class {
	case "", DefaultProvider, NullProvider:
		return p, nil
	case PrometheusProvider:
		p.Prometheus = true
	default:
		return p, fmt.Errorf("metrics: metricsProvider.className=%s is not supported: use %s to serve /metrics, or remove the key", class, PrometheusProvider)
	}
	if v, ok := lookup("metricsProvider.httpHost"); ok && strings.TrimSpace(v) != "" {
		p.Host = strings.TrimSpace(v)
	}
	if v, ok := lookup("metricsProvider.httpPort"); ok {
		port, err := strconv.Atoi(strings.TrimSpace(v))
		if err != nil || port < 0 || port > 65535 {
			return p, fmt.Errorf("metrics: metricsProvider.httpPort=%q is not a port number: use 0 to 65535", v)
		}
		p.Port = port
	}
	if v, ok := lookup("metricsProvider.httpsPort"); ok && strings.TrimSpace(v) != "" {
		return p, fmt.Errorf("metrics: metricsProvider.httpsPort=%s is not supported: Warden serves /metrics over plain HTTP only; remove the key (and use metricsProvider.httpPort) or put a TLS proxy in front", strings.TrimSpace(v))
	}
	if v, ok := lookup("metricsProvider.exportJvmInfo"); ok {
		// Java's Boolean.parseBoolean: only "true" (any case) is true.
		p.Runtime = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	return p, nil
}

// Handler returns the /metrics handler for s, in Prometheus' text format
// (or OpenMetrics when the scraper asks for it).
func Handler(s *Set) http.Handler {
	return promhttp.HandlerFor(s.Registry(), promhttp.HandlerOpts{ErrorLog: nil})
}

// Endpoint is a running /metrics HTTP server.
type Endpoint struct {
	srv  *http.Server
	ln   net.Listener
	done chan struct{}
}

// Serve listens on p.Host:p.Port and serves s at /metrics until Close. A
// port that cannot be bound is returned as an error at once (ZooKeeper
// does not start then either).
func Serve(s *Set, p Provider, log *slog.Logger) (*Endpoint, error) {
	if log == nil {
		log = slog.Default()
	}
	addr := net.JoinHostPort(p.Host, strconv.Itoa(p.Port))
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("metrics: listen on %s for /metrics: %w (is the port in use? set metricsProvider.httpPort in zoo.cfg)", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", Handler(s))
	e := &Endpoint{
		srv:  &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second},
		ln:   ln,
		done: make(chan struct{}),
	}
	go func() {
		defer close(e.done)
		if err := e.srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("metrics: /metrics endpoint stopped; Prometheus can no longer scrape this server", "addr", addr, "err", err)
		}
	}()
	log.Info("serving Prometheus metrics", "url", "http://"+ln.Addr().String()+"/metrics")
	return e, nil
}

// Addr returns the address the endpoint listens on.
func (e *Endpoint) Addr() net.Addr { return e.ln.Addr() }

// Close stops the endpoint, waiting up to a second for scrapes in flight.
func (e *Endpoint) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	err := e.srv.Shutdown(ctx)
	<-e.done
	return err
}
