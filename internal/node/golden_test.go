package node

import (
	"flag"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/storage"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// writeGolden makes TestGoldenDataDirs write the data directory of the
// current format versions (see goldenDir) before checking every one.
var writeGolden = flag.Bool("golden.write", false, "write testdata/"+goldenPrefix+"<versions> with this build's formats")

const goldenPrefix = "datadir-"

// goldenDir names the golden data directory of this build's formats: one
// per combination of the WAL, snapshot file, snapshot stream and log entry
// versions.
func goldenDir() string {
	return fmt.Sprintf("%swal%d-snapfile%d-state%d-entry%d", goldenPrefix,
		storage.WALVersion, storage.SnapshotFileVersion, fsm.SnapshotVersion, fsm.EntryVersion)
}

// TestGoldenDataDirs opens each data directory under testdata/datadir-*,
// written by an earlier build with goldenScript, and checks that this build
// recovers from it the state the script made: the data directories of
// every format version Warden ever wrote stay readable. A directory of
// this build's versions must be among them, so that changing a format
// without adding one fails here. To add it:
//
//	go test ./internal/node -run TestGoldenDataDirs -golden.write
//
// and commit the new directory, keeping the older ones.
func TestGoldenDataDirs(t *testing.T) {
	if *writeGolden {
		writeGoldenDir(t, filepath.Join("testdata", goldenDir()))
	}
	dirs, err := filepath.Glob(filepath.Join("testdata", goldenPrefix+"*"))
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(dirs, filepath.Join("testdata", goldenDir())) {
		t.Errorf("no golden data directory testdata/%s for this build's format versions: write it with "+
			"go test ./internal/node -run TestGoldenDataDirs -golden.write, and commit it", goldenDir())
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			data := t.TempDir()
			copyDir(t, dir, data) // recovery writes (the lock, a new WAL segment)
			n, err := Open(goldenConfig(data, 100000))
			if err != nil {
				t.Fatal(err)
			}
			if n.rec.base.GetIndex() <= 1 || !strings.HasPrefix(n.rec.source, "snapshot") {
				t.Errorf("recovered from %s (index %d), want a snapshot file", n.rec.source, n.rec.base.GetIndex())
			}
			var after, batches int
			err = storage.ScanWAL(storage.OSFS, storage.WALDir(data), func(_ storage.WALSegment, recs []storage.WALRecord) error {
				for _, r := range recs {
					if d := r.Entry.GetData(); r.Type == storage.RecordEntry && r.Entry.GetIndex() > n.rec.base.GetIndex() && len(d) > 0 {
						after++
						if len(fsmEntries(t, d)) > 1 {
							batches++
						}
					}
				}
				return nil
			})
			if err != nil || after < 4 || batches == 0 {
				t.Errorf("%d entries with data after the snapshot in the WAL, %d of them batches (%v); want the script's second part, with a batch", after, batches, err)
			}
			if err := n.Run(); err != nil {
				t.Fatal(err)
			}
			defer n.Stop()
			n.RLock()
			got := describeState(n.FSM())
			n.RUnlock()
			if got != goldenState {
				t.Errorf("recovered state:\n%s\nwant:\n%s", got, goldenState)
			}
		})
	}
}

// fsmEntries decodes the data of a raft entry.
func fsmEntries(t *testing.T, data []byte) []fsm.Entry {
	t.Helper()
	es, err := fsm.DecodeEntries(data, 0)
	if err != nil {
		t.Fatal(err)
	}
	return es
}

// goldenState is the state goldenScript leaves: the tree without the
// zxids and times (the order of the concurrent creates may vary), the
// sessions, and the last zxid (epoch 2: the script restarts once).
const goldenState = `last zxid 0x20000000c
session 0x100 timeout 30000 owner 0
session 0x200 timeout 10000 owner 0
/ data="" version 0 cversion 3 aversion 0 owner 0x0 acl 1
/app data="app" version 0 cversion 11 aversion 0 owner 0x0 acl 1
/app/acl data="" version 0 cversion 0 aversion 1 owner 0x0 acl 1
/app/after-restart data="b" version 0 cversion 0 aversion 0 owner 0x200 acl 1
/app/config data="v4" version 4 cversion 0 aversion 0 owner 0x0 acl 1
/app/container data="" version 0 cversion 1 aversion 0 owner 0x8000000000000000 acl 1
/app/container/c data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/app/lock data="a" version 0 cversion 0 aversion 0 owner 0x100 acl 1
/app/m1 data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/app/m2 data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/app/seq-0000000001 data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/app/seq-0000000002 data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/app/seq-0000000003 data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch data="" version 0 cversion 8 aversion 0 owner 0x0 acl 1
/batch/b0 data="0" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b1 data="1" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b2 data="2" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b3 data="3" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b4 data="4" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b5 data="5" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b6 data="6" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/batch/b7 data="7" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/zookeeper data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
/zookeeper/config data="" version 0 cversion 0 aversion -1 owner 0x0 acl 1
/zookeeper/quota data="" version 0 cversion 0 aversion 0 owner 0x0 acl 1
`

// describeState lists f as goldenState does.
func describeState(f *fsm.FSM) string {
	var b strings.Builder
	fmt.Fprintf(&b, "last zxid %#x\n", uint64(f.LastZxid()))
	for _, id := range f.SessionIDs() {
		s, _ := f.Session(id)
		fmt.Fprintf(&b, "session %#x timeout %d owner %d\n", uint64(id), s.Timeout, s.Owner)
	}
	var nodes []string
	_ = f.Tree().Records(func(r tree.NodeRecord) error {
		nodes = append(nodes, fmt.Sprintf("%s data=%q version %d cversion %d aversion %d owner %#x acl %d\n",
			r.Path, r.Data, r.Version, r.StoredCversion, r.Aversion, uint64(r.EphemeralOwner), len(r.ACL)))
		return nil
	})
	slices.Sort(nodes)
	b.WriteString(strings.Join(nodes, ""))
	return b.String()
}

// goldenConfig is a standalone member on dir.
func goldenConfig(dir string, snapCount uint64) Config {
	return Config{FS: storage.OSFS, DataDir: dir, DataLogDir: dir, ForceSync: true, SnapCount: snapCount,
		Tick: 5 * time.Millisecond, Logger: quiet(), FSM: fsm.Options{},
		Fatal: func(err error) { panic(fmt.Sprintf("golden member fatal: %v", err)) }}
}

// writeGoldenDir runs goldenScript on a new data directory dir: a first
// part with a small snapCount, so that its state ends up in snapshot
// files, then, after a restart (a new term: epoch 2), a second part that
// stays in the WAL. The WAL segments' preallocated zero tails are cut off
// (a shorter segment reads the same).
func writeGoldenDir(t *testing.T, dir string) {
	if _, err := os.Stat(dir); err == nil {
		t.Fatalf("%s exists: a golden directory is written once per format version; remove it first to rewrite it", dir)
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	run := func(snapCount uint64, script func(g *goldenWriter)) {
		n, err := Open(goldenConfig(dir, snapCount))
		if err != nil {
			t.Fatal(err)
		}
		if err := n.Run(); err != nil {
			t.Fatal(err)
		}
		g := &goldenWriter{t: t, n: n}
		deadline := time.Now().Add(10 * time.Second)
		for !n.Role().Serving() {
			if time.Now().After(deadline) {
				t.Fatal("the golden member does not serve")
			}
			time.Sleep(time.Millisecond)
		}
		script(g)
		n.Stop()
	}
	run(10, goldenScript1)
	run(100000, goldenScript2)

	if err := os.Remove(storage.LockPath(dir)); err != nil {
		t.Fatal(err)
	}
	segs, err := filepath.Glob(filepath.Join(storage.WALDir(dir), "*.wal"))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range segs {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		end := len(b)
		for end > 0 && b[end-1] == 0 {
			end--
		}
		if err := os.WriteFile(p, b[:end], 0o644); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("wrote %s", dir)
}

// goldenWriter proposes the script's entries, each with a fixed time.
type goldenWriter struct {
	t    *testing.T
	n    *Node
	time int64
}

// send proposes e, with the next fixed time, without waiting; the
// channel gets its outcome.
func (g *goldenWriter) send(e *fsm.Entry) <-chan error {
	g.t.Helper()
	g.time += 1000
	e.Time = 1_700_000_000_000 + g.time
	ch := make(chan error, 1)
	if err := g.n.Propose(e, time.Now(), func(out fsm.Output, err error) {
		if err == nil && out.Err != wire.CodeOK {
			err = fmt.Errorf("op %d: %v", e.Op, out.Err)
		}
		ch <- err
	}); err != nil {
		g.t.Fatal(err)
	}
	return ch
}

// wait waits for the outcome of a send, failing on an error.
func (g *goldenWriter) wait(ch <-chan error) {
	g.t.Helper()
	select {
	case err := <-ch:
		if err != nil {
			g.t.Fatal(err)
		}
	case <-time.After(20 * time.Second):
		g.t.Fatal("a proposal was never answered")
	}
}

// propose proposes e and waits until it is applied without error.
func (g *goldenWriter) propose(e *fsm.Entry) {
	g.t.Helper()
	g.wait(g.send(e))
}

func (g *goldenWriter) session(id fsm.SessionID, timeout int32) {
	g.propose(&fsm.Entry{Op: wire.OpCreateSession, Session: id,
		Body: wire.Marshal(&fsm.SessionRecord{Timeout: timeout, Passwd: []byte("0123456789abcdef")})})
}

func (g *goldenWriter) op(id fsm.SessionID, op wire.OpCode, req wire.Record) {
	g.propose(&fsm.Entry{Op: op, Session: id, Body: wire.Marshal(req)})
}

func (g *goldenWriter) create(id fsm.SessionID, path, data string, mode wire.CreateMode) {
	g.op(id, wire.OpCreate, &wire.CreateRequest{Path: path, Data: []byte(data), ACL: wire.OpenACLUnsafe, Flags: int32(mode)})
}

// goldenScript1 is the first part of the golden script: sessions, every
// kind of node, updates, a multi, a delete, an ACL change; a session that
// the second part closes.
func goldenScript1(g *goldenWriter) {
	const a, b, c = 0x100, 0x200, 0x300
	g.session(a, 30000)
	g.session(b, 10000)
	g.session(c, 4000)
	g.create(a, "/app", "app", wire.ModePersistent)
	g.create(a, "/app/config", "v0", wire.ModePersistent)
	for i := int32(0); i < 2; i++ {
		g.op(a, wire.OpSetData, &wire.SetDataRequest{Path: "/app/config", Data: []byte(fmt.Sprintf("v%d", i+1)), Version: i})
	}
	for i := 0; i < 3; i++ {
		g.create(b, "/app/seq-", "", wire.ModePersistentSequential)
	}
	g.create(a, "/app/lock", "a", wire.ModeEphemeral)
	g.create(c, "/app/tmp", "c", wire.ModeEphemeral)
	g.op(a, wire.OpMulti, &wire.MultiRequest{Ops: []wire.MultiOp{
		{Type: wire.OpCreate, Req: &wire.CreateRequest{Path: "/app/m1", ACL: wire.OpenACLUnsafe}},
		{Type: wire.OpCreate, Req: &wire.CreateRequest{Path: "/app/m2", ACL: wire.OpenACLUnsafe}},
		{Type: wire.OpSetData, Req: &wire.SetDataRequest{Path: "/app/config", Data: []byte("v3"), Version: 2}},
	}})
	g.create(a, "/gone", "", wire.ModePersistent)
	g.op(a, wire.OpDelete, &wire.DeleteRequest{Path: "/gone", Version: -1})
	g.create(a, "/app/acl", "", wire.ModePersistent)
	g.op(a, wire.OpSetACL, &wire.SetACLRequest{Path: "/app/acl", Version: -1, ACL: wire.ReadACLUnsafe})
	g.op(a, wire.OpCreateContainer, &wire.CreateRequest{Path: "/app/container", ACL: wire.OpenACLUnsafe, Flags: int32(wire.ModeContainer)})
	g.create(a, "/app/container/c", "", wire.ModePersistent)
}

// goldenScript2 is the second part: a closed session (its ephemeral
// goes), an update, a new ephemeral, and creates proposed together (which
// the member may carry several to a raft entry: batches).
func goldenScript2(g *goldenWriter) {
	const a, b, c = 0x100, 0x200, 0x300
	g.propose(&fsm.Entry{Op: wire.OpCloseSession, Session: c})
	g.op(a, wire.OpSetData, &wire.SetDataRequest{Path: "/app/config", Data: []byte("v4"), Version: 3})
	g.create(b, "/app/after-restart", "b", wire.ModeEphemeral)
	g.create(a, "/batch", "", wire.ModePersistent)
	var sent []<-chan error
	for i := 0; i < 8; i++ {
		sent = append(sent, g.send(&fsm.Entry{Op: wire.OpCreate, Session: a,
			Body: wire.Marshal(&wire.CreateRequest{Path: fmt.Sprintf("/batch/b%d", i), Data: []byte(fmt.Sprint(i)), ACL: wire.OpenACLUnsafe})}))
	}
	for _, ch := range sent {
		g.wait(ch)
	}
}

// copyDir copies the regular files under src to dst.
func copyDir(t *testing.T, src, dst string) {
	t.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, p)
		if err != nil {
			return err
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), b, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
}
