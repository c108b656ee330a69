package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// latchName is the node name of a LeaderLatch participant (before the
// protected prefix and after it the sequence): Curator's LeaderLatch LOCK_NAME.
const latchName = "latch-"

// ErrLatchClosed is returned by Await after Close, or when Start was not
// called.
var ErrLatchClosed = errors.New("recipe: leader latch closed")

// Leadership is one term of leadership won by a LeaderLatch.
type Leadership struct {
	// Token is the fencing token: the czxid of the winning latch node.
	// A later leader always has a larger token, so a resource that
	// remembers the largest token it has seen can refuse a stale leader.
	Token int64
	// Node is the path of the winning latch node.
	Node string
	// Lost is closed when this term ends: Close, the latch node deleted
	// (by an administrator or by the session's expiry) or the session
	// ended. A disconnection alone does not close it: while the client
	// reconnects the node (and the leadership) may still be there, and
	// the client cannot know until it reconnects or declares expiry. Use
	// Token to fence a resource against that window.
	Lost <-chan struct{}
}

// LeaderLatch is leader election among any number of participants (Curator
// LeaderLatch layout, herd-free): the participant with the lowest latch node
// is the leader until it closes its latch or its session ends.
//
// Layout (same as Curator, so Go and Java participants can share a latch):
//
//	<path>/_c_<uuid>-latch-<seq>   protected ephemeral sequential; data = the participant id (UTF-8)
//
// Algorithm:
//  1. Create the node with a protected create (missing ancestors as containers).
//  2. children := getChildren(<path>), keep the "latch-" nodes, sort by sequence.
//  3. If our node is missing (deleted by an administrator): create a new one, go to 2.
//  4. If ours is the lowest: we lead. Watch our own node (getData with watch)
//     so that its deletion or the session's end is noticed; then go to 2.
//  5. Otherwise watch only the node just before ours (getData with watch, so
//     no watch is left on a missing node) and go to 2 when it is deleted.
//
// A hand-over therefore wakes exactly one participant: the next in line.
// This latch is also the package's herd-free election: a separate Election
// type would implement the same algorithm.
//
// A LeaderLatch is safe for concurrent use. Start it once; Close it once.
type LeaderLatch struct {
	c    *client.Conn
	path string
	id   string

	mu sync.Mutex
	// started and closed record Start and Close; both are set once.
	started, closed bool
	// node is our latch node's path ("" before Start succeeds).
	node string
	// leader is the current term (nil when not leading). Invariant:
	// leader != nil implies lost is open and leader.Lost == lost.
	leader *Leadership
	lost   chan struct{}
	// err is why the run loop stopped (nil while it runs).
	err error
	// changed is closed and replaced on every change of leader, closed or
	// err, to wake Await.
	changed chan struct{}
	// changesCh carries the latest leadership state (conflated, capacity 1).
	changesCh chan bool

	cancel context.CancelFunc // stops the run loop
	done   chan struct{}      // closed when the run loop has returned

	// wakeups counts rounds started by a watch event (herd-freedom tests).
	wakeups atomic.Int64
}

// NewLeaderLatch returns a latch for the election at path; id is stored in the
// latch node (it is what Participants and Leader report). It does not touch
// the server; call Start.
func NewLeaderLatch(c *client.Conn, path, id string) *LeaderLatch {
	return &LeaderLatch{
		c:         c,
		path:      path,
		id:        id,
		changed:   make(chan struct{}),
		changesCh: make(chan bool, 1),
		done:      make(chan struct{}),
	}
}

// Start joins the election: it creates this participant's latch node (so the
// participant is queued when Start returns) and starts watching. It fails if
// called twice.
func (l *LeaderLatch) Start(ctx context.Context) error {
	l.mu.Lock()
	if l.started || l.closed {
		l.mu.Unlock()
		return errors.New("recipe: leader latch: Start called twice or after Close")
	}
	l.started = true
	l.mu.Unlock()

	node, _, err := protectedCreateStat(ctx, l.c, l.path, latchName, []byte(l.id), client.EphemeralSequential, client.OpenACL)
	if err != nil {
		l.finish(err)
		close(l.done)
		return fmt.Errorf("recipe: leader latch %s: start: %w", l.path, err)
	}
	runCtx, cancel := context.WithCancel(context.Background())
	l.mu.Lock()
	l.node = node
	l.cancel = cancel
	l.mu.Unlock()
	go l.run(runCtx, node)
	return nil
}

// run is the election loop; it owns l.node changes after Start.
func (l *LeaderLatch) run(ctx context.Context, node string) {
	defer close(l.done)
	for {
		next, err := l.step(ctx, node)
		if err != nil {
			if ctx.Err() != nil {
				err = nil // stopped by Close
			}
			l.finish(err)
			return
		}
		if next != node {
			node = next
			l.mu.Lock()
			l.node = node
			l.mu.Unlock()
		}
	}
}

// step runs one round of the algorithm (steps 2 to 5) and returns our node's
// path (new when it had to be recreated). It returns an error only when the
// loop must stop.
func (l *LeaderLatch) step(ctx context.Context, node string) (string, error) {
	names, err := l.sortedChildren(ctx)
	if errors.Is(err, client.ErrConnectionLoss) {
		return node, nil
	}
	if err != nil {
		return node, err
	}
	ours := slices.Index(names, baseName(node))
	if ours < 0 {
		// Our node is gone but the session lives (else the read would have
		// failed): someone deleted it. Rejoin at the back, as Curator does.
		l.setLeader(nil)
		next, _, err := protectedCreateStat(ctx, l.c, l.path, latchName, []byte(l.id), client.EphemeralSequential, client.OpenACL)
		if err != nil {
			return node, err
		}
		return next, nil
	}
	watch := node
	if ours > 0 {
		l.setLeader(nil)
		watch = joinPath(l.path, names[ours-1])
	}
	_, st, evc, err := l.c.GetW(ctx, watch)
	switch {
	case errors.Is(err, client.ErrNoNode), errors.Is(err, client.ErrConnectionLoss):
		return node, nil // look again
	case err != nil:
		return node, err
	}
	if ours == 0 {
		l.setLeader(&Leadership{Token: st.Czxid, Node: node})
	}
	select {
	case ev := <-evc:
		if ev.Err != nil {
			return node, ev.Err
		}
		l.wakeups.Add(1)
		if ours == 0 && ev.Type == wire.EventNodeDeleted {
			l.setLeader(nil)
		}
		return node, nil
	case <-ctx.Done():
		return node, ctx.Err()
	}
}

// sortedChildren returns the latch nodes under the path, lowest sequence first.
func (l *LeaderLatch) sortedChildren(ctx context.Context) ([]string, error) {
	kids, _, err := l.c.Children(ctx, l.path)
	if err != nil {
		return nil, err
	}
	kids = slices.DeleteFunc(kids, func(n string) bool {
		_, ok := sequenceOf(n)
		return !ok || !strings.Contains(n, latchName)
	})
	sortBySequence(kids)
	return kids, nil
}

// setLeader records a new term (lead != nil) or the end of the current one
// (lead == nil). Re-confirming the current term changes nothing.
func (l *LeaderLatch) setLeader(lead *Leadership) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setLeaderLocked(lead)
}

func (l *LeaderLatch) setLeaderLocked(lead *Leadership) {
	switch {
	case lead == nil && l.leader == nil:
		return
	case lead != nil && l.leader != nil && l.leader.Token == lead.Token:
		return
	case l.leader != nil:
		close(l.lost)
		l.leader = nil
	}
	if lead != nil {
		l.lost = make(chan struct{})
		lead.Lost = l.lost
		l.leader = lead
	}
	l.notifyLocked()
}

// notifyLocked wakes Await and publishes the current state on changesCh.
func (l *LeaderLatch) notifyLocked() {
	close(l.changed)
	l.changed = make(chan struct{})
	select {
	case <-l.changesCh: // drop the stale value
	default:
	}
	l.changesCh <- l.leader != nil
}

// finish records why the run loop stopped and ends any term.
func (l *LeaderLatch) finish(err error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.setLeaderLocked(nil)
	if err == nil {
		err = ErrLatchClosed
	}
	if l.err == nil {
		l.err = err
		l.notifyLocked()
	}
}

// Await blocks until this participant leads and returns the term. It returns
// an error when ctx ends, when the latch is closed (ErrLatchClosed), or when
// the election loop stopped (client.ErrSessionExpired, client.ErrClosed, ...).
// A latch whose session expired cannot lead again: make a new Conn and latch.
// Cancelling ctx abandons the wait only: the participant stays queued until
// Close.
func (l *LeaderLatch) Await(ctx context.Context) (Leadership, error) {
	for {
		l.mu.Lock()
		lead, err, changed, started := l.leader, l.err, l.changed, l.started
		l.mu.Unlock()
		switch {
		case lead != nil:
			return *lead, nil
		case err != nil:
			return Leadership{}, fmt.Errorf("recipe: leader latch %s: %w", l.path, err)
		case !started:
			return Leadership{}, fmt.Errorf("recipe: leader latch %s: %w", l.path, ErrLatchClosed)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Leadership{}, ctx.Err()
		}
	}
}

// IsLeader reports whether this participant currently leads (as of the last
// event the client received; see Leadership.Lost for the disconnected case).
func (l *LeaderLatch) IsLeader() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.leader != nil
}

// Changes returns a channel that carries the latest leadership state: true
// when this participant has become leader, false when it has stopped being
// one. Values are conflated (capacity 1, a newer value replaces an unread
// one), so a reader sees the current state but may miss a short term; use
// Await and Leadership.Lost to observe every term. The channel is never
// closed.
func (l *LeaderLatch) Changes() <-chan bool { return l.changesCh }

// Node returns the path of this participant's latch node ("" before Start).
func (l *LeaderLatch) Node() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.node
}

// ID returns this participant's id.
func (l *LeaderLatch) ID() string { return l.id }

// Close leaves the election: it stops the loop, deletes the latch node (which
// hands leadership to the next participant) and ends any term. ctx bounds the
// delete; Close returns the delete's error, if any (the node then goes with
// the session). Close is idempotent.
func (l *LeaderLatch) Close(ctx context.Context) error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil
	}
	l.closed = true
	started, cancel := l.started, l.cancel
	l.mu.Unlock()
	if !started {
		l.finish(nil)
		return nil
	}
	if cancel != nil {
		cancel()
	}
	select {
	case <-l.done:
	case <-ctx.Done():
		return ctx.Err()
	}
	l.finish(nil)
	l.mu.Lock()
	node := l.node
	l.mu.Unlock()
	if node == "" {
		return nil
	}
	if err := deleteQuietly(ctx, l.c, node); err != nil && !errors.Is(err, client.ErrClosed) {
		return fmt.Errorf("recipe: leader latch %s: close: %w", l.path, err)
	}
	return nil
}

// Participant is one member of an election, as stored in its node.
type Participant struct {
	ID       string // the id given to NewLeaderLatch (the node's data)
	Node     string // the participant's node path
	IsLeader bool   // the participant holds the lowest node
}

// Participants returns the election's members in queue order, the leader
// first. It reads the server (the answer may be stale when it returns).
func (l *LeaderLatch) Participants(ctx context.Context) ([]Participant, error) {
	return participants(ctx, l.c, l.path, latchName)
}

// Leader returns the current leader, read from the server; ok is false when
// the election has no participants.
func (l *LeaderLatch) Leader(ctx context.Context) (p Participant, ok bool, err error) {
	ps, err := l.Participants(ctx)
	if err != nil || len(ps) == 0 {
		return Participant{}, false, err
	}
	return ps[0], true, nil
}

// participants reads the nodes named *<name><seq> under dir in sequence order
// with their data (Curator's getParticipants: nodes that vanish while being
// read are skipped; the first is the leader).
func participants(ctx context.Context, c *client.Conn, dir, name string) ([]Participant, error) {
	kids, _, err := c.Children(ctx, dir)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("recipe: participants of %s: %w", dir, err)
	}
	kids = slices.DeleteFunc(kids, func(n string) bool {
		_, ok := sequenceOf(n)
		return !ok || !strings.Contains(n, name)
	})
	sortBySequence(kids)
	var out []Participant
	for _, k := range kids {
		p := joinPath(dir, k)
		data, _, err := c.Get(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recipe: participants of %s: %w", dir, err)
		}
		out = append(out, Participant{ID: string(data), Node: p, IsLeader: len(out) == 0})
	}
	return out, nil
}

// baseName returns the last element of a znode path.
func baseName(p string) string { return p[strings.LastIndexByte(p, '/')+1:] }
