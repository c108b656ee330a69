package admin

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/server"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds anything a test waits for.
const wait = 15 * time.Second

// startAdmin starts an AdminServer for srv on a free loopback port, with
// extra zoo.cfg keys; it is closed when the test ends.
func startAdmin(t *testing.T, srv *server.Server, extra map[string]string) *Server {
	t.Helper()
	cfg := srv.Config()
	cfg.AdminServerAddress = "127.0.0.1"
	cfg.AdminServerPort = 0
	raw := map[string]string{"admin.rateLimiterIntervalInMS": "0"}
	for k, v := range cfg.Raw {
		raw[k] = v
	}
	for k, v := range extra {
		raw[k] = v
	}
	cfg.Raw = raw
	if u, ok := extra["admin.commandURL"]; ok {
		cfg.AdminCommandURL = u
	}
	a, err := Start(cfg, srv, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		t.Fatalf("admin.Start: %v", err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

// reply is one HTTP answer of the AdminServer.
type reply struct {
	status int
	header http.Header
	body   []byte
}

// json decodes the body as a JSON object (numbers kept exact).
func (r reply) json(t *testing.T) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(r.body))
	d.UseNumber()
	var m map[string]any
	if err := d.Decode(&m); err != nil {
		t.Fatalf("reply is not a JSON object: %v\n%s", err, r.body)
	}
	return m
}

var httpClient = &http.Client{Timeout: wait}

// do sends a request to the AdminServer's path and reads the reply.
func do(t *testing.T, a *Server, method, path, authz string, body io.Reader) reply {
	t.Helper()
	req, err := http.NewRequest(method, "http://"+a.Addr().String()+path, body)
	if err != nil {
		t.Fatal(err)
	}
	if authz != "" {
		req.Header.Set("Authorization", authz)
	}
	resp, err := httpClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("%s %s: read body: %v", method, path, err)
	}
	return reply{status: resp.StatusCode, header: resp.Header, body: b}
}

// run GETs a command and checks the envelope: status 200, "command" the
// primary name, "error" null. It returns the decoded reply.
func run(t *testing.T, a *Server, name, primary string) map[string]any {
	t.Helper()
	r := do(t, a, http.MethodGet, "/commands/"+name, "", nil)
	m := r.json(t)
	if r.status != http.StatusOK {
		t.Fatalf("%s: status %d, want 200\n%s", name, r.status, r.body)
	}
	if m["command"] != primary {
		t.Fatalf("%s: command = %v, want %q", name, m["command"], primary)
	}
	if e, ok := m["error"]; !ok || e != nil {
		t.Fatalf("%s: error = %v (present %v), want null", name, e, ok)
	}
	return m
}

// num returns a JSON number field as int64.
func num(t *testing.T, m map[string]any, key string) int64 {
	t.Helper()
	n, ok := m[key].(json.Number)
	if !ok {
		t.Fatalf("%s = %#v, want a number", key, m[key])
	}
	v, err := n.Int64()
	if err != nil {
		t.Fatalf("%s = %v, want an integer", key, n)
	}
	return v
}

// obj returns an object field.
func obj(t *testing.T, m map[string]any, key string) map[string]any {
	t.Helper()
	o, ok := m[key].(map[string]any)
	if !ok {
		t.Fatalf("%s = %#v, want an object", key, m[key])
	}
	return o
}

// list returns an array field.
func list(t *testing.T, m map[string]any, key string) []any {
	t.Helper()
	l, ok := m[key].([]any)
	if !ok {
		t.Fatalf("%s = %#v, want an array", key, m[key])
	}
	return l
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// connect opens a client session, closed when the test ends.
func connect(t *testing.T, addr string, opts ...client.Option) *client.Conn {
	t.Helper()
	c, err := client.Connect(ctxT(t), addr, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// eventually polls cond until it holds or the deadline passes.
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(wait)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// keysOf returns the sorted keys of m, for messages.
func keysOf(m map[string]any) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ",")
}
