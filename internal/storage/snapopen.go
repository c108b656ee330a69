package storage

import (
	"fmt"
	"io"
	"path/filepath"

	"go.etcd.io/raft/v3/raftpb"
)

// Open checks the snapshot file named by meta's term and index and returns
// a reader of its decompressed body (for sending it to a follower, or
// installing one received). Damage is a *CorruptError. The caller closes
// the reader.
func (s *Snapshotter) Open(meta *raftpb.SnapshotMetadata) (io.ReadCloser, error) {
	path := filepath.Join(s.dir, snapName(meta.GetTerm(), meta.GetIndex()))
	got, rc, err := OpenSnapshotFile(s.fs, path)
	if err != nil {
		return nil, err
	}
	if got.GetIndex() != meta.GetIndex() || got.GetTerm() != meta.GetTerm() {
		rc.Close()
		return nil, &CorruptError{File: path, Offset: snapHeaderSize,
			Reason: fmt.Sprintf("metadata (term %d, index %d) does not match the file name", got.GetTerm(), got.GetIndex())}
	}
	return rc, nil
}

// Remove deletes the snapshot file named by meta (one found damaged after
// it was written) and makes the removal durable.
func (s *Snapshotter) Remove(meta *raftpb.SnapshotMetadata) error {
	if err := s.fs.Remove(filepath.Join(s.dir, snapName(meta.GetTerm(), meta.GetIndex()))); err != nil {
		return err
	}
	if err := s.fs.SyncDir(s.dir); err != nil {
		return syncFailed("sync directory "+s.dir, err)
	}
	return nil
}
