//go:build compat

package compat

import (
	"testing"
)

// TestNormalize pins down what normalize rewrites, so that a transcript difference is
// never hidden by an over-eager rule.
func TestNormalize(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"zxids renumbered by first appearance, hex and decimal alike",
			"czxid=0x1a mzxid=26 pzxid=0x1b",
			"czxid=<z1> mzxid=<z1> pzxid=<z2>"},
		{"zero zxid kept",
			"czxid=0x0 mzxid=0",
			"czxid=0x0 mzxid=0"},
		{"zkCli spelling",
			"cZxid = 0x11\nctime = Sat Nov 21 06:11:21 UTC 2026\nephemeralOwner = 0x100000abc120000",
			"cZxid = <z1>\nctime = <time>\nephemeralOwner = <s1>"},
		{"session ids renumbered, long hex anywhere is a session id",
			"session=0x100000abc120000 owner=0x100000abc120001 Got a new session id: 0x100000abc120000",
			"session=<s1> owner=<s2> Got a new session id: <s1>"},
		{"container and TTL owner markers are not session ids",
			"ephemeralOwner=0x8000000000000000 ephemeralOwner=0xff00000000002710",
			"ephemeralOwner=0x8000000000000000 ephemeralOwner=0xff00000000002710"},
		{"times",
			"ctime=1700000000000 mtime=1700000000001",
			"ctime=<time> mtime=<time>"},
		{"ports and temp dirs",
			"addr 127.0.0.1:43121 /127.0.0.1:5555 dataDir=/tmp/TestX123/001/data",
			"addr 127.0.0.1:<port> /127.0.0.1:<port> dataDir=<tmp>"},
		{"other numbers untouched",
			"version=3 cversion=-1 dataLength=1000 numChildren=2",
			"version=3 cversion=-1 dataLength=1000 numChildren=2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalize(tt.in); got != tt.want {
				t.Errorf("normalize(%q)\n got %q\nwant %q", tt.in, got, tt.want)
			}
		})
	}
}

func TestUnifiedDiff(t *testing.T) {
	a := "1\n2\n3\n4\n5\n6\n7\n8\n9"
	b := "1\n2\n3\n4\nfive\n6\n7\n8\n9"
	got := unifiedDiff("zookeeper", "warden", a, b)
	want := "--- zookeeper\n+++ warden\n@@\n 2\n 3\n 4\n-5\n+five\n 6\n 7\n 8\n"
	if got != want {
		t.Errorf("unifiedDiff:\n%s\nwant:\n%s", got, want)
	}
}
