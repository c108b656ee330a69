package admin

import (
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

func TestIsReadOnlyOnAMemberInReadOnlyMode(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3, servertest.WithMemberConfig(func(c *server.Config) { c.ReadOnlyModeEnabled = true }))
	f := e.Followers()[0]
	a := startAdmin(t, e.Member(f), nil)
	if m := run(t, a, "is_read_only", "is_read_only"); m["read_only"] != false {
		t.Fatalf("is_read_only on a serving member: %v", m["read_only"])
	}
	e.Net.Isolate(e.RaftID(f))
	e.WaitNotServing(f)
	e.Clock.Advance(2 * time.Second)
	// Commands that need a running server answer in read-only mode, as
	// ZooKeeper's AdminServer does with its read-only server.
	if m := run(t, a, "is_read_only", "is_read_only"); m["read_only"] != true {
		t.Fatalf("is_read_only in read-only mode: %v", m["read_only"])
	}
	if m := run(t, a, "srvr", "server_stats"); m["server_stats"] == nil {
		t.Fatalf("srvr in read-only mode: %v", m)
	}
}
