package storage

import "path/filepath"

// SnapDir returns the directory holding the snapshot files of dataDir:
// dataDir/version-2, where ZooKeeper keeps its snapshots.
func SnapDir(dataDir string) string { return filepath.Join(dataDir, "version-2") }

// WALDir returns the WAL directory of dataLogDir (which defaults to
// dataDir): dataLogDir/version-2/wal.
func WALDir(dataLogDir string) string { return filepath.Join(dataLogDir, "version-2", "wal") }

// LockPath returns the lock file of dataDir, taken with FS.Lock so that two
// servers cannot share a directory: dataDir/warden.lock.
func LockPath(dataDir string) string { return filepath.Join(dataDir, "warden.lock") }
