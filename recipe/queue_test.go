package recipe

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
)

// TestQueueExactlyOnce: N producers put M items each while K consumers
// take concurrently; every item is taken exactly once.
func TestQueueExactlyOnce(t *testing.T) {
	const producers, perProducer, consumers = 4, 40, 5
	srv := startLockServer(t)
	ctx := testCtx(t)
	cctx, stop := context.WithCancel(ctx)
	defer stop()

	var mu sync.Mutex
	seen := map[string]int{}
	var taken atomic.Int64
	var wg sync.WaitGroup
	for k := range consumers {
		q := NewQueue(lockConn(t, srv), "/jobs")
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				item, err := q.Take(cctx)
				if err != nil {
					if cctx.Err() == nil {
						t.Errorf("consumer %d: %v", k, err)
					}
					return
				}
				mu.Lock()
				seen[string(item)]++
				mu.Unlock()
				if taken.Add(1) == producers*perProducer {
					stop()
				}
			}
		}()
	}
	var pg sync.WaitGroup
	for p := range producers {
		q := NewQueue(lockConn(t, srv), "/jobs")
		pg.Add(1)
		go func() {
			defer pg.Done()
			for i := range perProducer {
				if _, err := q.Put(ctx, fmt.Appendf(nil, "p%d-%d", p, i)); err != nil {
					t.Errorf("producer %d: %v", p, err)
					return
				}
			}
		}()
	}
	pg.Wait()
	wg.Wait()
	if ctx.Err() != nil {
		t.Fatalf("timed out with %d of %d items taken", taken.Load(), producers*perProducer)
	}
	if len(seen) != producers*perProducer {
		t.Fatalf("%d distinct items taken, want %d", len(seen), producers*perProducer)
	}
	for item, n := range seen {
		if n != 1 {
			t.Errorf("item %s taken %d times", item, n)
		}
	}
}

// TestQueueFIFOAndLayout: a single consumer gets items in put order; the
// nodes carry Curator's names and envelope.
func TestQueueFIFOAndLayout(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	c := lockConn(t, srv)
	q := NewQueue(c, "/app/q")
	p, err := q.Put(ctx, []byte("a"))
	if err != nil {
		t.Fatal(err)
	}
	if p != "/app/q/queue-0000000000" {
		t.Errorf("first item at %s, want /app/q/queue-0000000000", p)
	}
	raw, _, err := c.Get(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	want := []byte{0, 1, 0, 1, 1, 0, 0, 0, 1, 'a', 2}
	if !bytes.Equal(raw, want) {
		t.Errorf("envelope = % x, want % x", raw, want)
	}
	for _, s := range []string{"b", "c"} {
		if _, err := q.Put(ctx, []byte(s)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := q.PutMulti(ctx, [][]byte{[]byte("d"), []byte("e")}); err != nil {
		t.Fatal(err)
	}
	if n, err := q.Len(ctx); err != nil || n != 4 {
		t.Errorf("Len = %d, %v; want 4 nodes", n, err)
	}
	var got []string
	for range 5 {
		item, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(item))
	}
	if strings.Join(got, "") != "abcde" {
		t.Errorf("took %v, want a..e in order", got)
	}
	if _, ok, err := q.Poll(ctx); ok || err != nil {
		t.Errorf("Poll on empty queue = %v, %v", ok, err)
	}
}

// TestQueueTakeWaits: Take on an empty (even missing) queue returns the
// item put later by another session.
func TestQueueTakeWaits(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	consumer := NewQueue(lockConn(t, srv), "/later/q")
	got := make(chan string, 1)
	go func() {
		item, err := consumer.Take(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- string(item)
	}()
	if _, err := NewQueue(lockConn(t, srv), "/later/q").Put(ctx, []byte("x")); err != nil {
		t.Fatal(err)
	}
	select {
	case s := <-got:
		if s != "x" {
			t.Errorf("took %q", s)
		}
	case <-ctx.Done():
		t.Fatal("Take never returned")
	}
}

func TestQueueEnvelopeDecode(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want []string
		bad  bool
	}{
		{"empty message", []byte{0, 1, 0, 1, 2}, nil, false},
		{"two items", []byte{0, 1, 0, 1, 1, 0, 0, 0, 1, 'x', 1, 0, 0, 0, 0, 2}, []string{"x", ""}, false},
		{"bad version", []byte{0, 1, 0, 2, 2}, nil, true},
		{"no eof", []byte{0, 1, 0, 1}, nil, true},
		{"truncated item", []byte{0, 1, 0, 1, 1, 0, 0, 0, 9, 'x', 2}, nil, true},
		{"bad opcode", []byte{0, 1, 0, 1, 7}, nil, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			items, err := decodeQueueItems(tc.in)
			if tc.bad {
				if err == nil {
					t.Fatalf("decoded %q, want an error", items)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, it := range items {
				got = append(got, string(it))
			}
			if fmt.Sprint(got) != fmt.Sprint(tc.want) {
				t.Errorf("items %q, want %q", got, tc.want)
			}
			if !bytes.Equal(encodeQueueItems(items), tc.in) {
				t.Errorf("re-encoding differs")
			}
		})
	}
}

func TestPriorityName(t *testing.T) {
	for _, tc := range []struct {
		p    int32
		want string
	}{
		{0, "100000000"}, {5, "100000005"}, {-1, "0FFFFFFFF"},
		{-2147483648, "080000000"}, {2147483647, "17FFFFFFF"},
	} {
		if got := priorityName(tc.p); got != tc.want {
			t.Errorf("priorityName(%d) = %s, want %s", tc.p, got, tc.want)
		}
	}
}

// TestPriorityQueueOrder: lower priorities first, FIFO among equals.
func TestPriorityQueueOrder(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	q := NewPriorityQueue(lockConn(t, srv), "/pq")
	for _, put := range []struct {
		item string
		prio int32
	}{{"five", 5}, {"minus-one", -1}, {"three-a", 3}, {"zero", 0}, {"three-b", 3}, {"min", -2147483648}} {
		if _, err := q.Put(ctx, []byte(put.item), put.prio); err != nil {
			t.Fatal(err)
		}
	}
	want := []string{"min", "minus-one", "zero", "three-a", "three-b", "five"}
	for i, w := range want {
		item, err := q.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if string(item) != w {
			t.Fatalf("take %d = %s, want %s", i, item, w)
		}
	}
}
