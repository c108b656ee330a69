package storage

import (
	"errors"
	"fmt"
	"syscall"
)

// ErrDiskFull is wrapped by write errors caused by a full disk (ENOSPC).
// The WAL or snapshot is left consistent, the failed call had no effect,
// and the call may be retried once space has been freed.
var ErrDiskFull = errors.New("storage: disk full")

// ErrSyncFailed is wrapped by errors from a failed fsync (or a write whose
// outcome is unknown). Data acknowledged earlier may be lost: the caller
// must stop the process; the WAL refuses every later call.
var ErrSyncFailed = errors.New("storage: fsync failed, durable state is unknown; stop the server")

// ErrNoSnapshot is returned by Snapshotter.LoadNewest when the directory
// holds no snapshot file at all.
var ErrNoSnapshot = errors.New("storage: no snapshot")

// CorruptError reports data that cannot be read back: a damaged record in the
// middle of the WAL, a missing segment, or a damaged snapshot file.
type CorruptError struct {
	File   string // the damaged (or, for a missing segment, the following) file
	Offset int64  // byte offset in File of the first unreadable record
	Reason string // what is wrong
}

func (e *CorruptError) Error() string {
	return fmt.Sprintf("storage: %s is corrupt at offset %d: %s. "+
		"Writes recorded after this point cannot be recovered from this file. "+
		"Keep a copy of the directory for analysis ('warden wal dump' lists every readable record), then "+
		"restore this server's data from a backup or, in an ensemble, wipe its data directory so it "+
		"re-syncs from the other members", e.File, e.Offset, e.Reason)
}

// writeError classifies an error from a write or truncate: ENOSPC wraps
// ErrDiskFull, anything else is returned as it is.
func writeError(what string, err error) error {
	if errors.Is(err, syscall.ENOSPC) {
		return fmt.Errorf("%w: %s: %w", ErrDiskFull, what, err)
	}
	return fmt.Errorf("storage: %s: %w", what, err)
}

// syncFailed wraps a failed fsync in ErrSyncFailed.
func syncFailed(what string, err error) error {
	return fmt.Errorf("%w: %s: %w", ErrSyncFailed, what, err)
}

// VersionError reports a file of a format version newer than this build
// reads: a newer Warden wrote it. It is not damage, and the file must not
// be removed: the data directory needs that newer build (or a later one).
type VersionError struct {
	File    string // the file
	Format  string // what the file is: "write-ahead log segment", "snapshot file"
	Version uint32 // the file's format version
	Newest  uint32 // the newest version this build reads
}

func (e *VersionError) Error() string {
	return fmt.Sprintf("storage: %s is a %s of format version %d, and this build of Warden reads versions up to %d: "+
		"a newer Warden wrote it. Run that release (or a later one) on this data directory; "+
		"do not delete the file: it holds acknowledged writes", e.File, e.Format, e.Version, e.Newest)
}
