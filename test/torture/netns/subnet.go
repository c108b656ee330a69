package netns

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strings"
)

// ErrNoSubnet reports that every candidate 10.A.B.0/24 (A in 200..239) is
// in use on the host or by another Net.
var ErrNoSubnet = errors.New("netns: no free 10.A.B.0/24 subnet (A in 200..239); remove leftover interfaces or routes")

// Subnets are chosen from 10.A.B.0/24 with A in [subnetAMin, subnetAMax].
const (
	subnetAMin = 200
	subnetAMax = 239
)

// chooseSubnet returns the first candidate /24 that no prefix in used
// conflicts with. A used prefix conflicts if it overlaps the candidate,
// unless it is a /8 or wider (the default route, a 10.0.0.0/8 route):
// the candidate's connected /24 route is more specific and wins.
func chooseSubnet(used []netip.Prefix) (netip.Prefix, error) {
	for a := subnetAMin; a <= subnetAMax; a++ {
		for b := 0; b < 256; b++ {
			c := netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(a), byte(b), 0}), 24)
			free := true
			for _, u := range used {
				if u.Bits() > 8 && u.Overlaps(c) {
					free = false
					break
				}
			}
			if free {
				return c, nil
			}
		}
	}
	return netip.Prefix{}, ErrNoSubnet
}

// hostPrefixes returns the IPv4 prefixes in use in the host namespace:
// every interface address (as a /32) and every route's destination in
// every routing table.
func hostPrefixes() ([]netip.Prefix, error) {
	var used []netip.Prefix
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, fmt.Errorf("netns: list addresses: %w", err)
	}
	for _, a := range addrs {
		if ipn, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(ipn.IP); ok && ip.Unmap().Is4() {
				used = append(used, netip.PrefixFrom(ip.Unmap(), 32))
			}
		}
	}
	out, err := ip("-4", "route", "show", "table", "all")
	if err != nil {
		return nil, err
	}
	return append(used, parseRoutes(out)...), nil
}

// routeTypes are the words ip route may print before a destination.
var routeTypes = map[string]bool{
	"unicast": true, "local": true, "broadcast": true, "multicast": true,
	"throw": true, "unreachable": true, "prohibit": true, "blackhole": true,
	"nat": true, "anycast": true,
}

// parseRoutes returns the destinations of ip -4 route output lines
// ("10.1.2.0/24 dev eth0 ...", "local 10.1.2.3 dev eth0 ...",
// "default via ..."). Lines it cannot parse are skipped.
func parseRoutes(out string) []netip.Prefix {
	var ps []netip.Prefix
	for _, line := range strings.Split(out, "\n") {
		f := strings.Fields(line)
		if len(f) > 0 && routeTypes[f[0]] {
			f = f[1:]
		}
		if len(f) == 0 || f[0] == "default" {
			continue
		}
		if p, err := netip.ParsePrefix(f[0]); err == nil {
			ps = append(ps, p.Masked())
		} else if a, err := netip.ParseAddr(f[0]); err == nil {
			ps = append(ps, netip.PrefixFrom(a, a.BitLen()))
		}
	}
	return ps
}
