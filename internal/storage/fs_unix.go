//go:build unix

package storage

import (
	"errors"
	"fmt"
	"os"
	"syscall"
)

func flock(f *os.File) error {
	err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB)
	if errors.Is(err, syscall.EWOULDBLOCK) {
		return ErrLocked
	}
	if err != nil {
		return &os.PathError{Op: "flock", Path: f.Name(), Err: err}
	}
	return nil
}

// mapReadOnly maps the first size bytes of f into memory, read only, for
// one sequential pass. Release the mapping with unmap.
func mapReadOnly(f *os.File, size int64) ([]byte, error) {
	if size <= 0 || int64(int(size)) != size {
		return nil, fmt.Errorf("storage: cannot map %d bytes of %s", size, f.Name())
	}
	b, err := syscall.Mmap(int(f.Fd()), 0, int(size), syscall.PROT_READ, syscall.MAP_SHARED)
	if err != nil {
		return nil, &os.PathError{Op: "mmap", Path: f.Name(), Err: err}
	}
	_ = syscall.Madvise(b, syscall.MADV_SEQUENTIAL) // a hint: read ahead, drop behind
	return b, nil
}

// unmap releases a mapping made by mapReadOnly.
func unmap(b []byte) error { return syscall.Munmap(b) }
