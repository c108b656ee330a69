package tlsconf

import (
	"context"
	"crypto/x509"
	"encoding/asn1"
	"fmt"
	"net"
	"net/netip"
	"regexp"
	"strings"
	"time"
)

// Host name verification follows ZooKeeper's ZKTrustManager and
// ZKHostnameVerifier (Apache HttpClient's rules), not Go's
// x509.VerifyHostname, so that certificates ZooKeeper accepts are accepted:
//
//   - when the certificate has DNS or IP subject alternative names, an IP
//     host must equal an IP SAN and a DNS host must match a DNS SAN, case
//     folded, where one "*" stands for any run of characters without a
//     dot ("*.example.com", also "zk*.example.com");
//   - when it has none, the host is matched the same way against the most
//     specific CN of the subject (ZooKeeper's keytool examples make such
//     certificates);
//   - a peer is verified by its address first; failing that by its host
//     name: the one it was dialed by, or for an accepted connection the
//     name found by reverse DNS when allowReverseDnsLookup is true
//     (confirmed by a forward lookup, as Java's InetAddress does).

// resolver is the DNS a Source uses for host name verification; tests
// replace it.
type resolver interface {
	LookupAddr(ctx context.Context, addr string) ([]string, error)
	LookupIPAddr(ctx context.Context, host string) ([]net.IPAddr, error)
}

// dnsTimeout bounds each lookup made during a handshake.
const dnsTimeout = 5 * time.Second

var (
	ipv4Pattern           = regexp.MustCompile(`^(25[0-5]|2[0-4]\d|[0-1]?\d?\d)(\.(25[0-5]|2[0-4]\d|[0-1]?\d?\d)){3}$`)
	ipv6StdPattern        = regexp.MustCompile(`^(?:[0-9a-fA-F]{1,4}:){7}[0-9a-fA-F]{1,4}$`)
	ipv6CompressedPattern = regexp.MustCompile(`^((?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?)::((?:[0-9A-Fa-f]{1,4}(?::[0-9A-Fa-f]{1,4})*)?)$`)
)

type hostKind int

const (
	hostDNS hostKind = iota
	hostIPv4
	hostIPv6
)

// hostFormat classifies host as ZKHostnameVerifier does (brackets around
// an IPv6 literal are dropped).
func hostFormat(host string) (hostKind, string) {
	if ipv4Pattern.MatchString(host) {
		return hostIPv4, host
	}
	h := strings.TrimSuffix(strings.TrimPrefix(host, "["), "]")
	if ipv6StdPattern.MatchString(h) || ipv6CompressedPattern.MatchString(h) {
		return hostIPv6, h
	}
	return hostDNS, host
}

// verifyHostname checks that cert names host.
func verifyHostname(host string, cert *x509.Certificate) error {
	kind, host := hostFormat(host)
	if len(cert.DNSNames) > 0 || len(cert.IPAddresses) > 0 {
		switch kind {
		case hostIPv4:
			for _, ip := range cert.IPAddresses {
				// Java writes an IPv4 SAN (or an IPv4-mapped IPv6 one) as
				// a.b.c.d and compares strings.
				if ip4 := ip.To4(); ip4 != nil && ip4.String() == host {
					return nil
				}
			}
		case hostIPv6:
			want, err := netip.ParseAddr(host)
			if err == nil {
				for _, ip := range cert.IPAddresses {
					if got, ok := netip.AddrFromSlice(ip); ok && got.Unmap() == want.Unmap() {
						return nil
					}
				}
			}
		default:
			for _, name := range cert.DNSNames {
				if matchIdentity(strings.ToLower(host), strings.ToLower(name)) {
					return nil
				}
			}
		}
		return fmt.Errorf("the certificate %q does not name %s in its subject alternative names (DNS %v, IP %v)", SubjectDN(cert), host, cert.DNSNames, cert.IPAddresses)
	}
	cn, ok := mostSpecificCN(cert)
	if !ok {
		return fmt.Errorf("the certificate %q has neither subject alternative names nor a common name to match %s", SubjectDN(cert), host)
	}
	if !matchIdentity(strings.ToLower(host), strings.ToLower(cn)) {
		return fmt.Errorf("the certificate %q (no subject alternative names) does not name %s in its common name", SubjectDN(cert), host)
	}
	return nil
}

// matchIdentity is HttpClient's strict wildcard match: the first "*" in
// identity matches a run of host characters without a dot.
func matchIdentity(host, identity string) bool {
	prefix, suffix, wild := strings.Cut(identity, "*")
	if !wild {
		return strings.EqualFold(host, identity)
	}
	if !strings.HasPrefix(host, prefix) || !strings.HasSuffix(host, suffix) || len(host) < len(prefix)+len(suffix) {
		return false
	}
	return !strings.Contains(host[len(prefix):len(host)-len(suffix)], ".")
}

// mostSpecificCN returns the first CN of the RDN that comes first in the
// RFC 2253 string (the last RDN of the encoding that has a CN).
func mostSpecificCN(cert *x509.Certificate) (string, bool) {
	var rdns []asn1.RawValue
	if rest, err := asn1.Unmarshal(cert.RawSubject, &rdns); err != nil || len(rest) > 0 {
		return "", false
	}
	cnOID := asn1.ObjectIdentifier{2, 5, 4, 3}
	for i := len(rdns) - 1; i >= 0; i-- {
		var atvs []attributeTypeAndValue
		if _, err := asn1.UnmarshalWithParams(rdns[i].FullBytes, &atvs, "set"); err != nil {
			return "", false
		}
		for _, atv := range atvs {
			if atv.Type.Equal(cnOID) {
				// A CN of a non-string type is hex in the RFC 2253 string
				// and never matches in ZooKeeper either.
				s, ok := javaString(atv.Value)
				return s, ok
			}
		}
	}
	return "", false
}

// verifyPeer checks cert against a peer as ZKTrustManager does. addr is
// the peer's address (may be invalid when unknown) and name the host name
// it was dialed by ("" for an accepted connection).
func verifyPeer(ctx context.Context, dns resolver, allowReverse bool, addr netip.Addr, name string, cert *x509.Certificate) error {
	var firstErr error
	try := func(host string) bool {
		err := verifyHostname(host, cert)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		return err == nil
	}
	addr = addr.WithZone("")
	if addr.IsValid() && try(addr.Unmap().String()) {
		return nil
	}
	if name != "" {
		if try(name) {
			return nil
		}
		if !addr.IsValid() {
			// Dialed by name: ZooKeeper checks the address the name
			// resolved to first.
			ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
			defer cancel()
			ips, err := dns.LookupIPAddr(ctx, name)
			if err == nil {
				for _, ip := range ips {
					if a, ok := netip.AddrFromSlice(ip.IP); ok && try(a.Unmap().String()) {
						return nil
					}
				}
			}
		}
		return firstErr
	}
	if !addr.IsValid() {
		return fmt.Errorf("the peer's address is unknown, so its certificate %q cannot be checked against it", SubjectDN(cert))
	}
	if !allowReverse {
		return fmt.Errorf("%w (reverse DNS lookup is off: allowReverseDnsLookup)", firstErr)
	}
	ctx, cancel := context.WithTimeout(ctx, dnsTimeout)
	defer cancel()
	names, err := dns.LookupAddr(ctx, addr.Unmap().String())
	if err != nil {
		return fmt.Errorf("%w (reverse DNS lookup failed: %v)", firstErr, err)
	}
	for _, n := range names {
		n = strings.TrimSuffix(n, ".")
		if !forwardConfirmed(ctx, dns, n, addr) {
			continue
		}
		if try(n) {
			return nil
		}
	}
	return firstErr
}

// forwardConfirmed reports whether name resolves back to addr.
func forwardConfirmed(ctx context.Context, dns resolver, name string, addr netip.Addr) bool {
	ips, err := dns.LookupIPAddr(ctx, name)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if a, ok := netip.AddrFromSlice(ip.IP); ok && a.Unmap() == addr.Unmap() {
			return true
		}
	}
	return false
}
