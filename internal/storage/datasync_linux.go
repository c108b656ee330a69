package storage

import (
	"errors"
	"os"
	"syscall"
)

// datasync is fdatasync(2): the file's data and the metadata needed to read
// it back (its size, its blocks — including the conversion of fallocate'd
// unwritten extents) are durable when it returns, without the inode's
// timestamps.
func datasync(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	if err := rc.Control(func(fd uintptr) {
		for {
			serr = syscall.Fdatasync(int(fd))
			if !errors.Is(serr, syscall.EINTR) {
				return
			}
		}
	}); err != nil {
		return err
	}
	if serr != nil {
		return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: serr}
	}
	return nil
}
