package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// CachedNode is a cached znode: its path, data and Stat as of its last
// read. Data is shared with the cache: do not modify it. In a TreeCache the
// Stat's child fields (Cversion, NumChildren, Pzxid) may be stale: a
// recursive watch reports no child-list changes, so a node is re-read only
// when it is created or its data changes; use Children for the child list.
type CachedNode struct {
	Path string
	Data []byte
	Stat client.Stat
}

// CacheEventType says what happened to a cached node.
type CacheEventType int

// The cache event types.
const (
	// CacheNodeAdded: a node appeared in the cache.
	CacheNodeAdded CacheEventType = iota + 1
	// CacheNodeUpdated: a cached node's data or Stat changed.
	CacheNodeUpdated
	// CacheNodeRemoved: a node left the cache.
	CacheNodeRemoved
	// CacheResynced: a full re-read finished (after a reconnect or
	// Resync); the Added/Updated/Removed events it found came before.
	CacheResynced
)

var cacheEventNames = map[CacheEventType]string{CacheNodeAdded: "added", CacheNodeUpdated: "updated",
	CacheNodeRemoved: "removed", CacheResynced: "resynced"}

// String returns the type's name.
func (t CacheEventType) String() string { return cacheEventNames[t] }

// CacheEvent is one change of a cache, delivered to Listen channels in the
// order the cache applied them. Node is the new state (the last state for
// CacheNodeRemoved; empty for CacheResynced).
type CacheEvent struct {
	Type CacheEventType
	Node CachedNode
}

// TreeCache keeps a local copy of a subtree (Curator TreeCache), kept in
// sync with one persistent recursive watch (ZooKeeper 3.6+ addWatch).
//
// Algorithm: set the recursive watch on the root first, then load the
// subtree (getData and getChildren, depth first); events that arrive during
// the load wait in the watch's queue and are applied after it. Applying an
// event re-reads the node it names: NodeCreated and NodeDataChanged store
// the node's current data and Stat (or drop it if it is already gone),
// NodeDeleted drops the node and its cached descendants. Because every read
// returns state at least as new as the event, and events arrive in zxid
// order, the cache converges to the server's state once changes stop. After
// a reconnect (the cache follows the Conn's SessionEvents) or Resync the
// subtree is re-read and diffed
// against the cache. When the session ends the cache stops following the
// server (Err says why) but keeps answering from its last state.
type TreeCache struct {
	c      *client.Conn
	root   string
	w      *client.Watch
	cancel context.CancelFunc
	done   chan struct{}
	resync chan chan error // Resync requests, served by the run loop
	single bool            // a NodeCache: root only, no descendants

	mu sync.RWMutex
	// nodes holds every cached node by path; kids indexes children names
	// by parent path. Invariant: every path in nodes is under root, and
	// name ∈ kids[p] ⇔ joinPath(p, name) ∈ nodes.
	nodes map[string]CachedNode
	kids  map[string]map[string]struct{}
	subs  []*cacheQueue
	err   error // why the cache stopped following; guarded by mu
}

// NewTreeCache loads the subtree at root (which need not exist yet) and
// keeps it in sync until Close, re-reading it after every reconnect (a
// persistent watch gets no catch-up events for what changed while the
// client was away). It returns once the initial load is done.
func NewTreeCache(ctx context.Context, c *client.Conn, root string) (*TreeCache, error) {
	return startCache(ctx, c, root, false)
}

// startCache sets the watch, loads, and starts following: a subtree, or a
// single node when single is set.
func startCache(ctx context.Context, c *client.Conn, root string, single bool) (*TreeCache, error) {
	what := "treecache"
	if single {
		what = "nodecache"
	}
	// Subscribe first, so a disconnect during the load is seen.
	sessions := c.SessionEvents()
	w, err := c.AddWatch(ctx, root, !single)
	if err != nil {
		return nil, fmt.Errorf("recipe: %s %s: %w", what, root, err)
	}
	tc := &TreeCache{c: c, root: root, w: w, done: make(chan struct{}), resync: make(chan chan error),
		single: single, nodes: map[string]CachedNode{}, kids: map[string]map[string]struct{}{}}
	if err := tc.reload(ctx); err != nil {
		w.Remove(context.WithoutCancel(ctx))
		return nil, fmt.Errorf("recipe: %s %s: load: %w", what, root, err)
	}
	rctx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	tc.cancel = cancel
	go tc.run(rctx, sessions)
	return tc, nil
}

// Get returns the cached node at path.
func (tc *TreeCache) Get(path string) (CachedNode, bool) {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	n, ok := tc.nodes[path]
	return n, ok
}

// Children returns the sorted names of path's cached children; ok is false
// when path is not cached.
func (tc *TreeCache) Children(path string) (names []string, ok bool) {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	if _, ok := tc.nodes[path]; !ok {
		return nil, false
	}
	names = make([]string, 0, len(tc.kids[path]))
	for n := range tc.kids[path] {
		names = append(names, n)
	}
	slices.Sort(names)
	return names, true
}

// Snapshot returns a copy of every cached node by path.
func (tc *TreeCache) Snapshot() map[string]CachedNode {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	out := make(map[string]CachedNode, len(tc.nodes))
	for p, n := range tc.nodes {
		out[p] = n
	}
	return out
}

// Listen returns a new channel of the cache's changes from now on. Its
// queue is unbounded, so the cache never waits for a slow reader. When the
// cache is closed or stops following the server, events not yet received
// are dropped and the channel is closed.
func (tc *TreeCache) Listen() <-chan CacheEvent {
	q := newCacheQueue()
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.stopped() {
		q.end()
	} else {
		tc.subs = append(tc.subs, q)
	}
	return q.out
}

// stopped reports whether the run loop has ended. Caller holds tc.mu.
func (tc *TreeCache) stopped() bool {
	select {
	case <-tc.done:
		return true
	default:
		return false
	}
}

// Resync re-reads the whole subtree and applies the differences (with
// events), as after a reconnect.
func (tc *TreeCache) Resync(ctx context.Context) error {
	reply := make(chan error, 1)
	select {
	case tc.resync <- reply:
	case <-tc.done:
		return tc.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
	select {
	case err := <-reply:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// Err returns why the cache stopped following the server (session
// expired, Conn closed), nil while it follows and after Close.
func (tc *TreeCache) Err() error {
	tc.mu.RLock()
	defer tc.mu.RUnlock()
	return tc.err
}

// Close stops the cache and removes its watch. The cached state stays
// readable.
func (tc *TreeCache) Close() error {
	tc.cancel()
	<-tc.done
	ctx, cancel := context.WithTimeout(context.Background(), cleanupTimeout)
	defer cancel()
	err := tc.w.Remove(ctx)
	if errors.Is(err, client.ErrClosed) || errors.Is(err, client.ErrSessionExpired) {
		return nil
	}
	return err
}

func (tc *TreeCache) run(ctx context.Context, sessions <-chan client.SessionEvent) {
	defer func() {
		tc.mu.Lock()
		close(tc.done)
		for _, q := range tc.subs {
			q.end()
		}
		tc.subs = nil
		tc.mu.Unlock()
	}()
	disconnected := false
	for {
		var err error
		select {
		case ev, ok := <-tc.w.Events():
			switch {
			case !ok:
				err = client.ErrClosed
			case ev.Err != nil:
				err = ev.Err
			default:
				err = tc.apply(ctx, ev)
			}
		case se, ok := <-sessions:
			if !ok {
				sessions = nil
				continue
			}
			switch se.State {
			case client.StateDisconnected:
				disconnected = true
			case client.StateConnected:
				if disconnected {
					disconnected = false
					err = tc.reload(ctx)
				}
			}
		case reply := <-tc.resync:
			err = tc.reload(ctx)
			reply <- err
		case <-ctx.Done():
			return
		}
		if err != nil && ctx.Err() == nil {
			tc.mu.Lock()
			tc.err = err
			tc.mu.Unlock()
			return
		}
	}
}

// apply handles one watch event by re-reading the node it names.
func (tc *TreeCache) apply(ctx context.Context, ev client.Event) error {
	switch ev.Type {
	case wire.EventNodeCreated, wire.EventNodeDataChanged:
		for {
			data, st, err := tc.c.Get(ctx, ev.Path)
			switch {
			case err == nil:
				tc.put(CachedNode{Path: ev.Path, Data: data, Stat: st})
				return nil
			case errors.Is(err, client.ErrNoNode):
				tc.drop(ev.Path)
				return nil
			case errors.Is(err, client.ErrConnectionLoss):
				// Events may have been missed while disconnected:
				// re-read everything.
				return tc.reload(ctx)
			default:
				return err
			}
		}
	case wire.EventNodeDeleted:
		tc.drop(ev.Path)
	}
	return nil
}

// reload reads the whole subtree and replaces the cache with it, emitting
// the differences and then CacheResynced.
func (tc *TreeCache) reload(ctx context.Context) error {
	if tc.single {
		return tc.reloadNode(ctx)
	}
	for {
		fresh := map[string]CachedNode{}
		err := loadTree(ctx, tc.c, tc.root, fresh)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return err
		}
		tc.replace(fresh)
		return nil
	}
}

// loadTree reads p and its descendants into out. Nodes deleted during the
// walk are skipped.
func loadTree(ctx context.Context, c *client.Conn, p string, out map[string]CachedNode) error {
	data, st, err := c.Get(ctx, p)
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	if err != nil {
		return err
	}
	out[p] = CachedNode{Path: p, Data: data, Stat: st}
	if st.NumChildren == 0 {
		return nil
	}
	kids, _, err := c.Children(ctx, p)
	if errors.Is(err, client.ErrNoNode) {
		delete(out, p)
		return nil
	}
	if err != nil {
		return err
	}
	for _, k := range kids {
		if err := loadTree(ctx, c, joinPath(p, k), out); err != nil {
			return err
		}
	}
	return nil
}

// put stores n, linking it under its parent, and emits Added or Updated
// (nothing when the Stat is unchanged).
func (tc *TreeCache) put(n CachedNode) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	old, had := tc.nodes[n.Path]
	if had && old.Stat == n.Stat {
		return
	}
	if had && newerStat(old.Stat, n.Stat) {
		return // a later read already stored newer state
	}
	tc.nodes[n.Path] = n
	if n.Path != tc.root {
		par, name := parentPath(n.Path), n.Path[strings.LastIndexByte(n.Path, '/')+1:]
		if tc.kids[par] == nil {
			tc.kids[par] = map[string]struct{}{}
		}
		tc.kids[par][name] = struct{}{}
	}
	typ := CacheNodeAdded
	if had {
		typ = CacheNodeUpdated
	}
	tc.emit(CacheEvent{Type: typ, Node: n})
}

// newerStat reports whether a describes a later state of the same node
// than b.
func newerStat(a, b client.Stat) bool {
	return a.Czxid == b.Czxid && (a.Mzxid > b.Mzxid || a.Pzxid > b.Pzxid) && a.Mzxid >= b.Mzxid && a.Pzxid >= b.Pzxid
}

// drop removes p and its cached descendants, emitting Removed for each,
// deepest first.
func (tc *TreeCache) drop(p string) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.dropLocked(p)
}

func (tc *TreeCache) dropLocked(p string) {
	for name := range tc.kids[p] {
		tc.dropLocked(joinPath(p, name))
	}
	delete(tc.kids, p)
	n, ok := tc.nodes[p]
	if !ok {
		return
	}
	delete(tc.nodes, p)
	if p != tc.root {
		par := parentPath(p)
		delete(tc.kids[par], p[strings.LastIndexByte(p, '/')+1:])
		if len(tc.kids[par]) == 0 {
			delete(tc.kids, par)
		}
	}
	tc.emit(CacheEvent{Type: CacheNodeRemoved, Node: n})
}

// replace swaps in a freshly loaded tree, emitting the differences.
func (tc *TreeCache) replace(fresh map[string]CachedNode) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	for _, p := range slices.Sorted(mapKeys(tc.nodes)) {
		if _, ok := fresh[p]; !ok {
			tc.emit(CacheEvent{Type: CacheNodeRemoved, Node: tc.nodes[p]})
		}
	}
	for _, p := range slices.Sorted(mapKeys(fresh)) {
		n := fresh[p]
		old, had := tc.nodes[p]
		switch {
		case !had:
			tc.emit(CacheEvent{Type: CacheNodeAdded, Node: n})
		case old.Stat != n.Stat:
			tc.emit(CacheEvent{Type: CacheNodeUpdated, Node: n})
		}
	}
	tc.nodes = fresh
	tc.kids = map[string]map[string]struct{}{}
	for p := range fresh {
		if p == tc.root {
			continue
		}
		par := parentPath(p)
		if tc.kids[par] == nil {
			tc.kids[par] = map[string]struct{}{}
		}
		tc.kids[par][p[strings.LastIndexByte(p, '/')+1:]] = struct{}{}
	}
	tc.emit(CacheEvent{Type: CacheResynced})
}

// emit queues ev for every listener. Caller holds tc.mu.
func (tc *TreeCache) emit(ev CacheEvent) {
	for _, q := range tc.subs {
		q.push(ev)
	}
}

func mapKeys[V any](m map[string]V) func(func(string) bool) {
	return func(yield func(string) bool) {
		for k := range m {
			if !yield(k) {
				return
			}
		}
	}
}

// NodeCache keeps a local copy of one znode (Curator NodeCache), kept in
// sync with a persistent (non-recursive) watch on it: every event on the
// node re-reads it; a reconnect or Resync re-reads it too. The
// node need not exist: Get then reports false.
type NodeCache struct {
	tc *TreeCache
}

// NewNodeCache loads the node at path and keeps it in sync until Close.
func NewNodeCache(ctx context.Context, c *client.Conn, path string) (*NodeCache, error) {
	tc, err := startCache(ctx, c, path, true)
	if err != nil {
		return nil, err
	}
	return &NodeCache{tc: tc}, nil
}

// reloadNode is reload for a single node (no descendants).
func (tc *TreeCache) reloadNode(ctx context.Context) error {
	for {
		data, st, err := tc.c.Get(ctx, tc.root)
		fresh := map[string]CachedNode{}
		switch {
		case err == nil:
			fresh[tc.root] = CachedNode{Path: tc.root, Data: data, Stat: st}
		case errors.Is(err, client.ErrNoNode):
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		default:
			return err
		}
		tc.replace(fresh)
		return nil
	}
}

// Get returns the cached node; ok is false when it does not exist.
func (nc *NodeCache) Get() (CachedNode, bool) { return nc.tc.Get(nc.tc.root) }

// Listen returns a new channel of the node's changes (see TreeCache.Listen).
func (nc *NodeCache) Listen() <-chan CacheEvent { return nc.tc.Listen() }

// Resync re-reads the node.
func (nc *NodeCache) Resync(ctx context.Context) error { return nc.tc.Resync(ctx) }

// Err returns why the cache stopped following the server.
func (nc *NodeCache) Err() error { return nc.tc.Err() }

// Close stops the cache and removes its watch.
func (nc *NodeCache) Close() error { return nc.tc.Close() }

// cacheQueue is an unbounded FIFO of cache events pumped into out by its
// own goroutine, so the cache never blocks on a listener. Once ended, the
// events the reader has not taken yet are dropped and out is closed.
type cacheQueue struct {
	out  chan CacheEvent
	stop chan struct{} // closed by end
	wake chan struct{} // capacity 1

	mu  sync.Mutex
	buf []CacheEvent // guarded by mu
}

func newCacheQueue() *cacheQueue {
	q := &cacheQueue{out: make(chan CacheEvent), stop: make(chan struct{}), wake: make(chan struct{}, 1)}
	go q.pump()
	return q
}

func (q *cacheQueue) push(ev CacheEvent) {
	q.mu.Lock()
	q.buf = append(q.buf, ev)
	q.mu.Unlock()
	q.signal()
}

// end stops the queue and closes out. Called once.
func (q *cacheQueue) end() { close(q.stop) }

func (q *cacheQueue) signal() {
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

func (q *cacheQueue) pump() {
	defer close(q.out)
	for {
		q.mu.Lock()
		buf := q.buf
		q.buf = nil
		q.mu.Unlock()
		for _, ev := range buf {
			select {
			case q.out <- ev:
			case <-q.stop:
				return
			}
		}
		if len(buf) == 0 {
			select {
			case <-q.wake:
			case <-q.stop:
				return
			}
		}
	}
}
