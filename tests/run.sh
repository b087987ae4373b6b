#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Runs every test tier and prints one closing line, "N passed, N failed,
# N skipped". With SAN_BUILD set (a build made with SAN=1), the unit tests
# and the reqrouter integration tests run a second time against it. A test is an executable in $BUILD/tests/ (cmocka unit tests
# and BPF program tests) or a script in tests/integration/, run by
# tools/lib/runner.sh (a time limit each; 0 pass, 77 skip, else failure).
set -u
shopt -s extglob
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD

UNIT_LIMIT=${UNIT_LIMIT:-300}
INTEGRATION_LIMIT=${INTEGRATION_LIMIT:-600}
source tools/lib/runner.sh

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
	run_pass "$SAN_BUILD" " [san]" "@(invoker|hardening|function|control|tcp)_*.sh"
fi

run_summary
