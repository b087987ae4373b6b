#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every test tier and prints one closing line, "N passed, N failed,
# N skipped". With SAN_BUILD set (a build made with SAN=1), the unit tests
# and the reqrouter integration tests run a second time against it. A test is an executable in $BUILD/tests/ (cmocka unit tests
# and BPF program tests) or a script in tests/integration/. Exit status 0
# is a pass, 77 a skip (the test prints why), anything else a failure.
# Each test gets a time limit, so a hang is a failure, not a stuck CI.
set -u
shopt -s extglob
cd "$(dirname "$0")/.." || exit 1
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

run_pass() { # build-dir label integration-glob
	local build=$1 label=$2 glob=$3 t
	echo "== unit and BPF program tests ($build/tests)$label"
	for t in "$build"/tests/*; do
		{ [ -x "$t" ] && [ -f "$t" ]; } || continue
		BUILD=$build run_one "tests/$(basename "$t")$label" \
			"$UNIT_LIMIT" "$t"
	done
	echo "== integration tests (tests/integration)$label"
	for t in tests/integration/$glob; do
		[ -f "$t" ] || continue
		BUILD=$build run_one "$t$label" "$INTEGRATION_LIMIT" bash "$t"
	done
}

run_pass "$BUILD" "" "*.sh"
# The sanitizer pass (make test builds it into build/san): the unit tests
# and the tests that drive reqrouter itself. The fuzz targets carry their
# own sanitizers and the tools have their own smoke test.
if [ -n "${SAN_BUILD:-}" ]; then
	run_pass "$SAN_BUILD" " [san]" "@(invoker|hardening|function|control)_*.sh"
fi

[ ${#failed[@]} -gt 0 ] && printf 'failed: %s\n' "${failed[*]}"
echo "$pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ] && [ $((pass + skip)) -gt 0 ]
