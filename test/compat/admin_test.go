//go:build compat

package compat

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/admin/jsonshape"
)

// adminJars are the jars, besides ZooKeeper's, that its AdminServer needs
// (Jetty, the servlet API, Jackson), as Debian packages them.
var adminJars = []string{
	"jetty9-server", "jetty9-servlet", "jetty9-http", "jetty9-io", "jetty9-util", "jetty9-security",
	"servlet-api", "jackson-core", "jackson-databind", "jackson-annotations",
}

// startZooKeeperAdmin starts a standalone ZooKeeper 3.8 with its AdminServer on a free
// loopback port, and returns the server and the AdminServer's base URL.
func startZooKeeperAdmin(t *testing.T) (*Server, string) {
	t.Helper()
	port := freePort(t)
	extra := map[string]string{
		"admin.enableServer": "true", "admin.serverAddress": "127.0.0.1", "admin.serverPort": fmt.Sprint(port),
	}
	s := writeConfig(t, "zookeeper", extra)
	args := []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1",
		"-cp", javaClasspath(adminJars...), "-Dzookeeper.admin.enableServer=true",
		"org.apache.zookeeper.server.quorum.QuorumPeerMain", s.ConfigPath}
	startProcess(t, s, "java", args...)
	return s, fmt.Sprintf("http://127.0.0.1:%d", port)
}

// startWardenAdmin starts `warden server` with its AdminServer on a free loopback port.
func startWardenAdmin(t *testing.T) (*Server, string) {
	t.Helper()
	port := freePort(t)
	s := startWarden(t, map[string]string{
		"admin.enableServer": "true", "admin.serverAddress": "127.0.0.1", "admin.serverPort": fmt.Sprint(port),
	})
	return s, fmt.Sprintf("http://127.0.0.1:%d", port)
}

// adminGet fetches a command and decodes its JSON reply, polling while the AdminServer
// is not up yet.
func adminGet(t *testing.T, base, name string) (int, map[string]any) {
	t.Helper()
	hc := &http.Client{Timeout: 10 * time.Second}
	deadline := time.Now().Add(startDeadline)
	for {
		resp, err := hc.Get(base + "/commands/" + name)
		if err == nil {
			b, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s/commands/%s: %v", base, name, err)
			}
			d := json.NewDecoder(bytes.NewReader(b))
			d.UseNumber()
			var m map[string]any
			if err := d.Decode(&m); err != nil {
				t.Fatalf("%s/commands/%s: not JSON: %v\n%s", base, name, err, b)
			}
			return resp.StatusCode, m
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s/commands/%s: %v", base, name, err)
		}
		time.Sleep(pollInterval)
	}
}

// commandList returns the command names the list page links to.
func commandList(t *testing.T, base string) []string {
	t.Helper()
	adminGet(t, base, "ruok") // waits for the AdminServer
	resp, err := http.Get(base + "/commands")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	var names []string
	for _, m := range regexp.MustCompile(`<a href="/commands/([a-z_]+)">`).FindAllStringSubmatch(string(b), -1) {
		names = append(names, m[1])
	}
	return names
}

// fillState gives a server a known state: znodes, a session with an ephemeral and a
// data watch, still connected.
func fillState(t *testing.T, addr string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addr, client.WithSessionTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	for _, p := range []string{"/a", "/b"} {
		if _, err := c.Create(ctx, p, []byte("x"), client.Persistent, client.OpenACL); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(ctx, "/eph", nil, client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
}

// dataMaps are the objects whose keys are data (session ids, paths, times, member ids,
// property names): their entries are compared by number and value shape, not by key.
var dataMaps = map[string]bool{
	"dump.expiry_time_to_session_ids":     true,
	"dump.session_id_to_ephemeral_paths":  true,
	"watches.session_id_to_watched_paths": true,
	"watches_by_path.path_to_session_ids": true,
	"voting_view.current_config":          true,
}

// deliberate lists the differences between ZooKeeper 3.8's and Warden's replies that are
// intended, with the reason. A key ending in ".*" covers the keys under it that only
// ZooKeeper has; a key only Warden has must be listed by its path.
var deliberate = map[string]string{
	"monitor.*": "ZooKeeper's monitor also dumps its metrics provider (hundreds of internal counters " +
		"and summaries of its request pipeline); Warden reports the mntr values it measures (docs/admin.md)",
	"monitor.last_processed_zxid":   "Warden's mntr adds the last applied zxid (zk_last_processed_zxid)",
	"monitor.session_expired_count": "Warden's mntr counts expired sessions",
	"monitor.watch_events_sent":     "Warden's mntr counts watch events sent",
	"monitor.fsync_threshold_exceed_count": "Warden's mntr and /metrics add the slow-fsync count " +
		"that ZooKeeper keeps in srvr's server_stats only (docs/metrics.md)",
	"system_properties.*": "Java system properties do not exist in Warden; it lists the runtime, OS and " +
		"user entries of envi under their Java names, not the JVM's own properties nor zoo.cfg keys",
	"hash.error": "Warden keeps no tree digest: hash answers an error (value, not shape)",
}

// allowed returns the reason a difference is deliberate, "" if it is not.
func allowed(path string, onlyInZooKeeper bool) string {
	if r, ok := deliberate[path]; ok {
		return r
	}
	if !onlyInZooKeeper {
		return ""
	}
	for k, r := range deliberate {
		if prefix, ok := strings.CutSuffix(k, "*"); ok && strings.HasPrefix(path, prefix) {
			return r
		}
	}
	return ""
}

// mustCompare are fields that must hold entries on both servers after fillState, so the
// comparison reaches inside them.
var mustCompare = map[string][]string{
	"connections":     {"connections"},
	"stats":           {"connections"},
	"dump":            {"expiry_time_to_session_ids", "session_id_to_ephemeral_paths"},
	"watches":         {"session_id_to_watched_paths"},
	"watches_by_path": {"path_to_session_ids"},
}

// TestAdminServerMatchesZooKeeper runs every command both AdminServers have on a
// standalone ZooKeeper 3.8 and a standalone Warden in the same state, and compares the
// replies' keys and value types field by field.
func TestAdminServerMatchesZooKeeper(t *testing.T) {
	zk, zkURL := startZooKeeperAdmin(t)
	wd, wdURL := startWardenAdmin(t)
	zkNames, wdNames := commandList(t, zkURL), commandList(t, wdURL)
	wdHas := map[string]bool{}
	for _, n := range wdNames {
		wdHas[n] = true
	}
	for _, n := range zkNames {
		if !wdHas[n] {
			t.Errorf("ZooKeeper has command %s, Warden does not", n)
		}
	}
	t.Logf("ZooKeeper 3.8 commands: %v; Warden adds: %v", zkNames, extraNames(wdNames, zkNames))

	fillState(t, zk.Addr)
	fillState(t, wd.Addr)
	for _, name := range zkNames {
		if name == "connection_stat_reset" || name == "stat_reset" || name == "set_trace_mask" {
			continue // run last: they change what the others report
		}
		compareCommand(t, zkURL, wdURL, name)
	}
	for _, name := range []string{"set_trace_mask?traceMask=306", "set_trace_mask", "stat_reset", "connection_stat_reset"} {
		compareCommand(t, zkURL, wdURL, name)
	}
	compareCommand(t, zkURL, wdURL, "no_such_command")
}

func compareCommand(t *testing.T, zkURL, wdURL, name string) {
	t.Helper()
	zs, zm := adminGet(t, zkURL, name)
	ws, wm := adminGet(t, wdURL, name)
	if name == "dump" {
		dropEmptyBuckets(zm, "expiry_time_to_session_ids")
	}
	if zs != ws {
		t.Errorf("%s: HTTP status ZooKeeper %d, Warden %d", name, zs, ws)
	}
	if zm["command"] != wm["command"] {
		t.Errorf("%s: command ZooKeeper %v, Warden %v", name, zm["command"], wm["command"])
	}
	for _, f := range mustCompare[name] {
		for who, m := range map[string]map[string]any{"ZooKeeper": zm, "Warden": wm} {
			switch v := m[f].(type) {
			case []any:
				if len(v) == 0 {
					t.Errorf("%s.%s is empty on %s", name, f, who)
				}
			case map[string]any:
				if len(v) == 0 {
					t.Errorf("%s.%s is empty on %s", name, f, who)
				}
			default:
				t.Errorf("%s.%s on %s is %s", name, f, who, jsonshape.Kind(v))
			}
		}
	}
	if (zm["error"] == nil) != (wm["error"] == nil) && allowed(baseName(name)+".error", false) == "" {
		t.Errorf("%s: error ZooKeeper %v, Warden %v", name, zm["error"], wm["error"])
	}
	diffs := jsonshape.Diff(baseName(name), zm, wm, jsonshape.Options{DataMaps: dataMaps,
		NullMatches: func(path string) bool { return strings.HasSuffix(path, ".error") }})
	for _, d := range diffs {
		path, what, _ := strings.Cut(d, ": ")
		if r := allowed(path, what == "only in ZooKeeper"); r != "" {
			t.Logf("deliberate: %s (%s)", d, r)
			continue
		}
		t.Errorf("difference: %s", d)
	}
}

// dropEmptyBuckets removes the empty sets from ZooKeeper's expiry buckets. ZooKeeper's
// ExpiryQueue moves a session to a later bucket when it is touched and leaves the old
// bucket behind, empty, until its expirer passes that time; so whether dump lists an
// empty bucket depends on whether fillState's requests crossed a tick. Warden lists only
// the buckets that hold sessions.
func dropEmptyBuckets(reply map[string]any, field string) {
	buckets, _ := reply[field].(map[string]any)
	for k, v := range buckets {
		if ids, ok := v.([]any); ok && len(ids) == 0 {
			delete(buckets, k)
		}
	}
}

func baseName(name string) string {
	n, _, _ := strings.Cut(name, "?")
	return n
}

func extraNames(have, base []string) []string {
	in := map[string]bool{}
	for _, n := range base {
		in[n] = true
	}
	var out []string
	for _, n := range have {
		if !in[n] {
			out = append(out, n)
		}
	}
	return out
}

// TestAdminServerServesConsole checks that `warden server` mounts the web
// console on its AdminServer: the page, and its API reading the tree
// through the server's own client port.
func TestAdminServerServesConsole(t *testing.T) {
	_, base := startWardenAdmin(t)
	adminGet(t, base, "ruok") // waits until the AdminServer is up
	hc := &http.Client{Timeout: 10 * time.Second}
	for _, tc := range []struct{ path, contentType, body string }{
		{"/ui/", "text/html", "<title>Warden console</title>"},
		{"/ui/api/children?path=/", "application/json", `"zookeeper"`},
	} {
		resp, err := hc.Get(base + tc.path)
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatalf("GET %s: %v", tc.path, err)
		}
		if resp.StatusCode != http.StatusOK || !strings.HasPrefix(resp.Header.Get("Content-Type"), tc.contentType) || !strings.Contains(string(b), tc.body) {
			t.Errorf("GET %s = %d %s, want 200 %s containing %s:\n%s", tc.path, resp.StatusCode, resp.Header.Get("Content-Type"), tc.contentType, tc.body, b)
		}
	}
}
