#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs the libFuzzer target over the user-space request path
# ($BUILD/fuzz/fuzz_request, built by `make fuzz-build`) and fails on any
# crash, sanitizer report, timeout or failed invariant. First replays the
# saved crashes in tests/fuzz/crashes/, then fuzzes from the seed corpus.
#
#   run-request.sh [-r RUNS] [-t SECONDS] [-m MIN_RUNS] [-c CORPUS] [-s SEED]
#
# -r caps the inputs (default: no cap), -t the time; with -m the run fails
# if fewer than MIN_RUNS inputs were executed. -c keeps new inputs in
# CORPUS (created if missing); without it they go to a temporary directory.
# Run from the repository root; BUILD as in the Makefile. Another libFuzzer
# target runs the same way with FUZZ_TARGET, FUZZ_SEEDS, FUZZ_DICT and
# FUZZ_CRASHES set (run-dns.sh).
set -u
BUILD=${BUILD:-build}
target=${FUZZ_TARGET:-fuzz_request}
FZ=$BUILD/fuzz/$target
seeds=${FUZZ_SEEDS:-$BUILD/fuzz/seeds}
dict=${FUZZ_DICT:-tests/fuzz/request.dict}
crashes=${FUZZ_CRASHES:-tests/fuzz/crashes}
runs=-1
secs=600
min_runs=0
corpus=
seed=${FUZZ_SEED:-$(( (RANDOM << 15 | RANDOM) + 1 ))}

while getopts r:t:m:c:s: opt; do
	case $opt in
	r) runs=$OPTARG ;;
	t) secs=$OPTARG ;;
	m) min_runs=$OPTARG ;;
	c) corpus=$OPTARG ;;
	s) seed=$OPTARG ;;
	*) exit 2 ;;
	esac
done

if [ ! -x "$FZ" ]; then
	echo "$target: $FZ missing (make fuzz-build)"
	exit 1
fi
tmp=$(mktemp -d "/tmp/rr-$target.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
[ -n "$corpus" ] || corpus=$tmp/corpus
mkdir -p "$corpus" "$BUILD/fuzz/artifacts"

export ASAN_OPTIONS=${ASAN_OPTIONS:-abort_on_error=1:detect_leaks=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
# libFuzzer's own exit codes include 77, the test runner's "skip": every
# failure is mapped to 1.
common=(-error_exitcode=1 -timeout_exitcode=1 -timeout=10 -rss_limit_mb=2048
	-max_len=4097 -dict="$dict"
	-artifact_prefix="$BUILD/fuzz/artifacts/")

shopt -s nullglob
saved=("$crashes"/*)
if [ ${#saved[@]} -gt 0 ]; then
	echo "replaying ${#saved[@]} saved input(s) from $crashes/"
	if ! "$FZ" "${common[@]}" "${saved[@]}" >"$tmp/replay.log" 2>&1; then
		tail -n 40 "$tmp/replay.log"
		echo "FAIL: a saved crash input still fails"
		exit 1
	fi
fi

echo "$target: seed $seed, up to ${runs/#-1/unlimited} inputs in ${secs} s"
start=$(date +%s)
touch "$tmp/start"
"$FZ" "${common[@]}" -seed="$seed" -runs="$runs" -max_total_time="$secs" \
	-print_final_stats=1 "$corpus" "$seeds" >"$tmp/fuzz.log" 2>&1
rc=$?
took=$(($(date +%s) - start))
done_runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$tmp/fuzz.log")
if [ $rc -ne 0 ]; then
	grep -v '^#[0-9]' "$tmp/fuzz.log" | tail -n 60
	for a in "$BUILD"/fuzz/artifacts/*; do
		[ "$a" -nt "$tmp/start" ] || continue
		echo "input $a ($(stat -c %s "$a") bytes):"
		od -An -tx1 -v "$a" | tr -d ' \n' | fold -w 64
		echo
	done
	echo "FAIL: $target exited $rc after ${took} s (seed $seed);" \
		"keep the input in $crashes/"
	exit 1
fi
grep -E '^(Done|stat::)' "$tmp/fuzz.log"
echo "$target: ${done_runs:-0} inputs in ${took} s," \
	"corpus $(find "$corpus" -type f | wc -l) new input(s)"
if [ "${done_runs:-0}" -lt "$min_runs" ]; then
	echo "FAIL: only ${done_runs:-0} inputs ran, $min_runs wanted"
	exit 1
fi
exit 0
