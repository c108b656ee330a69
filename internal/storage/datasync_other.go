//go:build !linux

package storage

import "os"

// datasync falls back to fsync where fdatasync is not available (or, on
// Darwin, where only os.File.Sync's F_FULLFSYNC reaches the disk).
func datasync(f *os.File) error { return f.Sync() }
