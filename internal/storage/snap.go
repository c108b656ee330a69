package storage

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"hash"
	"hash/crc32"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"syscall"

	"github.com/klauspost/compress/zstd"
	"go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

const (
	snapMagic = "WDNSNAP\x00"
	// snapVersion is the version of the snapshot file format (the
	// container: header, compression, checksum; the state machine's
	// stream inside has its own) this build writes, the newest it reads.
	// A newer file is a *VersionError; to change the format, bump it and
	// keep reading the older versions in checkSnapshot.
	snapVersion    = 1
	snapHeaderSize = 8 + 4 + 4 // magic, version, metadata length
	snapTrailer    = 4         // CRC32C
	maxSnapMeta    = 64 << 20  // a ConfState of a few thousand members fits easily
	// snapWindow is the zstd window snapshots are written with.
	snapWindow = 1 << 20
	// maxSnapWindow bounds the zstd window a reader accepts (and so its
	// memory); the writer's default window is far smaller.
	maxSnapWindow = 64 << 20
	// MinSnapRetain is the fewest snapshot files a Snapshotter keeps.
	MinSnapRetain = 3
)

// SnapshotFileVersion is the snapshot file format version this build
// writes, the newest it reads (of the container: the state machine's
// stream inside has its own version).
const SnapshotFileVersion = snapVersion

// SnapshotInfo describes a snapshot file, for tools.
type SnapshotInfo struct {
	Path  string
	Term  uint64 // from the file name
	Index uint64 // from the file name
	Size  int64  // file size in bytes
}

// Snapshotter writes and reads the snapshot files of a directory
// (snap-<term>-<index>.snap, format in the package documentation).
// Save may run concurrently with LoadNewest and List, but not with another
// Save.
type Snapshotter struct {
	fs     FS
	dir    string
	retain int
	log    *slog.Logger
}

// NewSnapshotter returns a Snapshotter for dir (created by the first Save),
// keeping the newest retain snapshots (at least MinSnapRetain, as ZooKeeper's
// autopurge.snapRetainCount). A nil log means slog.Default().
func NewSnapshotter(fs FS, dir string, retain int, log *slog.Logger) *Snapshotter {
	if log == nil {
		log = slog.Default()
	}
	return &Snapshotter{fs: fs, dir: dir, retain: max(retain, MinSnapRetain), log: log}
}

func snapName(term, index uint64) string { return fmt.Sprintf("snap-%016x-%016x.snap", term, index) }

// SnapshotFileName is the name of the snapshot file of a log index and
// its term in a member's version-2 directory: snap-<term>-<index>.snap,
// each 16 hex digits.
func SnapshotFileName(term, index uint64) string { return snapName(term, index) }

func parseSnapName(name string) (term, index uint64, ok bool) {
	if len(name) != len("snap-")+16+1+16+len(".snap") {
		return 0, 0, false
	}
	if _, err := fmt.Sscanf(name, "snap-%016x-%016x.snap", &term, &index); err != nil {
		return 0, 0, false
	}
	return term, index, snapName(term, index) == name
}

// Save writes a snapshot at meta (its Index and Term name the file): the
// header, then whatever write streams, zstd-compressed, then the checksum,
// to a temporary file that is fsynced, renamed into place and made durable
// by an fsync of the directory. When Save returns nil the snapshot is
// durable; then snapshots beyond the retain count are deleted, oldest first.
//
// An error from write is returned as it is and leaves no file behind. A full
// disk is an error wrapping ErrDiskFull; a failed fsync wraps ErrSyncFailed.
func (s *Snapshotter) Save(meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error {
	if err := MkdirAllDurable(s.fs, s.dir); err != nil {
		return err
	}
	path := filepath.Join(s.dir, snapName(meta.GetTerm(), meta.GetIndex()))
	tmp := path + ".tmp"
	f, err := s.fs.OpenFile(tmp, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return writeError("creating "+tmp, err)
	}
	if err := s.writeFile(f, tmp, meta, write); err != nil {
		f.Close()
		s.fs.Remove(tmp) // best effort: LoadNewest removes leftovers too
		return err
	}
	if err := f.Close(); err != nil {
		s.fs.Remove(tmp)
		return writeError("closing "+tmp, err)
	}
	if err := s.fs.Rename(tmp, path); err != nil {
		s.fs.Remove(tmp)
		return writeError("renaming "+tmp, err)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return syncFailed("sync directory "+s.dir, err)
	}
	return s.purge()
}

// fileWriter writes to the file's buffer and to the running checksum.
type fileWriter struct {
	w   *bufio.Writer
	crc hash.Hash32
}

func (fw fileWriter) Write(p []byte) (int, error) {
	fw.crc.Write(p)
	return fw.w.Write(p)
}

func (s *Snapshotter) writeFile(f File, name string, meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error {
	if err := writeSnapshot(f, name, meta, write); err != nil {
		return err
	}
	if err := f.Sync(); err != nil {
		return syncFailed("sync "+name, err)
	}
	return nil
}

// WriteSnapshot writes a complete snapshot file (the layout of the package
// documentation: header, metadata, the compressed body write produces, checksum)
// to w, without syncing it: a copy of a member's state outside its data
// directory (the AdminServer's snapshot command). OpenSnapshotFile reads it.
func WriteSnapshot(w io.Writer, meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error {
	return writeSnapshot(w, "snapshot", meta, write)
}

// writeSnapshot writes a snapshot file's bytes to w; name is for errors.
func writeSnapshot(w io.Writer, name string, meta *raftpb.SnapshotMetadata, write func(io.Writer) error) error {
	mb, err := proto.Marshal(meta)
	if err != nil {
		return fmt.Errorf("storage: encoding snapshot metadata: %w", err)
	}
	fw := fileWriter{w: bufio.NewWriterSize(w, 1<<20), crc: crc32.New(castagnoli)}
	hdr := make([]byte, snapHeaderSize, snapHeaderSize+len(mb))
	copy(hdr, snapMagic)
	binary.LittleEndian.PutUint32(hdr[8:], snapVersion)
	binary.LittleEndian.PutUint32(hdr[12:], uint32(len(mb)))
	fw.Write(append(hdr, mb...))
	// A 1 MiB window instead of the default 8 MiB: the encoder's history
	// is then about 2 MiB instead of 16 MiB, held while a snapshot is
	// written (a million znodes compress about as well either way).
	enc, err := zstd.NewWriter(fw, zstd.WithEncoderConcurrency(1), zstd.WithWindowSize(snapWindow))
	if err != nil {
		return fmt.Errorf("storage: snapshot compressor: %w", err)
	}
	if err := write(enc); err != nil {
		enc.Close()
		if errors.Is(err, syscall.ENOSPC) {
			return writeError("writing "+name, err)
		}
		return err
	}
	if err := enc.Close(); err != nil {
		return writeError("writing "+name, err)
	}
	binary.LittleEndian.PutUint32(hdr[:4], fw.crc.Sum32())
	if _, err := fw.w.Write(hdr[:4]); err != nil {
		return writeError("writing "+name, err)
	}
	if err := fw.w.Flush(); err != nil {
		return writeError("writing "+name, err)
	}
	return nil
}

// purge deletes the snapshots beyond the retain count, oldest first.
func (s *Snapshotter) purge() error {
	infos, err := s.List()
	if err != nil {
		return err
	}
	if len(infos) <= s.retain {
		return nil
	}
	for _, in := range infos[:len(infos)-s.retain] {
		if err := s.fs.Remove(in.Path); err != nil {
			return fmt.Errorf("storage: purging old snapshot: %w", err)
		}
		s.log.Info("snapshot: purged old snapshot", "file", in.Path)
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return syncFailed("sync directory "+s.dir, err)
	}
	return nil
}

// List returns the snapshot files in the directory, oldest (lowest index)
// first, without checking their contents. A missing directory is empty.
func (s *Snapshotter) List() ([]SnapshotInfo, error) {
	names, err := s.fs.ReadDir(s.dir)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var infos []SnapshotInfo
	for _, n := range names {
		term, index, ok := parseSnapName(n)
		if !ok {
			continue
		}
		path := filepath.Join(s.dir, n)
		fi, err := s.fs.Stat(path)
		if err != nil {
			return nil, err
		}
		infos = append(infos, SnapshotInfo{Path: path, Term: term, Index: index, Size: fi.Size()})
	}
	sort.Slice(infos, func(i, j int) bool {
		if infos[i].Index != infos[j].Index {
			return infos[i].Index < infos[j].Index
		}
		return infos[i].Term < infos[j].Term
	})
	return infos, nil
}

// snapReadError marks an error met while decompressing a snapshot, as
// opposed to an error of the caller's read function.
type snapReadError struct{ err error }

func (e *snapReadError) Error() string { return e.err.Error() }
func (e *snapReadError) Unwrap() error { return e.err }

// LoadNewest calls read with the newest valid snapshot and returns its
// metadata. A damaged snapshot (bad checksum, undecodable) is logged and
// skipped, and the next older one is tried; read may therefore be called
// more than once and must start from scratch each time. An error returned by
// read itself stops the search and is returned. ErrNoSnapshot means there
// is no snapshot file; if every file is damaged the error says so. Leftover
// temporary files of an interrupted Save are removed.
func (s *Snapshotter) LoadNewest(read func(meta *raftpb.SnapshotMetadata, r io.Reader) error) (*raftpb.SnapshotMetadata, error) {
	if err := removeTemps(s.fs, s.dir, ".snap.tmp"); err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	infos, err := s.List()
	if err != nil {
		return nil, err
	}
	if len(infos) == 0 {
		return nil, ErrNoSnapshot
	}
	var errs []error
	for i := len(infos) - 1; i >= 0; i-- {
		meta, err := s.load(infos[i], read)
		if err == nil {
			return meta, nil
		}
		var rerr *snapReadError
		var cerr *CorruptError
		if !errors.As(err, &rerr) && !errors.As(err, &cerr) {
			return nil, err
		}
		s.log.Error("snapshot: skipping a damaged snapshot, trying an older one", "file", infos[i].Path, "err", err)
		errs = append(errs, err)
	}
	return nil, fmt.Errorf("storage: every snapshot in %s is damaged: %w", s.dir, errors.Join(errs...))
}

func (s *Snapshotter) load(info SnapshotInfo, read func(*raftpb.SnapshotMetadata, io.Reader) error) (*raftpb.SnapshotMetadata, error) {
	meta, rc, err := OpenSnapshotFile(s.fs, info.Path)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	if meta.GetTerm() != info.Term || meta.GetIndex() != info.Index {
		return nil, &CorruptError{File: info.Path, Offset: snapHeaderSize,
			Reason: fmt.Sprintf("metadata (term %d, index %d) does not match the file name", meta.GetTerm(), meta.GetIndex())}
	}
	if err := read(meta, rc); err != nil {
		var rerr *snapReadError
		var cerr *CorruptError
		if errors.As(err, &rerr) || errors.As(err, &cerr) {
			return nil, err // they name the file
		}
		return nil, fmt.Errorf("storage: reading %s: %w", info.Path, err)
	}
	return meta, nil
}

// OpenSnapshotFile checks the snapshot file at path (header and checksum)
// and returns its metadata and a reader of its decompressed body. Damage is
// a *CorruptError; an error while reading the body is one too (wrapped).
// The caller closes the reader.
func OpenSnapshotFile(fs FS, path string) (*raftpb.SnapshotMetadata, io.ReadCloser, error) {
	f, err := fs.OpenFile(path, os.O_RDONLY, 0)
	if err != nil {
		return nil, nil, err
	}
	meta, body, err := checkSnapshot(f, path)
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	dec, err := zstd.NewReader(body, zstd.WithDecoderConcurrency(1), zstd.WithDecoderLowmem(true),
		zstd.WithDecoderMaxWindow(maxSnapWindow))
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("storage: snapshot decompressor: %w", err)
	}
	return meta, &snapReader{f: f, dec: dec, path: path}, nil
}

// checkSnapshot verifies the header and checksum of a snapshot file and
// returns its metadata and a reader of the compressed body.
func checkSnapshot(f File, path string) (*raftpb.SnapshotMetadata, *io.SectionReader, error) {
	fi, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	size := fi.Size()
	corrupt := func(off int64, format string, args ...any) error {
		return &CorruptError{File: path, Offset: off, Reason: fmt.Sprintf(format, args...)}
	}
	if size < snapHeaderSize+snapTrailer {
		return nil, nil, corrupt(0, "file of %d bytes is too short for a snapshot", size)
	}
	hdr := make([]byte, snapHeaderSize)
	if _, err := f.ReadAt(hdr, 0); err != nil {
		return nil, nil, err
	}
	if string(hdr[:8]) != snapMagic {
		return nil, nil, corrupt(0, "not a Warden snapshot file (bad magic)")
	}
	switch v := binary.LittleEndian.Uint32(hdr[8:]); {
	case v > snapVersion:
		return nil, nil, &VersionError{File: path, Format: "snapshot file", Version: v, Newest: snapVersion}
	case v < 1:
		return nil, nil, corrupt(8, "snapshot format version %d does not exist", v)
	}
	metaLen := int64(binary.LittleEndian.Uint32(hdr[12:]))
	bodyStart := snapHeaderSize + metaLen
	if metaLen > maxSnapMeta || bodyStart > size-snapTrailer {
		return nil, nil, corrupt(12, "metadata length %d runs past the end of the file", metaLen)
	}
	crc := crc32.New(castagnoli)
	if _, err := io.Copy(crc, io.NewSectionReader(f, 0, size-snapTrailer)); err != nil {
		return nil, nil, err
	}
	trailer := make([]byte, snapTrailer)
	if _, err := f.ReadAt(trailer, size-snapTrailer); err != nil {
		return nil, nil, err
	}
	if got, want := crc.Sum32(), binary.LittleEndian.Uint32(trailer); got != want {
		return nil, nil, corrupt(size-snapTrailer, "checksum mismatch (stored %08x, computed %08x)", want, got)
	}
	mb := make([]byte, metaLen)
	if _, err := f.ReadAt(mb, snapHeaderSize); err != nil {
		return nil, nil, err
	}
	meta := &raftpb.SnapshotMetadata{}
	if err := proto.Unmarshal(mb, meta); err != nil {
		return nil, nil, corrupt(snapHeaderSize, "undecodable metadata: %v", err)
	}
	return meta, io.NewSectionReader(f, bodyStart, size-snapTrailer-bodyStart), nil
}

type snapReader struct {
	f    File
	dec  *zstd.Decoder
	path string
}

func (r *snapReader) Read(p []byte) (int, error) {
	n, err := r.dec.Read(p)
	if err != nil && err != io.EOF {
		err = &snapReadError{fmt.Errorf("storage: decompressing %s: %w", r.path, err)}
	}
	return n, err
}

func (r *snapReader) Close() error {
	r.dec.Close()
	return r.f.Close()
}
