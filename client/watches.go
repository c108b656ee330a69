package client

import (
	"context"
	"slices"
	"strings"
	"sync"

	"github.com/wardenzk/warden/wire"
)

// setWatchesMaxLength is ZooKeeper's SET_WATCHES_MAX_LENGTH: a setWatches
// batch is filled until its paths add up to this many bytes.
const setWatchesMaxLength = 128 << 10

// watchManager holds the local watchers. The server keeps one
// registration per (path, kind) per connection; every local watcher on
// that path gets the one event, as ZooKeeper's ZKWatchManager does. Paths
// are client paths (chroot stripped).
type watchManager struct {
	c *Conn

	mu sync.Mutex
	// One-shot watchers: each channel has capacity 1, receives at most
	// one Event and is then closed. data holds getData and exists-on-a-
	// node watchers; exist holds exists-on-a-missing-node watchers.
	data  map[string][]chan Event
	exist map[string][]chan Event
	child map[string][]chan Event
	// config holds GetConfigW's watchers: /zookeeper/config is outside
	// any chroot, so they are kept apart from the client paths above.
	config []chan Event
	// Persistent watches (addWatch), by mode.
	persistent map[string][]*Watch
	recursive  map[string][]*Watch
	ended      error // set by endAll; no registration after it
}

func newWatchManager(c *Conn) *watchManager {
	return &watchManager{
		c:          c,
		data:       make(map[string][]chan Event),
		exist:      make(map[string][]chan Event),
		child:      make(map[string][]chan Event),
		persistent: make(map[string][]*Watch),
		recursive:  make(map[string][]*Watch),
	}
}

type watchKind int

const (
	kindData watchKind = iota
	kindExist
	kindChild
)

func (m *watchManager) table(k watchKind) map[string][]chan Event {
	switch k {
	case kindData:
		return m.data
	case kindExist:
		return m.exist
	}
	return m.child
}

// addOneShot registers ch; it runs on the read loop with the reply.
func (m *watchManager) addOneShot(k watchKind, path string, ch chan Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended != nil {
		ch <- Event{Type: wire.EventNone, Path: path, Zxid: NoZxid, Err: m.ended}
		close(ch)
		return
	}
	t := m.table(k)
	t[path] = append(t[path], ch)
}

func (m *watchManager) addPersistent(w *Watch) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended != nil {
		w.q.push(Event{Type: wire.EventNone, Path: w.path, Zxid: NoZxid, Err: m.ended})
		w.q.end()
		return
	}
	t := m.persistent
	if w.recursive {
		t = m.recursive
	}
	t[w.path] = append(t[w.path], w)
}

func fire(chs []chan Event, ev Event) {
	for _, ch := range chs {
		ch <- ev
		close(ch)
	}
}

// addConfig registers a GetConfigW watcher; it runs on the read loop.
func (m *watchManager) addConfig(ch chan Event) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.ended != nil {
		ch <- Event{Type: wire.EventNone, Path: ConfigPath, Zxid: NoZxid, Err: m.ended}
		close(ch)
		return
	}
	m.config = append(m.config, ch)
}

// dispatchConfig delivers a notification for the server path
// /zookeeper/config to the GetConfigW watchers.
func (m *watchManager) dispatchConfig(typ wire.EventType, zxid int64) {
	if typ != wire.EventNodeDataChanged && typ != wire.EventNodeDeleted && typ != wire.EventNodeCreated {
		return
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	fire(m.config, Event{Type: typ, Path: ConfigPath, Zxid: zxid})
	m.config = nil
}

// dispatch delivers a server notification, fired by transaction zxid, to
// the one-shot and persistent watchers it concerns. It never blocks.
func (m *watchManager) dispatch(path string, typ wire.EventType, zxid int64) {
	ev := Event{Type: typ, Path: path, Zxid: zxid}
	m.mu.Lock()
	defer m.mu.Unlock()
	take := func(t map[string][]chan Event) {
		fire(t[path], ev)
		delete(t, path)
	}
	switch typ {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		take(m.data)
		take(m.exist)
	case wire.EventNodeChildrenChanged:
		take(m.child)
	case wire.EventNodeDeleted:
		take(m.data)
		take(m.exist)
		take(m.child)
	}
	for _, w := range m.persistent[path] {
		w.q.push(ev)
	}
	if typ == wire.EventNodeChildrenChanged {
		return // recursive watches see node events only
	}
	for p := path; ; p = parent(p) {
		for _, w := range m.recursive[p] {
			w.q.push(ev)
		}
		if p == "/" {
			return
		}
	}
}

func parent(p string) string {
	i := strings.LastIndexByte(p, '/')
	if i <= 0 {
		return "/"
	}
	return p[:i]
}

// endAll ends every watch with err (the Conn is dead).
func (m *watchManager) endAll(err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.ended = err
	fire(m.config, Event{Type: wire.EventNone, Path: ConfigPath, Zxid: NoZxid, Err: err})
	m.config = nil
	for _, t := range []map[string][]chan Event{m.data, m.exist, m.child} {
		for p, chs := range t {
			fire(chs, Event{Type: wire.EventNone, Path: p, Zxid: NoZxid, Err: err})
			delete(t, p)
		}
	}
	for _, t := range []map[string][]*Watch{m.persistent, m.recursive} {
		for p, ws := range t {
			for _, w := range ws {
				w.q.push(Event{Type: wire.EventNone, Path: p, Zxid: NoZxid, Err: err})
				w.q.end()
			}
			delete(t, p)
		}
	}
}

// removeLocal ends the local watchers of type t on path after a
// successful removeWatches: one-shot watchers get a DataWatchRemoved or
// ChildWatchRemoved event, persistent ones PersistentWatchRemoved, then
// their channels close.
func (m *watchManager) removeLocal(path string, t wire.WatcherType) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dataEv := Event{Type: wire.EventDataWatchRemoved, Path: path, Zxid: NoZxid}
	childEv := Event{Type: wire.EventChildWatchRemoved, Path: path, Zxid: NoZxid}
	if t == wire.WatcherData || t == wire.WatcherAny {
		fire(m.data[path], dataEv)
		fire(m.exist[path], dataEv)
		delete(m.data, path)
		delete(m.exist, path)
	}
	if t == wire.WatcherChildren || t == wire.WatcherAny {
		fire(m.child[path], childEv)
		delete(m.child, path)
	}
	end := func(tab map[string][]*Watch) {
		for _, w := range tab[path] {
			w.q.push(Event{Type: wire.EventPersistentWatchRemoved, Path: path, Zxid: NoZxid})
			w.q.end()
		}
		delete(tab, path)
	}
	if t == wire.WatcherPersistent || t == wire.WatcherAny {
		end(m.persistent)
	}
	if t == wire.WatcherPersistentRecursive || t == wire.WatcherAny {
		end(m.recursive)
	}
}

// removeWatch drops one persistent Watch. It reports whether it was the
// last local watch on its (path, mode), so the server registration can go.
// watched reports whether path still has any local watch of any kind.
func (m *watchManager) watched(path string) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.data[path])+len(m.exist[path])+len(m.child[path])+
		len(m.persistent[path])+len(m.recursive[path]) > 0
}

func (m *watchManager) removeWatch(w *Watch) (last, found bool) {
	m.mu.Lock()
	defer m.mu.Unlock()
	t := m.persistent
	if w.recursive {
		t = m.recursive
	}
	ws := t[w.path]
	for i, x := range ws {
		if x == w {
			ws = append(ws[:i:i], ws[i+1:]...)
			found = true
			break
		}
	}
	if !found {
		return false, false
	}
	if len(ws) == 0 {
		delete(t, w.path)
		return true, true
	}
	t[w.path] = ws
	return false, true
}

// setWatches builds the requests that re-arm every watch on a new
// connection, batched by setWatchesMaxLength. setWatches2 is used only
// when there are persistent watches, so 3.5 servers keep working.
func (m *watchManager) setWatches(relZxid int64) []*request {
	m.mu.Lock()
	keys := func(t map[string][]chan Event) []string {
		var out []string
		for p := range t {
			out = append(out, m.c.serverPathUnchecked(p))
		}
		return out
	}
	pkeys := func(t map[string][]*Watch) []string {
		var out []string
		for p := range t {
			out = append(out, m.c.serverPathUnchecked(p))
		}
		return out
	}
	lists := [5][]string{keys(m.data), keys(m.exist), keys(m.child), pkeys(m.persistent), pkeys(m.recursive)}
	if len(m.config) > 0 && !slices.Contains(lists[0], ConfigPath) {
		lists[0] = append(lists[0], ConfigPath) // a server path: no chroot
	}
	m.mu.Unlock()
	v2 := len(lists[3]) > 0 || len(lists[4]) > 0
	var reqs []*request
	var cur [5][]string
	size, n := 0, 0
	flush := func() {
		if n == 0 {
			return
		}
		var r *request
		if v2 {
			r = newRequest(wire.OpSetWatches2, &wire.SetWatches2{
				RelativeZxid: relZxid, DataWatches: nonNil(cur[0]), ExistWatches: nonNil(cur[1]),
				ChildWatches: nonNil(cur[2]), PersistentWatches: nonNil(cur[3]),
				PersistentRecursiveWatches: nonNil(cur[4]),
			}, nil)
		} else {
			r = newRequest(wire.OpSetWatches, &wire.SetWatches{
				RelativeZxid: relZxid, DataWatches: nonNil(cur[0]), ExistWatches: nonNil(cur[1]),
				ChildWatches: nonNil(cur[2]),
			}, nil)
		}
		reqs = append(reqs, r)
		cur = [5][]string{}
		size, n = 0, 0
	}
	for i, list := range lists {
		for _, p := range list {
			cur[i] = append(cur[i], p)
			size += len(p)
			n++
			if size >= setWatchesMaxLength {
				flush()
			}
		}
	}
	flush()
	return reqs
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

// Watch is a persistent watch (addWatch, ZooKeeper 3.6+). It survives
// reconnects: the client re-arms it with setWatches2. Events that happen
// while disconnected are not replayed (the server has no catch-up for
// persistent watches); re-read state after a reconnect if that matters.
type Watch struct {
	c         *Conn
	path      string
	recursive bool
	q         *queue[Event]
}

// Events returns the watch's events in order. The queue behind it is
// unbounded. After Remove the channel carries one
// EventPersistentWatchRemoved event and closes; when the Conn ends it
// carries an event with Err set (ErrSessionExpired, ErrClosed) and
// closes.
func (w *Watch) Events() <-chan Event { return w.q.out }

// Remove ends the watch. The server registration is removed
// (removeWatches) when no other local Watch shares its path and mode.
// ErrNoWatcher from the server (the registration is already gone) is not
// an error. Removing twice is a no-op. On servers before ZooKeeper 3.9,
// which cannot remove one persistent watch by type, the registration is
// removed only when no other watch of this Conn is on the path; otherwise
// Remove returns the server's MarshallingError and the registration stays
// (its events are dropped by the client).
func (w *Watch) Remove(ctx context.Context) error {
	last, found := w.c.watches.removeWatch(w)
	if !found {
		return nil
	}
	defer func() {
		w.q.push(Event{Type: wire.EventPersistentWatchRemoved, Path: w.path, Zxid: NoZxid})
		w.q.end()
	}()
	if !last {
		return nil
	}
	typ := wire.WatcherPersistent
	if w.recursive {
		typ = wire.WatcherPersistentRecursive
	}
	err := w.c.removeWatches(ctx, w.path, typ)
	if err == wire.ErrMarshallingError && !w.c.watches.watched(w.path) {
		// Servers before ZooKeeper 3.9 know no persistent watcher types in
		// removeWatches (ZOOKEEPER-4472). With no other watch of this Conn
		// on the path, "any" removes exactly this one.
		err = w.c.removeWatches(ctx, w.path, wire.WatcherAny)
	}
	if err == wire.ErrNoWatcher {
		return nil
	}
	return err
}

// AddWatch sets a persistent watch on path (recursive: on path and every
// descendant). Unlike one-shot watches it stays after firing and does not
// need the node to exist. Recursive watches get node events (created,
// deleted, data changed) but not NodeChildrenChanged.
func (c *Conn) AddWatch(ctx context.Context, path string, recursive bool) (*Watch, error) {
	sp, err := c.serverPath(path)
	if err != nil {
		return nil, err
	}
	mode := wire.AddWatchPersistent
	if recursive {
		mode = wire.AddWatchPersistentRecursive
	}
	w := &Watch{c: c, path: path, recursive: recursive}
	r := newRequest(wire.OpAddWatch, &wire.AddWatchRequest{Path: sp, Mode: mode}, &wire.ErrorResponse{})
	r.onReply = func(code wire.Code) {
		if code == wire.CodeOK {
			w.q = newQueue[Event](c.stopCh, &c.wg)
			c.watches.addPersistent(w)
		}
	}
	if err := c.call(ctx, r); err != nil {
		return nil, err
	}
	if w.q == nil {
		return nil, ErrConnectionLoss
	}
	return w, nil
}

// RemoveAllWatches removes every watch of type t on path, on the server
// (removeWatches) and locally: one-shot data watchers get an Event of
// type EventDataWatchRemoved, child watchers EventChildWatchRemoved,
// persistent Watches EventPersistentWatchRemoved, and their channels
// close. If the server has no such watch it returns ErrNoWatcher and
// local watchers are left alone.
func (c *Conn) RemoveAllWatches(ctx context.Context, path string, t wire.WatcherType) error {
	if err := c.removeWatches(ctx, path, t); err != nil {
		return err
	}
	c.watches.removeLocal(path, t)
	return nil
}

func (c *Conn) removeWatches(ctx context.Context, path string, t wire.WatcherType) error {
	sp, err := c.serverPath(path)
	if err != nil {
		return err
	}
	return c.call(ctx, newRequest(wire.OpRemoveWatches, &wire.RemoveWatchesRequest{Path: sp, Type: t}, nil))
}
