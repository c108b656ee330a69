// Package recipe implements the classic ZooKeeper coordination recipes on
// top of package client: locks, leader election, barriers, counters and
// queues. Node layouts follow Apache Curator's recipes wherever Curator has
// the same recipe, so a Go process and a Java Curator process can share one
// lock, semaphore or election.
//
// Every recipe follows the same rules:
//
//   - Herd-free: a waiter watches only the node it must (for a lock, its
//     predecessor), never all children, so a release wakes exactly one
//     waiter.
//   - Protected creates: sequential-ephemeral nodes are named
//     "_c_<uuid>-<name><seq>" (Curator's protected mode). After
//     ErrConnectionLoss the recipe looks for its UUID among the parent's
//     children instead of creating again, so no orphan node is left to
//     block others.
//   - Fencing: every grant carries a token, the czxid of the node that won
//     it. Tokens grow with each new holder; pass them to the guarded
//     resource so it can refuse a stale holder.
//   - Sessions: a holder whose session expires has lost what it held (its
//     ephemeral nodes are gone and the next waiter is already running).
//     Recipes say so through a Lost channel or an error; a disconnection
//     alone is not a loss, but the holder cannot tell until the client
//     reconnects or declares expiry.
//   - Every blocking call takes a context; cancelling it abandons the wait
//     and removes the caller's node.
//
// Recipes:
//
//   - Lock: exclusive lock (Curator InterProcessMutex layout).
//   - RWLock: readers-writer lock (Curator InterProcessReadWriteLock).
//   - Revoke / WithRevocable: ask a lock holder to release (Curator
//     Revoker, the ZooKeeper "revocable shared locks" recipe).
//   - Semaphore: counting semaphore with leases (Curator
//     InterProcessSemaphoreV2).
//   - LeaderLatch: leader election, herd-free (Curator LeaderLatch layout);
//     LeaderSelector: run a function while leading, with requeue (Curator
//     LeaderSelector, on a Lock).
//   - Barrier and DoubleBarrier: Curator DistributedBarrier and
//     DistributedDoubleBarrier (the ZooKeeper double-barrier recipe).
//   - SharedCount: int32 shared by compare-and-set (Curator SharedCount);
//     Counter: 64-bit counter by compare-and-set (Curator
//     DistributedAtomicLong layout).
//   - Queue and PriorityQueue: FIFO and priority queues, each item taken
//     exactly once (Curator DistributedQueue / DistributedPriorityQueue
//     node names and item envelope).
//   - Group: group membership with a membership watch. Discovery: service
//     registration (Curator ServiceDiscovery layout and JSON) with a
//     watched ServiceProvider and RoundRobin, Random and ConsistentHash
//     balancers.
//   - ReadyConfig (ready-flag protocol) and AtomicConfig (multi with a
//     version node): multi-key configuration without torn reads.
//   - Rendezvous (N parties meet), Transaction/TxSite (two-phase commit;
//     a failed site aborts), IDGenerator (int64 ids from sequential nodes).
//   - TreeCache and NodeCache: local copies kept in sync by persistent
//     watches, re-read after a reconnect.
package recipe
