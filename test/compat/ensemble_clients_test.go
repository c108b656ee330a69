//go:build compat

package compat

import (
	"errors"
	"fmt"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
)

// Write stream of the clients scenario: writes acknowledged before the leader is killed,
// and after the new leader is elected, before the stream stops.
const (
	streamBeforeKill = 20
	streamAfterKill  = 20
)

// orderedHosts is a go-zookeeper HostProvider that tries its servers in its own order
// (zk.Connect shuffles the list it passes to Init), so a test decides which member a
// session starts on. Like the default provider, it reports retryStart after a whole
// round without a connection.
type orderedHosts struct {
	mu      sync.Mutex
	servers []string // in the order to try
	curr    int
	last    int
}

// Init checks that go-zookeeper was given the same servers and starts before the first.
func (h *orderedHosts) Init(servers []string) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	a, b := sortedCopy(servers), sortedCopy(h.servers)
	if strings.Join(a, ",") != strings.Join(b, ",") {
		return fmt.Errorf("orderedHosts: connect string %v, provider has %v", servers, h.servers)
	}
	h.curr, h.last = -1, -1
	return nil
}

func (h *orderedHosts) Len() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.servers)
}

func (h *orderedHosts) Next() (string, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.curr = (h.curr + 1) % len(h.servers)
	retryStart := h.curr == h.last
	if h.last == -1 {
		h.last = 0
	}
	return h.servers[h.curr], retryStart
}

func (h *orderedHosts) Connected() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.last = h.curr
}

// connectGoPinned opens a go-zookeeper session that tries ms in order (so it starts on
// ms[0]) and waits until it has a session.
func connectGoPinned(t *testing.T, ms []*Member, timeout time.Duration) *goClient {
	t.Helper()
	var addrs []string
	for _, m := range ms {
		addrs = append(addrs, m.Addr)
	}
	c := &goClient{events: newEventLog(), dialer: &cuttableDialer{}}
	conn, _, err := zk.Connect(addrs, timeout, zk.WithHostProvider(&orderedHosts{servers: addrs}),
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

// writeStream sets one node to 1, 2, 3, ... from one session, one write at a time, and
// records which writes were acknowledged and which ended with the connection (outcome
// unknown: ErrConnectionClosed, ErrNoServer). Any other error is kept for the test to
// report.
type writeStream struct {
	mu      sync.Mutex
	acked   []int
	unknown []int
	errs    []string
	changed chan struct{} // closed and replaced on every result

	stop chan struct{}
	done chan struct{}
}

func startWriteStream(c *goClient, path string) *writeStream {
	w := &writeStream{changed: make(chan struct{}), stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for i := 1; ; i++ {
			select {
			case <-w.stop:
				return
			default:
			}
			_, err := c.Set(path, []byte(strconv.Itoa(i)), -1)
			w.mu.Lock()
			switch {
			case err == nil:
				w.acked = append(w.acked, i)
			case errors.Is(err, zk.ErrConnectionClosed), errors.Is(err, zk.ErrNoServer):
				// In flight when the connection went (outcome unknown), or queued while
				// go-zookeeper found no server in a whole round (never sent).
				w.unknown = append(w.unknown, i)
			default:
				w.errs = append(w.errs, fmt.Sprintf("write %d: %v", i, err))
			}
			close(w.changed)
			w.changed = make(chan struct{})
			w.mu.Unlock()
			if errors.Is(err, zk.ErrClosing) {
				return
			}
		}
	}()
	return w
}

// waitAcked waits (bounded) until n writes are acknowledged.
func (w *writeStream) waitAcked(t *testing.T, n int, deadline time.Duration) {
	t.Helper()
	timeout := time.After(deadline)
	for {
		w.mu.Lock()
		got, ch := len(w.acked), w.changed
		w.mu.Unlock()
		if got >= n {
			return
		}
		select {
		case <-ch:
		case <-timeout:
			t.Fatalf("write stream: %d of %d writes acknowledged within %v; %s", got, n, deadline, w)
		}
	}
}

// halt stops the stream after the write in flight and waits for it (bounded).
func (w *writeStream) halt(t *testing.T) {
	t.Helper()
	close(w.stop)
	select {
	case <-w.done:
	case <-time.After(eventDeadline):
		t.Fatalf("write stream did not stop within %v; %s", eventDeadline, w)
	}
}

func (w *writeStream) String() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return fmt.Sprintf("acked=%d unknown=%v errors=%v", len(w.acked), w.unknown, w.errs)
}

// ensembleClients: go-zookeeper (g, on the leader) and kazoo (k, on a follower) share
// data and watches across members, then keep their sessions, ephemerals and watches
// through the leader's kill -9 in the middle of a stream of writes.
func ensembleClients(t *testing.T, e *Ensemble) string {
	tr := &transcript{}
	leader, followers := e.Roles(t)
	open := zk.WorldACL(zk.PermAll)

	g := connectGoPinned(t, e.Pinned(leader), 10*time.Second)
	k := startAgent(t, "kazoo", "/usr/bin/python3", "kazoo_ensemble/agent.py")
	kSession := strings.TrimPrefix(k.call(t, "connect %s 10", ConnectString(e.Pinned(followers[0])...)), "session=")
	kSID, err := strconv.ParseUint(strings.TrimPrefix(kSession, "0x"), 16, 64)
	if err != nil {
		t.Fatalf("kazoo session %q: %v", kSession, err)
	}
	gSession := g.SessionID()
	gOn, kOn := e.SessionMember(t, gSession), e.SessionMember(t, int64(kSID))
	if gOn != leader || kOn != followers[0] {
		t.Errorf("sessions started on members %d (go-zookeeper) and %d (kazoo), want %d and %d; modes now %v",
			gOn.ID, kOn.ID, leader.ID, followers[0].ID, modes(e.Members))
	}
	tr.printf("g (go-zookeeper) on %s", RoleOf(gOn, leader))
	tr.printf("k (kazoo) on %s", RoleOf(kOn, leader))

	gCreate := func(path, data string, flags int32) {
		t.Helper()
		p, err := g.Create(path, []byte(data), flags, open)
		tr.printf("g create %s -> %s err=%s", path, p, errName(err))
	}
	gGet := func(path string) {
		t.Helper()
		_, err := g.Sync(path)
		data, st, err2 := g.Get(path)
		tr.printf("g sync+get %s -> sync=%s data=%s version=%d err=%s", path, errName(err), data, statVersion(st), errName(err2))
	}
	kCall := func(format string, args ...any) {
		t.Helper()
		cmd := fmt.Sprintf(format, args...)
		tr.printf("k %s -> %s", cmd, k.call(t, "%s", cmd))
	}
	gWait := func(ch <-chan zk.Event, what string) {
		t.Helper()
		select {
		case ev := <-ch:
			tr.printf("g watch %s fired: type=%s path=%s err=%s", what, ev.Type, ev.Path, errName(ev.Err))
		case <-time.After(eventDeadline):
			t.Fatalf("g watch %s: no event within %v", what, eventDeadline)
		}
	}

	// Writes through one member are read through the other after sync.
	gCreate("/ens", "", 0)
	gCreate("/ens/data", "v1", 0)
	kCall("sync /ens/data")
	kCall("get /ens/data")
	kCall("create /ens/k from-k")
	gGet("/ens/k")

	// A watch set through one member fires for a write through another.
	from := k.mark()
	kCall("watch_exists /ens/w")
	kCall("watch_children /ens")
	gCreate("/ens/w", "w", 0)
	k.waitEvent(t, k.waitEvent(t, from, "watch exists CREATED /ens/w"), "watch children CHILD /ens")
	tr.printf("k events: %s", strings.Join(sortedCopy(watchEventsOnly(k.eventsSince(from))), "; "))
	_, _, ch, err := g.GetW("/ens/k")
	tr.printf("g getW /ens/k err=%s", errName(err))
	kCall("set /ens/k k2")
	gWait(ch, "data /ens/k")

	// Armed for the failover: an ephemeral each, a watch each on what the other will do.
	gCreate("/ens/eph-g", "g", zk.FlagEphemeral)
	kCall("create /ens/eph-k k ephemeral")
	ok, _, afterK, err := g.ExistsW("/ens/after-k")
	tr.printf("g existsW /ens/after-k -> %v err=%s", ok, errName(err))
	_, _, ephK, err := g.GetW("/ens/eph-k")
	tr.printf("g getW /ens/eph-k err=%s", errName(err))
	kCall("watch_exists /ens/after-g")
	kCall("watch_data /ens/eph-g")
	gCreate("/ens/counter", "0", 0)

	// The leader dies in the middle of a stream of writes through g, which is on it.
	stream := startWriteStream(g, "/ens/counter")
	stream.waitAcked(t, streamBeforeKill, failoverDeadline)
	kMark, gMark := k.mark(), g.events.len()
	e.Kill(t, leader)
	newLeader := e.WaitRoles(t, e.Others(leader), failoverDeadline)
	stream.mu.Lock()
	ackedAtElection := len(stream.acked)
	stream.mu.Unlock()
	stream.waitAcked(t, ackedAtElection+streamAfterKill, failoverDeadline)
	stream.halt(t)
	t.Logf("leader %d killed; member %d elected; stream %s", leader.ID, newLeader.ID, stream)
	if len(stream.errs) > 0 {
		t.Errorf("write stream errors other than connection loss: %v", stream.errs)
	}
	lastAcked := stream.acked[len(stream.acked)-1]
	tr.printf("leader killed: others=%s; stream acked>=%d before and >=%d after the election, other errors=%d",
		sortedModes(e.Others(leader)), streamBeforeKill, streamAfterKill, len(stream.errs))

	// Both sessions carry on: same ids, never expired (kazoo: never LOST).
	waitKazooConnected(t, k)
	var gStates []string
	for _, ev := range g.events.snapshot()[gMark:] {
		if ev.Type == zk.EventSession {
			gStates = append(gStates, ev.State.String())
		}
	}
	t.Logf("g session events after the kill: %v; k: %q", gStates, k.eventsSince(kMark))
	t.Logf("g now on member %d", e.SessionMember(t, g.SessionID()).ID)
	tr.printf("g same-session=%v expired=%v", g.SessionID() == gSession, containsString(gStates, zk.StateExpired.String()))
	kNow := k.call(t, "session")
	tr.printf("k same-session=%v lost=%v now %s", strings.HasPrefix(kNow, "session="+kSession+" "),
		containsString(k.eventsSince(kMark), "state LOST"), strings.TrimPrefix(kNow, "session="+kSession+" "))

	// Every acknowledged write is there, and nothing after the last one.
	kCall("sync /ens/counter")
	got := k.call(t, "get /ens/counter")
	tr.printf("k get /ens/counter is the last acknowledged write: %v", strings.HasPrefix(got, fmt.Sprintf("data=%d ", lastAcked)))
	if !strings.HasPrefix(got, fmt.Sprintf("data=%d ", lastAcked)) {
		t.Errorf("after the failover /ens/counter is %q; the last acknowledged write was %d (%s)", got, lastAcked, stream)
	}

	// Ephemerals survived. go-zookeeper's watches were re-armed on the new member
	// (SetWatches) and fire now. kazoo 2.8 fires its one-shot watches with a NONE event
	// when its connection drops and forgets them (KazooClient._reset_watchers); it sets
	// them again, as kazoo applications (and its DataWatch/ChildrenWatch) do.
	ok, _, err = g.Exists("/ens/eph-k")
	tr.printf("g exists /ens/eph-k -> %v err=%s", ok, errName(err))
	kCall("exists /ens/eph-g")
	kCall("create /ens/after-k k")
	gWait(afterK, "exists /ens/after-k")
	kCall("set /ens/eph-k k2")
	gWait(ephK, "data /ens/eph-k")
	tr.printf("k watch events since the kill: %s", strings.Join(sortedCopy(watchEventsOnly(k.eventsSince(kMark))), "; "))
	from = k.mark()
	kCall("watch_exists /ens/after-g")
	kCall("watch_data /ens/eph-g")
	gCreate("/ens/after-g", "g", 0)
	k.waitEvent(t, from, "watch exists CREATED /ens/after-g")
	_, err = g.Set("/ens/eph-g", []byte("g2"), -1)
	tr.printf("g set /ens/eph-g err=%s", errName(err))
	k.waitEvent(t, from, "watch data CHANGED /ens/eph-g")
	tr.printf("k events: %s", strings.Join(sortedCopy(watchEventsOnly(k.eventsSince(from))), "; "))

	// The killed member comes back as a follower and serves everything written meanwhile.
	e.Start(t, leader)
	e.WaitRoles(t, e.Members, failoverDeadline)
	r := connectGoPinned(t, []*Member{leader}, 10*time.Second)
	_, err = r.Sync("/ens/counter")
	data, _, err2 := r.Get("/ens/counter")
	tr.printf("restarted member: sync err=%s counter is the last acknowledged write: %v err=%s", errName(err), string(data) == strconv.Itoa(lastAcked), errName(err2))
	kids, _, err := r.Children("/ens")
	sort.Strings(kids)
	tr.printf("restarted member: children /ens -> %v err=%s", kids, errName(err))
	r.Close()

	// g closes: its ephemeral goes, and k (on another member) sees it go.
	kCall("watch_exists /ens/eph-g")
	from = k.mark()
	g.Close()
	k.waitEvent(t, from, "watch exists DELETED /ens/eph-g")
	kCall("exists /ens/eph-g")
	kCall("stop")
	return tr.String()
}

// waitKazooConnected polls the kazoo agent (bounded) until its session is CONNECTED.
func waitKazooConnected(t *testing.T, k *agent) {
	t.Helper()
	end := time.Now().Add(failoverDeadline)
	for {
		s := k.call(t, "session")
		if strings.HasSuffix(s, "state=CONNECTED") {
			return
		}
		if time.Now().After(end) {
			t.Fatalf("kazoo not connected within %v: %s", failoverDeadline, s)
		}
		time.Sleep(pollInterval)
	}
}

func statVersion(st *zk.Stat) int32 {
	if st == nil {
		return -1
	}
	return st.Version
}

func containsString(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortedCopy(list []string) []string {
	out := append([]string(nil), list...)
	sort.Strings(out)
	return out
}

// watchEventsOnly keeps the "watch ..." agent events (state changes depend on timing).
func watchEventsOnly(events []string) []string {
	var out []string
	for _, ev := range events {
		if strings.HasPrefix(ev, "watch ") {
			out = append(out, ev)
		}
	}
	return out
}
