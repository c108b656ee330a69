// Package storage keeps Warden's replicated state on disk: the write-ahead
// log (WAL) holding raft's entries and HardState, and the snapshot files
// holding the state machine at an applied index. Every durable write goes
// through the FS seam, so tests can cut the power (MemFS) after any write.
//
// # Using it
//
// The directories are SnapDir(dataDir), WALDir(dataLogDir) and the lock
// file LockPath(dataDir). At start-up: take the lock (FS.Lock), load the newest
// valid snapshot (Snapshotter.LoadNewest), open the WAL (OpenWAL, which
// recovers it) and hand ReadAll's result to raft. In raft's Ready loop, call
// WAL.Save(rd.HardState, rd.Entries, rd.MustSync) before sending messages or
// applying: with MustSync it returns once everything is durable. After
// writing a snapshot file with Snapshotter.Save, record it with
// WAL.SaveSnapshot and trim the log with WAL.ReleaseTo (which keeps up to
// WALOptions.Spares released segments as spares, written over by the next
// segments).
//
// # What is durable when a call returns (nil error)
//
//	WAL.Save, mustSync   the entries and HardState passed, and every record
//	                     before them (one fdatasync for all: group commit)
//	WAL.Save, !mustSync  nothing new: the HardState (raft then changes only its
//	                     commit index) is written but not synced (with entries,
//	                     or a new term or vote, Save syncs all the same)
//	WAL.SaveSnapshot     the marker, and every record before it
//	WAL.ReleaseTo        the deletion of the released segments
//	Snapshotter.Save     the snapshot file, under its final name
//	OpenWAL              the repair of a torn tail
//
// A commit index saved without sync can be lost in a power cut: after it,
// ReadAll returns an older HardState. That is safe: raft's durable state is
// the term, the vote and the log (all synced), and the commit index is
// recomputed — a follower learns it from the leader; a leader, a lone
// member included, commits its whole log again with the first entry of its
// term. ReadAll never returns a commit beyond the last index of the log it
// returns.
//
// So a write of a lone member costs one sync: raft hands it over in two
// Readys, the entry (MustSync) and then its commit (not MustSync). In the
// steady state a synced Save is exactly one fdatasync of the tail segment:
// the segment is preallocated, so appending changes no metadata that
// fdatasync skips. Full fsyncs (and directory syncs) are kept for what
// changes metadata: creating, renaming and re-preallocating a segment.
// A segment written over a spare is cheaper still to sync than a freshly
// preallocated one: its blocks are already written, so the file system
// has no extents to convert from "unwritten" as the log fills them.
//
// With WALOptions.NoSync (forceSync=no) Save and SaveSnapshot never sync:
// a power cut or kernel crash can lose acknowledged writes.
//
// # WAL segments
//
// The WAL is a directory of segment files named <seq>-<firstIndex>.wal
// (two 16-digit lower-case hex numbers). seq counts up from 0 with no gap;
// firstIndex bounds the segments before it: none of their live entries has
// an index at or above it. A segment is either a spare written over (see
// below) or created under the name <name>.tmp and preallocated to
// WALOptions.SegmentSize (fallocate: zero bytes); either way it is given
// its header records, fsynced, renamed, and the directory fsynced; the
// segment before it is synced first, since only the last segment may end
// in a torn write.
//
//	segment file (SegmentSize bytes, preallocated), version 2
//	+---------+------+----------------+--------+-----+--------+---------------------+
//	| version | salt | header records | record | ... | record | zero bytes, or what |
//	| record  |record| (HardState,    |        |     |        | a spare held before |
//	|         |      |  snap marker)  |        |     |        | (unused space)      |
//	+---------+------+----------------+--------+-----+--------+---------------------+
//	0         16     40                                       ^ end of data
//
// A new segment starts with its version record (padded to 16 bytes) and
// its salt record (a random non-zero uint64, padded to 24 bytes), both
// framed as in version 1, then copies of the newest HardState (if not
// empty) and snapshot marker (if any), so older segments can be deleted
// without losing them. A record that does not fit in the rest of a segment
// goes to the next one; a record larger than a segment gets a larger
// segment.
//
// ReleaseTo renames released segments of SegmentSize bytes, up to
// WALOptions.Spares of them, to <name>.spare instead of deleting them; a
// new segment of SegmentSize bytes is a spare when there is one: its
// header is written over the spare's start, synced, and the spare renamed.
// What the spare held stays after the header: records of other salts, or
// of version 1, which a reader takes for the end of the data.
//
// # WAL records
//
// Version 2 (written since spares were introduced):
//
//	 0               4               8                16    17
//	+---------------+---------------+----------------+-----+------------------+-----+
//	| length uint32 | crc32c uint32 | salt uint64    |type | payload          | pad |
//	+---------------+---------------+----------------+-----+------------------+-----+
//	   little-endian   over bytes 0..4, 8..16 and the body (type + payload)
//
// Records start at offsets that are multiples of 8: each is followed by
// zero bytes up to the next multiple (not covered by the checksum). The
// salt is that of the segment. A record whose salt is not the segment's
// ends the segment's data (zero bytes, a spare's old records).
//
// Version 1 (read, no longer written):
//
//	 0               4               8    9
//	+---------------+---------------+----+---------------------------+
//	| length uint32 | crc32c uint32 |type| payload (length-1 bytes) |
//	+---------------+---------------+----+---------------------------+
//	   little-endian   over bytes 0..4 and the body (type + payload)
//
// Records follow each other without padding; a length of zero means "end
// of the segment's data" (the rest of the segment is zero). The version
// and salt records are framed this way in both versions.
//
// In both, length counts the body: the type byte and the payload, so it is
// at least 1. The payload is the protobuf encoding of
//
//	type 1  raftpb.Entry             one log entry
//	type 2  raftpb.HardState         term, vote, commit
//	type 3  raftpb.SnapshotMetadata  snapshot marker: entries up to its index are in a snapshot
//	type 4  uint32, little-endian    the segment's format version (now 2); only at offset 0
//	type 5  uint64, little-endian    the segment's salt; only at offset 16 of a version-2 segment
//
// # Versions
//
// Each segment says its format version in its first record; a segment
// without a version record (written before there was one) is of version
// 1. Whatever the version, that record is framed as in version 1, so every build
// can read it: a build reads every version up to its own (walVersion),
// and refuses a newer segment with a *VersionError, naming the file,
// before reading anything else of it. A build writes only its own
// version: when OpenWAL finds an older version in the last segment, the
// log goes on in a new segment. The entries' data is the state
// machine's, versioned by it (fsm.EntryVersion), and so is a snapshot
// file's body (its stream says its version).
//
// Replaying the records in order gives the log: the newest HardState and
// marker win; an entry whose index is at or below an earlier entry's
// replaces that entry and everything after it (raft overwrote the tail);
// entries at or below the newest marker's index are dropped.
//
// # Failure rules (OpenWAL)
//
//   - Torn tail: in the last segment, an unreadable record (bad checksum,
//     length past the end, trailing junk) followed only by zero bytes
//     (version 1), or by no valid record of the segment's salt at any
//     8-byte-aligned offset (version 2), is the remains of a write cut
//     short by a crash. No sync covered it: it belongs to a call the crash
//     interrupted, or to a Save without mustSync, which promised nothing.
//     So it is truncated away (the segment is cut and re-preallocated) and
//     logged with its file and offset. (In version 2 a write cut before
//     its salt is not yet a record of the segment: the data simply ends
//     there, and the next write goes over it.)
//   - A HardState whose commit index is beyond the last entry (or, with
//     no entry after it, the snapshot marker) keeps its term and vote; its
//     commit is lowered to that index and a warning logged.
//   - Anything else unreadable — a damaged record followed by data, damage
//     in any segment but the last, a valid checksum around an undecodable
//     payload, non-zero bytes after the end of data (version 1), a valid
//     record of the segment's salt after the end of its data or after a
//     damaged record (version 2), a missing segment number, a gap between
//     entry indexes, a version record anywhere but at the start of a
//     segment, a missing salt record — is a *CorruptError naming the file
//     and offset, and start-up stops: acknowledged writes may be behind it.
//     (Only the WAL knows a segment's salt, drawn at random: neither a
//     spare's old records nor client bytes inside records can pass for a
//     record of the segment.)
//   - A segment of a newer format version is a *VersionError naming the
//     file, and start-up stops: it needs the newer Warden that wrote it.
//     Nothing is truncated or removed. (A damaged last record with nothing after it cannot be
//     told apart from a torn write and is treated as one.)
//   - A full disk during a write (ENOSPC): the partial write is truncated
//     away, the call returns an error wrapping ErrDiskFull, and the WAL
//     accepts writes again once space is freed. A failed fsync, or any other
//     write error, returns an error wrapping ErrSyncFailed (or the error
//     itself) and the WAL refuses all later calls: the process must stop.
//
// # Snapshot files
//
// Snapshots live in their own directory as snap-<term>-<index>.snap (16-digit
// hex each). Save writes <name>.tmp, fsyncs it, renames it and fsyncs the
// directory, then deletes the oldest files beyond the retain count.
//
//	0          8         12         16                 16+m               size-4   size
//	+----------+---------+----------+------------------+------------------+--------+
//	| magic    | version | meta len | metadata         | body             | crc32c |
//	| "WDNSNAP | uint32  | m uint32 | m bytes,protobuf | one zstd stream  | uint32 |
//	|  \x00"   | (now 1) |          | SnapshotMetadata | of the state     |        |
//	|          |         |          |                  | machine's bytes  |        |
//	+----------+---------+----------+------------------+------------------+--------+
//	integers little-endian; the CRC32C covers every byte before it
//
// A snapshot whose checksum, header or metadata is wrong, or whose metadata
// disagrees with its name, is damaged: LoadNewest logs it and uses the next
// older one. A snapshot of a newer format version is not damage: it is a
// *VersionError naming the file, and LoadNewest stops there (an older
// snapshot would lack writes the WAL may no longer hold). The body's own
// version is checked by the caller's reader, whose error LoadNewest
// returns naming the file. Leftover .tmp files of an interrupted Save are
// removed.
package storage
