package zkimport

import (
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/klauspost/compress/snappy"

	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// The fixture testdata/zk38 is a data dir written by Apache ZooKeeper 3.8.0
// (Debian) running test/compat's TestImportZK scenario with snapCount=50:
// nine snapshots, nine logs. expected.txt is the tree ZooKeeper itself
// served after restarting on these files.
const fixture = "testdata/zk38"

// dumpLine prints a node as test/compat's dump does.
func dumpLine(path string, data []byte, acl []wire.ACL, st wire.Stat) string {
	d := fmt.Sprintf("%q", data)
	if len(data) > 40 {
		d = fmt.Sprintf("len=%d,sha256=%x", len(data), sha256.Sum256(data))
	}
	var a []string
	for _, e := range acl {
		a = append(a, fmt.Sprintf("%d:%s:%s", e.Perms, e.ID.Scheme, e.ID.ID))
	}
	return fmt.Sprintf("%s data=%s acl=%s czxid=%#x mzxid=%#x pzxid=%#x ctime=%d mtime=%d version=%d cversion=%d aversion=%d ephemeralOwner=%#x dataLength=%d numChildren=%d\n",
		path, d, strings.Join(a, ","), st.Czxid, st.Mzxid, st.Pzxid, st.Ctime, st.Mtime, st.Version, st.Cversion, st.Aversion,
		uint64(st.EphemeralOwner), st.DataLength, st.NumChildren)
}

func dumpDB(db *DB) string {
	var b strings.Builder
	for _, p := range db.Paths() {
		st, _ := db.Stat(p)
		b.WriteString(dumpLine(p, db.Nodes[p].Data, db.Nodes[p].ACL, st))
	}
	return b.String()
}

func expected(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(fixture, "expected.txt"))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// fixtureCopy copies the fixture's version-2 files accepted by keep into a
// temp dir and returns the dir.
func fixtureCopy(t *testing.T, keep func(name string) bool) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "version-2")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	ents, err := os.ReadDir(filepath.Join(fixture, "version-2"))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if !keep(e.Name()) {
			continue
		}
		b, err := os.ReadFile(filepath.Join(fixture, "version-2", e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Dir(dst)
}

func snapshots(t *testing.T) []zkFile {
	t.Helper()
	s, err := listFiles(filepath.Join(fixture, "version-2"), "snapshot")
	if err != nil || len(s) < 3 {
		t.Fatalf("fixture snapshots: %v %v", s, err)
	}
	return s
}

func diffLines(want, got string) string {
	w, g := strings.Split(want, "\n"), strings.Split(got, "\n")
	var b strings.Builder
	for i := 0; i < max(len(w), len(g)); i++ {
		var a, c string
		if i < len(w) {
			a = w[i]
		}
		if i < len(g) {
			c = g[i]
		}
		if a != c {
			fmt.Fprintf(&b, "line %d:\n  want %s\n  got  %s\n", i+1, a, c)
		}
	}
	return b.String()
}

// TestLoadMatchesZooKeeper loads the fixture as ZooKeeper would from each
// of its snapshots in turn (the newer ones removed), so the logs are
// replayed over fuzzy snapshots from every point of the history, down to
// the empty initial one: every load gives ZooKeeper's tree.
func TestLoadMatchesZooKeeper(t *testing.T) {
	want := expected(t)
	for _, snap := range snapshots(t) {
		t.Run(filepath.Base(snap.path), func(t *testing.T) {
			dir := fixtureCopy(t, func(name string) bool {
				if !strings.HasPrefix(name, "snapshot.") {
					return true
				}
				f, _ := listFiles(filepath.Join(fixture, "version-2"), "snapshot")
				for _, s := range f {
					if filepath.Base(s.path) == name {
						return s.zxid <= snap.zxid
					}
				}
				return false
			})
			db, skipped, err := Load(Dirs{Data: dir})
			if err != nil {
				t.Fatal(err)
			}
			if len(skipped) != 0 {
				t.Errorf("skipped %v", skipped)
			}
			if db.SnapshotZxid != snap.zxid {
				t.Errorf("loaded snapshot %#x, want %#x", db.SnapshotZxid, snap.zxid)
			}
			if got := dumpDB(db); got != want {
				t.Errorf("tree differs from ZooKeeper's:\n%s", diffLines(want, got))
			}
			if len(db.Sessions) != 1 {
				t.Errorf("sessions %v, want the one left open", db.Sessions)
			}
			for id, to := range db.Sessions {
				if to != 40000 { // asked 60s; maxSessionTimeout is 20 ticks of 2s
					t.Errorf("session %#x timeout %d, want 40000", id, to)
				}
			}
		})
	}
}

// rewriteNewest copies the fixture, then replaces its newest snapshot with
// the bytes edit returns, stored under newName.
func rewriteNewest(t *testing.T, newName string, edit func([]byte) []byte) (dir string, newest zkFile) {
	t.Helper()
	snaps := snapshots(t)
	newest = snaps[len(snaps)-1]
	dir = fixtureCopy(t, func(string) bool { return true })
	v2 := filepath.Join(dir, "version-2")
	b, err := os.ReadFile(newest.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Remove(filepath.Join(v2, filepath.Base(newest.path))); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(v2, newName), edit(b), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir, newest
}

// snappyJava frames b as snappy-java's SnappyOutputStream does.
func snappyJava(b []byte) []byte {
	var out bytes.Buffer
	out.Write(snappyMagic)
	out.Write([]byte{0, 0, 0, 1, 0, 0, 0, 1})
	for len(b) > 0 {
		n := min(len(b), 32<<10)
		blk := snappy.Encode(nil, b[:n])
		out.Write(binary.BigEndian.AppendUint32(nil, uint32(len(blk))))
		out.Write(blk)
		b = b[n:]
	}
	return out.Bytes()
}

func gzipped(b []byte) []byte {
	var out bytes.Buffer
	w := gzip.NewWriter(&out)
	w.Write(b)
	w.Close()
	return out.Bytes()
}

// TestSnapshotFormats reads the newest snapshot stored plain, gzip- or
// snappy-compressed, and falls back to the previous one when it is
// damaged, as FileSnap.deserialize does.
func TestSnapshotFormats(t *testing.T) {
	want := expected(t)
	snaps := snapshots(t)
	newestName := filepath.Base(snaps[len(snaps)-1].path)
	flip := func(off int) func([]byte) []byte {
		return func(b []byte) []byte {
			b = bytes.Clone(b)
			b[off] ^= 0x40
			return b
		}
	}
	tests := []struct {
		name     string
		file     string
		edit     func([]byte) []byte
		fallback bool
	}{
		{"plain", newestName, func(b []byte) []byte { return b }, false},
		{"gzip", newestName + ".gz", gzipped, false},
		{"snappy", newestName + ".snappy", snappyJava, false},
		{"bit flip in a node: checksum", newestName, flip(2000), true},
		{"bit flip in the header", newestName, flip(1), true},
		{"truncated", newestName, func(b []byte) []byte { return b[:len(b)/2] }, true},
		{"truncated gzip", newestName + ".gz", func(b []byte) []byte { g := gzipped(b); return g[:len(g)-20] }, true},
		{"empty", newestName, func([]byte) []byte { return nil }, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			dir, newest := rewriteNewest(t, tc.file, tc.edit)
			db, skipped, err := Load(Dirs{Data: dir})
			if err != nil {
				t.Fatal(err)
			}
			if fell := db.SnapshotZxid != newest.zxid; fell != tc.fallback {
				t.Errorf("loaded snapshot %#x (newest %#x), fallback=%v want %v; skipped %v", db.SnapshotZxid, newest.zxid, fell, tc.fallback, skipped)
			}
			if tc.fallback && (len(skipped) != 1 || !errors.Is(skipped[0], ErrCorrupt)) {
				t.Errorf("skipped %v, want one ErrCorrupt", skipped)
			}
			if got := dumpDB(db); got != want {
				t.Errorf("tree differs from ZooKeeper's:\n%s", diffLines(want, got))
			}
		})
	}
}

// TestLogDamage: a torn tail ends the log quietly (ZooKeeper ignores a
// partial last transaction); a checksum mismatch stops the load with the
// file and offset.
func TestLogDamage(t *testing.T) {
	logs, err := listFiles(filepath.Join(fixture, "version-2"), "log")
	if err != nil {
		t.Fatal(err)
	}
	last := logs[len(logs)-1]
	// Offsets of the last log's records.
	lr, c, err := openLog(last.path, DefaultMaxBuffer)
	if err != nil {
		t.Fatal(err)
	}
	var recs []logRecord
	for {
		r, err := lr.next()
		if err != nil {
			break
		}
		recs = append(recs, r)
	}
	c.Close()
	if len(recs) < 2 {
		t.Fatalf("last log has %d records", len(recs))
	}
	lastRec := recs[len(recs)-1]

	edit := func(t *testing.T, f func([]byte) []byte) string {
		dir := fixtureCopy(t, func(string) bool { return true })
		p := filepath.Join(dir, "version-2", filepath.Base(last.path))
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, f(b), 0o644); err != nil {
			t.Fatal(err)
		}
		return dir
	}
	t.Run("torn tail", func(t *testing.T) {
		dir := edit(t, func(b []byte) []byte {
			b = bytes.Clone(b)
			end := lastRec.Offset + 12 + int64(len(lastRec.Body)) + 32 + 1
			clear(b[lastRec.Offset+20 : end]) // a write that never reached the disk
			return b
		})
		db, _, err := Load(Dirs{Data: dir})
		if err != nil {
			t.Fatal(err)
		}
		if db.LastZxid != recs[len(recs)-2].Header.Zxid {
			t.Errorf("last zxid %#x, want %#x (the torn transaction dropped)", db.LastZxid, recs[len(recs)-2].Header.Zxid)
		}
	})
	t.Run("checksum", func(t *testing.T) {
		dir := edit(t, func(b []byte) []byte {
			b = bytes.Clone(b)
			b[lastRec.Offset+12+40] ^= 1
			return b
		})
		_, _, err := Load(Dirs{Data: dir})
		if !errors.Is(err, ErrCorrupt) || !strings.Contains(err.Error(), filepath.Base(last.path)) ||
			!strings.Contains(err.Error(), fmt.Sprintf("offset %d", lastRec.Offset)) {
			t.Errorf("err = %v, want ErrCorrupt naming %s at offset %d", err, filepath.Base(last.path), lastRec.Offset)
		}
	})
	t.Run("logs without snapshot", func(t *testing.T) {
		dir := fixtureCopy(t, func(name string) bool { return strings.HasPrefix(name, "log.") })
		if _, _, err := Load(Dirs{Data: dir}); err == nil || !strings.Contains(err.Error(), "no snapshot") {
			t.Errorf("err = %v, want a refusal", err)
		}
	})
}

// TestPassword checks session passwords against java.util.Random as
// ZooKeeperServer.generatePasswd uses it (values printed by a JVM).
func TestPassword(t *testing.T) {
	tests := []struct {
		id   int64
		want string
	}{
		{0, "f22acd4a97e69d6d20a49bb638eadb38"},
		{1, "054cc74a37327db215e702e20c73f005"},
		{-1, "20f62cb5648dc2d771471c8a2486a9ee"},
		{72057594037927936, "f22acd4a97e69d6d20a49bb638eadb38"}, // only the low 48 bits seed Random
		{72058318812528640, "35896b338301c54901e946976a2a5be7"},
	}
	for _, tc := range tests {
		if got := fmt.Sprintf("%x", Password(tc.id)); got != tc.want {
			t.Errorf("Password(%#x) = %s, want %s", tc.id, got, tc.want)
		}
	}
}

// TestTree builds Warden's tree from the fixture: every node, stat (as
// clients see it) and ACL equals ZooKeeper's, and sessions and zxid carry
// over.
func TestTree(t *testing.T) {
	db, _, err := Load(Dirs{Data: fixture})
	if err != nil {
		t.Fatal(err)
	}
	tr, err := db.Tree(tree.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	err = tr.Records(func(r tree.NodeRecord) error {
		st, acl, ok := tr.Lookup(r.Path)
		if !ok {
			return fmt.Errorf("%s: Lookup failed", r.Path)
		}
		b.WriteString(dumpLine(r.Path, r.Data, acl, st))
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// Records walks depth first; the dump is in sorted path order.
	lines := strings.SplitAfter(b.String(), "\n")
	slices.SortFunc(lines, func(a, b string) int { return strings.Compare(pathOf(a), pathOf(b)) })
	if got, want := strings.Join(lines, ""), expected(t); got != want {
		t.Errorf("Warden tree differs from ZooKeeper's:\n%s", diffLines(want, got))
	}
	if tr.EphemeralCount() != 4 {
		t.Errorf("%d ephemerals, want 4 (the open session's)", tr.EphemeralCount())
	}
	sessions := db.FSMSessions()
	for id, s := range sessions {
		if got := tr.Ephemerals(int64(id), "/"); len(got) != 4 {
			t.Errorf("session %#x owns %v", id, got)
		}
		if !bytes.Equal(s.Passwd, Password(int64(id))) || s.Timeout != 40000 {
			t.Errorf("session %#x = %+v", id, s)
		}
	}
	if epoch, counter := db.ZxidState(); int64(epoch)<<32|int64(counter) != db.LastZxid || db.LastZxid == 0 {
		t.Errorf("zxid state %d/%d, last zxid %#x", epoch, counter, db.LastZxid)
	}
}

func pathOf(line string) string {
	p, _, _ := strings.Cut(line, " data=")
	return p
}
