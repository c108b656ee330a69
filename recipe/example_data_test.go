package recipe_test

import (
	"context"
	"fmt"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
)

// exampleConn starts a throwaway server and connects to it.
func exampleConn() (*client.Conn, func()) {
	addr, stop := startExampleLockServer()
	c, err := client.Connect(context.Background(), addr)
	if err != nil {
		panic(err)
	}
	return c, func() { c.Close(); stop() }
}

func ExampleQueue() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	q := recipe.NewQueue(c, "/app/jobs")
	for _, job := range []string{"build", "test", "ship"} {
		if _, err := q.Put(ctx, []byte(job)); err != nil {
			panic(err)
		}
	}
	for range 3 {
		job, err := q.Take(ctx) // blocks while the queue is empty
		if err != nil {
			panic(err)
		}
		fmt.Println(string(job))
	}
	// Output:
	// build
	// test
	// ship
}

func ExamplePriorityQueue() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	q := recipe.NewPriorityQueue(c, "/app/tasks")
	q.Put(ctx, []byte("routine"), 10)
	q.Put(ctx, []byte("urgent"), -5)
	q.Put(ctx, []byte("normal"), 0)
	for range 3 {
		task, _ := q.Take(ctx)
		fmt.Println(string(task))
	}
	// Output:
	// urgent
	// normal
	// routine
}

func ExampleGroup() {
	c, done := exampleConn()
	defer done()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()

	g := recipe.NewGroup(c, "/app/workers")
	w := g.Watch(ctx)
	fmt.Println(<-w.C()) // the group is empty
	if err := g.Join(ctx, "worker-1", []byte("10.0.0.1")); err != nil {
		panic(err)
	}
	fmt.Println(<-w.C())
	// Output:
	// []
	// [worker-1]
}

func ExampleDiscovery() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	d := recipe.NewDiscovery(c, "/services")
	for i, addr := range []string{"10.0.0.1", "10.0.0.2"} {
		inst := recipe.ServiceInstance{Name: "api", ID: fmt.Sprint("api-", i), Address: addr, Port: 8080}
		if err := d.Register(ctx, inst); err != nil {
			panic(err)
		}
	}
	p, err := d.Provider(ctx, "api", recipe.ConsistentHash(0))
	if err != nil {
		panic(err)
	}
	defer p.Close()
	a, _ := p.Pick("user-42")
	b, _ := p.Pick("user-42")
	fmt.Println(len(p.Instances()), "instances; same key, same instance:", a.ID == b.ID)
	// Output:
	// 2 instances; same key, same instance: true
}

func ExampleReadyConfig() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	cfg := recipe.NewReadyConfig(c, "/app/config")
	// One writer at a time: readers never see host and port from two updates.
	if err := cfg.Update(ctx, map[string][]byte{"host": []byte("db1"), "port": []byte("5432")}); err != nil {
		panic(err)
	}
	kv, err := cfg.Read(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Printf("%s:%s\n", kv["host"], kv["port"])
	// Output:
	// db1:5432
}

func ExampleAtomicConfig() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	cfg := recipe.NewAtomicConfig(c, "/app/atomic-config")
	gen, err := cfg.Update(ctx, map[string][]byte{"mode": []byte("blue")})
	if err != nil {
		panic(err)
	}
	snap, err := cfg.Read(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(gen, snap.Generation, string(snap.Values["mode"]))
	// Output:
	// 1 1 blue
}

func ExampleTransaction() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	tx, err := recipe.NewTransaction(ctx, c, "/app/tx/42", []string{"db", "cache"})
	if err != nil {
		panic(err)
	}
	for _, name := range []string{"db", "cache"} {
		site, err := recipe.JoinTransaction(ctx, c, "/app/tx/42", name)
		if err != nil {
			panic(err)
		}
		site.Vote(ctx, true)
	}
	d, err := tx.Decide(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println(d)
	// Output:
	// commit
}

func ExampleRendezvous() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	// One party alone: a meeting of one.
	names, err := recipe.NewRendezvous(c, "/app/meet", 1).Meet(ctx, "solo")
	if err != nil {
		panic(err)
	}
	fmt.Println(names)
	// Output:
	// [solo]
}

func ExampleIDGenerator() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	ids := recipe.NewIDGenerator(c, "/app/ids")
	a, _ := ids.Next(ctx)
	b, _ := ids.Next(ctx)
	fmt.Println(a, b)
	// Output:
	// 0 1
}

func ExampleTreeCache() {
	c, done := exampleConn()
	defer done()
	ctx := context.Background()

	tc, err := recipe.NewTreeCache(ctx, c, "/app/settings")
	if err != nil {
		panic(err)
	}
	defer tc.Close()
	events := tc.Listen()
	if _, err := c.Create(ctx, "/app", nil, client.Persistent, client.OpenACL); err != nil {
		panic(err)
	}
	if _, err := c.Create(ctx, "/app/settings", []byte("v1"), client.Persistent, client.OpenACL); err != nil {
		panic(err)
	}
	ev := <-events
	n, _ := tc.Get("/app/settings")
	fmt.Println(ev.Type, ev.Node.Path, string(n.Data))
	// Output:
	// added /app/settings v1
}
