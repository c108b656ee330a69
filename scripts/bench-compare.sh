#!/usr/bin/env bash
# bench-compare.sh runs `warden bench` against Apache ZooKeeper (the Debian
# package) and Warden, one after the other on the same port from the same
# zoo.cfg (standalone, forceSync=yes for both), several repetitions with the
# servers alternating, then (unless ENSEMBLE=no) the 3-member comparison of
# scripts/bench-compare-ensemble.sh with the same binary and repetitions, and
# writes docs/performance.md and docs/perf/*.svg: the standalone targets and
# tables, then the ensemble section (kept in docs/perf/ensemble.md).
#
# Every (repetition, workload, server) gets a freshly started server with an
# empty data directory, so peak RSS is per workload. The bench reads the
# server's CPU time and memory from /proc/<pid>. Each repetition also
# measures, with no server running, the disk's floor for a durable write (the
# fsync workload: 100-byte writes, each followed by fdatasync, in a
# directory next to the data directories) and, for each of SCALE_SIZES, the
# memory per znode (scale) and the restart time with that many znodes, and
# the write and read throughput measured by a second load generator, on
# ZooKeeper's own Java client (scripts/javaload/Load.java), and that
# client's own ceiling here: the same runs against a server that does no
# work (scripts/javaload/noopserver).
#
# Environment:
#   REPS=3        repetitions (medians are quoted)
#   DURATION=3s   length of each timed phase; WARMUP=1s before each
#   PORT=21810    client port of both servers
#   WARDEN=path   a prebuilt warden binary (default: go build ./cmd/warden);
#                 WARDEN_REV=text names its version on the page
#   OUT=path      Markdown output (default docs/performance.md)
#   SCALE_SIZES="100000 1000000"   znode counts for memory and restart time
#   ENSEMBLE=no   skip the ensemble run (the page then includes the ensemble
#                 section of an earlier run, docs/perf/ensemble.md, as it is)
# The ensemble run reads its other settings (SCALE_SIZE, FAILOVERS, STEADY,
# NET) from the environment: see scripts/bench-compare-ensemble.sh.
# A full run (REPS=3) takes about 30 minutes on a 2-core machine: about 10
# for the standalone part, about 20 for the ensemble part.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
REPS=${REPS:-3}
DURATION=${DURATION:-3s}
WARMUP=${WARMUP:-1s}
PORT=${PORT:-21810}
OUT=${OUT:-$ROOT/docs/performance.md}
PLOTS=$(dirname "$OUT")/perf
SCALE_SIZES=${SCALE_SIZES:-100000 1000000}
WORK=$(mktemp -d /var/tmp/bench-compare.XXXXXX)
RESULTS=$WORK/results
mkdir -p "$RESULTS" "$PLOTS"

SERVER_PID=""
cleanup() {
	if [ -n "$SERVER_PID" ]; then
		kill "$SERVER_PID" 2>/dev/null || true
		wait "$SERVER_PID" 2>/dev/null || true
	fi
	rm -rf "$WORK/data"
}
trap cleanup EXIT

log() { printf '%s bench-compare: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

sh "$ROOT/scripts/install-test-deps.sh"

if [ -z "${WARDEN:-}" ]; then
	WARDEN=$WORK/warden
	warden_rev=$(cd "$ROOT" && git describe --always --dirty)
	if [[ $warden_rev == *-dirty ]]; then
		warden_rev="$warden_rev (built with uncommitted changes)"
	fi
	(cd "$ROOT" && go build -o "$WARDEN" ./cmd/warden)
else
	warden_rev=${WARDEN_REV:-"prebuilt ($WARDEN)"}
fi
help=$("$WARDEN" bench -h 2>&1 || true)
if [[ $help != *"Usage: warden bench"* ]]; then
	echo "bench-compare: $WARDEN has no 'bench' command (wire runBench into cmd/warden/main.go)" >&2
	exit 1
fi

J=/usr/share/java
CP=$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/netty-handler.jar:$J/netty-codec.jar:$J/netty-buffer.jar
CP=$CP:$J/netty-common.jar:$J/netty-resolver.jar:$J/netty-transport.jar
CP=$CP:$J/netty-transport-native-unix-common.jar:$J/netty-transport-native-epoll.jar
CP=$CP:$J/slf4j-api.jar:$J/slf4j-nop.jar
# zkServer.sh's default heap (zkEnv.sh: ZK_SERVER_HEAP=1000).
ZK_HEAP=-Xmx1000m
# shellcheck source=scripts/bench-lib.sh
. "$ROOT/scripts/bench-lib.sh"

CFG=$WORK/zoo.cfg
cat >"$CFG" <<EOF
tickTime=2000
dataDir=$WORK/data
clientPort=$PORT
clientPortAddress=127.0.0.1
maxClientCnxns=0
forceSync=yes
4lw.commands.whitelist=*
admin.enableServer=false
EOF

# four_letter WORD prints the server's answer (empty when it is not up).
four_letter() {
	local out=""
	if { exec 3<>"/dev/tcp/127.0.0.1/$PORT"; } 2>/dev/null; then
		printf '%s' "$1" >&3
		out=$(timeout 2 cat <&3 || true)
		exec 3<&- 3>&-
	fi
	printf '%s' "$out"
}

# start_server KIND [keep]: starts KIND (warden or zookeeper) with an empty
# data directory (or the existing one with "keep"), waits until srvr shows it
# serving, and sets SERVER_PID and START_SECS (seconds that took).
start_server() {
	local kind=$1 keep=${2:-}
	if [ -z "$keep" ]; then
		rm -rf "$WORK/data"
		mkdir -p "$WORK/data"
	fi
	local t0
	t0=$(date +%s.%N)
	case $kind in
	zookeeper)
		java $ZK_HEAP -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$CFG" \
			>>"$WORK/zookeeper.log" 2>&1 &
		;;
	warden)
		"$WARDEN" server -log-level warn "$CFG" >>"$WORK/warden.log" 2>&1 &
		;;
	esac
	SERVER_PID=$!
	local i
	for i in $(seq 1 1200); do
		if four_letter srvr | grep -q '^Mode:'; then
			START_SECS=$(echo "$(date +%s.%N) $t0" | awk '{printf "%.3f", $1 - $2}')
			return 0
		fi
		if ! kill -0 "$SERVER_PID" 2>/dev/null; then
			echo "bench-compare: $kind exited at start; see $WORK/$kind.log" >&2
			tail -20 "$WORK/$kind.log" >&2
			exit 1
		fi
		sleep 0.05
	done
	echo "bench-compare: $kind did not come up in 60s" >&2
	exit 1
}

stop_server() {
	kill "$SERVER_PID"
	wait "$SERVER_PID" 2>/dev/null || true
	SERVER_PID=""
}

# bench KIND NAME ARGS...: one bench run against the running server.
bench() {
	local kind=$1 name=$2
	shift 2
	if ! "$WARDEN" bench --servers "127.0.0.1:$PORT" --label "$kind" --server-pid "$SERVER_PID" \
		--json "$RESULTS/$name.json" "$@" >"$RESULTS/$name.txt" 2>&1; then
		bench_failed "$name"
	fi
}

WORKLOADS=(
	"sweep --clients 8 --inflight 32 --payload 1024 --keys 1000 --duration $DURATION --warmup $WARMUP"
	"latencies --clients 4 --inflight 32 --payload 100 --znodes 2000"
	"create --payload 100 --duration $DURATION --warmup $WARMUP"
	"multi --clients 8 --inflight 32 --payload 1024 --keys 1000 --duration $DURATION --warmup $WARMUP"
	"lock --clients 8 --duration $DURATION"
	"fanout --watchers 1000 --rounds 10 --payload 100"
	"storm --sessions 2000"
)
SCALE="scale --payload 64 --clients 8 --inflight 64 --keep"
FSYNC="fsync --payload 100 --duration $DURATION --warmup $WARMUP"

started=$(date +%s)
for rep in $(seq 1 "$REPS"); do
	# Alternate which server goes first.
	if [ $((rep % 2)) -eq 1 ]; then order="zookeeper warden"; else order="warden zookeeper"; fi
	# The disk's floor, with no server running, on the disk of the data
	# directories.
	log "rep $rep/$REPS: fsync floor"
	mkdir -p "$WORK/fsync"
	"$WARDEN" bench --label disk --dir "$WORK/fsync" --json "$RESULTS/disk-fsync-$rep.json" \
		--workload $FSYNC >"$RESULTS/disk-fsync-$rep.txt"
	for w in "${WORKLOADS[@]}"; do
		name=${w%% *}
		for kind in $order; do
			log "rep $rep/$REPS: $name on $kind"
			start_server "$kind"
			bench "$kind" "$kind-$name-$rep" --workload $w
			stop_server
		done
	done
	# The cross-check: ZooKeeper's Java client as the load generator, a row
	# at a time on each server, then on the no-op server.
	for row in $JAVALOAD_ROWS; do
		for kind in $order; do
			log "rep $rep/$REPS: javaload $row on $kind"
			start_server "$kind"
			javaload "$kind" "$rep" "127.0.0.1:$PORT" "$row"
			stop_server
		done
		log "rep $rep/$REPS: javaload $row on the no-op server (the client's ceiling)"
		javaload_ceiling "$rep" "$row"
	done
	# Scale: memory at each size (a fresh server each), then the restart
	# time with the data in place.
	for size in $SCALE_SIZES; do
		for kind in $order; do
			log "rep $rep/$REPS: scale $size on $kind"
			start_server "$kind"
			bench "$kind" "$kind-scale-$size-$rep" --scale-sizes "$size" --workload $SCALE
			stop_server
			start_server "$kind" keep
			secs=$START_SECS
			count=$(four_letter mntr | awk '$1 == "zk_znode_count" {print $2}')
			stop_server
			cat >"$RESULTS/$kind-restart-$size-$rep.json" <<EOF
{"workload": "scale", "label": "$kind", "phases": [],
 "metrics": [{"name": "restart time at $size znodes", "value": $secs, "unit": "s"},
             {"name": "znodes after restart at $size znodes", "value": ${count:-0}, "unit": "znodes"}]}
EOF
		done
	done
done
log "standalone runs done in $(($(date +%s) - started))s (raw results in $RESULTS)"

# The ensemble section (docs/perf/ensemble.md), in the same run.
ensemble_failed=""
if [ "${ENSEMBLE:-yes}" != no ]; then
	log "ensemble runs: scripts/bench-compare-ensemble.sh"
	if ! REPS=$REPS DURATION=$DURATION WARMUP=$WARMUP WARDEN=$WARDEN WARDEN_REV=$warden_rev OUT=$OUT \
		"$ROOT/scripts/bench-compare-ensemble.sh"; then
		ensemble_failed=yes
		log "the ensemble run failed: the page gets no ensemble section"
	fi
fi
elapsed=$(($(date +%s) - started))
took="this run took $((elapsed / 60)) min $((elapsed % 60)) s"
if [ "${ENSEMBLE:-yes}" = no ]; then
	took="$took, without the ensemble part"
fi
log "runs done in ${elapsed}s; writing $OUT"

rm -f "$PLOTS"/*.svg
"$WARDEN" bench report --baseline zookeeper --plot "$PLOTS" --plot-ref perf \
	--out "$WORK/tables.md" "$RESULTS"/*.json

zk_version=$(dpkg-query -W -f='${Version}' zookeeper)
{
	cat <<EOF
# Performance: Warden vs Apache ZooKeeper

Produced by \`scripts/bench-compare.sh\` in one run ($(date -u +%Y-%m-%d), ${REPS} repetitions,
servers alternating; **bold** is the median, the raw values of every repetition follow in
parentheses; ratios are Warden / ZooKeeper medians). Regenerate with
\`scripts/bench-compare.sh\` (about 30 minutes on a 2-core machine, the ensemble section
included; $took).

## Machine and settings

- CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; RAM $(free -g | awk '/^Mem:/ {print $2}') GiB; $(uname -sr)
- Disk: $(df -T "$WORK" | awk 'NR==2 {print $2}') on $(df "$WORK" | awk 'NR==2 {print $1}') (data directories under $(dirname "$WORK"))
- Apache ZooKeeper $zk_version (Debian), $(java -version 2>&1 | head -1), heap $ZK_HEAP (zkServer.sh's default), started with QuorumPeerMain
- Warden $warden_rev ($(go version | cut -d' ' -f3))
- One zoo.cfg for both, standalone: \`$(grep -v '^dataDir' "$CFG" | tr '\n' ' ')\`; each server fresh (empty data directory) for every workload run
- Load generator: \`warden bench\` on the same machine (it shares the 2 cores with the server; its own CPU use is in the JSON, and a phase where it used ≥ 90% of the cores is flagged); in every repetition also a second one that we did not write, \`scripts/javaload/Load.java\` on ZooKeeper's Java client, run also against \`scripts/javaload/noopserver\`, a server that does no work, for the client's own ceiling (its table follows the results)
- Workloads (\`warden bench --workload ...\`):
$(for w in "${WORKLOADS[@]}"; do echo "  - \`$w\`"; done)
  - \`$SCALE --scale-sizes N\` for N in $SCALE_SIZES, in every repetition, each followed by a restart on the data it left: seconds from launch until \`srvr\` answers with a Mode line
- The disk's floor, in every repetition with no server running: \`warden bench --workload $FSYNC --dir WORK/fsync\`, a directory next to the data directories: 100-byte writes at increasing offsets of a preallocated file, each followed by fdatasync, one at a time. A server that makes a write durable before acknowledging it cannot answer one client's write faster; the target table puts Warden's one-client create next to it
- Server CPU per op: utime+stime from /proc/<pid>/stat over the phase, divided by the ops; peak RSS: VmHWM from /proc/<pid>/status

EOF
	cat "$WORK/tables.md"
	if [ -s "$WORK/failures.md" ]; then
		printf '\nRuns that failed (left out of the medians):\n\n'
		cat "$WORK/failures.md"
	fi
	javaload_table "## Cross-check with ZooKeeper's Java client" "all sessions on the one server"
	# Hand-written findings (profiles, what was tried) live next to the plots.
	if [ -f "$PLOTS/analysis.md" ]; then
		echo
		cat "$PLOTS/analysis.md"
	fi
	# The ensemble section, written by scripts/bench-compare-ensemble.sh.
	if [ -n "$ensemble_failed" ]; then
		printf '\n## Ensemble (3 members)\n\nThe ensemble part of this run failed: no numbers.\n'
	elif [ -f "$PLOTS/ensemble.md" ]; then
		echo
		cat "$PLOTS/ensemble.md"
	fi
} >"$OUT"
log "wrote $OUT and $PLOTS"
if [ -n "$ensemble_failed" ]; then
	exit 1
fi
