# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# Running a tier of tests (tests/run.sh, tests/scale/run): each test under
# a time limit, so a hang is a failure, not a stuck CI; one PASS, SKIP or
# FAIL line each (a failure with the end of its log); one closing line,
# "N passed, N failed, N skipped". Exit status 0 of a test is a pass, 77 a
# skip (the test's last line says why), anything else a failure.
#
#   run_one NAME LIMIT CMD...   run one test; its log is kept in RUN_LOGS
#   run_summary                 the closing line; false if any failed or
#                               nothing ran
#
# RUN_TAIL: how many lines of a failed test's log to show (default 60);
# RUN_FIGURES=1 also shows a passed test's "figures: " lines.

RUN_PASS=0
RUN_FAIL=0
RUN_SKIP=0
RUN_FAILED=()
RUN_LOGS=$(mktemp -d /tmp/rr-tests.XXXXXX)
trap 'rm -rf "$RUN_LOGS"' EXIT

run_one() {
	local name=$1 limit=$2 start rc log
	shift 2
	log="$RUN_LOGS/${name//\//_}.log"
	start=$(date +%s)
	timeout --kill-after=10 "$limit" "$@" >"$log" 2>&1
	rc=$?
	case $rc in
	0)
		RUN_PASS=$((RUN_PASS + 1))
		printf 'PASS  %-40s %4ss\n' "$name" $(($(date +%s) - start))
		# The measured figures belong in the CI log.
		[ "${RUN_FIGURES:-0}" = 1 ] &&
			grep '^figures: ' "$log" | sed 's/^/    /'
		;;
	77)
		RUN_SKIP=$((RUN_SKIP + 1))
		printf 'SKIP  %-40s %s\n' "$name" "$(tail -n 1 "$log")"
		;;
	*)
		RUN_FAIL=$((RUN_FAIL + 1))
		RUN_FAILED+=("$name")
		[ $rc -eq 124 ] && echo "(timed out after ${limit}s)" >>"$log"
		printf 'FAIL  %-40s exit %s\n' "$name" "$rc"
		sed 's/^/    | /' "$log" | tail -n "${RUN_TAIL:-60}"
		;;
	esac
	return 0
}

run_summary() {
	[ ${#RUN_FAILED[@]} -gt 0 ] && printf 'failed: %s\n' "${RUN_FAILED[*]}"
	echo "$RUN_PASS passed, $RUN_FAIL failed, $RUN_SKIP skipped"
	[ "$RUN_FAIL" -eq 0 ] && [ $((RUN_PASS + RUN_SKIP)) -gt 0 ]
}
