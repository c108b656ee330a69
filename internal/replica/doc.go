// Package replica drives one go.etcd.io/raft/v3 member: the Ready loop and
// nothing else. Each Ready it persists (the hard state and new entries go to
// the WAL in one write, fsynced when raft says it must be: group commit),
// sends (through the peer transport; a leader sends before its own write,
// as the raft thesis allows, a follower after), steps received messages,
// and hands what became committed to the state machine's host through a
// bounded queue of Updates, in log order: committed entries it wrote in an
// earlier Ready before the Ready's own write, so that they are applied
// while it syncs, and the others after. It never applies anything itself.
//
// A snapshot received from the leader has been stored by the transport
// before raft sees it; the loop marks it in the WAL, installs it in raft's
// storage and hands it over in an Update ahead of the entries after it.
// Local snapshots are taken by the host, which reports each durable one
// with SnapshotSaved; the loop then marks it in the WAL and compacts the
// log behind the previous snapshot, so recovery can fall back one snapshot
// and slow followers can still catch up from the log. On the leader, the
// loop reports each catch-up of a member (Config.PeerSync): by snapshot
// when raft sends one, by log entries when the member is back in step
// without (sync.go).
//
// Failure rules: a full disk pauses the loop (retried every second;
// nothing acknowledged is lost; a leader stops heartbeating, so the
// ensemble elects another); a failed fsync or any other WAL error means the
// durable state is unknown, and Config.Fatal stops the process.
package replica
