// Package node hosts the replicated state machine on one member of an
// ensemble (a standalone server is an ensemble of one).
//
// A Node owns, for its member: recovery from the data directories (the
// newest valid snapshot plus the WAL after it), the fsm and the lock that
// orders reads against applies, the applied index, the apply goroutine,
// taking snapshots and installing those received from the leader, and
// propose-and-wait. The raft Ready loop (package replica) only persists,
// sends and steps; it hands committed work to the apply goroutine through
// a bounded queue.
//
// # Propose and wait
//
// Propose queues an fsm.Entry; entries queued together become one raft
// entry (batching). Its Done is called exactly once:
//
//   - with the entry's output, on the apply goroutine while the state lock
//     is held exclusively, right after the entry was applied — so a reply
//     queued there precedes anything a later read or apply can queue;
//   - or with an error wrapping ErrProposalLost when the outcome is
//     unknown: raft dropped the proposal, the leader changed or was lost,
//     a snapshot replaced the state, the deadline (Config.ProposeTimeout
//     after it was handed to raft) passed, or the node stopped. The entry
//     may still be applied later; the client must be told ConnectionLoss,
//     as ZooKeeper tells it when its server loses the leader.
//
// # Bounds
//
// Every queue is bounded by bytes (Config.MaxLogBytes, MaxProposalBytes;
// docs/operations.md, "Limits and throttling"). The pending queue hands
// raft at most MaxProposalBytes of this member's entries not yet applied
// (one always may go) and at most 4 MiB per Ready, and nothing while the
// in-memory log is over MaxLogBytes; what waits stays queued, in order,
// and is dropped unproposed if its waiter is answered meanwhile (a leader
// change, Stop). Snapshots are taken every MaxLogBytes/4 of entries; the
// in-memory log is compacted right behind the applied index but for a
// tail (replica.Config.MemTailBytes), and the WAL behind the snapshot
// before last. A member further behind than the tail is sent a snapshot,
// a fresh one if the newest is older than the log's start.
//
// # Locks
//
// The state lock (RLock/RUnlock, held exclusively by the apply goroutine)
// guards the fsm; Hooks run under it as documented on each. The node's
// other locks (waiter table, pending queue) are leaves.
package node
