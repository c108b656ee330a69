package tlsconf

import (
	"context"
	"errors"
	"net"
	"net/netip"
	"testing"
)

func TestVerifyHostname(t *testing.T) {
	ca := newCA(t, "ca")
	wildcard := issue(t, ca, certOpts{cn: "ignored.example.org", dns: []string{"*.example.com", "zk*.test"}})
	ips := issue(t, ca, certOpts{cn: "10.0.0.3", ips: []net.IP{net.ParseIP("10.0.0.1"), net.ParseIP("::1")}})
	cnOnly := issue(t, ca, certOpts{cn: "zk1.example.org"})
	cnWildcard := issue(t, ca, certOpts{cn: "*.example.net"})
	cnIP := issue(t, ca, certOpts{cn: "192.168.1.1"})
	nameless := issue(t, ca, certOpts{subject: rawSubject(t, []ava{utf8AVA(oidO, "org")})})
	twoCNs := issue(t, ca, certOpts{subject: rawSubject(t, []ava{utf8AVA(oidCN, "outer.test")}, []ava{utf8AVA(oidCN, "inner.test")})})
	for _, tc := range []struct {
		name string
		cert *testCert
		host string
		ok   bool
	}{
		{"wildcard label", wildcard, "zk1.example.com", true},
		{"wildcard is one label", wildcard, "a.b.example.com", false},
		{"wildcard needs a label", wildcard, "example.com", false},
		{"partial wildcard", wildcard, "zk3.test", true},
		{"partial wildcard prefix", wildcard, "web.test", false},
		{"case folded", wildcard, "ZK1.Example.COM", true},
		{"CN ignored when SANs exist", wildcard, "ignored.example.org", false},
		{"IPv4 SAN", ips, "10.0.0.1", true},
		{"other IPv4", ips, "10.0.0.2", false},
		{"CN ignored for IP when SANs exist", ips, "10.0.0.3", false},
		{"IPv6 SAN normalised", ips, "0:0:0:0:0:0:0:1", true},
		{"IPv6 in brackets", ips, "[::1]", true},
		{"name against IP SANs", ips, "localhost", false},
		{"CN fallback", cnOnly, "zk1.example.org", true},
		{"CN fallback mismatch", cnOnly, "zk2.example.org", false},
		{"CN wildcard", cnWildcard, "a.example.net", true},
		{"CN with an IP", cnIP, "192.168.1.1", true},
		{"no name at all", nameless, "org", false},
		{"most specific CN", twoCNs, "inner.test", true},
		{"less specific CN", twoCNs, "outer.test", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifyHostname(tc.host, tc.cert.cert)
			if (err == nil) != tc.ok {
				t.Errorf("verifyHostname(%q) = %v, want ok=%v", tc.host, err, tc.ok)
			}
		})
	}
}

// fakeDNS answers lookups from maps.
type fakeDNS struct {
	names map[string][]string // address → names (with trailing dot)
	ips   map[string][]string // name → addresses
}

func (d fakeDNS) LookupAddr(_ context.Context, addr string) ([]string, error) {
	if n, ok := d.names[addr]; ok {
		return n, nil
	}
	return nil, errors.New("no PTR record")
}

func (d fakeDNS) LookupIPAddr(_ context.Context, host string) ([]net.IPAddr, error) {
	var out []net.IPAddr
	for _, a := range d.ips[host] {
		out = append(out, net.IPAddr{IP: net.ParseIP(a)})
	}
	if out == nil {
		return nil, errors.New("no such host")
	}
	return out, nil
}

func TestVerifyPeer(t *testing.T) {
	ca := newCA(t, "ca")
	byName := issue(t, ca, certOpts{cn: "zk", dns: []string{"zk2.test"}})
	byIP := issue(t, ca, certOpts{cn: "zk", ips: []net.IP{net.ParseIP("10.1.1.2")}})
	dns := fakeDNS{
		names: map[string][]string{"10.1.1.2": {"zk2.test."}, "10.9.9.9": {"zk2.test."}},
		ips:   map[string][]string{"zk2.test": {"10.1.1.2"}},
	}
	addr := netip.MustParseAddr("10.1.1.2")
	for _, tc := range []struct {
		name    string
		cert    *testCert
		reverse bool
		addr    netip.Addr
		host    string
		ok      bool
	}{
		{"address", byIP, false, addr, "", true},
		{"mapped address", byIP, false, netip.MustParseAddr("::ffff:10.1.1.2"), "", true},
		{"dialed name", byName, false, netip.Addr{}, "zk2.test", true},
		{"dialed name resolves to the SAN address", byIP, false, netip.Addr{}, "zk2.test", true},
		{"reverse DNS off", byName, false, addr, "", false},
		{"reverse DNS", byName, true, addr, "", true},
		{"reverse DNS not confirmed forward", byName, true, netip.MustParseAddr("10.9.9.9"), "", false},
		{"no address", byName, true, netip.Addr{}, "", false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := verifyPeer(context.Background(), dns, tc.reverse, tc.addr, tc.host, tc.cert.cert)
			if (err == nil) != tc.ok {
				t.Errorf("verifyPeer = %v, want ok=%v", err, tc.ok)
			}
		})
	}
}
