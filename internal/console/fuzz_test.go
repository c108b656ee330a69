package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/server/servertest"
)

// FuzzViewData renders arbitrary node data (what any client may have
// written) for the page. With pad set the data follows maxShown-pad%8
// bytes of 'a', so that the cut at maxShown falls inside it. The text
// is valid UTF-8, a prefix of the data, and present for short valid
// UTF-8; the JSON form is valid JSON of the same value; the hex dump has
// a line per 16 bytes shown.
func FuzzViewData(f *testing.F) {
	f.Add([]byte(`{"a": [1, 2.5, "x"]}`), uint16(0))
	f.Add([]byte("plain text\n"), uint16(0))
	f.Add([]byte{0xff, 0x00, 0x10}, uint16(0))
	f.Add([]byte("é"), uint16(3))
	f.Add([]byte("  "), uint16(0))
	f.Fuzz(func(t *testing.T, data []byte, pad uint16) {
		if pad != 0 {
			data = append(bytes.Repeat([]byte{'a'}, maxShown-int(pad%8)), data...)
		}
		v := viewData(data)
		shown := min(len(data), maxShown)
		if v.Size != len(data) || v.Truncated != (len(data) > maxShown) {
			t.Fatalf("size %d truncated %v for %d bytes", v.Size, v.Truncated, len(data))
		}
		if v.Text != nil {
			if !utf8.ValidString(*v.Text) {
				t.Fatalf("text is not valid UTF-8: %q", (*v.Text)[max(0, len(*v.Text)-8):])
			}
			if len(*v.Text) > shown || !bytes.HasPrefix(data, []byte(*v.Text)) {
				t.Fatal("text is not a prefix of the data shown")
			}
		} else if !v.Truncated && utf8.Valid(data) {
			t.Fatal("valid UTF-8 shown without its text")
		}
		if v.JSON != nil {
			var a, b bytes.Buffer
			if json.Compact(&a, []byte(*v.JSON)) != nil || json.Compact(&b, data) != nil || a.String() != b.String() {
				t.Fatalf("JSON form %q of %q", *v.JSON, data)
			}
		}
		if lines := strings.Count(v.Hex, "\n"); lines != (shown+15)/16 {
			t.Fatalf("%d hex lines for %d bytes", lines, shown)
		}
		switch {
		case v.Format == "json" && v.JSON == nil, v.Format == "text" && v.Text == nil:
			t.Fatalf("format %s without that form", v.Format)
		case v.Format != "json" && v.Format != "text" && v.Format != "hex":
			t.Fatalf("format %q", v.Format)
		}
	})
}

var fuzzMethods = []string{"GET", "POST", "PUT", "DELETE", "HEAD"}

// FuzzAPI sends arbitrary requests to the console's API, as any page or
// script may: method, path and query, body, and (by the bits of flags)
// the login cookie, the CSRF header and a JSON content type. No panic,
// a JSON reply ("error" in every error), never a 500 or a 502 (an error
// the console does not map), and the server stays well.
func FuzzAPI(f *testing.F) {
	f.Add(uint8(0), "api/me", []byte(nil), uint8(0))
	f.Add(uint8(0), "api/children?path=/", []byte(nil), uint8(0))
	f.Add(uint8(0), "api/node?path=/zookeeper/config", []byte(nil), uint8(0))
	f.Add(uint8(0), "api/search?q=zoo&path=/", []byte(nil), uint8(0))
	f.Add(uint8(0), "api/sessions", []byte(nil), uint8(0))
	f.Add(uint8(0), "api/ensemble", []byte(nil), uint8(0))
	f.Add(uint8(0), "api/stats", []byte(nil), uint8(0))
	f.Add(uint8(1), "api/node", []byte(`{"path": "/f", "data": "aGk=", "encoding": "base64", "mode": "persistent_sequential", "acl": "creator"}`), uint8(7))
	f.Add(uint8(2), "api/node", []byte(`{"path": "/f0000000000", "data": "x", "version": -1}`), uint8(7))
	f.Add(uint8(3), "api/node?path=/f0000000000&version=0", []byte(nil), uint8(7))
	f.Add(uint8(1), "api/node", []byte(`{"path": "/c", "mode": "container"}`), uint8(3))
	f.Add(uint8(1), "api/login", []byte(`{"user": "u", "password": "p"}`), uint8(6))
	f.Add(uint8(1), "api/logout", []byte(nil), uint8(6))
	f.Add(uint8(1), "api/nothing", []byte("{"), uint8(7))

	srv := servertest.Start(f)
	c := New(srv.Server, Options{SampleInterval: -1, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Now: srv.Clock.Now})
	f.Cleanup(func() { c.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	l, err := c.pool.login(ctx, "fuzz", "pw")
	if err != nil {
		f.Fatal(err)
	}
	token := l.token

	f.Fuzz(func(t *testing.T, method uint8, target string, body []byte, flags uint8) {
		m := fuzzMethods[int(method)%len(fuzzMethods)]
		req, err := http.NewRequest(m, "http://127.0.0.1"+DefaultPrefix+target, bytes.NewReader(body))
		if err != nil {
			return
		}
		req.Host = "127.0.0.1"
		if flags&1 != 0 {
			req.AddCookie(&http.Cookie{Name: cookieName, Value: token})
		}
		if flags&2 != 0 {
			req.Header.Set(csrfHeader, "1")
		}
		if flags&4 != 0 {
			req.Header.Set("Content-Type", "application/json")
		}
		rec := httptest.NewRecorder()
		c.ServeHTTP(rec, req)
		if rec.Code == http.StatusInternalServerError || rec.Code == http.StatusBadGateway {
			t.Fatalf("%s %s: %d %s", m, target, rec.Code, rec.Body.Bytes())
		}
		if strings.HasPrefix(rec.Header().Get("Content-Type"), "application/json") && m != "HEAD" {
			var reply any
			if err := json.Unmarshal(rec.Body.Bytes(), &reply); err != nil {
				t.Fatalf("%s %s: reply is not JSON: %v\n%s", m, target, err, rec.Body.Bytes())
			}
			if obj, ok := reply.(map[string]any); rec.Code >= 400 && (!ok || obj["error"] == nil) {
				t.Fatalf("%s %s: %d without an error: %s", m, target, rec.Code, rec.Body.Bytes())
			}
		}
		if _, _, err := c.pool.anonymousGet(t); err != nil {
			t.Fatalf("the console's session is unwell after %s %s: %v", m, target, err)
		}
	})
}

// anonymousGet reads the root through the console's anonymous session.
func (p *pool) anonymousGet(t *testing.T) ([]byte, client.Stat, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	conn, err := p.anonymous(ctx)
	if err != nil {
		return nil, client.Stat{}, err
	}
	return conn.Get(ctx, "/")
}
