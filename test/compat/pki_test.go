//go:build compat

package compat

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/pem"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/testpki"
)

// storePassword protects every key and trust store of the compatibility PKI.
const storePassword = "compat-secret"

// toolDeadline bounds one run of openssl or keytool.
const toolDeadline = 60 * time.Second

// The client certificates of the compatibility PKI, by name, and the x509 identity each
// gets on a TLS connection: the subject as Java's X500Principal.getName() writes it
// (RFC 2253: most specific RDN first, ',' '+' '"' '\' '<' '>' ';' escaped, attributes
// without an RFC 2253 keyword as OID=#hex of their DER value). ZooKeeper's
// X509AuthenticationProvider uses that string; ACLs written for ZooKeeper name it.
const (
	dnAlice = `CN=alice,OU=compat,O=Wärden\, Inc.`
	dnBob   = `CN=bob`
	dnAdmin = `CN=admin`
	// emailAddress (1.2.840.113549.1.9.1) has no RFC 2253 keyword: IA5String "carol@example.com".
	dnCarol = `1.2.840.113549.1.9.1=#16116361726f6c406578616d706c652e636f6d,CN=carol`
)

// oidEmailAddress is PKCS #9 emailAddress.
var oidEmailAddress = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 9, 1}

// compatClientSubjects are the subjects of the trusted client certificates.
var compatClientSubjects = map[string]pkix.Name{
	"alice": {CommonName: "alice", OrganizationalUnit: []string{"compat"}, Organization: []string{"Wärden, Inc."}},
	"bob":   {CommonName: "bob"},
	"admin": {CommonName: "admin"},
	"carol": {CommonName: "carol", ExtraNames: []pkix.AttributeTypeAndValue{{
		Type:  oidEmailAddress,
		Value: asn1.RawValue{Tag: asn1.TagIA5String, Bytes: []byte("carol@example.com")},
	}}},
}

// compatPKI is one test's certificate authority and stores, made as an operator makes
// them for ZooKeeper: keys and certificates (Go), PKCS12 key stores (openssl pkcs12
// -export), the server's JKS key store (keytool -importkeystore) and a PKCS12 trust store
// (keytool -importcert). ZooKeeper and Warden read the very same store files.
type compatPKI struct {
	Dir        string // holds every file below: ca.pem, NAME.pem, NAME.key, NAME.p12, ...
	CAPEM      string // the CA certificate, PEM (kazoo's ca=)
	KeyStore   string // the server's key store: JKS, made by keytool
	TrustStore string // the CA certificate: PKCS12 trust store, made by keytool
	Roots      *x509.CertPool
	Certs      map[string]*compatCert // the client certificates of compatClientSubjects, and "mallory"
}

// compatCert is a client certificate with its key in every form the clients read.
type compatCert struct {
	CertPEM string // the certificate, PEM (kazoo's certfile=)
	KeyPEM  string // its PKCS #8 key, PEM (kazoo's keyfile=)
	PKCS12  string // key, certificate and CA certificate (the Java client's key store)
	TLS     tls.Certificate
}

// newCompatPKI makes the PKI in a fresh temporary directory. "mallory" is a client
// certificate issued by another CA, which the servers do not trust. Every certificate
// (testpki's) names 127.0.0.1 and localhost.
func newCompatPKI(t *testing.T) *compatPKI {
	t.Helper()
	dir := t.TempDir()
	ca := testpki.NewCA(t, "Warden compat CA")
	p := &compatPKI{Dir: dir, Roots: ca.Pool(), Certs: map[string]*compatCert{}}
	p.CAPEM = writePEM(t, dir, "ca.pem", "CERTIFICATE", ca.Cert.Raw)

	// testpki's certificates name 127.0.0.1 and localhost; clients are not
	// checked against their address, so client certificates may too.
	server := writeLeaf(t, dir, "server", ca.Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: "localhost", Organization: []string{"Warden compat"}}}), ca)
	p.KeyStore = filepath.Join(dir, "server.jks")
	runTool(t, "keytool", "-importkeystore", "-noprompt",
		"-srckeystore", server.PKCS12, "-srcstoretype", "PKCS12", "-srcstorepass", storePassword,
		"-destkeystore", p.KeyStore, "-deststoretype", "JKS", "-deststorepass", storePassword)
	p.TrustStore = filepath.Join(dir, "truststore.p12")
	runTool(t, "keytool", "-importcert", "-noprompt", "-alias", "compat-ca", "-file", p.CAPEM,
		"-keystore", p.TrustStore, "-storetype", "PKCS12", "-storepass", storePassword)

	for name, subject := range compatClientSubjects {
		p.Certs[name] = writeLeaf(t, dir, name, ca.Issue(t, testpki.Spec{Subject: subject}), ca)
	}
	other := testpki.NewCA(t, "Some other CA")
	p.Certs["mallory"] = writeLeaf(t, dir, "mallory", other.Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: "mallory"}}), other)
	return p
}

// serverConfig returns the zoo.cfg keys that give a server a TLS client port with the
// PKI's stores, ZooKeeper's x509 provider, and admin's certificate as x509 super user.
// ZooKeeper reads the ssl.* keys from zoo.cfg (as zookeeper.ssl.* system properties);
// it needs the Netty connection factory for TLS, which Warden ignores.
func (p *compatPKI) serverConfig() map[string]string {
	return map[string]string{
		"serverCnxnFactory":                    "org.apache.zookeeper.server.NettyServerCnxnFactory",
		"secureClientPort":                     "auto", // writeConfig picks the port
		"ssl.keyStore.location":                p.KeyStore,
		"ssl.keyStore.password":                storePassword,
		"ssl.trustStore.location":              p.TrustStore,
		"ssl.trustStore.password":              storePassword,
		"authProvider.x509":                    "org.apache.zookeeper.server.auth.X509AuthenticationProvider",
		"X509AuthenticationProvider.superUser": dnAdmin,
	}
}

// clientTLS returns a Go TLS configuration presenting the named certificate ("" = none)
// and trusting the PKI's CA. The certificate is presented whatever CAs the server's
// CertificateRequest lists, as Java and OpenSSL clients do (Go's default would send none
// for a certificate from another CA, such as mallory's).
func (p *compatPKI) clientTLS(name string) *tls.Config {
	cfg := &tls.Config{RootCAs: p.Roots, ServerName: "127.0.0.1"}
	if name != "" {
		cert := p.Certs[name].TLS
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return &cert, nil }
	}
	return cfg
}

// javaTLSFlags returns the Java client's system properties for a TLS connection (Netty
// socket, client.secure) presenting the named certificate ("" = no key store).
func (p *compatPKI) javaTLSFlags(name string) []string {
	flags := []string{
		"-Dzookeeper.client.secure=true",
		"-Dzookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty",
		"-Dzookeeper.ssl.trustStore.location=" + p.TrustStore,
		"-Dzookeeper.ssl.trustStore.password=" + storePassword,
	}
	if name != "" {
		flags = append(flags,
			"-Dzookeeper.ssl.keyStore.location="+p.Certs[name].PKCS12,
			"-Dzookeeper.ssl.keyStore.password="+storePassword)
	}
	return flags
}

// writeLeaf writes name.pem, name.key and name.p12 (openssl pkcs12 -export, with the
// issuing CA's certificate) into dir.
func writeLeaf(t *testing.T, dir, name string, leaf *testpki.Leaf, ca *testpki.CA) *compatCert {
	t.Helper()
	pk, err := x509.MarshalPKCS8PrivateKey(leaf.Key)
	if err != nil {
		t.Fatal(err)
	}
	c := &compatCert{
		CertPEM: writePEM(t, dir, name+".pem", "CERTIFICATE", leaf.Cert.Raw),
		KeyPEM:  writePEM(t, dir, name+".key", "PRIVATE KEY", pk),
		PKCS12:  filepath.Join(dir, name+".p12"),
		TLS:     leaf.TLS(),
	}
	chain := writePEM(t, dir, name+"-ca.pem", "CERTIFICATE", ca.Cert.Raw)
	runTool(t, "openssl", "pkcs12", "-export", "-name", name, "-in", c.CertPEM, "-inkey", c.KeyPEM,
		"-certfile", chain, "-out", c.PKCS12, "-passout", "pass:"+storePassword)
	return c
}

func writePEM(t *testing.T, dir, name, typ string, der []byte) string {
	t.Helper()
	path := filepath.Join(dir, name)
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
	return path
}

// runTool runs openssl or keytool to completion, bounded by toolDeadline.
func runTool(t *testing.T, name string, args ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), toolDeadline)
	defer cancel()
	out, err := exec.CommandContext(ctx, name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", name, args, err, out)
	}
}
