# bench-lib.sh is sourced by bench-compare.sh and bench-compare-ensemble.sh:
# what both need beyond their own servers: the record of a failed bench run,
# and the cross-check of their throughput figures with a second load
# generator that we did not write, scripts/javaload/Load.java on ZooKeeper's
# own Java client. It needs CP (ZooKeeper's jars), WORK, RESULTS, ROOT,
# DURATION and REPS set, and a log function, by the sourcing script.

# bench_failed NAME records a bench run that failed (a server that expired
# sessions under a storm, ...): its numbers are left out, the run goes on,
# and the page lists it.
bench_failed() {
	local first
	first=$(grep -v '^ *$' "$RESULTS/$1.txt" | tail -1)
	log "$1 failed: $first (its numbers are left out; see $RESULTS/$1.txt)"
	rm -f "$RESULTS/$1.json"
	echo "- \`$1\` failed and is left out of the medians: $first" >>"$WORK/failures.md"
}

JAVALOAD=$WORK/javaload
mkdir -p "$JAVALOAD"
javac -d "$JAVALOAD" -cp "$CP" "$ROOT/scripts/javaload/Load.java"

# The rows of the cross-check, TRANSPORT-MODE: each of the client's
# transports (NIO, its default, and Netty) writing and reading. A
# repetition runs each row on every server in turn and then on the no-op
# server, so that the machine's speed drifting within a repetition (seen:
# the client's own ceiling a third lower a minute later) falls between rows
# rather than between the servers compared.
JAVALOAD_ROWS="nio-write nio-read netty-write netty-read"

# javaload KIND REP SERVERS ROW: one row's throughput by ZooKeeper's Java
# client against the connect string SERVERS, into
# $RESULTS/javaload-KIND-ROW-REP.txt (ops/s) and the client's own CPU use in
# those seconds into the same name with .cores.
javaload() {
	local kind=$1 rep=$2 servers=$3 row=$4 out
	out=$(java -cp "$CP:$JAVALOAD" Load "$servers" "${DURATION%s}" 8 32 1024 "${row#*-}" "${row%-*}")
	sed -n 's/^ops_per_sec=\([0-9]*\).*/\1/p' <<<"$out" >"$RESULTS/javaload-$kind-$row-$rep.txt"
	sed -n 's/.*client_cores=\([0-9.]*\).*/\1/p' <<<"$out" >"$RESULTS/javaload-$kind-$row-$rep.cores"
}

# The no-op server (scripts/javaload/noopserver) answers every call at once
# and stores nothing: what the Java client reaches against it is the
# client's own ceiling on this machine, the practical limit of any server
# that shares the cores with the client.
NOOP=$WORK/noopserver
(cd "$ROOT" && go build -o "$NOOP" ./scripts/javaload/noopserver)
NOOP_ADDR=127.0.0.1:$((PORT + 89))

# javaload_ceiling REP ROW runs javaload's ROW against the no-op server, as
# KIND "ceiling".
javaload_ceiling() {
	# It prints "listening" once its port is its own; waiting for that,
	# not for the port to answer, keeps another process on the port from
	# being measured instead.
	"$NOOP" -addr "$NOOP_ADDR" >"$WORK/noopserver.out" &
	local pid=$! i
	for i in $(seq 1 100); do
		if grep -q '^listening' "$WORK/noopserver.out" || ! kill -0 "$pid" 2>/dev/null; then
			break
		fi
		sleep 0.05
	done
	if ! grep -q '^listening' "$WORK/noopserver.out"; then
		echo "bench: the no-op server did not start on $NOOP_ADDR (port in use?)" >&2
		kill "$pid" 2>/dev/null || true
		exit 1
	fi
	javaload ceiling "$1" "$NOOP_ADDR" "$2"
	kill "$pid"
	wait "$pid" 2>/dev/null || true
}

# ratio A B SUFFIX prints A / B with two decimals and SUFFIX, or n/a.
ratio() { awk -v a="$1" -v b="$2" -v s="$3" 'BEGIN { if (a + 0 > 0 && b + 0 > 0) printf "%.2f%s", a / b, s; else print "n/a" }'; }

# median FILES...: the median of the numbers in the files (one each).
median() { cat "$@" | sort -n | awk '{v[NR] = $1} END {print (NR ? v[int((NR + 1) / 2)] : "n/a")}'; }

# javaload_table HEADING SPREAD prints the cross-check as a Markdown section
# (SPREAD says where the sessions went).
javaload_table() {
	local heading=$1 spread=$2 row w z c
	cat <<TABLE

$heading

The same throughputs measured by a second load generator that we did not write against either
server: \`scripts/javaload/Load.java\`, on ZooKeeper's own Java client (8 sessions, each keeping
32 asynchronous calls in flight on 100 keys of 1 KiB; $spread; ${DURATION} after 1 s of
warm-up), with each of the client's two transports: NIO, its default, and Netty
(\`zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\`, the one TLS needs).
Each repetition runs a row on each server in turn (a fresh one each time), then on the no-op
server below. Medians of $REPS runs, ops/s; "client cores" is the CPU time the Java client
used in the counted seconds divided by them, against each server (the machine has $(nproc)
cores, shared with the server). "Client's ceiling" is the same run against \`scripts/javaload/noopserver\`,
a server that answers every call at once and stores nothing: what the client reaches when the
server costs next to nothing, the practical ceiling of any server that shares the cores with
it; the last column is Warden's share of it.

| measure | warden | zookeeper | ratio warden / zookeeper | client cores, warden / zookeeper | client's ceiling | warden / ceiling |
|---|---|---|---|---|---|---|
TABLE
	for row in $JAVALOAD_ROWS; do
		w=$(median "$RESULTS"/javaload-warden-$row-*.txt)
		z=$(median "$RESULTS"/javaload-zookeeper-$row-*.txt)
		c=$(median "$RESULTS"/javaload-ceiling-$row-*.txt)
		printf '| %s throughput (Java client, %s) | %s | %s | %s | %s / %s | %s | %s |\n' "${row#*-}" "${row%-*}" "$w" "$z" \
			"$(ratio "$w" "$z" ×)" \
			"$(median "$RESULTS"/javaload-warden-$row-*.cores)" \
			"$(median "$RESULTS"/javaload-zookeeper-$row-*.cores)" \
			"$c" "$(ratio "$w" "$c" "")"
	done
}
