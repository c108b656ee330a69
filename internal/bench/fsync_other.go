//go:build !linux

package bench

import "os"

// preallocate reserves size bytes of f from off by writing zeros.
func preallocate(f *os.File, off, size int64) error { return writeZeros(f, off, size) }

// datasync falls back to File.Sync where fdatasync is not available.
func datasync(f *os.File) error { return f.Sync() }
