// Package ensemble holds Warden's process-level ensemble tests: they build
// the warden binary once, run 3 or 5 `warden server zoo.cfg` processes as
// an ensemble on distinct loopback addresses, and inject faults while
// clients write: kill -9 of the leader or of followers, a leader paused
// with SIGSTOP for longer than the election timeout, the loss of a
// quorum, and rolling restarts (every member in turn, followers first and
// the leader last, with SIGTERM or kill -9). After each scenario every
// member is healed and checked, one at a time, against the clients'
// history: every acknowledged create exists, every acknowledged setData is
// there (or was overtaken by a later write of the same key), versions
// never go backwards, and every session (the writers' and an idle one)
// lived through the scenario: it never reported Expired and still owns
// its ephemeral node on every member.
//
// They run in a plain `go test ./...` (no build tag) and need only the Go
// toolchain and Linux's 127.0.0.0/8 loopback. Each ensemble picks a random
// free 127.a.b.0/24 and gives member N the address 127.a.b.(10+N) with
// ZooKeeper's usual ports (client 2181, quorum 2888, election 3888), so
// members keep their ports across restarts and several runs can share a
// machine. Fault choices come from a seed that every test logs;
// WARDEN_ENSEMBLE_SEED=<seed> replays them (the interleaving of the
// processes is, of course, not replayed). A failed test prints the tail of
// every member's log and of its clients' log (connects, disconnects, failed
// handshakes); WARDEN_ENSEMBLE_LOGS=1 prints them for passing tests too.
//
// Layout of the package:
//
//	member_test.go    one warden process: start, kill -9, SIGSTOP/SIGCONT, srvr
//	cluster_test.go   an ensemble of members: addresses, zoo.cfg, bounded waits
//	load_test.go      writers under fault and the history of their writes
//	check_test.go     the history checked against each member's tree; TestJudge
//	                  checks the checker on hand-made histories
//	scenarios_test.go the scenarios
//	rolling_test.go   the rolling restarts
//	reconfig_test.go  dynamic reconfiguration under load (reconfigEnabled and
//	                  a super user): members added, removed, promoted and
//	                  demoted, a member killed mid-change, a restart on the
//	                  rewritten zoo.cfg files, a failed host replaced
package ensemble
