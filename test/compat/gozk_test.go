//go:build compat

package compat

import (
	"errors"
	"fmt"
	"net"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// eventDeadline bounds every wait for a watch or session event.
const eventDeadline = 20 * time.Second

// transcript accumulates the lines of a scenario.
type transcript struct {
	mu    sync.Mutex
	lines []string
}

func (tr *transcript) printf(format string, args ...any) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.lines = append(tr.lines, fmt.Sprintf(format, args...))
}

func (tr *transcript) String() string {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return strings.Join(tr.lines, "\n") + "\n"
}

// statLine prints a Stat field by field so normalize recognises zxids, times and owners.
func statLine(st *zk.Stat) string {
	if st == nil {
		return "stat=nil"
	}
	return fmt.Sprintf("czxid=%#x mzxid=%#x pzxid=%#x ctime=%d mtime=%d version=%d cversion=%d aversion=%d ephemeralOwner=%#x dataLength=%d numChildren=%d",
		st.Czxid, st.Mzxid, st.Pzxid, st.Ctime, st.Mtime, st.Version, st.Cversion, st.Aversion,
		uint64(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

// errName prints an error as its ZooKeeper code name ("ok" for nil).
func errName(err error) string {
	if err == nil {
		return "ok"
	}
	return strings.ReplaceAll(err.Error(), " ", "_")
}

// eventLog records the events of one go-zookeeper connection (session and watch events,
// in arrival order) and lets a scenario wait for one, bounded by eventDeadline.
type eventLog struct {
	mu      sync.Mutex
	events  []zk.Event
	changed chan struct{} // closed and replaced on every append
}

func newEventLog() *eventLog { return &eventLog{changed: make(chan struct{})} }

func (l *eventLog) add(ev zk.Event) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.events = append(l.events, ev)
	close(l.changed)
	l.changed = make(chan struct{})
}

// waitFor returns the index of the first event at or after from that satisfies match.
func (l *eventLog) waitFor(t *testing.T, from int, what string, match func(zk.Event) bool) int {
	t.Helper()
	deadline := time.After(eventDeadline)
	for {
		l.mu.Lock()
		for i := from; i < len(l.events); i++ {
			if match(l.events[i]) {
				l.mu.Unlock()
				return i
			}
		}
		ch := l.changed
		l.mu.Unlock()
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %s within %v; events: %v", what, eventDeadline, l.snapshot())
		}
	}
}

func (l *eventLog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.events)
}

func (l *eventLog) snapshot() []zk.Event {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]zk.Event(nil), l.events...)
}

// watchEvents returns the non-session events recorded from index from on, as lines.
func (l *eventLog) watchEvents(from int) []string {
	var out []string
	for _, ev := range l.snapshot()[from:] {
		if ev.Type != zk.EventSession {
			out = append(out, fmt.Sprintf("event type=%s path=%s", ev.Type, ev.Path))
		}
	}
	return out
}

// cuttableDialer dials real TCP connections and can cut the current one and refuse
// (block) new ones, to simulate a network partition of one client.
type cuttableDialer struct {
	mu      sync.Mutex
	conn    net.Conn
	refused bool
}

func (d *cuttableDialer) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.refused {
		return nil, errors.New("cuttableDialer: partitioned")
	}
	c, err := net.DialTimeout(network, addr, timeout)
	if err == nil {
		d.conn = c
	}
	return c, err
}

// cut closes the current connection; with refuse, later dials fail until heal.
func (d *cuttableDialer) cut(refuse bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = refuse
	if d.conn != nil {
		d.conn.Close()
	}
}

func (d *cuttableDialer) heal() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.refused = false
}

type nopLogger struct{}

func (nopLogger) Printf(string, ...any) {}

// goClient is a go-zookeeper connection with its event log and dialer.
type goClient struct {
	*zk.Conn
	events *eventLog
	dialer *cuttableDialer
}

// connectGo opens a go-zookeeper session to s and waits until it has a session.
func connectGo(t *testing.T, s *Server, timeout time.Duration) *goClient {
	t.Helper()
	c := &goClient{events: newEventLog(), dialer: &cuttableDialer{}}
	conn, _, err := zk.Connect([]string{s.Addr}, timeout,
		zk.WithDialer(c.dialer.dial), zk.WithLogger(nopLogger{}), zk.WithLogInfo(false),
		zk.WithEventCallback(c.events.add))
	if err != nil {
		t.Fatal(err)
	}
	c.Conn = conn
	t.Cleanup(conn.Close)
	c.events.waitFor(t, 0, "session", func(ev zk.Event) bool { return ev.State == zk.StateHasSession })
	return c
}

// TestGoZKOperations runs go-zookeeper's whole request API: create in every mode,
// get/set/delete with versions, exists, children, ACLs, errors, multi, sync, watches.
func TestGoZKOperations(t *testing.T) {
	extra := map[string]string{
		"extendedTypesEnabled":            "true",
		"znode.container.checkIntervalMs": "100",
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		tr := &transcript{}
		c := connectGo(t, s, 10*time.Second)
		tr.printf("session=%#x", c.SessionID())

		create := func(path, data string, flags int32, acl []zk.ACL) {
			p, err := c.Create(path, []byte(data), flags, acl)
			tr.printf("create path=%s flags=%d -> %s err=%s", path, flags, p, errName(err))
		}
		get := func(path string) {
			d, st, err := c.Get(path)
			tr.printf("get path=%s -> data=%q err=%s %s", path, d, errName(err), statLine(st))
		}
		set := func(path, data string, version int32) {
			st, err := c.Set(path, []byte(data), version)
			tr.printf("set path=%s version=%d -> err=%s %s", path, version, errName(err), statLine(st))
		}
		del := func(path string, version int32) {
			err := c.Delete(path, version)
			tr.printf("delete path=%s version=%d -> err=%s", path, version, errName(err))
		}
		exists := func(path string) {
			ok, st, err := c.Exists(path)
			tr.printf("exists path=%s -> %v err=%s %s", path, ok, errName(err), statLine(st))
		}
		children := func(path string) {
			ch, st, err := c.Children(path)
			sort.Strings(ch)
			tr.printf("children path=%s -> %v err=%s %s", path, ch, errName(err), statLine(st))
		}
		open := zk.WorldACL(zk.PermAll)

		// Basic CRUD and versions.
		get("/")
		children("/")
		get("/zookeeper")
		children("/zookeeper")
		get("/zookeeper/config")
		get("/zookeeper/quota")
		create("/a", "hello", 0, open)
		exists("/a")
		get("/a")
		set("/a", "v1", 0)
		set("/a", "v2", 0)
		set("/a", "v2", -1)
		create("/a", "dup", 0, open)
		create("/missing/child", "", 0, open)
		create("/a/b", "", 0, open)
		del("/a", -1)
		del("/a/b", 5)
		del("/a/b", 0)
		del("/nothing", -1)
		exists("/nothing")
		get("/nothing")
		set("/nothing", "x", -1)
		create("/a/b", strings.Repeat("x", 1000), 0, open)
		get("/a")
		children("/a")

		// Every create mode.
		create("/a/seq-", "", zk.FlagSequence, open)
		create("/a/seq-", "", zk.FlagSequence, open)
		create("/a/eseq-", "", zk.FlagEphemeral|zk.FlagSequence, open)
		create("/a/eph", "e", zk.FlagEphemeral, open)
		exists("/a/eph")
		create("/a/eph/child", "", 0, open)
		p, err := c.CreateContainer("/cont", []byte("c"), zk.FlagContainer, open)
		tr.printf("createContainer path=/cont -> %s err=%s", p, errName(err))
		exists("/cont")
		p, err = c.CreateTTL("/ttl", []byte("t"), zk.FlagTTL, open, time.Hour)
		tr.printf("createTTL path=/ttl -> %s err=%s", p, errName(err))
		exists("/ttl")
		p, err = c.CreateTTL("/ttlseq-", []byte("t"), zk.FlagPersistentSequentialWithTTL, open, time.Hour)
		tr.printf("createTTL path=/ttlseq- seq -> %s err=%s", p, errName(err))
		p, err = c.CreateTTL("/ttlzero", nil, zk.FlagTTL, open, 0)
		tr.printf("createTTL path=/ttlzero ttl=0 -> %s err=%s", p, errName(err))
		p, err = c.CreateTTL("/ttlhuge", nil, zk.FlagTTL, open, time.Duration(1<<40)*time.Millisecond)
		tr.printf("createTTL path=/ttlhuge ttl=2^40ms -> %s err=%s", p, errName(err))
		children("/a")
		children("/")

		// Containers are deleted once their last child goes; TTL nodes when their TTL
		// has passed without children. Both by the container manager (checkIntervalMs).
		create("/cont/kid", "", 0, open)
		ok, _, ch, err := c.ExistsW("/cont")
		tr.printf("existsW path=/cont -> %v err=%s", ok, errName(err))
		del("/cont/kid", -1)
		waitEvent(t, tr, ch)
		exists("/cont")
		p, err = c.CreateTTL("/short", nil, zk.FlagTTL, open, 200*time.Millisecond)
		tr.printf("createTTL path=/short ttl=200ms -> %s err=%s", p, errName(err))
		ok, _, ch, err = c.ExistsW("/short")
		tr.printf("existsW path=/short -> %v err=%s", ok, errName(err))
		waitEvent(t, tr, ch)
		exists("/short")

		// ACLs.
		create("/noacl", "", 0, nil)
		create("/authacl", "", 0, zk.AuthACL(zk.PermAll))
		create("/digest", "secret", 0, zk.DigestACL(zk.PermAll, "user", "pw"))
		get("/digest")
		set("/digest", "x", -1)
		acl, st, err := c.GetACL("/digest")
		tr.printf("getACL path=/digest -> %v err=%s %s", acl, errName(err), statLine(st))
		tr.printf("addAuth digest user:pw -> err=%s", errName(c.AddAuth("digest", []byte("user:pw"))))
		get("/digest")
		create("/authacl", "", 0, zk.AuthACL(zk.PermRead|zk.PermAdmin))
		acl, st, err = c.GetACL("/authacl")
		tr.printf("getACL path=/authacl -> %v err=%s %s", acl, errName(err), statLine(st))
		st, err = c.SetACL("/authacl", open, 3)
		tr.printf("setACL path=/authacl version=3 -> err=%s %s", errName(err), statLine(st))
		st, err = c.SetACL("/authacl", open, 0)
		tr.printf("setACL path=/authacl version=0 -> err=%s %s", errName(err), statLine(st))
		create("/ip", "ip", 0, []zk.ACL{{Perms: zk.PermRead, Scheme: "ip", ID: "127.0.0.1"}})
		get("/ip")
		set("/ip", "x", -1)
		create("/ipother", "ip", 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "10.1.2.0/24"}})
		get("/ipother")
		create("/badip", "", 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "ip", ID: "not-an-ip"}})
		create("/badscheme", "", 0, []zk.ACL{{Perms: zk.PermAll, Scheme: "nosuch", ID: "x"}})
		create("/readonly", "", 0, zk.WorldACL(zk.PermRead))
		create("/readonly/kid", "", 0, open)
		del("/readonly", -1)

		// Multi.
		res, err := c.Multi(
			&zk.CreateRequest{Path: "/m", Data: []byte("m"), Acl: open},
			&zk.CreateRequest{Path: "/m/s-", Acl: open, Flags: zk.FlagSequence},
			&zk.SetDataRequest{Path: "/m", Data: []byte("m2"), Version: 0},
			&zk.CheckVersionRequest{Path: "/m", Version: 1},
			&zk.DeleteRequest{Path: "/a/b", Version: -1},
		)
		printMulti(tr, "multi-ok", res, err)
		res, err = c.Multi(
			&zk.CreateRequest{Path: "/m2", Acl: open},
			&zk.CheckVersionRequest{Path: "/m", Version: 7},
			&zk.SetDataRequest{Path: "/m", Data: []byte("m3"), Version: -1},
		)
		printMulti(tr, "multi-fail", res, err)
		exists("/m2")
		get("/m")
		res, err = c.Multi()
		printMulti(tr, "multi-empty", res, err)

		// Sync.
		sp, err := c.Sync("/m")
		tr.printf("sync path=/m -> %s err=%s", sp, errName(err))

		// Watches: one of each kind on /w, then changes; the event order on the
		// connection is the server's notification order.
		from := c.events.len()
		_, _, dataCh, _ := c.GetW("/w")
		tr.printf("getW path=/w (missing) -> registered=%v", dataCh != nil)
		_, _, existCh, err := c.ExistsW("/w")
		tr.printf("existsW path=/w -> err=%s", errName(err))
		create("/w", "0", 0, open)
		waitEvent(t, tr, existCh)
		_, _, dataCh, _ = c.GetW("/w")
		_, _, existCh, _ = c.ExistsW("/w")
		_, _, childCh, _ := c.ChildrenW("/w")
		set("/w", "1", -1)
		waitEvent(t, tr, dataCh)
		waitEvent(t, tr, existCh)
		create("/w/kid", "", 0, open)
		waitEvent(t, tr, childCh)
		_, _, dataCh, _ = c.GetW("/w")
		_, _, childCh, _ = c.ChildrenW("/w")
		del("/w/kid", -1)
		waitEvent(t, tr, childCh)
		_, _, childCh, _ = c.ChildrenW("/w")
		del("/w", -1)
		waitEvent(t, tr, dataCh)
		waitEvent(t, tr, childCh)
		for _, l := range c.events.watchEvents(from) {
			tr.printf("%s", l)
		}
		return tr.String()
	})
}

// waitEvent waits for one event on a go-zookeeper watch channel and prints it.
func waitEvent(t *testing.T, tr *transcript, ch <-chan zk.Event) {
	t.Helper()
	select {
	case ev := <-ch:
		tr.printf("watch type=%s path=%s err=%s", ev.Type, ev.Path, errName(ev.Err))
	case <-time.After(eventDeadline):
		t.Fatalf("no watch event within %v", eventDeadline)
	}
}

func printMulti(tr *transcript, name string, res []zk.MultiResponse, err error) {
	tr.printf("%s -> err=%s results=%d", name, errName(err), len(res))
	for i, r := range res {
		tr.printf("%s[%d] path=%s err=%s %s", name, i, r.String, errName(r.Error), statLine(r.Stat))
	}
}

// TestGoZKSessions checks session expiry (a partitioned client's ephemeral disappears
// and it sees Expired), and a reconnect that keeps the session, its ephemerals and its
// watches.
func TestGoZKSessions(t *testing.T) {
	t.Parallel()
	extra := map[string]string{"tickTime": "500"}
	differential(t, extra, func(t *testing.T, s *Server) string {
		tr := &transcript{}
		a := connectGo(t, s, 10*time.Second)
		b := connectGo(t, s, 1500*time.Millisecond)
		tr.printf("a session=%#x", a.SessionID())
		tr.printf("b session=%#x", b.SessionID())
		open := zk.WorldACL(zk.PermAll)

		// Expiry: b is cut off; a watches b's ephemeral go.
		p, err := b.Create("/eph-b", []byte("b"), zk.FlagEphemeral, open)
		tr.printf("b create %s err=%s", p, errName(err))
		ok, st, ch, err := a.ExistsW("/eph-b")
		tr.printf("a existsW /eph-b -> %v err=%s %s", ok, errName(err), statLine(st))
		from := b.events.len()
		b.dialer.cut(true)
		b.events.waitFor(t, from, "b disconnected", func(ev zk.Event) bool { return ev.State == zk.StateDisconnected })
		tr.printf("b disconnected")
		waitEvent(t, tr, ch)
		ok, _, err = a.Exists("/eph-b")
		tr.printf("a exists /eph-b -> %v err=%s", ok, errName(err))
		from = b.events.len()
		b.dialer.heal()
		b.events.waitFor(t, from, "b expired", func(ev zk.Event) bool { return ev.State == zk.StateExpired })
		tr.printf("b expired")
		b.events.waitFor(t, from, "b new session", func(ev zk.Event) bool { return ev.State == zk.StateHasSession })
		tr.printf("b new session=%#x", b.SessionID())

		// Reconnect within the session timeout keeps the session and its watches.
		c := connectGo(t, s, 10*time.Second)
		tr.printf("c session=%#x", c.SessionID())
		p, err = c.Create("/eph-c", []byte("c"), zk.FlagEphemeral, open)
		tr.printf("c create %s err=%s", p, errName(err))
		_, _, dataCh, err := c.GetW("/eph-c")
		tr.printf("c getW /eph-c err=%s", errName(err))
		_, _, childCh, err := c.ChildrenW("/")
		tr.printf("c childrenW / err=%s", errName(err))
		before := c.SessionID()
		from = c.events.len()
		c.dialer.cut(false)
		c.events.waitFor(t, from, "c disconnected", func(ev zk.Event) bool { return ev.State == zk.StateDisconnected })
		c.events.waitFor(t, from, "c session again", func(ev zk.Event) bool { return ev.State == zk.StateHasSession })
		tr.printf("c reconnected same-session=%v session=%#x", c.SessionID() == before, c.SessionID())
		ok, st, err = a.Exists("/eph-c")
		tr.printf("a exists /eph-c -> %v err=%s %s", ok, errName(err), statLine(st))
		st, err = a.Set("/eph-c", []byte("changed"), -1)
		tr.printf("a set /eph-c err=%s %s", errName(err), statLine(st))
		waitEvent(t, tr, dataCh)
		p, err = a.Create("/new", nil, 0, open)
		tr.printf("a create %s err=%s", p, errName(err))
		waitEvent(t, tr, childCh)

		// Closing a session deletes its ephemerals at once.
		ok, _, ch, err = a.ExistsW("/eph-c")
		tr.printf("a existsW /eph-c -> %v err=%s", ok, errName(err))
		c.Close()
		waitEvent(t, tr, ch)
		return tr.String()
	})
}

// TestGoZKTTLDisabled: TTL nodes are refused unless extendedTypesEnabled is set.
func TestGoZKTTLDisabled(t *testing.T) {
	differential(t, nil, func(t *testing.T, s *Server) string {
		tr := &transcript{}
		c := connectGo(t, s, 10*time.Second)
		p, err := c.CreateTTL("/ttl", nil, zk.FlagTTL, zk.WorldACL(zk.PermAll), time.Hour)
		tr.printf("createTTL path=/ttl -> %q err=%s", p, errName(err))
		ok, _, err := c.Exists("/ttl")
		tr.printf("exists path=/ttl -> %v err=%s", ok, errName(err))
		p, err = c.CreateContainer("/cont", nil, zk.FlagContainer, zk.WorldACL(zk.PermAll))
		tr.printf("createContainer path=/cont -> %q err=%s", p, errName(err))
		return tr.String()
	})
}

// TestGoZKFourLetterWords runs go-zookeeper's 4lw helpers (FLWRuok, FLWSrvr, FLWCons).
func TestGoZKFourLetterWords(t *testing.T) {
	differential(t, nil, func(t *testing.T, s *Server) string {
		tr := &transcript{}
		c := connectGo(t, s, 10*time.Second)
		tr.printf("session=%#x", c.SessionID())
		if _, err := c.Create("/x", []byte("x"), 0, zk.WorldACL(zk.PermAll)); err != nil {
			t.Fatal(err)
		}
		tr.printf("ruok -> %v", zk.FLWRuok([]string{s.Addr}, 5*time.Second))
		stats, ok := zk.FLWSrvr([]string{s.Addr}, 5*time.Second)
		if s.Kind == "warden" && !ok {
			t.Errorf("go-zookeeper cannot parse warden's srvr output: %v", stats[0].Error)
		}
		tr.printf("srvr ok=%v n=%d", ok, len(stats))
		for _, st := range stats {
			tr.printf("srvr mode=%s nodeCount=%d connections=%d outstanding=%d epoch=%d counter-nonzero=%v version-set=%v err=%v",
				st.Mode, st.NodeCount, st.Connections, st.Outstanding, st.Epoch, st.Counter > 0, st.Version != "", st.Error)
		}
		cons, ok := zk.FLWCons([]string{s.Addr}, 5*time.Second)
		tr.printf("cons ok=%v n=%d", ok, len(cons))
		for _, sc := range cons {
			tr.printf("cons clients=%d err=%v", len(sc.Clients), sc.Error)
			for _, cl := range sc.Clients {
				tr.printf("cons client session=%#x timeout=%d addr-set=%v err=%v", cl.SessionID, cl.Timeout, cl.Addr != "", cl.Error)
			}
		}
		return tr.String()
	})
}
