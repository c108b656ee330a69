// Package testpki makes certificate authorities and certificates for
// tests: TLS between clients and servers and between ensemble members.
// Keys are ECDSA P-256, so making them is quick. Nothing here is for
// production use.
package testpki

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"sync/atomic"
	"testing"
	"time"
)

var serial atomic.Int64

// CA is a certificate authority.
type CA struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// PEM is the CA certificate, PEM encoded: a PEM trust store.
	PEM []byte
}

// Leaf is a certificate issued by a CA, with its key.
type Leaf struct {
	Cert *x509.Certificate
	Key  *ecdsa.PrivateKey
	// CertPEM is the certificate; KeyPEM its PKCS#8 private key.
	CertPEM, KeyPEM []byte
}

// Spec describes a leaf certificate. The zero Spec is a certificate for
// 127.0.0.1 and localhost, valid from an hour ago for a day, usable by
// clients and servers.
type Spec struct {
	// Subject is the certificate's subject; CommonName defaults to
	// "localhost".
	Subject pkix.Name
	// DNSNames and IPs are the subject alternative names; both empty
	// means localhost and 127.0.0.1.
	DNSNames []string
	IPs      []net.IP
	// NotBefore and NotAfter default to an hour ago and a day from now.
	NotBefore, NotAfter time.Time
}

func newKey(tb testing.TB) *ecdsa.PrivateKey {
	tb.Helper()
	k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		tb.Fatal(err)
	}
	return k
}

// NewCA makes a self-signed CA named name.
func NewCA(tb testing.TB, name string) *CA {
	tb.Helper()
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(serial.Add(1)),
		Subject:               pkix.Name{CommonName: name, Organization: []string{"Warden tests"}},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	return &CA{Cert: cert, Key: key, PEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der})}
}

// Issue makes a certificate signed by ca.
func (ca *CA) Issue(tb testing.TB, s Spec) *Leaf {
	tb.Helper()
	if s.Subject.CommonName == "" {
		s.Subject.CommonName = "localhost"
	}
	if len(s.DNSNames) == 0 && len(s.IPs) == 0 {
		s.DNSNames, s.IPs = []string{"localhost"}, []net.IP{net.IPv4(127, 0, 0, 1)}
	}
	if s.NotBefore.IsZero() {
		s.NotBefore = time.Now().Add(-time.Hour)
	}
	if s.NotAfter.IsZero() {
		s.NotAfter = time.Now().Add(24 * time.Hour)
	}
	key := newKey(tb)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(serial.Add(1)),
		Subject:      s.Subject,
		DNSNames:     s.DNSNames,
		IPAddresses:  s.IPs,
		NotBefore:    s.NotBefore,
		NotAfter:     s.NotAfter,
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth, x509.ExtKeyUsageClientAuth},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca.Cert, &key.PublicKey, ca.Key)
	if err != nil {
		tb.Fatal(err)
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		tb.Fatal(err)
	}
	pk, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		tb.Fatal(err)
	}
	return &Leaf{
		Cert: cert, Key: key,
		CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		KeyPEM:  pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: pk}),
	}
}

// TLS returns the leaf as a tls.Certificate.
func (l *Leaf) TLS() tls.Certificate {
	return tls.Certificate{Certificate: [][]byte{l.Cert.Raw}, PrivateKey: l.Key, Leaf: l.Cert}
}

// WriteKeyStore writes the leaf as a PEM key store, ZooKeeper's layout
// (the private key, then the certificate), to dir/name and returns the
// path.
func (l *Leaf) WriteKeyStore(tb testing.TB, dir, name string) string {
	tb.Helper()
	return write(tb, dir, name, append(append([]byte(nil), l.KeyPEM...), l.CertPEM...))
}

// WriteTrustStore writes the CA certificate as a PEM trust store to
// dir/name and returns the path.
func (ca *CA) WriteTrustStore(tb testing.TB, dir, name string) string {
	tb.Helper()
	return write(tb, dir, name, ca.PEM)
}

// Pool returns a pool holding the CA certificate.
func (ca *CA) Pool() *x509.CertPool {
	p := x509.NewCertPool()
	p.AddCert(ca.Cert)
	return p
}

func write(tb testing.TB, dir, name string, data []byte) string {
	tb.Helper()
	p := filepath.Join(dir, name)
	// Write then rename, so a watcher never sees half a file.
	tmp := p + ".tmp"
	if err := os.WriteFile(tmp, data, 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := os.Rename(tmp, p); err != nil {
		tb.Fatal(err)
	}
	return p
}
