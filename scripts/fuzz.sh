#!/bin/sh
# fuzz.sh runs Warden's fuzz targets with the fuzzer, one at a time:
#
#   scripts/fuzz.sh [-time 30s] [-minimize 5s] [target regexp]
#
# It lists every Fuzz target of the repository (go test -list in each
# package that has one), keeps those whose name or package/name matches the
# regexp (all by default), runs each for -time (go test -fuzz, one target
# at a time: the fuzzer already uses every core), and prints a table of
# target, execs, new interesting inputs and result. -minimize bounds the
# minimisation of each new input, which otherwise stalls a short run.
# It exits non-zero when a target fails; the failing input is then in the
# package's testdata/fuzz/<Target>/ (commit it with the fix: it becomes a
# regression seed) and the fuzzer's log is kept and named.
#
# CI does not run this: the seed corpora (f.Add and testdata/fuzz) run as
# ordinary tests in scripts/test.sh.
set -eu
cd "$(dirname "$0")/.."

fuzztime=30s
minimize=5s
while [ $# -gt 0 ]; do
	case $1 in
	-time) fuzztime=$2; shift 2 ;;
	-minimize) minimize=$2; shift 2 ;;
	-h | -help | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
	-*) echo "fuzz.sh: unknown flag $1 (want -time, -minimize, or a target regexp)" >&2; exit 2 ;;
	*) break ;;
	esac
done
pattern=${1:-.}
[ $# -le 1 ] || { echo "fuzz.sh: one target regexp at most" >&2; exit 2; }

logs=$(mktemp -d "${TMPDIR:-/tmp}/warden-fuzz.XXXXXX")

# Packages with a fuzz target, then the targets go test lists in each.
targets=""
for dir in $(git grep --untracked -l '^func Fuzz[A-Za-z0-9_]*(f \*testing.F)' -- '*_test.go' | xargs -n1 dirname | sort -u); do
	for name in $(go test -list '^Fuzz' "./$dir" | grep '^Fuzz' || true); do
		if printf '%s\n%s/%s\n' "$name" "$dir" "$name" | grep -Eq -- "$pattern"; then
			targets="$targets $dir:$name"
		fi
	done
done
if [ -z "$targets" ]; then
	echo "fuzz.sh: no fuzz target matches $pattern" >&2
	exit 2
fi

row() { printf '%-44s %12s %6s  %s\n' "$@"; }
echo "fuzzing each target for $fuzztime (minimising for at most $minimize), logs in $logs"
row TARGET EXECS NEW RESULT
failed=0
for t in $targets; do
	dir=${t%%:*}
	name=${t#*:}
	log="$logs/$(echo "$dir" | tr / _)_$name.log"
	if go test -run '^$' -fuzz "^$name\$" -fuzztime "$fuzztime" -fuzzminimizetime "$minimize" "./$dir" >"$log" 2>&1; then
		result=ok
	else
		result="FAIL (see $log)"
		failed=$((failed + 1))
	fi
	# The last progress line: "fuzz: elapsed: 30s, execs: 1234 (41/sec), new interesting: 5 (total: 12)".
	last=$(grep '^fuzz: elapsed' "$log" | tail -n 1 || true)
	execs=$(echo "$last" | sed -n 's/.*execs: \([0-9]*\).*/\1/p')
	new=$(echo "$last" | sed -n 's/.*new interesting: \([0-9]*\).*/\1/p')
	row "$dir.$name" "${execs:--}" "${new:--}" "$result"
	if [ "$result" != ok ]; then
		grep -E -- '--- FAIL|Failing input written|fuzz_test.go|_test.go:[0-9]+:|panic:|hung or terminated' "$log" | head -n 8 | sed 's/^/    /'
	fi
done
if [ "$failed" -gt 0 ]; then
	echo "$failed target(s) failed"
	exit 1
fi
rm -r "$logs"
