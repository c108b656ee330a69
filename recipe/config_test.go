package recipe

import (
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
)

const configKeys = 5

// generationSet returns configKeys keys all holding generation g.
func generationSet(g string) map[string][]byte {
	kv := make(map[string][]byte, configKeys)
	for k := range configKeys {
		kv["k"+strconv.Itoa(k)] = []byte(g)
	}
	return kv
}

// sameGeneration checks that kv holds all configKeys keys with one value
// and returns it.
func sameGeneration(kv map[string][]byte) (string, error) {
	if len(kv) != configKeys {
		return "", fmt.Errorf("snapshot has %d keys, want %d: %q", len(kv), configKeys, kv)
	}
	first := string(kv["k0"])
	for k, v := range kv {
		if string(v) != first {
			return "", fmt.Errorf("half-applied update: k0=%s but %s=%s", first, k, v)
		}
	}
	return first, nil
}

// TestReadyConfigNoTornReads: one writer updates every key to a new
// generation over and over while readers read; no reader ever sees keys
// from two generations, and a reader's generations never go back.
func TestReadyConfigNoTornReads(t *testing.T) {
	const updates, readers = 60, 4
	srv := startLockServer(t)
	ctx := testCtx(t)
	writer := NewReadyConfig(lockConn(t, srv), "/cfg/ready")
	if err := writer.Update(ctx, generationSet("0")); err != nil {
		t.Fatal(err)
	}
	var done atomic.Bool
	var reads atomic.Int64
	var wg sync.WaitGroup
	for r := range readers {
		rc := NewReadyConfig(lockConn(t, srv), "/cfg/ready")
		wg.Add(1)
		go func() {
			defer wg.Done()
			last := -1
			for !done.Load() {
				kv, err := rc.Read(ctx)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				g, err := sameGeneration(kv)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				n, _ := strconv.Atoi(g)
				if n < last {
					t.Errorf("reader %d: generation went back from %d to %d", r, last, n)
				}
				last = n
				reads.Add(1)
			}
		}()
	}
	watch := NewReadyConfig(lockConn(t, srv), "/cfg/ready").Watch(ctx)
	for g := 1; g <= updates; g++ {
		if err := writer.Update(ctx, generationSet(strconv.Itoa(g))); err != nil {
			t.Fatal(err)
		}
	}
	done.Store(true)
	wg.Wait()
	for {
		kv, ok := <-watch
		if !ok {
			t.Fatal("watch closed before the last generation")
		}
		g, err := sameGeneration(kv)
		if err != nil {
			t.Fatalf("watch: %v", err)
		}
		if g == strconv.Itoa(updates) {
			break
		}
	}
	t.Logf("%d consistent reads during %d updates", reads.Load(), updates)

	// Deleting a key through Update.
	if err := writer.Update(ctx, map[string][]byte{"k4": nil}); err != nil {
		t.Fatal(err)
	}
	kv, err := writer.Read(ctx)
	if err != nil || len(kv) != configKeys-1 {
		t.Errorf("after deleting k4: %q, %v", kv, err)
	}
}

// TestAtomicConfigSnapshots: two writers race (compare-and-set retries),
// readers only ever see whole generations, and every update commits once.
func TestAtomicConfigSnapshots(t *testing.T) {
	const perWriter, writers, readers = 30, 2, 3
	srv := startLockServer(t)
	ctx := testCtx(t)
	if snap, err := NewAtomicConfig(lockConn(t, srv), "/cfg/atomic").Read(ctx); err != nil || snap.Generation != 0 || len(snap.Values) != 0 {
		t.Fatalf("fresh config read = %+v, %v", snap, err)
	}
	var done atomic.Bool
	var wg sync.WaitGroup
	for r := range readers {
		ac := NewAtomicConfig(lockConn(t, srv), "/cfg/atomic")
		wg.Add(1)
		go func() {
			defer wg.Done()
			var last int64
			for !done.Load() {
				snap, err := ac.Read(ctx)
				if err != nil {
					t.Errorf("reader %d: %v", r, err)
					return
				}
				if snap.Generation < last {
					t.Errorf("reader %d: generation went back from %d to %d", r, last, snap.Generation)
				}
				last = snap.Generation
				if snap.Generation == 0 {
					continue
				}
				if _, err := sameGeneration(snap.Values); err != nil {
					t.Errorf("reader %d generation %d: %v", r, snap.Generation, err)
					return
				}
			}
		}()
	}
	var ww sync.WaitGroup
	for w := range writers {
		ac := NewAtomicConfig(lockConn(t, srv), "/cfg/atomic")
		ww.Add(1)
		go func() {
			defer ww.Done()
			for i := range perWriter {
				if _, err := ac.Update(ctx, generationSet(fmt.Sprintf("w%d-%d", w, i))); err != nil {
					t.Errorf("writer %d: %v", w, err)
					return
				}
			}
		}()
	}
	ww.Wait()
	done.Store(true)
	wg.Wait()
	ac := NewAtomicConfig(lockConn(t, srv), "/cfg/atomic")
	snap, err := ac.Read(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if snap.Generation != writers*perWriter {
		t.Errorf("final generation %d, want %d (one per update)", snap.Generation, writers*perWriter)
	}
	gen, err := ac.Update(ctx, map[string][]byte{"k0": nil, "extra": []byte("x")})
	if err != nil {
		t.Fatal(err)
	}
	snap, err = ac.Read(ctx)
	if err != nil || snap.Generation != gen || len(snap.Values) != configKeys || string(snap.Values["extra"]) != "x" {
		t.Errorf("after delete+add: %+v, %v (gen %d)", snap, err, gen)
	}
	if _, ok := snap.Values["k0"]; ok {
		t.Error("k0 still present after delete")
	}
}
