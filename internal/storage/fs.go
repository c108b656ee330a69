package storage

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// FS is the file-system seam every durable write goes through. OSFS is the
// real one; MemFS simulates power loss and injects errors for tests.
//
// Names are slash-separated paths as accepted by the os package. Durability
// follows POSIX: file contents are durable once File.Sync or File.Datasync
// returns, and a created, renamed or removed directory entry is durable
// once SyncDir of its directory returns.
type FS interface {
	// OpenFile opens name as os.OpenFile does.
	OpenFile(name string, flag int, perm os.FileMode) (File, error)
	// Remove removes a file or an empty directory.
	Remove(name string) error
	// Rename renames oldname to newname, replacing newname if it exists.
	Rename(oldname, newname string) error
	// MkdirAll creates dir and any missing parents.
	MkdirAll(dir string, perm os.FileMode) error
	// ReadDir returns the names of the entries of dir, sorted.
	ReadDir(dir string) ([]string, error)
	// Stat describes name.
	Stat(name string) (os.FileInfo, error)
	// SyncDir makes dir's entries (after create, rename, remove) durable.
	SyncDir(dir string) error
	// Lock takes an exclusive lock on the file name, creating it if needed.
	// A second Lock of the same file, from this or another process, fails
	// with ErrLocked until the returned Closer is closed.
	Lock(name string) (io.Closer, error)
}

// File is an open file of an FS.
type File interface {
	io.Reader
	io.ReaderAt
	io.Writer
	io.WriterAt
	io.Seeker
	io.Closer
	// Sync makes the file's contents and all its metadata durable (fsync).
	Sync() error
	// Datasync makes the file's contents durable, with the metadata needed
	// to read them back (size, block allocation) but not, say, its
	// modification time: fdatasync(2) on Linux, Sync elsewhere. It is as
	// durable as Sync for the data and cheaper where the file's size does
	// not change, e.g. writes into a preallocated WAL segment.
	Datasync() error
	// Truncate changes the file's size; growing it adds zero bytes.
	Truncate(size int64) error
	// Stat describes the file.
	Stat() (os.FileInfo, error)
}

// ErrLocked is returned by FS.Lock when another holder has the lock: another
// server is using the directory.
var ErrLocked = errors.New("storage: the lock is held by another process (is another server using this directory?)")

// OSFS is the operating system's file system.
var OSFS FS = osFS{}

type osFS struct{}

func (osFS) OpenFile(name string, flag int, perm os.FileMode) (File, error) {
	f, err := os.OpenFile(name, flag, perm)
	if err != nil {
		return nil, err
	}
	return osFile{f}, nil
}

// osFile is an OSFS file: an *os.File with Datasync.
type osFile struct{ *os.File }

func (f osFile) Datasync() error { return datasync(f.File) }

func (osFS) Remove(name string) error                    { return os.Remove(name) }
func (osFS) Rename(oldname, newname string) error        { return os.Rename(oldname, newname) }
func (osFS) MkdirAll(dir string, perm os.FileMode) error { return os.MkdirAll(dir, perm) }
func (osFS) Stat(name string) (os.FileInfo, error)       { return os.Stat(name) }

func (osFS) ReadDir(dir string) ([]string, error) {
	des, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	names := make([]string, len(des))
	for i, de := range des {
		names[i] = de.Name()
	}
	sort.Strings(names)
	return names, nil
}

func (osFS) SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

func (osFS) Lock(name string) (io.Closer, error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := flock(f); err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// preallocate makes f size bytes long, reserving the disk blocks where the
// platform allows it (fallocate on Linux) so that later writes inside the
// file neither fail for lack of space nor change the file's size.
func preallocate(f File, size int64) error {
	if of, ok := f.(osFile); ok {
		return fallocate(of.File, size)
	}
	return f.Truncate(size)
}

// MkdirAllDurable creates dir and its missing parents and syncs the
// directory entries it created, so the directories survive a power cut.
func MkdirAllDurable(fs FS, dir string) error {
	dir = filepath.Clean(dir)
	// Find the nearest existing ancestor: every directory below it is new.
	var created []string
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := fs.Stat(d); err == nil {
			break
		}
		created = append(created, d)
		if filepath.Dir(d) == d {
			break
		}
	}
	if len(created) == 0 {
		return nil
	}
	if err := fs.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for _, d := range created {
		if err := fs.SyncDir(filepath.Dir(d)); err != nil {
			return syncFailed("sync directory "+filepath.Dir(d), err)
		}
	}
	return nil
}
