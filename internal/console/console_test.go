package console

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/internal/config"
	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
	"github.com/wardenzk/warden/wire"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// wait bounds anything a test waits for.
const wait = 10 * time.Second

// fixture is a server, its console on httptest, and a Go client of the
// server to set up and check nodes.
type fixture struct {
	t   *testing.T
	srv *servertest.Server
	c   *Console
	web *httptest.Server
	zk  *client.Conn
	// now is the clock of the server and the console.
	now *servertest.Clock
}

func newFixture(t *testing.T, opts Options) *fixture {
	t.Helper()
	srv := servertest.Start(t)
	now := srv.Clock
	opts.SampleInterval = -1
	opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	if opts.Now == nil {
		opts.Now = now.Now
	}
	c := New(srv.Server, opts)
	web := httptest.NewServer(c)
	zk, err := client.Connect(ctxT(t), srv.Addr().String())
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		zk.Close()
		web.Close()
		c.Close()
	})
	return &fixture{t: t, srv: srv, c: c, web: web, zk: zk, now: now}
}

func ctxT(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	t.Cleanup(cancel)
	return ctx
}

// browser is an HTTP client with its own cookies: one viewer.
type browser struct {
	f  *fixture
	hc *http.Client
}

func (f *fixture) browser() *browser {
	jar, _ := cookiejar.New(nil)
	hc := &http.Client{Jar: jar, Timeout: wait}
	f.t.Cleanup(hc.CloseIdleConnections)
	return &browser{f: f, hc: hc}
}

// do sends a request as the console page does (the CSRF header, JSON) and
// decodes the reply into out when it is not nil. It returns the status.
func (b *browser) do(method, path string, body any, out any) int {
	b.f.t.Helper()
	return b.raw(method, path, body, out, map[string]string{csrfHeader: "1"})
}

func (b *browser) raw(method, path string, body any, out any, headers map[string]string) int {
	b.f.t.Helper()
	var rd io.Reader
	if body != nil {
		buf, _ := json.Marshal(body)
		rd = bytes.NewReader(buf)
	}
	req, err := http.NewRequest(method, b.f.web.URL+DefaultPrefix+path, rd)
	if err != nil {
		b.f.t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	resp, err := b.hc.Do(req)
	if err != nil {
		b.f.t.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if out != nil && len(data) > 0 {
		if err := json.Unmarshal(data, out); err != nil {
			b.f.t.Fatalf("%s %s: decode %q: %v", method, path, data, err)
		}
	}
	return resp.StatusCode
}

func (b *browser) login(user, password string) {
	b.f.t.Helper()
	var m me
	if code := b.do("POST", "api/login", loginRequest{User: user, Password: password}, &m); code != 200 || m.User != user || !m.Writable {
		b.f.t.Fatalf("login %s: %d %+v", user, code, m)
	}
}

func (f *fixture) create(path string, data []byte, acl []wire.ACL) {
	f.t.Helper()
	if acl == nil {
		acl = client.OpenACL
	}
	if _, err := f.zk.Create(ctxT(f.t), path, data, client.Persistent, acl); err != nil {
		f.t.Fatalf("create %s: %v", path, err)
	}
}

func (f *fixture) data(path string) (string, bool) {
	f.t.Helper()
	d, _, err := f.zk.Get(ctxT(f.t), path)
	if err == wire.ErrNoNode {
		return "", false
	}
	if err != nil {
		f.t.Fatalf("get %s: %v", path, err)
	}
	return string(d), true
}

func TestPageIsServedWithItsPolicy(t *testing.T) {
	f := newFixture(t, Options{})
	hc := f.browser().hc
	for _, p := range []string{"", "app.js", "app.css", "charts.js"} {
		resp, err := hc.Get(f.web.URL + "/ui/" + p)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != 200 || len(body) == 0 {
			t.Fatalf("GET /ui/%s = %d, %d bytes", p, resp.StatusCode, len(body))
		}
		if csp := resp.Header.Get("Content-Security-Policy"); !strings.Contains(csp, "script-src 'self'") {
			t.Errorf("GET /ui/%s: CSP %q", p, csp)
		}
		if p == "" && !strings.Contains(string(body), "Warden") {
			t.Errorf("index.html does not look like the console")
		}
	}
	var e apiError
	if code := f.browser().do("GET", "api/nope", nil, &e); code != 404 || e.Error == "" {
		t.Errorf("unknown endpoint: %d %+v", code, e)
	}
	if code := f.browser().do("PATCH", "api/node", nil, &e); code != 405 || !strings.Contains(e.Error, "GET, PUT, POST, DELETE") {
		t.Errorf("PATCH api/node: %d %+v", code, e)
	}
}

func TestBrowseChildrenAndDataFormats(t *testing.T) {
	f := newFixture(t, Options{})
	f.create("/app", nil, nil)
	f.create("/app/config", []byte(`{"b":[1,2],"a":"<script>"}`), nil)
	f.create("/app/bin", []byte{0, 1, 2, 0xff, 'A'}, nil)
	f.create("/app/text", []byte("hello\nworld"), nil)
	f.create("/app/text/leaf", nil, nil)
	b := f.browser()

	var root childrenReply
	if code := b.do("GET", "api/children?path=/", nil, &root); code != 200 {
		t.Fatalf("children /: %d", code)
	}
	i := slices.IndexFunc(root.Children, func(c child) bool { return c.Name == "app" })
	if i < 0 || root.Children[i].NumChildren != 3 || root.Children[i].Path != "/app" {
		t.Fatalf("children of /: %+v", root.Children)
	}
	var app childrenReply
	b.do("GET", "api/children?path=/app", nil, &app)
	var names []string
	for _, c := range app.Children {
		names = append(names, c.Name)
	}
	if !slices.Equal(names, []string{"bin", "config", "text"}) || app.Children[2].NumChildren != 1 || app.Children[1].DataLength == 0 {
		t.Fatalf("children of /app: %+v", app.Children)
	}

	tests := []struct {
		path         string
		format       string
		text, json   string // "" = absent
		hexHasPrefix string
	}{
		{"/app/config", "json", `{"b":[1,2],"a":"<script>"}`, "{\n  \"b\": [\n    1,\n    2\n  ],\n  \"a\": \"<script>\"\n}", "00000000  7b 22 62 22"},
		{"/app/bin", "hex", "", "", "00000000  00 01 02 ff 41"},
		{"/app/text", "text", "hello\nworld", "", "00000000  68 65 6c 6c 6f 0a"},
	}
	for _, tt := range tests {
		t.Run(tt.path, func(t *testing.T) {
			var n nodeReply
			if code := b.do("GET", "api/node?path="+tt.path, nil, &n); code != 200 || n.Data == nil {
				t.Fatalf("node: %d %+v", code, n)
			}
			d := n.Data
			if d.Format != tt.format {
				t.Errorf("format %q, want %q", d.Format, tt.format)
			}
			if got := deref(d.Text); got != tt.text {
				t.Errorf("text %q, want %q", got, tt.text)
			}
			if got := deref(d.JSON); got != tt.json {
				t.Errorf("json %q, want %q", got, tt.json)
			}
			if !strings.HasPrefix(d.Hex, tt.hexHasPrefix) {
				t.Errorf("hex %q, want prefix %q", d.Hex, tt.hexHasPrefix)
			}
		})
	}

	var e apiError
	if code := b.do("GET", "api/node?path=/nope", nil, &e); code != 404 || e.Code != "NoNode" {
		t.Errorf("missing node: %d %+v", code, e)
	}
	for _, bad := range []string{"", "relative", "/a/", "/a//b", "/a/../b"} {
		if code := b.do("GET", "api/node?path="+bad, nil, &e); code != 400 {
			t.Errorf("path %q: %d, want 400", bad, code)
		}
	}
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func TestStatAndACL(t *testing.T) {
	f := newFixture(t, Options{})
	acl := []wire.ACL{client.DigestACL(wire.PermAll, "alice", "secret"), {Perms: wire.PermRead, ID: wire.ID{Scheme: "world", ID: "anyone"}}}
	f.create("/guarded", []byte("v1"), acl)
	if _, err := f.zk.Set(ctxT(t), "/guarded", []byte("v2"), 0); err == nil {
		t.Fatal("world could write /guarded")
	}
	_, st, err := f.zk.Get(ctxT(t), "/guarded")
	if err != nil {
		t.Fatal(err)
	}
	var n nodeReply
	if code := f.browser().do("GET", "api/node?path=/guarded", nil, &n); code != 200 {
		t.Fatalf("node: %d", code)
	}
	if n.Stat != viewStat(st) || n.Stat.Czxid != hex64(st.Czxid) || n.Stat.DataLength != 2 {
		t.Errorf("stat %+v, want %+v", n.Stat, viewStat(st))
	}
	// ZooKeeper shows a digest's hash only to those with ADMIN.
	want := []aclView{
		{Scheme: "digest", ID: "alice:x", Perms: "cdrwa", Names: []string{"CREATE", "DELETE", "READ", "WRITE", "ADMIN"}},
		{Scheme: "world", ID: "anyone", Perms: "r", Names: []string{"READ"}},
	}
	got, _ := json.Marshal(n.ACL)
	exp, _ := json.Marshal(want)
	if !bytes.Equal(got, exp) {
		t.Errorf("acl %s, want %s", got, exp)
	}

	// A node the viewer may not read is a 403 (exists needs READ too),
	// and locked in its parent's listing.
	f.create("/secret", []byte("hidden"), []wire.ACL{client.DigestACL(wire.PermAll, "alice", "secret")})
	var e apiError
	if code := f.browser().do("GET", "api/node?path=/secret", nil, &e); code != 403 || e.Code != "NoAuth" {
		t.Errorf("unreadable node: %d %+v", code, e)
	}
	var kids childrenReply
	f.browser().do("GET", "api/children?path=/", nil, &kids)
	if i := slices.IndexFunc(kids.Children, func(c child) bool { return c.Name == "secret" }); i < 0 || !kids.Children[i].Locked {
		t.Errorf("children of /: %+v", kids.Children)
	}
	var s nodeReply
	alice := f.browser()
	alice.login("alice", "secret")
	if code := alice.do("GET", "api/node?path=/secret", nil, &s); code != 200 || s.Data == nil || deref(s.Data.Text) != "hidden" {
		t.Errorf("alice reads /secret: %d %+v", code, s)
	}
}

func TestSearch(t *testing.T) {
	f := newFixture(t, Options{})
	for _, p := range []string{"/svc", "/svc/alpha", "/svc/beta", "/svc/beta/Alpha-2", "/other", "/other/alpha3"} {
		f.create(p, nil, nil)
	}
	b := f.browser()
	var r searchResult
	if code := b.do("GET", "api/search?path=/svc&q=alpha", nil, &r); code != 200 {
		t.Fatalf("search: %d", code)
	}
	if !slices.Equal(r.Matches, []string{"/svc/alpha", "/svc/beta/Alpha-2"}) || r.Truncated || r.Visited != 4 {
		t.Errorf("search under /svc: %+v", r)
	}
	b.do("GET", "api/search?q=alpha", nil, &r)
	if !slices.Equal(r.Matches, []string{"/other/alpha3", "/svc/alpha", "/svc/beta/Alpha-2"}) {
		t.Errorf("search under /: %+v", r)
	}
	var e apiError
	if code := b.do("GET", "api/search?path=/svc", nil, &e); code != 400 {
		t.Errorf("search without q: %d", code)
	}
	if code := b.do("GET", "api/search?path=/none&q=x", nil, &r); code != 200 || r.Skipped != 1 || len(r.Matches) != 0 {
		t.Errorf("search under a missing node: %d %+v", code, r)
	}
}

func TestSearchIsBounded(t *testing.T) {
	kids := func(_ context.Context, p string) ([]string, error) {
		if strings.Count(p, "/") >= 4 {
			return nil, nil
		}
		return []string{"c", "b", "a"}, nil // a tree of 1+3+9+27+81 nodes
	}
	r, err := search(context.Background(), "/", "a", 10, 100, kids)
	if err != nil {
		t.Fatal(err)
	}
	if r.Visited != 10 || !r.Truncated || r.Matches[0] != "/a" {
		t.Errorf("bounded by visits: %+v", r)
	}
	r, _ = search(context.Background(), "/", "a", 1000, 5, kids)
	if len(r.Matches) != 5 || !r.Truncated {
		t.Errorf("bounded by matches: %+v", r)
	}
	r, _ = search(context.Background(), "/", "zzz", 1000, 5, kids)
	if r.Visited != 121 || r.Truncated {
		t.Errorf("whole tree: %+v", r)
	}
}

func TestWritesNeedALogin(t *testing.T) {
	f := newFixture(t, Options{})
	f.create("/open", []byte("before"), nil) // world may do anything: the ACL would allow it
	b := f.browser()
	var e apiError
	writes := []struct {
		method, path string
		body         any
	}{
		{"PUT", "api/node", writeRequest{Path: "/open", Data: "after"}},
		{"POST", "api/node", writeRequest{Path: "/open/new"}},
		{"DELETE", "api/node?path=/open", nil},
	}
	for _, w := range writes {
		if code := b.do(w.method, w.path, w.body, &e); code != http.StatusUnauthorized || !strings.Contains(e.Error, "log in") {
			t.Errorf("%s %s without login: %d %+v, want 401", w.method, w.path, code, e)
		}
	}
	if d, ok := f.data("/open"); !ok || d != "before" {
		t.Errorf("/open changed: %q %v", d, ok)
	}
	if _, ok := f.data("/open/new"); ok {
		t.Error("/open/new was created")
	}
	// A stale or forged cookie is no login either.
	u := f.web.URL + "/ui/"
	req, _ := http.NewRequest("GET", u, nil)
	b.hc.Jar.SetCookies(req.URL, []*http.Cookie{{Name: cookieName, Value: "forged"}})
	if code := b.do("PUT", "api/node", writeRequest{Path: "/open", Data: "x"}, &e); code != http.StatusUnauthorized {
		t.Errorf("forged cookie: %d", code)
	}
	var m me
	b.do("GET", "api/me", nil, &m)
	if m.User != "" || m.Writable {
		t.Errorf("me with a forged cookie: %+v", m)
	}
}

func TestWritesAreCSRFSafe(t *testing.T) {
	f := newFixture(t, Options{})
	f.create("/open", []byte("before"), nil)
	b := f.browser()
	b.login("alice", "secret")
	var e apiError
	cases := []struct {
		name    string
		headers map[string]string
	}{
		{"no custom header", map[string]string{}},
		{"foreign origin", map[string]string{csrfHeader: "1", "Origin": "http://evil.example"}},
		{"cross-site fetch", map[string]string{csrfHeader: "1", "Sec-Fetch-Site": "cross-site"}},
		{"form content type", map[string]string{csrfHeader: "1", "Content-Type": "text/plain"}},
	}
	for _, c := range cases {
		if code := b.raw("PUT", "api/node", writeRequest{Path: "/open", Data: "after"}, &e, c.headers); code != http.StatusForbidden {
			t.Errorf("%s: %d %+v, want 403", c.name, code, e)
		}
	}
	if code := b.raw("POST", "api/login", loginRequest{User: "x", Password: "y"}, &e, map[string]string{}); code != http.StatusForbidden {
		t.Errorf("login without the custom header: %d", code)
	}
	if d, _ := f.data("/open"); d != "before" {
		t.Errorf("/open changed to %q", d)
	}
	if code := b.raw("PUT", "api/node", writeRequest{Path: "/open", Data: "after"}, &e,
		map[string]string{csrfHeader: "1", "Origin": f.web.URL, "Sec-Fetch-Site": "same-origin"}); code != 200 {
		t.Errorf("same-origin write: %d %+v", code, e)
	}
}

func TestWritesWithDigestLogin(t *testing.T) {
	f := newFixture(t, Options{})
	f.create("/app", []byte("v0"), nil)
	b := f.browser()
	b.login("alice", "secret")

	var w written
	if code := b.do("PUT", "api/node", writeRequest{Path: "/app", Data: "v1"}, &w); code != 200 || w.Stat.Version != 1 {
		t.Fatalf("set: %d %+v", code, w)
	}
	if d, _ := f.data("/app"); d != "v1" {
		t.Errorf("/app = %q after set", d)
	}
	var e apiError
	v := int32(0)
	if code := b.do("PUT", "api/node", writeRequest{Path: "/app", Data: "v2", Version: &v}, &e); code != http.StatusConflict || e.Code != "BadVersion" {
		t.Errorf("set with a stale version: %d %+v", code, e)
	}
	if code := b.do("PUT", "api/node", writeRequest{Path: "/app", Data: "AAEC", Encoding: "base64"}, &w); code != 200 {
		t.Errorf("set base64: %d", code)
	}
	if d, _ := f.data("/app"); d != "\x00\x01\x02" {
		t.Errorf("/app = %q after a base64 set", d)
	}

	if code := b.do("POST", "api/node", writeRequest{Path: "/app/child", Data: "c"}, &w); code != http.StatusCreated || w.Path != "/app/child" {
		t.Fatalf("create: %d %+v", code, w)
	}
	if d, ok := f.data("/app/child"); !ok || d != "c" {
		t.Errorf("/app/child = %q %v", d, ok)
	}
	if code := b.do("POST", "api/node", writeRequest{Path: "/app/seq-", Mode: "persistent_sequential"}, &w); code != http.StatusCreated || w.Path != "/app/seq-0000000001" {
		t.Errorf("create sequential: %d %+v", code, w)
	}
	if code := b.do("POST", "api/node", writeRequest{Path: "/app/mine", ACL: "creator"}, &w); code != http.StatusCreated {
		t.Errorf("create with the creator ACL: %d", code)
	}
	if err := f.zk.AddAuth(ctxT(t), "digest", []byte("alice:secret")); err != nil {
		t.Fatal(err)
	}
	acl, _, err := f.zk.GetACL(ctxT(t), "/app/mine")
	if err != nil || len(acl) != 1 || acl[0].ID != client.DigestACL(0, "alice", "secret").ID {
		t.Errorf("ACL of /app/mine: %v %v", acl, err)
	}
	if code := b.do("POST", "api/node", writeRequest{Path: "/app/child"}, &e); code != http.StatusConflict || e.Code != "NodeExists" {
		t.Errorf("create twice: %d %+v", code, e)
	}
	if code := b.do("DELETE", "api/node?path=/app", nil, &e); code != http.StatusConflict || e.Code != "NotEmpty" {
		t.Errorf("delete a parent: %d %+v", code, e)
	}
	if code := b.do("DELETE", "api/node?path=/app/child", nil, nil); code != http.StatusNoContent {
		t.Errorf("delete: %d", code)
	}
	if _, ok := f.data("/app/child"); ok {
		t.Error("/app/child still exists")
	}
	if code := b.do("DELETE", "api/node?path=/", nil, &e); code != 400 {
		t.Errorf("delete /: %d", code)
	}

	// After logout the same browser is read-only again.
	b.do("POST", "api/logout", struct{}{}, nil)
	if code := b.do("PUT", "api/node", writeRequest{Path: "/app", Data: "v9"}, &e); code != http.StatusUnauthorized {
		t.Errorf("set after logout: %d", code)
	}
}

func TestWritesRefusedByACL(t *testing.T) {
	f := newFixture(t, Options{})
	f.create("/alices", []byte("a"), []wire.ACL{client.DigestACL(wire.PermAll, "alice", "secret"), {Perms: wire.PermRead, ID: wire.ID{Scheme: "world", ID: "anyone"}}})
	bob := f.browser()
	bob.login("bob", "hunter2")
	var e apiError
	if code := bob.do("PUT", "api/node", writeRequest{Path: "/alices", Data: "b"}, &e); code != http.StatusForbidden || e.Code != "NoAuth" || !strings.Contains(e.Error, "ACL") {
		t.Errorf("bob sets /alices: %d %+v, want 403 NoAuth", code, e)
	}
	if code := bob.do("POST", "api/node", writeRequest{Path: "/alices/x"}, &e); code != http.StatusForbidden {
		t.Errorf("bob creates under /alices: %d %+v", code, e)
	}
	// alice with the wrong password is another identity.
	mallory := f.browser()
	mallory.login("alice", "guess")
	if code := mallory.do("PUT", "api/node", writeRequest{Path: "/alices", Data: "m"}, &e); code != http.StatusForbidden {
		t.Errorf("alice:guess sets /alices: %d", code)
	}
	alice := f.browser()
	alice.login("alice", "secret")
	if code := alice.do("PUT", "api/node", writeRequest{Path: "/alices", Data: "by alice"}, nil); code != 200 {
		t.Errorf("alice sets /alices: %d", code)
	}
	if d, _ := f.data("/alices"); d != "by alice" {
		t.Errorf("/alices = %q", d)
	}
}

func TestSessionsShowEphemeralsAndWatches(t *testing.T) {
	f := newFixture(t, Options{})
	f.create("/watched", nil, nil)
	if _, err := f.zk.Create(ctxT(t), "/eph", nil, client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.zk.GetW(ctxT(t), "/watched"); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.zk.ChildrenW(ctxT(t), "/"); err != nil {
		t.Fatal(err)
	}
	var r struct {
		Sessions []sessionView `json:"sessions"`
	}
	if code := f.browser().do("GET", "api/sessions", nil, &r); code != 200 {
		t.Fatalf("sessions: %d", code)
	}
	id := hex64(f.zk.SessionID())
	i := slices.IndexFunc(r.Sessions, func(s sessionView) bool { return s.ID == id })
	if i < 0 {
		t.Fatalf("session %s not in %+v", id, r.Sessions)
	}
	s := r.Sessions[i]
	if !slices.Equal(s.Ephemerals, []string{"/eph"}) || !slices.Equal(s.DataWatches, []string{"/watched"}) ||
		!slices.Equal(s.ChildWatches, []string{"/"}) || s.TimeoutMs <= 0 || s.Remote == "" || !s.Local || s.ExpiresInMs == nil {
		t.Errorf("session %+v", s)
	}

	// The console's own sessions are named.
	b := f.browser()
	b.login("alice", "secret")
	f.browser().do("GET", "api/children?path=/", nil, nil)
	b.do("GET", "api/sessions", nil, &r)
	var own []string
	for _, s := range r.Sessions {
		if s.Console != "" {
			own = append(own, s.Console)
		}
	}
	slices.Sort(own)
	if !slices.Equal(own, []string{"alice", "anonymous"}) {
		t.Errorf("console sessions %v, want alice and anonymous", own)
	}
}

func TestEnsembleStandalone(t *testing.T) {
	f := newFixture(t, Options{})
	var r ensembleView
	if code := f.browser().do("GET", "api/ensemble", nil, &r); code != 200 {
		t.Fatalf("ensemble: %d", code)
	}
	if len(r.Members) != 1 || !r.OK || !r.Quorum {
		t.Fatalf("ensemble %+v", r)
	}
	m := r.Members[0]
	if !m.Self || m.Mode != "standalone" || m.State != "serving" || m.Zxid == "" || m.Connections < 1 || m.Nodes < 1 {
		t.Errorf("member %+v", m)
	}
}

func TestEnsembleOfThree(t *testing.T) {
	e := servertest.StartTestEnsemble(t, 3)
	e.WaitServing(e.All()...)
	var members []string
	for _, i := range e.All() {
		members = append(members, e.Addr(i))
	}
	c := New(e.Member(e.Leader()), Options{Members: members, SampleInterval: -1})
	defer c.Close()
	web := httptest.NewServer(c)
	defer web.Close()
	f := &fixture{t: t, web: web}
	var r ensembleView
	if code := f.browser().do("GET", "api/ensemble", nil, &r); code != 200 {
		t.Fatalf("ensemble: %d", code)
	}
	if len(r.Members) != 3 || !r.Quorum || r.Leader == "" {
		t.Fatalf("ensemble %+v", r)
	}
	modes := map[string]int{}
	for _, m := range r.Members {
		modes[m.Mode]++
	}
	if modes["leader"] != 1 || modes["follower"] != 2 {
		t.Errorf("modes %v in %+v", modes, r.Members)
	}
}

func TestStatsSamples(t *testing.T) {
	f := newFixture(t, Options{})
	b := f.browser()
	var r statsReply
	if code := b.do("GET", "api/stats", nil, &r); code != 200 || len(r.Samples) != 0 || r.Monitor["znode_count"] == nil {
		t.Fatalf("stats before any sample: %d %+v", code, r)
	}
	for i := range 10 {
		if _, _, err := f.zk.Exists(ctxT(t), "/"); err != nil {
			t.Fatal(i, err)
		}
	}
	f.now.Advance(2 * time.Second)
	f.c.sample()
	b.do("GET", "api/stats", nil, &r)
	if len(r.Samples) != 1 {
		t.Fatalf("samples %+v", r.Samples)
	}
	s := r.Samples[0]
	// At least the 10 exists, and the console's own requests, over 2 s.
	if s.Requests < 5 || s.Connections < 1 || s.Znodes < 1 || s.At != f.now.Now().UnixMilli() {
		t.Errorf("sample %+v", s)
	}
}

func TestHistory(t *testing.T) {
	t0 := time.Unix(100, 0)
	h := newHistory(3)
	h.add(reading{at: t0, received: 100})
	if len(h.snapshot()) != 0 {
		t.Fatal("the first reading only primes the rates")
	}
	h.add(reading{at: t0.Add(2 * time.Second), received: 120, conns: 3, avgLat: 1.5, maxLat: 7})
	h.add(reading{at: t0.Add(4 * time.Second), received: 10}) // srst
	h.add(reading{at: t0.Add(4 * time.Second), received: 50}) // same instant: ignored
	h.add(reading{at: t0.Add(5 * time.Second), received: 20})
	h.add(reading{at: t0.Add(6 * time.Second), received: 30})
	got := h.snapshot()
	want := []float64{0, 10, 10}
	if len(got) != 3 {
		t.Fatalf("samples %+v", got)
	}
	for i := range want {
		if got[i].Requests != want[i] {
			t.Errorf("sample %d: %v req/s, want %v", i, got[i].Requests, want[i])
		}
	}
	if got[2].At != t0.Add(6*time.Second).UnixMilli() {
		t.Errorf("last sample at %d", got[2].At)
	}
	r := readMetrics(t0, []server.Metric{{Name: "packets_received", Value: int64(7)}, {Name: "avg_latency", Value: "0.5"},
		{Name: "num_alive_connections", Value: 2}, {Name: "version", Value: "3.8.4"}})
	if r.received != 7 || r.avgLat != 0.5 || r.conns != 2 {
		t.Errorf("readMetrics: %+v", r)
	}
}

func TestLoginsEndWhenIdleOrOverTheLimit(t *testing.T) {
	f := newFixture(t, Options{MaxLogins: 2, LoginIdle: time.Minute})
	a, b, c := f.browser(), f.browser(), f.browser()
	a.login("a", "x")
	f.now.Advance(time.Second)
	b.login("b", "x")
	f.now.Advance(time.Second)
	c.login("c", "x") // a is the least recently used: its login ends
	var m me
	if a.do("GET", "api/me", nil, &m); m.User != "" {
		t.Errorf("a still logged in: %+v", m)
	}
	if c.do("GET", "api/me", nil, &m); m.User != "c" {
		t.Errorf("c: %+v", m)
	}
	f.now.Advance(2 * time.Minute)
	if b.do("GET", "api/me", nil, &m); m.User != "" {
		t.Errorf("b survived being idle: %+v", m)
	}
	if n := f.c.pool.count(); n != 0 {
		t.Errorf("%d logins left", n)
	}
}

func TestCloseEndsTheConsoleSessions(t *testing.T) {
	f := newFixture(t, Options{})
	b := f.browser()
	b.login("alice", "secret")
	f.browser().do("GET", "api/children?path=/", nil, nil) // opens the anonymous session
	before := len(f.srv.Sessions())
	if before < 3 { // the test's client, the anonymous session, alice
		t.Fatalf("%d sessions before Close", before)
	}
	f.c.Close()
	deadline := time.Now().Add(wait)
	for len(f.srv.Sessions()) != before-2 {
		if time.Now().After(deadline) {
			t.Fatalf("sessions after Close: %d, want %d", len(f.srv.Sessions()), before-2)
		}
		time.Sleep(10 * time.Millisecond) // polling, bounded by deadline
	}
	var e apiError
	if code := b.do("GET", "api/children?path=/", nil, &e); code != http.StatusServiceUnavailable {
		t.Errorf("after Close: %d %+v", code, e)
	}
}

func TestViewData(t *testing.T) {
	big := bytes.Repeat([]byte("é"), maxShown) // 2 bytes a rune: cut in half at maxShown+1?
	v := viewData(append([]byte("x"), big...))
	if !v.Truncated || v.Text == nil || len(*v.Text) > maxShown || v.JSON != nil {
		t.Errorf("truncated text: truncated=%v text=%v", v.Truncated, v.Text != nil)
	}
	if v := viewData(nil); v.Format != "hex" && v.Format != "text" {
		t.Errorf("empty: %+v", v)
	}
	if v := viewData([]byte("  ")); v.JSON != nil || v.Format != "text" {
		t.Errorf("blank: %+v", v)
	}
	if v := viewData([]byte("42")); deref(v.JSON) != "42" {
		t.Errorf("number: %+v", v)
	}
	if got := hexDump([]byte("0123456789abcdefXY")); got != "00000000  30 31 32 33 34 35 36 37  38 39 61 62 63 64 65 66  |0123456789abcdef|\n00000010  58 59                                             |XY|\n" {
		t.Errorf("hexDump:\n%s", got)
	}
}

func TestMembersOf(t *testing.T) {
	if got := MembersOf(config.Config{ClientPort: 2181}); got != nil {
		t.Errorf("standalone: %v", got)
	}
	cfg := config.Config{ClientPort: 2181, Servers: []config.Server{
		{ID: 1, Host: "zk1", PeerPort: 2888},
		{ID: 2, Host: "zk2", PeerPort: 2888, ClientHost: "10.0.0.2", ClientPort: 2182},
		{ID: 3, Host: "zk3", PeerPort: 2888, ClientHost: "0.0.0.0", ClientPort: 2183},
	}}
	if got, want := MembersOf(cfg), []string{"zk1:2181", "10.0.0.2:2182", "zk3:2183"}; !slices.Equal(got, want) {
		t.Errorf("MembersOf = %v, want %v", got, want)
	}
}

func TestCheckPath(t *testing.T) {
	for p, ok := range map[string]bool{"/": true, "/a": true, "/a/b-1.x": true, `/a\x00`: true, "a": false, "/a/": false, "//": false, "/a/./b": false, "/a/..": false, "/a\x00b": false} {
		if err := checkPath(p); (err == nil) != ok {
			t.Errorf("checkPath(%q) = %v", p, err)
		}
	}
}

func TestSamplerRunsUntilClose(t *testing.T) {
	srv := servertest.Start(t)
	c := New(srv.Server, Options{SampleInterval: 5 * time.Millisecond, Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	deadline := time.Now().Add(wait)
	for {
		c.histMu.Lock()
		n := len(c.hist.samples)
		c.histMu.Unlock()
		if n >= 2 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d samples after %v", n, wait)
		}
		time.Sleep(5 * time.Millisecond) // polling, bounded by deadline
	}
	c.Close() // goleak (TestMain) checks the sampler stopped
	c.Close() // and that Close may be called twice
}
