package tlsconf

import (
	"bytes"
	"context"
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// testCert is a certificate with its key and the chain above it.
type testCert struct {
	cert *x509.Certificate
	key  crypto.Signer
	// chain is cert followed by its issuers up to (not including) the root.
	chain []*x509.Certificate
}

var serial atomic.Int64

// certOpts describe a certificate to issue.
type certOpts struct {
	cn        string
	subject   []byte // RawSubject; overrides cn
	dns       []string
	ips       []net.IP
	notBefore time.Time
	notAfter  time.Time
	ca        bool
	eku       []x509.ExtKeyUsage
	key       crypto.Signer // the certificate's key; new when nil
}

// newCA makes a self-signed CA.
func newCA(t testing.TB, cn string) *testCert {
	t.Helper()
	return issue(t, nil, certOpts{cn: cn, ca: true})
}

// issue makes a certificate signed by parent (self-signed when nil). The
// default is a leaf valid for an hour around now for server and client
// use.
func issue(t testing.TB, parent *testCert, o certOpts) *testCert {
	t.Helper()
	key := o.key
	if key == nil {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		key = k
	}
	if o.notBefore.IsZero() {
		o.notBefore = time.Now().Add(-time.Hour)
	}
	if o.notAfter.IsZero() {
		o.notAfter = time.Now().Add(time.Hour)
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      pkix.Name{CommonName: o.cn},
		RawSubject:   o.subject,
		NotBefore:    o.notBefore,
		NotAfter:     o.notAfter,
		DNSNames:     o.dns,
		IPAddresses:  o.ips,
	}
	if o.ca {
		tmpl.IsCA = true
		tmpl.BasicConstraintsValid = true
		tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	} else {
		tmpl.KeyUsage = x509.KeyUsageDigitalSignature
		tmpl.ExtKeyUsage = o.eku
		if tmpl.ExtKeyUsage == nil {
			tmpl.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth}
		}
	}
	signerCert, signerKey := tmpl, key
	if parent != nil {
		signerCert, signerKey = parent.cert, parent.key
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, signerCert, key.Public(), signerKey)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		t.Fatal(err)
	}
	tc := &testCert{cert: cert, key: key, chain: []*x509.Certificate{cert}}
	if parent != nil && !parent.isRoot() {
		tc.chain = append(tc.chain, parent.chain...)
	}
	return tc
}

func (c *testCert) isRoot() bool { return bytes.Equal(c.cert.RawIssuer, c.cert.RawSubject) }

// requireJava returns the path of a JDK tool, failing the test loudly when
// it is missing: these tests check Warden against Java itself and must not
// pass by skipping.
func requireJava(t testing.TB, tool string) string {
	t.Helper()
	p, err := exec.LookPath(tool)
	if err != nil {
		t.Fatalf("%s not found on PATH: this test compares Warden with Java 17; install a JDK (Debian: apt-get install openjdk-17-jdk-headless)", tool)
	}
	return p
}

// run runs a command, failing the test with its output on error.
func run(t testing.TB, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, out)
	}
	return string(out)
}
