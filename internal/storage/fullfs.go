package storage

import (
	"os"
	"sync"
	"syscall"
)

// FullFS is a MemFS whose disk a test fills and empties. While it is
// full, every write fails with ENOSPC after writing half of its bytes (the
// fault MemFS injects) and every truncation that grows a file (how MemFS
// preallocates) fails with ENOSPC.
type FullFS struct {
	*MemFS
	mu   sync.Mutex
	full bool
}

// NewFullFS returns an empty FullFS with room to spare.
func NewFullFS() *FullFS { return &FullFS{MemFS: NewMemFS()} }

// SetFull fills the disk (true) or frees it (false).
func (f *FullFS) SetFull(full bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.full = full
}

// OpenFile implements FS.
func (f *FullFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	file, err := f.MemFS.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return &fullFile{File: file, fs: f}, nil
}

// fullFile routes writes and truncations through the FullFS's state. The
// FullFS lock is held across the injection and the operation, so the
// injected fault is the one this operation meets.
type fullFile struct {
	File
	fs *FullFS
}

func (f *fullFile) Write(p []byte) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.full {
		f.fs.InjectFault(OpWrite, 1, syscall.ENOSPC)
	}
	return f.File.Write(p)
}

func (f *fullFile) WriteAt(p []byte, off int64) (int, error) {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.full {
		f.fs.InjectFault(OpWrite, 1, syscall.ENOSPC)
	}
	return f.File.WriteAt(p, off)
}

func (f *fullFile) Truncate(size int64) error {
	f.fs.mu.Lock()
	defer f.fs.mu.Unlock()
	if f.fs.full {
		fi, err := f.File.Stat()
		if err == nil && size > fi.Size() {
			f.fs.InjectFault(OpTruncate, 1, syscall.ENOSPC)
		}
	}
	return f.File.Truncate(size)
}
