package recipe_test

import (
	"context"
	"fmt"
	"sync"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

func ExampleLeaderLatch() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	latch := recipe.NewLeaderLatch(c, "/app/leader", "worker-1")
	if err := latch.Start(ctx); err != nil {
		panic(err)
	}
	term, err := latch.Await(ctx)
	if err != nil {
		panic(err)
	}
	// Lead until term.Lost closes; pass term.Token to the resources the
	// leader writes so they can refuse a deposed leader.
	fmt.Println("leading:", latch.IsLeader(), "token > 0:", term.Token > 0)
	if err := latch.Close(ctx); err != nil { // hands over to the next participant
		panic(err)
	}
	<-term.Lost
	fmt.Println("leading after Close:", latch.IsLeader())
	// Output:
	// leading: true token > 0: true
	// leading after Close: false
}

func ExampleLeaderSelector() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	done := make(chan struct{})
	sel := recipe.NewLeaderSelector(c, "/app/scheduler", "node-a", func(ctx context.Context, term recipe.Leadership) error {
		// Runs only while leading; ctx ends when leadership is lost.
		fmt.Println("scheduling as leader")
		close(done)
		return nil // returning gives leadership up
	})
	if err := sel.Start(); err != nil {
		panic(err)
	}
	<-done
	if err := sel.Close(ctx); err != nil {
		panic(err)
	}
	// Output: scheduling as leader
}

func ExampleDoubleBarrier() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()

	const workers = 3
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			c, err := client.Connect(ctx, addr)
			if err != nil {
				panic(err)
			}
			defer c.Close()
			b := recipe.NewDoubleBarrier(c, "/app/jobs/42/barrier", workers)
			if err := b.Enter(ctx); err != nil { // all start together
				panic(err)
			}
			// ... the computation ...
			if err := b.Leave(ctx); err != nil { // all finish together
				panic(err)
			}
		}()
	}
	wg.Wait()
	fmt.Println("all workers entered and left")
	// Output: all workers entered and left
}

func ExampleBarrier() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	gate := recipe.NewBarrier(c, "/app/deploy/gate")
	if err := gate.Set(ctx); err != nil {
		panic(err)
	}
	released := make(chan error)
	go func() { released <- gate.Wait(ctx) }() // blocks while the gate is set
	if err := gate.Remove(ctx); err != nil {
		panic(err)
	}
	fmt.Println("released:", <-released == nil)
	// Output: released: true
}

func ExampleCounter() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	hits := recipe.NewCounter(c, "/app/stats/hits")
	if _, err := hits.Add(ctx, 10); err != nil {
		panic(err)
	}
	n, err := hits.Add(ctx, -3)
	if err != nil {
		panic(err)
	}
	fmt.Println(n)
	// Output: 7
}

func ExampleSharedCount() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	sc := recipe.NewSharedCount(c, "/app/shards", 4) // 4 if the node is new
	if err := sc.Start(ctx); err != nil {
		panic(err)
	}
	defer sc.Close()
	for {
		cur := sc.Count()
		ok, err := sc.TrySetCount(ctx, cur.Count*2, cur.Version)
		if err != nil {
			panic(err)
		}
		if ok {
			break
		}
		// Someone else changed it first: Count is fresh again; retry.
	}
	fmt.Println(sc.Count().Count)
	// Output: 8
}
