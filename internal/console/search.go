package console

import (
	"context"
	"errors"
	"slices"
	"strings"

	"github.com/wardenzk/warden/wire"
)

// searchResult is what a search found: matching paths in breadth-first
// order (children sorted), how many nodes it visited, and whether it
// stopped at a bound before the whole subtree was seen.
type searchResult struct {
	Root    string   `json:"root"`
	Query   string   `json:"query"`
	Matches []string `json:"matches"`
	Visited int      `json:"visited"`
	// Truncated: the visit or match bound was reached; nodes not visited
	// may match too. Search a smaller subtree.
	Truncated bool `json:"truncated"`
	// Skipped counts subtrees whose children could not be listed (no
	// READ permission, deleted meanwhile).
	Skipped int `json:"skipped"`
}

// search walks the subtree at root breadth-first and returns the paths
// that contain query (case-insensitive), visiting at most maxVisit nodes
// and returning at most maxMatch paths. children lists a node's children;
// a node it fails on with NoNode or NoAuth is counted in Skipped, any
// other error ends the search.
func search(ctx context.Context, root, query string, maxVisit, maxMatch int, children func(context.Context, string) ([]string, error)) (searchResult, error) {
	res := searchResult{Root: root, Query: query, Matches: []string{}}
	q := strings.ToLower(query)
	queue := []string{root}
	for len(queue) > 0 {
		if res.Visited >= maxVisit || len(res.Matches) >= maxMatch {
			res.Truncated = true
			break
		}
		p := queue[0]
		queue = queue[1:]
		res.Visited++
		if strings.Contains(strings.ToLower(p), q) {
			res.Matches = append(res.Matches, p)
		}
		kids, err := children(ctx, p)
		switch {
		case errors.Is(err, wire.ErrNoNode), errors.Is(err, wire.ErrNoAuth):
			res.Skipped++
			continue
		case err != nil:
			return res, err
		}
		slices.Sort(kids)
		for _, k := range kids {
			if res.Visited+len(queue) >= maxVisit {
				res.Truncated = true // these will never be visited
				break
			}
			queue = append(queue, join(p, k))
		}
	}
	return res, nil
}

// join is the path of child name under parent.
func join(parent, name string) string {
	if parent == "/" {
		return "/" + name
	}
	return parent + "/" + name
}
