package recipe

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/wardenzk/warden/client"
)

// Group is group membership: each member is an ephemeral node under the
// group node, so a member that crashes (its session ends) leaves the group
// by itself.
//
// Layout:
//
//	<path>            container (created with missing ancestors)
//	<path>/<member>   ephemeral; data = the member's data
//
// Join is safe against connection loss: a retried create that finds the
// node already owned by this session counts as joined. Members lists the
// current members; Watch streams the member list each time it changes (one
// children watch per watcher: membership is what every watcher asked for).
type Group struct {
	c    *client.Conn
	path string
}

// NewGroup returns the group at path on c. It does not touch the server.
func NewGroup(c *client.Conn, path string) *Group { return &Group{c: c, path: path} }

// ErrMemberExists is returned by Join when another session holds the
// member name.
var ErrMemberExists = errors.New("recipe: group: member name held by another session")

// Join adds member to the group with data, as an ephemeral node of this
// Conn's session. It returns ErrMemberExists if another session already
// holds the name.
func (g *Group) Join(ctx context.Context, member string, data []byte) error {
	p := joinPath(g.path, member)
	if err := createEphemeralOwned(ctx, g.c, g.path, p, data); err != nil {
		if errors.Is(err, client.ErrNodeExists) {
			return fmt.Errorf("recipe: group %s: join %s: %w", g.path, member, ErrMemberExists)
		}
		return fmt.Errorf("recipe: group %s: join %s: %w", g.path, member, err)
	}
	return nil
}

// Leave removes member from the group. Leaving a group one is not in is not
// an error.
func (g *Group) Leave(ctx context.Context, member string) error {
	if err := deleteQuietly(ctx, g.c, joinPath(g.path, member)); err != nil {
		return fmt.Errorf("recipe: group %s: leave %s: %w", g.path, member, err)
	}
	return nil
}

// Members returns the current member names, sorted.
func (g *Group) Members(ctx context.Context) ([]string, error) {
	for {
		kids, _, err := g.c.Children(ctx, g.path)
		switch {
		case errors.Is(err, client.ErrNoNode):
			return nil, nil
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil:
			return nil, fmt.Errorf("recipe: group %s: members: %w", g.path, err)
		}
		slices.Sort(kids)
		return kids, nil
	}
}

// MemberData returns member's data.
func (g *Group) MemberData(ctx context.Context, member string) ([]byte, error) {
	data, _, err := g.c.Get(ctx, joinPath(g.path, member))
	if err != nil {
		return nil, fmt.Errorf("recipe: group %s: member %s: %w", g.path, member, err)
	}
	return data, nil
}

// Watch sends the sorted member list now and again after every change,
// until ctx ends or the session ends; then it closes the channel. Changes
// that happen while the receiver is slow are coalesced: the next list sent
// is the current one. Err reports why the stream ended (nil when ctx ended).
func (g *Group) Watch(ctx context.Context) *MembershipWatch {
	w := &MembershipWatch{ch: make(chan []string), done: make(chan struct{})}
	go w.run(ctx, g)
	return w
}

// MembershipWatch is a stream of member lists (see Group.Watch).
type MembershipWatch struct {
	ch   chan []string
	done chan struct{}
	err  error // written before done is closed
}

// C returns the channel of member lists; it is closed when the watch ends.
func (w *MembershipWatch) C() <-chan []string { return w.ch }

// Err waits for the watch to end and returns why: nil when its ctx ended,
// else the session error (client.ErrSessionExpired, client.ErrClosed...).
func (w *MembershipWatch) Err() error {
	<-w.done
	return w.err
}

func (w *MembershipWatch) run(ctx context.Context, g *Group) {
	defer close(w.done)
	defer close(w.ch)
	var last []string
	first := true
	for {
		kids, _, ev, err := g.c.ChildrenW(ctx, g.path)
		if errors.Is(err, client.ErrNoNode) {
			var ok bool
			_, ok, ev, err = g.c.ExistsW(ctx, g.path)
			if err == nil && ok {
				continue // created in between: list it
			}
			kids = nil
		}
		switch {
		case errors.Is(err, client.ErrConnectionLoss):
			continue
		case err != nil:
			if ctx.Err() == nil {
				w.err = err
			}
			return
		}
		slices.Sort(kids)
		if first || !slices.Equal(kids, last) {
			first = false
			last = kids
			select {
			case w.ch <- slices.Clone(kids):
			case <-ctx.Done():
				return
			}
		}
		select {
		case e := <-ev:
			if e.Err != nil {
				w.err = e.Err
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// createEphemeralOwned creates the ephemeral node p (creating parent and
// its ancestors when missing). After a connection loss the retry's
// ErrNodeExists is success when the node belongs to this session; a node
// owned by another session returns ErrNodeExists.
func createEphemeralOwned(ctx context.Context, c *client.Conn, parent, p string, data []byte) error {
	madeParents := false
	for {
		_, err := c.Create(ctx, p, data, client.Ephemeral, client.OpenACL)
		switch {
		case err == nil:
			return nil
		case errors.Is(err, client.ErrNoNode) && !madeParents:
			madeParents = true
			if err := ensureParents(ctx, c, parent); err != nil {
				return err
			}
		case errors.Is(err, client.ErrConnectionLoss):
			if err := ctx.Err(); err != nil {
				return err
			}
		case errors.Is(err, client.ErrNodeExists):
			st, ok, serr := c.Exists(ctx, p)
			if serr != nil {
				return serr
			}
			if !ok {
				continue // gone meanwhile: try again
			}
			if st.EphemeralOwner == c.SessionID() {
				return nil
			}
			return err
		default:
			return err
		}
	}
}
