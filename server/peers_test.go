package server

import (
	"testing"

	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/transport"
)

// TestEnsembleIdentity: with a static membership the handshake's identity
// is the server lines' ids and roles, so members with different lines
// refuse each other; with reconfigEnabled=true it names no members, so a
// joining member, whose lines list the old ensemble and itself, is
// admitted by the peer set alone.
func TestEnsembleIdentity(t *testing.T) {
	servers := func(lines ...config.Server) []config.Server { return lines }
	old := servers(
		config.Server{ID: 1, Host: "10.0.0.1", PeerPort: 2888},
		config.Server{ID: 2, Host: "10.0.0.2", PeerPort: 2888},
		config.Server{ID: 3, Host: "10.0.0.3", PeerPort: 2888, Observer: true},
	)
	// Member 4 joining; member 2 writes 0.0.0.0 for itself; member 3
	// promoted.
	joining := append(servers(config.Server{ID: 4, Host: "10.0.0.4", PeerPort: 2888}), old...)
	respelled := servers(old[2], config.Server{ID: 2, Host: "0.0.0.0", PeerPort: 2888}, old[0])
	promoted := servers(old[0], old[1], config.Server{ID: 3, Host: "10.0.0.3", PeerPort: 2888})
	identity := func(reconfig bool, lines []config.Server) string {
		return ensembleIdentity(Config{ReconfigEnabled: reconfig, Servers: lines})
	}

	if got, want := identity(false, old), "1:participant,2:participant,3:observer"; got != want {
		t.Errorf("static identity %q, want %q", got, want)
	}
	if identity(false, respelled) != identity(false, old) {
		t.Error("the static identity depends on host spellings or line order")
	}
	for name, lines := range map[string][]config.Server{"a member added": joining, "an observer promoted": promoted} {
		if identity(false, lines) == identity(false, old) {
			t.Errorf("static: %s keeps the identity", name)
		}
		if got := identity(true, lines); got != transport.DynamicEnsemble || got != identity(true, old) {
			t.Errorf("dynamic: %s gives identity %q, want %q as before it", name, got, transport.DynamicEnsemble)
		}
	}
	if identity(false, old) == identity(true, old) {
		t.Error("a static and a dynamic member have the same identity")
	}
}
