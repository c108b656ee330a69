package tlsconf

import (
	"bytes"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"

	keystore "github.com/pavlo-v-chernykh/keystore-go/v4"
)

// JKS layout (big-endian), as Java's JavaKeyStore writes it:
//
//	+-----------+---------+-------+-- count × entry --+--------------------+
//	| FEEDFEED  | version | count |   ...            | SHA-1 digest (20)  |
//	+-----------+---------+-------+------------------+--------------------+
//	entry:   tag u32 (1 key, 2 trusted cert) | alias (u16 len + UTF) | time u64
//	tag 1:   key (u32 len + EncryptedPrivateKeyInfo DER) | n u32 | n × cert
//	tag 2:   cert
//	cert:    [version 2: type (u16 len + UTF, "X.509")] | u32 len + DER
//
// The digest is SHA-1(password as UTF-16BE | "Mighty Aphrodite" | all bytes
// before it). A key is protected with the same password by Sun's
// KeyProtector (salt 20 | XOR-encrypted PKCS#8 | SHA-1 check 20).
//
// keystore-go reads it. checkJKS first walks the layout so that no length
// field can make keystore-go allocate more than the file holds or slice a
// key blob shorter than its salt and check value.

// jksKeyProtectorOverhead is the salt and check digest around a protected
// key.
const jksKeyProtectorOverhead = 40

// checkJKS walks a JKS file and returns the length of what its digest
// covers.
func checkJKS(data []byte) (int, error) {
	r := jksWalker{b: data}
	if !bytes.Equal(r.next(4), jksMagic) {
		return 0, errNotStore
	}
	version := r.u32()
	if version != 1 && version != 2 {
		return 0, fmt.Errorf("unknown JKS version %d", version)
	}
	count := r.u32()
	for i := uint32(0); i < count && r.err == nil; i++ {
		tag := r.u32()
		r.next(int(r.u16())) // alias
		r.next(8)            // creation time
		switch tag {
		case 1:
			if err := checkProtectedKey(r.next(int(r.u32()))); err != nil && r.err == nil {
				return 0, err
			}
			n := r.u32()
			for j := uint32(0); j < n && r.err == nil; j++ {
				r.cert(version)
			}
		case 2:
			r.cert(version)
		default:
			if r.err == nil {
				return 0, fmt.Errorf("JKS entry %d has unknown tag %d (a JCEKS store? ZooKeeper does not offer JCEKS)", i, tag)
			}
		}
	}
	body := len(data) - len(r.b)
	r.next(20) // digest
	if r.err != nil {
		return 0, r.err
	}
	return body, nil
}

// checkProtectedKey checks the EncryptedPrivateKeyInfo of a JKS key entry.
func checkProtectedKey(der []byte) error {
	var info struct {
		Algo pkix.AlgorithmIdentifier
		Key  []byte
	}
	rest, err := asn1.Unmarshal(der, &info)
	if err != nil || len(rest) > 0 || len(info.Key) < jksKeyProtectorOverhead {
		return errors.New("a JKS key entry is damaged")
	}
	return nil
}

// jksWalker reads the JKS layout, remembering the first overrun.
type jksWalker struct {
	b   []byte
	err error
}

func (w *jksWalker) next(n int) []byte {
	if w.err != nil {
		return nil
	}
	if n < 0 || n > len(w.b) {
		w.err = errors.New("the JKS file is truncated or damaged")
		return nil
	}
	p := w.b[:n]
	w.b = w.b[n:]
	return p
}

func (w *jksWalker) u16() uint16 {
	if p := w.next(2); p != nil {
		return binary.BigEndian.Uint16(p)
	}
	return 0
}

func (w *jksWalker) u32() uint32 {
	if p := w.next(4); p != nil {
		return binary.BigEndian.Uint32(p)
	}
	return 0
}

func (w *jksWalker) cert(version uint32) {
	if version == 2 {
		w.next(int(w.u16())) // certificate type
	}
	w.next(int(w.u32()))
}

// jksPassword encodes password for keystore-go, which sends each byte b
// as the UTF-16 unit (0, b), as Java does for each char. That is exact for
// Latin-1; other characters cannot be expressed.
func jksPassword(password string) ([]byte, error) {
	var p []byte
	for _, r := range password {
		if r > 0xff {
			return nil, errors.New("the password has characters beyond Latin-1, which Warden cannot use for JKS; convert the store to PKCS12")
		}
		p = append(p, byte(r))
	}
	return p, nil
}

// loadJKS checks and loads a JKS file.
func loadJKS(data []byte, password string) (keystore.KeyStore, []byte, error) {
	if _, err := checkJKS(data); err != nil {
		return keystore.KeyStore{}, nil, err
	}
	pw, err := jksPassword(password)
	if err != nil {
		return keystore.KeyStore{}, nil, err
	}
	ks := keystore.New(keystore.WithOrderedAliases(), keystore.WithCaseExactAliases())
	if err := ks.Load(bytes.NewReader(data), pw); err != nil {
		if strings.Contains(err.Error(), "invalid digest") {
			return keystore.KeyStore{}, nil, errWrongPassword
		}
		return keystore.KeyStore{}, nil, fmt.Errorf("not a valid JKS file: %w", err)
	}
	return ks, pw, nil
}

func jksCert(c keystore.Certificate) (*x509.Certificate, error) {
	if c.Type != "X.509" && c.Type != "X509" {
		return nil, fmt.Errorf("holds a certificate of type %q; only X.509 is used", c.Type)
	}
	return x509.ParseCertificate(c.Content)
}

// parseJKSKeys returns the private key entries, in alias order. Java's
// key manager opens every key with the store password, so Warden does too.
func parseJKSKeys(data []byte, password string) ([]keyEntry, error) {
	ks, pw, err := loadJKS(data, password)
	if err != nil {
		return nil, err
	}
	var entries []keyEntry
	for _, alias := range ks.Aliases() {
		if !ks.IsPrivateKeyEntry(alias) {
			continue
		}
		pke, err := ks.GetPrivateKeyEntry(alias, pw)
		if err != nil {
			return nil, fmt.Errorf("the key of entry %q does not open with the store password; Java's key manager needs the key password equal to the store password (keytool -keypasswd)", alias)
		}
		parsed, err := x509.ParsePKCS8PrivateKey(pke.PrivateKey)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		key, err := signer(parsed)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		e := keyEntry{key: key}
		for _, c := range pke.CertificateChain {
			cert, err := jksCert(c)
			if err != nil {
				return nil, fmt.Errorf("entry %q: %w", alias, err)
			}
			e.chain = append(e.chain, cert)
		}
		if len(e.chain) == 0 {
			return nil, fmt.Errorf("entry %q: %w", alias, errNoCert)
		}
		entries = append(entries, e)
	}
	if len(entries) == 0 {
		return nil, errNoKey
	}
	return entries, nil
}

// parseJKSTrust returns the trusted certificate entries. Key entries are
// not trust anchors in Java (PKIXParameters takes certificate entries
// only), so their chains are left out.
func parseJKSTrust(data []byte, password string) ([]*x509.Certificate, error) {
	ks, _, err := loadJKS(data, password)
	if err != nil {
		return nil, err
	}
	var certs []*x509.Certificate
	for _, alias := range ks.Aliases() {
		if !ks.IsTrustedCertificateEntry(alias) {
			continue
		}
		tce, err := ks.GetTrustedCertificateEntry(alias)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		cert, err := jksCert(tce.Certificate)
		if err != nil {
			return nil, fmt.Errorf("entry %q: %w", alias, err)
		}
		if !slices.ContainsFunc(certs, cert.Equal) {
			certs = append(certs, cert)
		}
	}
	if len(certs) == 0 {
		return nil, errNoTrusted
	}
	return certs, nil
}
