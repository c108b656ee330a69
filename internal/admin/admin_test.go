package admin

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
)

// fields lists, per command, the fields its reply has on a standalone
// server besides "command" and "error" (from ZooKeeper 3.8/3.9's
// Commands.java and what its AdminServer answers).
var fields = map[string][]string{
	"connection_stat_reset":          nil,
	"configuration":                  {"client_port", "data_dir", "data_log_dir", "tick_time", "max_client_cnxns", "min_session_timeout", "max_session_timeout", "server_id", "client_port_listen_backlog"},
	"connections":                    {"connections", "secure_connections"},
	"hash":                           {"digests"},
	"dirs":                           {"datadir_size", "logdir_size"},
	"dump":                           {"expiry_time_to_session_ids", "session_id_to_ephemeral_paths"},
	"environment":                    {"zookeeper.version", "host.name", "java.version", "os.name", "user.dir"},
	"get_trace_mask":                 {"tracemask"},
	"initial_configuration":          {"initial_configuration"},
	"is_read_only":                   {"read_only"},
	"last_snapshot":                  {"zxid", "timestamp"},
	"leader":                         nil,
	"monitor":                        {"version", "server_state", "avg_latency", "znode_count", "watch_count", "ephemerals_count", "num_alive_connections", "packets_received", "packets_sent"},
	"observer_connection_stat_reset": nil,
	"ruok":                           nil,
	"set_trace_mask":                 nil,
	"server_stats":                   {"version", "read_only", "server_stats", "client_response", "node_count"},
	"stats":                          {"version", "read_only", "server_stats", "client_response", "node_count", "connections", "secure_connections"},
	"stat_reset":                     nil,
	"observers":                      {"synced_observers", "observers"},
	"system_properties":              {"java.version", "os.name", "user.dir"},
	"voting_view":                    {"current_config"},
	"watches":                        {"session_id_to_watched_paths"},
	"watches_by_path":                {"path_to_session_ids"},
	"watch_summary":                  {"num_connections", "num_paths", "num_total_watches"},
	"zabstate":                       {"voting", "zabstate"},
}

// commandErrors are the commands whose reply on a standalone server
// carries an error, and that error.
var commandErrors = map[string]string{
	"leader":         "server is not initialized",
	"set_trace_mask": "setTraceMask requires long traceMask argument",
	"hash":           "hash is not supported",
}

func TestEveryCommandByEveryNameAnswersZooKeeperShapedJSON(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)
	for _, c := range commands {
		if c.auth || c.post {
			continue // TestSnapshotAuth, TestPostCommands
		}
		want, ok := fields[c.names[0]]
		if !ok {
			t.Fatalf("command %s has no entry in the fields table", c.names[0])
		}
		for _, name := range c.names {
			t.Run(name, func(t *testing.T) {
				r := do(t, a, http.MethodGet, "/commands/"+name, "", nil)
				if r.status != http.StatusOK {
					t.Fatalf("status %d\n%s", r.status, r.body)
				}
				if ct := r.header.Get("Content-Type"); ct != "application/json" {
					t.Errorf("Content-Type %q", ct)
				}
				m := r.json(t)
				if m["command"] != c.names[0] {
					t.Errorf("command = %v, want %s", m["command"], c.names[0])
				}
				e, present := m["error"]
				if !present {
					t.Fatalf("no error field: %s", keysOf(m))
				}
				if msg, bad := commandErrors[c.names[0]]; bad {
					if s, _ := e.(string); !strings.HasPrefix(s, msg) {
						t.Errorf("error = %v, want %q", e, msg)
					}
				} else if e != nil {
					t.Errorf("error = %v, want null", e)
				}
				for _, f := range want {
					if _, ok := m[f]; !ok {
						t.Errorf("no %q field; have %s", f, keysOf(m))
					}
				}
				for k := range m {
					if k != strings.ToLower(k) && c.names[0] != "environment" && c.names[0] != "system_properties" {
						t.Errorf("key %q is not snake_case", k)
					}
				}
			})
		}
	}
}

func TestCommandListLinksEveryCommand(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)
	for _, path := range []string{"/commands", "/commands/"} {
		r := do(t, a, http.MethodGet, path, "", nil)
		if r.status != http.StatusOK {
			t.Fatalf("%s: status %d", path, r.status)
		}
		links := regexp.MustCompile(`<a href="/commands/([a-z_]+)">([a-z_]+)</a>\n<br/>\n`).FindAllStringSubmatch(string(r.body), -1)
		var names []string
		for _, l := range links {
			if l[1] != l[2] {
				t.Errorf("link %q shows %q", l[1], l[2])
			}
			names = append(names, l[1])
		}
		if !slices.Equal(names, CommandNames()) {
			t.Errorf("%s links %v, want %v", path, names, CommandNames())
		}
		if len(names) != 29 {
			t.Errorf("%d commands, want ZooKeeper 3.9's 28 and shed_connections", len(names))
		}
	}
}

func TestUnknownCommandAndMethods(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)

	r := do(t, a, http.MethodGet, "/commands/nosuch", "", nil)
	// ZooKeeper's exact bytes for an unknown command.
	want := "{\n  \"command\" : \"nosuch\",\n  \"error\" : \"Unknown command: nosuch\"\n}"
	if r.status != http.StatusOK || string(r.body) != want {
		t.Errorf("unknown command: %d %q, want 200 %q", r.status, r.body, want)
	}
	r = do(t, a, http.MethodGet, "/commands/ruok", "", nil)
	if want := "{\n  \"command\" : \"ruok\",\n  \"error\" : null\n}"; string(r.body) != want {
		t.Errorf("ruok = %q, want %q", r.body, want)
	}
	for _, tc := range []struct {
		method, path string
		status       int
	}{
		{http.MethodPut, "/commands/ruok", http.StatusMethodNotAllowed},
		{http.MethodDelete, "/commands/ruok", http.StatusMethodNotAllowed},
		{http.MethodTrace, "/commands/ruok", http.StatusForbidden},
		{http.MethodPost, "/commands/ruok", http.StatusMethodNotAllowed},
		{http.MethodGet, "/commands/restore", http.StatusMethodNotAllowed},
		{http.MethodHead, "/commands/ruok", http.StatusOK},
		{http.MethodGet, "/elsewhere", http.StatusNotFound},
	} {
		r := do(t, a, tc.method, tc.path, "", strings.NewReader("{}"))
		if r.status != tc.status {
			t.Errorf("%s %s: status %d, want %d\n%s", tc.method, tc.path, r.status, tc.status, r.body)
		}
	}
	// A JSON reply for a command asked with the wrong method.
	r = do(t, a, http.MethodPost, "/commands/srvr", "", strings.NewReader("{}"))
	if m := r.json(t); m["command"] != "server_stats" || m["error"] == nil {
		t.Errorf("POST srvr: %s", r.body)
	}
}

// state is a known server state: n znodes, and a session with an
// ephemeral and a data watch.
type state struct {
	c       *client.Conn
	session int64
	n       int
}

func makeState(t *testing.T, srv *server.Server, n int) state {
	t.Helper()
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	for i := 0; i < n; i++ {
		if _, err := c.Create(ctx, fmt.Sprintf("/n%d", i), []byte("x"), client.Persistent, client.OpenACL); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Create(ctx, "/eph", nil, client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := c.GetW(ctx, "/n0"); err != nil {
		t.Fatal(err)
	}
	return state{c: c, session: c.SessionID(), n: n}
}

func TestValuesReflectTheServersState(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)
	before := num(t, run(t, a, "srvr", "server_stats"), "node_count")
	st := makeState(t, srv.Server, 7)
	sid := strconv.FormatInt(st.session, 10)

	srvr := run(t, a, "srvr", "server_stats")
	if got := num(t, srvr, "node_count"); got != before+8 {
		t.Errorf("node_count = %d, want %d + 7 znodes + 1 ephemeral", got, before)
	}
	ss := obj(t, srvr, "server_stats")
	if ss["server_state"] != "standalone" {
		t.Errorf("server_state = %v", ss["server_state"])
	}
	if got, want := num(t, ss, "last_processed_zxid"), srv.LastZxid(); got != want || want == 0 {
		t.Errorf("last_processed_zxid = %d, want %d", got, want)
	}
	if num(t, ss, "packets_received") < 9 || num(t, ss, "num_alive_client_connections") != 1 {
		t.Errorf("server_stats = %v", ss)
	}
	cr := obj(t, srvr, "client_response")
	if num(t, cr, "max_buffer_size") <= 0 || num(t, cr, "min_buffer_size") > num(t, cr, "max_buffer_size") {
		t.Errorf("client_response = %v", cr)
	}
	if _, ok := srvr["proposal_stats"]; ok {
		t.Error("proposal_stats on a standalone server")
	}

	mntr := run(t, a, "mntr", "monitor")
	if num(t, mntr, "znode_count") != num(t, srvr, "node_count") || num(t, mntr, "ephemerals_count") != 1 || num(t, mntr, "watch_count") != 1 {
		t.Errorf("mntr = %v", mntr)
	}
	if _, ok := mntr["avg_latency"].(json.Number); !ok {
		t.Errorf("avg_latency = %#v, want a number", mntr["avg_latency"])
	}

	dump := run(t, a, "dump", "dump")
	eph := obj(t, dump, "session_id_to_ephemeral_paths")
	if got := fmt.Sprint(eph[sid]); got != "[/eph]" {
		t.Errorf("ephemerals of %s = %s (%v)", sid, got, eph)
	}
	found := false
	for at, ids := range obj(t, dump, "expiry_time_to_session_ids") {
		for _, id := range ids.([]any) {
			if id.(json.Number).String() == sid {
				found = true
				ms, _ := strconv.ParseInt(at, 10, 64)
				// Deadlines are rounded up to the next tick, as ZooKeeper's
				// expiry buckets are.
				tick := time.Duration(srv.Config().TickTime) * time.Millisecond
				if d := time.UnixMilli(ms).Sub(srv.Clock.Now()); d <= 0 || d > st.c.SessionTimeout()+tick {
					t.Errorf("session expires in %v, timeout %v, tick %v", d, st.c.SessionTimeout(), tick)
				}
			}
		}
	}
	if !found {
		t.Errorf("session %s not in expiry_time_to_session_ids %v", sid, dump)
	}

	if got := fmt.Sprint(obj(t, run(t, a, "wchc", "watches"), "session_id_to_watched_paths")); got != "map["+sid+":[/n0]]" {
		t.Errorf("watches = %s", got)
	}
	byPath := obj(t, run(t, a, "wchp", "watches_by_path"), "path_to_session_ids")
	if len(byPath) != 1 || fmt.Sprint(byPath["/n0"]) != "["+sid+"]" {
		t.Errorf("watches_by_path = %v", byPath)
	}
	wchs := run(t, a, "wchs", "watch_summary")
	if num(t, wchs, "num_connections") != 1 || num(t, wchs, "num_paths") != 1 || num(t, wchs, "num_total_watches") != 1 {
		t.Errorf("watch_summary = %v", wchs)
	}

	cons := list(t, run(t, a, "cons", "connections"), "connections")
	if len(cons) != 1 {
		t.Fatalf("connections = %v", cons)
	}
	c0 := cons[0].(map[string]any)
	if num(t, c0, "session_id") != st.session || c0["last_operation"] != "GETD" || num(t, c0, "packets_received") < 9 ||
		num(t, c0, "session_timeout") != st.c.SessionTimeout().Milliseconds() || num(t, c0, "interest_ops") != 1 {
		t.Errorf("connection = %v", c0)
	}
	if host, _, err := net.SplitHostPort(c0["remote_socket_address"].(string)); err != nil || host != "127.0.0.1" {
		t.Errorf("remote_socket_address = %v", c0["remote_socket_address"])
	}
	stat := run(t, a, "stat", "stats")
	brief := list(t, stat, "connections")[0].(map[string]any)
	if keysOf(brief) != "interest_ops,outstanding_requests,packets_received,packets_sent,remote_socket_address" {
		t.Errorf("stat's connection fields: %s", keysOf(brief))
	}

	conf := run(t, a, "conf", "configuration")
	cfg := srv.Config()
	if num(t, conf, "client_port") != int64(srv.Addr().(*net.TCPAddr).Port) || num(t, conf, "tick_time") != int64(cfg.TickTime) ||
		!strings.HasSuffix(conf["data_dir"].(string), "/version-2") || num(t, conf, "server_id") != 0 {
		t.Errorf("configuration = %v", conf)
	}
	dirs := run(t, a, "dirs", "dirs")
	if d, l := srv.DirSizes(); num(t, dirs, "datadir_size") != d || num(t, dirs, "logdir_size") != l || d == 0 {
		t.Errorf("dirs = %v, want %d %d", dirs, d, l)
	}
	if ro := run(t, a, "isro", "is_read_only"); ro["read_only"] != false {
		t.Errorf("read_only = %v", ro["read_only"])
	}
	env := run(t, a, "envi", "environment")
	if env["zookeeper.version"] != strings.TrimPrefix(server.VersionLine(), "Zookeeper version: ") {
		t.Errorf("zookeeper.version = %v", env["zookeeper.version"])
	}
}

func TestResetsZeroTheCounters(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)
	makeState(t, srv.Server, 3)

	conn := func() map[string]any {
		return list(t, run(t, a, "cons", "connections"), "connections")[0].(map[string]any)
	}
	if c := conn(); num(t, c, "packets_received") == 0 || num(t, c, "max_latency") < 0 || c["last_operation"] == "NA" {
		t.Fatalf("before crst: %v", c)
	}
	run(t, a, "crst", "connection_stat_reset")
	c := conn()
	if num(t, c, "packets_received") != 0 || num(t, c, "packets_sent") != 0 || c["last_operation"] != "NA" ||
		num(t, c, "last_zxid") != -1 || num(t, c, "last_cxid") != -1 {
		t.Errorf("after crst: %v", c)
	}

	ss := obj(t, run(t, a, "srvr", "server_stats"), "server_stats")
	if num(t, ss, "packets_received") == 0 || num(t, ss, "packets_sent") == 0 {
		t.Fatalf("before srst: %v", ss)
	}
	run(t, a, "srst", "stat_reset")
	srvr := run(t, a, "srvr", "server_stats")
	ss = obj(t, srvr, "server_stats")
	if num(t, ss, "packets_received") != 0 || num(t, ss, "packets_sent") != 0 || num(t, ss, "max_latency") != 0 {
		t.Errorf("after srst: %v", ss)
	}
	if cr := obj(t, srvr, "client_response"); num(t, cr, "max_buffer_size") != -1 {
		t.Errorf("client_response after srst: %v", cr)
	}
}

func TestTraceMask(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.FourLetterWhitelist = map[string]bool{"*": true} }))
	a := startAdmin(t, srv.Server, nil)
	if got := num(t, run(t, a, "gtmk", "get_trace_mask"), "tracemask"); got != 306 {
		t.Errorf("default tracemask %d, want 306", got)
	}
	if got := num(t, run(t, a, "stmk?traceMask=12", "set_trace_mask"), "tracemask"); got != 12 {
		t.Errorf("stmk answered %d", got)
	}
	if got := num(t, run(t, a, "get_trace_mask", "get_trace_mask"), "tracemask"); got != 12 {
		t.Errorf("tracemask after stmk %d, want 12", got)
	}
	// The four-letter words share the mask: stmk sends it as a big-endian
	// long after the command.
	nc, err := net.DialTimeout("tcp", srv.Addr().String(), wait)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(wait))
	nc.Write(append([]byte("stmk"), 0, 0, 0, 0, 0, 0, 0x01, 0x32))
	out, err := io.ReadAll(nc)
	nc.Close()
	if err != nil || string(out) != "306" {
		t.Errorf("4lw stmk answered %q, %v", out, err)
	}
	if got := num(t, run(t, a, "gtmk", "get_trace_mask"), "tracemask"); got != 306 {
		t.Errorf("tracemask after 4lw stmk %d, want 306", got)
	}
	r := do(t, a, http.MethodGet, "/commands/stmk?traceMask=x", "", nil)
	if m := r.json(t); m["error"] != "setTraceMask requires long traceMask argument, got x" || m["command"] != "set_trace_mask" {
		t.Errorf("bad mask: %s", r.body)
	}
}

func TestLastSnapshot(t *testing.T) {
	srv := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.SnapCount = 4 }))
	a := startAdmin(t, srv.Server, nil)
	if m := run(t, a, "lsnp", "last_snapshot"); m["zxid"] != "ffffffffffffffff" || num(t, m, "timestamp") != -1 {
		t.Errorf("before any snapshot: %v", m)
	}
	makeState(t, srv.Server, 10)
	var m map[string]any
	eventually(t, "a snapshot", func() bool {
		m = run(t, a, "lsnp", "last_snapshot")
		return m["zxid"] != "ffffffffffffffff"
	})
	zxid, err := strconv.ParseInt(m["zxid"].(string), 16, 64)
	if err != nil || zxid <= 0 || zxid > srv.LastZxid() {
		t.Errorf("zxid %v, last applied %x", m["zxid"], srv.LastZxid())
	}
	if ts := num(t, m, "timestamp"); time.Since(time.Unix(ts, 0)).Abs() > time.Minute {
		t.Errorf("timestamp %d is not now", ts)
	}
}

func TestSnapshotAuth(t *testing.T) {
	const super = "super:test"
	srv := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.SuperDigest = auth.DigestID(super) }))
	a := startAdmin(t, srv.Server, nil)
	st := makeState(t, srv.Server, 5)

	for _, tc := range []struct {
		authz, err string
		status     int
	}{
		{"", "Auth info is missing for the command", http.StatusUnauthorized},
		{"sasl bob", "Not authenticated", http.StatusUnauthorized},
		{"digest", "Not authenticated", http.StatusUnauthorized},
		{"digest a b c", "Not authenticated", http.StatusUnauthorized},
	} {
		r := do(t, a, http.MethodGet, "/commands/snapshot", tc.authz, nil)
		if m := r.json(t); r.status != tc.status || m["error"] != tc.err || m["command"] != "snapshot" {
			t.Errorf("Authorization %q: %d %s", tc.authz, r.status, r.body)
		}
	}

	// The root is world:anyone ALL: any digest identity may snapshot.
	r := do(t, a, http.MethodGet, "/commands/snap", "digest alice:pw", nil)
	if r.status != http.StatusOK {
		t.Fatalf("snapshot: %d %s", r.status, r.body)
	}
	if got, want := r.header.Get("last_zxid"), fmt.Sprintf("0x%x", srv.LastZxid()); got != want {
		t.Errorf("last_zxid header %q, want %q", got, want)
	}
	if got := r.header.Get("snapshot_size"); got != strconv.Itoa(len(r.body)) {
		t.Errorf("snapshot_size %q, body %d bytes", got, len(r.body))
	}
	// The body is a snapshot file as a data directory holds them.
	_, name, _ := strings.Cut(r.header.Get("Content-Disposition"), `filename="`)
	name = strings.TrimSuffix(name, `"`)
	if !regexp.MustCompile(`^snap-[0-9a-f]{16}-[0-9a-f]{16}\.snap$`).MatchString(name) {
		t.Fatalf("Content-Disposition %q", r.header.Get("Content-Disposition"))
	}
	path := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(path, r.body, 0o644); err != nil {
		t.Fatal(err)
	}
	_, body, err := storage.OpenSnapshotFile(storage.OSFS, path)
	if err != nil {
		t.Fatalf("the streamed snapshot is not a snapshot file: %v", err)
	}
	f, err := fsm.Restore(fsm.Options{}, body)
	body.Close()
	if err != nil {
		t.Fatalf("the streamed snapshot does not restore: %v", err)
	}
	if int64(f.LastZxid()) != srv.LastZxid() {
		t.Errorf("snapshot zxid %x, server %x", f.LastZxid(), srv.LastZxid())
	}
	for _, p := range []string{"/n0", "/n4", "/eph"} {
		if _, _, ok := f.Tree().Lookup(p); !ok {
			t.Errorf("snapshot lacks %s", p)
		}
	}
	// Without streaming, ZooKeeper answers the JSON envelope and the
	// headers.
	if r := do(t, a, http.MethodGet, "/commands/snapshot?streaming=false", "digest alice:pw", nil); r.status != http.StatusOK ||
		r.json(t)["command"] != "snapshot" || r.header.Get("snapshot_size") == "" {
		t.Errorf("streaming=false: %d %s, headers %v", r.status, r.body, r.header)
	}

	// Only bob may do everything on the root now; alice may only read.
	ctx := ctxT(t)
	if err := st.c.AddAuth(ctx, "digest", []byte("bob:pw")); err != nil {
		t.Fatal(err)
	}
	acl := []wire.ACL{client.DigestACL(wire.PermAll, "bob", "pw"), client.DigestACL(wire.PermRead, "alice", "pw")}
	if _, err := st.c.SetACL(ctx, "/", acl, -1); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		authz  string
		status int
	}{
		{"digest alice:pw", http.StatusForbidden},
		{"digest bob:wrong", http.StatusForbidden},
		{"ip", http.StatusForbidden},
		{"digest bob:pw", http.StatusOK},
		{"digest " + super, http.StatusOK},
	} {
		r := do(t, a, http.MethodGet, "/commands/snapshot", tc.authz, nil)
		if r.status != tc.status {
			t.Errorf("Authorization %q: %d, want %d", tc.authz, r.status, tc.status)
		}
		if tc.status == http.StatusForbidden {
			if m := r.json(t); m["error"] != "Not authorized" {
				t.Errorf("Authorization %q: %s", tc.authz, r.body)
			}
		}
	}

	off := startAdmin(t, srv.Server, map[string]string{"admin.snapshot.enabled": "false"})
	if r := do(t, off, http.MethodGet, "/commands/snapshot", "digest bob:pw", nil); r.status != http.StatusServiceUnavailable {
		t.Errorf("disabled snapshot: %d %s", r.status, r.body)
	}
	limited := startAdmin(t, srv.Server, map[string]string{"admin.rateLimiterIntervalInMS": "3600000"})
	if r := do(t, limited, http.MethodGet, "/commands/snapshot", "digest bob:pw", nil); r.status != http.StatusOK {
		t.Errorf("first snapshot: %d", r.status)
	}
	if r := do(t, limited, http.MethodGet, "/commands/snapshot", "digest bob:pw", nil); r.status != http.StatusTooManyRequests {
		t.Errorf("second snapshot within the interval: %d, want 429", r.status)
	}
}

func TestPostCommands(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)
	st := makeState(t, srv.Server, 1)

	r := do(t, a, http.MethodPost, "/commands/restore", "", strings.NewReader("x"))
	if r.status != http.StatusUnauthorized {
		t.Errorf("restore without auth: %d", r.status)
	}
	r = do(t, a, http.MethodPost, "/commands/rest", "digest a:b", strings.NewReader("x"))
	if m := r.json(t); r.status != http.StatusNotImplemented || m["command"] != "restore" || !strings.Contains(fmt.Sprint(m["error"]), "not supported") {
		t.Errorf("restore: %d %s", r.status, r.body)
	}

	for _, tc := range []struct {
		body   string
		status int
	}{
		{"not json", http.StatusBadRequest},
		{`{}`, http.StatusBadRequest},
		{`{"percentage": 101}`, http.StatusBadRequest},
	} {
		if r := do(t, a, http.MethodPost, "/commands/shed", "digest a:b", strings.NewReader(tc.body)); r.status != tc.status {
			t.Errorf("shed %s: %d %s", tc.body, r.status, r.body)
		}
	}
	r = do(t, a, http.MethodPost, "/commands/shed_connections", "digest a:b", strings.NewReader(`{"percentage": 100}`))
	m := r.json(t)
	if r.status != http.StatusOK || num(t, m, "connections_shed") != 1 || num(t, m, "percentage_requested") != 100 {
		t.Errorf("shed: %d %s", r.status, r.body)
	}
	// The client reconnects on a new connection, with its session.
	eventually(t, "the client's reconnection", func() bool {
		cs := srv.Connections()
		return len(cs) == 1 && cs[0].Session == st.session && cs[0].Received <= 2
	})
}

func TestStartAndHandle(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, map[string]string{"admin.commandURL": "/cmds/"})
	a.Handle("/ui/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { fmt.Fprint(w, "console") }))
	if r := do(t, a, http.MethodGet, "/ui/", "", nil); string(r.body) != "console" {
		t.Errorf("/ui/ = %d %q", r.status, r.body)
	}
	if r := do(t, a, http.MethodGet, "/cmds/ruok", "", nil); r.status != http.StatusOK {
		t.Errorf("custom commandURL: %d", r.status)
	}

	// A port in use is an error (warden server logs it and serves on).
	cfg := srv.Config()
	cfg.AdminServerAddress = "127.0.0.1"
	cfg.AdminServerPort = a.Addr().(*net.TCPAddr).Port
	if b, err := Start(cfg, srv.Server, nil); err == nil {
		b.Close()
		t.Error("Start on a port in use succeeded")
	}
	for key, val := range map[string]string{"admin.idleTimeout": "soon", "admin.forceHttps": "true"} {
		cfg := srv.Config()
		cfg.Raw = map[string]string{key: val}
		if _, err := ReadSettings(cfg); err == nil {
			t.Errorf("%s=%s accepted", key, val)
		}
	}
	cfg = srv.Config()
	// The embedded default keeps the AdminServer on loopback (a zoo.cfg: 0.0.0.0).
	cfg.Raw = map[string]string{"zookeeper.admin.idleTimeout": "1500"}
	if st, err := ReadSettings(cfg); err != nil || st.IdleTimeout != 1500*time.Millisecond || st.Addr != "127.0.0.1:8080" || st.CommandURL != "/commands" {
		t.Errorf("settings %+v, %v", st, err)
	}
}

func TestIdleConnectionsCloseAfterIdleTimeout(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, map[string]string{"admin.idleTimeout": "300"})
	nc, err := net.DialTimeout("tcp", a.Addr().String(), wait)
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nc.SetDeadline(time.Now().Add(wait))
	fmt.Fprintf(nc, "GET /commands/ruok HTTP/1.1\r\nHost: x\r\n\r\n")
	resp, err := http.ReadResponse(bufio.NewReader(nc), nil)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	idleFrom := time.Now()
	// The server closes the kept-alive connection once idle for 300 ms.
	if n, err := nc.Read(make([]byte, 1)); err != io.EOF {
		t.Fatalf("read on an idle connection: %d, %v; want EOF", n, err)
	}
	if idle := time.Since(idleFrom); idle < 250*time.Millisecond || idle > 5*time.Second {
		t.Errorf("closed after %v idle, want about 300ms", idle)
	}
}

func TestSnapshotRestoresAStandaloneServer(t *testing.T) {
	srv := servertest.Start(t)
	a := startAdmin(t, srv.Server, nil)
	makeState(t, srv.Server, 4)
	r := do(t, a, http.MethodGet, "/commands/snapshot", "digest a:b", nil)
	if r.status != http.StatusOK {
		t.Fatalf("snapshot: %d %s", r.status, r.body)
	}
	_, name, _ := strings.Cut(r.header.Get("Content-Disposition"), `filename="`)
	name = strings.TrimSuffix(name, `"`)

	// A standalone server started on an empty dataDir holding only the
	// file recovers the state from it.
	dir := t.TempDir()
	if err := os.MkdirAll(storage.SnapDir(dir), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(storage.SnapDir(dir), name), r.body, 0o644); err != nil {
		t.Fatal(err)
	}
	restored := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.DataDir, c.DataLogDir = dir, dir }))
	if restored.LastZxid() != srv.LastZxid() {
		t.Errorf("restored server at zxid %x, snapshot of %x", restored.LastZxid(), srv.LastZxid())
	}
	c := connect(t, restored.Addr().String())
	for _, p := range []string{"/n0", "/n3"} {
		if data, _, err := c.Get(ctxT(t), p); err != nil || string(data) != "x" {
			t.Errorf("%s on the restored server: %q, %v", p, data, err)
		}
	}
}
