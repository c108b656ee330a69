package netns

import (
	"errors"
	"net/netip"
	"reflect"
	"strings"
	"testing"
)

func TestCuts(t *testing.T) {
	for _, tc := range []struct {
		name   string
		n      int
		groups [][]int
		want   [][]int
	}{
		{"one group", 3, [][]int{{0, 1, 2}}, [][]int{nil, nil, nil}},
		{"isolate 0", 3, [][]int{{0}, {1, 2}}, [][]int{{1, 2}, {0}, {0}}},
		{"bridge 1", 3, [][]int{{0, 1}, {1, 2}}, [][]int{{2}, nil, {0}}},
		{"2 in no group", 3, [][]int{{0, 1}}, [][]int{{2}, {2}, {0, 1}}},
		{"no groups", 2, nil, [][]int{{1}, {0}}},
		{"majority ring", 5, [][]int{{0, 1, 2}, {2, 3, 4}}, [][]int{{3, 4}, {3, 4}, nil, {0, 1}, {0, 1}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := cuts(tc.n, tc.groups)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("cuts = %v, want %v", got, tc.want)
			}
		})
	}
	for _, bad := range [][][]int{{{0, 3}}, {{-1}}} {
		if _, err := cuts(3, bad); !errors.Is(err, ErrBadGroups) {
			t.Errorf("cuts(3, %v): %v, want ErrBadGroups", bad, err)
		}
	}
}

func TestRuleset(t *testing.T) {
	if got := ruleset(nil); got != healRuleset {
		t.Fatalf("ruleset(nil) = %q, want only the delete", got)
	}
	got := ruleset([]netip.Addr{netip.MustParseAddr("10.200.0.12"), netip.MustParseAddr("10.200.0.13")})
	for _, want := range []string{
		"delete table inet torture\n",
		"elements = { 10.200.0.12, 10.200.0.13 }",
		"type filter hook input priority 0; policy accept;\n\t\tip saddr @cut drop",
		"type filter hook output priority 0; policy accept;\n\t\tip daddr @cut drop",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("ruleset lacks %q:\n%s", want, got)
		}
	}
}

func TestChooseSubnet(t *testing.T) {
	p := netip.MustParsePrefix
	for _, tc := range []struct {
		name string
		used []netip.Prefix
		want string
	}{
		{"empty", nil, "10.200.0.0/24"},
		{"wide routes ignored", []netip.Prefix{p("0.0.0.0/0"), p("10.0.0.0/8")}, "10.200.0.0/24"},
		{"same /24", []netip.Prefix{p("10.200.0.0/24")}, "10.200.1.0/24"},
		{"address inside", []netip.Prefix{p("10.200.0.77/32")}, "10.200.1.0/24"},
		{"covering /16", []netip.Prefix{p("10.200.0.0/16")}, "10.201.0.0/24"},
		{"smaller inside", []netip.Prefix{p("10.200.0.128/25"), p("10.200.1.0/24")}, "10.200.2.0/24"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := chooseSubnet(tc.used)
			if err != nil || got.String() != tc.want {
				t.Fatalf("chooseSubnet = %v, %v; want %s", got, err, tc.want)
			}
		})
	}
	var all []netip.Prefix
	for a := subnetAMin; a <= subnetAMax; a++ {
		all = append(all, netip.PrefixFrom(netip.AddrFrom4([4]byte{10, byte(a), 0, 0}), 16))
	}
	if _, err := chooseSubnet(all); !errors.Is(err, ErrNoSubnet) {
		t.Fatalf("all used: %v, want ErrNoSubnet", err)
	}
}

func TestParseRoutes(t *testing.T) {
	out := `default via 172.16.0.1 dev eth0
10.200.0.0/24 dev wt-0-h proto kernel scope link src 10.200.0.1
local 10.200.0.1 dev wt-0-h table local proto kernel scope host src 10.200.0.1
broadcast 10.200.0.255 dev wt-0-h table local proto kernel scope link src 10.200.0.1
unreachable 10.201.5.0/24
`
	var got []string
	for _, p := range parseRoutes(out) {
		got = append(got, p.String())
	}
	want := []string{"10.200.0.0/24", "10.200.0.1/32", "10.200.0.255/32", "10.201.5.0/24"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("parseRoutes = %v, want %v", got, want)
	}
}

func TestUnescapeMount(t *testing.T) {
	if got := unescapeMount(`/tmp/a\040b\134c`); got != `/tmp/a b\c` {
		t.Fatalf("unescapeMount = %q", got)
	}
}
