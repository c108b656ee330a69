package tree

import (
	"net/netip"
	"testing"
)

// FuzzIPACL parses arbitrary ip ACL expressions (a client's setACL or
// create): an accepted one has 4 or 16 address bytes and a prefix length
// that fits them, and matches its own address.
func FuzzIPACL(f *testing.F) {
	for _, s := range []string{"10.0.0.1", "10.0.0.0/8", "010.1.1.1/0", "::1", "fe80::/10", "::ffff:1.2.3.4/128", "1.2.3.4/33", "+1.2.3.4/+8", "1.2.3", "fe80::1%eth0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, expr string) {
		addr, bits, ok := parseIPACL(expr)
		if !ok {
			return
		}
		if (len(addr) != 4 && len(addr) != 16) || bits < 0 || bits > 8*len(addr) {
			t.Fatalf("%q: %d address bytes, prefix %d", expr, len(addr), bits)
		}
		var self string
		if len(addr) == 4 {
			self = netip.AddrFrom4([4]byte(addr)).String()
		} else {
			self = netip.AddrFrom16([16]byte(addr)).String()
		}
		if !ipMatches(self, expr) {
			t.Fatalf("%q does not match its own address %s", expr, self)
		}
	})
}
