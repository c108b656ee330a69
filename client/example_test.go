package client_test

import (
	"context"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"os"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/wire"
)

// startWarden starts an in-process server for the examples (a real
// program connects to an existing ensemble instead) and returns its
// address and a function that stops it.
func startWarden() (stop func(), addr string) {
	dir, err := os.MkdirTemp("", "warden-client-example-")
	if err != nil {
		log.Fatal(err)
	}
	cfg := server.DefaultConfig()
	cfg.DataDir = dir
	cfg.DataLogDir = dir
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv, err := server.Start(cfg, server.Options{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		log.Fatal(err)
	}
	return func() { srv.Close(); os.RemoveAll(dir) }, ln.Addr().String()
}

func Example() {
	stop, addr := startWarden()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	c, err := client.Connect(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	if _, err := c.Create(ctx, "/config", []byte("v1"), client.Persistent, client.OpenACL); err != nil {
		log.Fatal(err)
	}
	data, stat, err := c.Get(ctx, "/config")
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("%s version %d\n", data, stat.Version)
	if _, err := c.Set(ctx, "/config", []byte("v2"), stat.Version); err != nil {
		log.Fatal(err)
	}
	// Output: v1 version 0
}

func ExampleConn_GetW() {
	stop, addr := startWarden()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	c.Create(ctx, "/flag", []byte("off"), client.Persistent, client.OpenACL)
	_, _, changed, err := c.GetW(ctx, "/flag")
	if err != nil {
		log.Fatal(err)
	}
	c.Set(ctx, "/flag", []byte("on"), -1)
	ev := <-changed // one event, then the channel closes
	fmt.Println(ev.Type == wire.EventNodeDataChanged, ev.Path)
	// Output: true /flag
}

func ExampleConn_Multi() {
	stop, addr := startWarden()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	_, err = c.Multi(ctx,
		client.CreateOp("/jobs", nil, client.Persistent, client.OpenACL),
		client.CreateOp("/jobs/1", []byte("payload"), client.Persistent, client.OpenACL),
	)
	fmt.Println(err)
	// All or nothing: /jobs exists, so neither create happens.
	_, err = c.Multi(ctx,
		client.CreateOp("/jobs/2", nil, client.Persistent, client.OpenACL),
		client.CreateOp("/jobs", nil, client.Persistent, client.OpenACL),
	)
	_, ok, _ := c.Exists(ctx, "/jobs/2")
	fmt.Println(err, ok)
	// Output:
	// <nil>
	// zk: KeeperErrorCode = NodeExists false
}

func ExampleConn_AddWatch() {
	stop, addr := startWarden()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addr)
	if err != nil {
		log.Fatal(err)
	}
	defer c.Close()

	w, err := c.AddWatch(ctx, "/app", true) // /app and everything below
	if err != nil {
		log.Fatal(err)
	}
	c.Create(ctx, "/app", nil, client.Persistent, client.OpenACL)
	c.Create(ctx, "/app/a", nil, client.Persistent, client.OpenACL)
	for range 2 {
		ev := <-w.Events()
		fmt.Println(ev.Type, ev.Path)
	}
	w.Remove(ctx)
	// Output:
	// 1 /app
	// 1 /app/a
}

func ExampleConn_SessionEvents() {
	stop, addr := startWarden()
	defer stop()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := client.Connect(ctx, addr, client.WithSessionTimeout(10*time.Second))
	if err != nil {
		log.Fatal(err)
	}
	events := c.SessionEvents() // starts with the current state
	c.Close()
	for ev := range events {
		fmt.Println(ev.State)
	}
	// Output:
	// Connected
	// Closed
}
