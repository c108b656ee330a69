package status

import (
	"errors"
	"testing"
)

func TestParseSrvr(t *testing.T) {
	cases := []struct {
		name string
		text string
		want Srvr
		err  error
	}{
		{"leader", srvrLeader, Srvr{Version: zkVersion, Mode: ModeLeader, Zxid: 0x200000007, HasZxid: true, Connections: 2, Outstanding: 0, Nodes: 6}, nil},
		{"follower", srvrFollower, Srvr{Version: zkVersion, Mode: ModeFollower, Zxid: 0x200000005, HasZxid: true, Connections: 3, Outstanding: 1, Nodes: 6}, nil},
		{"observer", srvrObserver, Srvr{Version: zkVersion, Mode: ModeObserver, Zxid: 0x100000009, HasZxid: true, Connections: 1, Outstanding: 0, Nodes: 6}, nil},
		{"standalone", srvrStandalone, Srvr{Version: zkVersion, Mode: ModeStandalone, Zxid: 0x3, HasZxid: true, Connections: 1, Outstanding: 0, Nodes: 5}, nil},
		{"read-only", srvrReadOnly, Srvr{Version: zkVersion, Mode: ModeReadOnly, Zxid: 0x200000004, HasZxid: true, Connections: 1, Outstanding: 0, Nodes: 6}, nil},
		{"not serving", notServing, Srvr{}, ErrNotServing},
		{"not serving, CRLF", "This ZooKeeper instance is not currently serving requests\r\n", Srvr{}, ErrNotServing},
		{"not whitelisted", "srvr is not executed because it is not in the whitelist.\n", Srvr{}, ErrNotAllowed},
		{"old server without Outstanding and Zxid",
			"Zookeeper version: 3.4.14-4c25d480e66aadd371de8bd2fd8da255ac140bcf, built on 03/06/2019 16:18 GMT\nLatency min/avg/max: 0/0/0\nReceived: 1\nSent: 0\nConnections: 1\nMode: standalone\nNode count: 4\n",
			Srvr{Version: "3.4.14-4c25d480e66aadd371de8bd2fd8da255ac140bcf, built on 03/06/2019 16:18 GMT", Mode: ModeStandalone, Connections: 1, Outstanding: -1, Nodes: 4}, nil},
		{"unknown mode kept", "Mode: witness\n", Srvr{Mode: "witness", Connections: -1, Outstanding: -1, Nodes: -1}, nil},
		{"empty", "", Srvr{}, ErrBadReply},
		{"another service", "HTTP/1.1 400 Bad Request\r\n\r\n", Srvr{}, ErrBadReply},
		{"bad zxid", "Zxid: 0xzz\nMode: leader\n", Srvr{}, ErrBadReply},
		{"bad count", "Connections: many\nMode: leader\n", Srvr{}, ErrBadReply},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseSrvr(tc.text)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			if got != tc.want {
				t.Errorf("got %+v\nwant %+v", got, tc.want)
			}
		})
	}
}

func TestParseMntr(t *testing.T) {
	cases := []struct {
		name string
		text string
		want map[string]string // some keys
		err  error
	}{
		{"leader", mntrLeader, map[string]string{"zk_server_state": "leader", "zk_peer_state": "leading - broadcast", "zk_synced_followers": "1", "zk_version": zkVersion}, nil},
		{"follower syncing", mntrFollowerSyncing, map[string]string{"zk_peer_state": "following - synchronization"}, nil},
		{"not whitelisted", mntrNotAllowed, nil, ErrNotAllowed},
		{"not serving", notServing, nil, ErrNotServing},
		{"empty", "", nil, ErrBadReply},
		{"no zk_ lines", "hello\n", nil, ErrBadReply},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseMntr(tc.text)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("error %v, want %v", err, tc.err)
			}
			for k, v := range tc.want {
				if got[k] != v {
					t.Errorf("%s = %q, want %q", k, got[k], v)
				}
			}
		})
	}
	m, _ := ParseMntr(mntrLeader)
	if n, ok := m.Int("zk_uptime"); !ok || n != 603458 {
		t.Errorf("Int(zk_uptime) = %d, %v", n, ok)
	}
	if _, ok := m.Int("zk_avg_latency"); ok {
		t.Errorf("Int(zk_avg_latency) of 0.5714 is ok")
	}
	if _, ok := m.Int("zk_nothing"); ok {
		t.Errorf("Int of a missing key is ok")
	}
}

func TestZxid(t *testing.T) {
	z := Zxid(0x200000007)
	if z.Epoch() != 2 || z.Counter() != 7 || z.String() != "0x200000007" {
		t.Errorf("%v: epoch %d counter %d", z, z.Epoch(), z.Counter())
	}
	if s := Zxid(0).String(); s != "0x0" {
		t.Errorf("Zxid(0) = %s", s)
	}
}
