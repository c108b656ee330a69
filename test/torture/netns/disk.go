package netns

import (
	"errors"
	"fmt"
	"golang.org/x/sys/unix"
	"os"
	"path/filepath"
	"slices"
)

// FillerName is the file Disk.Fill writes in the disk's directory.
const FillerName = ".torture-filler"

// Disk is a size-limited tmpfs mounted on a directory (a member's data
// directory), which can be filled to simulate a full disk.
//
// A Disk is not safe for concurrent use. Its mount is owned by the Net
// that made it: Net.Close unmounts it.
type Disk struct {
	dir string
}

// MountDisk mounts a tmpfs of size bytes (rounded up to whole pages) on
// dir, creating dir. The mount's source is the Net's key and it is
// recorded in the Net's state file, so Close unmounts it and stale
// cleanup unmounts it if the owner dies. Mount before starting a process
// that must see the disk (see Command).
func (n *Net) MountDisk(dir string, size int64) (*Disk, error) {
	if size <= 0 {
		return nil, fmt.Errorf("netns: disk size %d: want > 0", size)
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	n.mu.Lock()
	defer n.mu.Unlock()
	if n.closed {
		return nil, ErrClosed
	}
	if err := os.MkdirAll(abs, 0o755); err != nil {
		return nil, fmt.Errorf("netns: %w", err)
	}
	// Record before mounting (the state file's invariant).
	if !slices.Contains(n.st.Mounts, abs) {
		n.st.Mounts = append(n.st.Mounts, abs)
		if err := n.st.write(); err != nil {
			return nil, err
		}
	}
	opts := fmt.Sprintf("size=%d,mode=0755", size)
	if err := unix.Mount(n.key, abs, "tmpfs", unix.MS_NOSUID|unix.MS_NODEV, opts); err != nil {
		return nil, fmt.Errorf("netns: mount tmpfs (%s) on %s: %w", opts, abs, err)
	}
	return &Disk{dir: abs}, nil
}

// Dir returns the absolute path the disk is mounted on.
func (d *Disk) Dir() string { return d.dir }

// Fill writes FillerName (appending if it exists) until the file system
// has no free space left: writes of new data anywhere on it fail with
// ENOSPC. It allocates with fallocate where possible, then tops up with
// ever smaller writes. (Appending to a file whose last page is not full
// may still succeed: tmpfs allocates whole pages.)
func (d *Disk) Fill() error {
	f, err := os.OpenFile(filepath.Join(d.dir, FillerName), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return fmt.Errorf("netns: fill %s: %w", d.dir, err)
	}
	defer f.Close()
	free, err := d.free()
	if err != nil {
		return err
	}
	if free > 0 {
		fi, err := f.Stat()
		if err != nil {
			return fmt.Errorf("netns: fill %s: %w", d.dir, err)
		}
		// Best effort: a file system without fallocate, or with less room
		// than statfs said, is finished by the writes below.
		_ = unix.Fallocate(int(f.Fd()), 0, fi.Size(), free)
	}
	buf := make([]byte, 64<<10)
	for chunk := len(buf); chunk > 0; {
		if _, err := f.Write(buf[:chunk]); err != nil {
			if !errors.Is(err, unix.ENOSPC) {
				return fmt.Errorf("netns: fill %s: %w", d.dir, err)
			}
			chunk /= 2
		}
	}
	if free, err := d.free(); err != nil {
		return err
	} else if free != 0 {
		return fmt.Errorf("netns: fill %s: %d bytes still free after ENOSPC", d.dir, free)
	}
	return nil
}

// free returns the bytes available on the disk.
func (d *Disk) free() (int64, error) {
	var st unix.Statfs_t
	if err := unix.Statfs(d.dir, &st); err != nil {
		return 0, fmt.Errorf("netns: statfs %s: %w", d.dir, err)
	}
	return int64(st.Bavail) * st.Bsize, nil
}

// Free removes the filler file Fill wrote, if any.
func (d *Disk) Free() error {
	if err := os.Remove(filepath.Join(d.dir, FillerName)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("netns: %w", err)
	}
	return nil
}

// Wipe removes everything in the disk's directory except the entries
// named in keep (e.g. "myid"), leaving the mount. The filler file is
// removed too unless kept.
func (d *Disk) Wipe(keep ...string) error {
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		return fmt.Errorf("netns: wipe %s: %w", d.dir, err)
	}
	for _, e := range entries {
		if slices.Contains(keep, e.Name()) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(d.dir, e.Name())); err != nil {
			return fmt.Errorf("netns: wipe %s: %w", d.dir, err)
		}
	}
	return nil
}
