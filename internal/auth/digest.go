package auth

import (
	"crypto/sha1"
	"encoding/base64"
	"strings"
)

// DigestID returns the id the digest scheme gives to an addauth of
// "user:password": the user, ':', and the standard base64 of
// SHA1("user:password"). DigestID("super:test") is
// "super:D/InIHSb7yEEbrWz8b9l71RjZJU=". The user is everything before the
// first ':'; a value without ':' hashes whole and keeps its whole text as
// the user, as ZooKeeper's DigestAuthenticationProvider does.
func DigestID(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

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
