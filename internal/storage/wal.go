package storage

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"sync"
	"time"

	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// DefaultSegmentSize is the size of a WAL segment file: 64 MiB.
const DefaultSegmentSize = 64 << 20

// WALOptions configures a WAL.
type WALOptions struct {
	// SegmentSize is the size in bytes each segment file is preallocated to.
	// A record larger than a segment gets a segment of its own, as large as
	// needed. Default DefaultSegmentSize (64 MiB).
	SegmentSize int64
	// NoSync skips the data sync of Save and SaveSnapshot (ZooKeeper's
	// forceSync=no). Unsafe: a power cut loses acknowledged writes.
	// Default false.
	NoSync bool
	// Logger receives recovery and warning messages. Default slog.Default().
	Logger *slog.Logger
	// KeepAfter, when not 0, makes ReadAll return every entry after this
	// index even where a newer snapshot marker covers it: recovery loaded an
	// older snapshot because the newest file was damaged. If those entries
	// were released, OpenWAL fails with a *CorruptError. Default 0: the
	// newest marker decides.
	KeepAfter uint64
	// SlowSync is how long an fsync of the log may take before it is
	// logged at warn level and reported slow to OnSync (ZooKeeper's
	// fsync.warningthresholdms). Default (0) DefaultSlowSync; a negative
	// value reports every fsync.
	SlowSync time.Duration
	// OnSync, when set, is called after each successful data sync of the
	// tail segment (the fsync a Save or SaveSnapshot waits for), with its
	// duration and whether it was slower than SlowSync. It runs with the
	// WAL's lock held: it must be quick and must not call the WAL.
	OnSync func(d time.Duration, slow bool)
	// Spares is how many released segment files the WAL keeps to write
	// over instead of creating new ones (see ReleaseTo). Default (0) as
	// many as fit in DefaultSpareBytes, at least one and at most
	// DefaultSpares; a negative value keeps none.
	Spares int
	// Now is the clock fsyncs are timed with. Default time.Now; tests
	// inject one that makes a sync look slow.
	Now func() time.Time
}

// DefaultSlowSync is the default WALOptions.SlowSync: 1 s, ZooKeeper's
// default fsync.warningthresholdms.
const DefaultSlowSync = time.Second

// WAL is the write-ahead log holding raft's entries, its HardState and
// snapshot markers, in a directory of preallocated segment files (the format
// is in the package documentation).
//
// A WAL is opened with OpenWAL, which recovers it; ReadAll then returns the
// log as raft must see it. Save, SaveSnapshot and ReleaseTo append to or
// trim the log. Methods are safe for concurrent use, though Save is meant to
// be called from one goroutine (raft's Ready loop).
//
// Syncs: in the steady state a Save with mustSync costs exactly one
// fdatasync of the tail segment (File.Datasync: the segment is preallocated,
// so appending changes no metadata fdatasync would skip), and a Save
// without it costs none. Starting a segment adds an fdatasync of the old
// tail, an fsync of the new file and one of the directory.
type WAL struct {
	fs   FS
	dir  string
	opts WALOptions
	log  *slog.Logger

	// releaseMu serialises ReleaseTo calls, whose file deletions run
	// outside mu.
	releaseMu sync.Mutex

	mu sync.Mutex
	// err, once set, is returned by every later call: the WAL's durable
	// state is unknown (a failed fsync or an unexpected write error).
	err error
	// segs lists the segment files, oldest first. Invariant: sequence
	// numbers are consecutive and the last one is open as tail.
	segs []segmentName
	tail File
	// salt is tail's salt: its records carry it.
	salt uint64
	// off is where the next record goes in tail; size is tail's size.
	// Invariant: tail's bytes from off to size hold no valid record of
	// its salt (they are zero, or stale records of an earlier use).
	off, size int64
	// spares are the paths of released segment files kept for reuse (at
	// most opts.Spares, each SegmentSize bytes); roll takes the last.
	spares []string
	// lastIndex is the index of the last entry written (0: none yet).
	lastIndex uint64
	// hs and snap are the newest HardState and snapshot marker written
	// (hs may not be synced yet: see Save); each new segment starts with a
	// copy of them. Invariant: between calls, unless NoSync, hs's term and
	// vote are durable (only its commit may not be).
	hs   *raftpb.HardState
	snap *raftpb.SnapshotMetadata
	// recovered is the log found by OpenWAL, handed out once by ReadAll.
	recovered *recoveredLog
	buf       []byte // scratch for encoding records
}

type recoveredLog struct {
	snap *raftpb.SnapshotMetadata
	hs   *raftpb.HardState
	ents []*raftpb.Entry
}

// segmentName is a parsed segment file name:
// <seq 16 hex>-<firstIndex 16 hex>.wal.
type segmentName struct {
	seq, firstIndex uint64
}

func (s segmentName) String() string { return fmt.Sprintf("%016x-%016x.wal", s.seq, s.firstIndex) }

func parseSegmentName(name string) (segmentName, bool) {
	var s segmentName
	if !strings.HasSuffix(name, ".wal") || len(name) != 16+1+16+4 {
		return s, false
	}
	if _, err := fmt.Sscanf(name, "%016x-%016x.wal", &s.seq, &s.firstIndex); err != nil {
		return s, false
	}
	return s, s.String() == name
}

// listSegments returns dir's segments in sequence order, checking that no
// sequence number is missing.
func listSegments(fs FS, dir string) ([]segmentName, error) {
	names, err := fs.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var segs []segmentName
	for _, n := range names {
		if s, ok := parseSegmentName(n); ok {
			segs = append(segs, s) // names sort by sequence number
		}
	}
	for i := 1; i < len(segs); i++ {
		if segs[i].seq != segs[i-1].seq+1 {
			return nil, &CorruptError{
				File:   filepath.Join(dir, segs[i].String()),
				Offset: 0,
				Reason: fmt.Sprintf("segment %016x is missing: the previous segment is %s", segs[i-1].seq+1, segs[i-1]),
			}
		}
	}
	return segs, nil
}

// segmentBytes returns the contents of the segment at path and a function
// to call once they are no longer used. A segment of the OS file system is
// mapped into memory rather than read into it, so that recovery holds no
// copy of a segment however large preAllocSize makes it (decoded records
// do not refer to the bytes they were decoded from). Scan them with
// scanMapped.
func segmentBytes(fs FS, path string) (buf []byte, release func(), err error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close() // a mapping outlives the descriptor
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if of, ok := f.(osFile); ok && fi.Size() > 0 {
		buf, err := mapReadOnly(of.File, fi.Size())
		if err != nil {
			return nil, nil, err
		}
		return buf, func() { _ = unmap(buf) }, nil
	}
	buf = make([]byte, fi.Size())
	if _, err := io.ReadFull(f, buf); err != nil {
		return nil, nil, fmt.Errorf("storage: reading %s: %w", path, err)
	}
	return buf, func() {}, nil
}

// scanMapped is scanSegment over what segmentBytes returned. A read error
// of the disk reaches a mapped file as a memory fault: it is returned as an
// error instead of stopping the process.
func scanMapped(path string, buf []byte, last bool) (scan segmentScan, err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer func() {
		if r := recover(); r != nil {
			if _, fault := r.(interface{ Addr() uintptr }); !fault {
				panic(r)
			}
			err = fmt.Errorf("storage: reading %s: %v (a read error of the disk?)", path, r)
		}
	}()
	return scanSegment(path, buf, last)
}

// OpenWAL opens the WAL in dir, creating it if needed, and recovers it: a
// torn write at the end of the last segment (a record cut by a crash, which
// no Save ever acknowledged) is truncated away and logged. A damaged record
// anywhere else, a missing segment or a gap in the entries is a
// *CorruptError, naming file and offset. Leftover temporary files are
// removed. The caller must hold the data directory's lock.
func OpenWAL(fs FS, dir string, opts WALOptions) (*WAL, error) {
	if opts.SegmentSize <= 0 {
		opts.SegmentSize = DefaultSegmentSize
	}
	if opts.SlowSync == 0 {
		opts.SlowSync = DefaultSlowSync
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Spares == 0 {
		opts.Spares = defaultSpares(opts.SegmentSize)
	}
	if opts.SegmentSize < 4096 {
		return nil, fmt.Errorf("storage: WAL segment size %d is below the minimum of 4096 bytes", opts.SegmentSize)
	}
	w := &WAL{fs: fs, dir: dir, opts: opts, log: opts.Logger,
		hs: &raftpb.HardState{}, snap: &raftpb.SnapshotMetadata{}}
	if w.log == nil {
		w.log = slog.Default()
	}
	if opts.NoSync {
		w.log.Warn("wal: fsync is disabled (forceSync=no): a power cut or kernel crash can lose acknowledged writes", "dir", dir)
	}
	if err := MkdirAllDurable(fs, dir); err != nil {
		return nil, err
	}
	if err := removeTemps(fs, dir, ".wal.tmp"); err != nil {
		return nil, err
	}
	if err := removeTemps(fs, dir, releasedSuffix); err != nil {
		return nil, err
	}
	if err := w.loadSpares(); err != nil {
		return nil, err
	}
	segs, err := listSegments(fs, dir)
	if err != nil {
		return nil, err
	}
	if len(segs) == 0 {
		w.recovered = &recoveredLog{snap: w.snap, hs: w.hs}
		if err := w.roll(1, 0); err != nil {
			return nil, err
		}
		return w, nil
	}
	if err := w.recover(segs); err != nil {
		if w.tail != nil {
			w.tail.Close()
		}
		return nil, err
	}
	return w, nil
}

func removeTemps(fs FS, dir, suffix string) error {
	names, err := fs.ReadDir(dir)
	if err != nil {
		return err
	}
	removed := false
	for _, n := range names {
		if strings.HasSuffix(n, suffix) {
			if err := fs.Remove(filepath.Join(dir, n)); err != nil {
				return err
			}
			removed = true
		}
	}
	if removed {
		if err := fs.SyncDir(dir); err != nil {
			return syncFailed("sync directory "+dir, err)
		}
	}
	return nil
}

// logBuilder folds records, in log order, into the log raft must see.
type logBuilder struct {
	snap *raftpb.SnapshotMetadata
	hs   *raftpb.HardState
	ents []*raftpb.Entry // entries after cut(), with overwritten suffixes replaced
	// keepAfter is WALOptions.KeepAfter.
	keepAfter uint64
	last      uint64 // index of the last entry record folded in
	// firstFile and firstOffset locate the record of ents[0].
	firstFile   string
	firstOffset int64
}

// cut is the index up to which entries are covered by the snapshot the
// caller recovers from: the newest marker, or KeepAfter when it is older.
func (b *logBuilder) cut() uint64 {
	c := b.snap.GetIndex()
	if b.keepAfter > 0 && b.keepAfter < c {
		c = b.keepAfter
	}
	return c
}

func (b *logBuilder) add(file string, rec WALRecord) error {
	switch rec.Type {
	case RecordHardState:
		b.hs = rec.HardState
	case RecordSnapshot:
		b.snap = rec.Snapshot
		i := 0
		for i < len(b.ents) && b.ents[i].GetIndex() <= b.cut() {
			i++
		}
		b.ents = b.ents[i:]
	case RecordEntry:
		e := rec.Entry
		b.last = e.GetIndex()
		if e.GetIndex() <= b.cut() {
			return nil // already in the snapshot
		}
		if len(b.ents) > 0 {
			first := b.ents[0].GetIndex()
			lastKept := b.ents[len(b.ents)-1].GetIndex()
			switch {
			case e.GetIndex() <= first:
				b.ents = b.ents[:0]
			case e.GetIndex() <= lastKept:
				b.ents = b.ents[:e.GetIndex()-first] // raft overwrote the tail
			case e.GetIndex() > lastKept+1:
				return &CorruptError{File: file, Offset: rec.Offset,
					Reason: fmt.Sprintf("entry %d follows entry %d: entries are missing", e.GetIndex(), lastKept)}
			}
		}
		if len(b.ents) == 0 {
			b.firstFile, b.firstOffset = file, rec.Offset
		}
		b.ents = append(b.ents, e)
	}
	return nil
}

// finish checks that the entries start right after the snapshot marker. (The
// first segment left by ReleaseTo may start with an older marker followed
// by a gap that a later marker covers, so this is checked only at the end.)
func (b *logBuilder) finish() error {
	if c := b.cut(); len(b.ents) > 0 && c > 0 && b.ents[0].GetIndex() != c+1 {
		return &CorruptError{File: b.firstFile, Offset: b.firstOffset,
			Reason: fmt.Sprintf("entry %d follows snapshot %d: entries are missing", b.ents[0].GetIndex(), c)}
	}
	if b.keepAfter > 0 && b.keepAfter < b.snap.GetIndex() && (len(b.ents) == 0 || b.ents[0].GetIndex() != b.keepAfter+1) {
		return &CorruptError{File: b.firstFile, Offset: b.firstOffset,
			Reason: fmt.Sprintf("the entries after snapshot %d are no longer in the log (released behind marker %d)", b.keepAfter, b.snap.GetIndex())}
	}
	return nil
}

// clampCommit lowers the HardState's commit to the last index of the log
// when it is beyond it, so that ReadAll never claims entries it does not
// hold (raft refuses to start on such a HardState). Save writes a commit
// only after the entries it covers are synced, so this takes a HardState
// that outlived what it commits: one saved before the snapshot marker that
// its commit relies on, or a damaged log. Term and vote, always synced, are
// kept.
func (b *logBuilder) clampCommit(log *slog.Logger) {
	last := b.snap.GetIndex()
	if len(b.ents) > 0 {
		last = b.ents[len(b.ents)-1].GetIndex()
	}
	if b.hs.GetCommit() <= last {
		return
	}
	log.Warn("wal: the newest hard state commits beyond the last entry of the log; lowering its commit to the last entry",
		"commit", b.hs.GetCommit(), "last_index", last)
	hs := proto.CloneOf(b.hs)
	hs.Commit = proto.Uint64(last)
	b.hs = hs
}

// recover reads every segment, repairs a torn tail and leaves the last
// segment open for appending.
func (w *WAL) recover(segs []segmentName) error {
	b := logBuilder{snap: w.snap, hs: w.hs, keepAfter: w.opts.KeepAfter}
	var tailScan segmentScan
	for i, s := range segs {
		path := filepath.Join(w.dir, s.String())
		buf, release, err := segmentBytes(w.fs, path)
		if err != nil {
			return err
		}
		last := i == len(segs)-1
		scan, err := scanMapped(path, buf, last)
		size := int64(len(buf))
		release()
		if err != nil {
			return err
		}
		for _, rec := range scan.records {
			if err := b.add(path, rec); err != nil {
				return err
			}
		}
		if last {
			tailScan = scan
			w.size = size
		}
	}
	if err := b.finish(); err != nil {
		return err
	}
	b.clampCommit(w.log)
	w.segs = segs
	w.hs, w.snap, w.lastIndex = b.hs, b.snap, b.last
	w.recovered = &recoveredLog{snap: b.snap, hs: b.hs, ents: b.ents}

	path := filepath.Join(w.dir, segs[len(segs)-1].String())
	f, err := w.fs.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	w.tail, w.off, w.salt = f, tailScan.end, tailScan.salt
	if tailScan.torn {
		w.log.Warn("wal: truncating a torn write at the end of the log (a record cut short by a crash; no sync had made it durable)",
			"file", path, "offset", tailScan.end, "discarded_bytes", w.size-tailScan.end)
		if err := w.zeroTail(); err != nil {
			return err
		}
	}
	if tailScan.version < walVersion {
		// An older build wrote the tail: the log goes on in a new
		// segment of this build's format.
		return w.roll(w.lastIndex+1, 0)
	}
	return nil
}

// zeroTail makes the tail segment's bytes after w.off zero, durably, by
// truncating and re-preallocating it. If space for the preallocation is
// missing, the segment simply ends at w.off and the next record rolls.
func (w *WAL) zeroTail() error {
	name := w.segs[len(w.segs)-1].String()
	if err := w.tail.Truncate(w.off); err != nil {
		return fmt.Errorf("storage: truncating %s: %w", name, err)
	}
	if err := preallocate(w.tail, w.size); err != nil {
		if !errors.Is(writeError("", err), ErrDiskFull) {
			return fmt.Errorf("storage: preallocating %s: %w", name, err)
		}
		w.log.Warn("wal: disk full: could not re-preallocate the segment; the next write starts a new one", "file", name)
	}
	fi, err := w.tail.Stat()
	if err != nil {
		return err
	}
	w.size = fi.Size()
	if err := w.tail.Sync(); err != nil {
		return syncFailed("sync "+name, err)
	}
	return nil
}

// ReadAll returns the log recovered by OpenWAL as raft must see it: the
// newest snapshot marker, the newest HardState, and the entries after the
// marker (where raft overwrote a suffix of the log, the later entries
// replace it). Empty messages (never nil) stand for an absent marker or
// HardState. The caller owns the results. ReadAll can be called once.
//
// The HardState's term and vote are those of the last synced Save or
// newer. Its commit is at most the last index of the log (the last entry's,
// or the marker's when there is none: a larger one is lowered to it), but
// may be behind the commit last saved, since a Save without mustSync does
// not sync it, and even behind the marker's index: the caller raises it to
// the index of the snapshot it loaded, and raft re-derives the rest (see
// Save).
func (w *WAL) ReadAll() (snap *raftpb.SnapshotMetadata, hs *raftpb.HardState, ents []*raftpb.Entry, err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.recovered == nil {
		return nil, nil, nil, errors.New("storage: WAL.ReadAll called twice")
	}
	r := w.recovered
	w.recovered = nil
	return r.snap, r.hs, r.ents, nil
}

// Save appends ents and then hs (when not nil) to the log, in one write.
// Entries whose index is at or below that of an earlier entry replace the
// earlier suffix of the log, as raft requires. mustSync is raft's
// Ready.MustSync: call Save(rd.HardState, rd.Entries, rd.MustSync).
//
// What is durable when Save returns nil:
//
//   - mustSync true: ents, hs and every record written before them. This
//     costs one fdatasync (group commit), none with WALOptions.NoSync.
//   - mustSync false: nothing more than before the call. The records are
//     written to the file, so a crash may keep them, but they become
//     durable only with the next synced call (Save with mustSync,
//     SaveSnapshot, or a Save that starts a new segment). After a crash,
//     ReadAll returns this hs or an older one — never a torn record: an
//     unsynced record at the end of the log is torn or absent, and the
//     torn tail is truncated away.
//
// Raft asks for no sync (MustSync false) only when there are no entries
// and the term and vote are unchanged: the HardState differs only in its
// commit index. Losing that commit is safe: raft's durable state is the
// term, the vote and the log, while the commit index is recomputed — a
// follower learns it from the leader, and a leader, a lone member
// included, commits its whole log again with the first entry of its new
// term (the caller re-applies the entries after the snapshot it loaded).
// And since raft moves the commit only over entries synced by an earlier
// Save or saved in the same one (which then syncs), a commit that survives
// never covers an entry the log lost (ReadAll checks this all the same).
// Save syncs even when mustSync is false if ents is not empty or hs
// changes the term or vote: those must be durable before raft acts on
// them.
//
// An error wrapping ErrDiskFull means the disk is full: nothing of this call
// is in the log (a partial write was truncated away) and the WAL remains
// usable, so the same Save can be retried when space returns. An error
// wrapping ErrSyncFailed (or any other error) leaves the WAL's durable state
// unknown: it refuses every later call and the process must stop.
func (w *WAL) Save(hs *raftpb.HardState, ents []*raftpb.Entry, mustSync bool) error {
	if hs == nil && len(ents) == 0 {
		return nil
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	if len(ents) > 0 || (hs != nil && (hs.GetTerm() != w.hs.GetTerm() || hs.GetVote() != w.hs.GetVote())) {
		mustSync = true // keeps the invariant on w.hs, whatever the caller says
	}
	cp := w.checkpoint()
	w.buf = w.buf[:0]
	for _, e := range ents {
		if err := w.add(&cp, RecordEntry, e, e.GetIndex()); err != nil {
			return w.fail(cp, err)
		}
	}
	if hs != nil {
		if err := w.add(&cp, RecordHardState, hs, w.lastIndex+1); err != nil {
			return w.fail(cp, err)
		}
	}
	if err := w.flush(); err != nil {
		return w.fail(cp, err)
	}
	if !mustSync {
		return nil
	}
	if err := w.syncTail(); err != nil {
		return w.fail(cp, err)
	}
	return nil
}

// SaveSnapshot appends a snapshot marker for meta and syncs: when it
// returns nil, the marker and every record written before it are durable,
// and a recovery ignores the entries the marker covers. Save the snapshot
// file before its marker. Errors are as for Save.
func (w *WAL) SaveSnapshot(meta *raftpb.SnapshotMetadata) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.err != nil {
		return w.err
	}
	cp := w.checkpoint()
	w.buf = w.buf[:0]
	if err := w.add(&cp, RecordSnapshot, meta, w.lastIndex+1); err != nil {
		return w.fail(cp, err)
	}
	if err := w.flush(); err != nil {
		return w.fail(cp, err)
	}
	if err := w.syncTail(); err != nil {
		return w.fail(cp, err)
	}
	return nil
}

// walCheckpoint is the WAL's state at a point where everything before it
// is in the tail segment (or durable in earlier segments): a failed call
// rolls back to it.
type walCheckpoint struct {
	off       int64
	lastIndex uint64
	hs        *raftpb.HardState
	snap      *raftpb.SnapshotMetadata
}

func (w *WAL) checkpoint() walCheckpoint {
	return walCheckpoint{off: w.off, lastIndex: w.lastIndex, hs: w.hs, snap: w.snap}
}

// add encodes one record into w.buf, first writing out w.buf and moving to
// a new segment if the record does not fit in the tail. firstIndex names the
// new segment. The new segment's start becomes the checkpoint.
func (w *WAL) add(cp *walCheckpoint, typ RecordType, m proto.Message, firstIndex uint64) error {
	mark := len(w.buf)
	var err error
	if w.buf, err = appendRecord2(w.buf, w.salt, typ, m); err != nil {
		return err
	}
	if need := int64(len(w.buf)); w.off+need > w.size {
		size := int64(len(w.buf) - mark)
		w.buf = w.buf[:mark]
		if err := w.flush(); err != nil {
			return err
		}
		if err := w.roll(firstIndex, size); err != nil {
			return err
		}
		*cp = w.checkpoint()
		if w.buf, err = appendRecord2(w.buf[:0], w.salt, typ, m); err != nil { // under the new segment's salt
			return err
		}
	}
	switch typ {
	case RecordEntry:
		w.lastIndex = m.(*raftpb.Entry).GetIndex()
	case RecordHardState:
		w.hs = proto.CloneOf(m.(*raftpb.HardState)) // the caller may reuse its message
	case RecordSnapshot:
		w.snap = proto.CloneOf(m.(*raftpb.SnapshotMetadata))
	}
	return nil
}

// flush writes w.buf at the end of the tail segment.
func (w *WAL) flush() error {
	if len(w.buf) == 0 {
		return nil
	}
	n, err := w.tail.WriteAt(w.buf, w.off)
	w.off += int64(n)
	w.buf = w.buf[:0]
	if err != nil {
		return writeError("writing "+w.segs[len(w.segs)-1].String(), err)
	}
	return nil
}

// syncTail makes everything written to the tail segment durable, unless
// NoSync. The segment was preallocated, so appending to it changes neither
// its size nor any other metadata that fdatasync would skip; the segment's
// creation, and zeroTail which changes its size, use a full Sync instead.
func (w *WAL) syncTail() error {
	if w.opts.NoSync {
		return nil
	}
	name := w.segs[len(w.segs)-1].String()
	start := w.opts.Now()
	if err := w.tail.Datasync(); err != nil {
		return syncFailed("fdatasync "+name, err)
	}
	d := w.opts.Now().Sub(start)
	slow := w.opts.SlowSync < 0 || d > w.opts.SlowSync
	if slow {
		w.log.Warn("wal: fsync of the write-ahead log was slow; every write waits for it. Check the disk: a slow or failing device, or other I/O on it (give dataLogDir its own disk)",
			"took", d, "file", filepath.Join(w.dir, name), "size", w.off, "threshold", w.opts.SlowSync)
	}
	if w.opts.OnSync != nil {
		w.opts.OnSync(d, slow)
	}
	return nil
}

// fail handles an error of Save or SaveSnapshot. A full disk rolls the tail
// segment back to the checkpoint and leaves the WAL usable; anything else
// makes the WAL refuse later calls.
func (w *WAL) fail(cp walCheckpoint, err error) error {
	if !errors.Is(err, ErrDiskFull) || errors.Is(err, ErrSyncFailed) {
		w.err = err
		return err
	}
	w.off, w.lastIndex, w.hs, w.snap = cp.off, cp.lastIndex, cp.hs, cp.snap
	w.dropSpares()
	if zerr := w.zeroTail(); zerr != nil {
		w.err = fmt.Errorf("%w (while recovering from: %w)", zerr, err)
		if !errors.Is(zerr, ErrSyncFailed) {
			w.err = syncFailed("rolling back a failed write", w.err)
		}
		return w.err
	}
	w.log.Warn("wal: disk full: the write was rolled back; writes resume when space is freed", "dir", w.dir, "err", err)
	return err
}

// roll syncs the tail segment (it must be whole before a later segment
// exists: only the last may end in a torn write) and starts a new one,
// named after firstIndex, with room for at least need bytes of records
// after its header (the version and salt records, then a copy of the
// newest HardState and snapshot marker), under a new salt.
// The new segment is a spare file written over, or a file created under a
// temporary name and preallocated; either is synced and then renamed.
func (w *WAL) roll(firstIndex uint64, need int64) error {
	if w.tail != nil {
		if err := w.syncTail(); err != nil {
			return err
		}
	}
	next := segmentName{firstIndex: firstIndex}
	if len(w.segs) > 0 {
		next.seq = w.segs[len(w.segs)-1].seq + 1
	}
	salt := newSalt()
	hdr := appendSegmentHeader(nil, salt)
	var err error
	if !isEmptyHardState(w.hs) {
		if hdr, err = appendRecord2(hdr, salt, RecordHardState, w.hs); err != nil {
			return err
		}
	}
	if w.snap.GetIndex() > 0 {
		if hdr, err = appendRecord2(hdr, salt, RecordSnapshot, w.snap); err != nil {
			return err
		}
	}
	size := max(w.opts.SegmentSize, int64(len(hdr))+need)
	path := filepath.Join(w.dir, next.String())
	var f File
	if size == w.opts.SegmentSize && len(w.spares) > 0 {
		f, err = w.reuseSpare(path, hdr)
	} else {
		f, err = w.createSegment(path, hdr, size)
	}
	if err != nil {
		return err
	}
	if w.tail != nil {
		w.tail.Close()
	}
	w.segs = append(w.segs, next)
	w.tail, w.salt, w.off, w.size = f, salt, int64(len(hdr)), size
	return nil
}

// newSalt returns a random, non-zero segment salt. It comes from a
// generator seeded by the system, so no client can predict it and write a
// record of a future segment in its data.
func newSalt() uint64 {
	for {
		if s := rand.Uint64(); s != 0 {
			return s
		}
	}
}

// reuseSpare makes the newest spare file the segment at path: hdr is
// written over its start and synced, then it is renamed and the directory
// synced. What the file held before stays after hdr: records of another
// salt, which a reader takes for the end of the data. Writing over space a
// file already holds lets each fdatasync skip the conversion of newly
// allocated extents that a fresh preallocated file costs (on ext4, some
// half of an fdatasync of a small write).
func (w *WAL) reuseSpare(path string, hdr []byte) (File, error) {
	spare := w.spares[len(w.spares)-1]
	w.spares = w.spares[:len(w.spares)-1]
	f, err := w.fs.OpenFile(spare, os.O_RDWR, 0)
	if err != nil {
		return nil, writeError("opening "+spare, err)
	}
	if err := w.installSegment(f, spare, path, hdr); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// loadSpares finds the spare files ReleaseTo left: those of SegmentSize
// bytes, up to opts.Spares, are kept for reuse; the others are removed.
func (w *WAL) loadSpares() error {
	names, err := w.fs.ReadDir(w.dir)
	if err != nil {
		return err
	}
	removed := false
	for _, n := range names {
		if !strings.HasSuffix(n, spareSuffix) {
			continue
		}
		path := filepath.Join(w.dir, n)
		if len(w.spares) < w.opts.Spares && w.reusable(path) {
			w.spares = append(w.spares, path)
			continue
		}
		if err := w.fs.Remove(path); err != nil {
			return err
		}
		removed = true
	}
	if removed {
		if err := w.fs.SyncDir(w.dir); err != nil {
			return syncFailed("sync directory "+w.dir, err)
		}
	}
	return nil
}

// DropSpares deletes the spare files, giving their space back: for a
// full disk (say, a snapshot that could not be written). Later segments
// are created anew until a release leaves spares again. A WAL whose
// write fails for a full disk drops them itself.
func (w *WAL) DropSpares() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.dropSpares()
}

// dropSpares is DropSpares with w.mu held.
func (w *WAL) dropSpares() {
	if len(w.spares) == 0 {
		return
	}
	for _, path := range w.spares {
		if err := w.fs.Remove(path); err != nil {
			w.log.Warn("wal: could not delete a spare segment", "file", path, "err", err)
		}
	}
	w.log.Warn("wal: disk full: deleted the spare segments to free their space", "dir", w.dir, "count", len(w.spares))
	w.spares = nil
}

// reusable says whether the file at path can become a spare: it has the
// size of a segment.
func (w *WAL) reusable(path string) bool {
	fi, err := w.fs.Stat(path)
	return err == nil && fi.Size() == w.opts.SegmentSize
}

func (w *WAL) createSegment(path string, hdr []byte, size int64) (File, error) {
	tmp := path + ".tmp"
	f, err := w.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return nil, writeError("creating "+tmp, err)
	}
	err = preallocate(f, size)
	if err != nil {
		err = writeError("preallocating "+tmp, err)
	} else {
		err = w.installSegment(f, tmp, path, hdr)
	}
	if err != nil {
		f.Close()
		w.fs.Remove(tmp) // best effort (gone once renamed): OpenWAL removes leftovers too
		return nil, err
	}
	return f, nil
}

// installSegment makes f, the file at from, the segment at path: hdr is
// written at its start and synced, then the file is renamed and the
// directory synced.
func (w *WAL) installSegment(f File, from, path string, hdr []byte) error {
	if _, err := f.WriteAt(hdr, 0); err != nil {
		return writeError("writing "+from, err)
	}
	if err := f.Sync(); err != nil {
		return syncFailed("sync "+from, err)
	}
	if err := w.fs.Rename(from, path); err != nil {
		return writeError("renaming "+from, err)
	}
	if err := w.fs.SyncDir(w.dir); err != nil {
		return syncFailed("sync directory "+w.dir, err)
	}
	return nil
}

func isEmptyHardState(hs *raftpb.HardState) bool {
	return hs.GetTerm() == 0 && hs.GetVote() == 0 && hs.GetCommit() == 0
}

// ReleaseTo takes out of the log the oldest segments that hold only
// entries below index (and records superseded by later segments), e.g.
// after a snapshot. It never releases entries after the newest snapshot
// marker, nor the tail segment. The release is durable when ReleaseTo
// returns.
//
// Released segments of SegmentSize bytes, up to WALOptions.Spares in all, become
// spares (name + spareSuffix) that roll writes over; the others are
// deleted. It works without holding the lock Save takes, and frees the
// deleted segments' space gradually: on ext4, unlinking a 64 MiB
// preallocated segment at once is one journal transaction of some 18 ms
// that every fdatasync of the log then waits behind (the write sweep's
// p99.9 doubled). So each segment, oldest first, is renamed out of the log
// (name + spareSuffix or releasedSuffix; the renames are made durable by
// one directory sync), then a deleted one is truncated releaseStep bytes
// at a time, releasePause apart, and only then removed. A crash in the
// middle leaves the log's newest segments under their names (recovery
// reads the oldest as superseded), spares, and released files, which
// OpenWAL deletes.
func (w *WAL) ReleaseTo(index uint64) error {
	w.releaseMu.Lock()
	defer w.releaseMu.Unlock()
	w.mu.Lock()
	if w.err != nil {
		w.mu.Unlock()
		return w.err
	}
	index = min(index, w.snap.GetIndex()+1)
	// Every live entry of segment i has an index below segs[i+1].firstIndex.
	n := 0
	for n+1 < len(w.segs) && w.segs[n+1].firstIndex <= index {
		n++
	}
	released := slices.Clone(w.segs[:n])
	w.segs = append(w.segs[:0], w.segs[n:]...)
	room := w.opts.Spares - len(w.spares) // only grows until this call ends: roll takes spares, ReleaseTo calls are serialised
	w.mu.Unlock()
	if n == 0 {
		return nil
	}
	var spares, deleted []string
	for _, s := range released {
		path := filepath.Join(w.dir, s.String())
		to := path + releasedSuffix
		if len(spares) < room && w.reusable(path) {
			to = path + spareSuffix
			spares = append(spares, to)
		} else {
			deleted = append(deleted, to)
		}
		if err := w.fs.Rename(path, to); err != nil {
			return fmt.Errorf("storage: releasing WAL segment: %w", err)
		}
	}
	if err := w.fs.SyncDir(w.dir); err != nil {
		w.mu.Lock()
		w.err = syncFailed("sync directory "+w.dir, err)
		w.mu.Unlock()
		return w.err
	}
	w.mu.Lock()
	w.spares = append(w.spares, spares...)
	w.mu.Unlock()
	for _, path := range deleted {
		if err := w.shrinkAndRemove(path); err != nil {
			return fmt.Errorf("storage: releasing WAL segment: %w", err)
		}
	}
	return nil
}

// releasedSuffix marks a segment ReleaseTo took out of the log to delete.
const releasedSuffix = ".released"

// spareSuffix marks a segment ReleaseTo took out of the log to reuse.
const spareSuffix = ".spare"

// DefaultSpares is the most spares WALOptions.Spares keeps by default:
// four segments of the default size fill DefaultSpareBytes. A snapshot
// every snapCount (100,000) writes of 1 KiB releases about two segments
// at a time.
const DefaultSpares = 4

// DefaultSpareBytes bounds the disk space the default spares hold for
// speed: with segments larger than the default (preAllocSize) fewer are
// kept, but always one.
const DefaultSpareBytes = 256 << 20

// defaultSpares is WALOptions.Spares's default for segments of segSize
// bytes.
func defaultSpares(segSize int64) int {
	return int(min(DefaultSpares, max(1, DefaultSpareBytes/segSize)))
}

// The pace at which ReleaseTo frees a released segment's space.
const (
	releaseStep  = 2 << 20
	releasePause = time.Millisecond
)

// shrinkAndRemove truncates the file at path releaseStep bytes at a time,
// pausing in between, then removes it. A failed truncation only makes
// the removal free more at once.
func (w *WAL) shrinkAndRemove(path string) error {
	if f, err := w.fs.OpenFile(path, os.O_RDWR, 0); err == nil {
		if st, err := w.fs.Stat(path); err == nil {
			for size := st.Size(); size > 0; {
				size = max(0, size-releaseStep)
				if f.Truncate(size) != nil {
					break
				}
				time.Sleep(releasePause)
			}
		}
		f.Close()
	}
	return w.fs.Remove(path)
}

// Close closes the WAL. Everything acknowledged is already durable.
func (w *WAL) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.tail == nil {
		return nil
	}
	err := w.tail.Close()
	w.tail = nil
	if w.err == nil {
		w.err = errors.New("storage: WAL is closed")
	}
	return err
}

// WALSegment describes one segment file, for ScanWAL.
type WALSegment struct {
	Path       string
	Version    uint32 // format version (1 for a segment without a version record)
	Seq        uint64 // sequence number, from the file name
	FirstIndex uint64 // no live entry of earlier segments is at or above this index
	Size       int64  // file size (preallocated)
	End        int64  // bytes holding records; the rest is zero or torn
	Torn       bool   // the bytes after End are a torn write
}

// ScanWAL reads the WAL in dir without changing it and calls fn for each
// segment with the records it holds, oldest first. It returns a
// *CorruptError where OpenWAL would (after calling fn with the records read
// before the damage), and fn's error if fn fails.
func ScanWAL(fs FS, dir string, fn func(WALSegment, []WALRecord) error) error {
	segs, err := listSegments(fs, dir)
	if err != nil {
		return err
	}
	for i, s := range segs {
		path := filepath.Join(dir, s.String())
		buf, release, err := segmentBytes(fs, path)
		if err != nil {
			return err
		}
		scan, serr := scanMapped(path, buf, i == len(segs)-1)
		seg := WALSegment{Path: path, Version: scan.version, Seq: s.seq, FirstIndex: s.firstIndex, Size: int64(len(buf)), End: scan.end, Torn: scan.torn}
		release()
		if err := fn(seg, scan.records); err != nil {
			return err
		}
		if serr != nil {
			return serr
		}
	}
	return nil
}
