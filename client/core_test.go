package client

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	"github.com/wardenzk/warden/wire"
)

func TestCRUD(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	if c.State() != StateConnected || c.SessionID() == 0 || c.SessionTimeout() <= 0 {
		t.Fatalf("state %v session %x timeout %v", c.State(), c.SessionID(), c.SessionTimeout())
	}

	p, err := c.Create(ctx, "/a", []byte("one"), Persistent, OpenACL)
	if err != nil || p != "/a" {
		t.Fatalf("create = %q, %v", p, err)
	}
	data, st, err := c.Get(ctx, "/a")
	if err != nil || string(data) != "one" || st.Version != 0 || st.DataLength != 3 {
		t.Fatalf("get = %q %+v %v", data, st, err)
	}
	st, err = c.Set(ctx, "/a", []byte("two"), 0)
	if err != nil || st.Version != 1 {
		t.Fatalf("set = %+v %v", st, err)
	}
	st, ok, err := c.Exists(ctx, "/a")
	if err != nil || !ok || st.Version != 1 {
		t.Fatalf("exists = %+v %v %v", st, ok, err)
	}
	_, ok, err = c.Exists(ctx, "/nope")
	if err != nil || ok {
		t.Fatalf("exists missing = %v %v", ok, err)
	}
	p, st, err = c.CreateStat(ctx, "/a/b", nil, Persistent, OpenACL)
	if err != nil || p != "/a/b" || st.Czxid == 0 {
		t.Fatalf("create2 = %q %+v %v", p, st, err)
	}
	seq, err := c.Create(ctx, "/a/s-", nil, PersistentSequential, OpenACL)
	if err != nil || seq != "/a/s-0000000001" {
		t.Fatalf("sequential = %q %v", seq, err)
	}
	kids, st, err := c.Children(ctx, "/a")
	slices.Sort(kids)
	if err != nil || !slices.Equal(kids, []string{"b", "s-0000000001"}) || st.NumChildren != 2 {
		t.Fatalf("children = %v %+v %v", kids, st, err)
	}
	if n, err := c.AllChildrenNumber(ctx, "/a"); err != nil || n != 2 {
		t.Fatalf("allChildrenNumber = %d %v", n, err)
	}
	if err := c.Sync(ctx, "/a"); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/a/b", -1); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/a/s-0000000001", 0); err != nil {
		t.Fatal(err)
	}
	if err := c.Delete(ctx, "/a", 1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Get(ctx, "/a"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("get deleted = %v", err)
	}
	// Empty data round-trips as nil (null) or empty consistently.
	if _, err := c.Create(ctx, "/empty", []byte{}, Persistent, OpenACL); err != nil {
		t.Fatal(err)
	}
	if d, _, err := c.Get(ctx, "/empty"); err != nil || len(d) != 0 {
		t.Fatalf("empty = %q %v", d, err)
	}
}

func TestErrors(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(c.Create(ctx, "/x", nil, Persistent, OpenACL))
	must[string](t)(c.Create(ctx, "/x/y", nil, Persistent, OpenACL))
	must[string](t)(c.Create(ctx, "/eph", nil, Ephemeral, OpenACL))
	must[string](t)(c.Create(ctx, "/ro", nil, Persistent, ReadACL))
	tests := []struct {
		name string
		do   func() error
		want error
	}{
		{"create exists", func() error { _, err := c.Create(ctx, "/x", nil, Persistent, OpenACL); return err }, ErrNodeExists},
		{"create no parent", func() error { _, err := c.Create(ctx, "/no/child", nil, Persistent, OpenACL); return err }, ErrNoNode},
		{"create under ephemeral", func() error { _, err := c.Create(ctx, "/eph/c", nil, Persistent, OpenACL); return err }, ErrNoChildrenForEphemerals},
		{"create empty acl", func() error { _, err := c.Create(ctx, "/noacl", nil, Persistent, nil); return err }, ErrInvalidACL},
		{"create no auth", func() error { _, err := c.Create(ctx, "/ro/c", nil, Persistent, OpenACL); return err }, ErrNoAuth},
		{"set no auth", func() error { _, err := c.Set(ctx, "/ro", nil, -1); return err }, ErrNoAuth},
		{"set bad version", func() error { _, err := c.Set(ctx, "/x", nil, 7); return err }, ErrBadVersion},
		{"set missing", func() error { _, err := c.Set(ctx, "/nope", nil, -1); return err }, ErrNoNode},
		{"delete not empty", func() error { return c.Delete(ctx, "/x", -1) }, ErrNotEmpty},
		{"delete bad version", func() error { return c.Delete(ctx, "/x/y", 3) }, ErrBadVersion},
		{"delete missing", func() error { return c.Delete(ctx, "/nope", -1) }, ErrNoNode},
		{"children missing", func() error { _, _, err := c.Children(ctx, "/nope"); return err }, ErrNoNode},
		{"getACL missing", func() error { _, _, err := c.GetACL(ctx, "/nope"); return err }, ErrNoNode},
		{"setACL bad version", func() error { _, err := c.SetACL(ctx, "/x", OpenACL, 5); return err }, ErrBadVersion},
		{"relative path", func() error { _, _, err := c.Get(ctx, "x"); return err }, ErrBadArguments},
		{"trailing slash", func() error { _, _, err := c.Get(ctx, "/x/"); return err }, ErrBadArguments},
		{"ttl without extended types", func() error {
			_, _, err := c.CreateTTL(ctx, "/ttl", nil, PersistentWithTTL, OpenACL, 1000000000)
			return err
		}, ErrUnimplemented},
		{"ttl mode via Create", func() error { _, err := c.Create(ctx, "/ttl", nil, PersistentWithTTL, OpenACL); return err }, ErrBadArguments},
		{"remove missing watch", func() error { return c.RemoveAllWatches(ctx, "/x", wire.WatcherData) }, ErrNoWatcher},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.do(); !errors.Is(err, tt.want) {
				t.Fatalf("err = %v, want %v", err, tt.want)
			}
		})
	}
	// The connection is still healthy after all those errors.
	if _, ok, err := c.Exists(ctx, "/x"); err != nil || !ok {
		t.Fatalf("exists after errors = %v %v", ok, err)
	}
}

func TestOneShotWatches(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	other := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(c.Create(ctx, "/w", []byte("v0"), Persistent, OpenACL))

	// Two local watchers on one path share the server registration and
	// both get the one event.
	_, _, w1, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, w2, err := c.ExistsW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, _, cw, err := c.ChildrenW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	_, ok, ew, err := c.ExistsW(ctx, "/w/new")
	if err != nil || ok {
		t.Fatal(ok, err)
	}
	if _, _, _, err := c.GetW(ctx, "/missing"); !errors.Is(err, ErrNoNode) {
		t.Fatalf("getW missing = %v", err)
	}
	// Each event carries the zxid of the write that fired it.
	set := must[wire.Stat](t)(other.Set(ctx, "/w", []byte("v1"), -1))
	for i, ch := range []<-chan Event{w1, w2} {
		if ev := waitEvent(t, ch); ev.Type != wire.EventNodeDataChanged || ev.Path != "/w" || ev.Zxid != set.Mzxid || ev.Err != nil {
			t.Fatalf("watcher %d: %+v", i, ev)
		}
		if _, open := <-ch; open {
			t.Fatalf("watcher %d: channel not closed after its event", i)
		}
	}
	noEvent(t, cw)
	_, created, err := other.CreateStat(ctx, "/w/new", nil, Persistent, OpenACL)
	if err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, ew); ev.Type != wire.EventNodeCreated || ev.Path != "/w/new" || ev.Zxid != created.Czxid {
		t.Fatalf("exists watch: %+v", ev)
	}
	if ev := waitEvent(t, cw); ev.Type != wire.EventNodeChildrenChanged || ev.Path != "/w" || ev.Zxid != created.Czxid {
		t.Fatalf("child watch: %+v", ev)
	}
	// Deletion fires data watches with NodeDeleted.
	_, _, dw, err := c.GetW(ctx, "/w/new")
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, "/w/new", -1); err != nil {
		t.Fatal(err)
	}
	_, parent, err := other.Get(ctx, "/w") // its pzxid is the delete's zxid
	if err != nil {
		t.Fatal(err)
	}
	if ev := waitEvent(t, dw); ev.Type != wire.EventNodeDeleted || ev.Zxid != parent.Pzxid {
		t.Fatalf("delete watch: %+v, want zxid %#x", ev, parent.Pzxid)
	}
}

func TestACLAndAuth(t *testing.T) {
	srv := startServer(t, "", nil)
	owner := connect(t, srv.Addr().String(), WithAuth("digest", []byte("bob:secret")))
	stranger := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	acl := []ACL{DigestACL(wire.PermAll, "bob", "secret")}
	must[string](t)(owner.Create(ctx, "/private", []byte("x"), Persistent, acl))
	if _, _, err := stranger.Get(ctx, "/private"); !errors.Is(err, ErrNoAuth) {
		t.Fatalf("stranger get = %v", err)
	}
	if err := stranger.AddAuth(ctx, "digest", []byte("bob:secret")); err != nil {
		t.Fatal(err)
	}
	if d, _, err := stranger.Get(ctx, "/private"); err != nil || !bytes.Equal(d, []byte("x")) {
		t.Fatalf("get after addauth = %q %v", d, err)
	}
	got, _, err := owner.GetACL(ctx, "/private")
	if err != nil || len(got) != 1 || got[0] != acl[0] {
		t.Fatalf("getACL = %+v %v", got, err)
	}
	if _, err := owner.SetACL(ctx, "/private", OpenACL, 0); err != nil {
		t.Fatal(err)
	}
	who, err := owner.WhoAmI(ctx)
	if err != nil || !slices.ContainsFunc(who, func(ci wire.ClientInfo) bool { return ci.AuthScheme == "digest" && ci.User == "bob" }) {
		t.Fatalf("whoAmI = %+v %v", who, err)
	}
	// CreatorAllACL needs an authenticated creator.
	if _, err := owner.Create(ctx, "/mine", nil, Persistent, CreatorAllACL); err != nil {
		t.Fatal(err)
	}
}

func TestAuthFailedIsTerminal(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	events := sessionWatcher{t, c.SessionEvents()}
	events.waitFor(StateConnected)
	ctx := ctxT(t)
	if err := c.AddAuth(ctx, "nosuchscheme", []byte("x")); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("addAuth = %v", err)
	}
	events.waitFor(StateAuthFailed)
	if _, _, err := c.Get(ctx, "/"); !errors.Is(err, ErrAuthFailed) {
		t.Fatalf("get after auth failure = %v", err)
	}
}

func TestEphemerals(t *testing.T) {
	srv := startServer(t, "", nil)
	c := connect(t, srv.Addr().String())
	ctx := ctxT(t)
	must[string](t)(c.Create(ctx, "/e1", nil, Ephemeral, OpenACL))
	must[string](t)(c.Create(ctx, "/e2", nil, EphemeralSequential, OpenACL))
	got, err := c.Ephemerals(ctx, "/")
	slices.Sort(got)
	if err != nil || !slices.Equal(got, []string{"/e1", "/e20000000001"}) {
		t.Fatalf("ephemerals = %v %v", got, err)
	}
	st, _, err := c.Exists(ctx, "/e1")
	if err != nil || st.EphemeralOwner != c.SessionID() {
		t.Fatalf("owner = %x want %x (%v)", st.EphemeralOwner, c.SessionID(), err)
	}
	// Closing the session deletes its ephemerals.
	other := connect(t, srv.Addr().String())
	_, _, gone, err := other.ExistsW(ctx, "/e1")
	if err != nil {
		t.Fatal(err)
	}
	c.Close()
	if ev := waitEvent(t, gone); ev.Type != wire.EventNodeDeleted {
		t.Fatalf("event = %+v", ev)
	}
	if _, _, err := c.Get(ctx, "/"); !errors.Is(err, ErrClosed) {
		t.Fatalf("get after close = %v", err)
	}
	c.Close() // idempotent
}

func TestSessionEventsFanOutToEverySubscriber(t *testing.T) {
	srv := startServer(t, "", nil)
	c, err := Connect(ctxT(t), srv.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	a, b := c.SessionEvents(), c.SessionEvents()
	c.Close()
	for name, ch := range map[string]<-chan SessionEvent{"a": a, "b": b} {
		var states []State
		for ev := range ch {
			states = append(states, ev.State)
		}
		if len(states) != 2 || states[0] != StateConnected || states[1] != StateClosed {
			t.Fatalf("subscriber %s saw %v, want [Connected Closed]", name, states)
		}
	}
}
