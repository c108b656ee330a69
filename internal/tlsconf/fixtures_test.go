package tlsconf

import (
	"context"
	"crypto"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// leafOf issues a localhost leaf under ca.
func leafOf(t testing.TB, ca *testCert, cn string) *testCert {
	return issue(t, ca, certOpts{cn: cn, dns: []string{"localhost"}, ips: []net.IP{net.IPv4(127, 0, 0, 1)}})
}

func pemCert(c *x509.Certificate) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: c.Raw})
}

func pemKey(t testing.TB, key crypto.Signer) []byte {
	t.Helper()
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
}

// pemKeyStore is a PEM key store: key then chain.
func pemKeyStore(t testing.TB, c *testCert) []byte {
	out := pemKey(t, c.key)
	for _, cert := range c.chain {
		out = append(out, pemCert(cert)...)
	}
	return out
}

func pemTrust(cas ...*testCert) []byte {
	var out []byte
	for _, ca := range cas {
		out = append(out, pemCert(ca.cert)...)
	}
	return out
}

func writeFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	// Write and rename, so that a Watch polling meanwhile never reads half
	// a file (which it would rightly report as not loading).
	if err := os.WriteFile(p+".tmp", data, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(p+".tmp", p); err != nil {
		t.Fatal(err)
	}
	return p
}

// pemSource writes a PEM key store for c and a PEM trust store of cas
// (none: no trust store) and makes a Source of prefix with extra keys.
func pemSource(t testing.TB, prefix string, c *testCert, cas []*testCert, extra map[string]string) *Source {
	t.Helper()
	dir := t.TempDir()
	keys := map[string]string{}
	if c != nil {
		keys[prefix+"keyStore.location"] = writeFile(t, dir, "key.pem", pemKeyStore(t, c))
	}
	if len(cas) > 0 {
		keys[prefix+"trustStore.location"] = writeFile(t, dir, "trust.pem", pemTrust(cas...))
	}
	for k, v := range extra {
		keys[k] = v
	}
	src, err := NewSource(mustRead(t, prefix, keys), discardLog())
	if err != nil {
		t.Fatalf("NewSource: %v", err)
	}
	return src
}

func discardLog() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

// result is the outcome of one handshake, seen from both ends.
type result struct {
	server, client       tls.ConnectionState
	serverErr, clientErr error
}

// ok reports whether both ends completed.
func (r result) ok() bool { return r.serverErr == nil && r.clientErr == nil }

// handshake connects a client with clientCfg to a server with serverCfg
// over loopback TCP. After the handshake the server sends one byte, which
// the client reads: in TLS 1.3 a client learns that the server refused its
// certificate only then.
func handshake(t testing.TB, serverCfg, clientCfg *tls.Config) result {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	deadline := time.Now().Add(10 * time.Second)
	type serverSide struct {
		state tls.ConnectionState
		err   error
	}
	done := make(chan serverSide, 1)
	go func() {
		raw, err := ln.Accept()
		if err != nil {
			done <- serverSide{err: err}
			return
		}
		defer raw.Close()
		_ = raw.SetDeadline(deadline)
		conn := tls.Server(raw, serverCfg)
		if err := conn.Handshake(); err != nil {
			done <- serverSide{err: err}
			return
		}
		_, err = conn.Write([]byte{1})
		done <- serverSide{state: conn.ConnectionState(), err: err}
	}()
	var r result
	raw, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	_ = raw.SetDeadline(deadline)
	conn := tls.Client(raw, clientCfg)
	if r.clientErr = conn.Handshake(); r.clientErr == nil {
		var b [1]byte
		if _, err := io.ReadFull(conn, b[:]); err != nil {
			r.clientErr = err
		}
		r.client = conn.ConnectionState()
	}
	raw.Close()
	s := <-done
	r.server, r.serverErr = s.state, s.err
	return r
}

// recordHandler is a slog.Handler that sends every record to c.
type recordHandler struct{ c chan slog.Record }

func (h recordHandler) Enabled(context.Context, slog.Level) bool { return true }
func (h recordHandler) Handle(_ context.Context, r slog.Record) error {
	h.c <- r.Clone()
	return nil
}
func (h recordHandler) WithAttrs([]slog.Attr) slog.Handler { return h }
func (h recordHandler) WithGroup(string) slog.Handler      { return h }
