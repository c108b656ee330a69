#!/bin/sh
# torture.sh runs the fault-testing harness (test/torture): real server
# processes, each member in a network namespace of its own, broken on
# purpose (kill -9, SIGSTOP, partitions, a wiped data directory, a full
# disk) while clients run the registers, set, queue, lock and sessions
# workloads; every history is checked and one verdict line printed a run.
#
#   scripts/torture.sh                 the CI slice (a few seeds, 3 and 5 members;
#                                      three of them with the reconfig nemesis too)
#   scripts/torture.sh N               a soak: seeds 1..N on 3 and 5 members
#   scripts/torture.sh N -faults all,reconfig   a soak with membership changes too
#   scripts/torture.sh -seeds 17 -members 5     rerun one seed
#   scripts/torture.sh N -target zookeeper -members 3   the baseline
#
# Options: -target warden|zookeeper, -members 3|5|3,5, -seeds LIST (N, N-M,
# comma-separated), -first S (a soak of N seeds starting at S), -faults
# LIST|all|reconfig|all,reconfig, -parallel P (runs at once, default 2), -out DIR (logs of failing
# runs), -keep (keep passing runs' logs too), -results FILE (one JSON line per
# run; a summary is printed from it).
# Needs root; installs iproute2 and nftables (and, for the zookeeper target,
# Apache ZooKeeper) with apt-get when they are missing. Exits non-zero when
# any run found an anomaly.
set -eu
cd "$(dirname "$0")/.."

keep="" count="" first=1 target=warden members="" seeds="" faults=all parallel=2 out="" results=""
while [ $# -gt 0 ]; do
	case "$1" in
	-target) target=$2; shift 2 ;;
	-members) members=$2; shift 2 ;;
	-seeds) seeds=$2; shift 2 ;;
	-first) first=$2; shift 2 ;;
	-faults) faults=$2; shift 2 ;;
	-parallel) parallel=$2; shift 2 ;;
	-out) out=$2; shift 2 ;;
	-results) results=$2; shift 2 ;;
	-keep) keep=-torture.keep; shift ;;
	[0-9]*) count=$1; shift ;;
	*) echo "torture.sh: unknown argument $1 (see the comment at the top of $0)" >&2; exit 2 ;;
	esac
done

if [ "$(id -u)" -ne 0 ]; then
	echo "torture.sh: needs root (network namespaces, nftables, tmpfs mounts)" >&2
	exit 1
fi
missing=""
command -v ip >/dev/null 2>&1 || missing="$missing iproute2"
command -v nft >/dev/null 2>&1 || missing="$missing nftables"
if [ -n "$missing" ]; then
	echo "torture.sh: installing$missing"
	apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends $missing >/dev/null
fi
if [ "$target" = zookeeper ]; then
	sh scripts/install-test-deps.sh
fi

[ -z "$members" ] && { if [ -n "$count" ]; then members=3,5; else members=3; fi; }
if [ -n "$count" ]; then
	seeds="$first-$((first + count - 1))"
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
[ -z "$results" ] && results="$tmp/results.jsonl"
: >"$results"
[ -z "$out" ] && out="${TMPDIR:-/tmp}/warden-torture"
mkdir -p "$out"

go test -c -tags torture -o "$tmp/torture.test" ./test/torture
runs=13 # the CI slice: TestTorture's ciSlice
if [ -n "$seeds" ]; then
	runs=$(python3 -c "
import sys
n=0
for p in sys.argv[1].split(','):
    a,_,b=p.partition('-'); n+=int(b or a)-int(a)+1
print(n*len(sys.argv[2].split(',')))" "$seeds" "$members")
fi
# About 45 s a run (70 s for ZooKeeper's JVMs), spread over the parallel runs, plus slack.
timeout=$((runs * 70 / parallel + 300))
set +e
"$tmp/torture.test" -test.run '^TestTorture$' -test.timeout "${timeout}s" -test.parallel "$parallel" \
	-torture.target "$target" -torture.members "$members" -torture.seeds "$seeds" \
	-torture.faults "$faults" -torture.out "$out" -torture.results "$results" $keep >"$tmp/log" 2>&1 &
pid=$!
tail -n +1 -f --pid=$pid "$tmp/log" | grep --line-buffered -E '^(PASS|FAIL) '
wait $pid
status=$?
set -e
cp "$tmp/log" "$out/torture.log"
if [ $status -ne 0 ]; then
	echo "== torture.sh: the harness failed; what it said (all of it: $out/torture.log; each failing run's member logs: $out/<run>/):"
	grep -E '^ *--- FAIL|^ +[a-z_]+\.go:[0-9]+: ' "$tmp/log" | grep -v -E 'proc\.go:[0-9]+: ---- ' | head -n 200
fi
python3 scripts/torture-summary.py "$results" "$runs" || status=1
exit $status
