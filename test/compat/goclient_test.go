//go:build compat

package compat

import (
	"context"
	"errors"
	"fmt"
	"net"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// goClientDeadline bounds one server's whole Go client scenario.
const goClientDeadline = 60 * time.Second

// TestGoClient runs our own client package against each server: every request type
// (create in every mode, containers and TTL nodes, multi and multiRead, ACLs, whoAmI,
// getEphemerals, getAllChildrenNumber), one-shot and persistent watches and their
// removal, a chroot, a reconnect through a cut connection that keeps the session and
// delivers the watch events missed meanwhile, and the expiry of a cut-off session.
// Each simulated process has its own Conn. The transcripts of both servers must agree.
func TestGoClient(t *testing.T) {
	extra := map[string]string{
		"extendedTypesEnabled":            "true",
		"znode.container.checkIntervalMs": "100",
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		ctx, cancel := context.WithTimeout(context.Background(), goClientDeadline)
		defer cancel()
		tr := &transcript{}
		a := goConn(t, ctx, s.Addr)
		b := goConn(t, ctx, s.Addr)
		for _, sc := range []struct {
			name string
			run  func(t *testing.T, ctx context.Context, tr *transcript, s *Server, a, b *client.Conn)
		}{
			{"operations", goClientOperations},
			{"ttl-container", goClientTTLContainer},
			{"multi", goClientMulti},
			{"watches", goClientWatches},
			{"chroot", goClientChroot},
			{"reconnect", goClientReconnect},
			{"expiry", goClientExpiry},
		} {
			tr.printf("== %s", sc.name)
			// Sections use disjoint paths: a failed one does not stop the others.
			t.Run(sc.name, func(t *testing.T) { sc.run(t, ctx, tr, s, a, b) })
		}
		return tr.String()
	})
}

// goConn opens a client.Conn to servers (host:port[/chroot]), closed in t.Cleanup.
func goConn(t *testing.T, ctx context.Context, servers string, opts ...client.Option) *client.Conn {
	t.Helper()
	c, err := client.Connect(ctx, servers, append([]client.Option{client.WithSessionTimeout(10 * time.Second)}, opts...)...)
	if err != nil {
		t.Fatalf("connect %s: %v", servers, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// code prints an error as its ZooKeeper code name ("ok" for nil).
func code(err error) string {
	if err == nil {
		return "ok"
	}
	var c wire.Code
	if errors.As(err, &c) {
		return strings.TrimPrefix(c.Error(), "zk: KeeperErrorCode = ")
	}
	return err.Error()
}

// wstat prints a client Stat field by field, like statLine, so normalize recognises it.
func wstat(st client.Stat) string {
	return fmt.Sprintf("czxid=%#x mzxid=%#x pzxid=%#x ctime=%d mtime=%d version=%d cversion=%d aversion=%d ephemeralOwner=%#x dataLength=%d numChildren=%d",
		st.Czxid, st.Mzxid, st.Pzxid, st.Ctime, st.Mtime, st.Version, st.Cversion, st.Aversion,
		uint64(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

var eventNames = map[wire.EventType]string{
	wire.EventNone: "None", wire.EventNodeCreated: "NodeCreated", wire.EventNodeDeleted: "NodeDeleted",
	wire.EventNodeDataChanged: "NodeDataChanged", wire.EventNodeChildrenChanged: "NodeChildrenChanged",
	wire.EventDataWatchRemoved: "DataWatchRemoved", wire.EventChildWatchRemoved: "ChildWatchRemoved",
	wire.EventPersistentWatchRemoved: "PersistentWatchRemoved",
}

func eventLine(ev client.Event) string {
	s := fmt.Sprintf("%s %s", eventNames[ev.Type], ev.Path)
	if ev.Err != nil {
		s += " err=" + code(ev.Err)
	}
	return s
}

// nextEvent waits (bounded by eventDeadline and ctx) for the next event on ch;
// a closed channel prints as "closed".
func nextEvent(t *testing.T, ctx context.Context, ch <-chan client.Event, what string) string {
	t.Helper()
	select {
	case ev, ok := <-ch:
		if !ok {
			return "closed"
		}
		return eventLine(ev)
	case <-time.After(eventDeadline):
	case <-ctx.Done():
	}
	t.Fatalf("no event for %s", what)
	return ""
}

// noEvent fails if ch already has an event.
func noEvent(t *testing.T, ch <-chan client.Event, what string) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		t.Fatalf("%s: unexpected event %v (open %v)", what, eventLine(ev), ok)
	default:
	}
}

// waitState reads session events until one has state want, bounded.
func waitState(t *testing.T, ctx context.Context, evs <-chan client.SessionEvent, want client.State) client.SessionEvent {
	t.Helper()
	deadline := time.After(eventDeadline)
	for {
		select {
		case ev, ok := <-evs:
			if !ok {
				t.Fatalf("session events closed while waiting for %v", want)
			}
			if ev.State == want {
				return ev
			}
		case <-deadline:
			t.Fatalf("no session event %v within %v", want, eventDeadline)
		case <-ctx.Done():
			t.Fatalf("no session event %v: %v", want, ctx.Err())
		}
	}
}

// waitGone waits, with exists watches, until p does not exist.
func waitGone(t *testing.T, ctx context.Context, c *client.Conn, p string) {
	t.Helper()
	deadline := time.After(eventDeadline)
	for {
		_, ok, ch, err := c.ExistsW(ctx, p)
		if err != nil {
			t.Fatalf("exists %s: %v", p, err)
		}
		if !ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("%s still exists after %v", p, eventDeadline)
		case <-ctx.Done():
			t.Fatalf("%s still exists: %v", p, ctx.Err())
		}
	}
}

func sortedChildren(t *testing.T, ctx context.Context, c *client.Conn, p string) []string {
	t.Helper()
	kids, _, err := c.Children(ctx, p)
	if err != nil {
		t.Fatalf("children %s: %v", p, err)
	}
	slices.Sort(kids)
	return kids
}

func goClientOperations(t *testing.T, ctx context.Context, tr *transcript, _ *Server, a, b *client.Conn) {
	p, err := a.Create(ctx, "/ops", []byte("root"), client.Persistent, client.OpenACL)
	tr.printf("create /ops -> %s %s", p, code(err))
	p, st, err := a.CreateStat(ctx, "/ops/stat", []byte("abc"), client.Persistent, client.OpenACL)
	tr.printf("create2 /ops/stat -> %s %s %s", p, code(err), wstat(st))
	for range 2 {
		p, err = a.Create(ctx, "/ops/seq-", nil, client.PersistentSequential, client.OpenACL)
		tr.printf("create seq -> %s %s", p, code(err))
	}
	p, err = a.Create(ctx, "/ops/eph", nil, client.Ephemeral, client.OpenACL)
	tr.printf("create eph -> %s %s", p, code(err))
	p, err = a.Create(ctx, "/ops/eseq-", nil, client.EphemeralSequential, client.OpenACL)
	tr.printf("create eph seq -> %s %s", p, code(err))
	_, err = a.Create(ctx, "/ops/eph/child", nil, client.Persistent, client.OpenACL)
	tr.printf("create under ephemeral -> %s", code(err))
	_, err = b.Create(ctx, "/ops/stat", nil, client.Persistent, client.OpenACL)
	tr.printf("create existing -> %s", code(err))
	_, err = b.Create(ctx, "/nope/x", nil, client.Persistent, client.OpenACL)
	tr.printf("create without parent -> %s", code(err))
	_, err = b.Create(ctx, "/ops/bad/", nil, client.Persistent, client.OpenACL)
	tr.printf("create trailing slash -> %s", code(err))

	data, st, err := b.Get(ctx, "/ops/stat")
	tr.printf("get -> %q %s %s", data, code(err), wstat(st))
	st, err = b.Set(ctx, "/ops/stat", []byte("v1"), 0)
	tr.printf("set v0 -> %s %s", code(err), wstat(st))
	_, err = b.Set(ctx, "/ops/stat", []byte("v2"), 0)
	tr.printf("set stale version -> %s", code(err))
	_, err = b.Set(ctx, "/nope", nil, -1)
	tr.printf("set missing -> %s", code(err))
	st, ok, err := b.Exists(ctx, "/ops/eph")
	tr.printf("exists eph -> %v %s owner-is-a=%v", ok, code(err), st.EphemeralOwner == a.SessionID())
	_, ok, err = b.Exists(ctx, "/nope")
	tr.printf("exists missing -> %v %s", ok, code(err))
	_, _, err = b.Get(ctx, "/nope")
	tr.printf("get missing -> %s", code(err))
	kids, st, err := b.Children(ctx, "/ops")
	slices.Sort(kids)
	tr.printf("children /ops -> %v %s numChildren=%d", kids, code(err), st.NumChildren)
	n, err := b.AllChildrenNumber(ctx, "/ops")
	tr.printf("allChildrenNumber /ops -> %d %s", n, code(err))
	if err := b.Sync(ctx, "/ops"); err != nil {
		t.Fatal(err)
	}
	tr.printf("sync ok")

	eph, err := a.Ephemerals(ctx, "/")
	slices.Sort(eph)
	tr.printf("a ephemerals / -> %v %s", eph, code(err))
	eph, err = a.Ephemerals(ctx, "/ops/es")
	tr.printf("a ephemerals /ops/es -> %v %s", eph, code(err))
	eph, err = b.Ephemerals(ctx, "/")
	tr.printf("b ephemerals / -> %v %s", eph, code(err))

	// ACLs: a digest-protected node is unreadable by b until b authenticates.
	who, err := b.WhoAmI(ctx)
	tr.printf("b whoami -> %s %s", clientInfos(who), code(err))
	acl := []client.ACL{client.DigestACL(wire.PermAll, "alice", "secret")}
	_, err = a.Create(ctx, "/ops/acl", []byte("private"), client.Persistent, acl)
	tr.printf("create with digest acl -> %s", code(err))
	_, err = a.Create(ctx, "/ops/creator", nil, client.Persistent, client.CreatorAllACL)
	tr.printf("create creator-all without auth -> %s", code(err))
	_, _, err = b.Get(ctx, "/ops/acl")
	tr.printf("b get acl node -> %s", code(err))
	got, st, err := b.GetACL(ctx, "/ops/acl")
	tr.printf("b getACL -> %v %s aversion=%d", got, code(err), st.Aversion)
	err = b.AddAuth(ctx, "digest", []byte("alice:secret"))
	tr.printf("b addAuth -> %s", code(err))
	who, err = b.WhoAmI(ctx)
	tr.printf("b whoami -> %s %s", clientInfos(who), code(err))
	data, _, err = b.Get(ctx, "/ops/acl")
	tr.printf("b get acl node -> %q %s", data, code(err))
	st, err = b.SetACL(ctx, "/ops/acl", client.OpenACL, 0)
	tr.printf("b setACL open -> %s aversion=%d", code(err), st.Aversion)
	_, err = b.SetACL(ctx, "/ops/acl", client.OpenACL, 0)
	tr.printf("b setACL stale aversion -> %s", code(err))
	data, _, err = a.Get(ctx, "/ops/acl")
	tr.printf("a get acl node -> %q %s", data, code(err))

	err = b.Delete(ctx, "/ops/stat", 0)
	tr.printf("delete stale version -> %s", code(err))
	err = b.Delete(ctx, "/ops", -1)
	tr.printf("delete non-empty -> %s", code(err))
	err = b.Delete(ctx, "/ops/stat", 1)
	tr.printf("delete -> %s", code(err))
	err = b.Delete(ctx, "/ops/stat", -1)
	tr.printf("delete again -> %s", code(err))
	tr.printf("children /ops -> %v", sortedChildren(t, ctx, b, "/ops"))
}

func clientInfos(infos []wire.ClientInfo) string {
	var s []string
	for _, i := range infos {
		s = append(s, i.AuthScheme+":"+i.User)
	}
	slices.Sort(s)
	return "[" + strings.Join(s, " ") + "]"
}

func goClientTTLContainer(t *testing.T, ctx context.Context, tr *transcript, _ *Server, a, b *client.Conn) {
	p, st, err := a.CreateContainer(ctx, "/ctr", []byte("c"), client.OpenACL)
	tr.printf("createContainer -> %s %s %s", p, code(err), wstat(st))
	p, err = b.Create(ctx, "/ctr/child", nil, client.Persistent, client.OpenACL)
	tr.printf("create child -> %s %s", p, code(err))
	if err := b.Delete(ctx, "/ctr/child", -1); err != nil {
		t.Fatal(err)
	}
	waitGone(t, ctx, a, "/ctr")
	tr.printf("container removed after its last child")

	p, st, err = a.CreateTTL(ctx, "/ttl", []byte("t"), client.PersistentWithTTL, client.OpenACL, 300*time.Millisecond)
	tr.printf("createTTL -> %s %s %s", p, code(err), wstat(st))
	p, _, err = a.CreateTTL(ctx, "/ttlseq-", nil, client.PersistentSequentialWithTTL, client.OpenACL, time.Hour)
	tr.printf("createTTL sequential -> %s %s", p, code(err))
	_, _, err = a.CreateTTL(ctx, "/ttlbad", nil, client.PersistentWithTTL, client.OpenACL, 0)
	tr.printf("createTTL ttl=0 -> %s", code(err))
	_, _, err = a.CreateTTL(ctx, "/ttlbad", nil, client.Persistent, client.OpenACL, time.Second)
	tr.printf("createTTL persistent mode -> %s", code(err))
	waitGone(t, ctx, b, "/ttl")
	tr.printf("ttl node removed after its ttl")
	if err := a.Delete(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
}

func goClientMulti(t *testing.T, ctx context.Context, tr *transcript, _ *Server, a, b *client.Conn) {
	res, err := a.Multi(ctx,
		client.CreateOp("/m", []byte("m0"), client.Persistent, client.OpenACL),
		client.CreateOp("/m/s-", nil, client.PersistentSequential, client.OpenACL),
		client.CreateContainerOp("/m/ctr", nil, client.OpenACL),
		client.CreateTTLOp("/m/ttl", nil, client.PersistentWithTTL, client.OpenACL, time.Hour),
		client.SetDataOp("/m", []byte("m1"), 0),
		client.CheckOp("/m", 1),
		client.CreateOp("/m/gone", nil, client.Persistent, client.OpenACL),
		client.DeleteOp("/m/gone", 0),
	)
	tr.printf("multi ok -> %s", code(err))
	printResults(tr, res)
	res, err = a.Multi(ctx,
		client.CreateOp("/m/never", nil, client.Persistent, client.OpenACL),
		client.CheckOp("/m", 7),
		client.SetDataOp("/m", []byte("x"), -1),
	)
	tr.printf("multi failing check -> %s", code(err))
	printResults(tr, res)
	_, ok, _ := b.Exists(ctx, "/m/never")
	tr.printf("exists /m/never -> %v", ok)
	res, err = a.Multi(ctx)
	tr.printf("multi empty -> %d results %s", len(res), code(err))

	rr, err := b.MultiRead(ctx,
		client.GetDataReadOp("/m"),
		client.ChildrenReadOp("/m"),
		client.GetDataReadOp("/nope"),
		client.ChildrenReadOp("/nope"),
	)
	tr.printf("multiRead -> %s", code(err))
	for i, r := range rr {
		slices.Sort(r.Children)
		line := fmt.Sprintf("  read %d: err=%s data=%q children=%v", i, code(r.Err), r.Data, r.Children)
		if r.Stat != nil {
			line += " " + wstat(*r.Stat)
		}
		tr.printf("%s", line)
	}
}

func printResults(tr *transcript, res []client.OpResult) {
	for i, r := range res {
		line := fmt.Sprintf("  op %d: path=%s err=%s", i, r.Path, code(r.Err))
		if r.Stat != nil {
			line += " " + wstat(*r.Stat)
		}
		tr.printf("%s", line)
	}
}

func goClientWatches(t *testing.T, ctx context.Context, tr *transcript, s *Server, a, b *client.Conn) {
	mustCreatePath(t, ctx, b, "/w", "0")
	_, _, dataW, err := a.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kidsW, err := a.ChildrenW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, ok, existW, err := a.ExistsW(ctx, "/w2")
	tr.printf("existsW /w2 -> %v %s", ok, code(err))
	if _, err := b.Set(ctx, "/w", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	tr.printf("data watch: %s", nextEvent(t, ctx, dataW, "data watch"))
	tr.printf("data watch after: %s", nextEvent(t, ctx, dataW, "data watch close"))
	mustCreatePath(t, ctx, b, "/w/c", "")
	tr.printf("child watch: %s", nextEvent(t, ctx, kidsW, "child watch"))
	mustCreatePath(t, ctx, b, "/w2", "")
	tr.printf("exists watch: %s", nextEvent(t, ctx, existW, "exists watch"))

	// Persistent recursive watch: node events below /r, no child events; then Remove.
	// The plain persistent watch is another process's: ZooKeeper before 3.9
	// (ZOOKEEPER-4466) keeps one watch mode per path and session, so a second
	// addWatch on /r by a would turn a's recursive watch into a plain one.
	rw, err := a.AddWatch(ctx, "/r", true)
	tr.printf("addWatch recursive /r -> %s", code(err))
	pc := goConn(t, ctx, s.Addr)
	pw, err := pc.AddWatch(ctx, "/r", false)
	tr.printf("addWatch persistent /r -> %s", code(err))
	mustCreatePath(t, ctx, b, "/r", "")
	mustCreatePath(t, ctx, b, "/r/x", "")
	mustCreatePath(t, ctx, b, "/r/x/y", "")
	if _, err := b.Set(ctx, "/r/x/y", []byte("d"), -1); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Set(ctx, "/r", []byte("d"), -1); err != nil {
		t.Fatal(err)
	}
	if err := b.Delete(ctx, "/r/x/y", -1); err != nil {
		t.Fatal(err)
	}
	for i := range 6 {
		tr.printf("recursive %d: %s", i, nextEvent(t, ctx, rw.Events(), "recursive watch"))
	}
	for i := range 3 {
		tr.printf("persistent %d: %s", i, nextEvent(t, ctx, pw.Events(), "persistent watch"))
	}
	// Watch.Remove must end the server's registration too. ZooKeeper 3.8 knows
	// only the removeWatches types Children, Data and Any; the persistent types
	// arrived in 3.9 (ZOOKEEPER-4472).
	if err := rw.Remove(ctx); err != nil {
		t.Errorf("Watch.Remove against %s: %v", s.Kind, err)
	}
	if ids := watchersOf(t, s, "/r"); slices.Contains(ids, a.SessionID()) {
		t.Errorf("after Watch.Remove the server still has a's watch on /r (wchp: sessions %x)", ids)
	}
	tr.printf("removed recursive watch")
	tr.printf("recursive after remove: %s", nextEvent(t, ctx, rw.Events(), "recursive removed"))
	tr.printf("recursive after remove: %s", nextEvent(t, ctx, rw.Events(), "recursive closed"))
	mustCreatePath(t, ctx, b, "/r/x/z", "")
	if _, err := b.Set(ctx, "/r", []byte("e"), -1); err != nil {
		t.Fatal(err)
	}
	tr.printf("persistent still: %s", nextEvent(t, ctx, pw.Events(), "persistent watch"))
	err = pc.RemoveAllWatches(ctx, "/r", wire.WatcherAny)
	tr.printf("removeAllWatches /r any -> %s", code(err))
	tr.printf("persistent after removeAll: %s", nextEvent(t, ctx, pw.Events(), "persistent removed"))
	tr.printf("persistent after removeAll: %s", nextEvent(t, ctx, pw.Events(), "persistent closed"))

	// removeWatches on one-shot watches, by type.
	_, _, dataW, err = a.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kidsW, err = a.ChildrenW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	err = a.RemoveAllWatches(ctx, "/w", wire.WatcherData)
	tr.printf("removeAllWatches /w data -> %s", code(err))
	tr.printf("data watch: %s", nextEvent(t, ctx, dataW, "data watch removed"))
	noEvent(t, kidsW, "child watch after data removal")
	err = a.RemoveAllWatches(ctx, "/w", wire.WatcherData)
	tr.printf("removeAllWatches /w data again -> %s", code(err))
	err = a.RemoveAllWatches(ctx, "/w", wire.WatcherAny)
	tr.printf("removeAllWatches /w any -> %s", code(err))
	tr.printf("child watch: %s", nextEvent(t, ctx, kidsW, "child watch removed"))
	err = b.RemoveAllWatches(ctx, "/w", wire.WatcherAny)
	tr.printf("b removeAllWatches /w (has none) -> %s", code(err))
}

// watchersOf returns the sessions that have a watch on p, from the wchp command.
func watchersOf(t *testing.T, s *Server, p string) []int64 {
	t.Helper()
	out, err := fourLetterWord(s.Addr, "wchp", eventDeadline)
	if err != nil {
		t.Fatalf("wchp: %v", err)
	}
	var ids []int64
	in := false
	for _, line := range strings.Split(out, "\n") {
		if !strings.HasPrefix(line, "\t") {
			in = line == p
			continue
		}
		var id int64
		if _, err := fmt.Sscanf(strings.TrimSpace(line), "0x%x", &id); in && err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

func mustCreatePath(t *testing.T, ctx context.Context, c *client.Conn, p, data string) {
	t.Helper()
	if _, err := c.Create(ctx, p, []byte(data), client.Persistent, client.OpenACL); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
}

func goClientChroot(t *testing.T, ctx context.Context, tr *transcript, s *Server, a, b *client.Conn) {
	mustCreatePath(t, ctx, a, "/app", "")
	c := goConn(t, ctx, s.Addr+"/app")
	p, err := c.Create(ctx, "/x", []byte("x"), client.Persistent, client.OpenACL)
	tr.printf("chroot create /x -> %s %s", p, code(err))
	p, err = c.Create(ctx, "/e-", nil, client.EphemeralSequential, client.OpenACL)
	tr.printf("chroot create /e- -> %s %s", p, code(err))
	kids, _, err := c.Children(ctx, "/")
	slices.Sort(kids)
	tr.printf("chroot children / -> %v %s", kids, code(err))
	tr.printf("outside children /app -> %v", sortedChildren(t, ctx, a, "/app"))
	eph, err := c.Ephemerals(ctx, "/")
	tr.printf("chroot ephemerals / -> %v %s", eph, code(err))
	_, _, w, err := c.GetW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Set(ctx, "/app/x", []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	tr.printf("chroot watch: %s", nextEvent(t, ctx, w, "chroot watch"))
	rw, err := c.AddWatch(ctx, "/", true)
	if err != nil {
		t.Fatal(err)
	}
	mustCreatePath(t, ctx, a, "/app/y", "")
	tr.printf("chroot recursive watch: %s", nextEvent(t, ctx, rw.Events(), "chroot recursive watch"))
	res, err := c.Multi(ctx, client.CreateOp("/m-", nil, client.PersistentSequential, client.OpenACL), client.DeleteOp("/y", -1))
	tr.printf("chroot multi -> %s", code(err))
	printResults(tr, res)
	tr.printf("chroot recursive watch: %s", nextEvent(t, ctx, rw.Events(), "chroot recursive watch"))
	tr.printf("chroot recursive watch: %s", nextEvent(t, ctx, rw.Events(), "chroot recursive watch"))
	rr, err := c.MultiRead(ctx, client.GetDataReadOp("/x"), client.ChildrenReadOp("/"))
	tr.printf("chroot multiRead -> %s", code(err))
	for i, r := range rr {
		slices.Sort(r.Children)
		tr.printf("  read %d: err=%s data=%q children=%v", i, code(r.Err), r.Data, r.Children)
	}
	n, err := c.AllChildrenNumber(ctx, "/")
	tr.printf("chroot allChildrenNumber / -> %d %s", n, code(err))
}

// severableDialer dials TCP and can cut the live connection and refuse new dials,
// isolating one client from the server.
type severableDialer struct {
	mu      sync.Mutex
	conns   []net.Conn
	refused bool
	dials   int
}

func (d *severableDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.dials++
	if d.refused {
		return nil, errors.New("severableDialer: cut off")
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

// cut closes every connection dialled so far and refuses new ones until heal.
func (d *severableDialer) cut() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = true
	for _, c := range d.conns {
		c.Close()
	}
	d.conns = nil
}

func (d *severableDialer) heal() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = false
}

func goClientReconnect(t *testing.T, ctx context.Context, tr *transcript, s *Server, a, b *client.Conn) {
	d := &severableDialer{}
	c := goConn(t, ctx, s.Addr, client.WithDialer(d.dial), client.WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	events := c.SessionEvents()
	sid := c.SessionID()
	mustCreatePath(t, ctx, b, "/rc", "0")
	if _, err := c.Create(ctx, "/rc-eph", nil, client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	_, _, dataW, err := c.GetW(ctx, "/rc")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kidsW, err := c.ChildrenW(ctx, "/rc")
	if err != nil {
		t.Fatal(err)
	}
	_, _, existW, err := c.ExistsW(ctx, "/rc-new")
	if err != nil {
		t.Fatal(err)
	}
	_, _, quietW, err := c.ExistsW(ctx, "/rc-quiet")
	if err != nil {
		t.Fatal(err)
	}
	pw, err := c.AddWatch(ctx, "/rc", true)
	if err != nil {
		t.Fatal(err)
	}

	d.cut()
	waitState(t, ctx, events, client.StateDisconnected)
	tr.printf("disconnected")
	// While c is cut off: another process changes what c watches.
	if _, err := b.Set(ctx, "/rc", []byte("1"), -1); err != nil {
		t.Fatal(err)
	}
	mustCreatePath(t, ctx, b, "/rc/kid", "")
	mustCreatePath(t, ctx, b, "/rc-new", "")
	// A request made while disconnected waits for the reconnect.
	pending := make(chan error, 1)
	go func() {
		_, err := c.Create(ctx, "/rc-while-cut", nil, client.Persistent, client.OpenACL)
		pending <- err
	}()
	d.heal()
	ev := waitState(t, ctx, events, client.StateConnected)
	tr.printf("reconnected same session=%v", ev.SessionID == sid && c.SessionID() == sid)
	tr.printf("missed data watch: %s", nextEvent(t, ctx, dataW, "missed data event"))
	tr.printf("missed child watch: %s", nextEvent(t, ctx, kidsW, "missed child event"))
	tr.printf("missed exists watch: %s", nextEvent(t, ctx, existW, "missed exists event"))
	noEvent(t, quietW, "exists watch on an untouched path")
	select {
	case err := <-pending:
		tr.printf("create queued while cut -> %s", code(err))
	case <-time.After(eventDeadline):
		t.Fatal("request made while disconnected never completed")
	}
	st, ok, err := b.Exists(ctx, "/rc-eph")
	tr.printf("ephemeral kept -> %v owner-is-c=%v %s", ok, st.EphemeralOwner == sid, code(err))
	// The persistent watch is re-armed: a change after the reconnect arrives.
	if _, err := b.Set(ctx, "/rc", []byte("2"), -1); err != nil {
		t.Fatal(err)
	}
	tr.printf("persistent watch after reconnect: %s", nextEvent(t, ctx, pw.Events(), "re-armed persistent watch"))
	mustCreatePath(t, ctx, b, "/rc-quiet", "")
	tr.printf("untouched exists watch re-armed: %s", nextEvent(t, ctx, quietW, "re-armed exists watch"))
}

func goClientExpiry(t *testing.T, ctx context.Context, tr *transcript, s *Server, a, b *client.Conn) {
	d := &severableDialer{}
	c, err := client.Connect(ctx, s.Addr, client.WithSessionTimeout(4*time.Second),
		client.WithDialer(d.dial), client.WithBackoff(10*time.Millisecond, 100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	tr.printf("negotiated session timeout %v", c.SessionTimeout())
	events := c.SessionEvents()
	if _, err := c.Create(ctx, "/exp-eph", nil, client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.ExistsW(ctx, "/exp-eph")
	if err != nil {
		t.Fatal(err)
	}
	_, _, bw, err := b.ExistsW(ctx, "/exp-eph")
	if err != nil {
		t.Fatal(err)
	}
	d.cut()
	waitState(t, ctx, events, client.StateDisconnected)
	// The server expires the session: its ephemeral goes, b's watch says so.
	tr.printf("b sees: %s", nextEvent(t, ctx, bw, "ephemeral of the expired session"))
	d.heal()
	waitState(t, ctx, events, client.StateExpired)
	tr.printf("c expired; state=%v", c.State())
	tr.printf("c watch: %s", nextEvent(t, ctx, w, "watch end on expiry"))
	_, _, err = c.Exists(ctx, "/")
	tr.printf("c request after expiry -> %s", code(err))
	select {
	case _, ok := <-events:
		tr.printf("session events open after expiry: %v", ok)
	case <-time.After(eventDeadline):
		t.Fatal("session events not closed after expiry")
	}
}
