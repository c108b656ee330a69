//go:build compat

package compat

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"path"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

// goRecipesDeadline bounds one server's whole recipe scenario.
const goRecipesDeadline = 75 * time.Second

// goRecipe is one recipe scenario: it runs against s with conns made by conn (one per
// simulated process) and prints its outcome (counts, orders) to tr.
type goRecipe struct {
	name string
	run  func(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn)
}

// TestGoRecipes runs every recipe of package recipe against each server, with one
// client.Conn per simulated process, and asserts the real outcomes: exact counts under
// Lock, Counter and SharedCount, never more than the allowed holders of a Semaphore or
// RWLock, one leader at a time, every queue item taken exactly once, caches converging.
// The outcome transcripts of both servers must agree.
func TestGoRecipes(t *testing.T) {
	differential(t, nil, func(t *testing.T, s *Server) string {
		ctx, cancel := context.WithTimeout(context.Background(), goRecipesDeadline)
		defer cancel()
		tr := &transcript{}
		for _, r := range []goRecipe{
			{"lock", recipeLock},
			{"lock-expiry", recipeLockExpiry},
			{"rwlock", recipeRWLock},
			{"semaphore", recipeSemaphore},
			{"leaderlatch", recipeLeaderLatch},
			{"leaderselector", recipeLeaderSelector},
			{"barrier", recipeBarrier},
			{"doublebarrier", recipeDoubleBarrier},
			{"sharedcount", recipeSharedCount},
			{"counter", recipeCounter},
			{"queue", recipeQueue},
			{"priorityqueue", recipePriorityQueue},
			{"group", recipeGroup},
			{"discovery", recipeDiscovery},
			{"config", recipeConfig},
			{"rendezvous", recipeRendezvous},
			{"twophase", recipeTwoPhase},
			{"idgen", recipeIDGen},
			{"caches", recipeCaches},
		} {
			tr.printf("== %s", r.name)
			t.Run(r.name, func(t *testing.T) {
				conn := func(opts ...client.Option) *client.Conn { return goConn(t, ctx, s.Addr, opts...) }
				r.run(t, ctx, tr, conn)
			})
		}
		return tr.String()
	})
}

// parallel runs f(i) for i in [0, n) in goroutines and returns their errors.
func parallel(n int, f func(i int) error) []error {
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = f(i)
		}()
	}
	wg.Wait()
	return errs
}

func checkErrs(t *testing.T, errs []error) {
	t.Helper()
	for i, err := range errs {
		if err != nil {
			t.Errorf("process %d: %v", i, err)
		}
	}
}

// pending reports whether ch has not delivered yet.
func pending[T any](ch <-chan T) bool {
	select {
	case <-ch:
		return false
	default:
		return true
	}
}

// await receives from ch, bounded by eventDeadline.
func await[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	v, _ := awaitRecv(t, ch, what)
	return v
}

// awaitRecv receives from ch, bounded by eventDeadline; ok is false when ch is closed.
func awaitRecv[T any](t *testing.T, ch <-chan T, what string) (T, bool) {
	t.Helper()
	select {
	case v, ok := <-ch:
		return v, ok
	case <-time.After(eventDeadline):
		t.Fatalf("timed out waiting for %s", what)
	}
	var zero T
	return zero, false
}

func recipeLock(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const procs, k = 3, 5
	admin := conn()
	mustCreatePath(t, ctx, admin, "/lock-counter", "0")
	var tokens sync.Map
	checkErrs(t, parallel(procs, func(i int) error {
		c := conn()
		l := recipe.NewLock(c, "/locks/l")
		for range k {
			lease, err := l.Acquire(ctx)
			if err != nil {
				return err
			}
			if _, dup := tokens.LoadOrStore(lease.Token, i); dup {
				return fmt.Errorf("fencing token %d granted twice", lease.Token)
			}
			err = incrementAsHolder(ctx, c, "/lock-counter", "/lock-holder")
			if rerr := l.Release(ctx); err == nil {
				err = rerr
			}
			if err != nil {
				return err
			}
		}
		return nil
	}))
	data, _, err := admin.Get(ctx, "/lock-counter")
	tr.printf("counter=%s err=%s (want %d)", data, code(err), procs*k)
	if string(data) != strconv.Itoa(procs*k) {
		t.Errorf("counter = %s, want %d", data, procs*k)
	}
	tr.printf("lock nodes left=%d", len(sortedChildren(t, ctx, admin, "/locks/l")))
}

// recipeLockExpiry cuts the lock holder off the network until its session expires:
// the waiter must get the lock (with a larger fencing token) and the holder must be
// told through Lost.
func recipeLockExpiry(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	d := &severableDialer{}
	hc := conn(client.WithSessionTimeout(4*time.Second), client.WithDialer(d.dial))
	holder := recipe.NewLock(hc, "/locks/expiry")
	held, err := holder.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	waiter := recipe.NewLock(conn(), "/locks/expiry")
	got := make(chan recipe.Lease, 1)
	errs := make(chan error, 1)
	go func() {
		lease, err := waiter.Acquire(ctx)
		if err != nil {
			errs <- err
			return
		}
		got <- lease
	}()
	waitChildren(t, ctx, conn(), "/locks/expiry", 2)
	d.cut()
	select {
	case lease := <-got:
		tr.printf("waiter got the lock after the holder expired; token grows=%v", lease.Token > held.Token)
		if lease.Token <= held.Token {
			t.Errorf("token %d after %d", lease.Token, held.Token)
		}
	case err := <-errs:
		t.Fatal(err)
	case <-time.After(eventDeadline):
		t.Fatal("the waiter never got the lock of an expired holder")
	}
	await(t, holder.Lost(), "holder's Lost")
	tr.printf("holder told by Lost")
	if err := waiter.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func recipeRWLock(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const p = "/rw"
	admin := conn()
	w1 := recipe.NewRWLock(conn(), p).WriteLock()
	if _, err := w1.Acquire(ctx); err != nil {
		t.Fatal(err)
	}
	readers := []*recipe.Lock{recipe.NewRWLock(conn(), p).ReadLock(), recipe.NewRWLock(conn(), p).ReadLock()}
	got := make(chan error, len(readers))
	for _, r := range readers {
		go func() {
			_, err := r.Acquire(ctx)
			got <- err
		}()
	}
	waitChildren(t, ctx, admin, p, 3)
	if !pending(got) {
		t.Fatal("a reader got the lock while the writer holds it")
	}
	tr.printf("readers wait for the writer")
	if err := w1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for range readers {
		if err := await(t, got, "reader"); err != nil {
			t.Fatal(err)
		}
	}
	tr.printf("both readers hold together")
	w2 := recipe.NewRWLock(conn(), p).WriteLock()
	wgot := make(chan error, 1)
	go func() {
		_, err := w2.Acquire(ctx)
		wgot <- err
	}()
	waitChildren(t, ctx, admin, p, 3)
	if err := readers[0].Release(ctx); err != nil {
		t.Fatal(err)
	}
	waitChildren(t, ctx, admin, p, 2)
	if !pending(wgot) {
		t.Fatal("the writer got the lock while a reader holds it")
	}
	if err := readers[1].Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := await(t, wgot, "writer"); err != nil {
		t.Fatal(err)
	}
	tr.printf("writer waits for the readers")
	if err := w2.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func recipeSemaphore(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const procs, rounds, max = 4, 3, 2
	var holders, peak atomic.Int32
	checkErrs(t, parallel(procs, func(i int) error {
		c := conn()
		s := recipe.NewSemaphore(c, "/sem", max, []byte(fmt.Sprint(i)))
		for range rounds {
			leases, err := s.Acquire(ctx, 1)
			if err != nil {
				return err
			}
			n := holders.Add(1)
			for {
				old := peak.Load()
				if n <= old || peak.CompareAndSwap(old, n) {
					break
				}
			}
			// The server agrees: no more lease nodes than max.
			nodes, err := s.Participants(ctx)
			if err == nil && len(nodes) > max {
				err = fmt.Errorf("%d lease nodes: %v", len(nodes), nodes)
			}
			holders.Add(-1)
			if rerr := s.Return(ctx, leases...); err == nil {
				err = rerr
			}
			if err != nil {
				return err
			}
		}
		return nil
	}))
	if p := peak.Load(); p > max || p < 1 {
		t.Errorf("peak holders = %d, want 1..%d", p, max)
	}
	tr.printf("peak holders <= %d: %v", max, peak.Load() <= max)
	// Two leases at once from one process fill the semaphore: a third waits.
	a := recipe.NewSemaphore(conn(), "/sem", max, nil)
	two, err := a.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	b := recipe.NewSemaphore(conn(), "/sem", max, nil)
	got := make(chan error, 1)
	go func() {
		leases, err := b.Acquire(ctx, 1)
		if err == nil {
			err = b.Return(ctx, leases...)
		}
		got <- err
	}()
	if !pending(got) {
		t.Fatal("a third lease was granted while two are held")
	}
	if err := a.Return(ctx, two...); err != nil {
		t.Fatal(err)
	}
	if err := await(t, got, "third lease"); err != nil {
		t.Fatal(err)
	}
	tr.printf("third lease waits for a returned one")
}

func recipeLeaderLatch(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const n = 4
	var latches []*recipe.LeaderLatch
	for i := range n {
		l := recipe.NewLeaderLatch(conn(), "/election/latch", fmt.Sprintf("p%d", i))
		if err := l.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { l.Close(context.Background()) })
		latches = append(latches, l)
	}
	var lastToken int64
	for round, l := range latches {
		lead, err := l.Await(ctx)
		if err != nil {
			t.Fatalf("round %d: %v", round, err)
		}
		var leaders []string
		for _, o := range latches[round:] {
			if o.IsLeader() {
				leaders = append(leaders, o.ID())
			}
		}
		ps, err := l.Participants(ctx)
		if err != nil {
			t.Fatal(err)
		}
		var queue []string
		for _, p := range ps {
			queue = append(queue, p.ID)
		}
		tr.printf("round %d: leaders=%v queue=%v token-grows=%v", round, leaders, queue, lead.Token > lastToken)
		if len(leaders) != 1 || leaders[0] != l.ID() || lead.Token <= lastToken {
			t.Errorf("round %d: leaders %v, want [%s]; token %d after %d", round, leaders, l.ID(), lead.Token, lastToken)
		}
		lastToken = lead.Token
		if err := l.Close(ctx); err != nil {
			t.Fatal(err)
		}
		await(t, lead.Lost, "term end on Close")
	}
}

func recipeLeaderSelector(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const n, terms = 3, 7
	const electionPath = "/election/selector"
	var active, overlaps atomic.Int32
	led := make(chan string, terms)
	// The first term lasts until every candidate is queued, so that the queue is
	// fair from then on: the first n terms go to n different candidates.
	gate := make(chan struct{})
	var sels []*recipe.LeaderSelector
	for i := range n {
		c := conn()
		id := fmt.Sprintf("s%d", i)
		sel := recipe.NewLeaderSelector(c, electionPath, id, func(lctx context.Context, term recipe.Leadership) error {
			if active.Add(1) != 1 {
				overlaps.Add(1)
			}
			defer active.Add(-1)
			select {
			case <-gate:
			case <-lctx.Done():
				return lctx.Err()
			}
			// Some work on the server while leading.
			_, err := c.Create(lctx, "/selector-work-", []byte(id), client.PersistentSequential, client.OpenACL)
			select {
			case led <- id:
			case <-lctx.Done():
			}
			return err
		}, recipe.WithAutoRequeue())
		sels = append(sels, sel)
		t.Cleanup(func() { sel.Close(context.Background()) })
	}
	for _, s := range sels {
		if err := s.Start(); err != nil {
			t.Fatal(err)
		}
	}
	waitChildren(t, ctx, conn(), electionPath, n)
	close(gate)
	var order []string
	for range terms {
		order = append(order, await(t, led, "a term"))
	}
	for _, s := range sels {
		if err := s.Close(ctx); err != nil {
			t.Fatal(err)
		}
	}
	first := slices.Clone(order[:n])
	slices.Sort(first)
	distinct := len(slices.Compact(first)) == n
	tr.printf("terms=%d first %d terms by distinct candidates=%v overlaps=%d", len(order), n, distinct, overlaps.Load())
	if overlaps.Load() != 0 || !distinct {
		t.Errorf("terms %v: %d overlapped another; first %d by distinct candidates: %v", order, overlaps.Load(), n, distinct)
	}
}

func recipeBarrier(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const n = 3
	b := recipe.NewBarrier(conn(), "/barriers/b")
	if err := b.Set(ctx); err != nil {
		t.Fatal(err)
	}
	released := make(chan error, n)
	for range n {
		w := recipe.NewBarrier(conn(), "/barriers/b")
		go func() { released <- w.Wait(ctx) }()
	}
	if !pending(released) {
		t.Fatal("a waiter passed a set barrier")
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	for range n {
		if err := await(t, released, "barrier waiter"); err != nil {
			t.Fatal(err)
		}
	}
	tr.printf("%d waiters released by Remove", n)
}

func recipeDoubleBarrier(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const n = 3
	var entered, left atomic.Int32
	enteredCh := make(chan error, n)
	leftCh := make(chan error, n)
	var mu sync.Mutex
	var enteredAtLeave []int32
	member := func() {
		b := recipe.NewDoubleBarrier(conn(), "/barriers/double", n)
		go func() {
			if err := b.Enter(ctx); err != nil {
				enteredCh <- err
				return
			}
			entered.Add(1)
			enteredCh <- nil
			err := b.Leave(ctx)
			mu.Lock()
			enteredAtLeave = append(enteredAtLeave, entered.Load())
			mu.Unlock()
			left.Add(1)
			leftCh <- err
		}()
	}
	for range n - 1 {
		member()
	}
	waitChildren(t, ctx, conn(), "/barriers/double", n-1)
	if !pending(enteredCh) {
		t.Fatal("a member entered before the quorum arrived")
	}
	member()
	for range n {
		if err := await(t, enteredCh, "enter"); err != nil {
			t.Fatal(err)
		}
	}
	for range n {
		if err := await(t, leftCh, "leave"); err != nil {
			t.Fatal(err)
		}
	}
	for _, e := range enteredAtLeave {
		if e != n {
			t.Errorf("a member left when only %d had entered", e)
		}
	}
	kids, _, err := conn().Children(ctx, "/barriers/double")
	tr.printf("entered=%d left=%d nodes-left=%d %s", entered.Load(), left.Load(), len(kids), code(err))
}

func recipeSharedCount(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const procs, k = 3, 5
	var counts []*recipe.SharedCount
	for range procs {
		sc := recipe.NewSharedCount(conn(), "/shared/count", 0)
		if err := sc.Start(ctx); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(sc.Close)
		counts = append(counts, sc)
	}
	checkErrs(t, parallel(procs, func(i int) error {
		sc := counts[i]
		for range k {
			for {
				v := sc.Count()
				ok, err := sc.TrySetCount(ctx, v.Count+1, v.Version)
				if err != nil {
					return err
				}
				if ok {
					break
				}
			}
		}
		return nil
	}))
	// Every process converges on the final value.
	for i, sc := range counts {
		for sc.Count().Count != procs*k {
			v := await(t, sc.Changes(), fmt.Sprintf("count %d's change", i))
			if v.Count > procs*k {
				t.Fatalf("count %d saw %d > %d", i, v.Count, procs*k)
			}
		}
	}
	tr.printf("shared count=%d version=%d in every process", counts[0].Count().Count, counts[0].Count().Version)
}

func recipeCounter(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const procs, k = 3, 10
	checkErrs(t, parallel(procs, func(i int) error {
		c := recipe.NewCounter(conn(), "/counters/c")
		for range k {
			if _, err := c.Add(ctx, 1); err != nil {
				return err
			}
		}
		return nil
	}))
	v, err := recipe.NewCounter(conn(), "/counters/c").Get(ctx)
	tr.printf("counter=%d %s (want %d)", v, code(err), procs*k)
	if v != procs*k {
		t.Errorf("counter = %d, want %d", v, procs*k)
	}
}

func recipeQueue(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const items, consumers = 24, 3
	producer := recipe.NewQueue(conn(), "/queues/q")
	var mu sync.Mutex
	taken := map[string]int{}
	cctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, consumers)
	for range consumers {
		q := recipe.NewQueue(conn(), "/queues/q")
		go func() {
			for {
				item, err := q.Take(cctx)
				if cctx.Err() != nil {
					errs <- nil
					return
				}
				if err != nil {
					errs <- err
					return
				}
				mu.Lock()
				taken[string(item)]++
				if len(taken) == items {
					stop()
				}
				mu.Unlock()
			}
		}()
	}
	for i := range items {
		if i%6 == 5 {
			if _, err := producer.PutMulti(ctx, [][]byte{[]byte(fmt.Sprintf("item-%02d", i))}); err != nil {
				t.Fatal(err)
			}
			continue
		}
		if _, err := producer.Put(ctx, []byte(fmt.Sprintf("item-%02d", i))); err != nil {
			t.Fatal(err)
		}
	}
	for range consumers {
		select {
		case err := <-errs:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(eventDeadline):
			t.Fatalf("consumers did not drain the queue of %d items", items)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	twice := 0
	for _, n := range taken {
		if n != 1 {
			twice++
		}
	}
	n, err := producer.Len(ctx)
	tr.printf("taken=%d taken-twice=%d left=%d %s", len(taken), twice, n, code(err))
	if len(taken) != items || twice != 0 {
		t.Errorf("took %d distinct items (%d more than once), want %d exactly once", len(taken), twice, items)
	}
}

func recipePriorityQueue(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	q := recipe.NewPriorityQueue(conn(), "/queues/pq")
	for i, prio := range []int32{5, 1, 3, 1, -2, 3} {
		if _, err := q.Put(ctx, []byte(fmt.Sprintf("p%d-%d", prio, i)), prio); err != nil {
			t.Fatal(err)
		}
	}
	consumer := recipe.NewPriorityQueue(conn(), "/queues/pq")
	var got []string
	for range 6 {
		item, err := consumer.Take(ctx)
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, string(item))
	}
	tr.printf("priority order %v", got)
	if want := []string{"p-2-4", "p1-1", "p1-3", "p3-2", "p3-5", "p5-0"}; !slices.Equal(got, want) {
		t.Errorf("order %v, want %v", got, want)
	}
}

func recipeGroup(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	observer := recipe.NewGroup(conn(), "/groups/g")
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	w := observer.Watch(wctx)
	waitList := func(want ...string) {
		t.Helper()
		for {
			got, ok := awaitRecv(t, w.C(), fmt.Sprintf("members %v", want))
			if !ok {
				t.Fatalf("membership watch ended (%v) before %v", w.Err(), want)
			}
			if slices.Equal(got, want) {
				tr.printf("members %v", got)
				return
			}
		}
	}
	waitList()
	var conns []*client.Conn
	for i := range 3 {
		c := conn()
		conns = append(conns, c)
		if err := recipe.NewGroup(c, "/groups/g").Join(ctx, fmt.Sprintf("m%d", i), []byte(fmt.Sprint(i))); err != nil {
			t.Fatal(err)
		}
	}
	waitList("m0", "m1", "m2")
	err := recipe.NewGroup(conn(), "/groups/g").Join(ctx, "m1", nil)
	tr.printf("join a taken name -> member-exists=%v", errors.Is(err, recipe.ErrMemberExists))
	data, err := observer.MemberData(ctx, "m2")
	tr.printf("m2 data %q %s", data, code(err))
	conns[1].Close() // a process ends: its membership goes with its session
	waitList("m0", "m2")
	if err := recipe.NewGroup(conns[0], "/groups/g").Leave(ctx, "m0"); err != nil {
		t.Fatal(err)
	}
	waitList("m2")
}

func recipeDiscovery(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	var conns []*client.Conn
	for i := range 3 {
		c := conn()
		conns = append(conns, c)
		err := recipe.NewDiscovery(c, "/services").Register(ctx, recipe.ServiceInstance{
			Name: "api", ID: fmt.Sprintf("i%d", i), Address: "10.0.0.1", Port: 8000 + i,
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	p, err := recipe.NewDiscovery(conn(), "/services").Provider(ctx, "api", recipe.RoundRobin())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	var picks []string
	for range 6 {
		inst, err := p.Pick("")
		if err != nil {
			t.Fatal(err)
		}
		picks = append(picks, inst.ID)
	}
	slices.Sort(picks)
	tr.printf("instances=%v picks=%v", instanceIDs(p.Instances()), picks)
	conns[0].Close()
	if err := recipe.NewDiscovery(conns[2], "/services").Unregister(ctx, "api", "i2"); err != nil {
		t.Fatal(err)
	}
	for len(p.Instances()) != 1 {
		await(t, p.Changed(), "provider update")
	}
	inst, err := p.Pick("any")
	tr.printf("after close and unregister: instances=%v pick=%s %s", instanceIDs(p.Instances()), inst.ID, code(err))
	if inst.ID != "i1" || inst.Port != 8001 {
		t.Errorf("picked %+v, want i1:8001", inst)
	}
}

func instanceIDs(insts []recipe.ServiceInstance) []string {
	var ids []string
	for _, i := range insts {
		ids = append(ids, i.ID)
	}
	return ids
}

func recipeConfig(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const gens = 6
	keys := []string{"a", "b", "c"}
	set := func(g int) map[string][]byte {
		m := map[string][]byte{}
		for _, k := range keys {
			m[k] = []byte(strconv.Itoa(g))
		}
		return m
	}
	consistent := func(m map[string][]byte) error {
		if len(m) != len(keys) {
			return fmt.Errorf("%d keys: %q", len(m), m)
		}
		for _, k := range keys {
			if string(m[k]) != string(m[keys[0]]) {
				return fmt.Errorf("torn read: %q", m)
			}
		}
		return nil
	}

	// ReadyConfig: one writer, a reader reading all the time.
	rc := recipe.NewReadyConfig(conn(), "/config/ready")
	if err := rc.Update(ctx, set(0)); err != nil {
		t.Fatal(err)
	}
	reader := recipe.NewReadyConfig(conn(), "/config/ready")
	rctx, stop := context.WithCancel(ctx)
	reads := make(chan error, 1)
	go func() {
		n := 0
		for rctx.Err() == nil {
			m, err := reader.Read(rctx)
			if rctx.Err() != nil {
				break
			}
			if err == nil {
				err = consistent(m)
			}
			if err != nil {
				reads <- err
				return
			}
			n++
		}
		reads <- nil
	}()
	for g := 1; g <= gens; g++ {
		if err := rc.Update(ctx, set(g)); err != nil {
			t.Fatal(err)
		}
	}
	stop()
	if err := await(t, reads, "reader"); err != nil {
		t.Error(err)
	}
	m, err := reader.Read(ctx)
	tr.printf("ready config final %q %s", m["a"], code(err))

	// AtomicConfig: two writers at once; every snapshot is one generation.
	checkErrs(t, parallel(2, func(i int) error {
		ac := recipe.NewAtomicConfig(conn(), "/config/atomic")
		for g := range gens {
			if _, err := ac.Update(ctx, set(i*100+g)); err != nil {
				return err
			}
			snap, err := ac.Read(ctx)
			if err != nil {
				return err
			}
			if err := consistent(snap.Values); err != nil {
				return err
			}
		}
		return nil
	}))
	snap, err := recipe.NewAtomicConfig(conn(), "/config/atomic").Read(ctx)
	tr.printf("atomic config generation=%d consistent=%v %s", snap.Generation, consistent(snap.Values) == nil, code(err))
	if snap.Generation != 2*gens {
		t.Errorf("generation %d, want %d", snap.Generation, 2*gens)
	}
}

func recipeRendezvous(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const n = 3
	met := make([][]string, n)
	checkErrs(t, parallel(n, func(i int) error {
		var err error
		met[i], err = recipe.NewRendezvous(conn(), "/meet", n).Meet(ctx, fmt.Sprintf("party%d", i))
		return err
	}))
	for i := range met {
		slices.Sort(met[i])
		if !slices.Equal(met[i], met[0]) || len(met[i]) != n {
			t.Errorf("party %d met %v, party 0 met %v", i, met[i], met[0])
		}
	}
	tr.printf("met %v", met[0])
}

func recipeTwoPhase(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	for _, tc := range []struct {
		name  string
		votes []bool
	}{
		{"all-commit", []bool{true, true, true}},
		{"one-abort", []bool{true, false, true}},
	} {
		sites := []string{"s0", "s1", "s2"}
		txPath := "/tx/" + tc.name
		tx, err := recipe.NewTransaction(ctx, conn(), txPath, sites)
		if err != nil {
			t.Fatal(err)
		}
		outcomes := make([]recipe.Decision, len(sites))
		errs := make(chan error, len(sites))
		for i, site := range sites {
			c := conn()
			go func() {
				s, err := recipe.JoinTransaction(ctx, c, txPath, site)
				if err == nil {
					err = s.Vote(ctx, tc.votes[i])
				}
				if err == nil {
					outcomes[i], err = s.Outcome(ctx)
				}
				errs <- err
			}()
		}
		d, err := tx.Decide(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range sites {
			if err := await(t, errs, "site outcome"); err != nil {
				t.Fatal(err)
			}
		}
		tr.printf("%s: decided %v, sites saw %v", tc.name, d, outcomes)
		want := recipe.TxCommit
		if slices.Contains(tc.votes, false) {
			want = recipe.TxAbort
		}
		for i, o := range outcomes {
			if o != want || d != want {
				t.Errorf("%s: site %d saw %v, coordinator %v; want %v", tc.name, i, o, d, want)
			}
		}
	}
}

func recipeIDGen(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	const procs, k = 3, 10
	ids := make([][]int64, procs)
	checkErrs(t, parallel(procs, func(i int) error {
		g := recipe.NewIDGenerator(conn(), "/ids")
		for range k {
			id, err := g.Next(ctx)
			if err != nil {
				return err
			}
			if n := len(ids[i]); n > 0 && id <= ids[i][n-1] {
				return fmt.Errorf("id %d after %d", id, ids[i][n-1])
			}
			ids[i] = append(ids[i], id)
		}
		return nil
	}))
	all := slices.Concat(ids...)
	slices.Sort(all)
	all = slices.Compact(all)
	tr.printf("ids unique=%d of %d, range %v", len(all), procs*k, all[0] == 0 && all[len(all)-1] == procs*k-1)
	if len(all) != procs*k {
		t.Errorf("%d unique ids, want %d", len(all), procs*k)
	}
}

func recipeCaches(t *testing.T, ctx context.Context, tr *transcript, conn func(...client.Option) *client.Conn) {
	writer := conn()
	cc := conn()
	tc, err := recipe.NewTreeCache(ctx, cc, "/tree")
	if err != nil {
		t.Fatal(err)
	}
	defer tc.Close()
	events := tc.Listen()
	nc, err := recipe.NewNodeCache(ctx, conn(), "/tree/a")
	if err != nil {
		t.Fatal(err)
	}
	defer nc.Close()
	nodeEvents := nc.Listen()

	rng := rand.New(rand.NewSource(7))
	mustCreatePath(t, ctx, writer, "/tree", "root")
	live := []string{"/tree"}
	for i := range 40 {
		p := live[rng.Intn(len(live))]
		switch op := rng.Intn(3); {
		case op == 0 || len(live) < 4:
			child := path.Join(p, string(rune('a'+rng.Intn(4))))
			if _, err := writer.Create(ctx, child, []byte(fmt.Sprint(i)), client.Persistent, client.OpenACL); err == nil {
				live = append(live, child)
			} else if !errors.Is(err, client.ErrNodeExists) {
				t.Fatal(err)
			}
		case op == 1:
			if _, err := writer.Set(ctx, p, []byte(fmt.Sprint(i)), -1); err != nil {
				t.Fatal(err)
			}
		default:
			if p == "/tree" {
				continue
			}
			if err := writer.Delete(ctx, p, -1); err == nil {
				live = slices.DeleteFunc(live, func(q string) bool { return q == p })
			} else if !errors.Is(err, client.ErrNotEmpty) {
				t.Fatal(err)
			}
		}
	}
	if _, err := writer.Create(ctx, "/tree/a", nil, client.Persistent, client.OpenACL); err != nil && !errors.Is(err, client.ErrNodeExists) {
		t.Fatal(err)
	}
	if _, err := writer.Set(ctx, "/tree/a", []byte("final"), -1); err != nil {
		t.Fatal(err)
	}

	want := map[string]string{}
	collectTree(t, ctx, writer, "/tree", want)
	for {
		diff := cacheDiff(tc.Snapshot(), want)
		if diff == "" {
			break
		}
		await(t, events, "tree cache event (differs at "+diff+")")
		if tc.Err() != nil {
			t.Fatalf("tree cache stopped: %v (%s)", tc.Err(), diff)
		}
	}
	tr.printf("tree cache converged on %d nodes", len(want))
	for {
		n, ok := nc.Get()
		if ok && string(n.Data) == "final" {
			break
		}
		await(t, nodeEvents, "node cache event")
	}
	tr.printf("node cache converged")
}

func collectTree(t *testing.T, ctx context.Context, c *client.Conn, p string, out map[string]string) {
	t.Helper()
	data, _, err := c.Get(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	out[p] = string(data)
	for _, k := range sortedChildren(t, ctx, c, p) {
		collectTree(t, ctx, c, path.Join(p, k), out)
	}
}

func cacheDiff(got map[string]recipe.CachedNode, want map[string]string) string {
	var d []string
	for p, w := range want {
		if g, ok := got[p]; !ok || string(g.Data) != w {
			d = append(d, p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			d = append(d, "+"+p)
		}
	}
	slices.Sort(d)
	return strings.Join(d, " ")
}
