package recipe

import (
	"context"
	"errors"
	"fmt"

	"github.com/wardenzk/warden/client"
)

// Decision is the outcome of a two-phase commit.
type Decision int

// The decisions. TxPending is never returned by a finished Decide or
// Outcome; it is the state before the coordinator decides.
const (
	TxPending Decision = iota
	TxCommit
	TxAbort
)

var decisionText = map[Decision]string{TxPending: "", TxCommit: "commit", TxAbort: "abort"}

// String returns "pending", "commit" or "abort".
func (d Decision) String() string {
	if d == TxPending {
		return "pending"
	}
	return decisionText[d]
}

func parseDecision(b []byte) Decision {
	switch string(b) {
	case "commit":
		return TxCommit
	case "abort":
		return TxAbort
	}
	return TxPending
}

// Transaction is the coordinator's side of a two-phase commit (the
// ZooKeeper recipes page's "Two-phased Commit").
//
// Layout:
//
//	<path>          persistent, created by the coordinator; data = decision:
//	                "" while pending, then "commit" or "abort" (written once,
//	                with version 0 as the compare-and-set)
//	<path>/<site>   ephemeral, created by the site's own session; data = its
//	                vote: "" (joined, not voted), "commit" or "abort"
//
// Algorithm: the coordinator creates <path> and watches each expected
// site's node (one watch per site; nothing else). It decides abort as soon
// as a site votes abort or a site that had joined disappears (its session
// ended: the site failed), and commit once every site has voted commit.
// Sites watch only <path> for the decision. When Decide's ctx ends before
// a decision, it aborts. A site that fails before Decide has seen its node
// cannot be told from one not yet joined: Decide waits for it until ctx
// ends, then aborts.
type Transaction struct {
	c     *client.Conn
	path  string
	sites []string

	onJoin func(site string) // test hook: Decide saw site's node for the first time
}

// NewTransaction creates the transaction node at path (missing ancestors
// are created) for the named sites. It fails with ErrNodeExists wrapped
// if path exists.
func NewTransaction(ctx context.Context, c *client.Conn, path string, sites []string) (*Transaction, error) {
	if len(sites) == 0 {
		return nil, errors.New("recipe: twophase: no sites")
	}
	parent := parentPath(path)
	if err := ensureParents(ctx, c, parent); err != nil {
		return nil, fmt.Errorf("recipe: twophase %s: %w", path, err)
	}
	lost := false
	for {
		_, err := c.Create(ctx, path, nil, client.Persistent, client.OpenACL)
		if errors.Is(err, client.ErrConnectionLoss) {
			lost = true
			continue
		}
		if errors.Is(err, client.ErrNodeExists) && lost {
			break // our lost create: the node is there, pending
		}
		if err != nil {
			return nil, fmt.Errorf("recipe: twophase %s: create: %w", path, err)
		}
		break
	}
	return &Transaction{c: c, path: path, sites: append([]string(nil), sites...)}, nil
}

// siteUpdate is what a site watcher reports to Decide.
type siteUpdate struct {
	site string
	vote Decision // valid when !gone
	gone bool     // the site's node disappeared after it had joined
	err  error    // the watch failed (session ended)
}

// Decide waits for the votes and writes the decision: abort when a site
// votes abort or fails, commit when all vote commit, abort when ctx ends
// first (the abort is written with a context detached from ctx, bounded by
// cleanupTimeout, and ctx.Err() is returned with it). It returns the
// decision recorded in the transaction node.
func (t *Transaction) Decide(ctx context.Context) (Decision, error) {
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	updates := make(chan siteUpdate)
	for _, s := range t.sites {
		go t.watchSite(wctx, s, updates)
	}
	votes := make(map[string]Decision, len(t.sites))
	for {
		var u siteUpdate
		select {
		case u = <-updates:
		case <-ctx.Done():
			dctx, dcancel := context.WithTimeout(context.WithoutCancel(ctx), cleanupTimeout)
			defer dcancel()
			d, err := t.write(dctx, TxAbort)
			if err != nil {
				return d, fmt.Errorf("recipe: twophase %s: %w", t.path, err)
			}
			return d, ctx.Err()
		}
		if u.err != nil {
			return TxPending, fmt.Errorf("recipe: twophase %s: site %s: %w", t.path, u.site, u.err)
		}
		decided := TxPending
		switch {
		case u.gone, u.vote == TxAbort:
			decided = TxAbort
		default:
			votes[u.site] = u.vote
			n := 0
			for _, v := range votes {
				if v == TxCommit {
					n++
				}
			}
			if n == len(t.sites) {
				decided = TxCommit
			}
		}
		if decided != TxPending {
			d, err := t.write(ctx, decided)
			if err != nil {
				return d, fmt.Errorf("recipe: twophase %s: %w", t.path, err)
			}
			return d, nil
		}
	}
}

// write records d unless a decision is already recorded, and returns the
// recorded decision.
func (t *Transaction) write(ctx context.Context, d Decision) (Decision, error) {
	for {
		_, err := t.c.Set(ctx, t.path, []byte(decisionText[d]), 0)
		if err == nil {
			return d, nil
		}
		if !errors.Is(err, client.ErrBadVersion) && !errors.Is(err, client.ErrConnectionLoss) {
			return TxPending, err
		}
		// Already decided (possibly by our own lost write): read it.
		data, _, gerr := t.c.Get(ctx, t.path)
		if errors.Is(gerr, client.ErrConnectionLoss) {
			continue
		}
		if gerr != nil {
			return TxPending, gerr
		}
		if rec := parseDecision(data); rec != TxPending {
			return rec, nil
		}
	}
}

// watchSite reports site's joins, votes and disappearance until ctx ends.
func (t *Transaction) watchSite(ctx context.Context, site string, out chan<- siteUpdate) {
	p := joinPath(t.path, site)
	send := func(u siteUpdate) bool {
		u.site = site
		select {
		case out <- u:
			return true
		case <-ctx.Done():
			return false
		}
	}
	joined := false
	for {
		data, _, ev, err := t.c.GetW(ctx, p)
		if errors.Is(err, client.ErrNoNode) {
			if joined {
				send(siteUpdate{gone: true})
				return
			}
			var ok bool
			_, ok, ev, err = t.c.ExistsW(ctx, p)
			if err == nil && ok {
				continue
			}
		} else if err == nil {
			if !joined && t.onJoin != nil {
				t.onJoin(site)
			}
			joined = true
			if !send(siteUpdate{vote: parseDecision(data)}) {
				return
			}
		}
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			if ctx.Err() == nil {
				send(siteUpdate{err: err})
			}
			return
		}
		select {
		case e := <-ev:
			if e.Err != nil {
				send(siteUpdate{err: e.Err})
				return
			}
		case <-ctx.Done():
			return
		}
	}
}

// TxSite is one participant of a two-phase commit (see Transaction).
type TxSite struct {
	c    *client.Conn
	path string // the transaction node
	node string // this site's node
}

// JoinTransaction waits until the transaction node at path exists, then
// registers site as an ephemeral child of it with no vote yet. If this
// session ends before the decision, the coordinator aborts.
func JoinTransaction(ctx context.Context, c *client.Conn, path, site string) (*TxSite, error) {
	s := &TxSite{c: c, path: path, node: joinPath(path, site)}
	for {
		_, ok, ev, err := c.ExistsW(ctx, path)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("recipe: twophase %s: join %s: %w", path, site, err)
		}
		if ok {
			break
		}
		select {
		case e := <-ev:
			if e.Err != nil {
				return nil, fmt.Errorf("recipe: twophase %s: join %s: %w", path, site, e.Err)
			}
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	lost := false
	for {
		_, err := c.Create(ctx, s.node, nil, client.Ephemeral, client.OpenACL)
		if errors.Is(err, client.ErrConnectionLoss) {
			lost = true
			continue
		}
		if errors.Is(err, client.ErrNodeExists) && lost {
			st, ok, serr := c.Exists(ctx, s.node)
			if serr == nil && ok && st.EphemeralOwner == c.SessionID() {
				return s, nil
			}
		}
		if err != nil {
			return nil, fmt.Errorf("recipe: twophase %s: join %s: %w", path, site, err)
		}
		return s, nil
	}
}

// Vote records this site's vote: commit true for commit, false for abort.
func (s *TxSite) Vote(ctx context.Context, commit bool) error {
	v := TxAbort
	if commit {
		v = TxCommit
	}
	if err := retryLoss(ctx, func() error {
		_, err := s.c.Set(ctx, s.node, []byte(decisionText[v]), -1)
		return err
	}); err != nil {
		return fmt.Errorf("recipe: twophase %s: vote: %w", s.node, err)
	}
	return nil
}

// Outcome waits for the coordinator's decision (watching only the
// transaction node) until ctx ends or the session ends.
func (s *TxSite) Outcome(ctx context.Context) (Decision, error) {
	for {
		data, _, ev, err := s.c.GetW(ctx, s.path)
		if errors.Is(err, client.ErrConnectionLoss) {
			continue
		}
		if err != nil {
			return TxPending, fmt.Errorf("recipe: twophase %s: outcome: %w", s.path, err)
		}
		if d := parseDecision(data); d != TxPending {
			return d, nil
		}
		select {
		case e := <-ev:
			if e.Err != nil {
				return TxPending, fmt.Errorf("recipe: twophase %s: outcome: %w", s.path, e.Err)
			}
		case <-ctx.Done():
			return TxPending, ctx.Err()
		}
	}
}

// parentPath returns p's parent ("/" for a top-level node).
func parentPath(p string) string {
	for i := len(p) - 1; i > 0; i-- {
		if p[i] == '/' {
			return p[:i]
		}
	}
	return "/"
}
