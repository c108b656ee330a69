package bench

import (
	"context"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

func TestParseMembers(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"127.0.0.1:2181", []string{"127.0.0.1:2181"}},
		{"a:1, b:2 ,c:3", []string{"a:1", "b:2", "c:3"}},
		{"a,b:2/chroot/x", []string{"a:2181", "b:2"}},
		{"[::1]:5,[::1]", []string{"[::1]:5", "[::1]:2181"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := parseMembers(tt.in)
			if err != nil || !slices.Equal(got, tt.want) {
				t.Errorf("parseMembers(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
			}
		})
	}
	if _, err := parseMembers(" , /x"); err == nil {
		t.Error("parseMembers of no hosts: no error")
	}
}

// TestRotation: session j's k-th connection attempt goes to member
// (j+k) mod n, whatever address the client asked for.
func TestRotation(t *testing.T) {
	members := []string{"a:1", "b:1", "c:1"}
	e := &env{cfg: DefaultConfig(), members: members}
	tests := []struct {
		session int
		want    []string // its first four dials
	}{
		{0, []string{"a:1", "b:1", "c:1", "a:1"}},
		{1, []string{"b:1", "c:1", "a:1", "b:1"}},
		{2, []string{"c:1", "a:1", "b:1", "c:1"}},
		{3, []string{"a:1", "b:1", "c:1", "a:1"}},
	}
	var dialers []dialFunc
	var got [][]string
	for range tests {
		k := len(got)
		got = append(got, nil)
		dialers = append(dialers, e.sessionDialer(func(_ context.Context, _, addr string) (net.Conn, error) {
			got[k] = append(got[k], addr)
			return nil, nil
		}))
	}
	for _, tt := range tests {
		for range 4 {
			dialers[tt.session](context.Background(), "tcp", "ignored:9")
		}
		if !slices.Equal(got[tt.session], tt.want) {
			t.Errorf("session %d dialled %q, want %q", tt.session, got[tt.session], tt.want)
		}
	}

	t.Run("shuffle and single servers dial what the client asks", func(t *testing.T) {
		for _, e := range []*env{
			{cfg: Config{Spread: SpreadShuffle}, members: members},
			{cfg: DefaultConfig(), members: members[:1]},
		} {
			var asked string
			d := e.sessionDialer(func(_ context.Context, _, addr string) (net.Conn, error) { asked = addr; return nil, nil })
			d(context.Background(), "tcp", "x:9")
			if asked != "x:9" {
				t.Errorf("spread %q over %d members dialled %q, want x:9", e.cfg.Spread, len(e.members), asked)
			}
		}
	})
}

// TestSpreadRoundRobin: seven sessions over three servers land 3/2/2,
// in connection-string order, and the result says so.
func TestSpreadRoundRobin(t *testing.T) {
	var addrs []string
	for range 3 {
		s := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.MaxClientCnxns = 0 }))
		addrs = append(addrs, s.Addr().String())
	}
	cfg := testConfig(strings.Join(addrs, ","), "sweep")
	cfg.Clients = 7
	members, err := parseMembers(cfg.Servers)
	if err != nil {
		t.Fatal(err)
	}
	e := &env{cfg: cfg, clock: wallClock{}, res: &Result{}, members: members}
	t.Cleanup(e.closeAll)
	if _, err := e.loadConns(context.Background()); err != nil {
		t.Fatal(err)
	}
	for i, want := range []int64{3, 2, 2} {
		// mntr's own connection is one of the live ones.
		if got := mntr(t, addrs[i], "num_alive_connections") - 1; got != want {
			t.Errorf("server %d has %d sessions, want %d", i, got, want)
		}
	}

	t.Run("result", func(t *testing.T) {
		cfg := cfg
		cfg.Ops, cfg.ReadRatios, cfg.Clients = 30, []int{50}, 1 // the servers share no data: one session
		res, err := Run(context.Background(), cfg, nil)
		if err != nil {
			t.Fatal(err)
		}
		if res.Settings.ConnectServers != 3 || res.Settings.Spread != SpreadRoundRobin {
			t.Errorf("settings say %d servers, spread %q; want 3, %s", res.Settings.ConnectServers, res.Settings.Spread, SpreadRoundRobin)
		}
	})
}
