package transport

import (
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"net"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/testpki"
)

// Certificates made up for the TLS tests: a CA per test, and member
// certificates as ssl.quorum.keyStore would hold them.

// testCA is a certificate authority with its pool: a quorum trust store.
type testCA struct {
	*testpki.CA
	pool *x509.CertPool
}

func newTestCA(t testing.TB, name string) *testCA {
	ca := testpki.NewCA(t, name)
	return &testCA{CA: ca, pool: ca.Pool()}
}

// certSpec describes a member certificate.
type certSpec struct {
	name    string   // the subject's common name
	hosts   []string // DNS names and IPs; default 127.0.0.1 and localhost
	expired bool     // valid for an hour that ended an hour ago
}

// issue signs a member certificate, good for both ends of a TLS
// connection (serverAuth and clientAuth), as quorum certificates are.
func (ca *testCA) issue(t testing.TB, spec certSpec) *tls.Certificate {
	t.Helper()
	s := testpki.Spec{Subject: pkix.Name{CommonName: spec.name}}
	if spec.expired {
		s.NotBefore, s.NotAfter = time.Now().Add(-2*time.Hour), time.Now().Add(-time.Hour)
	}
	for _, h := range spec.hosts {
		if ip := net.ParseIP(h); ip != nil {
			s.IPs = append(s.IPs, ip)
		} else {
			s.DNSNames = append(s.DNSNames, h)
		}
	}
	c := ca.Issue(t, s).TLS()
	return &c
}

// quorumTLS is what one member's ssl.quorum.* settings give the
// transport: its certificate (nil: an empty keystore) and the CAs it
// trusts.
type quorumTLS struct {
	cert  *tls.Certificate
	trust *x509.CertPool
	// insist presents cert when dialling even to a peer that asks for
	// certificates of other CAs (crypto/tls would present none).
	insist bool
	// maxVersion, when set, caps the TLS version (ssl.quorum.protocol).
	maxVersion uint16
}

// server is the configuration of the member's quorum port: TLS with a
// verified client certificate.
func (q quorumTLS) server() *tls.Config {
	c := &tls.Config{ClientAuth: tls.RequireAndVerifyClientCert, ClientCAs: q.trust, MaxVersion: q.maxVersion}
	if q.cert != nil {
		c.Certificates = []tls.Certificate{*q.cert}
	} else {
		// A keystore that holds nothing.
		c.GetCertificate = func(*tls.ClientHelloInfo) (*tls.Certificate, error) { return nil, nil }
	}
	return c
}

// dial gives the member's configuration for dialling its peers.
func (q quorumTLS) dial() func(id uint64, host string) *tls.Config {
	return func(uint64, string) *tls.Config {
		c := &tls.Config{RootCAs: q.trust, MaxVersion: q.maxVersion}
		switch {
		case q.cert != nil && q.insist:
			c.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return q.cert, nil }
		case q.cert != nil:
			c.Certificates = []tls.Certificate{*q.cert}
		}
		return c
	}
}

// tlsStep configures a member at step s of ZooKeeper's rolling
// enablement of quorum TLS: 0 plaintext; 1 portUnification (accepts
// both, dials plaintext); 2 sslQuorum and portUnification (accepts both,
// dials TLS); 3 sslQuorum alone (TLS only).
func tlsStep(cfg *TCPConfig, s int, q quorumTLS) {
	cfg.ServerTLS, cfg.DialTLS, cfg.PortUnification = nil, nil, false
	if s >= 1 {
		cfg.ServerTLS = q.server()
	}
	if s >= 2 {
		cfg.DialTLS = q.dial()
	}
	cfg.PortUnification = s == 1 || s == 2
}
