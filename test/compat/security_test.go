//go:build compat

package compat

import (
	"bytes"
	"context"
	"crypto/sha256"
	"crypto/tls"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// The security scenarios: TLS client ports (zkCli.sh over Netty, kazoo with use_ssl,
// go-zookeeper with a TLS dialer, Warden's client.WithTLS), refused handshakes, enforced
// authentication (enforce.auth.*, sessionRequireClientSASLAuth) with real clients, and
// digest ACLs under another digest algorithm. Every server of a scenario reads the same
// key and trust stores (newCompatPKI).

// securityDeadline bounds the Go part of one server's security scenario.
const securityDeadline = 60 * time.Second

// zkCliTLSClasspath is the Java client's classpath for TLS. Debian's zkCli.sh runs with
// zookeeper.jar alone, whose manifest lacks netty-codec, netty-resolver and
// netty-transport-native-unix-common: ClientCnxnSocketNetty fails there with
// NoClassDefFoundError (io/netty/resolver/AddressResolverGroup). A -cp in CLIENT_JVMFLAGS
// comes after zkCli.sh's own and wins. slf4j-nop keeps the client's log off the output.
func zkCliTLSClasspath() string {
	return strings.Replace(javaClasspath(), "slf4j-simple.jar", "slf4j-nop.jar", 1)
}

// zkCliTLSFlags returns the JVM flags that make zkCli.sh speak TLS to a secure port,
// presenting the named certificate of p ("" = no key store).
func zkCliTLSFlags(p *compatPKI, cert string) []string {
	return append([]string{"-cp", zkCliTLSClasspath()}, p.javaTLSFlags(cert)...)
}

// zkCliDisconnectNoise matches the event the Java client's event thread prints when the
// server closes the connection (-124): whether it is printed before the JVM exits varies.
var zkCliDisconnectNoise = []string{"WatchedEvent state:Disconnected type:None path:null"}

// runZkCliFlags runs zkCli.sh -server addr with extra JVM flags. With args it runs that
// one command; without, it reads the commands from stdin (interactive mode; zkCli.sh
// prints no prompt when stdin is not a terminal, and the connection is made while the
// first commands are read: addauth before a first request is sent with the connection's
// auth packets, ahead of the requests). It returns the output (noise lines dropped,
// whoami identities sorted) and the exit code.
func runZkCliFlags(t *testing.T, addr string, flags []string, stdin string, args ...string) (string, int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), zkCliDeadline)
	defer cancel()
	cmd := exec.CommandContext(ctx, zkCliPath, append([]string{"-server", addr}, args...)...)
	jvm := append([]string{"-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-XX:-UsePerfData", "-Xshare:auto"}, flags...)
	cmd.Env = append(os.Environ(), "CLIENT_JVMFLAGS="+strings.Join(jvm, " "))
	cmd.Stdin = strings.NewReader(stdin)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &out
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("zkCli.sh %v (stdin %q): no exit within %v; output:\n%s", args, stdin, zkCliDeadline, out.String())
	}
	rc := 0
	if err != nil {
		var ee *exec.ExitError
		if !errors.As(err, &ee) {
			t.Fatalf("zkCli.sh %v: %v", args, err)
		}
		rc = ee.ExitCode()
	}
	var kept []string
	for _, line := range strings.Split(out.String(), "\n") {
		if strings.TrimSpace(line) == "" || hasAnyPrefix(line, zkCliNoise) || hasAnyPrefix(line, zkCliSASLNoise) ||
			hasAnyPrefix(line, zkCliDisconnectNoise) {
			continue
		}
		kept = append(kept, line)
	}
	return sortWhoami(kept), rc
}

// sortWhoami joins lines, sorting the identity lines ("scheme: id") that follow each
// "Auth scheme: User" header: ZooKeeper prints them in Java hash-set order, which is
// unspecified.
func sortWhoami(lines []string) string {
	var b strings.Builder
	for i := 0; i < len(lines); i++ {
		b.WriteString(lines[i] + "\n")
		if lines[i] != "Auth scheme: User" {
			continue
		}
		j := i + 1
		for j < len(lines) && isIdentityLine(lines[j]) {
			j++
		}
		ids := slices.Clone(lines[i+1 : j])
		slices.Sort(ids)
		for _, id := range ids {
			b.WriteString(id + "\n")
		}
		i = j - 1
	}
	return b.String()
}

// isIdentityLine reports whether line is one of whoami's "scheme: id" lines.
func isIdentityLine(line string) bool {
	scheme, _, ok := strings.Cut(line, ": ")
	return ok && scheme != "" && !strings.ContainsAny(scheme, " \t[]/")
}

// zkCliStep is one zkCli.sh run of a scenario: the certificate it presents (a name in
// the PKI; "" = none), whether it speaks TLS to the secure port or plaintext to the
// client port, and either one command (args) or a command list on stdin.
type zkCliStep struct {
	cert  string
	plain bool
	stdin string
	args  []string
}

// run runs the step against s and appends "$ [cert] command" with output and exit code.
func (st zkCliStep) run(t *testing.T, tr *strings.Builder, s *Server, p *compatPKI) {
	t.Helper()
	addr, flags, port := s.Addr, []string(nil), "plain"
	if !st.plain {
		addr, flags, port = s.SecureAddr, zkCliTLSFlags(p, st.cert), "tls"
	}
	what := strings.Join(st.args, " ")
	if st.stdin != "" {
		what = "<<" + strings.ReplaceAll(strings.TrimSpace(st.stdin), "\n", "; ")
	}
	out, rc := runZkCliFlags(t, addr, flags, st.stdin, st.args...)
	fmt.Fprintf(tr, "$ [%s cert=%s] %s\n%src=%d\n", port, st.cert, what, out, rc)
}

// TestTLSZkCli drives zkCli.sh (the Java client over Netty) through the secure port with
// four certificates: whoami shows each x509 identity (Java's RFC 2253 rendering of the
// subject, including an escaped comma, a non-ASCII letter and an attribute without a
// keyword); an x509 ACL written with setAcl keeps another certificate out (NOAUTH); the
// X509AuthenticationProvider.superUser certificate reads through it.
func TestTLSZkCli(t *testing.T) {
	t.Parallel()
	p := newCompatPKI(t)
	// One zkCli.sh per certificate, reading its commands from stdin (a JVM start per
	// command would be three times slower); -cmd runs where the exit code matters.
	steps := []zkCliStep{
		{cert: "bob", stdin: "whoami\ncreate /tls hello\nget -s /tls\ncreate /bob-only secret\n" +
			"setAcl /bob-only x509:" + dnBob + ":cdrwa\ngetAcl /bob-only\nget /bob-only\n" +
			"create /bob-too b x509:" + dnBob + ":cdrwa\n"},
		{cert: "alice", stdin: "whoami\nget /bob-only\nset /bob-too x\nset /tls from-alice\nget /tls\n"},
		{cert: "alice", args: []string{"get", "/bob-only"}},
		{cert: "admin", stdin: "whoami\nget /bob-only\nset /bob-only by-admin\n"},
		{cert: "carol", stdin: "whoami\nget /tls\nget /bob-only\n"},
		{plain: true, args: []string{"get", "/bob-only"}},
	}
	differential(t, p.serverConfig(), func(t *testing.T, s *Server) string {
		var tr strings.Builder
		for _, st := range steps {
			st.run(t, &tr, s, p)
		}
		return tr.String()
	})
}

// TestTLSKazoo runs security/kazoo_tls.py: kazoo with use_ssl (PEM certificate, key and
// CA, verify_certs) creates a node with an x509 ACL naming its own subject, reads it back
// and asks whoAmI; a second certificate gets NOAUTH; kazoo without a certificate, with an
// untrusted one, and in plaintext to the secure port never gets a session.
func TestTLSKazoo(t *testing.T) {
	t.Parallel()
	p := newCompatPKI(t)
	differential(t, p.serverConfig(), func(t *testing.T, s *Server) string {
		return runScript(t, kazooDeadline, nil, "/usr/bin/python3", "security/kazoo_tls.py", s.SecureAddr, p.Dir, dnAlice)
	})
}

// tlsVersions records the TLS versions of the connections a dialer made.
type tlsVersions struct {
	cfg      *tls.Config
	versions []string
}

// dial is a go-zookeeper dialer speaking TLS.
func (v *tlsVersions) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	d := &tls.Dialer{NetDialer: &net.Dialer{Timeout: timeout}, Config: v.cfg}
	c, err := d.Dial(network, addr)
	if err == nil {
		v.versions = append(v.versions, tls.VersionName(c.(*tls.Conn).ConnectionState().Version))
	}
	return c, err
}

// TestTLSGoClients runs go-zookeeper (which has no TLS option: a TLS dialer) and Warden's
// client (client.WithTLS) over the secure port: creates, reads, x509 ACLs across
// certificates, whoAmI, and the super user certificate.
func TestTLSGoClients(t *testing.T) {
	t.Parallel()
	p := newCompatPKI(t)
	differential(t, p.serverConfig(), func(t *testing.T, s *Server) string {
		ctx, cancel := context.WithTimeout(context.Background(), securityDeadline)
		defer cancel()
		tr := &transcript{}

		// go-zookeeper as alice.
		dialer := &tlsVersions{cfg: p.clientTLS("alice")}
		events := newEventLog()
		gz, _, err := zk.Connect([]string{s.SecureAddr}, 10*time.Second, zk.WithDialer(dialer.dial),
			zk.WithLogger(nopLogger{}), zk.WithLogInfo(false), zk.WithEventCallback(events.add))
		if err != nil {
			t.Fatal(err)
		}
		defer gz.Close()
		events.waitFor(t, 0, "session", func(ev zk.Event) bool { return ev.State == zk.StateHasSession })
		tr.printf("gozk alice tls=%v", dialer.versions)
		aliceACL := zk.ACL{Perms: zk.PermAll, Scheme: "x509", ID: dnAlice}
		path, err := gz.Create("/gozk-tls", []byte("from-gozk"), 0, []zk.ACL{aliceACL})
		tr.printf("gozk create %s -> %s", path, errName(err))
		data, st, err := gz.Get("/gozk-tls")
		tr.printf("gozk get -> %q %s %s", data, statLine(st), errName(err))
		acl, _, err := gz.GetACL("/gozk-tls")
		tr.printf("gozk getACL -> %v %s", acl, errName(err))
		_, err = gz.Set("/gozk-tls", []byte("again"), 0)
		tr.printf("gozk set -> %s", errName(err))

		// Warden's client as bob, carol and admin.
		// Each creates a node only its own certificate may use, the ACL written with the
		// subject as ZooKeeper names it.
		for _, name := range []string{"bob", "carol", "admin"} {
			c := goConn(t, ctx, s.SecureAddr, client.WithTLS(p.clientTLS(name)))
			infos, err := c.WhoAmI(ctx)
			tr.printf("warden %s whoami -> %s %s", name, clientInfos(infos), code(err))
			data, _, err := c.Get(ctx, "/gozk-tls")
			tr.printf("warden %s get /gozk-tls -> %q %s", name, data, code(err))
			_, err = c.Set(ctx, "/gozk-tls", []byte(name), -1)
			tr.printf("warden %s set /gozk-tls -> %s", name, code(err))
			dn := map[string]string{"bob": dnBob, "carol": dnCarol, "admin": dnAdmin}[name]
			own := []client.ACL{{Perms: wire.PermAll, ID: client.ID{Scheme: "x509", ID: dn}}}
			path, err := c.Create(ctx, "/warden-tls-"+name, []byte(name), client.Persistent, own)
			tr.printf("warden %s create %s -> %s", name, path, code(err))
			acl, _, err := c.GetACL(ctx, "/warden-tls-"+name)
			tr.printf("warden %s getACL -> %v %s", name, acl, code(err))
			_, _, err = c.Get(ctx, "/warden-tls-bob")
			tr.printf("warden %s get /warden-tls-bob -> %s", name, code(err))
			c.Close()
		}
		data, _, err = gz.Get("/gozk-tls")
		tr.printf("gozk get -> %q %s", data, errName(err))
		return tr.String()
	})
}

// TestTLSRefusals probes the secure port by hand: a session and srvr over TLS with a
// trusted certificate; no session (and no srvr) without a certificate (ssl.clientAuth
// defaults to need) or with one from another CA; nothing but a close for plaintext sent
// to the secure port. The server still serves TLS afterwards.
func TestTLSRefusals(t *testing.T) {
	t.Parallel()
	p := newCompatPKI(t)
	connect := frameBytes(connectRequest(0, 10000, 0, make([]byte, 16)))
	differential(t, p.serverConfig(), func(t *testing.T, s *Server) string {
		tr := &transcript{}
		for _, pr := range []struct {
			name    string
			tls     bool
			cert    string
			payload []byte
		}{
			{"connect tls cert=alice", true, "alice", connect},
			{"srvr tls cert=alice", true, "alice", []byte("srvr")},
			{"connect tls no cert", true, "", connect},
			{"srvr tls no cert", true, "", []byte("srvr")},
			{"connect tls cert=mallory (other CA)", true, "mallory", connect},
			{"connect plaintext to secure port", false, "", connect},
			// As `echo srvr | nc`: five bytes, enough for a TLS server to see that they do
			// not start a record (with four, ZooKeeper's Netty port waits for a fifth).
			{"srvr plaintext to secure port", false, "", []byte("srvr\n")},
			{"connect tls cert=bob (after the refusals)", true, "bob", connect},
		} {
			if !pr.tls {
				tr.printf("%s: %s", pr.name, probe(t, s.SecureAddr, nil, pr.payload))
				continue
			}
			// Once with the client's default versions (TLS 1.3 and 1.2), once offering
			// TLS 1.2 alone, as ZooKeeper 3.8's Java client does.
			tr.printf("%s: %s", pr.name, probe(t, s.SecureAddr, p.clientTLS(pr.cert), pr.payload))
			cfg := p.clientTLS(pr.cert)
			cfg.MaxVersion = tls.VersionTLS12
			tr.printf("%s, client TLS 1.2: %s", pr.name, probe(t, s.SecureAddr, cfg, pr.payload))
		}
		return tr.String()
	})
}

// frameBytes prefixes body with its length, as the client protocol frames requests.
func frameBytes(body []byte) []byte {
	return append([]byte{byte(len(body) >> 24), byte(len(body) >> 16), byte(len(body) >> 8), byte(len(body))}, body...)
}

// probe connects to addr (TLS when cfg is set), writes payload and reads until the server
// closes (bounded by rawDeadline). It describes the handshake, then what came back: a
// ConnectResponse ("session"), a four-letter word's reply (its shape), or the bytes
// before the close, and how the connection ended.
func probe(t *testing.T, addr string, cfg *tls.Config, payload []byte) string {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, rawDeadline)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(rawDeadline))
	var parts []string
	conn := raw
	if cfg != nil {
		tc := tls.Client(raw, cfg)
		if err := tc.Handshake(); err != nil {
			return "handshake failed: " + endOf(err)
		}
		parts = append(parts, "handshake "+tls.VersionName(tc.ConnectionState().Version))
		conn = tc
	}
	if _, err := conn.Write(payload); err != nil {
		return strings.Join(append(parts, "write failed: "+endOf(err)), "; ")
	}
	got, end := readReply(conn, isFrame(payload))
	switch {
	case isFrame(payload) && end == nil:
		r := decodeConnectResponse(t, got[4:4+frameLen(got)])
		parts = append(parts, fmt.Sprintf("session timeout=%d passwdLen=%d", r.timeout, len(r.passwd)))
	case !isFrame(payload) && len(got) > 0:
		shape := fourLetterShape(string(payload), string(got))
		parts = append(parts, "then "+endOf(end)+"; reply shape:\n\t"+strings.ReplaceAll(shape, "\n", "\n\t"))
	case len(got) == 0:
		parts = append(parts, "no reply, then "+endOf(end))
	default:
		parts = append(parts, fmt.Sprintf("%d bytes (% x) then %s", len(got), got[:min(len(got), 16)], endOf(end)))
	}
	return strings.Join(parts, "; ")
}

// readReply reads from conn until the server closes it or, when frame is set, until one
// whole frame has arrived (a session stays open: one ConnectResponse is all it says). It
// returns the bytes read and the error that ended the reading (nil for a whole frame).
func readReply(conn net.Conn, frame bool) ([]byte, error) {
	var got []byte
	buf := make([]byte, 4096)
	for {
		n, err := conn.Read(buf)
		got = append(got, buf[:n]...)
		if frame && len(got) >= 4 && len(got) >= 4+frameLen(got) {
			return got, nil
		}
		if err != nil {
			return got, err
		}
	}
}

// isFrame reports whether a probe's payload is a framed request (not a 4lw).
func isFrame(payload []byte) bool { return len(payload) > 4 && payload[0] == 0 }

// frameLen is the length prefix of b.
func frameLen(b []byte) int { return int(b[0])<<24 | int(b[1])<<16 | int(b[2])<<8 | int(b[3]) }

// endOf names how a read or handshake ended: EOF, reset, a TLS alert, or the error.
func endOf(err error) string {
	switch {
	case err == nil:
		return "ok"
	case errors.Is(err, io.EOF):
		return "EOF"
	case errors.Is(err, syscall.ECONNRESET):
		return "reset"
	case errors.Is(err, os.ErrDeadlineExceeded):
		return "timeout"
	}
	var op *net.OpError
	if errors.As(err, &op) && op.Op == "remote error" {
		return "alert " + strings.TrimPrefix(op.Err.Error(), "tls: ")
	}
	return err.Error()
}

// TestEnforceAuthDigest requires digest authentication (enforce.auth.enabled,
// enforce.auth.schemes=digest): the first request of a session without a digest identity
// is answered -124 and the connection closed, for zkCli.sh, kazoo, Warden's client and a
// raw ping; with addauth digest first (zkCli.sh reading commands from stdin, kazoo
// auth_data, client.WithAuth) everything works.
func TestEnforceAuthDigest(t *testing.T) {
	t.Parallel()
	extra := map[string]string{
		"enforce.auth.enabled": "true",
		"enforce.auth.schemes": "digest",
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		var tr strings.Builder
		for _, st := range []zkCliStep{
			{plain: true, args: []string{"ls", "/"}},
			{plain: true, args: []string{"create", "/no-auth", "x"}},
			{plain: true, stdin: "ls /\n"},
			{plain: true, stdin: "addauth digest u:p\nwhoami\ncreate /enforced e\nget /enforced\nls /\n"},
			// An unknown scheme (AUTHFAILED and a close) is checked by enforceRaw, with no
			// request behind the auth packet: see enforceRaw.
		} {
			st.run(t, &tr, s, nil)
		}
		tr.WriteString(runScript(t, kazooDeadline, nil, "/usr/bin/python3", "security/kazoo_enforce.py", s.Addr, "digest"))
		tr.WriteString(enforceGoClients(t, s.Addr, nil, client.WithAuth("digest", []byte("u:p"))))
		tr.WriteString(enforceRaw(t, s))
		return tr.String()
	})
}

// enforceGoClients runs Warden's client against addr without credentials, then with
// auth, and returns what each saw. tlsCfg (nil = plaintext) applies to both.
func enforceGoClients(t *testing.T, addr string, tlsCfg *tls.Config, auth client.Option) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), securityDeadline)
	defer cancel()
	tr := &transcript{}
	var opts []client.Option
	if tlsCfg != nil {
		opts = append(opts, client.WithTLS(tlsCfg))
	}
	anon := goConn(t, ctx, addr, opts...)
	_, _, err := anon.Get(ctx, "/")
	tr.printf("warden anon get / -> %s", code(err))
	anon.Close()
	if auth != nil {
		authed := goConn(t, ctx, addr, append(opts, auth)...)
		_, err := authed.Create(ctx, "/warden-enforced", []byte("w"), client.Persistent, client.OpenACL)
		tr.printf("warden authed create -> %s", code(err))
		children, _, err := authed.Children(ctx, "/")
		slices.Sort(children)
		tr.printf("warden authed children / -> %v %s", children, code(err))
		infos, err := authed.WhoAmI(ctx)
		tr.printf("warden authed whoami -> %s %s", clientInfos(infos), code(err))
		authed.Close()
	}
	return tr.String()
}

// enforceRaw opens raw sessions without authentication: one sends a ping, which
// enforcement answers with -124 and a close; one sends an auth packet of an unknown
// scheme, answered AUTHFAILED (-115) and a close.
//
// zkCli.sh is not used for the unknown scheme: it sends its next request right behind
// the auth packet, and whether that request is still unread when the server closes (a
// reset instead of a FIN, which can make the Java client report ConnectionLoss instead
// of AuthFailed) is a race, narrower in ZooKeeper than in Warden.
func enforceRaw(t *testing.T, s *Server) string {
	t.Helper()
	var tr strings.Builder
	c, r := rawSession(t, s)
	c.frame(request(-2, 11, nil))
	b, closed := c.readFrame()
	if closed {
		fmt.Fprintf(&tr, "raw session timeout=%d; ping -> closed without reply\n", r.timeout)
	} else {
		xid, _, errCode := replyHeader(t, b)
		fmt.Fprintf(&tr, "raw session timeout=%d; ping -> xid=%d err=%d; %s\n", r.timeout, xid, errCode, c.closedAfter())
	}
	c, _ = rawSession(t, s)
	var auth []byte
	auth = binary.BigEndian.AppendUint32(auth, 0) // type
	auth = binary.BigEndian.AppendUint32(auth, 3)
	auth = append(auth, "foo"...)
	auth = binary.BigEndian.AppendUint32(auth, 3)
	auth = append(auth, "bar"...)
	c.frame(request(-4, 100, auth))
	b, closed = c.readFrame()
	if closed {
		tr.WriteString("raw auth foo:bar -> closed without reply\n")
	} else {
		xid, _, errCode := replyHeader(t, b)
		fmt.Fprintf(&tr, "raw auth foo:bar -> xid=%d err=%d; %s\n", xid, errCode, c.closedAfter())
	}
	return tr.String()
}

// TestEnforceAuthSASL requires SASL (sessionRequireClientSASLAuth=true, DIGEST-MD5 users
// of saslServerJAAS): zkCli.sh logging in as bob works, with a wrong password or without
// a JAAS file it is refused; kazoo likewise with and without sasl_options.
func TestEnforceAuthSASL(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	serverJAAS := filepath.Join(dir, "server-jaas.conf")
	if err := os.WriteFile(serverJAAS, []byte(saslServerJAAS), 0o644); err != nil {
		t.Fatal(err)
	}
	clientJAAS := map[string]string{}
	for _, pw := range []string{"bobsecret", "wrong"} {
		f := filepath.Join(dir, "client-"+pw+".conf")
		if err := os.WriteFile(f, []byte(fmt.Sprintf(saslClientJAAS, pw)), 0o644); err != nil {
			t.Fatal(err)
		}
		clientJAAS[pw] = f
	}
	extra := map[string]string{
		"java.security.auth.login.config": serverJAAS,
		"authProvider.1":                  "org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
		"sessionRequireClientSASLAuth":    "true",
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		var tr strings.Builder
		for _, st := range []struct {
			password string
			args     []string
		}{
			{"bobsecret", []string{"create", "/sasl-enforced", "s"}},
			{"bobsecret", []string{"whoami"}},
			{"bobsecret", []string{"ls", "/"}},
			{"wrong", []string{"ls", "/"}},
			{"", []string{"ls", "/"}},
		} {
			var flags []string
			if st.password != "" {
				flags = []string{"-Djava.security.auth.login.config=" + clientJAAS[st.password]}
			}
			out, rc := runZkCliFlags(t, s.Addr, flags, "", st.args...)
			fmt.Fprintf(&tr, "$ [password=%q] %s\n%src=%d\n", st.password, strings.Join(st.args, " "), out, rc)
		}
		tr.WriteString(runScript(t, kazooDeadline, nil, "/usr/bin/python3", "security/kazoo_enforce.py", s.Addr, "sasl"))
		tr.WriteString(enforceGoClients(t, s.Addr, nil, nil))
		return tr.String()
	})
}

// TestEnforceAuthX509 requires x509 (enforce.auth.schemes=x509) with a TLS port: a
// certificate on the secure port is an identity, so zkCli.sh and Warden's client work
// there; on the plaintext port they are refused with -124.
func TestEnforceAuthX509(t *testing.T) {
	t.Parallel()
	p := newCompatPKI(t)
	extra := p.serverConfig()
	extra["enforce.auth.enabled"] = "true"
	extra["enforce.auth.schemes"] = "x509"
	differential(t, extra, func(t *testing.T, s *Server) string {
		var tr strings.Builder
		for _, st := range []zkCliStep{
			{cert: "bob", args: []string{"create", "/x509-enforced", "x"}},
			{cert: "bob", args: []string{"whoami"}},
			{plain: true, args: []string{"get", "/x509-enforced"}},
			{plain: true, stdin: "addauth digest u:p\nget /x509-enforced\n"},
		} {
			st.run(t, &tr, s, p)
		}
		tr.WriteString("-- Warden's client over TLS as alice\n")
		tr.WriteString(enforceGoClients(t, s.SecureAddr, p.clientTLS("alice"), client.WithAuth("digest", []byte("u:p"))))
		tr.WriteString("-- Warden's client in plaintext\n")
		tr.WriteString(enforceGoClients(t, s.Addr, nil, nil))
		return tr.String()
	})
}

// digestID returns user:base64(SHA-256(user:password)), a digest ACL id under
// DigestAuthenticationProvider.digestAlg=SHA-256.
func digestID(user, password string) string {
	sum := sha256.Sum256([]byte(user + ":" + password))
	return user + ":" + base64.StdEncoding.EncodeToString(sum[:])
}

// TestSecureDigestSHA256 sets DigestAuthenticationProvider.digestAlg=SHA-256 with a
// superDigest computed with SHA-256: the digest ids the server makes ("auth" ACLs) and
// the ones written by hand agree with SHA-256, and addauth digest super:... is super, in
// zkCli.sh and Warden's client; a wrong super password is not.
func TestSecureDigestSHA256(t *testing.T) {
	t.Parallel()
	extra := map[string]string{
		"DigestAuthenticationProvider.digestAlg":   "SHA-256",
		"DigestAuthenticationProvider.superDigest": digestID("super", "superpw"),
	}
	differential(t, extra, func(t *testing.T, s *Server) string {
		ctx, cancel := context.WithTimeout(context.Background(), securityDeadline)
		defer cancel()
		tr := &transcript{}
		alice := goConn(t, ctx, s.Addr, client.WithAuth("digest", []byte("alice:secret")))
		_, err := alice.Create(ctx, "/private", []byte("p"), client.Persistent, client.CreatorAllACL)
		tr.printf("alice create /private (auth ACL) -> %s", code(err))
		acl, _, err := alice.GetACL(ctx, "/private")
		tr.printf("alice getACL /private -> %v %s (sha256 id %s)", acl, code(err), digestID("alice", "secret"))
		explicit := []client.ACL{{Perms: wire.PermAll, ID: client.ID{Scheme: "digest", ID: digestID("alice", "secret")}}}
		_, err = alice.Create(ctx, "/explicit", []byte("e"), client.Persistent, explicit)
		tr.printf("alice create /explicit -> %s", code(err))
		data, _, err := alice.Get(ctx, "/explicit")
		tr.printf("alice get /explicit -> %q %s", data, code(err))
		infos, err := alice.WhoAmI(ctx)
		tr.printf("alice whoami -> %s %s", clientInfos(infos), code(err))
		alice.Close()
		for _, who := range []string{"superpw", "wrong"} {
			c := goConn(t, ctx, s.Addr, client.WithAuth("digest", []byte("super:"+who)))
			infos, err := c.WhoAmI(ctx)
			tr.printf("super:%s whoami -> %s %s", who, clientInfos(infos), code(err))
			data, _, err := c.Get(ctx, "/private")
			tr.printf("super:%s get /private -> %q %s", who, data, code(err))
			c.Close()
		}
		var cli strings.Builder
		for _, st := range []zkCliStep{
			{plain: true, args: []string{"get", "/private"}},
			{plain: true, stdin: "addauth digest super:superpw\nwhoami\nget /private\ngetAcl /explicit\nset /explicit by-super\n"},
			{plain: true, stdin: "addauth digest super:wrong\nget /private\n"},
			{plain: true, stdin: "addauth digest alice:secret\nget /explicit\n"},
		} {
			st.run(t, &cli, s, nil)
		}
		return tr.String() + cli.String()
	})
}

// TestTLSClientAuth sets ssl.clientAuth to want and to none and connects with each
// certificate and without one: whether a session comes up, and the identities whoAmI
// then reports (an x509 identity only for a certificate the server asked for).
func TestTLSClientAuth(t *testing.T) {
	t.Parallel()
	p := newCompatPKI(t)
	for _, mode := range []string{"want", "none"} {
		t.Run(mode, func(t *testing.T) {
			extra := p.serverConfig()
			extra["ssl.clientAuth"] = mode
			differential(t, extra, func(t *testing.T, s *Server) string {
				tr := &transcript{}
				for _, cert := range []string{"", "bob", "mallory"} {
					cfg := p.clientTLS(cert)
					cfg.MaxVersion = tls.VersionTLS12 // see TestTLSRefusals: the versions' defaults differ
					tr.printf("cert=%q: %s", cert, tlsWhoAmI(t, s.SecureAddr, cfg))
				}
				return tr.String()
			})
		})
	}
}

// tlsWhoAmI opens a session over TLS by hand and asks whoAmI; it describes the refusal
// (as probe does) when there is no session.
func tlsWhoAmI(t *testing.T, addr string, cfg *tls.Config) string {
	t.Helper()
	raw, err := net.DialTimeout("tcp", addr, rawDeadline)
	if err != nil {
		t.Fatalf("dial %s: %v", addr, err)
	}
	defer raw.Close()
	_ = raw.SetDeadline(time.Now().Add(rawDeadline))
	tc := tls.Client(raw, cfg)
	if err := tc.Handshake(); err != nil {
		return "handshake failed: " + endOf(err)
	}
	if _, err := tc.Write(frameBytes(connectRequest(0, 10000, 0, make([]byte, 16)))); err != nil {
		return "write failed: " + endOf(err)
	}
	got, end := readReply(tc, true)
	if end != nil {
		return fmt.Sprintf("no session: %d bytes then %s", len(got), endOf(end))
	}
	if _, err := tc.Write(frameBytes(request(1, 107, nil))); err != nil {
		return "session; whoAmI write failed: " + endOf(err)
	}
	got, end = readReply(tc, true)
	if end != nil {
		return fmt.Sprintf("session; whoAmI: %d bytes then %s", len(got), endOf(end))
	}
	body := got[4 : 4+frameLen(got)]
	xid, _, errCode := replyHeader(t, body)
	if errCode != 0 {
		return fmt.Sprintf("session; whoAmI xid=%d err=%d", xid, errCode)
	}
	var infos []wire.ClientInfo
	d := wire.NewDecoder(body[16:], len(body))
	n := d.Int32()
	for i := int32(0); i < n && d.Err() == nil; i++ {
		infos = append(infos, wire.ClientInfo{AuthScheme: d.String(), User: d.String()})
	}
	if d.Err() != nil {
		t.Fatalf("whoAmI reply: %v", d.Err())
	}
	return "session; whoAmI " + clientInfos(infos)
}
