package zkimport

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
)

// Dirs says where a ZooKeeper server kept its files.
type Dirs struct {
	// Data is ZooKeeper's dataDir (the directory holding version-2/), or
	// the version-2 directory itself. Required.
	Data string
	// Log is ZooKeeper's dataLogDir when it was set apart from dataDir;
	// empty means the logs are with the snapshots.
	Log string
	// MaxBuffer bounds one buffer or string read from the files, in bytes;
	// 0 means DefaultMaxBuffer.
	MaxBuffer int
}

// maxSnapshotsTried is how many snapshots, newest first, Load tries before
// giving up (FileSnap.deserialize's limit).
const maxSnapshotsTried = 100

// zkFile is a snapshot or log file with the zxid its name carries.
type zkFile struct {
	path string
	zxid int64
}

// version2 returns dir/version-2 when it exists, else dir (taken to be a
// version-2 directory already).
func version2(dir string) string {
	v := filepath.Join(dir, "version-2")
	if st, err := os.Stat(v); err == nil && st.IsDir() {
		return v
	}
	return dir
}

// listFiles returns the files of dir named prefix.<hex zxid>[.suffix],
// sorted by zxid ascending (Util.sortDataDir / getZxidFromName).
func listFiles(dir, prefix string) ([]zkFile, error) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var out []zkFile
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		parts := strings.Split(e.Name(), ".")
		if len(parts) < 2 || parts[0] != prefix {
			continue
		}
		z, err := strconv.ParseUint(parts[1], 16, 64)
		if err != nil {
			continue
		}
		out = append(out, zkFile{path: filepath.Join(dir, e.Name()), zxid: int64(z)})
	}
	slices.SortFunc(out, func(a, b zkFile) int {
		if a.zxid != b.zxid {
			if a.zxid < b.zxid {
				return -1
			}
			return 1
		}
		return strings.Compare(a.path, b.path)
	})
	return out, nil
}

// Load reads a ZooKeeper data directory into a DB the way ZooKeeper's
// start-up does (see doc.go, Loading): the newest snapshot that parses and
// passes its checksums (older ones are tried when newer ones are damaged,
// and the reasons returned in skipped), the transactions logged after it,
// and the clean-up of dead sessions' ephemerals.
//
// A directory with logs but no usable snapshot is refused, as ZooKeeper
// refuses it; an empty directory is an error too (nothing to import).
func Load(dirs Dirs) (db *DB, skipped []error, err error) {
	maxLen := dirs.MaxBuffer
	if maxLen <= 0 {
		maxLen = DefaultMaxBuffer
	}
	snapDir := version2(dirs.Data)
	logDir := snapDir
	if dirs.Log != "" {
		logDir = version2(dirs.Log)
	}
	snaps, err := listFiles(snapDir, "snapshot")
	if err != nil {
		return nil, nil, fmt.Errorf("zkimport: %w", err)
	}
	logs, err := listFiles(logDir, "log")
	if err != nil {
		return nil, nil, fmt.Errorf("zkimport: %w", err)
	}
	if len(snaps) == 0 && len(logs) == 0 {
		return nil, nil, fmt.Errorf("zkimport: no ZooKeeper snapshot or log in %s", snapDir)
	}

	for i := len(snaps) - 1; i >= 0 && len(snaps)-i <= maxSnapshotsTried; i-- {
		cand := newDB()
		if err := readSnapshotFile(snaps[i].path, maxLen, cand); err != nil {
			skipped = append(skipped, err)
			continue
		}
		cand.Snapshot, cand.SnapshotZxid, cand.LastZxid = snaps[i].path, snaps[i].zxid, snaps[i].zxid
		db = cand
		break
	}
	if db == nil {
		if len(snaps) > 0 {
			return nil, skipped, fmt.Errorf("zkimport: no valid snapshot in %s (%d tried): %w", snapDir, len(snaps), errors.Join(skipped...))
		}
		return nil, nil, fmt.Errorf("zkimport: %s has transaction logs but no snapshot; ZooKeeper refuses to start on it "+
			"(it would lose the transactions before the first log): find the snapshot files", logDir)
	}

	r := newReplayer(db, maxLen)
	if err := r.replayLogs(logs); err != nil {
		return nil, skipped, err
	}
	r.killDeadSessions()
	r.recountQuotas()
	return db, skipped, nil
}

// replayLogs applies the transactions after the snapshot (FileTxnLog.read
// of SnapshotZxid+1): from the newest log starting at or before that zxid
// and every later log, skipping leading transactions the snapshot covers.
func (r *replayer) replayLogs(logs []zkFile) error {
	from := r.db.SnapshotZxid + 1
	start := 0
	for i, l := range logs {
		if l.zxid <= from {
			start = i
		}
	}
	forwarded := false
	for _, l := range logs[start:] {
		lr, closer, err := openLog(l.path, r.maxLen)
		if err != nil {
			if st, serr := os.Stat(l.path); serr == nil && st.Size() < 16 {
				continue // created but never written: no transactions
			}
			return err
		}
		r.db.Logs = append(r.db.Logs, l.path)
		for {
			rec, err := lr.next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				closer.Close()
				return err
			}
			if !forwarded {
				if rec.Header.Zxid < from {
					continue
				}
				forwarded = true
			}
			if err := r.apply(rec); err != nil {
				closer.Close()
				return fmt.Errorf("%w: %s: transaction %#x at offset %d: %w", ErrCorrupt, l.path, rec.Header.Zxid, rec.Offset, err)
			}
			r.db.Replayed++
		}
		closer.Close()
	}
	return nil
}
