package tlsconf

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/pbkdf2"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/x509/pkix"
	"encoding/asn1"
	"errors"
	"fmt"
	"hash"
)

// Encrypted PKCS#8 keys (RFC 5208, RFC 8018) as Java's
// EncryptedPrivateKeyInfo decrypts them for ZooKeeper's PEM key stores:
//
//	EncryptedPrivateKeyInfo ::= SEQUENCE {
//	    encryptionAlgorithm  AlgorithmIdentifier,  -- PBES2
//	    encryptedData        OCTET STRING }
//	PBES2-params ::= SEQUENCE {
//	    keyDerivationFunc  AlgorithmIdentifier,    -- PBKDF2
//	    encryptionScheme   AlgorithmIdentifier }   -- AES-CBC, params: IV
//	PBKDF2-params ::= SEQUENCE {
//	    salt            OCTET STRING,
//	    iterationCount  INTEGER,
//	    keyLength       INTEGER OPTIONAL,
//	    prf             AlgorithmIdentifier DEFAULT hmacWithSHA1 }
//
// PBES2 with PBKDF2 (HMAC-SHA-1/224/256/384/512) and AES-128/192/256-CBC is
// what openssl pkcs8 -topk8 writes by default and what Java 17 reads.
// The legacy PBES1 and PKCS#12 schemes (DES, RC2, 3DES) are refused with
// advice to re-encrypt. The standard library parses only plain PKCS#8;
// this is the small remainder, with every length checked.

var (
	oidPBES2      = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2     = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}
	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}
	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
)

// maxPBKDF2Iterations bounds the work of one key derivation (about two
// seconds); real keys use 2048 (openssl) to a few hundred thousand. A
// variable so that fuzzing can lower it.
var maxPBKDF2Iterations = 10_000_000

type encryptedPrivateKeyInfo struct {
	Algo pkix.AlgorithmIdentifier
	Data []byte
}

type pbes2Params struct {
	KDF    pkix.AlgorithmIdentifier
	Scheme pkix.AlgorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                      `asn1:"optional"`
	PRF        pkix.AlgorithmIdentifier `asn1:"optional"`
}

// isEncryptedPKCS8 reports whether der is an EncryptedPrivateKeyInfo
// rather than a plain PrivateKeyInfo (which starts with an INTEGER).
func isEncryptedPKCS8(der []byte) bool {
	var info encryptedPrivateKeyInfo
	rest, err := asn1.Unmarshal(der, &info)
	return err == nil && len(rest) == 0
}

// decryptPKCS8 returns the PrivateKeyInfo inside an EncryptedPrivateKeyInfo.
func decryptPKCS8(der []byte, password string) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, errors.New("the encrypted private key is damaged")
	}
	if !info.Algo.Algorithm.Equal(oidPBES2) {
		return nil, fmt.Errorf("the private key is encrypted with %v, a legacy scheme Warden does not read; re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc", info.Algo.Algorithm)
	}
	var params pbes2Params
	if rest, err := asn1.Unmarshal(info.Algo.Parameters.FullBytes, &params); err != nil || len(rest) > 0 {
		return nil, errors.New("the encrypted private key has damaged PBES2 parameters")
	}
	if !params.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, fmt.Errorf("the private key's key derivation %v is not PBKDF2; re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc", params.KDF.Algorithm)
	}
	var kdf pbkdf2Params
	if rest, err := asn1.Unmarshal(params.KDF.Parameters.FullBytes, &kdf); err != nil || len(rest) > 0 {
		return nil, errors.New("the encrypted private key has damaged PBKDF2 parameters")
	}
	if kdf.Iterations < 1 || kdf.Iterations > maxPBKDF2Iterations {
		return nil, fmt.Errorf("the private key's PBKDF2 asks for %d iterations; Warden accepts 1 to %d", kdf.Iterations, maxPBKDF2Iterations)
	}
	var prf func() hash.Hash
	switch a := kdf.PRF.Algorithm; {
	case len(a) == 0 || a.Equal(oidHMACSHA1):
		prf = sha1.New
	case a.Equal(oidHMACSHA224):
		prf = sha256.New224
	case a.Equal(oidHMACSHA256):
		prf = sha256.New
	case a.Equal(oidHMACSHA384):
		prf = sha512.New384
	case a.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("the private key's PBKDF2 uses PRF %v; re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc", a)
	}
	var keyLen int
	switch a := params.Scheme.Algorithm; {
	case a.Equal(oidAES128CBC):
		keyLen = 16
	case a.Equal(oidAES192CBC):
		keyLen = 24
	case a.Equal(oidAES256CBC):
		keyLen = 32
	default:
		return nil, fmt.Errorf("the private key is encrypted with cipher %v; re-encrypt it with openssl pkcs8 -topk8 -v2 aes-256-cbc", a)
	}
	if kdf.KeyLength != 0 && kdf.KeyLength != keyLen {
		return nil, errors.New("the encrypted private key's PBKDF2 key length does not fit its cipher")
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(params.Scheme.Parameters.FullBytes, &iv); err != nil || len(rest) > 0 || len(iv) != aes.BlockSize {
		return nil, errors.New("the encrypted private key has a damaged IV")
	}
	if len(info.Data) == 0 || len(info.Data)%aes.BlockSize != 0 {
		return nil, errors.New("the encrypted private key is damaged (its length is not a whole number of AES blocks)")
	}
	key, err := pbkdf2.Key(prf, password, kdf.Salt, kdf.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("deriving the key of the private key: %w", err)
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	plain := make([]byte, len(info.Data))
	cipher.NewCBCDecrypter(block, iv).CryptBlocks(plain, info.Data)
	// PKCS#7 padding; a wrong password leaves random bytes here.
	pad := int(plain[len(plain)-1])
	if pad < 1 || pad > aes.BlockSize || !bytes.Equal(plain[len(plain)-pad:], bytes.Repeat([]byte{byte(pad)}, pad)) {
		return nil, errWrongPassword
	}
	plain = plain[:len(plain)-pad]
	var probe struct {
		Version int
		Algo    pkix.AlgorithmIdentifier
		Key     []byte
	}
	if _, err := asn1.Unmarshal(plain, &probe); err != nil {
		return nil, errWrongPassword
	}
	return plain, nil
}
