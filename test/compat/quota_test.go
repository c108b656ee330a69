//go:build compat

package compat

import (
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// quotaCommands is the quota script of TestQuotaCLI, one process per command; "{p}"
// becomes each tool's own subtree. The servers run with enforceQuota=true, so the
// hard limits set here refuse zkCli.sh's and warden cli's writes.
var quotaCommands = [][]string{
	{"create", "{p}", "x"},
	// Argument rules and option values.
	{"setquota", "{p}"},
	{"setquota", "-n", "2"},
	{"setquota", "-n"},
	{"setquota", "-n", "-b", "5", "{p}"},
	{"setquota", "-b", "10", "-B", "20", "{p}"},
	{"setquota", "-N", "3", "-N", "{p}"},
	{"setquota", "-x", "2", "{p}"},
	{"setquota", "-n", "0", "{p}"},
	{"setquota", "-N", "0", "{p}"},
	{"setquota", "-n", "x", "{p}"},
	{"setquota", "-n", "99999999999", "{p}"},
	{"setquota", "-b", "-1", "{p}"},
	{"setquota", "-B", "-5", "{p}"},
	{"listquota"},
	{"listquota", "-n", "{p}"},
	{"delquota"},
	{"delquota", "-nN", "{p}"},
	{"delquota", "-n=3", "{p}"},
	// Paths.
	{"setquota", "-n", "2", "/zookeeper/quota{p}"},
	{"setquota", "-n", "2", "{p}/nothing"},
	{"setquota", "-n", "2", "{p}/"},
	{"setquota", "-n", "1", "{p}//b"},
	{"setquota", "-n", "2", "/"},
	{"listquota", "{p}//b"},
	{"delquota", "{p}//b"},
	{"listquota", "{p}/nothing"},
	{"delquota", "{p}/nothing"},
	// Setting, updating, listing.
	{"setquota", "-n", "2", "{p}"},
	{"listquota", "{p}"},
	{"setquota", "-N", "3", "{p}"},
	{"setquota", "-n5", "{p}"},
	{"listquota", "{p}", "/other"},
	{"create", "{p}/a", "aa"},
	{"create", "{p}/a/b"},
	{"setquota", "-n", "2", "{p}/a"},
	{"setquota", "-n", "2", "-n", "3", "{p}"},
	{"listquota", "{p}"},
	// Hard limits, enforced.
	{"create", "{p}/c"},
	{"setquota", "-B", "4", "{p}"},
	{"set", "{p}/a", "abc"},
	{"set", "{p}/a", "abcd"},
	{"set", "{p}/a", "xyz"},
	{"create", "{p}/a/c", "x"},
	{"setquota", "-N", "2", "{p}"},
	{"listquota", "{p}"},
	// Nested quotas are refused from either side.
	{"create", "{p}n"},
	{"create", "{p}n/s"},
	{"create", "{p}n/s/t"},
	{"setquota", "-b", "5", "{p}n/s/t"},
	{"setquota", "-n", "3", "{p}n"},
	{"setquota", "-n", "3", "{p}n/s"},
	{"listquota", "{p}n"},
	{"delquota", "{p}n"},
	{"listquota", "{p}n/s/t"},
	// Removing limits, then quotas.
	{"delquota", "-n", "{p}"},
	{"delquota", "-N", "{p}"},
	{"listquota", "{p}"},
	{"create", "{p}/c"},
	{"ls", "/zookeeper/quota{p}"},
	{"delquota", "{p}n/s/t"},
	{"ls", "/zookeeper/quota{p}n"},
	{"delquota", "{p}"},
	{"ls", "/zookeeper/quota{p}"},
	{"create", "{p}/d", "dddddd"},
	{"delquota", "{p}"},
	{"listquota", "{p}"},
}

// TestQuotaCLI runs the quota script with zkCli.sh and with `warden cli` against
// Apache ZooKeeper and against Warden (enforceQuota=true), and checks that all four
// transcripts (output and exit status of every command) are zkCli.sh's against
// ZooKeeper.
func TestQuotaCLI(t *testing.T) {
	t.Parallel()
	type run struct{ name, transcript string }
	var runs []run
	for _, kind := range serverKinds() {
		t.Run(kind, func(t *testing.T) {
			s := startKind(t, kind, map[string]string{"enforceQuota": "true"})
			for _, tool := range []string{"zkCli.sh", "warden cli"} {
				var b strings.Builder
				for _, args := range quotaCommands {
					var out string
					var rc int
					if tool == "zkCli.sh" {
						out, rc = runZkCli(t, s.Addr, subst(args, "/zq")...)
					} else {
						out, rc = runWardenCLI(t, s.Addr, subst(args, "/wq")...)
						out = strings.ReplaceAll(out, "/wq", "/zq")
					}
					fmt.Fprintf(&b, "$ %s\n%src=%d\n", strings.Join(subst(args, "/zq"), " "), out, rc)
				}
				runs = append(runs, run{kind + " " + tool, normalize(b.String())})
			}
		})
	}
	if len(runs) == 0 || t.Failed() {
		return
	}
	for _, r := range runs[1:] {
		if r.transcript != runs[0].transcript {
			t.Errorf("%s differs from %s:\n%s", r.name, runs[0].name,
				unifiedDiff(runs[0].name, r.name, runs[0].transcript, r.transcript))
		}
	}
}

// TestQuotaEnforced checks, with go-zookeeper (whose error for the unknown code -125
// names it), how each server enforces quotas: hard count and byte limits on create and
// setData, a multi checked against the usage before it, soft limits that never refuse,
// the deepest quota root winning, and the usage kept in the stats node. With
// enforceQuota off nothing is refused. Both servers must also log the soft limit as
// "Quota exceeded: /q [current count=5, softCountLimit=1]" (only when enforcing).
func TestQuotaEnforced(t *testing.T) {
	t.Parallel()
	for _, enforce := range []string{"true", "false"} {
		t.Run("enforceQuota="+enforce, func(t *testing.T) {
			differential(t, map[string]string{"enforceQuota": enforce}, func(t *testing.T, s *Server) string {
				tr := quotaScenario(t, s)
				log, err := os.ReadFile(s.LogPath)
				if err != nil {
					t.Fatal(err)
				}
				const soft = "Quota exceeded: /q [current count=5, softCountLimit=1]"
				if got, want := strings.Contains(string(log), soft), enforce == "true"; got != want {
					t.Errorf("server log has %q: %v, want %v", soft, got, want)
				}
				return tr
			})
		})
	}
}

func quotaScenario(t *testing.T, s *Server) string {
	tr := &transcript{}
	c := connectGo(t, s, 10*time.Second)
	create := func(path, data string) {
		_, err := c.Create(path, []byte(data), 0, zk.WorldACL(zk.PermAll))
		tr.printf("create %s %q -> %s", path, data, errName(err))
	}
	del := func(path string) {
		tr.printf("delete %s -> %s", path, errName(c.Delete(path, -1)))
	}
	set := func(path, data string) {
		_, err := c.Set(path, []byte(data), -1)
		tr.printf("set %s %q -> %s", path, data, errName(err))
	}
	stats := func(root string) {
		d, st, err := c.Get("/zookeeper/quota" + root + "/zookeeper_stats")
		tr.printf("stats %s -> %q err=%s version=%d", root, d, errName(err), st.Version)
	}
	multi := func(name string, ops ...any) {
		res, err := c.Multi(ops...)
		tr.printf("multi %s -> %s", name, errName(err))
		for i, r := range res {
			tr.printf("multi %s[%d] -> %s", name, i, errName(r.Error))
		}
	}
	// A quota as setquota makes it: the quota path, the limits, the stats.
	quota := func(root, limits string) {
		create("/zookeeper/quota"+root, "")
		create("/zookeeper/quota"+root+"/zookeeper_limits", limits)
		create("/zookeeper/quota"+root+"/zookeeper_stats", "count=0,bytes=0")
		stats(root)
	}
	createOp := func(p string) *zk.CreateRequest {
		return &zk.CreateRequest{Path: p, Acl: zk.WorldACL(zk.PermAll)}
	}

	create("/q", "x")
	quota("/q", "count=-1,bytes=-1=;byteHardLimit=6;countHardLimit=3")
	create("/q/a", "ab")
	create("/q/b", "")
	create("/q/c", "")     // count 4 > 3
	set("/q/a", "abcdef")  // bytes 7 > 6
	set("/q/a", "abcde")   // bytes 6
	create("/q/a/big", "") // count again
	stats("/q")
	multi("delete-then-create", // checked against the usage before the multi
		&zk.DeleteRequest{Path: "/q/b", Version: -1}, createOp("/q/c"))
	multi("shrink-then-grow",
		&zk.SetDataRequest{Path: "/q/a", Data: []byte("a"), Version: -1},
		&zk.SetDataRequest{Path: "/q/b", Data: []byte("bcdef"), Version: -1})
	stats("/q")
	del("/q/b")
	create("/q/c", "")
	stats("/q")
	// Soft limits only: nothing refused (logged when enforcing).
	set("/zookeeper/quota/q/zookeeper_limits", "count=1,bytes=1")
	create("/q/d", "dd")
	set("/q/d", "dddd")
	stats("/q")
	// A nested root: its own hard limit applies, not the parent's soft ones.
	create("/q/n", "")
	quota("/q/n", "countHardLimit=2")
	create("/q/n/x", "")
	create("/q/n/y", "")
	create("/q/e", "")
	stats("/q")
	stats("/q/n")
	// Removing the limits node ends the enforcement; the stats stay as they were.
	del("/zookeeper/quota/q/n/zookeeper_limits")
	create("/q/n/y", "")
	stats("/q")
	stats("/q/n")
	return tr.String()
}
