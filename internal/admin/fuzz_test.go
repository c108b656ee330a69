package admin

import (
	"bytes"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/wardenzk/warden/internal/auth"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

var fuzzMethods = []string{http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodDelete, http.MethodOptions, http.MethodTrace, "PATCH"}

// FuzzRequest sends arbitrary requests (method, path and query,
// Authorization, body) to the AdminServer's handler: no panic, a status,
// and for a command a JSON object with "command" and "error" (or the
// snapshot's stream). The server stays well.
func FuzzRequest(f *testing.F) {
	for _, c := range commands {
		f.Add(uint8(0), "/commands/"+c.names[len(c.names)-1], "", []byte(nil))
	}
	f.Add(uint8(0), "/commands", "", []byte(nil))
	f.Add(uint8(1), "/commands/mntr", "", []byte(nil))
	f.Add(uint8(0), "/commands/stmk?traceMask=42", "", []byte(nil))
	f.Add(uint8(0), "/commands/set_trace_mask?traceMask=x&traceMask=1", "", []byte(nil))
	f.Add(uint8(2), "/commands/shed_connections", "digest super:test", []byte(`{"percentage": 0}`))
	f.Add(uint8(2), "/commands/shed", "digest bob:pw", []byte(`{"percentage": 101, "percentage": 1e400}`))
	f.Add(uint8(2), "/commands/restore", "ip", []byte("x"))
	f.Add(uint8(0), "/commands/snapshot?streaming=false", "digest super:test", []byte(nil))
	f.Add(uint8(1), "/commands/snap", "digest a b c", []byte(nil))
	f.Add(uint8(6), "/commands/ruok", "", []byte(nil))
	f.Add(uint8(7), "/commands/%zz", "", []byte(nil))

	srv := servertest.Start(f, servertest.WithConfig(func(c *server.Config) { c.SuperDigest = auth.DigestID("super:test") }))
	cfg := srv.Config()
	cfg.AdminServerAddress = "127.0.0.1"
	cfg.AdminServerPort = 0
	cfg.Raw = map[string]string{"admin.rateLimiterIntervalInMS": "0"}
	a, err := Start(cfg, srv.Server, slog.New(slog.NewTextHandler(io.Discard, nil)))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { a.Close() })

	f.Fuzz(func(t *testing.T, method uint8, target, authz string, body []byte) {
		m := fuzzMethods[int(method)%len(fuzzMethods)]
		req, err := http.NewRequest(m, "http://127.0.0.1"+target, bytes.NewReader(body))
		if err != nil || !strings.HasPrefix(target, "/") {
			return // net/http would not have parsed it either
		}
		req.RemoteAddr = "127.0.0.1:40000"
		if authz != "" {
			req.Header.Set("Authorization", authz)
		}
		rec := httptest.NewRecorder()
		a.mux.ServeHTTP(rec, req)
		if rec.Code < 100 || rec.Code > 599 {
			t.Fatalf("status %d", rec.Code)
		}
		if m != http.MethodHead && strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") {
			var obj map[string]json.RawMessage
			if err := json.Unmarshal(rec.Body.Bytes(), &obj); err != nil {
				t.Fatalf("%s %s: not a JSON object: %v\n%s", m, target, err, rec.Body.Bytes())
			}
			if _, ok := obj["command"]; !ok {
				t.Fatalf("%s %s: no command in %s", m, target, rec.Body.Bytes())
			}
			if _, ok := obj["error"]; !ok {
				t.Fatalf("%s %s: no error in %s", m, target, rec.Body.Bytes())
			}
		}
		ok := httptest.NewRecorder()
		a.mux.ServeHTTP(ok, httptest.NewRequest(http.MethodGet, "/commands/ruok", nil))
		if ok.Code != http.StatusOK {
			t.Fatalf("ruok after %s %s: %d %s", m, target, ok.Code, ok.Body.Bytes())
		}
	})
}
