package client

import (
	"errors"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"sync"
)

// errMoving is why UpdateServers drops a connection: the client moves to
// another server of the new list.
var errMoving = errors.New("client: moving to another server after a server list update")

// hostList is the list of servers a Conn connects to and the order it
// tries them in, ZooKeeper's StaticHostProvider: the list is shuffled
// once, then tried round robin. After update it may be in rebalancing
// mode: the next picks favour the servers that were added (pNew) or the
// ones that stayed (pOld), so that, over many clients, the load spreads
// evenly across the new list with as few clients moving as possible.
//
// hostList is pure (no IO, no clock); randomness comes from rnd. Its
// mutex is taken alone (see the lock order in doc.go).
type hostList struct {
	mu  sync.Mutex
	rnd *rand.Rand
	// addrs is the current list, shuffled. Invariant: len(addrs) > 0.
	addrs []string
	// cur is the index in addrs of the address next returned last; -1
	// before the first pick and after an update that rebalances.
	cur int
	// Rebalancing mode (set by update until its candidates run out):
	// fresh are the addresses not in the previous list, kept those that
	// were; iFresh and iKept the index of the last one tried (-1: none);
	// pFresh the probability of picking a fresh one next.
	rebalancing   bool
	fresh, kept   []string
	iFresh, iKept int
	pFresh        float64
}

// newHostList returns a list of addrs (len > 0) shuffled with rnd.
func newHostList(addrs []string, rnd *rand.Rand) *hostList {
	h := &hostList{rnd: rnd, cur: -1}
	h.addrs = h.shuffle(addrs)
	return h
}

func (h *hostList) shuffle(addrs []string) []string {
	out := slices.Clone(addrs)
	h.rnd.Shuffle(len(out), func(i, j int) { out[i], out[j] = out[j], out[i] })
	return out
}

// size is the number of servers in the list.
func (h *hostList) size() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return len(h.addrs)
}

// list returns a copy of the list in its (shuffled) order.
func (h *hostList) list() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.addrs)
}

// next returns the address to try next.
func (h *hostList) next() string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.nextLocked()
}

func (h *hostList) nextLocked() string {
	if h.rebalancing {
		if a, ok := h.nextRebalancing(); ok {
			h.cur = slices.Index(h.addrs, a)
			return a
		}
		h.rebalancing = false // tried every candidate: back to round robin
	}
	h.cur = (h.cur + 1) % len(h.addrs)
	return h.addrs[h.cur]
}

// nextRebalancing picks a fresh server with probability pFresh (or when
// no kept one is left untried), else a kept one; false when every
// candidate has been tried.
func (h *hostList) nextRebalancing() (string, bool) {
	takeFresh := h.rnd.Float64() <= h.pFresh
	if h.iFresh+1 < len(h.fresh) && (takeFresh || h.iKept+1 >= len(h.kept)) {
		h.iFresh++
		return h.fresh[h.iFresh], true
	}
	if h.iKept+1 < len(h.kept) {
		h.iKept++
		return h.kept[h.iKept], true
	}
	return "", false
}

// update replaces the list with addrs (len > 0); current is the server
// the client is connected to ("" when none). It reports whether the
// client should drop its connection and pick again with next: always when
// current left the list; when servers were added, with the probability
// that keeps the load even (1 - old size/new size); never when current
// stays and the list did not grow. Which servers next then favours
// follows ZooKeeper's StaticHostProvider.updateServerList.
func (h *hostList) update(addrs []string, current string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	shuffled := h.shuffle(addrs)
	mine := current
	if h.rebalancing {
		// Not settled since the last update: the server it would try next
		// stands for the current one.
		mine = h.nextLocked()
	}
	if mine == "" {
		mine = h.addrs[max(h.cur, 0)]
	}
	inNew := slices.ContainsFunc(shuffled, func(a string) bool { return sameAddr(a, mine) })

	var fresh, kept []string
	for _, a := range shuffled {
		if slices.ContainsFunc(h.addrs, func(b string) bool { return sameAddr(a, b) }) {
			kept = append(kept, a)
		} else {
			fresh = append(fresh, a)
		}
	}
	oldSize, newSize := float64(len(h.addrs)), float64(len(shuffled))
	rebalance := true
	pFresh := 1.0
	switch {
	case newSize > oldSize && inNew:
		// The list grew: move with the probability that takes this
		// client's share of the load to the new servers.
		rebalance = h.rnd.Float64() <= 1-oldSize/newSize
	case newSize > oldSize:
		// current left: go to a new server.
	case inNew:
		// Same size or smaller and current stays: it only gains load.
		rebalance = false
	case float64(len(kept)) < oldSize:
		// current left and the list did not grow: a client of a removed
		// server goes to a kept server with the probability that evens
		// out the load the removed servers leave behind.
		nKept := float64(len(kept))
		pKept := nKept * (oldSize - newSize) / (newSize * (oldSize - nKept))
		pFresh = 1 - pKept
	}
	h.addrs = shuffled
	h.fresh, h.kept = fresh, kept
	h.iFresh, h.iKept = -1, -1
	h.pFresh = pFresh
	h.rebalancing = rebalance
	if rebalance {
		h.cur = -1
	} else {
		h.cur = slices.IndexFunc(shuffled, func(a string) bool { return sameAddr(a, mine) })
	}
	return rebalance
}

// sameAddr reports whether two host:port addresses are the same server:
// same port and, ignoring case, the same host.
func sameAddr(a, b string) bool {
	ah, ap, errA := net.SplitHostPort(a)
	bh, bp, errB := net.SplitHostPort(b)
	if errA != nil || errB != nil {
		return a == b
	}
	return ap == bp && strings.EqualFold(ah, bh)
}
