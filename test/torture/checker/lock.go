package checker

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strconv"
)

// Grant is one tenure of the exclusive lock: Acquire returned OK with
// the fencing Token (the czxid of the lock node: unique, and increasing
// in grant order). Release.Call is when the holder began releasing;
// Released reports the release was acknowledged and Lost was never
// signalled. Lost reports the holder learnt (or may have) that the lock
// was lost before or during release: session expired, node vanished,
// release failed or its outcome unknown. A session that expired while
// its client was disconnected cannot be resumed, so the release fails
// and the grant is Lost: a grant whose release succeeded kept its node,
// and the lock, throughout. Release.Call
// == 0 means the holder never released (the run ended): its tenure
// lasts until the end.
type Grant struct {
	Client           int
	Token            int64
	Acquire, Release Span
	Released, Lost   bool
}

// CheckLock checks the lock's grants:
//
//	(a) tokens are unique;
//	(b) tokens follow grant order: if A.Acquire.Return < B.Acquire.Call,
//	    then A.Token < B.Token;
//	(c) one holder at a time: if A.Token < B.Token and A is not Lost,
//	    then B.Acquire.Return >= A.Release.Call (never, if A never
//	    released): B was not granted before A began to release.
//	    Otherwise "two holders at once".
//
// Why (c) is sound (no false alarm when A released normally), for the
// usual recipe (an ephemeral sequential node each; the lowest holds):
// the token orders the lock nodes as their sequence numbers do (both
// are assigned at commit), and B is granted only once B has read the
// children and found no node before its own, so A's node was gone.
// Deleted nodes never come back, and a read only returns state the
// ensemble committed; so A's node was deleted before B's acquire
// returned. If A is not Lost, only A's own delete removed it (an expiry
// would have failed A's release, which makes it Lost), and A issued that
// delete after Release.Call. Equal timestamps pass, so a
// coarse clock cannot make an alarm. A Lost A gets no check: its node
// may have gone with its session while A still thought it held the
// lock, which is what the fencing token is for; (a) and (b) still hold
// it to account.
//
// Result.Key is "token <n>" of the later grant of an anomaly (anomalies
// sort by token).
func CheckLock(grants []Grant) Result {
	var f findings
	key := func(g Grant) string { return "token " + strconv.FormatInt(g.Token, 10) }
	// add records an anomaly about g's token; anomalies sort by token.
	add := func(g Grant, format string, args ...any) {
		f.addSorted(fmt.Sprintf("%020d", g.Token), key(g), key(g)+": "+format, args...)
	}
	desc := func(g Grant) string {
		return fmt.Sprintf("client %d (token %d, acquired %s–%s)", g.Client, g.Token, at(g.Acquire.Call), at(g.Acquire.Return))
	}
	gs := slices.Clone(grants)
	slices.SortFunc(gs, func(a, b Grant) int {
		if a.Token != b.Token {
			return cmp.Compare(a.Token, b.Token)
		}
		if a.Acquire.Call != b.Acquire.Call {
			return cmp.Compare(a.Acquire.Call, b.Acquire.Call)
		}
		if a.Client != b.Client {
			return cmp.Compare(a.Client, b.Client)
		}
		if a.Acquire.Return != b.Acquire.Return {
			return cmp.Compare(a.Acquire.Return, b.Acquire.Return)
		}
		return cmp.Compare(a.Release.Call, b.Release.Call)
	})

	// (a) and (c), in token order. held is the not-Lost grant of a lower
	// token whose release began last (math.MaxInt64: never).
	var held *Grant
	heldUntil := int64(math.MinInt64)
	for i := 0; i < len(gs); {
		j := i
		for j < len(gs) && gs[j].Token == gs[i].Token {
			j++
		}
		if j-i > 1 {
			for k := i + 1; k < j; k++ {
				add(gs[i], "token granted twice: to %s and to %s", desc(gs[i]), desc(gs[k]))
			}
		}
		for k := i; k < j; k++ {
			b := gs[k]
			if held != nil && b.Acquire.Return < heldUntil {
				add(b, "two holders at once: %s was granted before %s, of a lower token, began to release (%s)",
					desc(b), desc(*held), releaseDesc(*held))
			}
		}
		for k := i; k < j; k++ {
			if a := gs[k]; !a.Lost {
				until := a.Release.Call
				if until == 0 {
					until = math.MaxInt64
				}
				if until > heldUntil {
					held, heldUntil = &gs[k], until
				}
			}
		}
		i = j
	}

	// (b): for each B by call time, the highest token among the grants
	// that returned before B was called.
	byReturn := slices.Clone(gs)
	slices.SortStableFunc(byReturn, func(a, b Grant) int { return cmp.Compare(a.Acquire.Return, b.Acquire.Return) })
	byCall := slices.Clone(gs)
	slices.SortStableFunc(byCall, func(a, b Grant) int { return cmp.Compare(a.Acquire.Call, b.Acquire.Call) })
	var top *Grant
	n := 0
	for _, b := range byCall {
		for n < len(byReturn) && byReturn[n].Acquire.Return < b.Acquire.Call {
			if top == nil || byReturn[n].Token > top.Token {
				top = &byReturn[n]
			}
			n++
		}
		if top != nil && top.Token > b.Token {
			add(b, "token went backwards: %s was granted after %s had been",
				desc(b), desc(*top))
		}
	}
	return f.result("lock", len(grants))
}

// releaseDesc says how a grant's tenure ended, for an anomaly.
func releaseDesc(g Grant) string {
	switch {
	case g.Release.Call == 0:
		return "it never did"
	case g.Released:
		return "released " + at(g.Release.Call) + "–" + at(g.Release.Return)
	default:
		return "release began " + at(g.Release.Call)
	}
}
