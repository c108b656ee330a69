package tlsconf

import (
	"bytes"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"
)

// ErrStore is wrapped by every error about loading a key or trust store:
// a missing file, a wrong password, a store without a private key, an
// expired certificate. The message names the file, the key that names it
// and what to fix.
var ErrStore = errors.New("tlsconf: cannot load key or trust store")

// Problems the format parsers report; storeError adds the file, the key
// and what to do.
var (
	errWrongPassword = errors.New("wrong password, or the file is damaged")
	errNoKey         = errors.New("holds no private key")
	errNoCert        = errors.New("holds no certificate")
	errNoTrusted     = errors.New("holds no trusted certificate")
	errNeedPassword  = errors.New("the private key is encrypted but no password is set")
	errKeyNotSecret  = errors.New("a password is set but the private key is not encrypted (ZooKeeper reads an encrypted PKCS#8 key then)")
	errNotStore      = errors.New("is not a store of this type")
)

// storeError is a store that did not load.
type storeError struct {
	what string // "key store" or "trust store"
	path string
	key  string // the zoo.cfg key naming the file
	err  error
	hint string
}

func (e *storeError) Error() string {
	msg := fmt.Sprintf("tlsconf: %s %s (%s): %v", e.what, e.path, e.key, e.err)
	if e.hint != "" {
		msg += ": " + e.hint
	}
	return msg
}

func (e *storeError) Unwrap() []error { return []error{ErrStore, e.err} }

// keyEntry is a private key with its certificate chain, leaf first.
type keyEntry struct {
	key   crypto.Signer
	chain []*x509.Certificate
}

// storeFile is one store's bytes and password as read from disk.
type storeFile struct {
	data     []byte
	password string
}

// readStore reads a store file and its password (from PasswordPath when
// set). On error, field says which file failed: "location" or
// "passwordPath".
func readStore(st Store) (f storeFile, field string, err error) {
	data, err := os.ReadFile(st.Location)
	if err != nil {
		return f, "location", err
	}
	f.data = data
	f.password = st.Password
	if st.PasswordPath != "" {
		pw, err := os.ReadFile(st.PasswordPath)
		if err != nil {
			return f, "passwordPath", err
		}
		// SecretUtils.readSecret drops one trailing line separator.
		f.password = strings.TrimSuffix(string(pw), "\n")
	}
	return f, "", nil
}

// parseKeyStore returns the key entries of a key store.
func parseKeyStore(typ StoreType, data []byte, password string) ([]keyEntry, error) {
	switch sniff(typ, data) {
	case StoreJKS:
		return parseJKSKeys(data, password)
	case StorePKCS12:
		return parsePKCS12Keys(data, password)
	case StorePEM:
		return parsePEMKeys(data, password)
	}
	return nil, fmt.Errorf("unknown store type %q", typ)
}

// parseTrustStore returns the trusted certificates of a trust store.
func parseTrustStore(typ StoreType, data []byte, password string) ([]*x509.Certificate, error) {
	switch sniff(typ, data) {
	case StoreJKS:
		return parseJKSTrust(data, password)
	case StorePKCS12:
		return parsePKCS12Trust(data, password)
	case StorePEM:
		return parsePEMTrust(data)
	}
	return nil, fmt.Errorf("unknown store type %q", typ)
}

// jksMagic starts every JKS file.
var jksMagic = []byte{0xfe, 0xed, 0xfe, 0xed}

// sniff returns the format to parse data as. Java 9+ reads JKS and PKCS12
// alike whichever of the two is named (keystore.type.compat), so a JKS
// file named .p12, or the reverse, loads in ZooKeeper; Warden does the
// same. PEM is taken as named.
func sniff(typ StoreType, data []byte) StoreType {
	if typ == StoreJKS || typ == StorePKCS12 {
		if bytes.HasPrefix(data, jksMagic) {
			return StoreJKS
		}
		if len(data) > 0 && data[0] == 0x30 { // a DER SEQUENCE
			return StorePKCS12
		}
	}
	return typ
}

// certificate turns a key entry into a tls.Certificate after checking that
// the leaf belongs to the key and is valid at now.
func certificate(e keyEntry, now time.Time) (tls.Certificate, error) {
	if len(e.chain) == 0 {
		return tls.Certificate{}, errNoCert
	}
	leaf := e.chain[0]
	pub, ok := e.key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok || !pub.Equal(leaf.PublicKey) {
		return tls.Certificate{}, fmt.Errorf("the certificate %q does not belong to the private key", SubjectDN(leaf))
	}
	if now.After(leaf.NotAfter) {
		return tls.Certificate{}, fmt.Errorf("the certificate %q expired at %s; renew it", SubjectDN(leaf), leaf.NotAfter.UTC().Format(time.RFC3339))
	}
	if now.Before(leaf.NotBefore) {
		return tls.Certificate{}, fmt.Errorf("the certificate %q is not valid before %s; check the clock or reissue it", SubjectDN(leaf), leaf.NotBefore.UTC().Format(time.RFC3339))
	}
	c := tls.Certificate{PrivateKey: e.key, Leaf: leaf}
	for _, cert := range e.chain {
		c.Certificate = append(c.Certificate, cert.Raw)
	}
	return c, nil
}

// matchKey picks, among certs, the certificate of key and orders the chain
// after it by issuer (certificates not on the chain are left out). It is
// used for PKCS12 and PEM stores, whose certificates come in file order.
func matchKey(key crypto.Signer, certs []*x509.Certificate) ([]*x509.Certificate, error) {
	if len(certs) == 0 {
		return nil, errNoCert
	}
	pub, ok := key.Public().(interface{ Equal(crypto.PublicKey) bool })
	if !ok {
		return nil, fmt.Errorf("unsupported private key type %T", key)
	}
	var leaf *x509.Certificate
	for _, c := range certs {
		if pub.Equal(c.PublicKey) {
			leaf = c
			break
		}
	}
	if leaf == nil {
		return nil, fmt.Errorf("none of its %d certificates belongs to the private key", len(certs))
	}
	chain := []*x509.Certificate{leaf}
	used := map[*x509.Certificate]bool{leaf: true}
	for cur := leaf; !bytes.Equal(cur.RawIssuer, cur.RawSubject); {
		var next *x509.Certificate
		for _, c := range certs {
			if !used[c] && bytes.Equal(c.RawSubject, cur.RawIssuer) && cur.CheckSignatureFrom(c) == nil {
				next = c
				break
			}
		}
		if next == nil {
			break
		}
		chain = append(chain, next)
		used[next] = true
		cur = next
	}
	return chain, nil
}

// signer checks that a parsed private key can sign TLS handshakes.
func signer(key any) (crypto.Signer, error) {
	s, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("unsupported private key type %T: Go's TLS uses RSA, ECDSA and Ed25519 keys", key)
	}
	return s, nil
}
