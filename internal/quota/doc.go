// Package quota is ZooKeeper's quota text and where it lives: the
// key=value format of StatsTrack that the limits and stats nodes hold, and
// the paths of those nodes. The server's accounting (package tree) and the
// shell's setquota, listquota and delquota (package cli) share it.
//
// # Layout
//
// A quota on the path <p> is two nodes under /zookeeper/quota<p>:
//
//	/zookeeper/quota<p>/zookeeper_limits   the limits, written by clients
//	/zookeeper/quota<p>/zookeeper_stats    the usage, kept by the server
//
// # Text
//
// Both hold StatsTrack text: "count=<n>,bytes=<n>" and, when other keys
// are present, "=" and then ";key=value" for each in sorted key order:
//
//	count=2,bytes=-1=;byteHardLimit=-1;countHardLimit=5
//
// (the stray "=" after bytes keeps pre-3.5 parsers reading count and
// bytes). count and bytes are the soft limits (or the usage), the
// hard limits are countHardLimit and byteHardLimit; -1, or a missing key,
// means no limit. Parse reads the text as ZooKeeper does: pairs separated
// by runs of ',' and ';', each "key=value"; an empty value reads -1.
package quota
