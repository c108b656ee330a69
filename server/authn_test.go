package server

import (
	"errors"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/wire"
)

// rawAuth sends an addauth and returns the reply's error code.
func (c *rawClient) rawAuth(scheme, data string) wire.Code {
	c.t.Helper()
	c.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: wire.XidAuth, Type: wire.OpAuth},
		&wire.AuthPacket{Scheme: scheme, Auth: []byte(data)}))
	body, err := wire.ReadFrame(c.nc, 0, nil)
	if err != nil {
		c.t.Fatalf("addauth %s: %v", scheme, err)
	}
	var h wire.ReplyHeader
	if err := wire.Unmarshal(body, &h, 0); err != nil || h.Xid != wire.XidAuth {
		c.t.Fatalf("addauth reply = %+v %v", h, err)
	}
	return h.Err
}

// expectClosed fails unless the server has closed the connection.
func (c *rawClient) expectClosed() {
	c.t.Helper()
	if _, err := wire.ReadFrame(c.nc, 0, nil); err == nil {
		c.t.Fatal("connection still open; want it closed by the server")
	}
}

func (c *rawClient) whoAmI() []wire.ClientInfo {
	c.t.Helper()
	var resp wire.WhoAmIResponse
	if code := c.do(wire.OpWhoAmI, nil, &resp); code != wire.CodeOK {
		c.t.Fatalf("whoAmI: %v", code)
	}
	return resp.ClientInfo
}

func TestEnforcedAuthRefusesUnauthenticatedRequests(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) {
		c.EnforceAuthEnabled = true
		c.EnforceAuthSchemes = []string{"digest"}
	})
	for _, op := range []wire.OpCode{wire.OpGetData, wire.OpPing, wire.OpCreate} {
		t.Run(opName(op), func(t *testing.T) {
			c := newRawClient(t, srv)
			var req wire.Record
			switch op {
			case wire.OpGetData:
				req = &wire.GetDataRequest{Path: "/"}
			case wire.OpCreate:
				req = &wire.CreateRequest{Path: "/x", ACL: []wire.ACL{{Perms: wire.PermAll, ID: wire.ID{Scheme: "world", ID: "anyone"}}}}
			}
			h, d := c.call(op, req)
			if h.Err != wire.ErrSessionClosedRequiresSASL || h.Zxid != 0 || d.Remaining() != 0 {
				t.Fatalf("reply = %+v with %d body bytes; want SESSIONCLOSEDREQUIRESASLAUTH, zxid 0, no body", h, d.Remaining())
			}
			c.expectClosed()
		})
	}
	// An ip id does not satisfy digest; addauth digest does.
	c := newRawClient(t, srv)
	if code := c.rawAuth("digest", "bob:secret"); code != wire.CodeOK {
		t.Fatalf("addauth digest = %v", code)
	}
	if code := c.do(wire.OpGetData, &wire.GetDataRequest{Path: "/"}, &wire.GetDataResponse{}); code != wire.CodeOK {
		t.Fatalf("getData after addauth = %v", code)
	}
}

func TestEnforcedAuthAcceptsAnyListedScheme(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) {
		c.EnforceAuthEnabled = true
		c.EnforceAuthSchemes = []string{"sasl", "ip"}
		c.JAASConfigFile = writeJAAS(t)
	})
	// Every connection has an ip id, so ip in the list lets all in.
	c := newRawClient(t, srv)
	if code := c.do(wire.OpGetData, &wire.GetDataRequest{Path: "/"}, &wire.GetDataResponse{}); code != wire.CodeOK {
		t.Fatalf("getData = %v", code)
	}
}

func writeJAAS(t *testing.T) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "jaas.conf")
	err := os.WriteFile(p, []byte(`Server {
    org.apache.zookeeper.server.auth.DigestLoginModule required
    user_bob="bobsecret";
};`), 0o600)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestSASLFailure checks what a failed SASL login costs: AUTHFAILED and a
// closed connection by default; SESSIONCLOSEDREQUIRESASLAUTH when SASL is
// required; nothing with allowSaslFailedClients (unless required).
func TestSASLFailure(t *testing.T) {
	tests := []struct {
		name     string
		mutate   func(*Config)
		want     wire.Code
		stayOpen bool
	}{
		{"default", func(*Config) {}, wire.ErrAuthFailed, false},
		{"required", func(c *Config) { c.SessionRequireClientSASLAuth = true }, wire.ErrSessionClosedRequiresSASL, false},
		{"enforced", func(c *Config) { c.EnforceAuthEnabled, c.EnforceAuthSchemes = true, []string{"sasl"} },
			wire.ErrSessionClosedRequiresSASL, false},
		{"allowed", func(c *Config) { c.AllowSASLFailedClients = true }, wire.CodeOK, true},
		{"allowed but required", func(c *Config) { c.AllowSASLFailedClients, c.SessionRequireClientSASLAuth = true, true },
			wire.ErrSessionClosedRequiresSASL, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			srv, _ := startServer(t, func(c *Config) { c.JAASConfigFile = writeJAAS(t); tt.mutate(c) })
			before := srv.Stats().AuthFailed
			c := newRawClient(t, srv)
			var resp wire.SetSASLResponse
			if code := c.do(wire.OpSASL, &wire.GetSASLRequest{}, &resp); code != wire.CodeOK || len(resp.Token) == 0 {
				t.Fatalf("first SASL step = %v, challenge %q", code, resp.Token)
			}
			h, d := c.call(wire.OpSASL, &wire.GetSASLRequest{Token: []byte("not a digest response")})
			if h.Err != tt.want {
				t.Fatalf("bad SASL response answered %v; want %v", h.Err, tt.want)
			}
			if h.Err != wire.CodeOK {
				// ZooKeeper sends a SetSASLResponse with a null token.
				var r wire.SetSASLResponse
				r.Decode(d)
				if d.Err() != nil || r.Token != nil {
					t.Fatalf("error reply body = %+v, %v; want a null token", r, d.Err())
				}
			}
			if got := srv.Stats().AuthFailed - before; got != 1 {
				t.Errorf("auth_failed_count grew by %d; want 1", got)
			}
			if !tt.stayOpen {
				c.expectClosed()
				return
			}
			if code := c.do(wire.OpGetData, &wire.GetDataRequest{Path: "/"}, &wire.GetDataResponse{}); code != wire.CodeOK {
				t.Fatalf("getData after a tolerated SASL failure = %v", code)
			}
		})
	}
}

func TestDigestAlgorithm(t *testing.T) {
	alg, err := auth.ParseDigestAlg("SHA-256")
	if err != nil {
		t.Fatal(err)
	}
	srv, _ := startServer(t, func(c *Config) {
		c.DigestAlg = alg
		c.SuperDigest = alg.ID("super:test")
	})
	c := newRawClient(t, srv)
	if code := c.rawAuth("digest", "super:test"); code != wire.CodeOK {
		t.Fatalf("addauth = %v", code)
	}
	got := c.whoAmI()
	if len(got) != 3 || got[1] != (wire.ClientInfo{AuthScheme: "digest", User: "super"}) || got[2].AuthScheme != "super" {
		t.Fatalf("whoAmI = %+v; want ip, digest super, super", got)
	}
	// The SHA1 id of the same password is not the super digest.
	srv2, _ := startServer(t, func(c *Config) { c.SuperDigest = alg.ID("super:test") })
	c2 := newRawClient(t, srv2)
	c2.rawAuth("digest", "super:test")
	if got := c2.whoAmI(); len(got) != 2 {
		t.Fatalf("whoAmI under SHA1 with a SHA-256 super digest = %+v; want no super", got)
	}
}

func TestEnsembleAuthScheme(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) {
		c.AuthProviders["1"] = "org.apache.zookeeper.server.auth.EnsembleAuthenticationProvider"
		c.Raw["zookeeper.ensembleAuthName"] = "prod, prod-alias"
	})
	for _, name := range []string{"prod", "prod-alias", ""} {
		c := newRawClient(t, srv)
		if code := c.rawAuth("ensemble", name); code != wire.CodeOK {
			t.Fatalf("addauth ensemble %q = %v", name, code)
		}
		// No id is added: the ensemble scheme only checks the name.
		if got := c.whoAmI(); len(got) != 1 || got[0].AuthScheme != "ip" {
			t.Fatalf("whoAmI = %+v; want only the ip id", got)
		}
	}
	c := newRawClient(t, srv)
	c.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: wire.XidAuth, Type: wire.OpAuth},
		&wire.AuthPacket{Scheme: "ensemble", Auth: []byte("staging")}))
	c.expectClosed()
}

func TestSchemesNeedAProvider(t *testing.T) {
	srv, _ := startServer(t, func(c *Config) { c.DigestAuthEnabled = false })
	for _, scheme := range []string{"digest", "ensemble", "x509"} {
		c := newRawClient(t, srv)
		if code := c.rawAuth(scheme, "bob:x"); code != wire.ErrAuthFailed {
			t.Fatalf("addauth %s without its provider = %v; want AUTHFAILED", scheme, code)
		}
		c.expectClosed()
	}
}

func TestStartRefusesWeakerThanAsked(t *testing.T) {
	tests := []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"skipACL", func(c *Config) { c.SkipACL = true }, "warden.allowSkipACL"},
		{"kerberos JAAS", func(c *Config) {
			p := filepath.Join(t.TempDir(), "jaas.conf")
			os.WriteFile(p, []byte("Server { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };"), 0o600)
			c.JAASConfigFile = p
		}, "Krb5LoginModule"},
		{"sasl required without users", func(c *Config) {
			p := filepath.Join(t.TempDir(), "jaas.conf")
			os.WriteFile(p, []byte("Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=a password=b; };"), 0o600)
			c.JAASConfigFile = p
			c.SessionRequireClientSASLAuth = true
		}, "no users"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := DefaultConfig()
			cfg.DataDir = t.TempDir()
			cfg.DataLogDir = cfg.DataDir
			tt.mutate(&cfg)
			err := startRefused(t, cfg, tt.want)
			if tt.name == "skipACL" && !errors.Is(err, config.ErrInvalid) {
				t.Errorf("Start: %v; want ErrInvalid", err)
			}
		})
	}
}

// TestFailedAuthenticationIsAudited: with audit.enable, a failed addauth
// is an audit record with the peer's address and identities.
func TestFailedAuthenticationIsAudited(t *testing.T) {
	var buf syncBuffer
	srv, _ := startServerOpts(t, func(c *Config) { c.AuditEnable = true }, Options{AuditLogger: auditTestLogger(&buf)})
	c := newRawClient(t, srv)
	if code := c.rawAuth("kerberos", "x"); code != wire.ErrAuthFailed {
		t.Fatalf("addauth = %v", code)
	}
	c.expectClosed()
	srv.Close()
	var got []string
	for _, l := range buf.lines() {
		if strings.Contains(l, "authenticate") {
			got = append(got, l)
		}
	}
	want := regexp.MustCompile(`^msg=audit session=0x[0-9a-f]+ user=127\.0\.0\.1 ip=127\.0\.0\.1 operation=authenticate:kerberos result=failure$`)
	if len(got) != 1 || !want.MatchString(got[0]) {
		t.Fatalf("audit records of the failure:\n%s\nwant one matching %s", strings.Join(got, "\n"), want)
	}
}

// startRefused starts a server on cfg and fails the test unless Start
// refuses with an error mentioning want, which it returns.
func startRefused(t *testing.T, cfg Config, want string) error {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	srv, err := Start(cfg, Options{Listener: ln, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err == nil {
		srv.Close()
		t.Fatalf("Start succeeded; want a refusal mentioning %q", want)
	}
	if !strings.Contains(err.Error(), want) {
		t.Fatalf("Start: %v; want it to mention %q", err, want)
	}
	return err
}

// TestCloseAfterFinalReplyIsNotAReset: a connection closed after its
// final reply reads what the client still sends, so the client sees the
// reply and an orderly end (FIN), not a reset that can destroy the reply.
func TestCloseAfterFinalReplyIsNotAReset(t *testing.T) {
	srv, _ := startServer(t, nil)
	for range 20 {
		c := newRawClient(t, srv)
		if code := c.rawAuth("foo", "bar"); code != wire.ErrAuthFailed {
			t.Fatalf("addauth foo = %v", code)
		}
		// A request sent after the server decided to close: it must be
		// read and dropped, not left to reset the connection.
		c.nc.Write(wire.AppendRecords(nil, &wire.RequestHeader{Xid: 2, Type: wire.OpGetData}, &wire.GetDataRequest{Path: "/"}))
		rest, err := io.ReadAll(c.nc)
		if err != nil || len(rest) != 0 {
			t.Fatalf("after the final reply: %d more bytes, %v; want an orderly close", len(rest), err)
		}
	}
}
