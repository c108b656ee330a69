package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/wardenzk/warden/wire"
)

// Option configures Connect.
type Option func(*options)

type authInfo struct {
	scheme string
	auth   []byte
}

type options struct {
	sessionTimeout time.Duration
	log            *slog.Logger
	dial           func(ctx context.Context, network, addr string) (net.Conn, error)
	tls            *tls.Config
	auths          []authInfo
	backoffMin     time.Duration
	backoffMax     time.Duration
	maxBuffer      int
	trackEnsemble  bool
}

func defaultOptions() options {
	var d net.Dialer
	return options{
		sessionTimeout: 30 * time.Second,
		log:            slog.New(slog.DiscardHandler),
		dial:           d.DialContext,
		backoffMin:     50 * time.Millisecond,
		backoffMax:     5 * time.Second,
		maxBuffer:      wire.DefaultMaxBuffer,
	}
}

// WithSessionTimeout sets the requested session timeout (default 30s).
// The server clamps it to its [minSessionTimeout, maxSessionTimeout];
// SessionTimeout reports the negotiated value.
func WithSessionTimeout(d time.Duration) Option {
	return func(o *options) {
		if d > 0 {
			o.sessionTimeout = d
		}
	}
}

// WithLogger sets the logger (default: discard everything).
func WithLogger(l *slog.Logger) Option {
	return func(o *options) {
		if l != nil {
			o.log = l
		}
	}
}

// WithDialer replaces the TCP dialer. Tests use it to wrap the net.Conn
// and cut connections at will.
func WithDialer(d func(ctx context.Context, network, addr string) (net.Conn, error)) Option {
	return func(o *options) {
		if d != nil {
			o.dial = d
		}
	}
}

// WithTLS speaks TLS to the servers (ZooKeeper's secureClientPort). When
// cfg.ServerName is empty the host of each server address is used.
func WithTLS(cfg *tls.Config) Option { return func(o *options) { o.tls = cfg } }

// WithAuth adds credentials sent right after every (re)connect, before
// any other request, e.g. WithAuth("digest", []byte("user:password")).
func WithAuth(scheme string, auth []byte) Option {
	return func(o *options) { o.auths = append(o.auths, authInfo{scheme, auth}) }
}

// WithBackoff sets the reconnect backoff: jittered, doubling from min up
// to max between attempts (default 50ms..5s).
func WithBackoff(min, max time.Duration) Option {
	return func(o *options) {
		if min > 0 {
			o.backoffMin = min
		}
		if max >= o.backoffMin {
			o.backoffMax = max
		}
	}
}

// WithMaxBuffer sets the largest reply frame accepted, in bytes (default
// wire.DefaultMaxBuffer, ZooKeeper's jute.maxbuffer).
func WithMaxBuffer(n int) Option {
	return func(o *options) {
		if n > 0 {
			o.maxBuffer = n
		}
	}
}

// WithEnsembleTracking makes the Conn follow the ensemble's membership,
// as Curator's EnsembleTracker does: it reads /zookeeper/config with a
// watch after connecting and after every change, and when the client
// addresses of the configuration differ from the server list it calls
// UpdateServers with them. A reconfig that adds servers then spreads
// clients onto them, and one that removes this client's server moves it
// to a remaining one. Off by default.
//
// A server line without a client address is left out of the list; a
// wildcard client host (0.0.0.0, ::, or a port alone) is replaced by the
// host of the server's quorum address. A configuration without any client
// address (a standalone server's is empty) changes nothing.
func WithEnsembleTracking() Option { return func(o *options) { o.trackEnsemble = true } }

// parseServers splits "host:port,host:port[/chroot]" into addresses (port
// 2181 when missing) and a chroot ("" for none).
func parseServers(s string) (addrs []string, chroot string, err error) {
	hosts := s
	if i := strings.IndexByte(s, '/'); i >= 0 {
		hosts, chroot = s[:i], s[i:]
		if chroot == "/" {
			chroot = ""
		}
		if chroot != "" {
			if err := validatePath(chroot); err != nil {
				return nil, "", fmt.Errorf("client: bad chroot in %q: %w", s, err)
			}
		}
	}
	for h := range strings.SplitSeq(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), "2181")
		}
		addrs = append(addrs, h)
	}
	if len(addrs) == 0 {
		return nil, "", fmt.Errorf("client: no servers in %q (want host:port,host:port[/chroot])", s)
	}
	return addrs, chroot, nil
}

// validatePath checks what ZooKeeper's client checks before sending: an
// absolute path, no empty or relative segments, no trailing slash.
func validatePath(p string) error {
	if p == "" || p[0] != '/' {
		return fmt.Errorf("%w: path %q must start with /", wire.ErrBadArguments, p)
	}
	if p == "/" {
		return nil
	}
	if p[len(p)-1] == '/' {
		return fmt.Errorf("%w: path %q must not end with /", wire.ErrBadArguments, p)
	}
	for seg := range strings.SplitSeq(p[1:], "/") {
		if seg == "" || seg == "." || seg == ".." || strings.ContainsRune(seg, 0) {
			return fmt.Errorf("%w: path %q has an invalid segment", wire.ErrBadArguments, p)
		}
	}
	return nil
}
