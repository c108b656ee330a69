package recipe

import (
	"context"
	"encoding/binary"
	"testing"
)

// TestSharedCountConcurrentIncrements: N clients × M compare-and-set
// increments give exactly N×M.
func TestSharedCountConcurrentIncrements(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const n, m = 5, 30
	const path = "/shared/incr"
	errc := make(chan error, n)
	for range n {
		sc := NewSharedCount(lockConn(t, srv), path, 0)
		if err := sc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sc.Close)
		go func() {
			done := 0
			// Each failed try means another writer succeeded, so the
			// total number of tries is bounded by n*m per writer.
			for try := 0; done < m && try < n*m*2; try++ {
				v := sc.Count()
				ok, err := sc.TrySetCount(ctx, v.Count+1, v.Version)
				if err != nil {
					errc <- err
					return
				}
				if ok {
					done++
				}
			}
			if done < m {
				t.Errorf("writer made %d of %d increments", done, m)
			}
			errc <- nil
		}()
	}
	for range n {
		if err := <-errc; err != nil {
			t.Fatal(err)
		}
	}
	c := lockConn(t, srv)
	data, st, err := c.Get(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	// Layout: 4 bytes, big-endian (Curator SharedCount).
	if len(data) != 4 || int32(binary.BigEndian.Uint32(data)) != n*m || st.Version != n*m {
		t.Errorf("node data %x version %d, want the 4-byte big-endian %d at version %d", data, st.Version, n*m, n*m)
	}
}

// TestSharedCountFollowsChanges: one client's write reaches another's Count
// and Changes; a stale TrySetCount fails and refreshes the view; the seed
// applies only to a missing node.
func TestSharedCountFollowsChanges(t *testing.T) {
	srv := startLockServer(t)
	ctx := testCtx(t)
	const path = "/shared/follow"
	a := NewSharedCount(lockConn(t, srv), path, 7)
	if err := a.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b := NewSharedCount(lockConn(t, srv), path, 99)
	if err := b.Start(ctx); err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if got := b.Count(); got != (VersionedCount{Count: 7, Version: 0}) {
		t.Fatalf("second opener sees %+v, want the first's seed 7 at version 0", got)
	}

	stale := b.Count()
	if ok, err := a.TrySetCount(ctx, 42, stale.Version); !ok || err != nil {
		t.Fatalf("TrySetCount = %v, %v", ok, err)
	}
	awaitCount(t, ctx, b, 42)
	if got := b.Count(); got != (VersionedCount{Count: 42, Version: 1}) {
		t.Errorf("b.Count = %+v, want 42 at version 1", got)
	}
	if ok, err := a.TrySetCount(ctx, 0, stale.Version); ok || err != nil {
		t.Errorf("stale TrySetCount = %v, %v; want false, nil", ok, err)
	}
	if err := b.SetCount(ctx, -3); err != nil {
		t.Fatal(err)
	}
	awaitCount(t, ctx, a, -3)
	if got := a.Count(); got != (VersionedCount{Count: -3, Version: 2}) {
		t.Errorf("a.Count = %+v, want -3 at version 2", got)
	}
	if a.Err() != nil || b.Err() != nil {
		t.Errorf("Err = %v, %v", a.Err(), b.Err())
	}
}

// awaitCount reads sc.Changes until it carries want, or ctx ends.
func awaitCount(t *testing.T, ctx context.Context, sc *SharedCount, want int32) {
	t.Helper()
	for {
		select {
		case v := <-sc.Changes():
			if v.Count == want {
				return
			}
		case <-ctx.Done():
			t.Fatalf("never saw count %d (last %+v)", want, sc.Count())
		}
	}
}
