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

# javaload KIND REP SERVERS: write then read throughput by ZooKeeper's Java
# client against the connect string SERVERS, into
# $RESULTS/javaload-KIND-{write,read}-REP.txt.
javaload() {
	local kind=$1 rep=$2 servers=$3 mode
	for mode in write read; do
		java -cp "$CP:$JAVALOAD" Load "$servers" "${DURATION%s}" 8 32 1024 "$mode" |
			sed -n 's/^ops_per_sec=\([0-9]*\).*/\1/p' >"$RESULTS/javaload-$kind-$mode-$rep.txt"
	done
}

# median FILES...: the median of the numbers in the files (one each).
median() { cat "$@" | sort -n | awk '{v[NR] = $1} END {print (NR ? v[int((NR + 1) / 2)] : "n/a")}'; }

# javaload_table HEADING SPREAD prints the cross-check as a Markdown section
# (SPREAD says where the sessions went).
javaload_table() {
	local heading=$1 spread=$2 mode w z
	cat <<TABLE

$heading

The same throughputs measured by a second load generator that we did not write against either
server: \`scripts/javaload/Load.java\`, on ZooKeeper's own Java client (8 sessions, each keeping
32 asynchronous calls in flight on 100 keys of 1 KiB; $spread; ${DURATION} after 1 s of
warm-up). Medians of $REPS runs, ops/s.

| measure | warden | zookeeper | ratio warden / zookeeper |
|---|---|---|---|
TABLE
	for mode in write read; do
		w=$(median "$RESULTS"/javaload-warden-$mode-*.txt)
		z=$(median "$RESULTS"/javaload-zookeeper-$mode-*.txt)
		printf '| %s throughput (Java client) | %s | %s | %s× |\n' "$mode" "$w" "$z" \
			"$(awk -v w="$w" -v z="$z" 'BEGIN { if (z > 0) printf "%.2f", w / z; else print "n/a" }')"
	done
}
