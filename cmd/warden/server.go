package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/server"
)

func runServer(args []string) error {
	fs := flag.NewFlagSet("warden server", flag.ContinueOnError)
	level := fs.String("log-level", "info", "log level: debug, info, warn or error")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage: warden server [flags] [zoo.cfg]\n\n"+
			"Starts a server. zoo.cfg is read as Apache ZooKeeper reads it (and myid from its dataDir);\n"+
			"without it the server is standalone on 127.0.0.1:2181 with data in ./warden-data.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(*level)); err != nil {
		return fmt.Errorf("bad -log-level %q: use debug, info, warn or error", *level)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(log)

	cfg := server.DefaultConfig()
	source := "embedded default"
	if fs.NArg() > 1 {
		return fmt.Errorf("expected at most one zoo.cfg, got %s", strings.Join(fs.Args(), " "))
	}
	if fs.NArg() == 1 {
		var err error
		cfg, err = server.LoadConfig(fs.Arg(0))
		if err != nil {
			return err
		}
		source = fs.Arg(0)
	}
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create dataDir: %w", err)
	}
	srv, err := server.Start(cfg, server.Options{Logger: log})
	if err != nil {
		return err
	}
	ep, err := serveMetrics(cfg, srv, log)
	if err != nil {
		srv.Close()
		return err
	}
	if ep != nil {
		defer ep.Close()
	}
	log.Info("warden started", "config", source, "version", server.VersionLine())

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	log.Info("stopping", "signal", s.String())
	return srv.Close()
}

// serveMetrics starts the /metrics endpoint when zoo.cfg names ZooKeeper's
// Prometheus provider; it returns nil otherwise. server.Start has already
// refused a provider class it does not know.
func serveMetrics(cfg server.Config, srv *server.Server, log *slog.Logger) (*metrics.Endpoint, error) {
	p, err := metrics.ParseProvider(cfg.Lookup)
	if err != nil || !p.Prometheus {
		return nil, err
	}
	return metrics.Serve(srv.Metrics(), p, log)
}

func runVersion() error {
	fmt.Println(server.VersionLine())
	return nil
}
