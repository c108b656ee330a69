package checker

import "testing"

func TestCheckQueue(t *testing.T) {
	enq := func(v string, o Outcome) Enqueue { return Enqueue{Client: 0, Value: v, Span: sp(0, 10), Outcome: o} }
	deq := func(c int, v string, o Outcome) Dequeue {
		return Dequeue{Client: c, Value: v, Span: sp(20, 30), Outcome: o}
	}
	enqs := []Enqueue{enq("a", OK), enq("b", OK), enq("c", OK), enq("u", Unknown), enq("w", Unknown), enq("f", Failed)}
	for _, tc := range []struct {
		name    string
		enq     []Enqueue
		deq     []Dequeue
		drained []string
		v       verdict
	}{
		{"every value out once", enqs, []Dequeue{
			deq(1, "a", OK), deq(2, "a", Failed), deq(2, "u", OK),
		}, []string{"b", "c"}, pass},
		{"acknowledged value possibly dequeued", enqs, []Dequeue{
			deq(1, "a", OK), deq(2, "b", Unknown),
		}, []string{"c", "w"}, pass},
		{"unknown dequeue that did take it", enqs, []Dequeue{
			deq(1, "a", Unknown),
		}, []string{"b", "c"}, pass},

		{"lost enqueue", enqs, []Dequeue{
			deq(1, "a", OK),
		}, []string{"c"}, fail("b", "b: lost: 1 acknowledged enqueue(s), but dequeued ok 0 time(s), unknown 0, drained 0")},
		{"duplicate dequeue", enqs, []Dequeue{
			deq(2, "a", OK), deq(1, "a", OK),
		}, []string{"b", "c"}, fail("a", "a: duplicated: came out 2 times (dequeued ok by clients [1 2], drained 0 time(s)), enqueued at most 1")},
		{"dequeued and drained", enqs, []Dequeue{
			deq(1, "a", OK),
		}, []string{"a", "b", "c"}, fail("a", "a: duplicated")},
		{"drained twice", enqs, nil, []string{"a", "b", "c", "c"}, fail("c", "c: duplicated: came out 2 times (dequeued ok by clients [], drained 2 time(s))")},
		{"unknown enqueue out twice", enqs, []Dequeue{
			deq(1, "u", OK),
		}, []string{"a", "b", "c", "u"}, fail("u", "u: duplicated")},
		{"never enqueued", enqs, []Dequeue{
			deq(1, "zz", OK),
		}, []string{"a", "b", "c"}, fail("zz", "zz: came out (dequeued ok by clients [1], drained 0 time(s)), but was never enqueued")},
		{"enqueue failed", enqs, nil, []string{"a", "b", "c", "f"}, fail("f", "f: came out (dequeued ok by clients [], drained 1 time(s)), but its enqueue failed")},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := CheckQueue(tc.enq, tc.deq, tc.drained)
			tc.v.check(t, r, "queue")
			if want := len(tc.enq) + len(tc.deq) + len(tc.drained); r.Ops != want {
				t.Errorf("Ops = %d, want %d", r.Ops, want)
			}
		})
	}
}
