package cli

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/wardenzk/warden/server"
	"github.com/wardenzk/warden/server/servertest"
)

// waitBuffer is an io.Writer whose readers can wait for some text.
type waitBuffer struct {
	mu      sync.Mutex
	b       bytes.Buffer
	changed chan struct{}
}

func newWaitBuffer() *waitBuffer { return &waitBuffer{changed: make(chan struct{})} }

func (w *waitBuffer) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.changed)
	w.changed = make(chan struct{})
	return w.b.Write(p)
}

// take returns and clears the contents.
func (w *waitBuffer) take() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	s := w.b.String()
	w.b.Reset()
	return s
}

// waitFor waits (bounded) until the contents contain s.
func (w *waitBuffer) waitFor(t *testing.T, s string) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for {
		w.mu.Lock()
		ok := strings.Contains(w.b.String(), s)
		ch := w.changed
		w.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("no %q in output; have:\n%s", s, w.take())
		}
	}
}

var (
	reTime = regexp.MustCompile(`(?m)^([cm]time = ).*$`)
	reZxid = regexp.MustCompile(`(?m)^([cmp]Zxid = )0x[0-9a-f]+$`)
	reSess = regexp.MustCompile(`(?m)^(ephemeralOwner = )0x[0-9a-f]{6,}$`)
)

// normalize hides what differs between runs: times, zxids, session ids.
func normalize(s string) string {
	s = reTime.ReplaceAllString(s, "${1}<time>")
	s = reZxid.ReplaceAllString(s, "${1}<zxid>")
	return reSess.ReplaceAllString(s, "${1}<session>")
}

func startShell(t *testing.T) (*Shell, *waitBuffer, *servertest.Server) {
	t.Helper()
	srv := servertest.Start(t, servertest.WithConfig(func(c *server.Config) { c.ExtendedTypesEnabled = true }))
	out := newWaitBuffer()
	sh := New(Config{Servers: srv.Addr().String(), Timeout: 10 * time.Second, Out: out, Err: out, Version: "test"})
	if err := sh.Connect(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { sh.Close() })
	return sh, out, srv
}

const stat0 = `cZxid = <zxid>
ctime = <time>
mZxid = <zxid>
mtime = <time>
pZxid = <zxid>
`

// TestCommands runs zkCli.sh commands and compares the output with what
// zkCli.sh 3.8 prints for them (recorded against Apache ZooKeeper 3.8.0).
func TestCommands(t *testing.T) {
	sh, out, _ := startShell(t)
	steps := []struct {
		line string
		want string
		code int
	}{
		{"create /a hello", "Created /a\n", 0},
		{"create /a again", "Node already exists: /a\n", 1},
		{"create /nope/child", "Node does not exist: /nope/child\n", 1},
		{"create -s /a/seq- s", "Created /a/seq-0000000000\n", 0},
		{"create -e /a/eph e", "Created /a/eph\n", 0},
		{"create -c /cont c", "Created /cont\n", 0},
		{"create -t 3600000 /ttl t", "Created /ttl\n", 0},
		{"create -t abc /y", "-t argument must be a long value\n", 1},
		{"create -t 10 -e /y", "TTLs cannot be used with Ephemeral znodes\n", 1},
		{"create -c -s /y", "-c cannot be combined with -s or -e. Containers cannot be ephemeral or sequential.\n", 1},
		{"create /a/b b", "Created /a/b\n", 0},
		{"create /a/b/c", "Created /a/b/c\n", 0},
		{"create /a/eph/x", "Ephemerals cannot have children: /a/eph/x\n", 1},
		{"ls /", "[a, cont, ttl, zookeeper]\n", 0},
		{"ls /a", "[b, eph, seq-0000000000]\n", 0},
		{"ls -R /a", "/a\n/a/b\n/a/eph\n/a/seq-0000000000\n/a/b/c\n", 0},
		{"ls /nothing", "Node does not exist: /nothing\n", 1},
		{"ls nopath", "Path must start with / character\n", 1},
		{"ls", "ls [-s] [-w] [-R] path\n", 1},
		{"ls -x /", "org.apache.commons.cli.UnrecognizedOptionException: Unrecognized option: -x\n", 1},
		{"get /a", "hello\n", 0},
		{"get /a/b/c", "null\n", 0},
		{"get -s /a", "hello\n" + stat0 + "cversion = 3\ndataVersion = 0\naclVersion = 0\nephemeralOwner = 0x0\ndataLength = 5\nnumChildren = 3\n", 0},
		{"get /nothing", "Node does not exist: /nothing\n", 1},
		{"set -v 0 /a v1", "", 0},
		{"set -v 0 /a v2", "version No is not valid : /a\n", 1},
		{"set -s /a 'v 3'", stat0 + "cversion = 3\ndataVersion = 2\naclVersion = 0\nephemeralOwner = 0x0\ndataLength = 3\nnumChildren = 3\n", 0},
		{"get /a", "v 3\n", 0},
		{"stat /nothing", "Node does not exist: /nothing\n", 1},
		{"stat /a/eph", stat0 + "cversion = 0\ndataVersion = 0\naclVersion = 0\nephemeralOwner = <session>\ndataLength = 1\nnumChildren = 0\n", 0},
		{"delete -v 5 /a/b/c", "version No is not valid : /a/b/c\n", 1},
		{"delete /a/b", "Node not empty: /a/b\n", 1},
		{"getAllChildrenNumber /a", "4\n", 0},
		{"getEphemerals", "[/a/eph]\n", 0},
		{"deleteall -b 2 /a", "", 0},
		{"stat /a", "Node does not exist: /a\n", 1},
		{"create /acl x", "Created /acl\n", 0},
		{"getAcl /acl", "'world,'anyone\n: cdrwa\n", 0},
		{"setAcl /acl world:anyone:r", "", 0},
		{"set /acl y", "Insufficient permission : /acl\n", 1},
		{"setAcl /acl foo", "foo does not have the form scheme:id:perm\nAcl is not valid : null\n", 1},
		{"create /dig d digest:alice:aYXlLOpEooaV1cRAvUL1fp9Qt7E=:cdrwa,ip:127.0.0.1:r", "Created /dig\n", 0},
		{"getAcl /dig", "'digest,'alice:x\n: cdrwa\n'ip,'127.0.0.1\n: r\n", 0},
		{"create /bad b nosuch:x:cdrwa", "KeeperErrorCode = InvalidACL for /bad\nAcl is not valid : /bad\n", 1},
		{"addauth digest alice:secret", "", 0},
		{"whoami", "Auth scheme: User\nip: 127.0.0.1\ndigest: alice\n", 0},
		{"sync /", "Sync is OK\n", 0},
		{"removewatches /acl", "KeeperErrorCode = No such watcher for /acl\n", 1},
		{"addWatch -m FOO /acl", "addWatch [-m mode] path # optional mode is one of [PERSISTENT, PERSISTENT_RECURSIVE] - default is PERSISTENT_RECURSIVE\n", 1},
		{"printwatches", "printwatches is on\n", 0},
		{"version", "ZooKeeper CLI version: test\n", 0},
		{"redo 99", "Command index out of range\n", 1},
		{"redo 0", "Created /a\n", 0}, // /a was deleted by deleteall
		{"get /cont/nothing --json", "Node does not exist: /cont/nothing\n", 1},
		{"get --json /cont", `{"data":"c","encoding":"utf8","path":"/cont"}` + "\n", 0},
		{"ls --json /", `{"children":["a","acl","cont","dig","ttl","zookeeper"],"path":"/"}` + "\n", 0},
		{"tree /cont", "/cont (1 B)\n", 0},
	}
	for _, st := range steps {
		err := sh.Exec(context.Background(), st.line)
		if got := normalize(out.take()); got != st.want {
			t.Errorf("%s: output\n%s\nwant\n%s", st.line, got, st.want)
		}
		if code := exitStatus(err); code != st.code {
			t.Errorf("%s: status %d, want %d", st.line, code, st.code)
		}
	}
	sh.Exec(context.Background(), "history")
	if got := out.take(); !strings.HasPrefix(got, "47 - removewatches /acl\n") || !strings.HasSuffix(got, "52 - create /a hello\n53 - get /cont/nothing --json\n54 - get --json /cont\n55 - ls --json /\n56 - tree /cont\n57 - history\n") {
		t.Errorf("history:\n%s", got)
	}
	sh.Exec(context.Background(), "nosuch")
	if got := out.take(); !strings.HasPrefix(got, "ZooKeeper -server host:port") || !strings.Contains(got, "\tls [-s] [-w] [-R] path\n") ||
		!strings.HasSuffix(got, "Command not found: Command not found nosuch\n") {
		t.Errorf("nosuch:\n%s", got)
	}
}

// TestWatchEvents checks that one-shot and persistent watch events are
// printed as zkCli.sh prints them, when printwatches is on.
func TestWatchEvents(t *testing.T) {
	sh, out, _ := startShell(t)
	ctx := context.Background()
	for _, line := range []string{"create /w x", "get -w /w", "ls -w /w", "addWatch -m PERSISTENT_RECURSIVE /w"} {
		if err := sh.Exec(ctx, line); err != nil {
			t.Fatalf("%s: %v", line, err)
		}
	}
	out.take()
	sh.Exec(ctx, "set /w y")
	out.waitFor(t, "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/w\n"+
		"\nWATCHER::\n\nWatchedEvent state:SyncConnected type:NodeDataChanged path:/w\n")
	out.take()
	sh.Exec(ctx, "create /w/c")
	out.waitFor(t, "WatchedEvent state:SyncConnected type:NodeChildrenChanged path:/w\n")
	out.waitFor(t, "WatchedEvent state:SyncConnected type:NodeCreated path:/w/c\n")
	out.take()
	sh.Exec(ctx, "removewatches /w -a")
	out.waitFor(t, "\nWATCHER::\n\nWatchedEvent state:SyncConnected type:PersistentWatchRemoved path:/w\n")
}

// TestWatchCommand streams events with watch -n.
func TestWatchCommand(t *testing.T) {
	sh, out, srv := startShell(t)
	other := New(Config{Servers: srv.Addr().String(), Out: newWaitBuffer()})
	if err := other.Connect(context.Background(), ""); err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.Exec(context.Background(), "create /s")
	done := make(chan error, 1)
	go func() { done <- sh.Exec(context.Background(), "watch -R -n 2 /s") }()
	out.waitFor(t, "watching /s") // on Err, once the watch is set
	out.take()
	other.Exec(context.Background(), "create /s/a 1")
	other.Exec(context.Background(), "set /s/a 2")
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if got := out.take(); got != "NodeCreated /s/a\nNodeDataChanged /s/a\n" {
		t.Errorf("watch output %q", got)
	}
}
