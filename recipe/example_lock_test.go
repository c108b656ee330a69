package recipe_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/recipe"
	"github.com/wardenzk/warden/server"
)

// startExampleLockServer starts an in-process Warden for the lock
// examples and returns its address and a stop function.
func startExampleLockServer() (string, func()) {
	dir, err := os.MkdirTemp("", "recipe-example")
	if err != nil {
		panic(err)
	}
	cfg := server.DefaultConfig()
	cfg.DataDir, cfg.DataLogDir = dir, dir
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	srv, err := server.Start(cfg, server.Options{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		panic(err)
	}
	return srv.Addr().String(), func() { srv.Close(); os.RemoveAll(dir) }
}

func ExampleLock() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	lock := recipe.NewLock(c, "/app/locks/config")
	lease, err := lock.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	// Critical section. Pass lease.Token to the guarded resource so it
	// can refuse a holder that lost the lock; stop if Lost fires.
	select {
	case <-lock.Lost():
		fmt.Println("lost the lock")
	default:
		fmt.Println("holding the lock, token > 0:", lease.Token > 0)
	}
	if err := lock.Release(ctx); err != nil {
		panic(err)
	}
	// Output: holding the lock, token > 0: true
}

func ExampleRWLock() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c1, _ := client.Connect(ctx, addr)
	defer c1.Close()
	c2, _ := client.Connect(ctx, addr)
	defer c2.Close()

	// Two readers in different sessions hold the read half together.
	r1 := recipe.NewRWLock(c1, "/app/rw").ReadLock()
	r2 := recipe.NewRWLock(c2, "/app/rw").ReadLock()
	if _, err := r1.Acquire(ctx); err != nil {
		panic(err)
	}
	if _, err := r2.Acquire(ctx); err != nil {
		panic(err)
	}
	parts, _ := r1.Participants(ctx)
	fmt.Println("readers:", len(parts))
	r1.Release(ctx)
	r2.Release(ctx)
	// Output: readers: 2
}

func ExampleRevoke() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c1, _ := client.Connect(ctx, addr)
	defer c1.Close()
	c2, _ := client.Connect(ctx, addr)
	defer c2.Close()

	holder := recipe.NewLock(c1, "/app/revocable", recipe.WithRevocable())
	lease, err := holder.Acquire(ctx)
	if err != nil {
		panic(err)
	}
	// Another process asks the holder to let go.
	if err := recipe.Revoke(ctx, c2, lease.Path); err != nil {
		panic(err)
	}
	<-holder.Revoked()
	fmt.Println("asked to release")
	holder.Release(ctx)
	// Output: asked to release
}

func ExampleSemaphore() {
	addr, stop := startExampleLockServer()
	defer stop()
	ctx := context.Background()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		panic(err)
	}
	defer c.Close()

	sem := recipe.NewSemaphore(c, "/app/workers", 3, nil)
	leases, err := sem.Acquire(ctx, 2)
	if err != nil {
		panic(err)
	}
	fmt.Println("leases:", len(leases))
	if err := sem.Return(ctx, leases...); err != nil {
		panic(err)
	}
	// Output: leases: 2
}
