package client

import (
	"context"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/wardenzk/warden/server/servertest"
)

// The client benchmarks run against an in-process Warden, so they measure
// client and server together; go-zookeeper runs the same loads in the same
// process for a ratio. Speed is reported, never asserted.

const benchPayload = 1024

func benchServer(b *testing.B) (string, *Conn) {
	srv := servertest.Start(b)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Connect(ctx, srv.Addr().String())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { c.Close() })
	if _, err := c.Create(ctx, "/bench", make([]byte, benchPayload), Persistent, OpenACL); err != nil {
		b.Fatal(err)
	}
	return srv.Addr().String(), c
}

// BenchmarkGetSerial is one request in flight at a time.
func BenchmarkGetSerial(b *testing.B) {
	_, c := benchServer(b)
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, _, err := c.Get(ctx, "/bench"); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkGetPipelined has 64 goroutines per CPU sharing one Conn, so
// many requests are in flight on one connection.
func BenchmarkGetPipelined(b *testing.B) {
	_, c := benchServer(b)
	ctx := context.Background()
	b.SetParallelism(64)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := c.Get(ctx, "/bench"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkSetPipelined is the same with writes (1 KiB each).
func BenchmarkSetPipelined(b *testing.B) {
	_, c := benchServer(b)
	ctx := context.Background()
	data := make([]byte, benchPayload)
	b.SetParallelism(64)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, err := c.Set(ctx, "/bench", data, -1); err != nil {
				b.Error(err)
				return
			}
		}
	})
}

// BenchmarkGoZKGetPipelined is BenchmarkGetPipelined with go-zookeeper.
func BenchmarkGoZKGetPipelined(b *testing.B) {
	addr, _ := benchServer(b)
	zc, _, err := zk.Connect([]string{addr}, 30*time.Second, zk.WithLogInfo(false))
	if err != nil {
		b.Fatal(err)
	}
	defer zc.Close()
	if _, _, err := zc.Get("/bench"); err != nil { // waits for the session
		b.Fatal(err)
	}
	b.SetParallelism(64)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if _, _, err := zc.Get("/bench"); err != nil {
				b.Error(err)
				return
			}
		}
	})
}
