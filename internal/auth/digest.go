package auth

import (
	"crypto/md5"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha3"
	"crypto/sha512"
	"encoding/base64"
	"fmt"
	"hash"
	"maps"
	"slices"
	"strings"
)

// DigestAlg is the hash of the digest scheme
// (zookeeper.DigestAuthenticationProvider.digestAlg), named as Java's
// MessageDigest names it. The zero DigestAlg is SHA1. DigestAlg values are
// comparable.
type DigestAlg struct{ name string }

// SHA1 is ZooKeeper's default digest algorithm.
var SHA1 = DigestAlg{"SHA1"}

// digestAlgs are the algorithms every Java runtime provides without an
// extra security provider, by the canonical names of Java's standard
// algorithm list; lookups ignore case and accept Java's aliases.
var digestAlgs = map[string]func() hash.Hash{
	"MD5":         md5.New,
	"SHA1":        sha1.New,
	"SHA-224":     sha256.New224,
	"SHA-256":     sha256.New,
	"SHA-384":     sha512.New384,
	"SHA-512":     sha512.New,
	"SHA-512/224": sha512.New512_224,
	"SHA-512/256": sha512.New512_256,
	"SHA3-224":    func() hash.Hash { return sha3.New224() },
	"SHA3-256":    func() hash.Hash { return sha3.New256() },
	"SHA3-384":    func() hash.Hash { return sha3.New384() },
	"SHA3-512":    func() hash.Hash { return sha3.New512() },
}

// javaDigestAliases maps Java's aliases to canonical names.
var javaDigestAliases = map[string]string{"SHA": "SHA1", "SHA-1": "SHA1", "SHA224": "SHA-224",
	"SHA256": "SHA-256", "SHA384": "SHA-384", "SHA512": "SHA-512"}

// ParseDigestAlg returns the algorithm Java's MessageDigest.getInstance
// would return for name. Algorithms that need an extra Java security
// provider (RipeMD160 through BouncyCastle, say) are an error: a server
// that hashed with another algorithm than the ensemble's would lock its
// users out.
func ParseDigestAlg(name string) (DigestAlg, error) {
	up := strings.ToUpper(strings.TrimSpace(name))
	if canon, ok := javaDigestAliases[up]; ok {
		up = canon
	}
	if _, ok := digestAlgs[up]; ok {
		return DigestAlg{up}, nil
	}
	names := slices.Sorted(maps.Keys(digestAlgs))
	return DigestAlg{}, fmt.Errorf("digest algorithm %q is not available (choose one of %s)", name, strings.Join(names, ", "))
}

// String returns the algorithm's Java name.
func (a DigestAlg) String() string {
	if a.name == "" {
		return SHA1.name
	}
	return a.name
}

// ID returns the id the digest scheme gives to an addauth of
// "user:password": the user, ':', and the standard base64 of the hash of
// "user:password". The user is everything before the first ':'; a value
// without ':' hashes whole and keeps its whole text as the user, as
// ZooKeeper's DigestAuthenticationProvider does.
func (a DigestAlg) ID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	h := digestAlgs[a.String()]()
	h.Write([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(h.Sum(nil))
}

// DigestID is SHA1.ID: the id under ZooKeeper's default algorithm.
// DigestID("super:test") is "super:D/InIHSb7yEEbrWz8b9l71RjZJU=".
func DigestID(userPassword string) string { return SHA1.ID(userPassword) }

// UserName is the user whoAmI reports for an auth id: the part before ':'
// for digest, the id itself for ip, sasl, x509 and other schemes, and ""
// for super (which has no provider in ZooKeeper).
func UserName(scheme, id string) string {
	switch scheme {
	case "digest":
		user, _, _ := strings.Cut(id, ":")
		return user
	case "super":
		return ""
	default:
		return id
	}
}
