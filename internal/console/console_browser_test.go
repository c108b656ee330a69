//go:build browser

package console

import (
	"context"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	cdruntime "github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"
	"github.com/wardenzk/warden/client"
	"github.com/wardenzk/warden/wire"
)

// browserWait bounds every step the browser test waits for.
const browserWait = 30 * time.Second

// findChromium is the browser to drive. CI installs Debian's chromium
// (scripts/console-test.sh), so its absence fails the test.
func findChromium(t *testing.T) string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "headless-shell"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium is not installed: the console's browser test needs it " +
		"(run scripts/console-test.sh, which installs it, or apt-get install -y chromium)")
	return ""
}

// TestConsoleInChromium drives the console page in headless Chromium:
// tree, node views, read-only refusal, login, edit, create, delete, and
// the sessions, ensemble and charts views. With
// WARDEN_CONSOLE_SCREENSHOTS=dir it saves screenshots of them there.
func TestConsoleInChromium(t *testing.T) {
	chromium := findChromium(t)
	shots := os.Getenv("WARDEN_CONSOLE_SCREENSHOTS")
	f := newFixture(t, Options{})
	seed(t, f)

	// Chart history: a few samples with traffic in between.
	for i := range 60 {
		for range int(30 + 20*math.Sin(float64(i)/6) + float64(i%3)*4) {
			if _, _, err := f.zk.Exists(ctxT(t), "/app"); err != nil {
				t.Fatal(err)
			}
		}
		f.now.Advance(2 * time.Second)
		f.c.sample()
	}

	// An ephemeral and a watch for the sessions view.
	if _, err := f.zk.Create(ctxT(t), "/services/api/instance-0002", []byte(`{"host":"10.0.3.12","port":8443}`), client.Ephemeral, client.OpenACL); err != nil {
		t.Fatal(err)
	}
	if _, _, _, err := f.zk.GetW(ctxT(t), "/app/config"); err != nil {
		t.Fatal(err)
	}
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(chromium),
		chromedp.NoSandbox, // Chromium refuses to run as root with its sandbox
		chromedp.Flag("disable-dev-shm-usage", true),
		chromedp.Flag("disable-gpu", true),
		chromedp.WindowSize(1360, 860),
	)
	allocCtx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	defer cancelAlloc()
	bctx, cancelBrowser := chromedp.NewContext(allocCtx, chromedp.WithErrorf(func(format string, args ...any) {
		if msg := fmt.Sprintf(format, args...); !strings.Contains(msg, "unhandled") { // CDP events chromedp does not model
			t.Log(msg)
		}
	}))
	defer cancelBrowser()
	ctx, cancel := context.WithTimeout(bctx, 3*browserWait)
	defer cancel()

	run := func(what string, actions ...chromedp.Action) {
		t.Helper()
		if err := chromedp.Run(ctx, actions...); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	// until waits for a JavaScript condition to hold.
	until := func(what, js string) {
		t.Helper()
		run(what, chromedp.Poll(js, nil, chromedp.WithPollingTimeout(browserWait)))
	}
	text := func(sel string) string {
		t.Helper()
		var s string
		run("text of "+sel, chromedp.TextContent(sel, &s, chromedp.ByQuery))
		return s
	}
	shot := func(name string) {
		t.Helper()
		if shots == "" {
			return
		}
		var png []byte
		run("screenshot "+name, chromedp.CaptureScreenshot(&png))
		if err := os.WriteFile(filepath.Join(shots, name), png, 0o644); err != nil {
			t.Fatalf("screenshot %s: %v", name, err)
		}
	}
	js := func(sel string) string { return fmt.Sprintf("document.querySelector(%q)", sel) }
	visible := func(sel string) string { return js(sel) + " && " + js(sel) + ".offsetParent !== null" }
	item := func(path string) string { return fmt.Sprintf(`#tree li[data-path=%q]`, path) }
	toggle := func(path string) string { return item(path) + " > .item > .toggle" }
	name := func(path string) string { return item(path) + " > .item > .name" }
	open := func(path string) {
		t.Helper()
		run("open "+path, chromedp.Click(name(path), chromedp.ByQuery))
		until("node "+path+" shown", js("#node-path")+".textContent === "+fmt.Sprintf("%q", path))
	}

	// The page loads and shows the root's children.
	run("load", chromedp.Navigate(f.web.URL+"/ui/"))
	until("page ready", `document.body.dataset.ready === "1"`)
	until("root listed", js(item("/app"))+" !== null")

	// Navigate the tree and open a JSON node.
	run("expand /app", chromedp.Click(toggle("/app"), chromedp.ByQuery))
	until("/app listed", js(item("/app/config"))+" !== null")
	run("expand /services", chromedp.Click(toggle("/services"), chromedp.ByQuery))
	until("/services listed", js(item("/services/api"))+" !== null")
	run("expand /services/api", chromedp.Click(toggle("/services/api"), chromedp.ByQuery))
	until("/services/api listed", js(item("/services/api/instance-0001"))+" !== null")
	open("/app/config")
	if got := text("#node-data"); !strings.Contains(got, "\n  \"replicas\": 3,") {
		t.Errorf("/app/config not shown as pretty JSON:\n%s", got)
	}
	if got := text("#formats button.active"); got != "JSON" {
		t.Errorf("active format %q, want JSON", got)
	}
	if got := text("#stat"); !strings.Contains(got, "dataLength") || !strings.Contains(got, "mzxid0x") {
		t.Errorf("stat table: %q", got)
	}
	if got := text("#acl tbody"); !strings.Contains(got, "worldanyonecdrwa") {
		t.Errorf("ACL table: %q", got)
	}
	// Untrusted data is shown as text, never run: the <img onerror> in
	// /app/html must not execute.
	open("/app/html")
	if got := text("#node-data"); !strings.Contains(got, "<img src=x onerror=") {
		t.Errorf("/app/html: %q", got)
	}
	var pwned bool
	run("no script ran", chromedp.Evaluate(`window.pwned === true`, &pwned))
	if pwned {
		t.Fatal("node data was interpreted as HTML")
	}
	open("/app/config")
	shot("tree.png")
	run("hex view", chromedp.Click(`#formats button[data-fmt="hex"]`, chromedp.ByQuery))
	if got := text("#node-data"); !strings.HasPrefix(got, "00000000  7b 22 73 65 72 76 69 63") {
		t.Errorf("hex view: %q", got)
	}
	run("json view", chromedp.Click(`#formats button[data-fmt="json"]`, chromedp.ByQuery))

	// Read-only: no edit controls, and the API refuses a write.
	until("read-only note", visible("#readonly-note"))
	var editVisible bool
	run("edit hidden", chromedp.Evaluate(js("#edit-btn")+".offsetParent !== null", &editVisible))
	if editVisible {
		t.Fatal("the edit button is shown to a viewer who is not logged in")
	}
	var status int
	run("anonymous write", chromedp.Evaluate(`fetch("api/node", {method: "PUT", headers: {"X-Warden-Console": "1", "Content-Type": "application/json"},
		body: JSON.stringify({path: "/app/config", data: "hacked"})}).then(r => r.status)`, &status, func(p *cdruntime.EvaluateParams) *cdruntime.EvaluateParams {
		return p.WithAwaitPromise(true)
	}))
	if status != 401 {
		t.Errorf("anonymous write from the page: HTTP %d, want 401", status)
	}
	if d, _ := f.data("/app/config"); d == "hacked" {
		t.Fatal("an anonymous write changed /app/config")
	}

	// Log in with a digest identity.
	run("login", chromedp.Click("#login-btn", chromedp.ByQuery))
	until("login dialog", visible("#login-user"))
	run("credentials",
		chromedp.SendKeys("#login-user", "alice", chromedp.ByQuery),
		chromedp.SendKeys("#login-password", "secret", chromedp.ByQuery),
		chromedp.Click("#login-submit", chromedp.ByQuery))
	until("logged in", js("#who-name")+`.textContent === "alice"`)
	until("edit shown", visible("#edit-btn"))
	var stored string
	run("no password in storage", chromedp.Evaluate(`JSON.stringify(localStorage) + JSON.stringify(sessionStorage) + document.cookie`, &stored))
	if strings.Contains(stored, "secret") {
		t.Fatalf("the password is readable by the page: %q", stored)
	}

	// Edit /app/text.
	open("/app/text")
	run("edit", chromedp.Click("#edit-btn", chromedp.ByQuery))
	until("editor", visible("#edit-text"))
	run("new text", chromedp.SetValue("#edit-text", "feature.flags=on\nretries=5\n", chromedp.ByQuery))
	shot("node-editor.png")
	run("save", chromedp.Click("#save-btn", chromedp.ByQuery))
	until("saved", js("#node-data")+`.textContent === "feature.flags=on\nretries=5\n"`)
	if d, _ := f.data("/app/text"); d != "feature.flags=on\nretries=5\n" {
		t.Errorf("/app/text = %q after the edit", d)
	}

	// Create a child of /app, then delete it.
	open("/app")
	run("new child", chromedp.Click("#new-btn", chromedp.ByQuery))
	until("create form", visible("#create-name"))
	run("create",
		chromedp.SendKeys("#create-name", "made-in-chromium", chromedp.ByQuery),
		chromedp.SetValue("#create-data", `{"by":"chromium"}`, chromedp.ByQuery),
		chromedp.Click("#create-btn", chromedp.ByQuery))
	until("created", js("#node-path")+`.textContent === "/app/made-in-chromium"`)
	until("in the tree", js(item("/app/made-in-chromium"))+" !== null")
	if d, ok := f.data("/app/made-in-chromium"); !ok || d != `{"by":"chromium"}` {
		t.Errorf("/app/made-in-chromium = %q, exists %v", d, ok)
	}
	// Creating it again is refused, with the error shown.
	open("/app")
	run("create again", chromedp.Click("#new-btn", chromedp.ByQuery))
	until("create form", visible("#create-name"))
	run("create twice",
		chromedp.SendKeys("#create-name", "made-in-chromium", chromedp.ByQuery),
		chromedp.Click("#create-btn", chromedp.ByQuery))
	until("error shown", visible("#banner")+` && document.querySelector("#banner").classList.contains("error")`)
	if got := text("#banner-text"); !strings.Contains(got, "exists already") {
		t.Errorf("banner %q", got)
	}
	run("dismiss", chromedp.Click("#banner-close", chromedp.ByQuery), chromedp.Click("#create-cancel", chromedp.ByQuery))
	open("/app/made-in-chromium")
	run("delete", chromedp.Click("#delete-btn", chromedp.ByQuery))
	until("armed", js("#delete-btn")+`.textContent === "Confirm delete"`)
	run("confirm", chromedp.Click("#delete-btn", chromedp.ByQuery))
	until("deleted", js("#node-path")+`.textContent === "/app" && `+js(item("/app/made-in-chromium"))+" === null")
	if _, ok := f.data("/app/made-in-chromium"); ok {
		t.Error("/app/made-in-chromium still exists")
	}

	// A node alice's identity may not change: 403 shown.
	open("/locks")
	run("edit /locks", chromedp.Click("#edit-btn", chromedp.ByQuery))
	until("editor", visible("#edit-text"))
	run("save /locks", chromedp.SetValue("#edit-text", "mine", chromedp.ByQuery), chromedp.Click("#save-btn", chromedp.ByQuery))
	until("refused", visible("#banner")+` && document.querySelector("#banner").classList.contains("error") && document.querySelector("#banner-text").textContent.includes("ACL does not allow")`)
	run("dismiss", chromedp.Click("#banner-close", chromedp.ByQuery), chromedp.Click("#cancel-btn", chromedp.ByQuery))

	// Search.
	run("search", chromedp.SendKeys("#search-q", "instance", chromedp.ByQuery), chromedp.Click(`#search-form button[type="submit"]`, chromedp.ByQuery))
	until("search results", visible("#search-results")+` && document.querySelectorAll("#search-results .hit").length === 3`)
	run("open hit", chromedp.Click(`#search-results .hit`, chromedp.ByQuery))
	until("hit opened", js("#node-path")+`.textContent === "/services/api/instance-0001"`)
	open("/app/config")

	// Sessions.
	id := hex64(f.zk.SessionID())
	run("sessions tab", chromedp.Click(`#tabs button[data-view="sessions"]`, chromedp.ByQuery))
	until("sessions listed", js("#sessions tbody")+fmt.Sprintf(`.textContent.includes(%q)`, id))
	if got := text("#sessions tbody"); !strings.Contains(got, "/services/api/instance-0002") || !strings.Contains(got, "data/app/config") {
		t.Errorf("sessions table lacks the ephemeral or the watch: %q", got)
	}
	shot("sessions.png")

	// Ensemble.
	run("ensemble tab", chromedp.Click(`#tabs button[data-view="ensemble"]`, chromedp.ByQuery))
	until("ensemble listed", js("#ensemble tbody")+`.textContent.includes("standalone")`)
	shot("ensemble.png")

	// Charts: drawn from the samples, with something on the canvas.
	run("charts tab", chromedp.Click(`#tabs button[data-view="charts"]`, chromedp.ByQuery))
	for _, id := range []string{"chart-rps", "chart-latency", "chart-conns"} {
		until(id+" drawn", fmt.Sprintf(`Number(document.getElementById(%q).dataset.points) >= 30`, id))
	}
	var inked int
	run("canvas has ink", chromedp.Evaluate(`(() => { const c = document.getElementById("chart-rps");
		const d = c.getContext("2d").getImageData(0, 0, c.width, c.height).data; let n = 0;
		for (let i = 3; i < d.length; i += 4) if (d[i] > 0) n++; return n; })()`, &inked))
	if inked < 1000 {
		t.Errorf("the throughput chart has %d painted pixels", inked)
	}
	shot("charts.png")

	// Logout makes the page read-only again.
	run("logout", chromedp.Click("#logout-btn", chromedp.ByQuery))
	until("logged out", js("#who-name")+`.textContent === "read-only"`)
}

// seed makes a small, plausible tree.
func seed(t *testing.T, f *fixture) {
	t.Helper()
	nodes := []struct {
		path string
		data string
		acl  []wire.ACL
	}{
		{"/app", "", nil},
		{"/app/config", `{"service":"checkout","replicas":3,"limits":{"cpu":"500m","memory":"256Mi"},"features":["fast-path","audit"]}`, nil},
		{"/app/text", "feature.flags=off\n", nil},
		{"/app/bin", "\x00\x01\x02\x03warden\xff\xfe", nil},
		{"/app/html", `<img src=x onerror="window.pwned=true">`, nil},
		{"/services", "", nil},
		{"/services/api", "", nil},
		{"/services/api/instance-0001", `{"host":"10.0.3.11","port":8443}`, nil},
		{"/services/web", "", nil},
		{"/services/web/instance-0001", `{"host":"10.0.4.20","port":443}`, nil},
		{"/locks", "owned by ops", []wire.ACL{client.DigestACL(wire.PermAll, "ops", "opspass"), {Perms: wire.PermRead, ID: wire.ID{Scheme: "world", ID: "anyone"}}}},
		{"/config", "", nil},
		{"/config/db", "postgres://db.internal:5432/app", nil},
	}
	for _, n := range nodes {
		f.create(n.path, []byte(n.data), n.acl)
	}
}
