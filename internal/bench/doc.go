// Package bench is Warden's load generator: it speaks the ZooKeeper
// protocol (through package client) to any server, Warden or Apache
// ZooKeeper, and measures throughput and latency for the workloads of
// `warden bench`.
//
// A run is a list of phases. A phase sends one kind of request from
// Config.Clients sessions with Config.Inflight requests pipelined on each,
// either closed-loop (each worker sends its next request when the last
// one is answered) or open-loop at a fixed rate (Config.Rate). Open-loop
// latency is measured from the time the request was due to be sent, not
// from when a worker got round to sending it, so a stalled server cannot
// hide its stall by slowing the generator down (coordinated omission).
//
// Latencies go into HDR histograms (microsecond resolution, three
// significant digits) and are summarised as p50/p90/p99/p99.9/max. The
// generator measures its own CPU time (getrusage) and flags a phase in
// which it was itself the bottleneck. With Config.ServerPIDs it also
// reads the server's CPU time and resident memory from /proc, which is
// how scripts/bench-compare.sh compares servers on the same machine; for
// an ensemble it is given every member's pid and reports the CPU time
// summed over them and the largest member's memory.
//
// With several members in the connection string (an ensemble) the
// sessions are spread over them round-robin: session i starts on member
// i mod n and, when it loses that member, tries the next ones in order
// (see spread.go; ZooKeeper's clients shuffle the string instead, which
// Config.Spread = SpreadShuffle reproduces). Results record how many
// servers the string had (Settings.ConnectServers).
//
// Results are JSON (Result); Report turns the results of several runs
// against several servers into the Markdown tables and SVG plots of
// docs/performance.md, and Headline and EnsembleHeadline into the table
// on top of them: each target set for Warden against ZooKeeper (a bound
// on the ratio of the medians) and whether it is met (headline.go).
//
// The workloads (see Workloads):
//
//	latencies  zk-latencies phases: create, set, get, exists+watch, delete,
//	           create-ephemeral, delete-ephemeral; sync (one request in
//	           flight) and async (all clients, all in flight)
//	sweep      the ZooKeeper paper's saturation sweep: read ratio
//	           0/20/50/80/90/100 %, 1 KiB values
//	create     sync create latency: one client, create then async delete
//	lock       lock contention through recipe.Lock: hand-offs/s and
//	           hand-off latency among Config.Clients contenders
//	fanout     one znode, Config.Watchers sessions watching it: time from
//	           the write to the last watch event
//	storm      Config.Sessions sessions connect at once, then all of
//	           their connections drop and they reconnect
//	multi      one third writes (three quarters of them multi), two
//	           thirds reads
//	scale      memory at Config.ScaleSizes znodes (server RSS, bytes per
//	           znode; of an ensemble, the member that grew most)
//	flood      Config.Clients sessions setting large values (--payload)
//	           on Config.Keys znodes while one more session reads a small
//	           znode: the reads' latency and the server's peak memory
//	           (flood.go; scripts/flood-rss.sh)
//	fsync      no server: Config.Payload bytes at a time appended to a
//	           preallocated file in Config.Dir, each write followed by
//	           fdatasync: the disk's floor for one durable write (fsync.go)
//	failover   an ensemble under steady writes; Config.Failovers times the
//	           leader (found with srvr) is killed (Config.KillLeaderPIDFile
//	           or Config.KillLeaderCmd): time from the kill to the first
//	           acknowledged write sent after it and until every session
//	           has one, then the member is restarted (Config.RestartCmd)
//	           and waited for as a follower (see failover.go)
package bench
