package bench

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// preallocate reserves size bytes of f from off with fallocate(2), which
// leaves them unwritten extents, as Warden's WAL does: the first write
// into each makes fdatasync commit its conversion too. File systems
// without fallocate get zeros written instead.
func preallocate(f *os.File, off, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, off, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return writeZeros(f, off, size)
	}
	return err
}

// datasync is fdatasync(2): f's data, and the metadata needed to read it
// back, are durable when it returns.
func datasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		switch {
		case err == nil:
			return nil
		case !errors.Is(err, unix.EINTR):
			return &os.PathError{Op: "fdatasync", Path: f.Name(), Err: err}
		}
	}
}
