package checker

import (
	"strings"
	"testing"
)

func cfgOf(v int64, servers ...string) EnsembleConfig {
	return EnsembleConfig{Version: v, Servers: servers}
}

// A history of reconfigs that explains every configuration seen passes;
// each way the membership can go wrong is an anomaly.
func TestCheckReconfig(t *testing.T) {
	a, b, c, d := "server.1=a", "server.2=b", "server.3=c", "server.4=d"
	v1 := cfgOf(0x100000000, a, b, c)
	v2 := cfgOf(0x100000010, a, b, c, d)
	v3 := cfgOf(0x200000005, b, c, d)
	reply2 := v2
	good := []ReconfigOp{
		{Desc: "add 4", From: v1.Version, Want: v2.Servers, Outcome: OK, Reply: &reply2},
		{Desc: "remove 1 (refused)", From: v2.Version, Want: v3.Servers, Outcome: Failed, Err: "NEWCONFIGNOQUORUM"},
		{Desc: "remove 1", From: v2.Version, Want: v3.Servers, Outcome: Unknown},
	}
	reads := []ConfigRead{{At: 1, Member: "m1", EnsembleConfig: v1}, {At: 2, Member: "m2", EnsembleConfig: v2}, {At: 3, Member: "m3", EnsembleConfig: v3}}
	final := map[string]EnsembleConfig{"m2": v3, "m3": v3, "m4": v3}
	if r := CheckReconfig(good, reads, final, nil); !r.OK {
		t.Fatalf("a good history: %v", r.Anomalies)
	}

	cases := []struct {
		name    string
		ops     []ReconfigOp
		reads   []ConfigRead
		final   map[string]EnsembleConfig
		serving []string
		want    string
	}{
		{"a refused reconfig took effect", good[:2], reads, final, nil, "no reconfig from version 100000010 that was not refused"},
		{"a change nobody asked for", good[:1], reads[:2], map[string]EnsembleConfig{"m1": cfgOf(0x100000010, a, b, d)}, nil, "is two memberships"},
		{"a read went back", good, []ConfigRead{reads[0], reads[2], reads[1]}, final, nil, "older than version"},
		{"an acknowledged reconfig's reply differs", []ReconfigOp{{Desc: "add 4", From: v1.Version, Want: v2.Servers, Outcome: OK, Reply: &v1}}, reads[:1], map[string]EnsembleConfig{"m1": v1}, nil, "acknowledged with"},
		{"members disagree at the end", good, reads, map[string]EnsembleConfig{"m2": v3, "m3": v2}, nil, "not the newest"},
		{"a removed member serves", good, reads, final, []string{"m1"}, "serves clients after a reconfig removed it"},
		{"no final read", good, reads, nil, nil, "no member's final read"},
	}
	for _, tc := range cases {
		r := CheckReconfig(tc.ops, tc.reads, tc.final, tc.serving)
		if r.OK || !strings.Contains(strings.Join(r.Anomalies, "\n"), tc.want) {
			t.Errorf("%s: OK=%v anomalies %q, want one saying %q", tc.name, r.OK, r.Anomalies, tc.want)
		}
	}
}
