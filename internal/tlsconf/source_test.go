package tlsconf

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"log/slog"
	"net"
	"os"
	"strings"
	"testing"
	"time"
)

// rawClient is a plain crypto/tls client: it presents c (if any) and
// trusts roots, so that tests can send what a Source would refuse to load.
func rawClient(c *testCert, roots ...*testCert) *tls.Config {
	cfg := &tls.Config{ServerName: "localhost", RootCAs: x509.NewCertPool()}
	for _, r := range roots {
		cfg.RootCAs.AddCert(r.cert)
	}
	if c != nil {
		cert := tls.Certificate{PrivateKey: c.key, Leaf: c.cert}
		for _, x := range c.chain {
			cert.Certificate = append(cert.Certificate, x.Raw)
		}
		// Always sent, even when the server names other CAs.
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	return cfg
}

func TestClientAuth(t *testing.T) {
	ca, other := newCA(t, "ca"), newCA(t, "other")
	serverCert := leafOf(t, ca, "server")
	good := leafOf(t, ca, "client")
	foreign := leafOf(t, other, "stranger")
	expired := issue(t, ca, certOpts{cn: "expired", dns: []string{"localhost"}, notBefore: time.Now().Add(-48 * time.Hour), notAfter: time.Now().Add(-time.Hour)})
	clients := map[string]*testCert{"cert": good, "none": nil, "other CA": foreign, "expired": expired}
	for _, tc := range []struct {
		mode string
		ok   map[string]bool
	}{
		{"need", map[string]bool{"cert": true}},
		{"want", map[string]bool{"cert": true, "none": true}},
		{"none", map[string]bool{"cert": true, "none": true, "other CA": true, "expired": true}},
	} {
		srv := pemSource(t, ClientPrefix, serverCert, []*testCert{ca}, map[string]string{"ssl.clientAuth": tc.mode})
		for name, c := range clients {
			t.Run(tc.mode+"/"+name, func(t *testing.T) {
				r := handshake(t, srv.ServerConfig(), rawClient(c, ca))
				if r.ok() != tc.ok[name] {
					t.Fatalf("handshake ok=%v, want %v (server %v, client %v)", r.ok(), tc.ok[name], r.serverErr, r.clientErr)
				}
				if !r.ok() {
					return
				}
				sent := len(r.server.PeerCertificates) > 0
				if wantSent := c != nil && tc.mode != "none"; sent != wantSent {
					t.Errorf("server saw a client certificate: %v, want %v", sent, wantSent)
				}
				if sent && SubjectDN(r.server.PeerCertificates[0]) != "CN=client" {
					t.Errorf("client DN %q", SubjectDN(r.server.PeerCertificates[0]))
				}
			})
		}
	}
}

func TestServerWithoutKeyStore(t *testing.T) {
	ca := newCA(t, "ca")
	srv := pemSource(t, ClientPrefix, nil, []*testCert{ca}, nil)
	r := handshake(t, srv.ServerConfig(), rawClient(nil, ca))
	if r.serverErr == nil || !strings.Contains(r.serverErr.Error(), "ssl.keyStore.location is not set") {
		t.Errorf("server error %v", r.serverErr)
	}
}

// ClientConfig verifies the server against the trust store and, when
// hostnameVerification is on, the name it was given.
func TestClientConfigVerifiesServer(t *testing.T) {
	ca, other := newCA(t, "ca"), newCA(t, "other")
	serve := func(c *testCert) *tls.Config {
		return pemSource(t, QuorumPrefix, c, []*testCert{ca, other}, map[string]string{"ssl.quorum.clientAuth": "none"}).ServerConfig()
	}
	named := serve(leafOf(t, ca, "server"))
	cnOnly := serve(issue(t, ca, certOpts{cn: "zk1.example.org"}))
	ipOnly := serve(issue(t, ca, certOpts{cn: "x", ips: []net.IP{net.IPv4(127, 0, 0, 1)}}))
	foreign := serve(leafOf(t, other, "foreign"))
	serverOnlyEKU := serve(issue(t, ca, certOpts{cn: "c", dns: []string{"localhost"}, eku: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}))

	dialer := pemSource(t, QuorumPrefix, leafOf(t, ca, "dialer"), []*testCert{ca}, nil)
	dialer.dns = fakeDNS{ips: map[string][]string{"zk3.test": {"127.0.0.1"}}}
	lax := pemSource(t, QuorumPrefix, leafOf(t, ca, "dialer"), []*testCert{ca}, map[string]string{"ssl.quorum.hostnameVerification": "false"})
	for _, tc := range []struct {
		name   string
		server *tls.Config
		client *tls.Config
		ok     bool
		errHas string
	}{
		{"name in SAN", named, dialer.ClientConfig("localhost"), true, ""},
		{"IP in SAN", named, dialer.ClientConfig("127.0.0.1"), true, ""},
		{"wrong name", named, dialer.ClientConfig("zk9.example.org"), false, "ssl.quorum.hostnameVerification"},
		{"wrong name, verification off", named, lax.ClientConfig("zk9.example.org"), true, ""},
		{"CN without SANs", cnOnly, dialer.ClientConfig("zk1.example.org"), true, ""},
		{"name resolving to the SAN address", ipOnly, dialer.ClientConfig("zk3.test"), true, ""},
		{"untrusted CA", foreign, dialer.ClientConfig("localhost"), false, "unknown authority"},
		{"untrusted CA, verification off", foreign, lax.ClientConfig("localhost"), false, "unknown authority"},
		{"no serverAuth usage", serverOnlyEKU, dialer.ClientConfig("localhost"), false, "usage"},
		{"no name", named, dialer.ClientConfig(""), false, "no server name"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := handshake(t, tc.server, tc.client)
			if r.ok() != tc.ok {
				t.Fatalf("handshake ok=%v, want %v (server %v, client %v)", r.ok(), tc.ok, r.serverErr, r.clientErr)
			}
			if tc.errHas != "" && (r.clientErr == nil || !strings.Contains(r.clientErr.Error(), tc.errHas)) {
				t.Errorf("client error %v, want it to mention %q", r.clientErr, tc.errHas)
			}
		})
	}
}

// The quorum checks a client's certificate against the client's address
// (clientHostnameVerification, on by default there).
func TestClientHostnameVerification(t *testing.T) {
	ca := newCA(t, "ca")
	serverCert := leafOf(t, ca, "server")
	byIP := leafOf(t, ca, "by-ip")
	byName := issue(t, ca, certOpts{cn: "by-name", dns: []string{"zk2.test"}})
	reverse := fakeDNS{names: map[string][]string{"127.0.0.1": {"zk2.test."}}, ips: map[string][]string{"zk2.test": {"127.0.0.1"}}}
	for _, tc := range []struct {
		name   string
		keys   map[string]string
		dns    resolver
		client *testCert
		ok     bool
	}{
		{"address in SAN", nil, fakeDNS{}, byIP, true},
		{"name by reverse DNS", nil, reverse, byName, true},
		{"no reverse DNS record", nil, fakeDNS{}, byName, false},
		{"reverse DNS off", map[string]string{"ssl.quorum.allowReverseDnsLookup": "false"}, reverse, byName, false},
		{"check off", map[string]string{"ssl.quorum.clientHostnameVerification": "false"}, fakeDNS{}, byName, true},
		{"want without a certificate", map[string]string{"ssl.quorum.clientAuth": "want"}, fakeDNS{}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := pemSource(t, QuorumPrefix, serverCert, []*testCert{ca}, tc.keys)
			srv.dns = tc.dns
			r := handshake(t, srv.ServerConfig(), rawClient(tc.client, ca))
			if r.ok() != tc.ok {
				t.Fatalf("handshake ok=%v, want %v (server %v, client %v)", r.ok(), tc.ok, r.serverErr, r.clientErr)
			}
			if !tc.ok && !strings.Contains(r.serverErr.Error(), "ssl.quorum.clientHostnameVerification") {
				t.Errorf("server error %v does not name the key", r.serverErr)
			}
		})
	}
}

func TestProtocolsAndCipherSuites(t *testing.T) {
	ca := newCA(t, "ca")
	serverCert := leafOf(t, ca, "server")
	serve := func(keys map[string]string) *tls.Config {
		keys["ssl.clientAuth"] = "none"
		return pemSource(t, ClientPrefix, serverCert, []*testCert{ca}, keys).ServerConfig()
	}
	client := func(min, max uint16, suites ...uint16) *tls.Config {
		c := rawClient(nil, ca)
		c.MinVersion, c.MaxVersion, c.CipherSuites = min, max, suites
		return c
	}
	for _, tc := range []struct {
		name      string
		server    map[string]string
		client    *tls.Config
		ok        bool
		version   uint16
		suite     uint16
		anySuites bool
	}{
		{"default negotiates TLS 1.3", map[string]string{}, client(0, 0), true, tls.VersionTLS13, 0, true},
		{"default accepts TLS 1.2", map[string]string{}, client(tls.VersionTLS12, tls.VersionTLS12), true, tls.VersionTLS12, 0, true},
		{"default refuses TLS 1.1", map[string]string{}, client(tls.VersionTLS10, tls.VersionTLS11), false, 0, 0, true},
		{"TLSv1.2 only", map[string]string{"ssl.protocol": "TLSv1.2"}, client(0, 0), true, tls.VersionTLS12, 0, true},
		{"TLSv1.2 only refuses 1.3", map[string]string{"ssl.protocol": "TLSv1.2"}, client(tls.VersionTLS13, 0), false, 0, 0, true},
		{"TLSv1.3 only refuses 1.2", map[string]string{"ssl.enabledProtocols": "TLSv1.3"}, client(0, tls.VersionTLS12), false, 0, 0, true},
		{"one suite", map[string]string{"ssl.protocol": "TLSv1.2", "ssl.ciphersuites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
			client(0, 0), true, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384, false},
		{"one suite refuses another", map[string]string{"ssl.protocol": "TLSv1.2", "ssl.ciphersuites": "TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384"},
			client(0, 0, tls.TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256), false, 0, 0, false},
		{"default refuses CBC-SHA256", map[string]string{}, client(0, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA256), false, 0, 0, false},
		{"default accepts CBC-SHA", map[string]string{}, client(0, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA), true, tls.VersionTLS12, tls.TLS_ECDHE_ECDSA_WITH_AES_128_CBC_SHA, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := handshake(t, serve(tc.server), tc.client)
			if r.ok() != tc.ok {
				t.Fatalf("handshake ok=%v, want %v (server %v, client %v)", r.ok(), tc.ok, r.serverErr, r.clientErr)
			}
			if !tc.ok {
				return
			}
			if r.server.Version != tc.version {
				t.Errorf("version %x, want %x", r.server.Version, tc.version)
			}
			if !tc.anySuites && r.server.CipherSuite != tc.suite {
				t.Errorf("suite %s, want %s", tls.CipherSuiteName(r.server.CipherSuite), tls.CipherSuiteName(tc.suite))
			}
		})
	}
}

// reloadFixture is a server Source over PEM files the test rewrites.
type reloadFixture struct {
	ca        *testCert
	keyPath   string
	trustPath string
	src       *Source
	logs      chan slog.Record
}

func newReloadFixture(t *testing.T, first *testCert, ca *testCert) *reloadFixture {
	dir := t.TempDir()
	f := &reloadFixture{ca: ca, logs: make(chan slog.Record, 100)}
	f.keyPath = writeFile(t, dir, "key.pem", pemKeyStore(t, first))
	f.trustPath = writeFile(t, dir, "trust.pem", pemTrust(ca))
	src, err := NewSource(mustRead(t, ClientPrefix, map[string]string{
		"ssl.keyStore.location": f.keyPath, "ssl.trustStore.location": f.trustPath,
	}), slog.New(recordHandler{f.logs}))
	if err != nil {
		t.Fatal(err)
	}
	f.src = src
	return f
}

// served returns the CN of the certificate the server presents now.
func (f *reloadFixture) served(t *testing.T, client *testCert) string {
	t.Helper()
	r := handshake(t, f.src.ServerConfig(), rawClient(client, f.ca))
	if !r.ok() {
		t.Fatalf("handshake: server %v, client %v", r.serverErr, r.clientErr)
	}
	return r.client.PeerCertificates[0].Subject.CommonName
}

// nextLog returns the next log record, failing after a bounded wait.
func (f *reloadFixture) nextLog(t *testing.T) slog.Record {
	t.Helper()
	select {
	case r := <-f.logs:
		return r
	case <-time.After(10 * time.Second):
		t.Fatal("no log record within 10 s")
	}
	return slog.Record{}
}

func (f *reloadFixture) noLog(t *testing.T) {
	t.Helper()
	select {
	case r := <-f.logs:
		t.Fatalf("unexpected log record %q", r.Message)
	default:
	}
}

func TestReloadSwitchesCertificates(t *testing.T) {
	ca := newCA(t, "ca")
	client := leafOf(t, ca, "client")
	f := newReloadFixture(t, leafOf(t, ca, "first"), ca)
	serverCfg := f.src.ServerConfig() // made once, like a listener's
	if got := f.served(t, client); got != "first" {
		t.Fatalf("served %q", got)
	}

	writeFile(t, "", f.keyPath, pemKeyStore(t, leafOf(t, ca, "second")))
	if got := f.served(t, client); got != "first" {
		t.Fatalf("served %q before Reload", got)
	}
	if err := f.src.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := f.nextLog(t); r.Level != slog.LevelInfo || !strings.Contains(r.Message, "reloaded") {
		t.Errorf("log %v %q", r.Level, r.Message)
	}
	r := handshake(t, serverCfg, rawClient(client, ca))
	if !r.ok() || r.client.PeerCertificates[0].Subject.CommonName != "second" {
		t.Fatalf("old ServerConfig after Reload: ok=%v (%v %v)", r.ok(), r.serverErr, r.clientErr)
	}

	// A version that does not load leaves the previous one in use.
	writeFile(t, "", f.keyPath, []byte("not a store"))
	err := f.src.Reload()
	wantErr(t, err, ErrStore, f.keyPath)
	if r := f.nextLog(t); r.Level != slog.LevelWarn || !strings.Contains(r.Message, "keeping the previous certificates") {
		t.Errorf("log %v %q", r.Level, r.Message)
	}
	if got := f.served(t, client); got != "second" {
		t.Fatalf("served %q after a failed reload", got)
	}
}

func TestReloadTrustStore(t *testing.T) {
	ca, next := newCA(t, "ca"), newCA(t, "next-ca")
	f := newReloadFixture(t, leafOf(t, ca, "server"), ca)
	newcomer := leafOf(t, next, "newcomer")
	if r := handshake(t, f.src.ServerConfig(), rawClient(newcomer, ca)); r.ok() {
		t.Fatal("a client of an untrusted CA got in")
	}
	writeFile(t, "", f.trustPath, pemTrust(ca, next))
	if err := f.src.Reload(); err != nil {
		t.Fatal(err)
	}
	if r := handshake(t, f.src.ServerConfig(), rawClient(newcomer, ca)); !r.ok() {
		t.Fatalf("after the trust store reload: server %v, client %v", r.serverErr, r.clientErr)
	}

	// A dialer follows its trust store too.
	dialer := pemSource(t, ClientPrefix, nil, []*testCert{next}, nil)
	cfg := dialer.ClientConfig("localhost")
	if r := handshake(t, f.src.ServerConfig(), cfg); r.ok() {
		t.Fatal("dialer trusted a server of a CA not in its trust store")
	}
}

// Watch reloads changed files by itself, and warns once per version that
// does not load.
func TestWatch(t *testing.T) {
	ca := newCA(t, "ca")
	client := leafOf(t, ca, "client")
	f := newReloadFixture(t, leafOf(t, ca, "first"), ca)
	ctx, cancel := context.WithCancel(context.Background())
	stopped := make(chan struct{})
	go func() {
		f.src.Watch(ctx, 5*time.Millisecond)
		close(stopped)
	}()
	defer func() {
		cancel()
		<-stopped
	}()

	writeFile(t, "", f.keyPath, pemKeyStore(t, leafOf(t, ca, "watched")))
	if r := f.nextLog(t); r.Level != slog.LevelInfo {
		t.Fatalf("log %v %q", r.Level, r.Message)
	}
	if got := f.served(t, client); got != "watched" {
		t.Fatalf("served %q", got)
	}
	writeFile(t, "", f.keyPath, []byte("broken"))
	if r := f.nextLog(t); r.Level != slog.LevelWarn {
		t.Fatalf("log %v %q", r.Level, r.Message)
	}
	writeFile(t, "", f.keyPath, pemKeyStore(t, leafOf(t, ca, "fixed")))
	if r := f.nextLog(t); r.Level != slog.LevelInfo {
		t.Fatalf("log %v %q", r.Level, r.Message)
	}
	if got := f.served(t, client); got != "fixed" {
		t.Fatalf("served %q", got)
	}
}

// The check Watch runs does nothing for unchanged files and warns once
// for a bad version.
func TestCheckWarnsOncePerVersion(t *testing.T) {
	ca := newCA(t, "ca")
	f := newReloadFixture(t, leafOf(t, ca, "first"), ca)
	if changed, err := f.src.load(false); changed || err != nil {
		t.Fatalf("unchanged files: changed=%v err=%v", changed, err)
	}
	f.noLog(t)
	if err := os.Remove(f.keyPath); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 3; i++ {
		if _, err := f.src.load(false); !errors.Is(err, ErrStore) {
			t.Fatalf("check %d: %v", i, err)
		}
	}
	if r := f.nextLog(t); r.Level != slog.LevelWarn {
		t.Fatalf("log %v %q", r.Level, r.Message)
	}
	f.noLog(t)
}
