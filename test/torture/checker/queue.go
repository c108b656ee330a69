package checker

import "slices"

// Enqueue is one attempt to put Value in the queue (a create of a
// sequential child holding Value). Values are meant to be unique; the
// checker counts them as a multiset, so a repeated value is judged by
// how many times it went in and came out.
type Enqueue struct {
	Client int
	Value  string
	Span
	Outcome Outcome
}

// Dequeue is one attempt to take the queue's head: OK = this client's
// delete of the head node succeeded (it removed Value); Unknown = the
// delete's outcome is unknown (Value may have been removed). A Failed
// dequeue (someone else took the node first) removed nothing.
type Dequeue struct {
	Client int
	Value  string
	Span
	Outcome Outcome
}

// CheckQueue checks that the queue neither loses nor duplicates nor
// invents values. drained are the values left in the queue after
// healing (read and removed by the harness).
//
// Per value, with in = OK enqueues, maybe = Unknown enqueues, out = OK
// dequeues + times drained, and pending = Unknown dequeues:
//
//	lost        in > out + pending         an acknowledged enqueue never came out
//	duplicated  out > in + maybe > 0       dequeued OK twice, or dequeued and drained, or drained twice
//	invented    out > 0 = in + maybe       came out, never went in (or only with Failed)
//
// Order is not checked: values come from several clients' sequential
// nodes, and FIFO across clients is not what ZooKeeper promises here.
// Result.Ops counts enqueues, dequeues and drained values; Result.Notes
// gives the counts by outcome.
func CheckQueue(enq []Enqueue, deq []Dequeue, drained []string) Result {
	type tally struct {
		in, maybe, failed int   // enqueues by outcome
		deqClients        []int // clients whose dequeue of it was OK
		pending           int   // Unknown dequeues
		drained           int
	}
	var f findings
	ts := make(map[string]*tally)
	get := func(v string) *tally {
		t := ts[v]
		if t == nil {
			t = &tally{}
			ts[v] = t
		}
		return t
	}
	var counts [3][2]int // [outcome][enqueue, dequeue]
	for _, e := range enq {
		t := get(e.Value)
		switch e.Outcome {
		case OK:
			t.in++
		case Unknown:
			t.maybe++
		default:
			t.failed++
		}
		counts[outcomeRank(e.Outcome)][0]++
	}
	for _, d := range deq {
		switch d.Outcome {
		case OK:
			t := get(d.Value)
			t.deqClients = append(t.deqClients, d.Client)
		case Unknown:
			get(d.Value).pending++
		}
		counts[outcomeRank(d.Outcome)][1]++
	}
	for _, v := range drained {
		get(v).drained++
	}
	f.note("enqueues: %d ok, %d unknown, %d failed; dequeues: %d ok, %d unknown, %d failed; drained: %d",
		counts[2][0], counts[1][0], counts[0][0], counts[2][1], counts[1][1], counts[0][1], len(drained))

	for _, v := range sortedKeys(ts) {
		t := ts[v]
		slices.Sort(t.deqClients)
		out := len(t.deqClients) + t.drained
		switch {
		case t.in > out+t.pending:
			f.add(v, "%s: lost: %d acknowledged enqueue(s), but dequeued ok %d time(s), unknown %d, drained %d",
				v, t.in, len(t.deqClients), t.pending, t.drained)
		case out > 0 && t.in+t.maybe == 0 && t.failed > 0:
			f.add(v, "%s: came out (dequeued ok by clients %v, drained %d time(s)), but its enqueue failed",
				v, t.deqClients, t.drained)
		case out > 0 && t.in+t.maybe == 0:
			f.add(v, "%s: came out (dequeued ok by clients %v, drained %d time(s)), but was never enqueued",
				v, t.deqClients, t.drained)
		case out > t.in+t.maybe:
			f.add(v, "%s: duplicated: came out %d times (dequeued ok by clients %v, drained %d time(s)), enqueued at most %d",
				v, out, t.deqClients, t.drained, t.in+t.maybe)
		}
	}
	return f.result("queue", len(enq)+len(deq)+len(drained))
}
