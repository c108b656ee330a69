package zkimport

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/adler32"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/wardenzk/warden/internal/fsm"
	"github.com/wardenzk/warden/internal/fuzzcheck"
	"github.com/wardenzk/warden/internal/tree"
	"github.com/wardenzk/warden/wire"
)

// The fuzz targets read with the production limit (DefaultMaxBuffer, 64
// MiB) so that a length trusted before it is checked against the input
// shows as an allocation far beyond the input's size.

// encodeSnapshot writes db as a ZooKeeper snapshot stream (see doc.go):
// sessions in id order, one ACL cache entry per node, the nodes in path
// order (parents first) and the seal. parseSnapshot must read it back to
// the same database.
func encodeSnapshot(db *DB) []byte {
	var e wire.Encoder
	e.Int32(snapMagic)
	e.Int32(2)
	e.Int64(0) // dbid
	ids := make([]int64, 0, len(db.Sessions))
	for id := range db.Sessions {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	e.Int32(int32(len(ids)))
	for _, id := range ids {
		e.Int64(id)
		e.Int32(db.Sessions[id])
	}
	paths := db.Paths()
	e.Int32(int32(len(paths)))
	for i, p := range paths {
		e.Int64(int64(i))
		wire.EncodeACLs(&e, db.Nodes[p].ACL)
	}
	for i, p := range paths {
		n := db.Nodes[p]
		if p == "/" {
			p = "" // the root's name in a snapshot
		}
		e.String(p)
		e.Buffer(n.Data)
		e.Int64(int64(i))
		st := n.Stat
		e.Int64(st.Czxid)
		e.Int64(st.Mzxid)
		e.Int64(st.Ctime)
		e.Int64(st.Mtime)
		e.Int32(st.Version)
		e.Int32(st.Cversion)
		e.Int32(st.Aversion)
		e.Int64(st.EphemeralOwner)
		e.Int64(st.Pzxid)
	}
	e.String("/") // the end of the nodes
	e.Int64(int64(adler32.Checksum(e.Bytes())))
	e.String("/")
	return e.Bytes()
}

// logFile frames txns (each header and body) as a transaction log file.
func logFile(txns [][]byte) []byte {
	var e wire.Encoder
	e.Int32(logMagic)
	e.Int32(2)
	e.Int64(0)
	for _, t := range txns {
		e.Int64(int64(adler32.Checksum(t)))
		e.Buffer(t)
		e.Byte('B')
	}
	return e.Bytes()
}

// txnFrames is the input form of FuzzLoad's log: each txn after a 2-byte
// length, so that the fuzzer changes transactions, not checksums.
func txnFrames(txns [][]byte) []byte {
	var out []byte
	for _, t := range txns {
		out = binary.BigEndian.AppendUint16(out, uint16(len(t)))
		out = append(out, t...)
	}
	return out
}

func splitFrames(data []byte) [][]byte {
	var txns [][]byte
	for len(data) >= 2 {
		n := min(int(binary.BigEndian.Uint16(data)), len(data)-2)
		txns = append(txns, data[2:2+n])
		data = data[2+n:]
	}
	return txns
}

// fixtureTxns returns the transactions of a fixture log.
func fixtureTxns(tb testing.TB, name string) [][]byte {
	tb.Helper()
	lr, c, err := openLog(filepath.Join(fixture, "version-2", name), DefaultMaxBuffer)
	if err != nil {
		tb.Fatal(err)
	}
	defer c.Close()
	var txns [][]byte
	for {
		r, err := lr.next()
		if errors.Is(err, io.EOF) {
			return txns
		}
		if err != nil {
			tb.Fatal(err)
		}
		var h wire.Encoder
		h.Int64(r.Header.ClientID)
		h.Int32(r.Header.Cxid)
		h.Int64(r.Header.Zxid)
		h.Int64(r.Header.Time)
		h.Int32(r.Header.Type)
		txns = append(txns, append(h.Bytes(), r.Body...))
	}
}

func fixtureFile(tb testing.TB, name string) []byte {
	tb.Helper()
	b, err := os.ReadFile(filepath.Join(fixture, "version-2", name))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// txn encodes a transaction: header then body.
func txn(typ int32, zxid int64, body []byte) []byte {
	var e wire.Encoder
	e.Int64(0x42) // the session
	e.Int32(1)
	e.Int64(zxid)
	e.Int64(1000)
	e.Int32(typ)
	return append(e.Bytes(), body...)
}

// checkDB checks the invariants of a loaded database: the root exists,
// every other node's parent exists and lists it, and every listed child
// exists.
func checkDB(t *testing.T, db *DB) {
	t.Helper()
	if db.Nodes["/"] == nil {
		t.Fatal("no root")
	}
	for p, n := range db.Nodes {
		if p != "/" {
			parent, name := split(p)
			pn := db.Nodes[parent]
			if pn == nil {
				t.Fatalf("%q has no parent %q", p, parent)
			}
			if _, ok := pn.kids[name]; !ok {
				t.Fatalf("parent %q does not list %q", parent, p)
			}
		}
		for kid := range n.kids {
			cp := p + "/" + kid
			if p == "/" {
				cp = "/" + kid
			}
			if db.Nodes[cp] == nil {
				t.Fatalf("%q lists a missing child %q", p, kid)
			}
		}
	}
}

// FuzzSnapshot feeds arbitrary snapshot files, plain, gzip- or
// snappy-framed, to the snapshot reader. It must not panic, must refuse
// with ErrCorrupt, must allocate in proportion to the bytes it read, and
// what it accepts must be a consistent database that encodes and parses
// back to itself.
func FuzzSnapshot(f *testing.F) {
	for _, name := range []string{"snapshot.0", "snapshot.20"} {
		b := fixtureFile(f, name)
		f.Add(uint8(0), b)
		f.Add(uint8(1), gzipped(b))
		f.Add(uint8(2), snappyJava(b))
	}
	small := newDB()
	small.Sessions[7] = 30000
	small.Nodes["/zookeeper/quota"].Data = nil
	f.Add(uint8(0), encodeSnapshot(small))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, kind uint8, data []byte) {
		name := filepath.Join(dir, []string{"snapshot.1", "snapshot.1.gz", "snapshot.1.snappy"}[kind%3])
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		db := newDB()
		err := readSnapshotFile(name, DefaultMaxBuffer, db)
		os.Remove(name)
		// The decompressed stream again, to measure what parsing it
		// allocates against the bytes it had: a gzip stream may expand a
		// thousandfold, a length read from it must not.
		var r io.Reader = bytes.NewReader(data)
		switch kind % 3 {
		case 1:
			if zr, err := gzip.NewReader(r); err == nil {
				r = zr
			}
		case 2:
			if sr, err := newSnappyReader(bufio.NewReader(r)); err == nil {
				r = sr
			}
		}
		s := newStreamReader(r, DefaultMaxBuffer)
		streamDB := newDB()
		var streamErr error
		allocs := fuzzcheck.HeapAllocs(func() { streamErr = parseSnapshot(s, streamDB) })
		if limit := 32*(s.off+int64(len(data))) + fuzzcheck.Slack; allocs > uint64(limit) {
			t.Fatalf("allocated %d bytes after reading %d decompressed bytes", allocs, s.off)
		}
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		if streamErr != nil {
			t.Fatalf("the file is accepted, its stream is not: %v", streamErr)
		}
		checkDB(t, db)
		again := newDB()
		enc := encodeSnapshot(db)
		if err := parseSnapshot(newStreamReader(bytes.NewReader(enc), DefaultMaxBuffer), again); err != nil {
			t.Fatalf("the re-encoded snapshot is refused: %v", err)
		}
		for _, d := range []*DB{db, again} {
			for _, n := range d.Nodes {
				n.kids = nil
			}
		}
		if !reflect.DeepEqual(db.Nodes, again.Nodes) || !reflect.DeepEqual(db.Sessions, again.Sessions) {
			t.Fatal("the snapshot does not parse back to the same database")
		}
	})
}

// FuzzTxnLog feeds arbitrary transaction log files to the log reader: no
// panic, allocations in proportion to the file, records in file order
// within it, and the same records whether the file arrives whole or a
// byte at a time.
func FuzzTxnLog(f *testing.F) {
	f.Add(logFile(fixtureTxns(f, "log.1")[:20]))
	f.Add(logFile(fixtureTxns(f, "log.133")))
	f.Add(logFile([][]byte{txn(opCreate, 1, createBody("/a", false, 1))}))
	f.Add(fixtureFile(f, "log.e8")[:300])
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		name := filepath.Join(dir, "log.1")
		if err := os.WriteFile(name, data, 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(name)
		type result struct {
			recs []logRecord
			err  error
		}
		read := func(wrap func(io.Reader) io.Reader) result {
			lr, c, err := openLog(name, DefaultMaxBuffer)
			if err != nil {
				return result{err: err}
			}
			defer c.Close()
			lr.r = bufio.NewReader(wrap(lr.r))
			var res result
			for {
				rec, err := lr.next()
				if err != nil {
					if !errors.Is(err, io.EOF) {
						res.err = err
					}
					return res
				}
				res.recs = append(res.recs, rec)
			}
		}
		var whole result
		fuzzcheck.AllocBound(t, 8*len(data)+fuzzcheck.Slack, func() {
			whole = read(func(r io.Reader) io.Reader { return r })
		})
		if whole.err != nil && !errors.Is(whole.err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", whole.err)
		}
		end := int64(16)
		for _, r := range whole.recs {
			if r.Offset < end {
				t.Fatalf("record at offset %d overlaps the previous one (ends at %d)", r.Offset, end)
			}
			end = r.Offset + 12 + 32 + int64(len(r.Body)) + 1
			if end > int64(len(data)) {
				t.Fatalf("record at offset %d ends at %d, after the file's %d bytes", r.Offset, end, len(data))
			}
		}
		chunked := read(iotest.OneByteReader)
		if fmt.Sprint(chunked.err) != fmt.Sprint(whole.err) || !reflect.DeepEqual(chunked.recs, whole.recs) {
			t.Fatalf("whole: %d records, %v; a byte at a time: %d records, %v", len(whole.recs), whole.err, len(chunked.recs), chunked.err)
		}
	})
}

// FuzzLoad imports a data directory made of a fuzzed snapshot and a log of
// fuzzed transactions (framed with valid checksums, see txnFrames), as
// `warden import-zk` does: Load, the tree, the state machine, and its
// snapshot. Nothing may panic; a refusal wraps ErrCorrupt (or, for the
// tree, tree.ErrBadRecords); an accepted directory gives a consistent
// database whose Warden snapshot Warden restores.
func FuzzLoad(f *testing.F) {
	snap0 := fixtureFile(f, "snapshot.0")
	f.Add(snap0, txnFrames(fixtureTxns(f, "log.1")[:30]))
	f.Add(fixtureFile(f, "snapshot.20"), txnFrames(fixtureTxns(f, "log.22")))
	var multi wire.Encoder
	multi.Int32(2)
	multi.Int32(opCreate)
	multi.Buffer(createBody("/m", true, 1))
	multi.Int32(opSetData)
	multi.Buffer(txnBody(func(e *wire.Encoder) { e.String("/m"); e.Buffer([]byte("x")); e.Int32(1) }))
	var session wire.Encoder
	session.Int32(30000)
	f.Add(snap0, txnFrames([][]byte{
		txn(opCreateSession, 1, session.Bytes()),
		txn(opMulti, 2, multi.Bytes()),
		txn(opCreate, 3, createBody("/zookeeper/quota/m", false, 1)),
		txn(opCreate, 4, createBody("/zookeeper/quota/m/zookeeper_limits", false, 1)),
		txn(opCreate, 5, createBody("/zookeeper/quota/m/zookeeper_stats", false, 1)),
		txn(opCloseSession, 6, nil),
	}))
	dir := f.TempDir()
	v2 := filepath.Join(dir, "version-2")
	if err := os.MkdirAll(v2, 0o755); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, snap, frames []byte) {
		snapName, logName := filepath.Join(v2, "snapshot.0"), filepath.Join(v2, "log.1")
		if err := os.WriteFile(snapName, snap, 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(logName, logFile(splitFrames(frames)), 0o644); err != nil {
			t.Fatal(err)
		}
		defer os.Remove(snapName)
		defer os.Remove(logName)
		db, _, err := Load(Dirs{Data: dir})
		if err != nil {
			if !errors.Is(err, ErrCorrupt) && !bytes.Contains([]byte(err.Error()), []byte("no valid snapshot")) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		checkDB(t, db)
		tr, err := db.Tree(tree.Options{})
		if err != nil {
			if !errors.Is(err, tree.ErrBadRecords) {
				t.Fatalf("tree error without ErrBadRecords: %v", err)
			}
			return
		}
		epoch, counter := db.ZxidState()
		fm := fsm.NewFromState(fsm.Options{}, tr, db.FSMSessions(), epoch, counter, 1)
		var buf bytes.Buffer
		if err := fm.WriteSnapshot(&buf); err != nil {
			t.Fatal(err)
		}
		if _, err := fsm.Restore(fsm.Options{}, &buf); err != nil {
			t.Fatalf("Warden refuses the snapshot of an imported database: %v", err)
		}
	})
}
