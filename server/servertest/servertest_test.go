package servertest

import (
	"github.com/wardenzk/warden/server"
	"net"
	"testing"
	"time"
)

func TestStartServesAndAdvancesClock(t *testing.T) {
	srv := Start(t, WithConfig(func(c *server.Config) { c.TickTime = 1000 }))
	nc, err := net.DialTimeout("tcp", srv.Addr().String(), 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	nc.SetDeadline(time.Now().Add(5 * time.Second))
	nc.Write([]byte("ruok"))
	b := make([]byte, 4)
	if n, _ := nc.Read(b); string(b[:n]) != "imok" {
		t.Fatalf("ruok = %q", b[:n])
	}
	nc.Close()
	before := srv.Clock.Now()
	if got := srv.Clock.Advance(time.Hour); !got.Equal(before.Add(time.Hour)) || !srv.Clock.Now().Equal(got) {
		t.Fatalf("Advance = %v, want %v", got, before.Add(time.Hour))
	}
}
