//go:build compat

package compat

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// zkCliPath is Debian's ZooKeeper command-line client.
const zkCliPath = "/usr/share/zookeeper/bin/zkCli.sh"

// zkCliDeadline bounds one zkCli.sh invocation (a JVM start plus one command).
const zkCliDeadline = 30 * time.Second

// zkCliNoise matches the lines zkCli.sh prints around every command that say nothing
// about the server: logger set-up, the connection banner and the session events.
var zkCliNoise = []string{
	"SLF4J:",
	"Connecting to ",
	"WATCHER::",
	"WatchedEvent state:SyncConnected type:None path:null",
	"WatchedEvent state:Closed type:None path:null",
	"Welcome to ZooKeeper!",
	"JLine support is",
}

// zkCliEvents are the messages zkCli.sh's watcher prints, each as "\n" + message +
// "\n", from the event thread. They can land inside a line the command is still
// printing piece by piece (ls prints "[", then each child), so they are cut out of
// the raw output whole, before lines are split, and the line they broke is joined.
var zkCliEvents = []string{
	"WATCHER::",
	"WatchedEvent state:SyncConnected type:None path:null",
	"WatchedEvent state:Closed type:None path:null",
}

// zkCliCommands is the command list of TestZkCli, run in order, one zkCli.sh each.
// A session ends after every command, so ephemerals made here vanish at once; the test
// holds its own session with an ephemeral to give getEphemerals and ls something to show.
var zkCliCommands = [][]string{
	{"version"},
	{"create", "/a", "hello"},
	{"create", "/a", "again"},
	{"create", "/nope/child"},
	{"create", "-s", "/a/seq-", "s"},
	{"create", "-s", "/a/seq-", "s"},
	{"create", "-e", "/a/eph", "e"},
	{"create", "-s", "-e", "/a/eseq-"},
	{"create", "-c", "/cont", "c"},
	{"create", "-t", "3600000", "/ttl", "t"},
	{"create", "-t", "0", "/ttl0", "t"},
	{"create", "/a/b", "b"},
	{"create", "/a/b/c"},
	{"ls", "/"},
	{"ls", "-s", "/a"},
	{"ls", "-R", "/"},
	{"ls", "/nothing"},
	{"get", "-s", "/a"},
	{"get", "/nothing"},
	{"get", "-s", "/held/e1"},
	{"set", "-v", "0", "/a", "v1"},
	{"set", "-v", "0", "/a", "v2"},
	{"set", "-s", "/a", "v3"},
	{"stat", "/a"},
	{"stat", "/nothing"},
	{"stat", "/zookeeper"},
	{"delete", "-v", "5", "/a/b/c"},
	{"delete", "/a/b"},
	{"delete", "-v", "0", "/a/b/c"},
	{"delete", "/nothing"},
	{"getAllChildrenNumber", "/"},
	{"getAllChildrenNumber", "/a"},
	{"deleteall", "/a"},
	{"stat", "/a"},
	{"create", "/acl", "x"},
	{"getAcl", "/acl"},
	{"setAcl", "/acl", "world:anyone:r"},
	{"getAcl", "-s", "/acl"},
	{"set", "/acl", "y"},
	{"setAcl", "-v", "7", "/acl", "world:anyone:cdrwa"},
	{"create", "/dig", "d", "digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:cdrwa"},
	{"getAcl", "/dig"},
	{"get", "/dig"},
	{"create", "/ip", "i", "ip:127.0.0.1:cdrwa"},
	{"get", "/ip"},
	{"create", "/bad", "b", "nosuch:x:cdrwa"},
	{"addauth", "digest", "alice:secret"},
	{"getEphemerals"},
	{"getEphemerals", "/held"},
	{"sync", "/"},
	{"whoami"},
	{"config"},
	{"getAcl", "/zookeeper/config"},
	{"setquota", "-n", "2", "/acl"},
	{"listquota", "/acl"},
	{"delquota", "/acl"},
	{"reconfig", "-add", "server.5=127.0.0.1:2888:3888;2181"},
	{"nosuchcommand"},
}

// TestZkCli runs zkCli.sh in one-command mode against each server and compares what
// it prints (JVM and connection noise removed).
func TestZkCli(t *testing.T) {
	t.Parallel()
	extra := map[string]string{"extendedTypesEnabled": "true"}
	differential(t, extra, func(t *testing.T, s *Server) string {
		held := connectGo(t, s, 10*time.Second)
		for _, p := range []string{"/held", "/held/e1"} {
			flags := int32(0)
			if p == "/held/e1" {
				flags = zk.FlagEphemeral
			}
			if _, err := held.Create(p, []byte("held"), flags, zk.WorldACL(zk.PermAll)); err != nil {
				t.Fatalf("create %s: %v", p, err)
			}
		}
		var tr strings.Builder
		fmt.Fprintf(&tr, "held session=%#x\n", held.SessionID())
		for _, args := range zkCliCommands {
			out, rc := runZkCli(t, s.Addr, args...)
			fmt.Fprintf(&tr, "$ %s\n%src=%d\n", strings.Join(args, " "), out, rc)
		}
		return tr.String()
	})
}

// runZkCli runs `zkCli.sh -server addr args...` and returns its output (stdout and
// stderr interleaved, noise lines dropped) and exit code.
func runZkCli(t *testing.T, addr string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zkCliDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCliPath, append([]string{"-server", addr}, args...)...)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS=-XX:TieredStopAtLevel=1 -XX:+UseSerialGC -XX:-UsePerfData -Xshare:auto")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("zkCli.sh %v: no exit within %v; output:\n%s", args, zkCliDeadline, out.String())
	}
	rc := 0
	if err != nil {
		ee, ok := err.(*exec.ExitError)
		if !ok {
			t.Fatalf("zkCli.sh %v: %v", args, err)
		}
		rc = ee.ExitCode()
	}
	return zkCliText(out.String()), rc
}

// zkCliText is what zkCli.sh printed with the noise removed: the watcher's event
// messages cut out whole, then blank lines and zkCliNoise lines dropped.
func zkCliText(raw string) string {
	for _, ev := range zkCliEvents {
		raw = strings.ReplaceAll(raw, "\n"+ev+"\n", "")
	}
	var kept []string
	for _, line := range strings.Split(raw, "\n") {
		if strings.TrimSpace(line) == "" || hasAnyPrefix(line, zkCliNoise) {
			continue
		}
		kept = append(kept, line+"\n")
	}
	return strings.Join(kept, "")
}

// TestZkCliText checks the noise removal on output where the connection event
// landed inside ls's line, as it did in a CI run.
func TestZkCliText(t *testing.T) {
	raw := "Connecting to 127.0.0.1:1\n[\nWATCHER::\n\nWatchedEvent state:SyncConnected type:None path:null\n" +
		"b, dig]\n\nWATCHER::\n\nWatchedEvent state:Closed type:None path:null\n"
	if got, want := zkCliText(raw), "[b, dig]\n"; got != want {
		t.Errorf("zkCliText = %q, want %q", got, want)
	}
}

func hasAnyPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}
