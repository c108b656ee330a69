package server

import (
	"bufio"
	"context"
	"crypto/tls"
	"crypto/x509/pkix"
	"errors"
	"io"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/testpki"
	"github.com/wardenzk/warden/wire"
)

// tlsSetup is a CA with a server certificate in PEM stores, and zoo.cfg
// keys pointing at them.
type tlsSetup struct {
	ca        *testpki.CA
	dir       string
	keyStore  string
	trust     string
	clientFor func(cn string) tls.Certificate
}

func newTLSSetup(t *testing.T) *tlsSetup {
	t.Helper()
	ts := &tlsSetup{ca: testpki.NewCA(t, "warden-test-ca"), dir: t.TempDir()}
	srv := ts.ca.Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: "server", Organization: []string{"Warden"}}})
	ts.keyStore = srv.WriteKeyStore(t, ts.dir, "server.pem")
	ts.trust = ts.ca.WriteTrustStore(t, ts.dir, "ca.pem")
	ts.clientFor = func(cn string) tls.Certificate {
		return ts.ca.Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: cn, Organization: []string{"Warden"}}}).TLS()
	}
	return ts
}

// keys sets the ssl.* keys of c.
func (ts *tlsSetup) keys(c *Config, extra ...string) {
	c.Raw["ssl.keyStore.location"] = ts.keyStore
	c.Raw["ssl.trustStore.location"] = ts.trust
	for i := 0; i+1 < len(extra); i += 2 {
		c.Raw[extra[i]] = extra[i+1]
	}
}

// clientTLS is a client's TLS configuration: trusting the CA, with cert
// as its certificate when not nil.
func (ts *tlsSetup) clientTLS(cert *tls.Certificate) *tls.Config {
	cfg := &tls.Config{RootCAs: ts.ca.Pool(), ServerName: "localhost"}
	if cert != nil {
		cfg.Certificates = []tls.Certificate{*cert}
	}
	return cfg
}

// startSecure starts a server with a secure client port (and a plaintext
// one when plain is set).
func startSecure(t *testing.T, ts *tlsSetup, plain bool, mutate func(*Config)) *Server {
	t.Helper()
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.SecureClientPort = 1 // replaced by SecureListener
	if !plain {
		cfg.ClientPort, cfg.ClientPortAddress = 0, ""
	}
	ts.keys(&cfg)
	if mutate != nil {
		mutate(&cfg)
	}
	opts := Options{Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), DisableTimers: true}
	var err error
	if opts.SecureListener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
		t.Fatal(err)
	}
	if plain {
		if opts.Listener, err = net.Listen("tcp", "127.0.0.1:0"); err != nil {
			t.Fatal(err)
		}
	}
	srv, err := Start(cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Close() })
	return srv
}

func tlsDial(t *testing.T, addr string, cfg *tls.Config) *client.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addr, client.WithTLS(cfg), client.WithSessionTimeout(30*time.Second))
	if err != nil {
		t.Fatalf("TLS connect to %s: %v", addr, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestSecureClientPortOnly: with only secureClientPort, the server speaks
// TLS and nothing else; the client certificate is the x509 identity.
func TestSecureClientPortOnly(t *testing.T) {
	ts := newTLSSetup(t)
	srv := startSecure(t, ts, false, nil)
	if srv.SecureAddr() == nil || srv.Addr().String() != srv.SecureAddr().String() {
		t.Fatalf("Addr %v, SecureAddr %v: want only the secure port", srv.Addr(), srv.SecureAddr())
	}
	cert := ts.clientFor("alice")
	c := tlsDial(t, srv.SecureAddr().String(), ts.clientTLS(&cert))
	ctx := ctx10(t)
	if _, err := c.Create(ctx, "/over-tls", []byte("x"), client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	who, err := c.WhoAmI(ctx)
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, w := range who {
		found = found || w.AuthScheme == "x509" && w.User == "CN=alice,O=Warden"
	}
	if !found {
		t.Fatalf("whoAmI = %+v; want x509 CN=alice,O=Warden", who)
	}
	// Plaintext on the TLS port: the handshake fails, the connection
	// closes, and the failure is counted.
	before := srv.Stats().AuthFailed
	nc, err := net.DialTimeout("tcp", srv.SecureAddr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(10 * time.Second))
	nc.Write(wire.AppendRecords(nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}))
	if _, err := io.ReadAll(nc); err != nil {
		t.Fatalf("plaintext on the TLS port: %v; want the server to close the connection", err)
	}
	// The failure is counted before the connection closes.
	if got := srv.Stats().AuthFailed; got != before+1 {
		t.Fatalf("auth_failed_count = %d, want %d", got, before+1)
	}
}

// TestClientCertificateRequired: ssl.clientAuth=need (the default) refuses
// a client without a certificate or with one from another CA; want and
// none let it in.
func TestClientCertificateRequired(t *testing.T) {
	ts := newTLSSetup(t)
	other := testpki.NewCA(t, "other-ca").Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: "mallory"}}).TLS()
	for _, tt := range []struct {
		clientAuth string
		cert       *tls.Certificate
		ok         bool
	}{
		{"need", nil, false},
		{"need", &other, false},
		{"want", nil, true},
		{"want", &other, false},
		{"none", nil, true},
	} {
		name := tt.clientAuth + "/no cert"
		if tt.cert != nil {
			name = tt.clientAuth + "/other CA"
		}
		t.Run(name, func(t *testing.T) {
			srv := startSecure(t, ts, false, func(c *Config) { c.Raw["ssl.clientAuth"] = tt.clientAuth })
			cfg := ts.clientTLS(nil)
			if tt.cert != nil {
				// Sent even though the server's CA list does not name its
				// issuer (Go's client would otherwise send none).
				cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return tt.cert, nil }
			}
			nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", srv.SecureAddr().String(), cfg)
			if err == nil {
				// TLS 1.3: a refused client certificate shows on the first read.
				nc.SetDeadline(time.Now().Add(10 * time.Second))
				nc.Write(wire.AppendRecords(nil, &wire.ConnectRequest{TimeOut: 10000, Passwd: make([]byte, 16)}))
				_, err = wire.ReadFrame(bufio.NewReader(nc), 0, nil)
				nc.Close()
			}
			if tt.ok && err != nil {
				t.Fatalf("session over TLS: %v; want it to work", err)
			}
			if !tt.ok && err == nil {
				t.Fatal("session over TLS worked; want the handshake refused")
			}
		})
	}
}

// TestUnifiedClientPort: client.portUnification serves plaintext and TLS
// clients, and the four-letter words, on one port.
func TestUnifiedClientPort(t *testing.T) {
	ts := newTLSSetup(t)
	srv := startSecure(t, ts, true, func(c *Config) { c.Raw["client.portUnification"] = "true" })
	addr := srv.Addr().String()
	if addr == srv.SecureAddr().String() {
		t.Fatal("no plaintext port")
	}
	cert := ts.clientFor("bob")
	ctx := ctx10(t)
	secure := tlsDial(t, addr, ts.clientTLS(&cert))
	if _, err := secure.Create(ctx, "/u", nil, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	plain := dial(t, srv)
	if _, _, err := plain.Get(ctx, "/u"); err != nil {
		t.Fatal(err)
	}
	for _, useTLS := range []bool{false, true} {
		var nc net.Conn
		var err error
		if useTLS {
			nc, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", addr, ts.clientTLS(&cert))
		} else {
			nc, err = net.DialTimeout("tcp", addr, 5*time.Second)
		}
		if err != nil {
			t.Fatal(err)
		}
		nc.SetDeadline(time.Now().Add(10 * time.Second))
		io.WriteString(nc, "ruok")
		out, err := io.ReadAll(nc)
		nc.Close()
		if err != nil || string(out) != "imok" {
			t.Fatalf("ruok (tls=%v) = %q, %v", useTLS, out, err)
		}
	}
}

// TestX509SuperUserAndEnforcedAuth: a certificate can be super, and
// satisfies enforce.auth.schemes=x509 where a plaintext client does not.
func TestX509SuperUserAndEnforcedAuth(t *testing.T) {
	ts := newTLSSetup(t)
	srv := startSecure(t, ts, true, func(c *Config) {
		c.X509SuperUser = "CN=root,O=Warden"
		c.EnforceAuthEnabled, c.EnforceAuthSchemes = true, []string{"x509"}
	})
	ctx := ctx10(t)
	alice, root := ts.clientFor("alice"), ts.clientFor("root")
	a := tlsDial(t, srv.SecureAddr().String(), ts.clientTLS(&alice))
	acl := []client.ACL{{Perms: wire.PermAll, ID: client.ID{Scheme: "x509", ID: "CN=alice,O=Warden"}}}
	if _, err := a.Create(ctx, "/alice", []byte("mine"), client.Persistent, acl); err != nil {
		t.Fatal(err)
	}
	r := tlsDial(t, srv.SecureAddr().String(), ts.clientTLS(&root))
	if data, _, err := r.Get(ctx, "/alice"); err != nil || string(data) != "mine" {
		t.Fatalf("super reads /alice: %q, %v", data, err)
	}
	bob := ts.clientFor("bob")
	b := tlsDial(t, srv.SecureAddr().String(), ts.clientTLS(&bob))
	if _, _, err := b.Get(ctx, "/alice"); !errors.Is(err, client.ErrNoAuth) {
		t.Fatalf("bob reads /alice: %v; want NOAUTH", err)
	}
	// A plaintext session has only ip: refused with -124.
	c := newRawClient(t, srv)
	h, _ := c.call(wire.OpGetData, &wire.GetDataRequest{Path: "/"})
	if h.Err != wire.ErrSessionClosedRequiresSASL {
		t.Fatalf("plaintext getData = %v; want SESSIONCLOSEDREQUIRESASLAUTH", h.Err)
	}
}

// TestTLSConfigErrorsStopTheStart: TLS asked for but not possible stops
// the start with a message naming the key.
func TestTLSConfigErrorsStopTheStart(t *testing.T) {
	ts := newTLSSetup(t)
	for _, tt := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"no key store", func(c *Config) { delete(c.Raw, "ssl.keyStore.location") }, "ssl.keyStore.location"},
		{"missing file", func(c *Config) { c.Raw["ssl.keyStore.location"] = ts.dir + "/nope.pem" }, "nope.pem"},
		{"crl", func(c *Config) { c.Raw["ssl.crl"] = "true" }, "ssl.crl"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.DataLogDir = cfg.DataDir
			cfg.SecureClientPort = 1
			ts.keys(&cfg)
			tt.mutate(&cfg)
			ln, err := net.Listen("tcp", "127.0.0.1:0")
			if err != nil {
				t.Fatal(err)
			}
			defer ln.Close()
			srv, err := Start(cfg, Options{Listener: ln, SecureListener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
			if err == nil {
				srv.Close()
				t.Fatal("Start succeeded; want an error")
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Start: %v; want it to name %q", err, tt.want)
			}
		})
	}
}

// TestClientCertificateReload: a new certificate written over the key
// store is served to the next handshake once the source reloads (the
// watcher does that when the file changes; the test reloads directly).
func TestClientCertificateReload(t *testing.T) {
	ts := newTLSSetup(t)
	srv := startSecure(t, ts, false, func(c *Config) { c.Raw["ssl.clientAuth"] = "none" })
	served := func() string {
		t.Helper()
		nc, err := tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", srv.SecureAddr().String(), ts.clientTLS(nil))
		if err != nil {
			t.Fatal(err)
		}
		defer nc.Close()
		return nc.ConnectionState().PeerCertificates[0].Subject.CommonName
	}
	if got := served(); got != "server" {
		t.Fatalf("served %q, want server", got)
	}
	ts.ca.Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: "server-renewed"}}).WriteKeyStore(t, ts.dir, "server.pem")
	if err := srv.clientTLSSource.Reload(); err != nil {
		t.Fatal(err)
	}
	if got := served(); got != "server-renewed" {
		t.Fatalf("after reload served %q, want server-renewed", got)
	}
}

// TestOutstandingHandshakeLimit: past netty.server.outstandingHandshake.limit
// TLS handshakes in progress, a new connection is closed at once; mntr
// reports the handshakes in progress.
func TestOutstandingHandshakeLimit(t *testing.T) {
	ts := newTLSSetup(t)
	srv := startSecure(t, ts, false, func(c *Config) { c.OutstandingHandshakeLimit = 1 })
	// A connection that never sends its ClientHello holds the one slot.
	idle, err := net.DialTimeout("tcp", srv.SecureAddr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer idle.Close()
	inProgress := func() int64 {
		for _, m := range srv.Monitor() {
			if m.Name == "outstanding_tls_handshake" {
				return m.Value.(int64)
			}
		}
		t.Fatal("mntr has no outstanding_tls_handshake")
		return 0
	}
	for deadline := time.Now().Add(10 * time.Second); inProgress() != 1; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the idle connection's handshake never started")
		}
	}
	cert := ts.clientFor("late")
	_, err = tls.DialWithDialer(&net.Dialer{Timeout: 5 * time.Second}, "tcp", srv.SecureAddr().String(), ts.clientTLS(&cert))
	if err == nil {
		t.Fatal("a second handshake past the limit succeeded")
	}
	idle.Close()
	for deadline := time.Now().Add(10 * time.Second); inProgress() != 0; time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the slot was not released after the idle connection closed")
		}
	}
	c := tlsDial(t, srv.SecureAddr().String(), ts.clientTLS(&cert))
	if _, _, err := c.Get(ctx10(t), "/"); err != nil {
		t.Fatalf("after the slot is free: %v", err)
	}
}
