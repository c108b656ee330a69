package cli

import (
	"context"
	"reflect"
	"testing"
)

// TestConfigCommand runs config against the in-process standalone server,
// whose /zookeeper/config is empty (as a standalone ZooKeeper's is), and
// compares the output with zkCli.sh 3.8's. The node's stat is ZooKeeper's
// too: never written, aclVersion -1 (DataTree sets its ACL with version -1).
func TestConfigCommand(t *testing.T) {
	sh, out, _ := startShell(t)
	const configStat = "cZxid = 0x0\nctime = <time>\nmZxid = 0x0\nmtime = <time>\npZxid = 0x0\n" +
		"cversion = 0\ndataVersion = 0\naclVersion = -1\nephemeralOwner = 0x0\ndataLength = 0\nnumChildren = 0\n"
	steps := []struct {
		line string
		want string
		code int
	}{
		{"config", "\n", 0},
		{"config -w", "\n", 0},
		{"config -c", " \n", 0},
		{"config -s", "\n" + configStat, 0},
		{"config -cs", " \n" + configStat, 0},
		{"config --json", `{"config":""}` + "\n", 0},
		{"config -c --json", `{"config":" "}` + "\n", 0},
		{"config -x", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n", 1},
	}
	for _, st := range steps {
		err := sh.Exec(context.Background(), st.line)
		// normalize hides zxids too; this node's are always 0x0.
		got := reTime.ReplaceAllString(out.take(), "${1}<time>")
		if got != st.want {
			t.Errorf("%s: output\n%q\nwant\n%q", st.line, got, st.want)
		}
		if code := exitStatus(err); code != st.code {
			t.Errorf("%s: status %d, want %d", st.line, code, st.code)
		}
	}
}

// TestClientConfig checks config -c's formatting of a dynamic
// configuration (ConfigUtils.getClientConfigStr).
func TestClientConfig(t *testing.T) {
	cases := []struct {
		name, cfg, want string
	}{
		{"standalone (empty)", "", " "},
		{"null data", "null", " "},
		{"three servers",
			"server.1=10.0.0.1:2888:3888:participant;0.0.0.0:2181\n" +
				"server.2=10.0.0.2:2888:3888:participant;10.0.0.2:2181\n" +
				"server.3=zk3.example.com:2888:3888:observer;zk3.example.com:2181\n" +
				"version=100000000",
			"100000000 0.0.0.0:2181,10.0.0.2:2181,zk3.example.com:2181"},
		{"port only", "server.1=127.0.0.1:2888:3888;2181\nversion=1", "1 0.0.0.0:2181"},
		{"no client address keeps its place",
			"server.1=a:2888:3888\nserver.2=b:2888:3888;b:2181\nversion=2",
			"2 ,b:2181"},
		{"unparsable server left out",
			"server.1=a:2888\nserver.2=b:x:3888;b:2181\nserver.3=c:1:2:witness;c:2181\nserver.4=d:1:2;d:2181\nversion=3",
			"3 d:2181"},
		{"ipv6 as Java prints it",
			"server.1=[::1]:2888:3888:participant;[::1]:2181\nserver.2=[fe80::1]:2888:3888;[::ffff:10.1.2.3]:2182\nversion=4",
			"4 0:0:0:0:0:0:0:1:2181,10.1.2.3:2182"},
		{"several quorum addresses",
			"server.1=a:2888:3888|a2:2888:3888;a:2181\nversion=5", "5 a:2181"},
		{"spaces, comments, separators",
			"# comment\n  server.1 = a:2888:3888;a:2181  \nversion: 6\n", "6 a:2181"},
		{"key given twice: last value wins",
			"server.1=a:2888:3888;a:2181\nserver.1=b:2888:3888;b:2181\nversion=7", "7 b:2181"},
		{"bad client port left out", "server.1=a:2888:3888;a:99999\nserver.2=b:1:2;b:2181:1\nversion=8", "8 "},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if got := clientConfig(tc.cfg); got != tc.want {
				t.Errorf("clientConfig(%q) = %q, want %q", tc.cfg, got, tc.want)
			}
		})
	}
}

// TestCompleteConfig checks that completion offers config and its options.
func TestCompleteConfig(t *testing.T) {
	sh := New(Config{})
	if got, _ := sh.complete("conf"); !reflect.DeepEqual(got, []string{"config"}) {
		t.Errorf("complete(conf) = %q", got)
	}
	if got, _ := sh.complete("config -"); !reflect.DeepEqual(got, []string{"--json", "-c", "-s", "-w"}) {
		t.Errorf("complete(config -) = %q", got)
	}
}
