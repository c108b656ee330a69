package tlsconf

import (
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"strings"

	"software.sslmate.com/src/go-pkcs12"
)

// maxPKCS12Iterations is Java's PKCS12KeyStore MAX_ITERATION_COUNT: Java
// refuses files whose MAC or encryption asks for more key-derivation
// iterations. Checking the MAC's first also bounds the work a damaged
// file can cause (the rest is read after the MAC is verified). A variable
// so that fuzzing can lower it.
var maxPKCS12Iterations = 5_000_000

// checkPKCS12 reads the outer PFX structure (RFC 7292):
//
//	PFX ::= SEQUENCE { version INTEGER (v3), authSafe ContentInfo,
//	                   macData MacData OPTIONAL }
//	MacData ::= SEQUENCE { mac DigestInfo, macSalt OCTET STRING,
//	                       iterations INTEGER DEFAULT 1 }
//
// and refuses an iteration count above Java's limit before go-pkcs12
// derives the MAC key.
func checkPKCS12(data []byte) error {
	var pfx struct {
		Version  int
		AuthSafe asn1.RawValue
		MacData  struct {
			Mac struct {
				Algorithm pkix.AlgorithmIdentifier
				Digest    []byte
			}
			MacSalt    []byte
			Iterations int `asn1:"optional,default:1"`
		} `asn1:"optional"`
	}
	if _, err := asn1.Unmarshal(data, &pfx); err != nil {
		return fmt.Errorf("not a PKCS12 file: %w", err)
	}
	if pfx.MacData.Iterations > maxPKCS12Iterations || pfx.MacData.Iterations < 0 {
		return fmt.Errorf("the MAC asks for %d iterations, more than Java's limit of %d", pfx.MacData.Iterations, maxPKCS12Iterations)
	}
	return nil
}

// pkcs12Error maps go-pkcs12's errors onto ours.
func pkcs12Error(err error) error {
	if errors.Is(err, pkcs12.ErrIncorrectPassword) || errors.Is(err, pkcs12.ErrDecryption) {
		return errWrongPassword
	}
	return err
}

// parsePKCS12Keys returns the key entry of a PKCS12 key store. go-pkcs12
// reads one private key per file; its certificate is found by key rather
// than by position, and the chain ordered by issuer.
func parsePKCS12Keys(data []byte, password string) ([]keyEntry, error) {
	if err := checkPKCS12(data); err != nil {
		return nil, err
	}
	parsed, leaf, cas, err := pkcs12.DecodeChain(data, password)
	if err != nil {
		switch msg := err.Error(); {
		case strings.Contains(msg, "private key missing"):
			return nil, errNoKey
		case strings.Contains(msg, "certificate missing"):
			return nil, errNoCert
		case strings.Contains(msg, "exactly one key bag"):
			return nil, errors.New("holds more than one private key; Warden reads one per PKCS12 file: keep one (keytool -delete -alias …) or use a JKS store")
		}
		return nil, pkcs12Error(err)
	}
	key, err := signer(parsed)
	if err != nil {
		return nil, err
	}
	chain, err := matchKey(key, append([]*x509.Certificate{leaf}, cas...))
	if err != nil {
		return nil, err
	}
	return []keyEntry{{key: key, chain: chain}}, nil
}

// parsePKCS12Trust returns the trusted certificates of a PKCS12 trust
// store. Java trusts only certificates carrying its trusted-key-usage
// attribute (as keytool -importcert writes); a PKCS12 file made by
// openssl has none, and Java loads it as an empty store.
func parsePKCS12Trust(data []byte, password string) ([]*x509.Certificate, error) {
	if err := checkPKCS12(data); err != nil {
		return nil, err
	}
	certs, err := pkcs12.DecodeTrustStore(data, password)
	if err != nil {
		switch msg := err.Error(); {
		case strings.Contains(msg, "not marked as trusted"):
			return nil, errors.New("holds certificates without Java's trusted-certificate attribute (a PKCS12 file made by openssl?), which Java ignores too; import them with keytool -importcert, or use a PEM trust store")
		case strings.Contains(msg, "only certificate bags"), strings.Contains(msg, "items in the authenticated safe"):
			return nil, errors.New("holds more than trusted certificates (a private key?); Warden reads PKCS12 trust stores holding trusted certificates only: export the CA certificates into a trust store of their own")
		}
		return nil, pkcs12Error(err)
	}
	if len(certs) == 0 {
		return nil, errNoTrusted
	}
	return certs, nil
}
