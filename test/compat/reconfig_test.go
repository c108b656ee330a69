//go:build compat

package compat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/wire"
)

// Dynamic reconfiguration from the client side: the Go client's Reconfig,
// IncrementalReconfig, GetConfigW, UpdateServers and WithEnsembleTracking, and
// `warden cli reconfig/config` next to zkCli.sh's, against a 3-member ensemble with
// reconfigEnabled=true and a super user (reconfig needs WRITE on /zookeeper/config).
//
// reconfigKinds lists the servers these tests run against: Apache ZooKeeper and Warden.

const (
	superPassword   = "superpw"
	reconfigTimeout = 60 * time.Second // one scenario against a JVM ensemble
)

func reconfigKinds() []string { return []string{"zookeeper", "warden"} }

// startReconfigEnsemble starts an ensemble that allows reconfig, with every member's
// client address in /zookeeper/config.
func startReconfigEnsemble(t *testing.T, kind string) *Ensemble {
	t.Helper()
	return startEnsembleWith(t, kind, ensembleOptions{
		extra: map[string]string{
			"reconfigEnabled":   "true",
			"standaloneEnabled": "false",
			"skipACL":           "no",
			"DigestAuthenticationProvider.superDigest": auth.DigestID("super:" + superPassword),
		},
		clientInServerLines: true,
	})
}

// superConn connects as the super user.
func superConn(t *testing.T, ctx context.Context, servers string, opts ...client.Option) *client.Conn {
	t.Helper()
	return goConn(t, ctx, servers, append([]client.Option{client.WithAuth("digest", []byte("super:"+superPassword))}, opts...)...)
}

// spareServerLine returns a server line for id on ports that nothing listens on: a
// member that is added to the configuration but never started (a quorum of the new
// configuration is still the running members).
func spareServerLine(t *testing.T, e *Ensemble, id int) string {
	t.Helper()
	host := e.Members[0].Host
	p := freePorts(t, host, 3, e.takenPorts())
	return fmt.Sprintf("server.%d=%s:%d:%d:participant;%s:%d", id, host, p[0], p[1], host, p[2])
}

func mustConfig(t *testing.T, data []byte) client.EnsembleConfig {
	t.Helper()
	cfg, err := client.ParseConfig(data)
	if err != nil {
		t.Fatalf("configuration %q: %v", data, err)
	}
	return cfg
}

func configIDs(cfg client.EnsembleConfig) []int64 {
	var out []int64
	for _, s := range cfg.Servers {
		out = append(out, s.ID)
	}
	return out
}

// TestReconfigGoClient: incremental and non-incremental reconfig with and without a
// version, the config watch, and the errors, through the Go client.
func TestReconfigGoClient(t *testing.T) {
	for _, kind := range reconfigKinds() {
		t.Run(kind, func(t *testing.T) {
			e := startReconfigEnsemble(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), reconfigTimeout)
			defer cancel()
			all := ConnectString(e.Members...)
			admin := superConn(t, ctx, all+"/chroot")

			data, st, cfgW, err := admin.GetConfigW(ctx)
			if err != nil {
				t.Fatalf("GetConfigW: %v", err)
			}
			cfg := mustConfig(t, data)
			if !slices.Equal(configIDs(cfg), []int64{1, 2, 3}) || cfg.Version == 0 {
				t.Fatalf("initial configuration %q", data)
			}
			if got, want := cfg.ClientAddrs(), []string{e.Members[0].Addr, e.Members[1].Addr,
				net.JoinHostPort(e.Members[2].Host, strconv.Itoa(e.Members[2].ClientPort))}; !slices.Equal(got, want) {
				t.Fatalf("client addresses %v, want %v", got, want)
			}

			// Incremental add, conditional on the current version; the watch fires.
			four := spareServerLine(t, e, 4)
			data, st2, err := admin.IncrementalReconfig(ctx, []string{four}, nil, cfg.Version)
			if err != nil {
				t.Fatalf("add server 4 from version %x: %v", cfg.Version, err)
			}
			added := mustConfig(t, data)
			if !slices.Equal(configIDs(added), []int64{1, 2, 3, 4}) || added.Version <= cfg.Version {
				t.Fatalf("after adding 4: %q", data)
			}
			if st2.Mzxid <= st.Mzxid || st2.Mzxid != added.Version {
				t.Errorf("stat after reconfig: mzxid %#x, want > %#x and = version %x", st2.Mzxid, st.Mzxid, added.Version)
			}
			select {
			case ev := <-cfgW:
				if ev.Type != wire.EventNodeDataChanged || ev.Path != client.ConfigPath {
					t.Errorf("config watch: %+v", ev)
				}
			case <-time.After(eventDeadline):
				t.Fatalf("config watch did not fire within %v", eventDeadline)
			}
			got, _, err := admin.GetConfig(ctx)
			if err != nil || string(got) != string(data) {
				t.Errorf("GetConfig after reconfig = %q, %v; want %q", got, err, data)
			}

			// The old version no longer matches.
			if _, _, err := admin.IncrementalReconfig(ctx, nil, []string{"4"}, cfg.Version); !errors.Is(err, client.ErrBadVersion) {
				t.Errorf("reconfig from a stale version: %v, want ErrBadVersion", err)
			}
			// Remove, any version.
			data, _, err = admin.IncrementalReconfig(ctx, nil, []string{"4"}, client.AnyConfig)
			if err != nil || !slices.Equal(configIDs(mustConfig(t, data)), []int64{1, 2, 3}) {
				t.Fatalf("remove server 4: %q, %v", data, err)
			}

			// Non-incremental: the same three members, restated.
			cur := mustConfig(t, data)
			var members []string
			for _, line := range strings.Split(string(data), "\n") {
				if strings.HasPrefix(line, "server.") {
					members = append(members, line)
				}
			}
			data, _, err = admin.Reconfig(ctx, members, cur.Version)
			if err != nil || !slices.Equal(configIDs(mustConfig(t, data)), []int64{1, 2, 3}) {
				t.Fatalf("non-incremental reconfig: %q, %v", data, err)
			}

			// Errors.
			if _, _, err := admin.IncrementalReconfig(ctx, []string{fmt.Sprintf("server.5=%s:1:2", e.Members[0].Host)}, nil, client.AnyConfig); !errors.Is(err, client.ErrBadArguments) {
				t.Errorf("joining server without a client port: %v, want ErrBadArguments", err)
			}
			if _, _, err := admin.Reconfig(ctx, []string{members[0], spareServerLine(t, e, 5), spareServerLine(t, e, 6)}, client.AnyConfig); !errors.Is(err, client.ErrNewConfigNoQuorum) {
				t.Errorf("membership without a synced quorum: %v, want ErrNewConfigNoQuorum", err)
			}
			anon := goConn(t, ctx, all)
			if _, _, err := anon.IncrementalReconfig(ctx, []string{spareServerLine(t, e, 4)}, nil, client.AnyConfig); !errors.Is(err, client.ErrNoAuth) {
				t.Errorf("reconfig without super: %v, want ErrNoAuth", err)
			}
		})
	}
}

// TestReconfigDisabled: a server with reconfigEnabled=false (the default) refuses
// reconfig with ReconfigDisabled, before looking at the request; GetConfig still works.
func TestReconfigDisabled(t *testing.T) {
	t.Parallel()
	for _, kind := range serverKinds() {
		t.Run(kind, func(t *testing.T) {
			s := startKind(t, kind, nil)
			ctx, cancel := context.WithTimeout(context.Background(), reconfigTimeout)
			defer cancel()
			c := goConn(t, ctx, s.Addr)
			if _, _, err := c.IncrementalReconfig(ctx, nil, []string{"1"}, client.AnyConfig); !errors.Is(err, client.ErrReconfigDisabled) {
				t.Errorf("IncrementalReconfig: %v, want ErrReconfigDisabled", err)
			}
			if _, _, err := c.Reconfig(ctx, []string{"server.1=127.0.0.1:1:2;3"}, 7); !errors.Is(err, client.ErrReconfigDisabled) {
				t.Errorf("Reconfig: %v, want ErrReconfigDisabled", err)
			}
			if _, _, err := c.GetConfig(ctx); err != nil {
				t.Errorf("GetConfig: %v", err)
			}
		})
	}
}

// TestReconfigMovesTrackingClient: a client with WithEnsembleTracking, connected to a
// follower, follows the reconfig that removes that follower: it updates its server list
// from the new configuration and moves to a remaining member with its session. A client
// told with UpdateServers does the same.
func TestReconfigMovesTrackingClient(t *testing.T) {
	for _, kind := range reconfigKinds() {
		t.Run(kind, func(t *testing.T) {
			e := startReconfigEnsemble(t, kind)
			ctx, cancel := context.WithTimeout(context.Background(), reconfigTimeout)
			defer cancel()
			leader, followers := e.Roles(t)
			victim, stays := followers[0], []*Member{leader, followers[1]}

			// Both clients know all three members but are pinned to the victim until
			// connected (their dialer refuses the others); the configuration then names
			// the same three, so the tracking client has no reason to move before the
			// reconfig.
			var pinned atomic.Bool
			pinned.Store(true)
			dial := client.WithDialer(func(ctx context.Context, network, addr string) (net.Conn, error) {
				if pinned.Load() && addr != victim.Addr {
					return nil, fmt.Errorf("test: pinned to member %d", victim.ID)
				}
				var d net.Dialer
				return d.DialContext(ctx, network, addr)
			})
			all := ConnectString(e.Members...)
			tracked := goConn(t, ctx, all, client.WithEnsembleTracking(), dial)
			manual := goConn(t, ctx, all, dial)
			pinned.Store(false)
			sessions := map[*client.Conn]int64{tracked: tracked.SessionID(), manual: manual.SessionID()}
			for _, sid := range sessions {
				if m := e.SessionMember(t, sid); m != victim {
					t.Fatalf("session %#x on member %d, want %d", sid, m.ID, victim.ID)
				}
			}

			admin := superConn(t, ctx, ConnectString(stays...))
			data, _, err := admin.IncrementalReconfig(ctx, nil, []string{strconv.Itoa(victim.ID)}, client.AnyConfig)
			if err != nil {
				t.Fatalf("remove member %d: %v", victim.ID, err)
			}
			want := mustConfig(t, data).ClientAddrs()
			slices.Sort(want)
			if err := manual.UpdateServers(strings.Join(want, ",")); err != nil {
				t.Fatal(err)
			}
			for c, sid := range sessions {
				deadline := time.Now().Add(eventDeadline)
				for {
					got := c.Servers()
					slices.Sort(got)
					srv := c.Server()
					if slices.Equal(got, want) && srv != "" && srv != victim.Addr {
						break
					}
					if time.Now().After(deadline) {
						t.Fatalf("client servers %v on %q; want %v, off member %d", got, srv, want, victim.ID)
					}
					time.Sleep(pollInterval)
				}
				if c.SessionID() != sid {
					t.Fatalf("session changed from %#x to %#x", sid, c.SessionID())
				}
				if _, _, err := c.Exists(ctx, "/"); err != nil {
					t.Fatalf("request after the move: %v", err)
				}
				if m := e.SessionMember(t, sid); m == victim {
					t.Fatalf("session %#x still on the removed member %d", sid, victim.ID)
				}
			}
		})
	}
}

var (
	reVersionLine = regexp.MustCompile(`version=[0-9a-f]+`)
	reClientList  = regexp.MustCompile(`(?m)^[0-9a-f]+ (\S+)$`)
)

// normalizeReconfig makes a reconfig transcript comparable between runs: configuration
// versions (zxids) become <version>, config -c's server list is sorted (zkCli.sh prints
// it in Java hash-table order), then the ensemble's hosts and ports and the zxids.
// reMzxidLine matches the mZxid line of a stat.
var reMzxidLine = regexp.MustCompile(`mZxid = 0x[0-9a-f]+`)

func normalizeReconfig(e *Ensemble, s string) string {
	s = reVersionLine.ReplaceAllString(s, "version=<version>")
	// The two tools run one after the other on the same ensemble: the
	// second starts where the first one's reconfigs left /zookeeper/config,
	// whose mzxid is a reconfig's zxid on one server and the initial 0 on
	// the other.
	s = reMzxidLine.ReplaceAllString(s, "mZxid = <mzxid>")
	s = reClientList.ReplaceAllStringFunc(s, func(m string) string {
		list := strings.Split(reClientList.FindStringSubmatch(m)[1], ",")
		slices.Sort(list)
		return "<version> " + strings.Join(list, ",")
	})
	return e.Normalize(s)
}

// TestReconfigCLI runs the same reconfig/config script through zkCli.sh and `warden
// cli` (commands on stdin, one process each) against one ensemble and compares the
// outputs. Each script leaves the membership as it found it.
func TestReconfigCLI(t *testing.T) {
	for _, kind := range reconfigKinds() {
		t.Run(kind, func(t *testing.T) {
			e := startReconfigEnsemble(t, kind)
			four := spareServerLine(t, e, 4)
			m := e.Members
			members := fmt.Sprintf("server.1=%s:%d:%d;%s:%d,server.2=%s:%d:%d;%s:%d,server.3=%s:%d:%d;%d",
				m[0].Host, m[0].QuorumPort, m[0].ElectionPort, m[0].Host, m[0].ClientPort,
				m[1].Host, m[1].QuorumPort, m[1].ElectionPort, m[1].Host, m[1].ClientPort,
				m[2].Host, m[2].QuorumPort, m[2].ElectionPort, m[2].ClientPort)
			file := t.TempDir() + "/dynamic.cfg"
			if err := os.WriteFile(file, []byte(strings.ReplaceAll(members, ",", "\n")+"\n"), 0o644); err != nil {
				t.Fatal(err)
			}
			script := strings.Join([]string{
				"config",
				"config -c",
				"config -s",
				"reconfig -add " + four,
				"reconfig",
				"reconfig -add " + four + " -v xyz",
				"reconfig -members " + members + " -remove 4",
				"reconfig -file " + file + " -members " + members,
				"reconfig -file " + file + ".missing",
				"addauth digest super:" + superPassword,
				"reconfig -s -add " + four,
				"config -c",
				"reconfig -remove 4 -v 1",
				"reconfig -remove 4",
				"reconfig -members " + members,
				"reconfig -file " + file,
				"reconfig -add server.5=" + m[0].Host + ":1:2",
				"config",
			}, "\n") + "\n"
			zk, zrc := runZkCliFlags(t, m[0].Addr, nil, script)
			wd, wrc := runWardenCLIStdin(t, m[0].Addr, script)
			zk = strings.ReplaceAll(normalizeReconfig(e, zk), file, "<file>")
			wd = strings.ReplaceAll(normalizeReconfig(e, wd), file, "<file>")
			if zk != wd || zrc != wrc {
				t.Errorf("zkCli.sh (rc=%d):\n%s\nwarden cli (rc=%d):\n%s\ndiff:\n%s",
					zrc, zk, wrc, wd, unifiedDiff("zkCli.sh", "warden cli", zk, wd))
			} else {
				t.Logf("normalised transcript (both tools):\n%s", zk)
			}
		})
	}
}

// runWardenCLIStdin runs `warden cli -server addr` with the commands on stdin (zkCli.sh's
// non-interactive mode: every line runs, whatever fails) like runZkCliFlags.
func runWardenCLIStdin(t *testing.T, addr, stdin string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zkCliDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, wardenCLI(t), "-server", addr)
	cmd.Stdin = strings.NewReader(stdin)
	var out strings.Builder
	cmd.Stdout, cmd.Stderr = &out, &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("warden cli (stdin %q): no exit within %v", stdin, zkCliDeadline)
	}
	rc := 0
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		rc = ee.ExitCode()
	} else if err != nil {
		t.Fatalf("warden cli: %v", err)
	}
	var kept []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.TrimSpace(line) != "" {
			kept = append(kept, line+"\n")
		}
	}
	return strings.Join(kept, ""), rc
}
