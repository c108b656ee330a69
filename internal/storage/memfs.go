package storage

import (
	"errors"
	"io"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"syscall"
	"time"
)

// ErrPowerCut is returned by every MemFS operation after the budget set by
// StopAfter is spent: the simulated machine has lost power.
var ErrPowerCut = errors.New("storage: memfs: power cut")

// Op is a kind of MemFS operation, for fault injection.
type Op int

// The operations a fault can target.
const (
	OpWrite    Op = iota // Write, WriteAt
	OpSync               // File.Sync, File.Datasync, SyncDir
	OpTruncate           // Truncate (which is also how MemFS preallocates)
)

// MemFS is an in-memory FS that knows what is durable, for crash tests.
//
// Each file keeps its contents as of its last Sync or Datasync (the two are
// the same here) plus the writes and truncations made since; each directory
// keeps its entries as of its last SyncDir. Crash forgets everything that
// was not made durable, as a power cut would; CrashTorn keeps, per file, a
// random prefix of the unsynced operations with the last kept write torn
// at a random byte. Files opened before a crash fail every later call.
//
// Directories created by MkdirAll and the root are durable only once their
// parent is synced, like files. A MemFS is safe for concurrent use.
type MemFS struct {
	mu      sync.Mutex
	cur     map[string]*memNode // the namespace as the running program sees it
	durable map[string]*memNode // the namespace as it would survive a crash
	locks   map[string]bool
	gen     int // incremented by each crash; files of an older generation are dead

	ops    int // mutating operations performed so far
	budget int // when >= 0: mutating operations left before the power cut
	faults []memFault
}

type memFault struct {
	op  Op
	nth int // counts down; the fault fires when it reaches 1
	err error
}

type memNode struct {
	dir     bool
	data    []byte  // current contents
	synced  []byte  // contents as of the last Sync
	pending []memOp // mutations since the last Sync, in order
}

// memOp is an unsynced mutation: a write of data at off, or (trunc) a
// truncation to size off.
type memOp struct {
	off   int64
	data  []byte
	trunc bool
}

// NewMemFS returns an empty MemFS holding only the root directory.
func NewMemFS() *MemFS {
	root := &memNode{dir: true}
	return &MemFS{
		cur:     map[string]*memNode{"/": root, ".": root},
		durable: map[string]*memNode{"/": root, ".": root},
		locks:   map[string]bool{},
		budget:  -1,
	}
}

// Ops returns the number of mutating operations (create, write, truncate,
// sync, rename, remove, mkdir) performed so far.
func (m *MemFS) Ops() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ops
}

// StopAfter lets n more mutating operations succeed; every operation after
// them fails with ErrPowerCut, without effect, until Crash. n < 0 removes
// the limit.
func (m *MemFS) StopAfter(n int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.budget = n
}

// InjectFault makes the nth next operation of kind op fail with err (n >= 1),
// once. A failing write first writes half of its bytes, as a write that runs
// out of space part-way does.
func (m *MemFS) InjectFault(op Op, nth int, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.faults = append(m.faults, memFault{op: op, nth: nth, err: err})
}

// Crash simulates a power cut: every write not covered by a later Sync of
// its file, and every directory change not covered by a later SyncDir, is
// forgotten. Locks are released and open files die. Limits set by StopAfter
// and pending faults are cleared.
func (m *MemFS) Crash() { m.crash(nil) }

// CrashTorn is Crash, except that each file keeps a random prefix of its
// unsynced operations, the last kept write cut at a random byte (a torn write).
func (m *MemFS) CrashTorn(rng *rand.Rand) { m.crash(rng) }

func (m *MemFS) crash(rng *rand.Rand) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.gen++
	m.budget = -1
	m.faults = nil
	m.locks = map[string]bool{}
	// Keep the durable entries whose ancestors all survive.
	names := make([]string, 0, len(m.durable))
	for name := range m.durable {
		names = append(names, name)
	}
	sort.Strings(names) // parents sort before their children
	next := map[string]*memNode{}
	for _, name := range names {
		n := m.durable[name]
		if parent := filepath.Dir(name); parent != name {
			if p, ok := next[parent]; !ok || !p.dir {
				continue
			}
		}
		next[name] = n
	}
	seen := map[*memNode]bool{}
	for _, n := range next {
		if seen[n] || n.dir {
			continue
		}
		seen[n] = true
		data := append([]byte(nil), n.synced...)
		if rng != nil && len(n.pending) > 0 {
			keep := rng.IntN(len(n.pending) + 1)
			for i, op := range n.pending[:min(keep+1, len(n.pending))] {
				if i == keep { // the torn one
					if op.trunc {
						break
					}
					op.data = op.data[:rng.IntN(len(op.data)+1)]
				}
				data = applyOp(data, op)
			}
		}
		n.data = data
		n.synced = append([]byte(nil), data...)
		n.pending = nil
	}
	m.cur = next
	m.durable = copyNames(next)
}

func copyNames(src map[string]*memNode) map[string]*memNode {
	dst := make(map[string]*memNode, len(src))
	for k, v := range src {
		dst[k] = v
	}
	return dst
}

func applyOp(data []byte, op memOp) []byte {
	if op.trunc {
		return resize(data, op.off)
	}
	end := op.off + int64(len(op.data))
	if end > int64(len(data)) {
		data = resize(data, end)
	}
	copy(data[op.off:], op.data)
	return data
}

func resize(data []byte, size int64) []byte {
	if size <= int64(len(data)) {
		return data[:size]
	}
	return append(data, make([]byte, size-int64(len(data)))...)
}

// mutate accounts for one mutating operation of kind op (-1: not a target
// of faults) and returns the error it must fail with, if any. Called with
// m.mu held.
func (m *MemFS) mutate(op Op) error {
	if m.budget == 0 {
		return ErrPowerCut
	}
	if m.budget > 0 {
		m.budget--
	}
	m.ops++
	for i := range m.faults {
		f := &m.faults[i]
		if f.op != op || f.nth == 0 {
			continue
		}
		f.nth--
		if f.nth == 0 {
			return f.err
		}
	}
	return nil
}

func clean(name string) string { return filepath.Clean(name) }

func pathErr(op, name string, err error) error { return &os.PathError{Op: op, Path: name, Err: err} }

// parentDir returns the directory holding name, which must exist.
func (m *MemFS) parentDir(op, name string) error {
	p, ok := m.cur[filepath.Dir(name)]
	if !ok {
		return pathErr(op, name, os.ErrNotExist)
	}
	if !p.dir {
		return pathErr(op, name, syscall.ENOTDIR)
	}
	return nil
}

// OpenFile implements FS.
func (m *MemFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	n, ok := m.cur[name]
	switch {
	case ok && flag&os.O_CREATE != 0 && flag&os.O_EXCL != 0:
		return nil, pathErr("open", name, os.ErrExist)
	case ok && n.dir && flag&(os.O_WRONLY|os.O_RDWR) != 0:
		return nil, pathErr("open", name, syscall.EISDIR)
	case !ok && flag&os.O_CREATE == 0:
		return nil, pathErr("open", name, os.ErrNotExist)
	case !ok:
		if err := m.parentDir("open", name); err != nil {
			return nil, err
		}
		if err := m.mutate(-1); err != nil {
			return nil, pathErr("open", name, err)
		}
		n = &memNode{}
		m.cur[name] = n
	}
	f := &memFile{fs: m, node: n, name: name, gen: m.gen, flag: flag}
	if flag&os.O_TRUNC != 0 && len(n.data) > 0 {
		if err := f.truncateLocked(0); err != nil {
			return nil, err
		}
	}
	return f, nil
}

// Remove implements FS.
func (m *MemFS) Remove(name string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	n, ok := m.cur[name]
	if !ok {
		return pathErr("remove", name, os.ErrNotExist)
	}
	if n.dir {
		for other := range m.cur {
			if filepath.Dir(other) == name && other != name {
				return pathErr("remove", name, syscall.ENOTEMPTY)
			}
		}
	}
	if err := m.mutate(-1); err != nil {
		return pathErr("remove", name, err)
	}
	delete(m.cur, name)
	return nil
}

// Rename implements FS.
func (m *MemFS) Rename(oldname, newname string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	oldname, newname = clean(oldname), clean(newname)
	n, ok := m.cur[oldname]
	if !ok {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: os.ErrNotExist}
	}
	if n.dir {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: errors.New("memfs: renaming directories is not supported")}
	}
	if err := m.parentDir("rename", newname); err != nil {
		return err
	}
	if err := m.mutate(-1); err != nil {
		return &os.LinkError{Op: "rename", Old: oldname, New: newname, Err: err}
	}
	delete(m.cur, oldname)
	m.cur[newname] = n
	return nil
}

// MkdirAll implements FS.
func (m *MemFS) MkdirAll(dir string, perm os.FileMode) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	var missing []string
	for d := dir; ; d = filepath.Dir(d) {
		if n, ok := m.cur[d]; ok {
			if !n.dir {
				return pathErr("mkdir", d, syscall.ENOTDIR)
			}
			break
		}
		missing = append(missing, d)
	}
	for i := len(missing) - 1; i >= 0; i-- {
		if err := m.mutate(-1); err != nil {
			return pathErr("mkdir", missing[i], err)
		}
		m.cur[missing[i]] = &memNode{dir: true}
	}
	return nil
}

// ReadDir implements FS.
func (m *MemFS) ReadDir(dir string) ([]string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if n, ok := m.cur[dir]; !ok || !n.dir {
		return nil, pathErr("readdir", dir, os.ErrNotExist)
	}
	var names []string
	for name := range m.cur {
		if name != dir && filepath.Dir(name) == dir {
			names = append(names, filepath.Base(name))
		}
	}
	sort.Strings(names)
	return names, nil
}

// Stat implements FS.
func (m *MemFS) Stat(name string) (os.FileInfo, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	n, ok := m.cur[name]
	if !ok {
		return nil, pathErr("stat", name, os.ErrNotExist)
	}
	return memInfo{name: filepath.Base(name), size: int64(len(n.data)), dir: n.dir}, nil
}

// SyncDir implements FS.
func (m *MemFS) SyncDir(dir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	dir = clean(dir)
	if n, ok := m.cur[dir]; !ok || !n.dir {
		return pathErr("syncdir", dir, os.ErrNotExist)
	}
	if err := m.mutate(OpSync); err != nil {
		return pathErr("syncdir", dir, err)
	}
	for name := range m.durable {
		if name != dir && filepath.Dir(name) == dir {
			delete(m.durable, name)
		}
	}
	for name, n := range m.cur {
		if name != dir && filepath.Dir(name) == dir {
			m.durable[name] = n
		}
	}
	return nil
}

// Lock implements FS.
func (m *MemFS) Lock(name string) (io.Closer, error) {
	f, err := m.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	f.Close()
	m.mu.Lock()
	defer m.mu.Unlock()
	name = clean(name)
	if m.locks[name] {
		return nil, ErrLocked
	}
	m.locks[name] = true
	return &memLock{fs: m, name: name, gen: m.gen}, nil
}

type memLock struct {
	fs   *MemFS
	name string
	gen  int
	once sync.Once
}

func (l *memLock) Close() error {
	l.once.Do(func() {
		l.fs.mu.Lock()
		defer l.fs.mu.Unlock()
		if l.gen == l.fs.gen {
			delete(l.fs.locks, l.name)
		}
	})
	return nil
}

type memInfo struct {
	name string
	size int64
	dir  bool
}

func (i memInfo) Name() string       { return i.name }
func (i memInfo) Size() int64        { return i.size }
func (i memInfo) ModTime() time.Time { return time.Unix(0, 0) }
func (i memInfo) IsDir() bool        { return i.dir }
func (i memInfo) Sys() any           { return nil }
func (i memInfo) Mode() os.FileMode {
	if i.dir {
		return os.ModeDir | 0o755
	}
	return 0o644
}

// memFile is an open MemFS file.
type memFile struct {
	fs     *MemFS
	node   *memNode
	name   string
	gen    int
	flag   int
	pos    int64
	closed bool
}

var errCrashedFile = errors.New("memfs: file was open when the machine crashed")

// check returns why f can't be used, if it can't. Called with fs.mu held.
func (f *memFile) check(op string, write bool) error {
	switch {
	case f.closed:
		return pathErr(op, f.name, os.ErrClosed)
	case f.gen != f.fs.gen:
		return pathErr(op, f.name, errCrashedFile)
	case write && f.flag&(os.O_WRONLY|os.O_RDWR) == 0:
		return pathErr(op, f.name, syscall.EBADF)
	}
	return nil
}

func (f *memFile) Read(p []byte) (int, error) {
	n, err := f.ReadAt(p, f.pos)
	f.fs.mu.Lock()
	f.pos += int64(n)
	f.fs.mu.Unlock()
	return n, err
}

func (f *memFile) ReadAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("read", false); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("read", f.name, syscall.EINVAL)
	}
	if off >= int64(len(f.node.data)) {
		return 0, io.EOF
	}
	n := copy(p, f.node.data[off:])
	if n < len(p) {
		return n, io.EOF
	}
	return n, nil
}

func (f *memFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	off := f.pos
	if f.flag&os.O_APPEND != 0 {
		off = int64(len(f.node.data))
	}
	n, err := f.writeAtLocked(p, off)
	f.pos = off + int64(n)
	return n, err
}

func (f *memFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.writeAtLocked(p, off)
}

func (f *memFile) writeAtLocked(p []byte, off int64) (int, error) {
	if err := f.check("write", true); err != nil {
		return 0, err
	}
	if off < 0 {
		return 0, pathErr("write", f.name, syscall.EINVAL)
	}
	err := f.fs.mutate(OpWrite)
	if errors.Is(err, ErrPowerCut) {
		return 0, pathErr("write", f.name, err)
	}
	if err != nil {
		p = p[:len(p)/2] // a partial write, then the error
	}
	op := memOp{off: off, data: append([]byte(nil), p...)}
	f.node.data = applyOp(f.node.data, op)
	f.node.pending = append(f.node.pending, op)
	if err != nil {
		return len(p), pathErr("write", f.name, err)
	}
	return len(p), nil
}

func (f *memFile) Seek(offset int64, whence int) (int64, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("seek", false); err != nil {
		return 0, err
	}
	var pos int64
	switch whence {
	case io.SeekStart:
		pos = offset
	case io.SeekCurrent:
		pos = f.pos + offset
	case io.SeekEnd:
		pos = int64(len(f.node.data)) + offset
	default:
		return 0, pathErr("seek", f.name, syscall.EINVAL)
	}
	if pos < 0 {
		return 0, pathErr("seek", f.name, syscall.EINVAL)
	}
	f.pos = pos
	return pos, nil
}

func (f *memFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	return f.truncateLocked(size)
}

func (f *memFile) truncateLocked(size int64) error {
	if err := f.check("truncate", true); err != nil {
		return err
	}
	if size < 0 {
		return pathErr("truncate", f.name, syscall.EINVAL)
	}
	if err := f.fs.mutate(OpTruncate); err != nil {
		return pathErr("truncate", f.name, err)
	}
	op := memOp{off: size, trunc: true}
	f.node.data = applyOp(f.node.data, op)
	f.node.pending = append(f.node.pending, op)
	return nil
}

func (f *memFile) Sync() error { return f.sync("sync") }

// Datasync is Sync: MemFS keeps no metadata that fdatasync could skip (the
// size is part of the contents), so both make everything written durable.
func (f *memFile) Datasync() error { return f.sync("fdatasync") }

func (f *memFile) sync(op string) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check(op, false); err != nil {
		return err
	}
	if err := f.fs.mutate(OpSync); err != nil {
		return pathErr(op, f.name, err)
	}
	f.node.synced = append(f.node.synced[:0], f.node.data...)
	f.node.pending = nil
	return nil
}

func (f *memFile) Stat() (os.FileInfo, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if err := f.check("stat", false); err != nil {
		return nil, err
	}
	return memInfo{name: filepath.Base(f.name), size: int64(len(f.node.data)), dir: f.node.dir}, nil
}

func (f *memFile) Close() error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.closed {
		return pathErr("close", f.name, os.ErrClosed)
	}
	f.closed = true
	return nil
}
