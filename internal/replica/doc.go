// Package replica orders write proposals into a replicated log and hands
// committed entries, in log order, to the state machine of every server.
//
// A Node is one go.etcd.io/raft/v3 member driven by a Ready loop: each
// Ready's hard state and entries are written to the WAL with one fsync
// (group commit) before anything in it is applied or acknowledged; then
// committed entries go to Config.Apply, in index order, from the loop's
// goroutine. A standalone server is a group of one, so an ensemble adds
// members rather than a second storage path.
//
// Every SnapCount applied entries the node asks the state machine for a
// capture (a brief lock and a copy-on-write clone), writes it to a snapshot
// file in the background, marks it in the WAL and compacts the log behind
// the previous snapshot, so recovery can fall back one snapshot if the
// newest file is damaged.
//
// Failure rules: a full disk pauses writes (retried every second, nothing
// acknowledged is lost, reads go on); a failed fsync or any other WAL error
// means the durable state is unknown, and Config.Fatal stops the process.
package replica
