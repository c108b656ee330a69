package torture

import (
	"context"
	"errors"
	"fmt"
	"net"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/test/torture/checker"
	"github.com/wardenzk/warden/wire"
)

// The sessions workload's timing.
const (
	// shortSession is the timeout of the sessions the harness lets
	// expire (their client stops talking to the ensemble).
	shortSession = 2 * time.Second
	// ephemeralGoneDeadline bounds the wait, after healing, for the
	// dead sessions' ephemerals to vanish (expiry, then deletion on
	// every member).
	ephemeralGoneDeadline = 30 * time.Second
)

// fate is what the harness does to an ephemeral session.
type fate int

const (
	fateLive   fate = iota // kept to the end
	fateClose              // closed by its client
	fateExpire             // its client cut off, so the ensemble expires it
)

// sessions is the session-guarantees workload:
//   - ephemeral owners create ephemerals, then live to the end, close, or
//     are cut off and expire; after healing the dead sessions' ephemerals
//     must be gone from every member and the live ones' on every member;
//   - watchers keep a data watch each on one of a few nodes a writer
//     updates, and record every read and event in the order their client
//     saw them.
type sessions struct {
	e      *env
	owners int
	dir    string // ephemerals
	wdir   string // watched nodes
	wkeys  int

	mu    sync.Mutex
	recs  []*checker.SessionRecord
	live  []liveSession
	obs   recorder[checker.WatchObs]
	wrote recorder[write]
}

func (w *sessions) name() string { return "sessions" }

func (w *sessions) setup(ctx context.Context, c *client.Conn) error {
	if err := ensurePath(ctx, c, w.dir); err != nil {
		return err
	}
	if err := ensurePath(ctx, c, w.wdir); err != nil {
		return err
	}
	for i := 0; i < w.wkeys; i++ {
		if _, err := c.Create(ctx, w.wkey(i), []byte("0"), client.Persistent, client.OpenACL); err != nil && !errors.Is(err, client.ErrNodeExists) {
			return err
		}
	}
	return nil
}

func (w *sessions) wkey(i int) string { return fmt.Sprintf("%s/w%d", w.wdir, i) }

func (w *sessions) run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Add(3)
	go func() { defer wg.Done(); clients(w.owners, func(k int) { w.owner(ctx, k) }) }()
	go func() { defer wg.Done(); clients(w.wkeys, func(k int) { w.watcher(ctx, k) }) }()
	go func() { defer wg.Done(); w.writer(ctx) }()
	wg.Wait()
}

// cutDialer dials normally until cut, then closes every connection it
// made and refuses to dial again: the session's client goes silent.
type cutDialer struct {
	mu    sync.Mutex
	cut   bool
	conns []net.Conn
}

func (d *cutDialer) dial(ctx context.Context, network, addr string) (net.Conn, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.cut {
		return nil, errors.New("torture: client cut off")
	}
	var nd net.Dialer
	c, err := nd.DialContext(ctx, network, addr)
	if err == nil {
		d.conns = append(d.conns, c)
	}
	return c, err
}

func (d *cutDialer) cutOff() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.cut = true
	for _, c := range d.conns {
		c.Close()
	}
}

// owner runs ephemeral sessions one after another until ctx ends, each
// with a fate drawn from the seed.
func (w *sessions) owner(ctx context.Context, k int) {
	rng := w.e.rng(w.name(), k)
	for gen := 0; ctx.Err() == nil; gen++ {
		f := fate(rng.IntN(3))
		d := &cutDialer{}
		timeout := sessionTimeout
		if f == fateExpire {
			timeout = shortSession
		}
		c, err := w.e.dialAll(ctx, client.WithDialer(d.dial), client.WithSessionTimeout(timeout))
		if err != nil {
			return
		}
		rec := &checker.SessionRecord{Client: k, Session: c.SessionID()}
		w.mu.Lock()
		w.recs = append(w.recs, rec)
		w.mu.Unlock()
		creates := 1 + rng.IntN(4)
		for i := 0; i < creates && think(ctx, rng, 300); i++ {
			p := fmt.Sprintf("%s/%d-%d-%d", w.dir, k, gen, i)
			octx, cancel := context.WithTimeout(ctx, opTimeout)
			_, err := c.Create(octx, p, nil, client.Ephemeral, client.OpenACL)
			cancel()
			w.mu.Lock()
			switch outcomeOf(err) {
			case checker.OK:
				rec.Created = append(rec.Created, p)
			case checker.Unknown:
				rec.Maybe = append(rec.Maybe, p)
			}
			w.mu.Unlock()
		}
		if f == fateLive || ctx.Err() != nil {
			// Held to the end of the run, then checked alive.
			<-ctx.Done()
			defer w.finish(rec, c)
			return
		}
		w.mu.Lock()
		rec.Died = true
		w.mu.Unlock()
		if f == fateClose {
			c.Close()
		} else {
			d.cutOff()
			// The client gives up on its own after the session timeout;
			// Close here only frees it (the dialer stays cut, so Close
			// cannot reach the ensemble to close the session).
			c.Close()
		}
	}
}

// finish records whether a live session's client saw it expire (its
// ephemerals must then be gone); the session is closed only after the
// final reads (see closeLive).
func (w *sessions) finish(rec *checker.SessionRecord, c *client.Conn) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.live = append(w.live, liveSession{rec, c})
}

// writer updates the watched nodes until ctx ends.
func (w *sessions) writer(ctx context.Context) {
	rng := w.e.rng(w.name()+"/writer", 0)
	s := &session{e: w.e}
	defer s.close()
	for n := 1; think(ctx, rng, 30); n++ {
		c := s.get(ctx)
		if c == nil {
			return
		}
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		wr := write{Span: checker.Span{Call: w.e.now()}}
		_, err := c.Set(octx, w.wkey(rng.IntN(w.wkeys)), []byte(strconv.Itoa(n)), -1)
		wr.Return, wr.Outcome = w.e.now(), outcomeOf(err)
		cancel()
		w.wrote.add(wr)
	}
}

// watcher k keeps a data watch on watched node k (one node a session,
// so the order in which its client delivered reads and events is exactly
// the order they are recorded in), recording each read (sync, then
// getData, which re-arms the watch) and each NodeDataChanged event. A
// session that ends is replaced.
func (w *sessions) watcher(ctx context.Context, k int) {
	for ctx.Err() == nil {
		c, err := w.e.dialAll(ctx)
		if err != nil {
			return
		}
		w.watchSession(ctx, k, c, w.wkey(k%w.wkeys))
		c.Close()
	}
}

// watchSession runs one watcher session until ctx ends or the session
// ends.
func (w *sessions) watchSession(ctx context.Context, k int, c *client.Conn, path string) {
	sid := c.SessionID()
	seq := 0
	record := func(o checker.WatchObs) {
		o.Client, o.Session, o.Seq, o.Path = k, sid, seq, path
		seq++
		w.obs.add(o)
	}
	for ctx.Err() == nil {
		octx, cancel := context.WithTimeout(ctx, opTimeout)
		err := c.Sync(octx, path)
		var st client.Stat
		var ch <-chan client.Event
		if err == nil {
			_, st, ch, err = c.GetW(octx, path)
		}
		cancel()
		if err != nil {
			if c.State() == client.StateExpired || c.State() == client.StateClosed {
				return
			}
			continue
		}
		record(checker.WatchObs{Kind: checker.ObsRead, Mzxid: st.Mzxid})
		select {
		case <-ctx.Done():
			return
		case ev, ok := <-ch:
			if !ok || ev.Err != nil {
				return // the session ended
			}
			if ev.Type == wire.EventNodeDataChanged {
				record(checker.WatchObs{Kind: checker.ObsEvent, Zxid: ev.Zxid})
			}
		}
	}
}

// liveSession is a session kept to the end, closed after the final reads.
type liveSession struct {
	rec  *checker.SessionRecord
	conn *client.Conn
}

func (w *sessions) check(ctx context.Context, members []string) []checker.Result {
	w.mu.Lock()
	live := w.live
	w.mu.Unlock()
	defer func() {
		for _, l := range live {
			l.conn.Close()
		}
	}()
	// A live session proves it is alive with a request on the healed
	// ensemble, or its client learns that it expired.
	var unusable []string
	for _, l := range live {
		octx, cancel := context.WithTimeout(ctx, connectTimeout+opTimeout)
		_, _, err := l.conn.Exists(octx, w.dir)
		cancel()
		switch {
		case err == nil:
		case l.conn.State() == client.StateExpired:
			w.mu.Lock()
			l.rec.Died = true
			w.mu.Unlock()
		default:
			unusable = append(unusable, fmt.Sprintf("live session 0x%x unusable after healing: %v", l.rec.Session, err))
		}
	}
	if len(unusable) > 0 {
		return []checker.Result{{Workload: "ephemerals", Anomalies: unusable}}
	}
	w.mu.Lock()
	var recs []checker.SessionRecord
	dead := map[string]bool{}
	for _, r := range w.recs {
		recs = append(recs, *r)
		if r.Died {
			for _, p := range append(append([]string(nil), r.Created...), r.Maybe...) {
				dead[p] = true
			}
		}
	}
	w.mu.Unlock()

	// Wait, bounded, until no member lists a dead session's ephemeral:
	// expiry needs the session timeout to pass after the ensemble healed.
	list := func(ctx context.Context, c *client.Conn) ([]string, error) {
		kids, _, err := c.Children(ctx, w.dir)
		for i := range kids {
			kids[i] = w.dir + "/" + kids[i]
		}
		sort.Strings(kids)
		return kids, err
	}
	deadline := time.Now().Add(ephemeralGoneDeadline)
	var final map[string][]string
	for {
		var err error
		final, err = readEach(ctx, w.e, members, w.dir, list)
		if err != nil {
			return []checker.Result{{Workload: "ephemerals", Anomalies: []string{err.Error()}}}
		}
		lingering := false
		for _, paths := range final {
			for _, p := range paths {
				lingering = lingering || dead[p]
			}
		}
		if !lingering || time.Now().After(deadline) {
			break
		}
		time.Sleep(250 * time.Millisecond)
	}
	return []checker.Result{checker.CheckEphemerals(recs, final), checker.CheckWatches(w.obs.all())}
}

func (w *sessions) writes() []write { return w.wrote.all() }
