#!/usr/bin/env bash
# flood-rss.sh floods a standalone Warden server, then a 3-member Warden
# ensemble, with large writes from many sessions for a bounded time
# (`warden bench --workload flood`), while one more session reads a small
# znode; it reports each server's peak resident memory (VmHWM of
# /proc/PID/status, the high-water mark of the process's life) and the
# latency of the small reads during the flood. These are the figures of
# docs/operations.md, "Limits and throttling". Speed and memory are
# measured here, never asserted in timed tests.
#
# Environment:
#   CLIENTS=64          writing sessions
#   INFLIGHT=8          writes pipelined per session
#   PAYLOAD=1047552     bytes per write (1 MiB − 1 KiB: a setData frame
#                       must fit jute.maxbuffer, 1 MiB − 1 byte)
#   DURATION=30s        length of the flood
#   MODES="standalone ensemble"
#   NET=127.0.43        ensemble members are $NET.1, $NET.2, $NET.3
#   PORT=21820          client port
#   METRICS_PORT=21821  each server's Prometheus /metrics port
#   WARDEN=path         a prebuilt warden binary (default: go build)
#   BENCH=path          the warden binary whose bench runs the flood (default
#                       $WARDEN; set it to measure an older server)
#   KEEP=1              keep the work directory (logs, JSON results)
#   LOG_LEVEL=warn      the servers' log level
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
CLIENTS=${CLIENTS:-64}
INFLIGHT=${INFLIGHT:-8}
PAYLOAD=${PAYLOAD:-1047552}
DURATION=${DURATION:-30s}
MODES=${MODES:-standalone ensemble}
NET=${NET:-127.0.43}
PORT=${PORT:-21820}
METRICS_PORT=${METRICS_PORT:-21821}
WORK=$(mktemp -d /var/tmp/flood-rss.XXXXXX)

log() { printf '%s flood-rss: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }

PIDS=()
cleanup() {
	local pid
	for pid in "${PIDS[@]}"; do
		kill "$pid" 2>/dev/null || true
	done
	for pid in "${PIDS[@]}"; do
		wait "$pid" 2>/dev/null || true
	done
	if [ -z "${KEEP:-}" ]; then
		rm -rf "$WORK"
	else
		log "kept $WORK"
	fi
}
trap cleanup EXIT

if [ -z "${WARDEN:-}" ]; then
	WARDEN=$WORK/warden
	(cd "$ROOT" && go build -o "$WARDEN" ./cmd/warden)
fi

# hwm PID prints the process's peak resident memory in MiB.
hwm() { awk '/^VmHWM:/ { printf "%d", $2 / 1024 }' "/proc/$1/status"; }

# srvr_mode HOST prints the member's Mode line (empty when it is down).
srvr_mode() {
	local out=""
	if { exec 3<>"/dev/tcp/$1/$PORT"; } 2>/dev/null; then
		printf srvr >&3
		out=$(timeout 2 cat <&3 || true)
		exec 3<&- 3>&-
	fi
	printf '%s' "$out" | sed -n 's/^Mode: //p'
}

# wait_modes HOST... waits until every host answers srvr with a mode that
# serves.
wait_modes() {
	local i h ok
	for i in $(seq 1 600); do
		ok=1
		for h in "$@"; do
			case $(srvr_mode "$h") in
			standalone | leader | follower) ;;
			*) ok= ;;
			esac
		done
		[ -n "$ok" ] && return 0
		sleep 0.1
	done
	log "servers did not start: see $WORK"
	KEEP=1
	exit 1
}

write_cfg() { # DIR HOST [ensemble]
	mkdir -p "$1/data"
	cat >"$1/zoo.cfg" <<EOF
tickTime=2000
initLimit=10
syncLimit=5
dataDir=$1/data
clientPort=$PORT
clientPortAddress=$2
maxClientCnxns=0
4lw.commands.whitelist=*
admin.enableServer=false
metricsProvider.className=org.apache.zookeeper.metrics.prometheus.PrometheusMetricsProvider
metricsProvider.httpHost=$2
metricsProvider.httpPort=$METRICS_PORT
EOF
	if [ "${3:-}" = ensemble ]; then
		cat >>"$1/zoo.cfg" <<EOF
server.1=$NET.1:2888:3888
server.2=$NET.2:2888:3888
server.3=$NET.3:2888:3888
EOF
	fi
}

start() { # DIR HOST
	echo "$2" >"$1/host"
	"$WARDEN" server -log-level "${LOG_LEVEL:-warn}" "$1/zoo.cfg" </dev/null >>"$1/server.log" 2>&1 &
	PIDS+=($!)
	echo $! >"$1/pid"
}

flood() { # NAME SERVERS PID
	log "$1: $CLIENTS sessions × $INFLIGHT writes of $PAYLOAD bytes for $DURATION"
	"${BENCH:-$WARDEN}" bench --workload flood --label "$1" --servers "$2" --clients "$CLIENTS" \
		--inflight "$INFLIGHT" --payload "$PAYLOAD" --keys "$CLIENTS" --duration "$DURATION" \
		--server-pid "$3" --json "$WORK/$1.json" >"$WORK/$1.txt" 2>"$WORK/$1.err"
}

# served_reads HOST prints the server's own latency of the small reads
# (warden_request_duration_seconds{op="get_data"}: from the request read
# to its reply queued, without the network and the clients' scheduling):
# how many, and the bucket bounds the slowest fell in.
served_reads() {
	curl -s "http://$1:$METRICS_PORT/metrics" | awk '
		/^warden_request_duration_seconds_bucket\{op="get_data"/ {
			le = $1; sub(/.*le="/, "", le); sub(/".*/, "", le)
			n = $2 + 0
			if (le == "+Inf") { total = n; next }
			if (n > prev) last = le
			if (le == "0.0128") under = n
			prev = n
		}
		END { if (total > prev) last = "+Inf"; if (total > 0) printf "%d reads served, the slowest in the bucket up to %s s, %d over 12.8 ms\n", total, last, total - under }'
}

# report NAME MEMBER_DIRS...: the bench's figures and every member's peak.
report() {
	local name=$1 d
	shift
	echo "== $name"
	cat "$WORK/$name.txt"
	for d in "$@"; do
		echo "peak RSS (VmHWM) of $(basename "$d"): $(hwm "$(cat "$d/pid")") MiB"
		r=$(served_reads "$(cat "$d/host")")
		[ -n "$r" ] && echo "server-side small reads on $(basename "$d"): $r"
	done
	return 0
}

for mode in $MODES; do
	case $mode in
	standalone)
		d=$WORK/standalone
		write_cfg "$d" 127.0.0.1
		start "$d" 127.0.0.1
		wait_modes 127.0.0.1
		flood standalone "127.0.0.1:$PORT" "$(cat "$d/pid")"
		report standalone "$d"
		;;
	ensemble)
		for id in 1 2 3; do
			d=$WORK/m$id
			write_cfg "$d" "$NET.$id" ensemble
			echo "$id" >"$d/data/myid"
			start "$d" "$NET.$id"
		done
		wait_modes "$NET.1" "$NET.2" "$NET.3"
		leader=
		for id in 1 2 3; do
			[ "$(srvr_mode "$NET.$id")" = leader ] && leader=$id
		done
		flood ensemble "$NET.1:$PORT,$NET.2:$PORT,$NET.3:$PORT" "$(cat "$WORK/m$leader/pid")"
		echo "(leader: m$leader)"
		report ensemble "$WORK/m1" "$WORK/m2" "$WORK/m3"
		;;
	esac
done
