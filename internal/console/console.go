package console

import (
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/server"
)

//go:embed static
var staticFS embed.FS

// Defaults of Options.
const (
	DefaultPrefix           = "/ui/"
	DefaultSampleInterval   = 2 * time.Second
	DefaultHistory          = 150 // five minutes at DefaultSampleInterval
	DefaultMaxLogins        = 16
	DefaultLoginIdle        = 15 * time.Minute
	DefaultSearchMaxNodes   = 10000
	DefaultSearchMaxMatches = 200
	DefaultRequestTimeout   = 10 * time.Second
	DefaultSessionTimeout   = 30 * time.Second
)

// Options configure a Console. The zero value serves at /ui/ against the
// server's own client address.
type Options struct {
	// Prefix is the path the console is served under, with a leading and
	// a trailing slash (default "/ui/"). Mount the handler on exactly
	// this pattern, e.g. mux.Handle("/ui/", c).
	Prefix string
	// ClientAddr is the address the console's ZooKeeper sessions connect
	// to; default srv.Addr() (a wildcard listen address is dialled as
	// loopback).
	ClientAddr string
	// Members are the client addresses ("host:port") of every ensemble
	// member, for the ensemble view (MembersOf reads them from a
	// zoo.cfg); default just ClientAddr.
	Members []string
	// Logger receives the console's logs; nil means slog.Default().
	Logger *slog.Logger
	// Now is the wall clock (chart timestamps, login idle time); nil
	// means time.Now.
	Now func() time.Time
	// SampleInterval is how often the charts' values are read from the
	// server (default 2s); negative turns the sampler off (tests then
	// call sample themselves).
	SampleInterval time.Duration
	// History is how many samples the charts keep (default 150).
	History int
	// MaxLogins bounds the logged-in viewers, each holding a ZooKeeper
	// session (default 16); past it the least recently used login ends.
	// The console's sessions all come from the address it dials, so they
	// count against that address's maxClientCnxns (60 by default).
	MaxLogins int
	// LoginIdle ends a login unused for this long (default 15m).
	LoginIdle time.Duration
	// SearchMaxNodes bounds the nodes one search visits (default 10000);
	// SearchMaxMatches the paths it returns (default 200).
	SearchMaxNodes, SearchMaxMatches int
	// RequestTimeout bounds each API request's ZooKeeper calls (default
	// 10s).
	RequestTimeout time.Duration
	// SessionTimeout is the session timeout the console's ZooKeeper
	// sessions ask for (default 30s).
	SessionTimeout time.Duration
	// SecureCookie marks the login cookie Secure; set it when the console
	// is served over HTTPS.
	SecureCookie bool
}

func (o *Options) setDefaults(srv *server.Server) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if !strings.HasPrefix(o.Prefix, "/") {
		o.Prefix = "/" + o.Prefix
	}
	if !strings.HasSuffix(o.Prefix, "/") {
		o.Prefix += "/"
	}
	if o.ClientAddr == "" {
		o.ClientAddr = dialable(srv.Addr())
	}
	if len(o.Members) == 0 {
		o.Members = []string{o.ClientAddr}
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.SampleInterval == 0 {
		o.SampleInterval = DefaultSampleInterval
	}
	if o.History <= 0 {
		o.History = DefaultHistory
	}
	if o.MaxLogins <= 0 {
		o.MaxLogins = DefaultMaxLogins
	}
	if o.LoginIdle <= 0 {
		o.LoginIdle = DefaultLoginIdle
	}
	if o.SearchMaxNodes <= 0 {
		o.SearchMaxNodes = DefaultSearchMaxNodes
	}
	if o.SearchMaxMatches <= 0 {
		o.SearchMaxMatches = DefaultSearchMaxMatches
	}
	if o.RequestTimeout <= 0 {
		o.RequestTimeout = DefaultRequestTimeout
	}
	if o.SessionTimeout <= 0 {
		o.SessionTimeout = DefaultSessionTimeout
	}
}

// dialable is a listen address as one can dial it: a wildcard host
// becomes loopback.
func dialable(a net.Addr) string {
	host, port, err := net.SplitHostPort(a.String())
	if err != nil {
		return a.String()
	}
	if ip := net.ParseIP(host); ip != nil && ip.IsUnspecified() {
		if ip.To4() != nil {
			host = "127.0.0.1"
		} else {
			host = "::1"
		}
	}
	return net.JoinHostPort(host, port)
}

// MembersOf returns the client addresses of the members of cfg's
// ensemble, for Options.Members: each server.N line's client address, or
// its peer host with cfg's client port when the line has none. A
// standalone configuration gives nil (the console then shows just its
// own server).
func MembersOf(cfg config.Config) []string {
	if len(cfg.Servers) == 0 {
		return nil
	}
	var out []string
	for _, s := range cfg.Servers {
		host, port := s.ClientHost, s.ClientPort
		if host == "" || host == "0.0.0.0" || host == "::" {
			host = s.Host
		}
		if port == 0 {
			port = cfg.ClientPort
		}
		if port == 0 {
			continue
		}
		out = append(out, net.JoinHostPort(host, strconv.Itoa(port)))
	}
	return out
}

// Console is the web console of one server: an http.Handler serving the
// page and its JSON API under Options.Prefix. Close it when the server
// stops.
type Console struct {
	srv  *server.Server
	opts Options
	log  *slog.Logger
	mux  *http.ServeMux
	pool *pool

	histMu sync.Mutex
	hist   *history

	stopc     chan struct{}
	wg        sync.WaitGroup
	closeOnce sync.Once
}

// New returns the console of srv. It starts the chart sampler (unless
// Options.SampleInterval is negative); the ZooKeeper sessions are opened
// on first use.
func New(srv *server.Server, opts Options) *Console {
	opts.setDefaults(srv)
	c := &Console{
		srv:   srv,
		opts:  opts,
		log:   opts.Logger.With("component", "console"),
		hist:  newHistory(opts.History),
		stopc: make(chan struct{}),
	}
	c.pool = newPool(opts.ClientAddr, opts.SessionTimeout, opts.LoginIdle, opts.MaxLogins, opts.Now, c.log)
	c.routes()
	c.sample()
	if opts.SampleInterval > 0 {
		c.wg.Add(1)
		go c.sampleLoop(opts.SampleInterval)
	}
	return c
}

// Prefix is the path the console is served under ("/ui/").
func (c *Console) Prefix() string { return c.opts.Prefix }

// ServeHTTP serves the page, its static files and the API.
func (c *Console) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := w.Header()
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("X-Frame-Options", "DENY")
	h.Set("Referrer-Policy", "no-referrer")
	h.Set("Content-Security-Policy", "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'")
	c.mux.ServeHTTP(w, r)
}

// Close stops the sampler and closes every ZooKeeper session of the
// console. Requests in flight fail.
func (c *Console) Close() error {
	c.closeOnce.Do(func() {
		close(c.stopc)
		c.wg.Wait()
		c.pool.close()
	})
	return nil
}

func (c *Console) sampleLoop(every time.Duration) {
	defer c.wg.Done()
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-c.stopc:
			return
		case <-t.C:
			c.sample()
		}
	}
}

// sample reads the server's mntr values into the chart history.
func (c *Console) sample() {
	r := readMetrics(c.opts.Now(), c.srv.Monitor())
	c.histMu.Lock()
	c.hist.add(r)
	c.histMu.Unlock()
}

// routes registers the page and the API on c.mux.
func (c *Console) routes() {
	p := c.opts.Prefix
	m := http.NewServeMux()
	static, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(err) // the embedded tree is part of the binary
	}
	files := http.StripPrefix(p, http.FileServerFS(static))
	m.Handle("GET "+p+"{$}", files)
	for _, f := range []string{"app.js", "app.css", "charts.js"} {
		m.Handle("GET "+p+f, files)
	}
	api := p + "api/"
	endpoints := []struct {
		method, name string
		h            http.HandlerFunc
	}{
		{"GET", "me", c.handleMe},
		{"POST", "login", c.handleLogin},
		{"POST", "logout", c.handleLogout},
		{"GET", "children", c.handleChildren},
		{"GET", "node", c.handleGetNode},
		{"PUT", "node", c.write(c.handleSetNode)},
		{"POST", "node", c.write(c.handleCreateNode)},
		{"DELETE", "node", c.write(c.handleDeleteNode)},
		{"GET", "search", c.handleSearch},
		{"GET", "sessions", c.handleSessions},
		{"GET", "ensemble", c.handleEnsemble},
		{"GET", "stats", c.handleStats},
	}
	allowed := map[string][]string{}
	for _, e := range endpoints {
		m.HandleFunc(e.method+" "+api+e.name, e.h)
		allowed[e.name] = append(allowed[e.name], e.method)
	}
	m.HandleFunc(api, func(w http.ResponseWriter, r *http.Request) {
		if methods, ok := allowed[strings.TrimPrefix(r.URL.Path, api)]; ok {
			w.Header().Set("Allow", strings.Join(methods, ", "))
			writeErr(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: method not allowed (use %s)", r.Method, r.URL.Path, strings.Join(methods, ", ")))
			return
		}
		writeErr(w, http.StatusNotFound, "no such API endpoint: "+r.URL.Path)
	})
	c.mux = m
}

var errNoPath = errors.New("console: missing path parameter")
