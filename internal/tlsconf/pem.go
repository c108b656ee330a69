package tlsconf

import (
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"slices"
	"strings"
)

// PEM stores are read as ZooKeeper's PemReader reads them:
//
//   - a key store is one file holding the private key and the certificate
//     chain; the first "… PRIVATE KEY" block is the key, every
//     "… CERTIFICATE" block a certificate;
//   - the key is PKCS#8: "PRIVATE KEY" when no password is set,
//     "ENCRYPTED PRIVATE KEY" (PBES2) when <prefix>keyStore.password is set;
//     PKCS#1 ("RSA PRIVATE KEY") and SEC 1 ("EC PRIVATE KEY") keys are
//     refused, as ZooKeeper refuses them;
//   - a trust store is every certificate in the file; its password is
//     not used.

// pemCertificates returns the certificates of the "CERTIFICATE" blocks
// (also "X509 CERTIFICATE" and OpenSSL's "TRUSTED CERTIFICATE", whose
// trust settings after the certificate Java ignores, and so does Warden).
func pemCertificates(data []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for n := 1; ; n++ {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return certs, nil
		}
		if !strings.HasSuffix(block.Type, "CERTIFICATE") {
			continue
		}
		der := block.Bytes
		if block.Type == "TRUSTED CERTIFICATE" {
			var first asn1.RawValue
			if _, err := asn1.Unmarshal(der, &first); err != nil {
				return nil, fmt.Errorf("PEM block %d (%s): %w", n, block.Type, err)
			}
			der = first.FullBytes
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			return nil, fmt.Errorf("PEM block %d (%s): %w", n, block.Type, err)
		}
		certs = append(certs, cert)
	}
}

// pemPrivateKey returns the first "… PRIVATE KEY" block.
func pemPrivateKey(data []byte) *pem.Block {
	for {
		var block *pem.Block
		block, data = pem.Decode(data)
		if block == nil {
			return nil
		}
		if strings.HasSuffix(block.Type, "PRIVATE KEY") {
			return block
		}
	}
}

func parsePEMKeys(data []byte, password string) ([]keyEntry, error) {
	block := pemPrivateKey(data)
	if block == nil {
		return nil, errNoKey
	}
	switch {
	case block.Headers["Proc-Type"] != "":
		return nil, errors.New("the private key uses OpenSSL's legacy PEM encryption, which ZooKeeper does not read; convert it to encrypted PKCS#8 (openssl pkcs8 -topk8 -v2 aes-256-cbc)")
	case block.Type == "RSA PRIVATE KEY" || block.Type == "EC PRIVATE KEY":
		return nil, fmt.Errorf("the private key is a %s (PKCS#1/SEC 1); ZooKeeper reads PKCS#8 keys only: convert it with openssl pkcs8 -topk8 (add -nocrypt when no password is set)", block.Type)
	case block.Type != "PRIVATE KEY" && block.Type != "ENCRYPTED PRIVATE KEY":
		return nil, fmt.Errorf("the private key is a %q block; write a PKCS#8 \"PRIVATE KEY\" or \"ENCRYPTED PRIVATE KEY\"", block.Type)
	}
	var der []byte
	if password == "" {
		if block.Type == "ENCRYPTED PRIVATE KEY" || isEncryptedPKCS8(block.Bytes) {
			return nil, errNeedPassword
		}
		der = block.Bytes
	} else {
		if !isEncryptedPKCS8(block.Bytes) {
			return nil, errKeyNotSecret
		}
		var err error
		if der, err = decryptPKCS8(block.Bytes, password); err != nil {
			return nil, err
		}
	}
	parsed, err := x509.ParsePKCS8PrivateKey(der)
	if err != nil {
		return nil, fmt.Errorf("the private key: %w", err)
	}
	key, err := signer(parsed)
	if err != nil {
		return nil, err
	}
	certs, err := pemCertificates(data)
	if err != nil {
		return nil, err
	}
	chain, err := matchKey(key, certs)
	if err != nil {
		return nil, err
	}
	return []keyEntry{{key: key, chain: chain}}, nil
}

func parsePEMTrust(data []byte) ([]*x509.Certificate, error) {
	certs, err := pemCertificates(data)
	if err != nil {
		return nil, err
	}
	var unique []*x509.Certificate
	for _, c := range certs {
		if !slices.ContainsFunc(unique, c.Equal) {
			unique = append(unique, c)
		}
	}
	if len(unique) == 0 {
		return nil, errNoTrusted
	}
	return unique, nil
}
