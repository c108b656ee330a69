package main

import (
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"

	"github.com/wardenzk/warden/internal/admin"
	"github.com/wardenzk/warden/internal/console"
	"github.com/wardenzk/warden/internal/gcpace"
	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/server"
)

const serverDoc = `Starts a server. zoo.cfg is read as Apache ZooKeeper reads it (and myid from its dataDir);
without it the server is standalone on 127.0.0.1:2181 with data in ./warden-data.
`

// serverFlags is `warden server`.
func serverFlags(fs *flag.FlagSet) func(args []string) error {
	f := serverFlagVars(fs)
	return func(args []string) error { return runServer(args, *f) }
}

// serverOptions are the server's flags.
type serverOptions struct {
	level, auditLog, cpuProfile, memProfile string
}

// serverFlagVars registers the server's flags (shared by `warden server`
// and `warden container`); they are set once fs is parsed.
func serverFlagVars(fs *flag.FlagSet) *serverOptions {
	o := &serverOptions{}
	fs.StringVar(&o.level, "log-level", "info", "log level: debug, info, warn or error")
	fs.StringVar(&o.auditLog, "audit-log", "", "append the audit log (audit.enable=true in zoo.cfg) to this `file`\n"+
		"instead of the server's log on stderr, where its records carry log=audit (docs/audit.md)")
	fs.StringVar(&o.cpuProfile, "cpuprofile", "", "write a CPU profile of the server to this `file` until it stops\n"+
		"(go tool pprof reads it; docs/performance.md)")
	fs.StringVar(&o.memProfile, "memprofile", "", "when the server is told to stop, write a heap profile of what is live\n"+
		"to this `file` before closing (go tool pprof reads it; docs/performance.md)")
	return o
}

func runServer(args []string, o serverOptions) error {
	level, auditLog := o.level, o.auditLog
	var lvl slog.Level
	if err := lvl.UnmarshalText([]byte(level)); err != nil {
		return badUsage("bad -log-level %q: use debug, info, warn or error", level)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: lvl}))
	slog.SetDefault(log)

	cfg := server.DefaultConfig()
	source := "embedded default"
	if len(args) > 1 {
		return badUsage("expected at most one zoo.cfg, got %s", strings.Join(args, " "))
	}
	if len(args) == 1 {
		var err error
		cfg, err = server.LoadConfig(args[0])
		if err != nil {
			return err
		}
		source = args[0]
	}
	for _, w := range cfg.Warnings {
		log.Warn("config: " + w)
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return fmt.Errorf("create dataDir: %w", err)
	}
	if o.cpuProfile != "" {
		f, err := os.Create(o.cpuProfile)
		if err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return fmt.Errorf("-cpuprofile: %w", err)
		}
		defer pprof.StopCPUProfile()
	}
	// The collector's headroom follows the live heap (GOGC in the
	// environment overrides it; docs/operations.md).
	defer gcpace.Tune()()
	opts := server.Options{Logger: log}
	if auditLog != "" {
		if !cfg.AuditEnable {
			log.Warn("-audit-log is set but audit.enable is not true in zoo.cfg: nothing will be audited")
		}
		f, err := os.OpenFile(auditLog, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o640)
		if err != nil {
			return fmt.Errorf("open the audit log: %w (check -audit-log's directory and permissions)", err)
		}
		defer f.Close()
		opts.AuditLogger = slog.New(slog.NewTextHandler(f, nil))
	}
	if cfg.AdminEnableServer {
		// A setting the AdminServer cannot honour (HTTPS) stops the start;
		// only a port that cannot be bound is tolerated, below.
		if _, err := admin.ReadSettings(cfg); err != nil {
			return err
		}
	}
	srv, err := server.Start(cfg, opts)
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
	var adm *admin.Server
	if cfg.AdminEnableServer {
		// As ZooKeeper, a server whose AdminServer cannot start keeps
		// serving clients.
		if adm, err = admin.Start(cfg, srv, log); err != nil {
			log.Error("Problem starting AdminServer; serving clients without it", "err", err)
		}
	}
	var con *console.Console
	if adm != nil {
		con = console.New(srv, console.Options{Members: console.MembersOf(cfg), Logger: log})
		adm.Handle("/ui/", con)
	}

	sig := make(chan os.Signal, 1)
	signal.Notify(sig, syscall.SIGINT, syscall.SIGTERM)
	s := <-sig
	log.Info("stopping", "signal", s.String())
	if o.memProfile != "" {
		if err := writeHeapProfile(o.memProfile); err != nil {
			log.Error("-memprofile: the heap profile was not written", "err", err)
		}
	}
	if adm != nil {
		adm.Close()
		con.Close()
	}
	return srv.Close()
}

// writeHeapProfile writes the live heap, after a collection, to path.
func writeHeapProfile(path string) error {
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	runtime.GC()
	if err := pprof.WriteHeapProfile(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
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
