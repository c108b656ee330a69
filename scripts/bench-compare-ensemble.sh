#!/usr/bin/env bash
# bench-compare-ensemble.sh runs `warden bench` against a 3-member Apache
# ZooKeeper ensemble (the Debian package) and a 3-member Warden ensemble,
# one after the other on the same machine, from the same zoo.cfg files
# (forceSync=yes, tickTime=2000 initLimit=10 syncLimit=5 for both), with
# the implementations alternating per repetition. It writes the
# "Ensemble (3 members)" section of docs/performance.md (kept in
# docs/perf/ensemble.md, which scripts/bench-compare.sh includes when it
# rewrites the page; scripts/bench-compare.sh also runs this script, so one
# run of it produces both sections) and its plots in docs/perf/ensemble/.
#
# Members listen on distinct loopback addresses, $NET.1 to $NET.3, each
# with the same client, quorum and election ports and its own data
# directory and myid. Every (repetition, workload, implementation) gets a
# fresh ensemble with empty data directories. The bench is given the three
# members' pids (--server-pid): server CPU per op is summed over the
# members, memory is the largest member's. Workloads:
#   sweep     throughput and latency at every read ratio (0, 20, 50, 80, 90,
#             100% reads), sessions spread round-robin over the members
#   create    one client, one create at a time: write latency
#   scale     SCALE_SIZE znodes of 64 bytes: memory per znode of the member
#             that grew most; then a follower (srvr: Mode: follower) is
#             stopped (SIGTERM) and started again on its data directory, and
#             the time from its launch until it answers srvr as a follower
#             again is the rejoin time
#   failover  steady writes; the leader (srvr: Mode: leader) is killed with
#             kill -9, the time until writes succeed again is measured, the
#             member is restarted and waited for as a follower; FAILOVERS
#             times per run
#   javaload  the same write and read throughput measured by a second load
#             generator we did not tune: scripts/javaload/Load.java, on
#             ZooKeeper's own Java client (it shuffles the connect string),
#             with its NIO and its Netty transport; once per repetition
#             also against a server that does no work
#             (scripts/javaload/noopserver): the client's own ceiling
#
# Environment:
#   REPS=3         repetitions (medians are quoted)
#   DURATION=3s    length of each sweep and create phase; WARMUP=1s before each
#   SCALE_SIZE=1000000   znodes of the scale run and the rejoin (the target
#                  table reads the rows at 1000000)
#   FAILOVERS=5    leader kills per failover run; STEADY=2s of steady writes
#                  before each
#   NET=127.0.42   members are $NET.1, $NET.2, $NET.3
#   PORT=21810     client port of every member (quorum 2888, election 3888)
#   WARDEN=path    a prebuilt warden binary (default: go build ./cmd/warden)
#   WARDEN_REV=text  how the page names a prebuilt binary's version
#   OUT=path       the performance page the section goes into (default
#                  docs/performance.md); the section file and the plots go
#                  under $(dirname OUT)/perf/
# A full run (REPS=3) takes about 20 minutes on a 2-core machine, most of it
# ZooKeeper's scale runs (1M creates at a few thousand per second).
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SELF=$ROOT/scripts/$(basename "$0")
NET=${NET:-127.0.42}
PORT=${PORT:-21810}
J=/usr/share/java
CP=$J/zookeeper.jar:$J/zookeeper-jute.jar:$J/netty-handler.jar:$J/netty-codec.jar:$J/netty-buffer.jar
CP=$CP:$J/netty-common.jar:$J/netty-resolver.jar:$J/netty-transport.jar
CP=$CP:$J/netty-transport-native-unix-common.jar:$J/netty-transport-native-epoll.jar
CP=$CP:$J/slf4j-api.jar:$J/slf4j-nop.jar
# zkServer.sh's default heap (zkEnv.sh: ZK_SERVER_HEAP=1000), per member.
ZK_HEAP=-Xmx1000m

# start_member KIND ID launches member ID (1-3) of KIND in the background,
# its output in its log, and records its pid in $WORK/pid.$NET.ID.
start_member() {
	local kind=$1 id=$2
	case $kind in
	zookeeper)
		java $ZK_HEAP -cp "$CP" org.apache.zookeeper.server.quorum.QuorumPeerMain "$WORK/m$id/zoo.cfg" \
			</dev/null >>"$WORK/m$id/$kind.log" 2>&1 &
		;;
	warden)
		"$WARDEN" server -log-level warn "$WORK/m$id/zoo.cfg" </dev/null >>"$WORK/m$id/$kind.log" 2>&1 &
		;;
	*)
		echo "bench-compare-ensemble: unknown kind $kind" >&2
		exit 1
		;;
	esac
	echo $! >"$WORK/pid.$NET.$id"
	# The bench kills members: no "Killed" job reports from this shell.
	disown $!
}

# `bench-compare-ensemble.sh start-member KIND HOST` is the restart command
# warden bench runs (with the environment of the run): it starts again the
# member listening on HOST.
if [ "${1:-}" = start-member ]; then
	start_member "$2" "${3##*.}"
	exit 0
fi

REPS=${REPS:-3}
DURATION=${DURATION:-3s}
WARMUP=${WARMUP:-1s}
FAILOVERS=${FAILOVERS:-5}
SCALE_SIZE=${SCALE_SIZE:-1000000}
STEADY=${STEADY:-2s}
OUT=${OUT:-$ROOT/docs/performance.md}
SECTION=$(dirname "$OUT")/perf/ensemble.md
PLOTS=$(dirname "$OUT")/perf/ensemble
WORK=$(mktemp -d /var/tmp/bench-ensemble.XXXXXX)
RESULTS=$WORK/results
mkdir -p "$RESULTS" "$PLOTS"
export WORK NET PORT

log() { printf '%s bench-compare-ensemble: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

# alive PID: the process exists and is not a zombie.
alive() {
	local st
	st=$(sed 's/^.*) //' "/proc/$1/stat" 2>/dev/null | cut -d' ' -f1) || return 1
	[ -n "$st" ] && [ "$st" != Z ]
}

# stop_ensemble stops every member still running (SIGTERM, then SIGKILL
# after 10 s) and waits until they are gone.
stop_ensemble() {
	local f pid i
	for f in "$WORK"/pid.*; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		kill "$pid" 2>/dev/null || true
	done
	for f in "$WORK"/pid.*; do
		[ -e "$f" ] || continue
		pid=$(cat "$f")
		for i in $(seq 1 200); do
			alive "$pid" || break
			sleep 0.05
		done
		if alive "$pid"; then
			kill -9 "$pid" 2>/dev/null || true
		fi
		wait "$pid" 2>/dev/null || true
		rm -f "$f"
	done
}

cleanup() {
	stop_ensemble
	rm -rf "$WORK"/m*/data
}
trap cleanup EXIT

sh "$ROOT/scripts/install-test-deps.sh"

if [ -z "${WARDEN:-}" ]; then
	WARDEN=$WORK/warden
	warden_rev=$(cd "$ROOT" && git describe --always --dirty)
	if [[ $warden_rev == *-dirty ]]; then
		warden_rev="$warden_rev (built with uncommitted changes)"
	fi
	(cd "$ROOT" && go build -o "$WARDEN" ./cmd/warden)
else
	warden_rev=${WARDEN_REV:-prebuilt ($WARDEN)}
fi
export WARDEN
help=$("$WARDEN" bench -h 2>&1 || true)
if [[ $help != *"kill-leader-cmd"* ]]; then
	echo "bench-compare-ensemble: $WARDEN bench has no failover workload" >&2
	exit 1
fi

SERVERS=$NET.1:$PORT,$NET.2:$PORT,$NET.3:$PORT
for id in 1 2 3; do
	mkdir -p "$WORK/m$id"
	cat >"$WORK/m$id/zoo.cfg" <<EOF
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$WORK/m$id/data
clientPort=$PORT
clientPortAddress=$NET.$id
maxClientCnxns=0
forceSync=yes
4lw.commands.whitelist=*
admin.enableServer=false
server.1=$NET.1:2888:3888
server.2=$NET.2:2888:3888
server.3=$NET.3:2888:3888
EOF
done

# four_letter HOST WORD prints the member's answer (empty when it is down).
four_letter() {
	local out=""
	if { exec 3<>"/dev/tcp/$1/$PORT"; } 2>/dev/null; then
		printf '%s' "$2" >&3
		out=$(timeout 2 cat <&3 || true)
		exec 3<&- 3>&-
	fi
	printf '%s' "$out"
}

# start_ensemble KIND starts the three members of KIND on empty data
# directories and waits until one leads and the others follow.
start_ensemble() {
	local kind=$1 id i modes
	for id in 1 2 3; do
		rm -rf "$WORK/m$id/data"
		mkdir -p "$WORK/m$id/data"
		echo "$id" >"$WORK/m$id/data/myid"
		start_member "$kind" "$id"
	done
	for i in $(seq 1 1200); do
		modes=""
		for id in 1 2 3; do
			modes="$modes $(four_letter "$NET.$id" srvr | sed -n 's/^Mode: //p')"
		done
		if [ "$(echo "$modes" | tr ' ' '\n' | grep -c '^leader$')" = 1 ] &&
			[ "$(echo "$modes" | tr ' ' '\n' | grep -c '^follower$')" = 2 ]; then
			return 0
		fi
		for id in 1 2 3; do
			if ! alive "$(cat "$WORK/pid.$NET.$id")"; then
				echo "bench-compare-ensemble: $kind member $id exited at start; see $WORK/m$id/$kind.log" >&2
				tail -20 "$WORK/m$id/$kind.log" >&2
				exit 1
			fi
		done
		sleep 0.05
	done
	echo "bench-compare-ensemble: $kind ensemble did not form in 60s (modes:$modes)" >&2
	exit 1
}

# bench KIND NAME ARGS...: one bench run against the running ensemble.
bench() {
	local kind=$1 name=$2
	shift 2
	if ! "$WARDEN" bench --servers "$SERVERS" --label "$kind" --json "$RESULTS/$name.json" "$@" >"$RESULTS/$name.txt" 2>&1; then
		bench_failed "$name"
	fi
}

# member_pids prints the pids of the three members, comma-separated (for
# --server-pid).
member_pids() {
	echo "$(cat "$WORK/pid.$NET.1"),$(cat "$WORK/pid.$NET.2"),$(cat "$WORK/pid.$NET.3")"
}

# member_mode HOST prints the member's role in srvr (empty when it does not
# serve).
member_mode() { four_letter "$1" srvr | sed -n 's/^Mode: //p'; }

# rejoin KIND REP stops a follower of the running ensemble (SIGTERM), starts
# it again on its data directory and writes, as a result file, the seconds
# from its launch until it answers srvr as a follower, and the znodes it then
# has.
rejoin() {
	local kind=$1 rep=$2 id="" i pid t0 secs="" count
	for i in 1 2 3; do
		if [ "$(member_mode "$NET.$i")" = follower ]; then
			id=$i
			break
		fi
	done
	if [ -z "$id" ]; then
		echo "bench-compare-ensemble: $kind: no member answers as a follower" >&2
		exit 1
	fi
	log "rep $rep/$REPS: rejoin of $kind member $id"
	pid=$(cat "$WORK/pid.$NET.$id")
	kill "$pid"
	for i in $(seq 1 600); do
		alive "$pid" || break
		sleep 0.05
	done
	if alive "$pid"; then
		echo "bench-compare-ensemble: $kind member $id did not stop in 30s" >&2
		exit 1
	fi
	t0=$(date +%s.%N)
	start_member "$kind" "$id"
	for i in $(seq 1 2400); do
		if [ "$(member_mode "$NET.$id")" = follower ]; then
			secs=$(echo "$(date +%s.%N) $t0" | awk '{printf "%.3f", $1 - $2}')
			break
		fi
		if ! alive "$(cat "$WORK/pid.$NET.$id")"; then
			echo "bench-compare-ensemble: $kind member $id exited on its restart; see $WORK/m$id/$kind.log" >&2
			tail -20 "$WORK/m$id/$kind.log" >&2
			exit 1
		fi
		sleep 0.05
	done
	if [ -z "$secs" ]; then
		echo "bench-compare-ensemble: $kind member $id did not follow again in 120s" >&2
		exit 1
	fi
	count=$(four_letter "$NET.$id" mntr | awk '$1 == "zk_znode_count" {print $2}')
	cat >"$RESULTS/$kind-rejoin-$SCALE_SIZE-$rep.json" <<EOF
{"workload": "scale", "label": "$kind", "phases": [],
 "metrics": [{"name": "rejoin time at $SCALE_SIZE znodes", "value": $secs, "unit": "s"},
             {"name": "znodes after rejoin at $SCALE_SIZE znodes", "value": ${count:-0}, "unit": "znodes"}]}
EOF
}

SWEEP="sweep --read-ratios 0,20,50,80,90,100 --clients 8 --inflight 32 --payload 1024 --keys 1000 --duration $DURATION --warmup $WARMUP"
CREATE="create --payload 100 --duration $DURATION --warmup $WARMUP"
SCALE="scale --scale-sizes $SCALE_SIZE --payload 64 --clients 8 --inflight 64 --keep"
FAILOVER="failover --clients 6 --inflight 1 --payload 100 --duration $STEADY --failovers $FAILOVERS"

load_at_start=$(cut -d' ' -f1-3 /proc/loadavg)
started=$(date +%s)
# shellcheck source=scripts/bench-lib.sh
. "$ROOT/scripts/bench-lib.sh"

for rep in $(seq 1 "$REPS"); do
	# Alternate which implementation goes first.
	if [ $((rep % 2)) -eq 1 ]; then order="zookeeper warden"; else order="warden zookeeper"; fi
	for w in sweep create scale failover $JAVALOAD_ROWS; do
		for kind in $order; do
			log "rep $rep/$REPS: $w on $kind"
			start_ensemble "$kind"
			case $w in
			sweep) bench "$kind" "$kind-sweep-$rep" --server-pid "$(member_pids)" --workload $SWEEP ;;
			create) bench "$kind" "$kind-create-$rep" --server-pid "$(member_pids)" --workload $CREATE ;;
			scale)
				bench "$kind" "$kind-scale-$SCALE_SIZE-$rep" --server-pid "$(member_pids)" --workload $SCALE
				rejoin "$kind" "$rep"
				;;
			failover)
				bench "$kind" "$kind-failover-$rep" --workload $FAILOVER \
					--kill-leader-pidfile "$WORK/pid.{host}" --restart-cmd "$SELF start-member $kind {host}"
				;;
			nio-* | netty-*) javaload "$kind" "$rep" "$SERVERS" "$w" ;; # a row of the Java client's cross-check
			esac
			stop_ensemble
		done
		if [[ $w == nio-* || $w == netty-* ]]; then
			log "rep $rep/$REPS: $w on the no-op server (the client's ceiling)"
			javaload_ceiling "$rep" "$w"
		fi
	done
done
elapsed=$(($(date +%s) - started))
log "runs done in ${elapsed}s (raw results in $RESULTS); writing $SECTION and $OUT"

rm -f "$PLOTS"/*.svg
"$WARDEN" bench report --baseline zookeeper --headline ensemble --plot "$PLOTS" --plot-ref perf/ensemble \
	--out "$WORK/tables.md" "$RESULTS"/*.json

zk_version=$(dpkg-query -W -f='${Version}' zookeeper)

{
	cat <<EOF
<!-- ensemble:begin (written by scripts/bench-compare-ensemble.sh from docs/perf/ensemble.md; it replaces this block) -->
## Ensemble (3 members)

Produced by \`scripts/bench-compare-ensemble.sh\` in one run ($(date -u +%Y-%m-%d), ${REPS} repetitions,
implementations alternating; **bold** is the median, the raw values of every repetition follow in
parentheses; ratios are Warden / ZooKeeper medians). Regenerate with
\`scripts/bench-compare-ensemble.sh\`, or \`scripts/bench-compare.sh\` for both sections (this
part takes about 20 minutes on a 2-core machine; this run took $((elapsed / 60)) min $((elapsed % 60)) s).

- Machine: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(nproc) cores; RAM $(free -g | awk '/^Mem:/ {print $2}') GiB; $(uname -sr); disk $(df -T "$WORK" | awk 'NR==2 {print $2}') on $(df "$WORK" | awk 'NR==2 {print $1}'); load average when the run started: $load_at_start
- Three members per implementation on one machine, over loopback: client addresses
  \`$SERVERS\`, quorum port 2888, election port 3888, each member with its own data
  directory and \`myid\`; a fresh ensemble (empty data directories) for every workload run, only
  one implementation running at a time
- Apache ZooKeeper $zk_version (Debian), $(java -version 2>&1 | head -1), one JVM per member
  (QuorumPeerMain, heap $ZK_HEAP each); Warden $warden_rev ($(go version | cut -d' ' -f3)), one \`warden server\` per member
- One zoo.cfg per member, the same for both implementations:
  \`$(grep -v '^dataDir' "$WORK/m1/zoo.cfg" | tr '\n' ' ')\` (member 1; the others differ in
  \`clientPortAddress\`). tickTime=2000, initLimit=10, syncLimit=5 are ZooKeeper's typical
  values (those of the sample zoo.cfg it ships). For Warden they give a raft tick of 100 ms
  and an election timeout of 1–2 s (docs/ensemble.md)
- Load generator: \`warden bench\` on the same machine (it shares the cores with the three
  members). Sessions are spread round-robin over the connection string: session i starts on
  member i mod 3 and, when it loses its member, tries the next ones in order. ZooKeeper's own
  clients shuffle the string instead; round-robin makes the spread exact (8 sessions: 3/3/2)
  and the same for both implementations
- Workloads (\`warden bench --servers $SERVERS --workload ...\`):
  - \`$SWEEP --server-pid PID1,PID2,PID3\`: throughput and latency from writes only (0% reads,
    1 KiB setData) to reads only (100% reads, each session reading from its own member)
  - \`$CREATE --server-pid PID1,PID2,PID3\`: one client, one create at a time (each deleted
    asynchronously): the write latency a lone client sees
  - \`$SCALE --server-pid PID1,PID2,PID3\`: memory per znode at $SCALE_SIZE znodes of 64 bytes, of
    the member whose resident memory grew most; then the rejoin: a member answering \`srvr\`
    with \`Mode: follower\` is stopped (SIGTERM, waited for), started again on its data
    directory, and timed from its launch until it answers \`Mode: follower\` again (rejoin time)
  - \`$FAILOVER --kill-leader-pidfile WORK/pid.{host} --restart-cmd 'scripts/bench-compare-ensemble.sh start-member KIND {host}'\`
- Failover, as measured: the bench asks every member for \`srvr\` and takes the one answering
  \`Mode: leader\` and sends it SIGKILL itself (its pid from the file the script wrote when
  it started the member); the kill instant is the return of that kill(2). From
  it the bench measures the first acknowledged write *sent after* the kill, by any of the 6
  sessions (a write sent before may have been committed by the dead leader), the moment every
  session has had such a write acknowledged, and the moment a surviving member answers
  \`srvr\` with \`Mode: leader\`. The sessions reconnect with a backoff of 10–200 ms (so the
  client's backoff blurs the ensemble's time by at most 0.2 s). Then the killed member is
  started again on its data directory and waited for until it answers \`Mode: follower\`,
  and the next kill follows $STEADY of steady writes. The failover rows are medians over
  repetitions of each run's median over its $FAILOVERS kills (each run also records min and
  max, and the JSON every kill)
- Server CPU and memory (sweep, create, scale): the bench reads the three members' /proc
  (utime+stime of /proc/<pid>/stat, VmRSS and VmHWM of /proc/<pid>/status) around each
  phase. Server CPU per op is the three members' CPU time summed, divided by the ops (the
  ensemble's cost of a request); peak RSS is the largest member's VmHWM; bytes per znode are
  those of the member that grew most

EOF
	cat "$WORK/tables.md"
	if [ -s "$WORK/failures.md" ]; then
		printf '\nRuns that failed (left out of the medians):\n\n'
		cat "$WORK/failures.md"
	fi
	javaload_table "### Cross-check with ZooKeeper's Java client" \
		"the client shuffles the connect string, so sessions spread over the members at random"
	echo "<!-- ensemble:end -->"
} >"$SECTION"

# Put the section into the page: replace the block between the markers,
# or append it.
if [ -f "$OUT" ] && grep -q '^<!-- ensemble:begin' "$OUT"; then
	awk -v sec="$SECTION" '
		/^<!-- ensemble:begin/ { while ((getline line < sec) > 0) print line; skip = 1; next }
		/^<!-- ensemble:end -->/ { skip = 0; next }
		!skip { print }
	' "$OUT" >"$WORK/page.md"
	cat "$WORK/page.md" >"$OUT"
else
	{
		if [ -s "$OUT" ]; then
			cat "$OUT"
			echo
		fi
		cat "$SECTION"
	} >"$WORK/page.md"
	cat "$WORK/page.md" >"$OUT"
fi
log "wrote $SECTION, $PLOTS and $OUT"
