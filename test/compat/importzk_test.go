//go:build compat

package compat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"

	"github.com/wardenzk/warden/internal/zkimport"
	"github.com/wardenzk/warden/wire"
)

// TestImportZK writes a known tree into Apache ZooKeeper 3.8 (every create mode, ACLs of
// the digest, ip and world schemes, data of many sizes, deletes, setData, multis, closed
// and open sessions) with snapCount small enough that the data dir holds several fuzzy
// snapshots and logs, stops it with SIGTERM, and imports a copy of its data dir. The
// reference is ZooKeeper itself: restarted on its own data dir, it loads the same files,
// and the whole tree it serves (paths, data, ACLs, every stat field) must equal the
// imported one, node by node.
//
// Then the real binary runs `warden import-zk` on the copy, `warden server` starts on
// the result, and the tree Warden serves must equal ZooKeeper's too (zxids included: the
// state is imported, not replayed). A client of the session left open re-attaches to
// both servers with the session id and the password ZooKeeper derived for it
// (zkimport.Password); a wrong password is refused by both.
//
// WARDEN_ZKIMPORT_FIXTURE=dir also saves the copy and ZooKeeper's dump there (the
// internal/zkimport unit tests run on such a fixture without Java).
func TestImportZK(t *testing.T) {
	if os.Getenv("WARDEN_COMPAT_ONLY") == "warden" {
		t.Skip("needs Apache ZooKeeper")
	}
	extra := map[string]string{
		"extendedTypesEnabled": "true",
		"snapCount":            "50",
		"preAllocSize":         "16", // KB: small log files
	}
	s := writeConfig(t, "zookeeper", extra)
	zkp := runZooKeeper(t, s, extra)

	session := writeKnownTree(t, s)
	zkp.stop(t)

	dataDir := filepath.Join(s.Dir, "data")
	imported := filepath.Join(t.TempDir(), "zkdata")
	copyDir(t, dataDir, imported)

	// The reference: ZooKeeper restarted on its own files (the copy is untouched: a
	// restarted ZooKeeper writes a snapshot of its own).
	zkp = runZooKeeper(t, s, extra)
	want := dumpZooKeeper(t, s)
	// ZooKeeper lets the open session re-attach with the password zkimport derives.
	checkReattach(t, s, session)
	zkp.stop(t)

	if dir := os.Getenv("WARDEN_ZKIMPORT_FIXTURE"); dir != "" {
		copyDir(t, imported, dir)
		if err := os.WriteFile(filepath.Join(dir, "expected.txt"), []byte(want), 0o644); err != nil {
			t.Fatal(err)
		}
	}

	db, skipped, err := zkimport.Load(zkimport.Dirs{Data: imported})
	if err != nil {
		t.Fatalf("import: %v", err)
	}
	for _, e := range skipped {
		t.Logf("skipped snapshot: %v", e)
	}
	t.Logf("imported %s + %d logs, %d transactions replayed, zxid %#x, %d nodes, %d sessions",
		filepath.Base(db.Snapshot), len(db.Logs), db.Replayed, db.LastZxid, len(db.Nodes), len(db.Sessions))
	if db.Replayed == 0 {
		t.Errorf("no transaction replayed from the logs: the scenario should leave writes after the last snapshot")
	}
	got := dumpDB(db)
	if got != want {
		t.Errorf("imported tree differs from ZooKeeper's:\n%s", unifiedDiff("zookeeper", "import", want, got))
	}
	if to, ok := db.Sessions[session]; !ok || to <= 0 {
		t.Errorf("open session %#x not imported (sessions %v)", session, db.Sessions)
	}

	// End to end: the binary imports, Warden serves the result.
	ws := importAndStartWarden(t, imported, extra)
	if got := dumpZooKeeper(t, ws); got != want {
		t.Errorf("the tree Warden serves after import-zk differs from ZooKeeper's:\n%s", unifiedDiff("zookeeper", "warden", want, got))
	}
	checkReattach(t, ws, session)
	// New writes continue after the imported zxids.
	c := connectGo(t, ws, 30*time.Second)
	if _, err := c.Create("/after-import", nil, 0, zk.WorldACL(zk.PermAll)); err != nil {
		t.Fatal(err)
	}
	if _, st, err := c.Get("/after-import"); err != nil || st.Czxid <= db.LastZxid {
		t.Errorf("first write after the import: czxid %#x, %v; want above the imported %#x", st.Czxid, err, db.LastZxid)
	}
}

// importAndStartWarden runs `warden import-zk zkData <new dataDir>` with the built
// binary and starts `warden server` on the result (zoo.cfg = base + extra).
func importAndStartWarden(t *testing.T, zkData string, extra map[string]string) *Server {
	t.Helper()
	bin, err := buildWarden()
	if err != nil {
		t.Fatalf("warden binary: %v", err)
	}
	ws := writeConfig(t, "warden", extra)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "import-zk", zkData, filepath.Join(ws.Dir, "data")).CombinedOutput()
	if err != nil {
		t.Fatalf("warden import-zk: %v\n%s", err, out)
	}
	t.Logf("warden import-zk: %s", bytes.TrimSpace(out))
	startProcess(t, ws, bin, "server", ws.ConfigPath)
	return ws
}

// checkReattach re-attaches the session id to s with the password ZooKeeper gave it
// (zkimport.Password), as a client reconnecting after a restart does, and expects the
// session back; with a wrong password, the server must answer timeout 0 (expired).
func checkReattach(t *testing.T, s *Server, session int64) {
	t.Helper()
	passwd := zkimport.Password(session)
	c := dialRaw(t, s)
	c.frame(connectRequest(0, 60000, session, passwd))
	b, closed := c.readFrame()
	if closed {
		t.Fatalf("%s closed the connection on a re-attach of %#x", s.Kind, session)
	}
	r := decodeConnectResponse(t, b)
	if r.session != session || r.timeout <= 0 || !bytes.Equal(r.passwd, passwd) {
		t.Errorf("%s: re-attach of %#x with its password: %v (password %x, want %x)", s.Kind, session, r, r.passwd, passwd)
	}
	c.Close()

	wrong := append([]byte(nil), passwd...)
	wrong[0] ^= 0xff
	c = dialRaw(t, s)
	c.frame(connectRequest(0, 60000, session, wrong))
	b, closed = c.readFrame()
	if closed {
		t.Fatalf("%s closed the connection without answering a re-attach with a wrong password", s.Kind)
	}
	if r := decodeConnectResponse(t, b); r.timeout != 0 {
		t.Errorf("%s: re-attach of %#x with a wrong password was accepted: %v", s.Kind, session, r)
	}
	c.Close()
}

// zkProcess is a ZooKeeper server this test starts and stops itself (the harness only
// stops servers at cleanup).
type zkProcess struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// runZooKeeper starts ZooKeeper on s's existing zoo.cfg and data dir, as startZooKeeper
// does, and waits for srvr to report a Mode.
func runZooKeeper(t *testing.T, s *Server, extra map[string]string) *zkProcess {
	t.Helper()
	args := []string{"-Xms32m", "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-cp", javaClasspath()}
	var props []string
	for k, v := range extra {
		if p, ok := systemProperties[k]; ok {
			props = append(props, "-D"+p+"="+v)
		}
	}
	sort.Strings(props)
	args = append(append(args, props...), "org.apache.zookeeper.server.quorum.QuorumPeerMain", s.ConfigPath)
	logf, err := os.OpenFile(s.LogPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		t.Fatal(err)
	}
	p := &zkProcess{cmd: exec.Command("java", args...), exited: make(chan struct{})}
	p.cmd.Dir, p.cmd.Stdout, p.cmd.Stderr = s.Dir, logf, logf
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	if err := p.cmd.Start(); err != nil {
		logf.Close()
		t.Fatal(err)
	}
	go func() {
		_ = p.cmd.Wait()
		logf.Close()
		close(p.exited)
	}()
	t.Cleanup(func() {
		p.stop(t)
		if t.Failed() {
			dumpLog(t, s)
		}
	})
	deadline := time.Now().Add(startDeadline)
	for {
		if out, err := fourLetterWord(s.Addr, "srvr", time.Second); err == nil && strings.Contains(out, "Mode:") {
			return p
		}
		if time.Now().After(deadline) {
			t.Fatalf("zookeeper at %s not ready within %v", s.Addr, startDeadline)
		}
		select {
		case <-p.exited:
			t.Fatalf("zookeeper exited before it was ready")
		case <-time.After(pollInterval):
		}
	}
}

// stop sends SIGTERM and waits for the exit (SIGKILL after stopDeadline); idempotent.
func (p *zkProcess) stop(t *testing.T) {
	stopProcess(t, p.cmd, p.exited)
}

// writeKnownTree writes the scenario's tree and returns the id of the session left open
// (its ephemerals survive the stop, as its session does).
func writeKnownTree(t *testing.T, s *Server) int64 {
	t.Helper()
	open := zk.WorldACL(zk.PermAll)
	alice := zk.DigestACL(zk.PermAll, "alice", "secret")
	ipRead := []zk.ACL{{Perms: zk.PermRead | zk.PermWrite, Scheme: "ip", ID: "127.0.0.1"}, {Perms: zk.PermAll, Scheme: "digest", ID: alice[0].ID}}
	worldRead := append(zk.WorldACL(zk.PermRead), alice...)

	c1 := connectGo(t, s, 60*time.Second) // stays open: its ephemerals are kept
	c2 := connectGo(t, s, 60*time.Second) // closed: its ephemerals go
	if err := c1.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	must := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	create := func(c *goClient, path string, data []byte, flags int32, acl []zk.ACL) string {
		t.Helper()
		p, err := c.Create(path, data, flags, acl)
		must("create "+path, err)
		return p
	}
	create(c1, "/app", []byte("root of the app"), 0, open)
	create(c1, "/app/empty", []byte{}, 0, open)
	create(c1, "/app/null", nil, 0, open)
	for _, size := range []int{1, 100, 1000, 20_000} {
		data := make([]byte, size)
		for i := range data {
			data[i] = byte(i * 7)
		}
		create(c1, fmt.Sprintf("/app/size-%d", size), data, 0, open)
	}
	create(c1, "/app/secret", []byte("alice only"), 0, alice)
	create(c1, "/app/iponly", []byte("ip"), 0, ipRead)
	create(c1, "/app/readonly", []byte("r"), 0, worldRead)
	create(c1, "/app/seq", nil, 0, open)
	for i := 0; i < 5; i++ {
		create(c1, "/app/seq/item-", []byte{byte(i)}, zk.FlagSequence, open)
	}
	create(c1, "/app/locks", nil, 0, open)
	for i := 0; i < 3; i++ {
		create(c1, "/app/locks/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	}
	create(c1, "/app/eph-kept", []byte("c1"), zk.FlagEphemeral, open)
	create(c2, "/app/eph-gone", []byte("c2"), zk.FlagEphemeral, open)
	create(c2, "/app/locks/lock-", nil, zk.FlagEphemeral|zk.FlagSequence, open)
	_, err := c1.CreateContainer("/app/container", []byte("c"), zk.FlagContainer, open)
	must("container", err)
	create(c1, "/app/container/child", nil, 0, open)
	_, err = c1.CreateTTL("/app/ttl", []byte("t"), zk.FlagTTL, open, time.Hour)
	must("ttl", err)
	_, err = c1.SetACL("/app/readonly", append(zk.WorldACL(zk.PermRead|zk.PermCreate), alice...), 0)
	must("setACL", err)

	// Enough writes for several snapshots (snapCount=50), with creates, updates and
	// deletes interleaved so the snapshots are fuzzy.
	create(c1, "/app/bulk", nil, 0, open)
	for i := 0; i < 120; i++ {
		p := create(c1, fmt.Sprintf("/app/bulk/n%03d", i), []byte(fmt.Sprint(i)), 0, open)
		_, err := c1.Set(p, []byte(fmt.Sprintf("v%d", i)), 0)
		must("set", err)
		if i%3 == 0 {
			must("delete", c1.Delete(p, 1))
		}
	}
	_, err = c1.Multi(
		&zk.CreateRequest{Path: "/app/multi", Data: []byte("m"), Acl: open},
		&zk.SetDataRequest{Path: "/app/multi", Data: []byte("m2"), Version: 0},
		&zk.CreateRequest{Path: "/app/multi/kid", Acl: open, Flags: zk.FlagSequence},
		&zk.DeleteRequest{Path: "/app/bulk/n001", Version: -1},
		&zk.CheckVersionRequest{Path: "/app", Version: 0},
	)
	must("multi", err)
	if _, err := c1.Multi(
		&zk.CreateRequest{Path: "/app/failed-multi", Acl: open},
		&zk.DeleteRequest{Path: "/app/does-not-exist", Version: -1},
	); err == nil {
		t.Fatal("the failing multi succeeded")
	}
	c2.Close()
	for i := 0; i < 10; i++ { // after the last snapshot, most likely: the logs matter
		_, err := c1.Set("/app", []byte(fmt.Sprintf("final %d", i)), -1)
		must("set /app", err)
	}
	must("delete", c1.Delete("/app/bulk/n002", -1))
	return c1.SessionID()
}

// dumpZooKeeper walks the whole tree of a running server with a client that can read
// every node and prints it node by node.
func dumpZooKeeper(t *testing.T, s *Server) string {
	t.Helper()
	c := connectGo(t, s, 30*time.Second)
	if err := c.AddAuth("digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	var walk func(path string)
	walk = func(path string) {
		data, st, err := c.Get(path)
		if err != nil {
			t.Fatalf("get %s: %v", path, err)
		}
		acl, _, err := c.GetACL(path)
		if err != nil {
			t.Fatalf("getACL %s: %v", path, err)
		}
		kids, _, err := c.Children(path)
		if err != nil {
			t.Fatalf("children %s: %v", path, err)
		}
		var wacl []wire.ACL
		for _, a := range acl {
			wacl = append(wacl, wire.ACL{Perms: wire.Perm(a.Perms), ID: wire.ID{Scheme: a.Scheme, ID: a.ID}})
		}
		lines[path] = dumpLine(path, data, wacl, wire.Stat{
			Czxid: st.Czxid, Mzxid: st.Mzxid, Ctime: st.Ctime, Mtime: st.Mtime, Version: st.Version,
			Cversion: st.Cversion, Aversion: st.Aversion, EphemeralOwner: st.EphemeralOwner,
			DataLength: st.DataLength, NumChildren: st.NumChildren, Pzxid: st.Pzxid,
		})
		for _, k := range kids {
			walk(strings.TrimSuffix(path, "/") + "/" + k)
		}
	}
	walk("/")
	paths := make([]string, 0, len(lines))
	for p := range lines {
		paths = append(paths, p)
	}
	sort.Strings(paths)
	var b strings.Builder
	for _, p := range paths {
		b.WriteString(lines[p])
	}
	return b.String()
}

// dumpDB prints an imported database in dumpZooKeeper's format.
func dumpDB(db *zkimport.DB) string {
	var b strings.Builder
	for _, p := range db.Paths() {
		st, _ := db.Stat(p)
		b.WriteString(dumpLine(p, db.Nodes[p].Data, db.Nodes[p].ACL, st))
	}
	return b.String()
}

// dumpLine is one node of a dump: data (quoted when short, else length and hash), ACL
// in order, and every stat field. Dumps list nodes in sorted path order.
func dumpLine(path string, data []byte, acl []wire.ACL, st wire.Stat) string {
	d := fmt.Sprintf("%q", data)
	if len(data) > 40 {
		d = fmt.Sprintf("len=%d,sha256=%x", len(data), sha256.Sum256(data))
	}
	var a []string
	for _, e := range acl {
		a = append(a, fmt.Sprintf("%d:%s:%s", e.Perms, e.ID.Scheme, e.ID.ID))
	}
	return fmt.Sprintf("%s data=%s acl=%s czxid=%#x mzxid=%#x pzxid=%#x ctime=%d mtime=%d version=%d cversion=%d aversion=%d ephemeralOwner=%#x dataLength=%d numChildren=%d\n",
		path, d, strings.Join(a, ","), st.Czxid, st.Mzxid, st.Pzxid, st.Ctime, st.Mtime, st.Version, st.Cversion, st.Aversion,
		uint64(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

// copyDir copies the regular files of a directory tree.
func copyDir(t *testing.T, from, to string) {
	t.Helper()
	err := filepath.WalkDir(from, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(from, p)
		dst := filepath.Join(to, rel)
		if d.IsDir() {
			return os.MkdirAll(dst, 0o755)
		}
		in, err := os.Open(p)
		if err != nil {
			return err
		}
		defer in.Close()
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, in); err != nil {
			out.Close()
			return err
		}
		return out.Close()
	})
	if err != nil {
		t.Fatalf("copy %s: %v", from, err)
	}
}
