package tree

import (
	"maps"
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

// FuzzStatsTrack parses arbitrary quota node text (a client may write
// any data to /zookeeper/quota/...): what parses writes back (bytes, in
// StatsTrack.toString's form) to text that parses to the same limits.
func FuzzStatsTrack(f *testing.F) {
	for _, s := range []string{"count=10,bytes=100", "count=-1,bytes=-1=;byteHardLimit=5;countHardLimit=2", "count=,bytes=", ",count=1", "a=1=2;;,b=3,,", "=5", "count=99999999999999999999"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		s, ok := parseStatsTrack(data)
		if !ok {
			return
		}
		text := s.bytes()
		back, ok := parseStatsTrack(text)
		if !ok {
			t.Fatalf("%q writes back as %q, which does not parse", data, text)
		}
		want := maps.Clone(s)
		want[keyCount], want[keyBytes] = s.get(keyCount), s.get(keyBytes)
		if !maps.Equal(back, want) {
			t.Fatalf("%q writes back as %q: %v, want %v", data, text, back, want)
		}
	})
}
