package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"

	"github.com/wardenzk/warden/internal/storage"
)

const walDoc = `Prints every record of a write-ahead log, read-only: its offset, type, and
for entries the index, term, entry type and data size; hard states; snapshot
markers; each segment's format version. <dir> is the WAL directory itself or a dataLogDir (whose
version-2/wal is then read). Damage is reported where it is found.
`

// runWALDump is `warden wal dump DIR`.
func runWALDump(args []string) error {
	if len(args) != 1 {
		return badUsage("expected one directory, got %d arguments", len(args))
	}
	return dumpWAL(os.Stdout, walDir(args[0]))
}

// walDir accepts a dataLogDir as well as the WAL directory inside it.
func walDir(dir string) string {
	inner := storage.WALDir(dir)
	if fi, err := os.Stat(inner); err == nil && fi.IsDir() {
		return inner
	}
	return dir
}

func dumpWAL(out io.Writer, dir string) error {
	if _, err := os.Stat(dir); err != nil {
		return err
	}
	var segments, entries int
	err := storage.ScanWAL(storage.OSFS, dir, func(seg storage.WALSegment, recs []storage.WALRecord) error {
		segments++
		fmt.Fprintf(out, "segment %s  seq=%d first-index=%d size=%d used=%d format=%d\n",
			filepath.Base(seg.Path), seg.Seq, seg.FirstIndex, seg.Size, seg.End, seg.Version)
		for _, r := range recs {
			fmt.Fprintf(out, "  offset %-10d %-9s ", r.Offset, r.Type)
			switch r.Type {
			case storage.RecordEntry:
				entries++
				e := r.Entry
				fmt.Fprintf(out, "index=%d term=%d type=%s size=%d", e.GetIndex(), e.GetTerm(), e.GetType(), len(e.GetData()))
			case storage.RecordHardState:
				hs := r.HardState
				fmt.Fprintf(out, "term=%d vote=%d commit=%d", hs.GetTerm(), hs.GetVote(), hs.GetCommit())
			case storage.RecordSnapshot:
				m := r.Snapshot
				fmt.Fprintf(out, "index=%d term=%d voters=%v learners=%v", m.GetIndex(), m.GetTerm(),
					m.GetConfState().GetVoters(), m.GetConfState().GetLearners())
			case storage.RecordVersion:
				fmt.Fprintf(out, "format=%d", r.Version)
			case storage.RecordSalt:
				fmt.Fprintf(out, "salt=%016x", r.Salt)
			}
			fmt.Fprintf(out, " (record %d bytes)\n", r.Size)
		}
		if seg.Torn {
			fmt.Fprintf(out, "  offset %-10d torn write: %d bytes after this point are the remains of an unacknowledged write; the server truncates them at start-up\n",
				seg.End, seg.Size-seg.End)
		}
		return nil
	})
	fmt.Fprintf(out, "%d segments, %d entry records\n", segments, entries)
	if err != nil {
		return fmt.Errorf("stopped: %w", err)
	}
	return nil
}
