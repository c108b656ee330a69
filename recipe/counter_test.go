package recipe

import (
	"encoding/binary"
	"path"
	"testing"

	"github.com/wardenzk/warden/client"
)

// TestCounterConcurrentAdds: N clients × M concurrent increments give
// exactly N×M, and every Add returns a distinct value.
func TestCounterConcurrentAdds(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const n, m = 6, 40
	const path = "/counters/adds/hits"
	results := make(chan int64, n*m)
	errc := make(chan error, n)
	for range n {
		ctr := NewCounter(lockConn(t, srv), path)
		go func() {
			for range m {
				v, err := ctr.Add(ctx, 1)
				if err != nil {
					errc <- err
					return
				}
				results <- v
			}
			errc <- nil
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	close(results)
	seen := map[int64]bool{}
	for v := range results {
		if seen[v] {
			t.Errorf("value %d returned twice", v)
		}
		seen[v] = true
	}
	c := lockConn(t, srv)
	got, err := NewCounter(c, path).Get(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if got != n*m || len(seen) != n*m {
		t.Errorf("counter = %d with %d distinct results, want %d", got, len(seen), n*m)
	}
	// Layout: 8 bytes, big-endian (Curator DistributedAtomicLong).
	data, _, err := c.Get(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) != 8 || binary.BigEndian.Uint64(data) != n*m {
		t.Errorf("node data %x, want the 8-byte big-endian %d", data, n*m)
	}
}

// TestCounterValues: a missing counter reads 0; negative deltas; existing
// empty data reads 0; corrupt data is an error.
func TestCounterValues(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	c := lockConn(t, srv)
	for _, tc := range []struct {
		name   string
		init   []byte // nil: no node
		deltas []int64
		want   int64
	}{
		{"missing", nil, nil, 0},
		{"create on add", nil, []int64{5}, 5},
		{"negative", nil, []int64{3, -10}, -7},
		{"empty data", []byte{}, []int64{2}, 2},
		{"preset", binary.BigEndian.AppendUint64(nil, 1<<40), []int64{1}, 1<<40 + 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := "/counters/values/" + tc.name
			if tc.init != nil {
				mustCreate(t, c, path, tc.init)
			}
			ctr := NewCounter(c, path)
			for _, d := range tc.deltas {
				if _, err := ctr.Add(ctx, d); err != nil {
					t.Fatal(err)
				}
			}
			got, err := ctr.Get(ctx)
			if err != nil || got != tc.want {
				t.Errorf("Get = %d, %v; want %d", got, err, tc.want)
			}
		})
	}
	mustCreate(t, c, "/counters/values/corrupt", []byte("12"))
	if _, err := NewCounter(c, "/counters/values/corrupt").Add(ctx, 1); err == nil {
		t.Error("Add on 2-byte data succeeded")
	}
}

// mustCreate creates a persistent node holding data, and its missing parents.
func mustCreate(t *testing.T, c *client.Conn, p string, data []byte) {
	t.Helper()
	ctx := testCtx(t)
	if err := ensureParents(ctx, c, path.Dir(p)); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Create(ctx, p, data, client.Persistent, client.OpenACL); err != nil {
		t.Fatal(err)
	}
}
