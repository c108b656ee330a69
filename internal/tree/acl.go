package tree

import (
	"crypto/sha1"
	"encoding/base64"
	"net/netip"
	"strconv"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// Caller is the identity a request runs with: the connection's auth ids in
// the order they were added, e.g. {ip 127.0.0.1}, {digest bob:<hash>},
// {super ""}.
type Caller struct {
	IDs []wire.ID
}

// MatchACL is ZooKeeper's checkACL: it reports whether a caller holding c's
// ids may perform an operation needing any bit of perm on a node whose ACL
// is acl. skipACL (zookeeper.skipACL) and an empty ACL allow everything; a
// "super" id allows everything; otherwise an entry granting a wanted bit
// must be world:anyone or match one of the caller's ids of its scheme
// (digest and x509: equal; sasl: equal or the caller id is "super"; ip:
// address prefix match).
func MatchACL(acl []wire.ACL, perm wire.Perm, c Caller, skipACL bool) bool {
	if skipACL || len(acl) == 0 {
		return true
	}
	for _, id := range c.IDs {
		if id.Scheme == "super" {
			return true
		}
	}
	for _, a := range acl {
		if a.Perms&perm == 0 {
			continue
		}
		if a.ID.Scheme == "world" && a.ID.ID == "anyone" {
			return true
		}
		if !knownScheme(a.ID.Scheme) {
			continue
		}
		for _, id := range c.IDs {
			if id.Scheme == a.ID.Scheme && schemeMatches(id.Scheme, id.ID, a.ID.ID) {
				return true
			}
		}
	}
	return false
}

// knownScheme reports whether a server authentication provider exists for
// scheme (ZooKeeper's ProviderRegistry with the usual providers).
func knownScheme(scheme string) bool {
	switch scheme {
	case "digest", "ip", "sasl", "x509":
		return true
	}
	return false
}

// schemeMatches is the provider's matches(id, aclExpr).
func schemeMatches(scheme, id, expr string) bool {
	switch scheme {
	case "ip":
		return ipMatches(id, expr)
	case "sasl":
		return id == "super" || id == expr
	default:
		return id == expr
	}
}

// authenticatedScheme reports whether the provider of scheme says its ids
// are authenticated identities, so that the "auth" pseudo-scheme expands to
// them (ip is not; super has no provider).
func authenticatedScheme(scheme string) bool {
	switch scheme {
	case "digest", "sasl", "x509":
		return true
	}
	return false
}

// validID is the provider's isValid(id) for a known scheme.
func validID(scheme, id string) bool {
	switch scheme {
	case "digest":
		return javaSplitCount(id, ':') == 2
	case "ip":
		_, _, ok := parseIPACL(id)
		return ok
	case "sasl":
		return validKerberosName(id)
	case "x509":
		return id != ""
	}
	return false
}

// javaSplitCount is len(s.split(sep)) in Java: the number of parts after
// dropping trailing empty parts.
func javaSplitCount(s string, sep byte) int {
	parts := strings.Split(s, string(sep))
	n := len(parts)
	for n > 0 && parts[n-1] == "" {
		n--
	}
	return n
}

// validKerberosName reports whether id parses as a Kerberos principal as
// the sasl provider requires: anything without '@', or
// primary[/instance]@realm with non-empty components free of '/' and '@'.
func validKerberosName(id string) bool {
	at := strings.IndexByte(id, '@')
	if at < 0 {
		return true
	}
	name, realm := id[:at], id[at+1:]
	if realm == "" || strings.ContainsAny(realm, "/@") {
		return false
	}
	primary, instance, hasInstance := strings.Cut(name, "/")
	if primary == "" || (hasInstance && (instance == "" || strings.ContainsRune(instance, '/'))) {
		return false
	}
	return true
}

// parseIPACL parses an ip ACL expression "addr" or "addr/bits" into the
// address bytes (4 for IPv4, 16 for IPv6) and the prefix length.
func parseIPACL(expr string) (addr []byte, bits int, ok bool) {
	a, b, hasBits := strings.Cut(expr, "/")
	addr = parseIP(a)
	if addr == nil {
		return nil, 0, false
	}
	bits = len(addr) * 8
	if hasBits {
		n, err := strconv.Atoi(b)
		if err != nil || n < 0 || n > len(addr)*8 {
			return nil, 0, false
		}
		bits = n
	}
	return addr, bits, true
}

// parseIP parses a dotted-quad IPv4 address the way IPAuthenticationProvider
// does (four decimal parts 0..255, leading zeros allowed) or an IPv6
// address; nil if neither.
func parseIP(s string) []byte {
	if strings.IndexByte(s, ':') >= 0 {
		a, err := netip.ParseAddr(s)
		if err != nil || a.Zone() != "" || !a.Is6() {
			return nil
		}
		b := a.As16()
		return b[:]
	}
	parts := strings.Split(s, ".")
	if len(parts) != 4 {
		return nil
	}
	out := make([]byte, 4)
	for i, p := range parts {
		v, err := strconv.Atoi(p)
		if err != nil || v < 0 || v > 255 {
			return nil
		}
		out[i] = byte(v)
	}
	return out
}

// ipMatches reports whether the caller address id lies in the ip ACL
// expression expr. IPv4 never matches IPv6.
func ipMatches(id, expr string) bool {
	acl, bits, ok := parseIPACL(expr)
	if !ok {
		return false
	}
	remote := parseIP(id)
	if len(remote) != len(acl) {
		return false
	}
	for i := range acl {
		keep := bits - i*8
		var mask byte
		switch {
		case keep >= 8:
			mask = 0xff
		case keep > 0:
			mask = ^byte(0xff >> keep)
		}
		if acl[i]&mask != remote[i]&mask {
			return false
		}
	}
	return true
}

// FixupACL validates and expands an ACL list for create or setACL as
// ZooKeeper's fixupACL does: duplicates are removed (first kept), an empty
// list is wire.ErrInvalidACL, world is only valid as world:anyone, the
// "auth" pseudo-scheme is replaced by one entry per authenticated id of the
// caller (digest, sasl, x509 — not ip or super) and is ErrInvalidACL when
// there is none, and other entries must name a known scheme (digest, ip,
// sasl, x509) with an id that scheme accepts. The result is a new slice,
// or acl itself when it is a single world:anyone entry (the common case,
// already in its final form).
func FixupACL(acl []wire.ACL, c Caller) ([]wire.ACL, error) {
	if len(acl) == 1 && acl[0].ID.Scheme == "world" && acl[0].ID.ID == "anyone" {
		return acl, nil
	}
	uniq := make([]wire.ACL, 0, len(acl))
	for _, a := range acl {
		dup := false
		for _, u := range uniq {
			if u == a {
				dup = true
				break
			}
		}
		if !dup {
			uniq = append(uniq, a)
		}
	}
	if len(uniq) == 0 {
		return nil, wire.ErrInvalidACL
	}
	out := make([]wire.ACL, 0, len(uniq))
	for _, a := range uniq {
		switch {
		case a.ID.Scheme == "world" && a.ID.ID == "anyone":
			out = append(out, a)
		case a.ID.Scheme == "auth":
			found := false
			for _, id := range c.IDs {
				if authenticatedScheme(id.Scheme) {
					found = true
					out = append(out, wire.ACL{Perms: a.Perms, ID: id})
				}
			}
			if !found {
				return nil, wire.ErrInvalidACL
			}
		case knownScheme(a.ID.Scheme) && validID(a.ID.Scheme, a.ID.ID):
			out = append(out, a)
		default:
			return nil, wire.ErrInvalidACL
		}
	}
	return out, nil
}

// Digest returns the digest-scheme id for "user:password":
// "user:" + base64(SHA1("user:password")), as DigestAuthenticationProvider
// computes it for an AuthPacket and for ACLs written by hand.
func Digest(userPassword string) string {
	user, _, _ := strings.Cut(userPassword, ":")
	sum := sha1.Sum([]byte(userPassword))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// maskACL returns acl with every digest id's password hash replaced by "x"
// (Java's id.replaceAll(":.*", ":x"), where '.' stops at line terminators),
// as getACL answers a caller without ADMIN. acl itself is not modified.
func maskACL(acl []wire.ACL) []wire.ACL {
	out := make([]wire.ACL, len(acl))
	for i, a := range acl {
		if a.ID.Scheme == "digest" {
			a.ID.ID = maskDigest(a.ID.ID)
		}
		out[i] = a
	}
	return out
}

func maskDigest(id string) string {
	var b strings.Builder
	for {
		i := strings.IndexByte(id, ':')
		if i < 0 {
			b.WriteString(id)
			return b.String()
		}
		b.WriteString(id[:i])
		b.WriteString(":x")
		id = id[i+1:]
		end := strings.IndexAny(id, "\n\r\u0085\u2028\u2029")
		if end < 0 {
			return b.String()
		}
		id = id[end:]
	}
}
