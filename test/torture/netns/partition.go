package netns

import (
	"errors"
	"fmt"
	"net/netip"
	"strings"
	"sync"
)

// ErrBadGroups reports a partition naming a member that does not exist.
var ErrBadGroups = errors.New("netns: partition names a member out of range")

// healRuleset removes the torture table; declaring the table first makes
// the delete succeed when there is none. nft -f applies a file as one
// transaction.
const healRuleset = "table inet torture\ndelete table inet torture\n"

// cuts returns, for each of n members, the members it must not reach
// under groups: j is cut from i (i != j) unless some group holds both.
// The relation is symmetric. A member in no group is cut from all others.
func cuts(n int, groups [][]int) ([][]int, error) {
	reach := make([][]bool, n)
	for i := range reach {
		reach[i] = make([]bool, n)
		reach[i][i] = true
	}
	for _, g := range groups {
		for _, i := range g {
			if i < 0 || i >= n {
				return nil, fmt.Errorf("%w: member %d, have %d", ErrBadGroups, i, n)
			}
		}
		for _, i := range g {
			for _, j := range g {
				reach[i][j] = true
			}
		}
	}
	out := make([][]int, n)
	for i := range reach {
		for j, ok := range reach[i] {
			if !ok {
				out[i] = append(out[i], j)
			}
		}
	}
	return out, nil
}

// ruleset returns the nft script that replaces member's torture table
// with one dropping every packet from or to the addresses in cut. With
// nothing to cut it only deletes the table.
func ruleset(cut []netip.Addr) string {
	if len(cut) == 0 {
		return healRuleset
	}
	elems := make([]string, len(cut))
	for i, a := range cut {
		elems[i] = a.String()
	}
	var b strings.Builder
	b.WriteString(healRuleset)
	fmt.Fprintf(&b, `table inet torture {
	set cut {
		type ipv4_addr
		elements = { %s }
	}
	chain input {
		type filter hook input priority 0; policy accept;
		ip saddr @cut drop
	}
	chain output {
		type filter hook output priority 0; policy accept;
		ip daddr @cut drop
	}
}
`, strings.Join(elems, ", "))
	return b.String()
}

// Partition cuts the network so that members talk only within their
// group. Groups may overlap: a member in two groups talks to both. A
// member in no group is isolated from every other member. The host
// address (the test clients) is never cut.
//
// Each member namespace gets an nftables table "inet torture" whose input
// and output chains silently drop (never reject) packets from and to the
// members it must not reach; the rules match addresses only, so
// established connections are cut from their next packet on. Partition
// replaces any earlier partition: each namespace's table is replaced in
// one nft transaction, the namespaces in parallel (not atomically across
// namespaces; they differ by milliseconds).
func (n *Net) Partition(groups [][]int) error {
	c, err := cuts(len(n.hosts), groups)
	if err != nil {
		return err
	}
	scripts := make([]string, len(c))
	for i, js := range c {
		addrs := make([]netip.Addr, len(js))
		for k, j := range js {
			addrs[k] = n.hosts[j]
		}
		scripts[i] = ruleset(addrs)
	}
	return n.applyRulesets(scripts)
}

// Heal removes every partition rule.
func (n *Net) Heal() error {
	scripts := make([]string, len(n.hosts))
	for i := range scripts {
		scripts[i] = healRuleset
	}
	return n.applyRulesets(scripts)
}

// applyRulesets runs nft -f - with scripts[i] in member i's namespace.
func (n *Net) applyRulesets(scripts []string) error {
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return ErrClosed
	}
	errs := make([]error, len(scripts))
	var wg sync.WaitGroup
	for i, s := range scripts {
		wg.Go(func() {
			_, errs[i] = run(s, "ip", "netns", "exec", n.members[i], "nft", "-f", "-")
		})
	}
	wg.Wait()
	return errors.Join(errs...)
}
