package server

import (
	"crypto/x509/pkix"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/internal/testpki"
)

// freePorts returns n TCP ports on 127.0.0.1 that were free a moment ago.
func freePorts(t *testing.T, n int) []int {
	t.Helper()
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
		defer l.Close()
	}
	return ports
}

// startTCPEnsemble starts three members talking over real TCP on the
// quorum port, each with keys[i] added to its zoo.cfg, and returns them
// once every one serves.
func startTCPEnsemble(t *testing.T, keys [3]map[string]string) []*Server {
	t.Helper()
	ports := freePorts(t, 3)
	var servers []config.Server
	for i, p := range ports {
		servers = append(servers, config.Server{ID: int64(i + 1), Host: "127.0.0.1", PeerPort: p, ElectionPort: p + 1})
	}
	members := make([]*Server, 3)
	errs := make([]error, 3)
	var wg sync.WaitGroup
	for i := range 3 {
		cfg := DefaultConfig()
		cfg.DataDir = t.TempDir()
		cfg.DataLogDir = cfg.DataDir
		cfg.TickTime, cfg.InitLimit, cfg.SyncLimit = 100, 10, 5
		cfg.Servers, cfg.MyID = servers, int64(i+1)
		cfg.AdminEnableServer = false
		for k, v := range keys[i] {
			cfg.Raw[k] = v
		}
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			members[i], errs[i] = Start(cfg, Options{
				Listener: ln, RaftTick: 5 * time.Millisecond, DisableTimers: true,
				Logger: slog.New(slog.NewTextHandler(io.Discard, nil)).With("myid", i+1),
			})
			if errs[i] != nil {
				ln.Close()
			}
		}()
	}
	wg.Wait()
	for i, m := range members {
		if m != nil {
			t.Cleanup(func() { m.Close() })
		}
		if errs[i] != nil {
			t.Fatalf("member %d: %v", i+1, errs[i])
		}
	}
	return members
}

// quorumKeys returns the zoo.cfg keys of member id: its own certificate
// from ca, the CA as trust store, and extra.
func quorumKeys(t *testing.T, ca *testpki.CA, id int, extra ...string) map[string]string {
	dir := t.TempDir()
	leaf := ca.Issue(t, testpki.Spec{Subject: pkix.Name{CommonName: fmt.Sprintf("member-%d", id)}})
	m := map[string]string{
		"ssl.quorum.keyStore.location":   leaf.WriteKeyStore(t, dir, "member.pem"),
		"ssl.quorum.trustStore.location": ca.WriteTrustStore(t, dir, "ca.pem"),
	}
	for i := 0; i+1 < len(extra); i += 2 {
		m[extra[i]] = extra[i+1]
	}
	return m
}

// TestQuorumTLS: members with sslQuorum form an ensemble and replicate;
// so do members in the middle of ZooKeeper's rolling enablement (one
// already dialling TLS, the others still plaintext, all accepting both).
func TestQuorumTLS(t *testing.T) {
	ca := testpki.NewCA(t, "quorum-ca")
	for _, tt := range []struct {
		name string
		keys [3]map[string]string
	}{
		{"sslQuorum", [3]map[string]string{
			quorumKeys(t, ca, 1, "sslQuorum", "true"),
			quorumKeys(t, ca, 2, "sslQuorum", "true"),
			quorumKeys(t, ca, 3, "sslQuorum", "true"),
		}},
		{"rolling enablement, step 2 of 3", [3]map[string]string{
			quorumKeys(t, ca, 1, "sslQuorum", "true", "portUnification", "true"),
			quorumKeys(t, ca, 2, "portUnification", "true"),
			quorumKeys(t, ca, 3, "portUnification", "true"),
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			members := startTCPEnsemble(t, tt.keys)
			ctx := ctx10(t)
			a, b := dial(t, members[0]), dial(t, members[2])
			if _, err := a.Create(ctx, "/replicated", []byte("over TLS"), client.Persistent, client.OpenACL); err != nil {
				t.Fatal(err)
			}
			if err := b.Sync(ctx, "/replicated"); err != nil {
				t.Fatal(err)
			}
			if data, _, err := b.Get(ctx, "/replicated"); err != nil || string(data) != "over TLS" {
				t.Fatalf("member 3 reads %q, %v", data, err)
			}
		})
	}
}

func TestQuorumTLSNeedsAKeyStore(t *testing.T) {
	cfg := DefaultConfig()
	cfg.DataDir = t.TempDir()
	cfg.DataLogDir = cfg.DataDir
	cfg.TickTime, cfg.InitLimit, cfg.SyncLimit = 100, 10, 5
	ports := freePorts(t, 3)
	for i, p := range ports {
		cfg.Servers = append(cfg.Servers, config.Server{ID: int64(i + 1), Host: "127.0.0.1", PeerPort: p, ElectionPort: p + 1})
	}
	cfg.MyID = 1
	cfg.AdminEnableServer = false
	cfg.Raw["sslQuorum"] = "true"
	startRefused(t, cfg, "ssl.quorum.keyStore.location")
}
