//go:build !linux

package storage

import "os"

func fallocate(f *os.File, size int64) error { return f.Truncate(size) }
