package bench

import (
	"context"
	"fmt"
	"net"
	"strings"
	"sync/atomic"
)

// Spreading sessions over the members of a connection string.
//
// ZooKeeper's own clients (the Java client's StaticHostProvider, the C
// client behind zk-latencies.py --cluster) give every session the whole
// connection string and shuffle it, so sessions land on members at
// random: 8 sessions on 3 members may well be 5/2/1. The bench assigns
// them round-robin instead (SpreadRoundRobin, the default): session j
// starts on member j mod n and, each time it has to reconnect, tries the
// next member in the string, so 8 sessions are exactly 3/3/2 and every
// run against every server is loaded alike. SpreadShuffle keeps the
// client library's shuffle.

// Spread values (Config.Spread).
const (
	SpreadRoundRobin = "round-robin"
	SpreadShuffle    = "shuffle"
)

// dialFunc is the dialer of client.WithDialer.
type dialFunc func(ctx context.Context, network, addr string) (net.Conn, error)

// parseMembers returns the host:port members of a connection string
// "host[:port],...[/chroot]" in their order, with port 2181 when none is
// given (as package client reads it).
func parseMembers(servers string) ([]string, error) {
	hosts, _, _ := strings.Cut(servers, "/")
	var out []string
	for h := range strings.SplitSeq(hosts, ",") {
		h = strings.TrimSpace(h)
		if h == "" {
			continue
		}
		if _, _, err := net.SplitHostPort(h); err != nil {
			h = net.JoinHostPort(strings.Trim(h, "[]"), "2181")
		}
		out = append(out, h)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("bench: no servers in %q", servers)
	}
	return out, nil
}

// rotation is the member order of one session under round-robin: its
// k-th connection attempt goes to members[(start+k) mod n].
type rotation struct {
	members []string
	start   int
	// dials counts the attempts so far.
	dials atomic.Int64
}

// next returns the member of the next attempt.
func (r *rotation) next() string {
	k := r.dials.Add(1) - 1
	return r.members[(int64(r.start)+k)%int64(len(r.members))]
}

// sessionDialer returns the dialer of the next session the run opens:
// base (nil for the default net.Dialer) wrapped so that, under
// round-robin with several members, it dials the session's rotation
// whatever address the client picked from its shuffled list. The client
// makes one dial per attempt, in order, so the rotation is its member
// order. Sessions are numbered in the order sessionDialer is called.
func (e *env) sessionDialer(base dialFunc) dialFunc {
	if base == nil {
		var d net.Dialer
		base = d.DialContext
	}
	if e.cfg.Spread == SpreadShuffle || len(e.members) < 2 {
		return base
	}
	j := e.sessions.Add(1) - 1
	r := &rotation{members: e.members, start: int(j % int64(len(e.members)))}
	return func(ctx context.Context, network, _ string) (net.Conn, error) {
		return base(ctx, network, r.next())
	}
}
