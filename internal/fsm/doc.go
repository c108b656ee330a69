// Package fsm is Warden's replicated state machine: the znode tree, the
// session table and the zxid state, changed only by applying committed log
// entries (Apply) in order. Every server applies the same entries and
// reaches the same state; the package is pure (no goroutines, clocks or
// IO) and the caller serialises Apply against reads. The one exception is
// the quota warnings of Options.EnforceQuota ("Quota exceeded: ..."),
// which Apply logs to Options.Logger, rate-limited on the entries' own
// times as ZooKeeper's RateLogger does.
//
// # Snapshots
//
// The server snapshots the state without stopping for long:
//
//	mu.Lock(); c := f.Clone(); mu.Unlock()   // quick: copy on write
//	c.WriteSnapshot(w)                       // no lock; streams
//
// and rebuilds it with Restore (or, for import-zk, NewFromState).
// DumpSnapshot and InspectSnapshot read a stream for tools.
//
// # Snapshot stream format, version 3
//
// The stream (the body of a snapshot file, inside storage's compression
// and checksum) is a fixed preamble followed by frames. All integers are
// big-endian; frame bodies use jute encoding (ustring and buffer: int32
// length then bytes, -1 for a null buffer; vector: int32 count).
//
//	preamble (12 bytes)
//	+---------------------------+-----------------+
//	| magic "WRDNSNAP" (8 bytes) | version uint32  |
//	+---------------------------+-----------------+
//
//	frame
//	+---------------+---------------------+-----------------------+
//	| length uint32 | body (length bytes) | crc32c(body) uint32   |
//	+---------------+---------------------+-----------------------+
//	  (Castagnoli)
//
//	frames, in this order:
//	  1  header   'H' | epoch int32 | counter int32 | lastTerm int64 |
//	                   lastZxid int64 | sessions int64 | nodes int64
//	  S  session  'S' | id int64 | timeout int32 | passwd buffer | owner int64
//	  N  node     'N' | path ustring | data buffer | acl vector<ACL> |
//	                   czxid int64 | mzxid int64 | ctime int64 | mtime int64 |
//	                   version int32 | cversion int32 | aversion int32 |
//	                   ephemeralOwner int64 | pzxid int64
//	  1  members  'M' | the replicated membership (FSM.encodeMembers)
//	  1  end      'E' | sessions int64 | nodes int64
//	then the end of the stream.
//
// Version 1 streams (still read) have no owner in session frames; their
// sessions get NoOwner. Version 1 and 2 streams have no members frame (no
// reconfig had happened). A build reads every version up to the one it
// writes and refuses a newer one with ErrNewerSnapshot (see snapVersion
// for how to add a version). The body's first byte names its kind. Sessions come in increasing id
// order; nodes in tree.Records order (the root first, every parent before
// its children). cversion is the stored one (child creations) and
// ephemeralOwner the stored one (a session, tree.ContainerOwner or a
// tree.TTLOwner). lastZxid must equal epoch<<32 | counter.
//
// # Failure rules
//
// Reading never panics and never trusts a length: a frame longer than the
// limit (derived from Options.MaxBuffer: 4×MaxBuffer + 4 KiB) is refused
// before it is read, and a frame's buffer grows only as its bytes arrive.
// Every error wraps ErrBadSnapshot (or is the reader's error, wrapped) and
// says what is wrong and where: the frame number, its kind, the byte
// offset in the stream and, for nodes, the path. Refused: a wrong magic or
// version 0, a checksum mismatch, a frame of the wrong kind or
// with bytes left over, counts that disagree between header, frames and
// end frame, sessions out of order, a zxid state that does not add up,
// node records that do not form a tree (tree.ErrBadRecords), a truncated
// stream and bytes after the end frame. A version newer than this build
// reads is not damage: that error wraps ErrNewerSnapshot instead.
//
// # Log entries
//
// Entry documents the encoding of a log entry, EntryVersion how it is
// versioned: a member refuses, with ErrNewerEntry, an entry of an op that
// a newer Warden introduced, rather than apply it differently from the
// members that know it.
package fsm
