package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/x509"
	"encoding/pem"
	"os"
	"path/filepath"
	"testing"
	"time"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
	"software.sslmate.com/src/go-pkcs12"
)

// The testdata keys were made with OpenSSL 3.0 (password "s3cret"):
//
//	openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out key-pkcs8.pem
//	openssl pkcs8 -topk8 -in key-pkcs8.pem -v2 aes-256-cbc -out key-aes256-sha256.pem
//	openssl pkcs8 -topk8 -in key-pkcs8.pem -v2 aes-128-cbc -v2prf hmacWithSHA1 -out key-aes128-sha1.pem
//	openssl pkcs8 -topk8 -in key-pkcs8.pem -v2 aes-192-cbc -v2prf hmacWithSHA512 -iter 5000 -out key-aes192-sha512.pem
//	openssl pkcs8 -topk8 -in key-pkcs8.pem -v2 aes-256-cbc -iter 1 -out key-aes256-iter1.pem
//	openssl pkcs8 -topk8 -in key-pkcs8.pem -v1 PBE-SHA1-3DES -out key-pbes1.pem
//	openssl ec -in key-pkcs8.pem -out key-sec1.pem
//	openssl rsa -in <an RSA key> -traditional -out key-pkcs1.pem
//	openssl pkcs12 -export -nokeys -in <a CA> -out trust-openssl.p12
const testdataPassword = "s3cret"

func readTestdata(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// testdataKey is the key of key-pkcs8.pem and a certificate for it.
func testdataKey(t testing.TB) *testCert {
	t.Helper()
	block, _ := pem.Decode(readTestdata(t, "key-pkcs8.pem"))
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		t.Fatal(err)
	}
	return issue(t, nil, certOpts{cn: "testdata", key: key.(crypto.Signer)})
}

// loadKeyStore makes a Source of one key store file and returns the error.
func loadKeyStore(t testing.TB, name string, data []byte, extra map[string]string) (*Source, error) {
	t.Helper()
	keys := map[string]string{"ssl.keyStore.location": writeFile(t, t.TempDir(), name, data)}
	for k, v := range extra {
		keys[k] = v
	}
	return NewSource(mustRead(t, ClientPrefix, keys), discardLog())
}

func loadTrustStore(t testing.TB, name string, data []byte, extra map[string]string) (*Source, error) {
	t.Helper()
	keys := map[string]string{"ssl.trustStore.location": writeFile(t, t.TempDir(), name, data)}
	for k, v := range extra {
		keys[k] = v
	}
	return NewSource(mustRead(t, ClientPrefix, keys), discardLog())
}

func TestPEMKeyStoreEncryptedPKCS8(t *testing.T) {
	c := testdataKey(t)
	for _, name := range []string{"key-aes256-sha256.pem", "key-aes128-sha1.pem", "key-aes192-sha512.pem", "key-aes256-iter1.pem"} {
		t.Run(name, func(t *testing.T) {
			store := append(readTestdata(t, name), pemCert(c.cert)...)
			src, err := loadKeyStore(t, "ks.pem", store, map[string]string{"ssl.keyStore.password": testdataPassword})
			if err != nil {
				t.Fatal(err)
			}
			if got := src.cur.Load().certs[0].Leaf; !got.Equal(c.cert) {
				t.Errorf("loaded certificate %v", got.Subject)
			}
			_, err = loadKeyStore(t, "ks.pem", store, map[string]string{"ssl.keyStore.password": "wrong"})
			wantErr(t, err, ErrStore, "ks.pem", "wrong password", "ssl.keyStore.password")
			_, err = loadKeyStore(t, "ks.pem", store, nil)
			wantErr(t, err, ErrStore, "encrypted", "set ssl.keyStore.password")
		})
	}
}

func TestPEMKeyStoreRefuses(t *testing.T) {
	c := testdataKey(t)
	cert := pemCert(c.cert)
	for _, tc := range []struct {
		name      string
		store     []byte
		password  string
		fragments []string
	}{
		{"PBES1", append(readTestdata(t, "key-pbes1.pem"), cert...), testdataPassword, []string{"legacy", "-v2 aes-256-cbc"}},
		{"SEC 1", append(readTestdata(t, "key-sec1.pem"), cert...), "", []string{"EC PRIVATE KEY", "openssl pkcs8 -topk8"}},
		{"PKCS#1", readTestdata(t, "key-pkcs1.pem"), "", []string{"RSA PRIVATE KEY", "PKCS#8"}},
		{"plain key with a password", append(readTestdata(t, "key-pkcs8.pem"), cert...), "pw", []string{"not encrypted", "remove ssl.keyStore.password"}},
		{"no key", cert, "", []string{"holds no private key", "keytool -genkeypair"}},
		{"no certificate", readTestdata(t, "key-pkcs8.pem"), "", []string{"holds no certificate"}},
		{"certificate of another key", append(readTestdata(t, "key-pkcs8.pem"), pemCert(newCA(t, "other").cert)...), "", []string{"belongs to the private key"}},
		{"not PEM", []byte("hello"), "", []string{"holds no private key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			extra := map[string]string{}
			if tc.password != "" {
				extra["ssl.keyStore.password"] = tc.password
			}
			_, err := loadKeyStore(t, "ks.pem", tc.store, extra)
			wantErr(t, err, ErrStore, append([]string{"key store", "ks.pem", "ssl.keyStore.location"}, tc.fragments...)...)
		})
	}
}

func TestKeyStoreValidity(t *testing.T) {
	ca := newCA(t, "ca")
	expired := issue(t, ca, certOpts{cn: "old", notBefore: time.Now().Add(-48 * time.Hour), notAfter: time.Now().Add(-24 * time.Hour)})
	_, err := loadKeyStore(t, "ks.pem", pemKeyStore(t, expired), nil)
	wantErr(t, err, ErrStore, "CN=old", "expired", "renew")
	future := issue(t, ca, certOpts{cn: "new", notBefore: time.Now().Add(24 * time.Hour), notAfter: time.Now().Add(48 * time.Hour)})
	_, err = loadKeyStore(t, "ks.pem", pemKeyStore(t, future), nil)
	wantErr(t, err, ErrStore, "CN=new", "not valid before")
}

// The chain is found by key and issuer, whatever the order in the file.
func TestPEMKeyStoreChainOrder(t *testing.T) {
	root := newCA(t, "root")
	inter := issue(t, root, certOpts{cn: "inter", ca: true})
	leaf := leafOf(t, inter, "leaf")
	store := append(pemCert(root.cert), pemCert(inter.cert)...)
	store = append(store, pemKey(t, leaf.key)...)
	store = append(store, pemCert(newCA(t, "unrelated").cert)...)
	store = append(store, pemCert(leaf.cert)...)
	src, err := loadKeyStore(t, "ks.pem", store, nil)
	if err != nil {
		t.Fatal(err)
	}
	got := src.cur.Load().certs[0].Certificate
	want := [][]byte{leaf.cert.Raw, inter.cert.Raw, root.cert.Raw}
	if len(got) != len(want) {
		t.Fatalf("chain of %d certificates, want %d", len(got), len(want))
	}
	for i := range want {
		if !bytes.Equal(got[i], want[i]) {
			t.Errorf("chain[%d] is not the expected certificate", i)
		}
	}
}

func TestStoreFiles(t *testing.T) {
	c := leafOf(t, newCA(t, "ca"), "leaf")
	dir := t.TempDir()
	ks := writeFile(t, dir, "ks.pem", pemKeyStore(t, c))

	_, err := NewSource(mustRead(t, QuorumPrefix, map[string]string{"ssl.quorum.keyStore.location": filepath.Join(dir, "missing.jks")}), nil)
	wantErr(t, err, ErrStore, "missing.jks", "ssl.quorum.keyStore.location", "no such file")

	_, err = NewSource(mustRead(t, QuorumPrefix, map[string]string{
		"ssl.quorum.keyStore.location": ks, "ssl.quorum.keyStore.passwordPath": filepath.Join(dir, "nopw"),
	}), nil)
	wantErr(t, err, ErrStore, "nopw", "ssl.quorum.keyStore.passwordPath")

	// The password file's one trailing newline is not part of the password.
	p12, err := pkcs12.Modern.Encode(c.key, c.cert, nil, "pw in a file")
	if err != nil {
		t.Fatal(err)
	}
	_, err = NewSource(mustRead(t, ClientPrefix, map[string]string{
		"ssl.keyStore.location":     writeFile(t, dir, "ks.p12", p12),
		"ssl.keyStore.password":     "ignored when passwordPath is set",
		"ssl.keyStore.passwordPath": writeFile(t, dir, "pw", []byte("pw in a file\n")),
	}), nil)
	if err != nil {
		t.Fatal(err)
	}
}

func TestPEMTrustStore(t *testing.T) {
	a, b := newCA(t, "a"), newCA(t, "b")
	src, err := loadTrustStore(t, "trust.pem", append(pemTrust(a, b, a), []byte("comment\n")...), map[string]string{"ssl.trustStore.password": "unused"})
	if err != nil {
		t.Fatal(err)
	}
	if !src.cur.Load().roots.Equal(poolOf(a, b)) {
		t.Error("the trust store does not hold exactly a and b")
	}
	_, err = loadTrustStore(t, "trust.pem", readTestdata(t, "key-pkcs8.pem"), nil)
	wantErr(t, err, ErrStore, "trust store", "trust.pem", "ssl.trustStore.location", "holds no trusted certificate")
}

func TestPKCS12Stores(t *testing.T) {
	ca := newCA(t, "ca")
	leaf := leafOf(t, ca, "leaf")
	p12, err := pkcs12.Modern.Encode(leaf.key, leaf.cert, []*x509.Certificate{ca.cert}, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	src, err := loadKeyStore(t, "ks.p12", p12, map[string]string{"ssl.keyStore.password": "changeit"})
	if err != nil {
		t.Fatal(err)
	}
	if n := len(src.cur.Load().certs[0].Certificate); n != 2 {
		t.Errorf("chain of %d, want leaf and CA", n)
	}
	_, err = loadKeyStore(t, "ks.p12", p12, map[string]string{"ssl.keyStore.password": "wrong"})
	wantErr(t, err, ErrStore, "wrong password", "ssl.keyStore.password")

	trust, err := pkcs12.Modern.EncodeTrustStore([]*x509.Certificate{ca.cert}, "changeit")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := loadTrustStore(t, "trust.p12", trust, map[string]string{"ssl.trustStore.password": "changeit"}); err != nil {
		t.Fatal(err)
	}
	_, err = loadTrustStore(t, "trust.p12", p12, map[string]string{"ssl.trustStore.password": "changeit"})
	wantErr(t, err, ErrStore, "more than trusted certificates")
	_, err = loadTrustStore(t, "trust.p12", readTestdata(t, "trust-openssl.p12"), map[string]string{"ssl.trustStore.password": testdataPassword})
	wantErr(t, err, ErrStore, "openssl", "keytool -importcert")
	_, err = loadKeyStore(t, "ks.p12", trust, map[string]string{"ssl.keyStore.password": "changeit"})
	wantErr(t, err, ErrStore, "holds no private key")
}

func poolOf(cas ...*testCert) *x509.CertPool {
	p := x509.NewCertPool()
	for _, ca := range cas {
		p.AddCert(ca.cert)
	}
	return p
}

// goJKS makes a JKS store with keystore-go: key entries of keys (opened
// with keyPassword) and trusted entries of cas.
func goJKS(t testing.TB, storePassword, keyPassword string, keys []*testCert, cas []*testCert) []byte {
	t.Helper()
	ks := keystore.New()
	now := time.Now()
	for i, c := range keys {
		der, err := x509.MarshalPKCS8PrivateKey(c.key)
		if err != nil {
			t.Fatal(err)
		}
		entry := keystore.PrivateKeyEntry{CreationTime: now, PrivateKey: der}
		for _, cert := range c.chain {
			entry.CertificateChain = append(entry.CertificateChain, keystore.Certificate{Type: "X.509", Content: cert.Raw})
		}
		if err := ks.SetPrivateKeyEntry("key"+string(rune('a'+i)), entry, []byte(keyPassword)); err != nil {
			t.Fatal(err)
		}
	}
	for i, ca := range cas {
		entry := keystore.TrustedCertificateEntry{CreationTime: now, Certificate: keystore.Certificate{Type: "X.509", Content: ca.cert.Raw}}
		if err := ks.SetTrustedCertificateEntry("ca"+string(rune('a'+i)), entry); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if err := ks.Store(&buf, []byte(storePassword)); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func TestJKSStores(t *testing.T) {
	ca := newCA(t, "ca")
	leaf := leafOf(t, ca, "leaf")
	jks := goJKS(t, "changeit", "changeit", []*testCert{leaf}, []*testCert{ca})
	pw := map[string]string{"ssl.keyStore.password": "changeit", "ssl.trustStore.password": "changeit"}
	if _, err := loadKeyStore(t, "ks.jks", jks, pw); err != nil {
		t.Fatal(err)
	}
	// Java 9+ reads a JKS file named as PKCS12 by its contents.
	if _, err := loadKeyStore(t, "ks.p12", jks, pw); err != nil {
		t.Fatal(err)
	}
	src, err := loadTrustStore(t, "trust.jks", jks, pw)
	if err != nil {
		t.Fatal(err)
	}
	if !src.cur.Load().roots.Equal(poolOf(ca)) {
		t.Error("the trust store is not exactly the CA; key entries must not count")
	}
	_, err = loadKeyStore(t, "ks.jks", jks, map[string]string{"ssl.keyStore.password": "wrong!"})
	wantErr(t, err, ErrStore, "wrong password", "ssl.keyStore.password")
	_, err = loadKeyStore(t, "ks.jks", jks[:len(jks)-30], pw)
	wantErr(t, err, ErrStore, "truncated")
	_, err = loadKeyStore(t, "ks.jks", jks, map[string]string{"ssl.keyStore.password": "changeit", "ssl.keyStore.type": "PEM"})
	wantErr(t, err, ErrStore, "holds no private key")

	other := goJKS(t, "changeit", "another", []*testCert{leaf}, nil)
	_, err = loadKeyStore(t, "ks.jks", other, pw)
	wantErr(t, err, ErrStore, "keytool -keypasswd")

	onlyCA := goJKS(t, "changeit", "", nil, []*testCert{ca})
	_, err = loadKeyStore(t, "ks.jks", onlyCA, pw)
	wantErr(t, err, ErrStore, "holds no private key")
	_, err = loadTrustStore(t, "trust.jks", goJKS(t, "changeit", "changeit", []*testCert{leaf}, nil), pw)
	wantErr(t, err, ErrStore, "holds no trusted certificate")

	two := goJKS(t, "changeit", "changeit", []*testCert{leaf, leafOf(t, ca, "second")}, nil)
	src, err = loadKeyStore(t, "ks.jks", two, pw)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(src.cur.Load().certs); n != 2 {
		t.Errorf("%d certificates, want both key entries", n)
	}
}

func TestJKSPasswordCharacters(t *testing.T) {
	c := leafOf(t, newCA(t, "ca"), "leaf")
	// keystore-go sends each password byte as the UTF-16 unit (0, b): given
	// the Latin-1 bytes it writes what Java writes for "pässwört".
	jks := goJKS(t, "p\xe4ssw\xf6rt", "p\xe4ssw\xf6rt", []*testCert{c}, nil)
	if _, err := loadKeyStore(t, "ks.jks", jks, map[string]string{"ssl.keyStore.password": "pässwört"}); err != nil {
		t.Fatalf("Latin-1 password: %v", err)
	}
	_, err := loadKeyStore(t, "ks.jks", jks, map[string]string{"ssl.keyStore.password": "пароль"})
	wantErr(t, err, ErrStore, "Latin-1", "PKCS12")
}

// Stores made by Java's own keytool load as they are.
func TestKeytoolStores(t *testing.T) {
	keytool := requireJava(t, "keytool")
	dir := t.TempDir()
	ca := newCA(t, "keytool-ca")
	caFile := writeFile(t, dir, "ca.pem", pemCert(ca.cert))
	server := leafOf(t, ca, "server")
	client := leafOf(t, ca, "client")
	kt := func(args ...string) { run(t, keytool, args...) }
	storeExt := map[string]string{"JKS": ".jks", "PKCS12": ".p12"}
	for _, c := range []struct {
		cert *testCert
		name string
	}{{server, "server"}, {client, "client"}} {
		p12, err := pkcs12.Modern.Encode(c.cert.key, c.cert.cert, []*x509.Certificate{ca.cert}, "changeit")
		if err != nil {
			t.Fatal(err)
		}
		src := writeFile(t, dir, c.name+"-go.p12", p12)
		for typ, ext := range storeExt {
			kt("-importkeystore", "-noprompt", "-srckeystore", src, "-srcstoretype", "PKCS12", "-srcstorepass", "changeit",
				"-destkeystore", filepath.Join(dir, c.name+ext), "-deststoretype", typ,
				"-deststorepass", "changeit", "-destkeypass", "changeit")
		}
	}
	for typ, ext := range storeExt {
		kt("-importcert", "-noprompt", "-alias", "ca", "-file", caFile,
			"-keystore", filepath.Join(dir, "trust"+ext), "-storetype", typ, "-storepass", "changeit")
	}
	// A self-signed key pair generated by keytool itself.
	kt("-genkeypair", "-alias", "gen", "-keyalg", "EC", "-groupname", "secp256r1", "-dname", "CN=localhost, OU=ops, O=Example",
		"-ext", "SAN=dns:localhost,ip:127.0.0.1", "-validity", "2",
		"-keystore", filepath.Join(dir, "gen.jks"), "-storetype", "JKS", "-storepass", "changeit", "-keypass", "changeit")
	kt("-exportcert", "-rfc", "-alias", "gen", "-keystore", filepath.Join(dir, "gen.jks"), "-storepass", "changeit", "-file", filepath.Join(dir, "gen.pem"))

	source := func(prefix, key, trust string, extra map[string]string) *Source {
		keys := map[string]string{
			prefix + "keyStore.location": filepath.Join(dir, key), prefix + "keyStore.password": "changeit",
			prefix + "trustStore.location": filepath.Join(dir, trust), prefix + "trustStore.password": "changeit",
		}
		for k, v := range extra {
			keys[k] = v
		}
		src, err := NewSource(mustRead(t, prefix, keys), discardLog())
		if err != nil {
			t.Fatalf("%s with %s: %v", key, trust, err)
		}
		return src
	}
	for _, tc := range []struct{ serverKS, serverTS, clientKS, clientTS string }{
		{"server.jks", "trust.jks", "client.p12", "trust.p12"},
		{"server.p12", "trust.p12", "client.jks", "trust.jks"},
	} {
		t.Run(tc.serverKS, func(t *testing.T) {
			srv := source(QuorumPrefix, tc.serverKS, tc.serverTS, nil)
			cli := source(QuorumPrefix, tc.clientKS, tc.clientTS, nil)
			r := handshake(t, srv.ServerConfig(), cli.ClientConfig("localhost"))
			if !r.ok() {
				t.Fatalf("handshake: server %v, client %v", r.serverErr, r.clientErr)
			}
			if got := SubjectDN(r.server.PeerCertificates[0]); got != "CN=client" {
				t.Errorf("client DN %q", got)
			}
		})
	}
	t.Run("keytool -genkeypair", func(t *testing.T) {
		srv := source(ClientPrefix, "gen.jks", "gen.pem", map[string]string{"ssl.clientAuth": "none"})
		cli := source(ClientPrefix, "client.jks", "gen.pem", nil)
		r := handshake(t, srv.ServerConfig(), cli.ClientConfig("localhost"))
		if !r.ok() {
			t.Fatalf("handshake: server %v, client %v", r.serverErr, r.clientErr)
		}
		if got := SubjectDN(r.client.PeerCertificates[0]); got != "CN=localhost,OU=ops,O=Example" {
			t.Errorf("server DN %q", got)
		}
	})
}
