package client

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	cases := []struct {
		name  string
		data  string
		want  EnsembleConfig
		addrs []string
		err   string
	}{
		{name: "standalone (empty)", data: ""},
		{name: "ZooKeeper's three forms of client address",
			data: "server.2=10.0.0.2:2888:3888:participant;10.0.0.2:2181\n" +
				"server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n" +
				"server.3=zk3:2888:3888:observer;2182\n" +
				"version=100000003",
			want: EnsembleConfig{Version: 0x100000003, Servers: []ConfigServer{
				{ID: 1, QuorumHost: "10.0.0.1", ClientHost: "0.0.0.0", ClientPort: 2181},
				{ID: 2, QuorumHost: "10.0.0.2", ClientHost: "10.0.0.2", ClientPort: 2181},
				{ID: 3, QuorumHost: "zk3", Observer: true, ClientPort: 2182},
			}},
			addrs: []string{"10.0.0.1:2181", "10.0.0.2:2181", "zk3:2182"}},
		{name: "no client address, no role, multiple addresses, IPv6",
			data: "server.1=a:1:2\nserver.2=b:1:2|c:1:2;b:5\nserver.3=[::1]:1:2;[::]:7\nversion=0",
			want: EnsembleConfig{Servers: []ConfigServer{
				{ID: 1, QuorumHost: "a"},
				{ID: 2, QuorumHost: "b", ClientHost: "b", ClientPort: 5},
				{ID: 3, QuorumHost: "::1", ClientHost: "::", ClientPort: 7},
			}},
			addrs: []string{"b:5", "[::1]:7"}},
		{name: "other keys, comments and blank lines are ignored",
			data: "# c\n\nsomething=else\nserver.1 = h:1:2:PARTICIPANT ; 9\n",
			want: EnsembleConfig{Servers: []ConfigServer{{ID: 1, QuorumHost: "h", ClientPort: 9}}}, addrs: []string{"h:9"}},
		{name: "bad id", data: "server.x=h:1:2", err: "not a number"},
		{name: "missing election port", data: "server.1=h:1", err: "want host:quorumPort:electionPort"},
		{name: "bad role", data: "server.1=h:1:2:leader", err: "unknown role"},
		{name: "bad client port", data: "server.1=h:1:2;h:99999", err: "bad client port"},
		{name: "bad version", data: "version=xyz", err: "hexadecimal"},
		{name: "a host that would break a connection string", data: "server.1=a/b:1:2;5", err: "want host:port"},
		{name: "unclosed IPv6", data: "server.1=[::1:1:2", err: "IPv6"},
		{name: "not an IPv6 address in brackets", data: "server.1=[a,b]:1:2", err: "IPv6"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseConfig([]byte(tc.data))
			if tc.err != "" {
				if err == nil || !strings.Contains(err.Error(), tc.err) {
					t.Fatalf("err = %v, want one containing %q", err, tc.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, tc.want) {
				t.Fatalf("got %+v\nwant %+v", got, tc.want)
			}
			if a := got.ClientAddrs(); !reflect.DeepEqual(a, tc.addrs) {
				t.Fatalf("ClientAddrs = %v, want %v", a, tc.addrs)
			}
		})
	}
}

// FuzzParseConfig: any text parses or fails without panicking, and every
// client address it yields is a host:port Connect accepts.
func FuzzParseConfig(f *testing.F) {
	f.Add("server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\nversion=1")
	f.Add("server.3=[::1]:1:2|x:3:4;[::]:7")
	f.Fuzz(func(t *testing.T, data string) {
		cfg, err := ParseConfig([]byte(data))
		if err != nil {
			return
		}
		if s := cfg.ConnectString(); s != "" {
			got, chroot, err := parseServers(s)
			if err != nil || chroot != "" || len(got) != len(cfg.ClientAddrs()) {
				t.Fatalf("ConnectString %q parses as %v, chroot %q, %v", s, got, chroot, err)
			}
		}
	})
}
