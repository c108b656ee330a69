package tree

import (
	"fmt"
	"maps"
	"math/rand/v2"
	"slices"
	"testing"
)

// children behaves as a map from name to node, in both of its forms:
// random puts (in and out of name order) and deletes take it past
// maxListedKids and back down, checked against a map after every step.
func TestChildrenAgainstAMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var c children
	want := map[string]*node{}
	nodes := make([]*node, 64)
	for i := range nodes {
		nodes[i] = &node{version: int32(i)}
	}
	check := func(step int) {
		t.Helper()
		if c.len() != len(want) {
			t.Fatalf("step %d: len %d, want %d", step, c.len(), len(want))
		}
		if got, w := c.names(), slices.Sorted(maps.Keys(want)); !slices.Equal(got, w) && len(w) > 0 {
			t.Fatalf("step %d: names differ (%d vs %d)", step, len(got), len(w))
		}
		seen := 0
		for k, n := range c.all() {
			if want[k] != n {
				t.Fatalf("step %d: %s is %p, want %p", step, k, n, want[k])
			}
			seen++
		}
		if seen != len(want) {
			t.Fatalf("step %d: all yielded %d, want %d", step, seen, len(want))
		}
	}
	sawMap := false
	for step := range 6000 {
		// Steps 0-1999 stay in the slice form (at most 800 names), then
		// puts take it past maxListedKids, then puts and deletes mix.
		pool := 800
		if step >= 2000 {
			pool = 3000
		}
		name := fmt.Sprintf("n%05d", rng.IntN(pool))
		put := rng.IntN(2) == 0
		if step >= 2000 && step < 4000 {
			put = true
			if step%3 == 0 { // in name order: appended
				name = fmt.Sprintf("z%05d", step)
			}
		}
		if put {
			n := nodes[rng.IntN(len(nodes))]
			_, had := want[name]
			if added := c.put(name, n); added == had {
				t.Fatalf("step %d: put(%s) added=%v, but it was present=%v", step, name, added, had)
			}
			want[name] = n
		} else {
			c.del(name)
			delete(want, name)
		}
		if c.get(name) != want[name] {
			t.Fatalf("step %d: get(%s) = %p, want %p", step, name, c.get(name), want[name])
		}
		if step < 2000 && c.m != nil {
			t.Fatalf("step %d: map form with %d children", step, c.len())
		}
		sawMap = sawMap || c.m != nil
		if step%100 == 0 {
			check(step)
		}
	}
	check(-1)
	if !sawMap {
		t.Fatal("the set never grew past the slice form")
	}
	cl := c.clone()
	c.put("zzz", nodes[0])
	if cl.get("zzz") != nil {
		t.Fatal("a clone sees a later put")
	}
	var none *children
	if none.len() != 0 || none.get("x") != nil || none.names() != nil {
		t.Fatal("a nil set is not empty")
	}
}

// The names a set hands out stay what they were while the set changes
// (appends, deletes that compact its text, a clone's first put), and a
// clone and its original change apart in the slice form too.
func TestChildrenNamesOutliveChanges(t *testing.T) {
	var c children
	n := &node{}
	for i := range 200 {
		c.put(fmt.Sprintf("k%03d", i), n)
	}
	kept := c.names()
	want := slices.Clone(kept)
	for i := range want {
		want[i] = string([]byte(want[i])) // copies that share nothing
	}
	cl := c.clone()
	cl.put("k999", n)
	c.put("k998", n)
	if cl.get("k998") != nil || c.get("k999") != nil {
		t.Fatal("a clone and its original see each other's puts")
	}
	for i := range 190 { // past half of the text: compacted
		c.del(fmt.Sprintf("k%03d", i))
	}
	if c.dead != 0 {
		t.Fatalf("%d dead bytes after deleting most names", c.dead)
	}
	if got := c.names(); !slices.Equal(got, append(slices.Clone(want[190:]), "k998")) {
		t.Fatalf("names after deletes: %v", got)
	}
	for i := range 200 {
		c.put(fmt.Sprintf("j%03d", i), n)
	}
	if !slices.Equal(kept, want) {
		t.Fatal("names handed out earlier changed")
	}
	if cl.len() != 201 || cl.get("k000") != n {
		t.Fatalf("the clone changed: %d children", cl.len())
	}
}
