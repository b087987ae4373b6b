#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every test tier and prints one closing line, "N passed, N failed,
# N skipped". A test is an executable in $BUILD/tests/ (cmocka unit tests
# and BPF program tests) or a script in tests/integration/. Exit status 0
# is a pass, 77 a skip (the test prints why), anything else a failure.
# Each test gets a time limit, so a hang is a failure, not a stuck CI.
set -u
cd "$(dirname "$0")/.."
BUILD=${BUILD:-build}
export BUILD

UNIT_LIMIT=${UNIT_LIMIT:-300}
INTEGRATION_LIMIT=${INTEGRATION_LIMIT:-600}
pass=0
fail=0
skip=0
failed=()
log_dir=$(mktemp -d /tmp/rr-tests.XXXXXX)
trap 'rm -rf "$log_dir"' EXIT

run_one() { # name limit cmd...
	local name=$1 limit=$2 start rc log
	shift 2
	log="$log_dir/${name//\//_}.log"
	start=$(date +%s)
	timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0)
		pass=$((pass + 1))
		printf 'PASS  %-40s %4ss\n' "$name" $(($(date +%s) - start))
		;;
	77)
		skip=$((skip + 1))
		printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$log")"
		;;
	*)
		fail=$((fail + 1))
		failed+=("$name")
		[ $rc -eq 124 ] && echo "(timed out after ${limit}s)" >>"$log"
		printf 'FAIL  %-40s exit %s\n' "$name" "$rc"
		sed 's/^/    | /' "$log" | tail -n 60
		;;
	esac
}

echo "== unit and BPF program tests ($BUILD/tests)"
for t in "$BUILD"/tests/*; do
	[ -x "$t" ] && [ -f "$t" ] || continue
	run_one "tests/$(basename "$t")" "$UNIT_LIMIT" "$t"
done

echo "== integration tests (tests/integration)"
for t in tests/integration/*.sh; do
	[ -f "$t" ] || continue
	run_one "$t" "$INTEGRATION_LIMIT" bash "$t"
done

[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ $((pass + skip)) -gt 0 ]
