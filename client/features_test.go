package client

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/wire"
)

func TestChroot(t *testing.T) {
	srv := startServer(t, "", nil)
	root := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(root.Create(ctx, "/app", nil, Persistent, OpenACL))
	c := connect(t, srv.Addr().String()+"/app")

	p, err := c.Create(ctx, "/seq-", nil, EphemeralSequential, OpenACL)
	if err != nil || p != "/seq-0000000000" {
		t.Fatalf("create in chroot = %q %v", p, err)
	}
	if _, ok, err := root.Exists(ctx, "/app/seq-0000000000"); err != nil || !ok {
		t.Fatalf("node not under chroot: %v %v", ok, err)
	}
	kids, _, err := c.Children(ctx, "/")
	if err != nil || !slices.Equal(kids, []string{"seq-0000000000"}) {
		t.Fatalf("children of chroot = %v %v", kids, err)
	}
	eph, err := c.Ephemerals(ctx, "/")
	if err != nil || !slices.Equal(eph, []string{"/seq-0000000000"}) {
		t.Fatalf("ephemerals = %v %v", eph, err)
	}
	_, _, w, err := c.ExistsW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	_, _, rootW, err := c.ChildrenW(ctx, "/")
	if err != nil {
		t.Fatal(err)
	}
	must[string](t)(root.Create(ctx, "/app/x", nil, Persistent, OpenACL))
	if ev := waitEvent(t, w); ev.Type != wire.EventNodeCreated || ev.Path != "/x" {
		t.Fatalf("chroot event = %+v", ev)
	}
	if ev := waitEvent(t, rootW); ev.Type != wire.EventNodeChildrenChanged || ev.Path != "/" {
		t.Fatalf("chroot root event = %+v", ev)
	}
	res, err := c.Multi(ctx, CreateOp("/m", nil, Persistent, OpenACL), SetDataOp("/m", []byte("d"), 0))
	if err != nil || res[0].Path != "/m" {
		t.Fatalf("multi in chroot = %+v %v", res, err)
	}
	if _, err := parseChroot("h:1/"); err != nil {
		t.Fatal(err)
	}
}

func parseChroot(s string) (string, error) {
	_, chroot, err := parseServers(s)
	return chroot, err
}

func TestParseServers(t *testing.T) {
	tests := []struct {
		in     string
		addrs  []string
		chroot string
		bad    bool
	}{
		{in: "a:1,b:2", addrs: []string{"a:1", "b:2"}},
		{in: "a:1,b/app/x", addrs: []string{"a:1", "b:2181"}, chroot: "/app/x"},
		{in: "a:1/", addrs: []string{"a:1"}},
		{in: "[::1]:5", addrs: []string{"[::1]:5"}},
		{in: "", bad: true},
		{in: "a:1/app/", bad: true},
		{in: "a:1/app//x", bad: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			addrs, chroot, err := parseServers(tt.in)
			if tt.bad {
				if err == nil {
					t.Fatalf("accepted %q", tt.in)
				}
				return
			}
			if err != nil || !slices.Equal(addrs, tt.addrs) || chroot != tt.chroot {
				t.Fatalf("= %v %q %v", addrs, chroot, err)
			}
		})
	}
}

func TestMulti(t *testing.T) {
	srv := startServer(t, "", func(c *server.Config) { c.ExtendedTypesEnabled = true })
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)

	res, err := c.Multi(ctx,
		CreateOp("/m", []byte("a"), Persistent, OpenACL),
		CreateOp("/m/s-", nil, PersistentSequential, OpenACL),
		CreateContainerOp("/box", nil, OpenACL),
		CreateTTLOp("/ttl", nil, PersistentWithTTL, OpenACL, time.Minute),
		SetDataOp("/m", []byte("b"), 0),
		CheckOp("/m", 1),
	)
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 6 || res[0].Path != "/m" || res[1].Path != "/m/s-0000000000" ||
		res[2].Path != "/box" || res[2].Stat == nil || res[3].Path != "/ttl" ||
		res[4].Stat == nil || res[4].Stat.Version != 1 || res[5].Err != nil {
		t.Fatalf("results = %+v", res)
	}

	// Failure: nothing applied; err is the failing op's code.
	res, err = c.Multi(ctx,
		CreateOp("/m/new", nil, Persistent, OpenACL),
		CheckOp("/m", 0),
		DeleteOp("/m", -1),
	)
	if !errors.Is(err, ErrBadVersion) || len(res) != 3 ||
		res[0].Err != nil || !errors.Is(res[1].Err, ErrBadVersion) || !errors.Is(res[2].Err, wire.ErrRuntimeInconsistency) {
		t.Fatalf("failed multi = %+v %v", res, err)
	}
	if _, ok, _ := c.Exists(ctx, "/m/new"); ok {
		t.Fatal("failed multi applied its first op")
	}
	if res, err := c.Multi(ctx); res != nil || err != nil {
		t.Fatalf("empty multi = %v %v", res, err)
	}
	if _, err := c.Multi(ctx, Op{}); !errors.Is(err, ErrBadArguments) {
		t.Fatalf("zero op = %v", err)
	}

	reads, err := c.MultiRead(ctx, GetDataReadOp("/m"), ChildrenReadOp("/m"), GetDataReadOp("/nope"))
	if err != nil || len(reads) != 3 {
		t.Fatalf("multiRead = %+v %v", reads, err)
	}
	if string(reads[0].Data) != "b" || reads[0].Stat.Version != 1 ||
		!slices.Equal(reads[1].Children, []string{"s-0000000000"}) || !errors.Is(reads[2].Err, ErrNoNode) {
		t.Fatalf("multiRead = %+v", reads)
	}
}

func TestCreateVariants(t *testing.T) {
	srv := startServer(t, "", func(c *server.Config) { c.ExtendedTypesEnabled = true })
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	p, st, err := c.CreateContainer(ctx, "/box", []byte("c"), OpenACL)
	if err != nil || p != "/box" || st.Czxid == 0 {
		t.Fatalf("container = %q %+v %v", p, st, err)
	}
	p, st, err = c.CreateTTL(ctx, "/t-", nil, PersistentSequentialWithTTL, OpenACL, time.Minute)
	if err != nil || p != "/t-0000000001" || st.EphemeralOwner != 0 {
		t.Fatalf("ttl = %q %+v %v", p, st, err)
	}
	if _, _, err := c.CreateTTL(ctx, "/bad", nil, Persistent, OpenACL, time.Minute); !errors.Is(err, ErrBadArguments) {
		t.Fatalf("ttl with persistent mode = %v", err)
	}
	if p, err := c.Create(ctx, "/box2", nil, Container, OpenACL); err != nil || p != "/box2" {
		t.Fatalf("Create(Container) = %q %v", p, err)
	}
}

func TestPersistentWatches(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	other := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(c.Create(ctx, "/p", nil, Persistent, OpenACL))
	pw := must[*Watch](t)(c.AddWatch(ctx, "/p", false))
	pw2 := must[*Watch](t)(c.AddWatch(ctx, "/p", false))
	rw := must[*Watch](t)(c.AddWatch(ctx, "/p", true))

	// Every event carries the zxid of the write that fired it.
	set1 := must[wire.Stat](t)(other.Set(ctx, "/p", []byte("1"), -1)).Mzxid
	_, st, err := other.CreateStat(ctx, "/p/c", nil, Persistent, OpenACL)
	if err != nil {
		t.Fatal(err)
	}
	create := st.Czxid
	set2 := must[wire.Stat](t)(other.Set(ctx, "/p/c", []byte("2"), -1)).Mzxid
	set3 := must[wire.Stat](t)(other.Set(ctx, "/p", []byte("3"), -1)).Mzxid

	want := func(w *Watch, evs ...Event) {
		t.Helper()
		for _, e := range evs {
			if got := waitEvent(t, w.Events()); got != e {
				t.Fatalf("got %+v, want %+v", got, e)
			}
		}
	}
	changed := func(p string, zxid int64) Event { return Event{Type: wire.EventNodeDataChanged, Path: p, Zxid: zxid} }
	children := Event{Type: wire.EventNodeChildrenChanged, Path: "/p", Zxid: create}
	removed := Event{Type: wire.EventPersistentWatchRemoved, Path: "/p", Zxid: NoZxid}
	want(pw, changed("/p", set1), children, changed("/p", set3))
	want(pw2, changed("/p", set1), children, changed("/p", set3))
	want(rw, changed("/p", set1), Event{Type: wire.EventNodeCreated, Path: "/p/c", Zxid: create}, changed("/p/c", set2), changed("/p", set3))

	// Removing one of two watches on the same path keeps the other.
	if err := pw.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	want(pw, removed)
	if _, ok := <-pw.Events(); ok {
		t.Fatal("removed watch channel open")
	}
	if err := pw.Remove(ctx); err != nil {
		t.Fatalf("second remove = %v", err)
	}
	set4 := must[wire.Stat](t)(other.Set(ctx, "/p", []byte("4"), -1)).Mzxid
	want(pw2, changed("/p", set4))
	want(rw, changed("/p", set4))

	// RemoveAllWatches ends every local watcher of the type.
	_, _, dw, err := c.GetW(ctx, "/p")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.RemoveAllWatches(ctx, "/p", wire.WatcherAny); err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, dw); ev.Type != wire.EventDataWatchRemoved || ev.Zxid != NoZxid {
		t.Fatalf("one-shot after removeAll = %+v", ev)
	}
	want(pw2, removed)
	want(rw, removed)
	if err := c.RemoveAllWatches(ctx, "/p", wire.WatcherAny); !errors.Is(err, ErrNoWatcher) {
		t.Fatalf("second removeAll = %v", err)
	}
}

func TestCloseEndsWatches(t *testing.T) {
	srv := startServer(t, "", nil)
	c, err := Connect(ctxT(t), srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	ctx := ctxT(t)
	_, _, w, err := c.ExistsW(ctx, "/x")
	if err != nil {
		t.Fatal(err)
	}
	pw := must[*Watch](t)(c.AddWatch(ctx, "/", true))
	events := c.SessionEvents()
	c.Close()
	if ev := waitEvent(t, w); !errors.Is(ev.Err, ErrClosed) || ev.Type != wire.EventNone || ev.Zxid != NoZxid {
		t.Fatalf("one-shot after close = %+v", ev)
	}
	if ev := waitEvent(t, pw.Events()); !errors.Is(ev.Err, ErrClosed) || ev.Zxid != NoZxid {
		t.Fatalf("persistent after close = %+v", ev)
	}
	var states []State
	for ev := range events {
		states = append(states, ev.State)
	}
	if !slices.Equal(states, []State{StateConnected, StateClosed}) {
		t.Fatalf("session events = %v", states)
	}
	if c.State() != StateClosed {
		t.Fatalf("state = %v", c.State())
	}
}

// TestGetConfigIgnoresChroot: the membership is the server's, so a chroot
// does not apply to it, as with ZooKeeper's getConfig.
func TestGetConfigIgnoresChroot(t *testing.T) {
	srv := startServer(t, "", nil)
	root := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(root.Create(ctx, "/app", nil, Persistent, OpenACL))
	c := connect(t, srv.Addr().String()+"/app")
	if _, _, err := c.Get(ctx, ConfigPath); !errors.Is(err, ErrNoNode) {
		t.Fatalf("Get %s under the chroot = %v, want NoNode (it is /app%s)", ConfigPath, err, ConfigPath)
	}
	_, st, err := c.GetConfig(ctx)
	if err != nil {
		t.Fatalf("GetConfig under a chroot: %v", err)
	}
	if _, want, _ := root.Get(ctx, ConfigPath); st != want {
		t.Fatalf("GetConfig stat %+v, want /zookeeper/config's %+v", st, want)
	}
	if _, _, ch, err := c.GetConfigW(ctx); err != nil || ch == nil {
		t.Fatalf("GetConfigW: %v", err)
	}
}
