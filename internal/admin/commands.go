package admin

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/wardenzk/warden/internal/metrics"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/server"
)

// command is one AdminServer command.
type command struct {
	// names are the primary name then the aliases.
	names []string
	// serverRequired commands answer "not currently serving" while the
	// server does not serve clients (ZooKeeper's isServerRequired).
	serverRequired bool
	// auth commands need ALL on the root (see authorize).
	auth bool
	// post commands answer POST only; the others GET (and HEAD) only.
	post bool
	run  func(h *handler, req *request, resp *response)
}

// commands lists every command of ZooKeeper 3.9 (and shed_connections of
// its later releases), in ZooKeeper's registration order.
var commands = []*command{
	{names: []string{"connection_stat_reset", "crst"}, serverRequired: true, run: (*handler).connectionStatReset},
	{names: []string{"configuration", "conf", "config"}, serverRequired: true, run: (*handler).configuration},
	{names: []string{"connections", "cons"}, serverRequired: true, run: (*handler).connections},
	{names: []string{"hash"}, serverRequired: true, run: (*handler).hash},
	{names: []string{"dirs"}, serverRequired: true, run: (*handler).dirs},
	{names: []string{"dump"}, serverRequired: true, run: (*handler).dump},
	{names: []string{"environment", "env", "envi"}, run: (*handler).environment},
	{names: []string{"get_trace_mask", "gtmk"}, run: (*handler).getTraceMask},
	{names: []string{"initial_configuration", "icfg"}, serverRequired: true, run: (*handler).initialConfiguration},
	{names: []string{"is_read_only", "isro"}, serverRequired: true, run: (*handler).isReadOnly},
	{names: []string{"last_snapshot", "lsnp"}, serverRequired: true, run: (*handler).lastSnapshot},
	{names: []string{"leader", "lead"}, serverRequired: true, run: (*handler).leader},
	{names: []string{"monitor", "mntr"}, run: (*handler).monitor},
	{names: []string{"observer_connection_stat_reset", "orst"}, serverRequired: true, run: func(*handler, *request, *response) {}},
	{names: []string{"restore", "rest"}, serverRequired: true, auth: true, post: true, run: (*handler).restore},
	{names: []string{"ruok"}, serverRequired: true, run: func(*handler, *request, *response) {}},
	{names: []string{"set_trace_mask", "stmk"}, run: (*handler).setTraceMask},
	{names: []string{"shed_connections", "shed"}, serverRequired: true, auth: true, post: true, run: (*handler).shedConnections},
	{names: []string{"snapshot", "snap"}, serverRequired: true, auth: true, run: (*handler).snapshot},
	{names: []string{"server_stats", "srvr"}, serverRequired: true, run: (*handler).serverStats},
	{names: []string{"stats", "stat"}, serverRequired: true, run: (*handler).stats},
	{names: []string{"stat_reset", "srst"}, serverRequired: true, run: (*handler).statReset},
	{names: []string{"observers", "obsr"}, serverRequired: true, run: (*handler).observers},
	{names: []string{"system_properties", "sysp"}, run: (*handler).systemProperties},
	{names: []string{"voting_view"}, serverRequired: true, run: (*handler).votingView},
	{names: []string{"watches", "wchc"}, serverRequired: true, run: (*handler).watches},
	{names: []string{"watches_by_path", "wchp"}, serverRequired: true, run: (*handler).watchesByPath},
	{names: []string{"watch_summary", "wchs"}, serverRequired: true, run: (*handler).watchSummary},
	{names: []string{"zabstate"}, run: (*handler).zabState},
}

// lookup returns the command with the given name or alias, nil if none.
func lookup(name string) *command {
	for _, c := range commands {
		if slices.Contains(c.names, name) {
			return c
		}
	}
	return nil
}

// sortedCommands returns the commands in order of primary name.
func sortedCommands() []*command {
	out := slices.Clone(commands)
	slices.SortFunc(out, func(a, b *command) int { return strings.Compare(a.names[0], b.names[0]) })
	return out
}

// CommandNames returns the primary name of every command, sorted.
func CommandNames() []string {
	var out []string
	for _, c := range sortedCommands() {
		out = append(out, c.names[0])
	}
	return out
}

func (h *handler) connectionStatReset(_ *request, _ *response) { h.a.srv.ResetConnStats() }

func (h *handler) statReset(_ *request, _ *response) { h.a.srv.ResetStats() }

// configuration is ZooKeeperServerConf.toMap.
func (h *handler) configuration(_ *request, resp *response) {
	cfg := h.a.srv.Config()
	minMs, maxMs := cfg.SessionTimeoutBounds()
	port := -1
	if ta, ok := h.a.srv.Addr().(*net.TCPAddr); ok {
		port = ta.Port
	}
	serverID := int64(0)
	if !cfg.Standalone() && cfg.MyID > 0 {
		serverID = cfg.MyID
	}
	resp.put("client_port", port)
	resp.put("data_dir", versionDir(cfg.DataDir))
	resp.put("data_log_dir", versionDir(cfg.DataLogDir))
	resp.put("tick_time", cfg.TickTime)
	resp.put("max_client_cnxns", cfg.MaxClientCnxns)
	resp.put("min_session_timeout", minMs)
	resp.put("max_session_timeout", maxMs)
	resp.put("server_id", serverID)
	resp.put("client_port_listen_backlog", cfg.ClientPortListenBacklog)
}

// versionDir is the absolute version-2 directory ZooKeeper reports.
func versionDir(dir string) string {
	if abs, err := filepath.Abs(dir); err == nil {
		dir = abs
	}
	return storage.SnapDir(dir)
}

// connectionInfo is ServerCnxn.getConnectionInfo(brief).
func connectionInfo(c server.ConnInfo, brief bool) object {
	o := object{
		{"remote_socket_address", c.Remote},
		{"interest_ops", c.Interest},
		{"outstanding_requests", c.Queued},
		{"packets_received", c.Received},
		{"packets_sent", c.Sent},
	}
	if brief {
		return o
	}
	return append(o,
		member{"session_id", c.Session},
		member{"last_operation", c.LastOp},
		member{"established", c.Established.UnixMilli()},
		member{"session_timeout", int64(c.Timeout)},
		member{"last_cxid", int64(c.LastCxid)},
		member{"last_zxid", c.LastZxid},
		member{"last_response_time", c.LastResponse},
		member{"last_latency", c.LastLatency},
		member{"min_latency", c.MinLatency},
		member{"avg_latency", c.AvgLatency},
		member{"max_latency", c.MaxLatency},
	)
}

func (h *handler) connectionList(brief bool) []object {
	conns := h.a.srv.Connections()
	out := make([]object, 0, len(conns))
	for _, c := range conns {
		out = append(out, connectionInfo(c, brief))
	}
	return out
}

func (h *handler) connections(_ *request, resp *response) {
	resp.put("connections", h.connectionList(false))
	resp.put("secure_connections", []object{})
}

func (h *handler) hash(_ *request, resp *response) {
	resp.put("digests", []object{})
	resp.put("error", "hash is not supported: Warden keeps no digest of its data tree; members compare zxids (zabstate, srvr), and raft checks log consistency")
}

func (h *handler) dirs(_ *request, resp *response) {
	data, log := h.a.srv.DirSizes()
	resp.put("datadir_size", data)
	resp.put("logdir_size", log)
}

func (h *handler) dump(_ *request, resp *response) {
	expiry := h.a.srv.SessionExpiry()
	resp.put("expiry_time_to_session_ids", sortedObject(expiry))
	resp.put("session_id_to_ephemeral_paths", sortedObject(h.a.srv.Ephemerals()))
}

func (h *handler) environment(_ *request, resp *response) {
	for _, kv := range server.Environment() {
		resp.put(kv[0], kv[1])
	}
}

func (h *handler) getTraceMask(_ *request, resp *response) {
	resp.put("tracemask", h.a.srv.TraceMask())
}

func (h *handler) setTraceMask(req *request, resp *response) {
	v, ok := req.query["traceMask"]
	if !ok {
		resp.put("error", "setTraceMask requires long traceMask argument")
		return
	}
	m, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		resp.put("error", "setTraceMask requires long traceMask argument, got "+v)
		return
	}
	h.a.srv.SetTraceMask(m)
	resp.put("tracemask", m)
}

// initialConfiguration is the configuration as read, one key=value per
// line. Warden does not keep the file's text, so keys come in name
// order.
func (h *handler) initialConfiguration(_ *request, resp *response) {
	raw := h.a.srv.Config().Raw
	keys := make([]string, 0, len(raw))
	for k := range raw {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "%s=%s\n", k, raw[k])
	}
	resp.put("initial_configuration", b.String())
}

func (h *handler) isReadOnly(_ *request, resp *response) {
	resp.put("read_only", h.a.srv.Mode() == "read-only")
}

func (h *handler) lastSnapshot(_ *request, resp *response) {
	zxid, at, ok := h.a.srv.LastSnapshot()
	if !ok {
		resp.put("zxid", "ffffffffffffffff") // Long.toHexString(-1)
		resp.put("timestamp", int64(-1))
		return
	}
	resp.put("zxid", strconv.FormatUint(uint64(zxid), 16))
	resp.put("timestamp", at.Unix())
}

func (h *handler) leader(_ *request, resp *response) {
	li, ok := h.a.srv.Leader()
	if !ok {
		resp.put("error", "server is not initialized")
		return
	}
	resp.put("is_leader", li.IsLeader)
	resp.put("leader_id", li.LeaderID)
	resp.put("leader_ip", li.LeaderHost)
}

// monitor is mntr as JSON: the numbers mntr prints as Java doubles
// ("0.0") are numbers here too.
func (h *handler) monitor(_ *request, resp *response) {
	for _, m := range h.a.srv.Monitor() {
		v := m.Value
		if s, ok := v.(string); ok && strings.Contains(s, ".") {
			if f, err := strconv.ParseFloat(s, 64); err == nil {
				v = jdouble(f)
			}
		}
		resp.put(m.Name, v)
	}
}

func (h *handler) restore(_ *request, resp *response) {
	if !h.st.RestoreEnabled {
		resp.fail(http.StatusServiceUnavailable, "restore is disabled (admin.restore.enabled=false)")
		return
	}
	if !h.a.restoreLimit.allow(time.Now()) {
		resp.fail(http.StatusTooManyRequests, "restore is rate limited: one per admin.rateLimiterIntervalInMS")
		return
	}
	resp.fail(http.StatusNotImplemented, "restore is not supported: a Warden member cannot replace the ensemble's replicated state alone; stop the servers and start them from the snapshot (see docs/admin.md)")
}

// shedConnections reads {"percentage": N} and closes about N% of the
// client connections.
func (h *handler) shedConnections(req *request, resp *response) {
	var in map[string]json.RawMessage
	if err := json.NewDecoder(io.LimitReader(req.body, 1<<20)).Decode(&in); err != nil {
		resp.fail(http.StatusBadRequest, "Invalid JSON or failed to read request body: %v", err)
		return
	}
	raw, ok := in["percentage"]
	if !ok {
		resp.fail(http.StatusBadRequest, "Missing required field: percentage")
		return
	}
	var pct int
	if err := json.Unmarshal(raw, &pct); err != nil {
		resp.fail(http.StatusBadRequest, "percentage must be an integer from 0 to 100, got %s", raw)
		return
	}
	if pct < 0 || pct > 100 {
		resp.fail(http.StatusBadRequest, "Percentage must be between 0 and 100")
		return
	}
	shed := 0
	if pct > 0 {
		shed = h.a.srv.ShedConnections(pct)
	}
	h.a.log.Info("admin: shed connections", "shed", shed, "percentage", pct)
	resp.put("connections_shed", shed)
	resp.put("percentage_requested", pct)
}

// snapshot writes a snapshot file of the replicated state (Warden's
// format, as in a data directory) to a temporary file, then streams it
// (unless ?streaming=false) with its zxid and size in the last_zxid and
// snapshot_size headers, and its data-directory name in
// Content-Disposition.
func (h *handler) snapshot(req *request, resp *response) {
	if !h.st.SnapshotEnabled {
		resp.fail(http.StatusServiceUnavailable, "snapshot is disabled (admin.snapshot.enabled=false)")
		return
	}
	if !h.a.snapshotLimit.allow(time.Now()) {
		resp.fail(http.StatusTooManyRequests, "snapshot is rate limited: try again shortly")
		return
	}
	streaming := req.http.Method != http.MethodHead
	if v, ok := req.query["streaming"]; ok && streaming {
		streaming = strings.EqualFold(v, "true")
	}
	f, err := os.CreateTemp("", "warden-admin-snapshot-*")
	if err != nil {
		h.a.log.Error("admin: snapshot: no temporary file", "err", err)
		resp.fail(http.StatusInternalServerError, "snapshot failed: %v (is the temporary directory writable?)", err)
		return
	}
	zxid, name, err := h.a.srv.WriteSnapshot(req.http.Context(), f)
	size, _ := f.Seek(0, io.SeekCurrent)
	if err != nil || size == 0 {
		f.Close()
		os.Remove(f.Name())
		h.a.log.Error("admin: snapshot failed", "err", err)
		resp.fail(http.StatusInternalServerError, "snapshot failed: %v", err)
		return
	}
	resp.headers["last_zxid"] = []string{"0x" + strconv.FormatUint(uint64(zxid), 16)}
	resp.headers["snapshot_size"] = []string{strconv.FormatInt(size, 10)}
	// The name the file has in a data directory, for a restore.
	resp.headers["Content-Disposition"] = []string{`attachment; filename="` + name + `"`}
	if !streaming {
		f.Close()
		os.Remove(f.Name())
		return
	}
	resp.headers.Set("Content-Length", strconv.FormatInt(size, 10))
	resp.stream = func(w io.Writer) error {
		defer os.Remove(f.Name())
		defer f.Close()
		if _, err := f.Seek(0, io.SeekStart); err != nil {
			return err
		}
		_, err := io.Copy(w, f)
		return err
	}
}

// bufferStats is ZooKeeper's BufferStats.
func bufferStats(b server.BufferSizes) object {
	return object{
		{"last_buffer_size", b.Last},
		{"min_buffer_size", b.Min},
		{"max_buffer_size", b.Max},
	}
}

// serverStats is srvr: the fields of ZooKeeper's ServerStats as Jackson
// serialises its getters, in the order ZooKeeper 3.8 prints them.
func (h *handler) serverStats(_ *request, resp *response) {
	srv := h.a.srv
	st := srv.Stats()
	data, log := srv.DirSizes()
	responses := bufferStats(srv.ResponseSizes())
	provider, _ := metrics.ParseProvider(h.a.cfg.Lookup) // server.Start refused a bad one
	resp.put("version", strings.TrimPrefix(server.VersionLine(), "Zookeeper version: "))
	resp.put("read_only", st.Mode == "read-only")
	resp.put("server_stats", object{
		{"packets_sent", st.Sent},
		{"packets_received", st.Received},
		{"fsync_threshold_exceed_count", srv.Metrics().FsyncThresholdExceeded.Value()},
		{"client_response_stats", responses},
		{"data_dir_size", data},
		{"log_dir_size", log},
		{"provider_null", !provider.Prometheus},
		{"server_state", st.Mode},
		{"last_processed_zxid", st.LastZxid},
		{"outstanding_requests", st.Outstanding},
		{"avg_latency", jdouble(st.AvgLatency)},
		{"max_latency", st.MaxLatency},
		{"min_latency", st.MinLatency},
		{"num_alive_client_connections", st.Connections},
		{"uptime", st.Uptime.Milliseconds()},
		{"auth_failed_count", st.AuthFailed},
		{"non_mtlsremote_conn_count", st.NonMTLSRemote},
		{"non_mtlslocal_conn_count", st.NonMTLSLocal},
	})
	resp.put("client_response", responses)
	if st.Leader {
		resp.put("proposal_stats", bufferStats(srv.ProposalSizes()))
	}
	resp.put("node_count", st.NodeCount)
}

func (h *handler) stats(req *request, resp *response) {
	h.serverStats(req, resp)
	resp.put("connections", h.connectionList(true))
	resp.put("secure_connections", []object{})
}

// observers lists the observers the leader streams to. Warden knows an
// observer's id and address but keeps no per-learner packet counters.
func (h *handler) observers(_ *request, resp *response) {
	list := []object{}
	for _, o := range h.a.srv.Observers() {
		if !o.Synced {
			continue
		}
		list = append(list, object{
			{"remote_socket_address", "/" + o.Addr},
			{"sid", o.ID},
		})
	}
	resp.put("synced_observers", len(list))
	resp.put("observers", list)
}

// systemProperties lists what Warden has of Java's system properties:
// the runtime, operating system and user entries of envi, sorted.
func (h *handler) systemProperties(_ *request, resp *response) {
	props := map[string]string{
		"file.separator": string(filepath.Separator),
		"path.separator": string(filepath.ListSeparator),
		"line.separator": "\n",
	}
	for _, kv := range server.Environment() {
		switch kv[0] {
		case "zookeeper.version", "host.name", "java.compiler", "os.memory.free", "os.memory.max", "os.memory.total":
		default:
			props[kv[0]] = kv[1]
		}
	}
	for _, m := range sortedObject(props) {
		resp.put(m.key, m.val)
	}
}

// votingView is QuorumPeer.getVotingView: the voting members (observers
// are not in it) with their addresses.
func (h *handler) votingView(_ *request, resp *response) {
	cfg := h.a.srv.Config()
	view := object{}
	if !cfg.Standalone() {
		for _, m := range cfg.Servers {
			if m.Observer {
				continue
			}
			elections := []string{}
			if m.ElectionPort > 0 {
				elections = append(elections, hostPort(m.Host, m.ElectionPort))
			}
			client := ""
			if m.ClientPort > 0 {
				host := m.ClientHost
				if host == "" {
					host = "0.0.0.0"
				}
				client = hostPort(host, m.ClientPort)
			}
			view = append(view, member{strconv.FormatInt(m.ID, 10), object{
				{"server_addresses", []string{hostPort(m.Host, m.PeerPort)}},
				{"election_addresses", elections},
				{"client_address", client},
				{"learner_type", "participant"},
			}})
		}
	}
	resp.put("current_config", view)
}

// hostPort joins host and port as ZooKeeper prints addresses (IPv6 in
// brackets).
func hostPort(host string, port int) string { return net.JoinHostPort(host, strconv.Itoa(port)) }

func (h *handler) watches(_ *request, resp *response) {
	resp.put("session_id_to_watched_paths", sortedObject(h.a.srv.Watches().BySession))
}

func (h *handler) watchesByPath(_ *request, resp *response) {
	resp.put("path_to_session_ids", sortedObject(h.a.srv.Watches().ByPath))
}

func (h *handler) watchSummary(_ *request, resp *response) {
	w := h.a.srv.Watches()
	resp.put("num_connections", w.Connections)
	resp.put("num_paths", w.Paths)
	resp.put("num_total_watches", w.Total)
}

// multipleAddresses is how Jackson serialises ZooKeeper's
// MultipleAddresses for one address (Warden does not probe
// reachability: the configured address is reported as reachable).
func multipleAddresses(host string, port int) object {
	addr := hostPort(host, port)
	return object{
		{"empty", false},
		{"all_addresses", []string{addr}},
		{"all_reachable_addresses", []string{addr}},
		{"one", addr},
		{"reachable_address", addr},
		{"wildcard_addresses", []string{hostPort("0.0.0.0", port)}},
		{"all_ports", []int{port}},
		{"all_host_strings", []string{host}},
		{"all_reachable_addresses_or_all", []string{addr}},
		{"reachable_or_one", addr},
	}
}

// zabState maps this member's raft role onto ZooKeeper's Zab phases.
func (h *handler) zabState(_ *request, resp *response) {
	srv := h.a.srv
	cfg := srv.Config()
	self, ok := cfg.Self()
	if cfg.Standalone() || !ok {
		resp.put("voting", false)
		resp.put("zabstate", "")
		return
	}
	li, _ := srv.Leader()
	zxid := srv.LastZxid()
	client := srv.Addr().String()
	if ta, ok := srv.Addr().(*net.TCPAddr); ok && ta.IP.IsUnspecified() {
		client = hostPort("0.0.0.0", ta.Port)
	}
	resp.put("myid", self.ID)
	resp.put("is_leader", li.IsLeader)
	resp.put("quorum_address", multipleAddresses(self.Host, self.PeerPort))
	resp.put("election_address", multipleAddresses(self.Host, self.ElectionPort))
	resp.put("client_address", client)
	resp.put("voting", !self.Observer)
	resp.put("last_zxid", "0x"+strconv.FormatUint(uint64(zxid), 16))
	resp.put("zab_epoch", int64(uint64(zxid)>>32))
	resp.put("zab_counter", int64(uint32(zxid)))
	resp.put("zabstate", srv.ZabPhase())
}
