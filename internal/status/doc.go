// Package status is `warden status`: the health of an ensemble as its
// members report it through four-letter words, so it works against Warden
// and Apache ZooKeeper (3.4 and later) alike.
//
// It is split the usual way, a pure core and a thin edge:
//
//   - ParseSrvr and ParseMntr read the text of the srvr and mntr words;
//     Summarize turns what each member said (a Member) into a Report: one
//     Row per member, the leader, the lag of every member behind it, and
//     whether a quorum serves; WriteTable and WriteJSON print a Report.
//     None of them does IO or reads a clock.
//   - Check is the edge: it asks every member of a Config, in parallel,
//     each within Config.Timeout, and returns the Members for Summarize.
//
// # The words
//
// A four-letter word is 4 ASCII bytes sent on a fresh connection to the
// client port; the server answers with text and closes the connection (no
// framing). srvr is always allowed; mntr must be in the server's
// 4lw.commands.whitelist (ZooKeeper's default whitelist is srvr alone), so
// a member that refuses mntr is reported from srvr alone.
//
// srvr (ZooKeeper 3.5+; a leader adds the last line, a read-only server the
// second; Outstanding and Zxid may be missing on very old servers):
//
//	Zookeeper version: 3.8.4-9316c2a7a97e1666d8f4593f34dd6fc36ecc436c, built on 2024-02-12 22:16 UTC
//	READ-ONLY mode; serving only read-only clients
//	Latency min/avg/max: 0/0.0/0
//	Received: 12
//	Sent: 11
//	Connections: 1
//	Outstanding: 0
//	Zxid: 0x100000003
//	Mode: leader                       standalone|leader|follower|observer|read-only
//	Node count: 5
//	Proposal sizes last/min/max: 36/32/74
//
// mntr: "zk_<key>\t<value>" lines in no particular order after the first
// two (zk_version, zk_server_state). Used here: zk_peer_state ("following
// - synchronization" while a follower catches up) and, from the leader,
// zk_synced_followers.
//
// Refusals, whole replies:
//
//	This ZooKeeper instance is not currently serving requests     ErrNotServing
//	mntr is not executed because it is not in the whitelist.      ErrNotAllowed
//
// # Lag
//
// A zxid is an epoch (high 32 bits) and a counter (low 32 bits). The lag of
// a member is the leader's counter minus its own when both are in the same
// epoch: the transactions it has yet to apply. Across epochs the counters
// cannot be compared, and the lag is "epoch behind" (or "epoch ahead").
// The members are asked at slightly different moments, so on a busy
// ensemble a lag of a few transactions is normal; a member that appears
// ahead of the leader in the same epoch has lag 0.
//
// # Quorum and the exit status
//
// A member counts as a voter unless it says it is an observer (so one that
// is down counts as a voter: status cannot know what it is). A quorum
// serves when more than half of the voters are serving as leader,
// follower or standalone. Report.OK, the exit status 0 of `warden status`,
// asks for more: every member serving (not down, not "not serving", not
// read-only), and exactly one leader, or a single member that is
// standalone.
package status
