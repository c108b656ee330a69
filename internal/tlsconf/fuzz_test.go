package tlsconf

import (
	"bytes"
	"crypto/sha1"
	"crypto/x509"
	"testing"
	"unicode/utf8"

	"software.sslmate.com/src/go-pkcs12"
)

// The store parsers read files an operator names; whatever the bytes, they
// must return an error, never panic or run away. Run one with, e.g.:
//
//	go test -run '^$' -fuzz '^FuzzLoadJKS$' -fuzztime 20s ./internal/tlsconf/

const fuzzPassword = "changeit"

// checkEntries checks what a key store parser returned.
func checkEntries(t *testing.T, entries []keyEntry, err error) {
	if err != nil {
		return
	}
	if len(entries) == 0 {
		t.Fatal("no entries and no error")
	}
	for _, e := range entries {
		if e.key == nil || len(e.chain) == 0 {
			t.Fatalf("entry without key or chain: %+v", e)
		}
	}
}

func checkTrusted(t *testing.T, certs []*x509.Certificate, err error) {
	if err == nil && len(certs) == 0 {
		t.Fatal("no certificates and no error")
	}
}

// fixJKSDigest rewrites the digest of a JKS file so that it fits the
// password: the fuzzer then reaches the entries behind the integrity check.
func fixJKSDigest(data []byte, password string) []byte {
	body, err := checkJKS(data)
	if err != nil {
		return nil
	}
	h := sha1.New()
	for _, c := range []byte(password) {
		h.Write([]byte{0, c})
	}
	h.Write([]byte("Mighty Aphrodite"))
	h.Write(data[:body])
	out := append([]byte(nil), data[:body]...)
	out = h.Sum(out)
	return append(out, data[body+sha1.Size:]...)
}

func FuzzLoadJKS(f *testing.F) {
	ca := newCA(f, "ca")
	leaf := leafOf(f, ca, "leaf")
	seed := goJKS(f, fuzzPassword, fuzzPassword, []*testCert{leaf}, []*testCert{ca})
	if !bytes.Equal(fixJKSDigest(seed, fuzzPassword), seed) {
		f.Fatal("fixJKSDigest changed a valid store")
	}
	f.Add(seed)
	f.Add(goJKS(f, fuzzPassword, fuzzPassword, nil, []*testCert{ca}))
	f.Add(goJKS(f, fuzzPassword, "another", []*testCert{leaf}, nil))
	f.Add([]byte{0xfe, 0xed, 0xfe, 0xed, 0, 0, 0, 2, 0xff, 0xff, 0xff, 0xff})
	f.Fuzz(func(t *testing.T, data []byte) {
		for _, d := range [][]byte{data, fixJKSDigest(data, fuzzPassword)} {
			entries, err := parseJKSKeys(d, fuzzPassword)
			checkEntries(t, entries, err)
			certs, err := parseJKSTrust(d, fuzzPassword)
			checkTrusted(t, certs, err)
		}
	})
}

func FuzzLoadPKCS12(f *testing.F) {
	defer func(n int) { maxPKCS12Iterations = n }(maxPKCS12Iterations)
	maxPKCS12Iterations = 20_000 // keep each run short
	ca := newCA(f, "ca")
	leaf := leafOf(f, ca, "leaf")
	// One iteration, so that the fuzzer's runs are cheap.
	for _, enc := range []*pkcs12.Encoder{pkcs12.Modern.WithIterations(1), pkcs12.Legacy.WithIterations(1), pkcs12.LegacyRC2.WithIterations(1)} {
		p12, err := enc.Encode(leaf.key, leaf.cert, []*x509.Certificate{ca.cert}, fuzzPassword)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(p12)
		trust, err := enc.EncodeTrustStore([]*x509.Certificate{ca.cert}, fuzzPassword)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(trust)
	}
	f.Add(readTestdata(f, "trust-openssl.p12"))
	f.Fuzz(func(t *testing.T, data []byte) {
		// With a password a MAC is required, so every key derivation the
		// fuzzer can reach is bounded by maxPKCS12Iterations.
		entries, err := parsePKCS12Keys(data, fuzzPassword)
		checkEntries(t, entries, err)
		certs, err := parsePKCS12Trust(data, fuzzPassword)
		checkTrusted(t, certs, err)
	})
}

func FuzzLoadPEM(f *testing.F) {
	defer func(n int) { maxPBKDF2Iterations = n }(maxPBKDF2Iterations)
	maxPBKDF2Iterations = 20_000 // keep each run short
	ca := newCA(f, "ca")
	leaf := leafOf(f, ca, "leaf")
	f.Add(pemKeyStore(f, leaf), "")
	f.Add(pemTrust(ca, leaf), "")
	cert := pemCert(testdataKey(f).cert)
	for _, name := range []string{"key-aes256-iter1.pem", "key-aes128-sha1.pem", "key-pbes1.pem"} {
		f.Add(append(readTestdata(f, name), cert...), testdataPassword)
	}
	for _, name := range []string{"key-sec1.pem", "key-pkcs1.pem", "key-pkcs8.pem"} {
		f.Add(append(readTestdata(f, name), cert...), "")
	}
	f.Fuzz(func(t *testing.T, data []byte, password string) {
		entries, err := parsePEMKeys(data, password)
		checkEntries(t, entries, err)
		certs, err := parsePEMTrust(data)
		checkTrusted(t, certs, err)
	})
}

// FuzzSubjectDN feeds arbitrary subjects and values to the RFC 2253
// writer and the Java UTF-8 decoder.
func FuzzSubjectDN(f *testing.F) {
	for _, tc := range subjectCases {
		f.Add(rawSubject(f, tc.rdns...))
	}
	f.Add([]byte("ab\xe6\x97\xf0\x90\x80\xed\xa0\x80\xc0"))
	f.Fuzz(func(t *testing.T, data []byte) {
		if s := javaUTF8(data); !utf8.ValidString(s) {
			t.Fatalf("javaUTF8(%x) = %q is not valid UTF-8", data, s)
		}
		if dn, ok := rfc2253(data); ok && !utf8.ValidString(dn) {
			t.Fatalf("rfc2253(%x) = %q is not valid UTF-8", data, dn)
		}
	})
}
