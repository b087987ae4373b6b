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
#   run_bg NAME LIMIT CMD...    run_one in the background, beside at most
#                               RUN_JOBS - 1 others (RUN_JOBS: default 2),
#                               for tests that neither measure time nor
#                               load the machine; its line comes when it
#                               ends
#   run_wait                    wait for every test run_bg started
#   run_summary                 the closing line; false if any failed or
#                               nothing ran
#
# RUN_TAIL: how many lines of a failed test's log to show (default 60);
# RUN_FIGURES=1 also shows a passed test's "figures: " lines.

RUN_PASS=0
RUN_FAIL=0
RUN_SKIP=0
RUN_FAILED=()
RUN_JOBS=${RUN_JOBS:-2}
RUN_BG=()   # the PIDs of the tests run_bg started, by their number
RUN_BG_N=0
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

# run_bg NAME LIMIT CMD...: run_one in a subshell of its own, its output
# and counts in files that run_reap reads once it ends.
run_bg() {
	local n
	while [ "${#RUN_BG[@]}" -ge "$RUN_JOBS" ]; do
		run_reap
	done
	n=$((RUN_BG_N += 1))
	(
		# Counted apart, in this subshell, and added by run_reap.
		# shellcheck disable=SC2030
		RUN_PASS=0 RUN_FAIL=0 RUN_SKIP=0 RUN_FAILED=()
		run_one "$@"
		echo "$RUN_PASS $RUN_FAIL $RUN_SKIP ${RUN_FAILED[*]}" \
			>"$RUN_LOGS/bg.$n.counts"
	) >"$RUN_LOGS/bg.$n.out" 2>&1 &
	RUN_BG[n]=$!
}

# run_reap: waits for one of run_bg's tests to end, prints its line and
# adds its counts.
run_reap() {
	local pid n

	pid=
	wait -n -p pid "${RUN_BG[@]}"
	# No PID: the wait was interrupted (a signal); the caller waits again.
	[ -n "$pid" ] || return 0
	for n in "${!RUN_BG[@]}"; do
		[ "${RUN_BG[n]}" = "$pid" ] && break
	done
	unset "RUN_BG[n]"
	cat "$RUN_LOGS/bg.$n.out"
	run_add_counts "$RUN_LOGS/bg.$n.counts" "a test run beside another"
}

# run_add_counts FILE WHAT: adds the counts a subshell left in FILE
# ("PASS FAIL SKIP NAME..."); a failure, said with WHAT, if it left none.
# shellcheck disable=SC2031 # the subshell's counts come in by file
run_add_counts() {
	local p=0 f=0 s=0 failed=() names=

	read -r p f s names <"$1" || {
		echo "FAIL  $2 left no counts"
		f=1
	}
	read -ra failed <<<"${names:-}"
	RUN_PASS=$((RUN_PASS + p))
	RUN_FAIL=$((RUN_FAIL + f))
	RUN_SKIP=$((RUN_SKIP + s))
	RUN_FAILED+=("${failed[@]}")
}

run_wait() {
	while [ "${#RUN_BG[@]}" -gt 0 ]; do
		run_reap
	done
}

run_summary() {
	[ ${#RUN_FAILED[@]} -gt 0 ] && printf 'failed: %s\n' "${RUN_FAILED[*]}"
	echo "$RUN_PASS passed, $RUN_FAIL failed, $RUN_SKIP skipped"
	[ "$RUN_FAIL" -eq 0 ] && [ $((RUN_PASS + RUN_SKIP)) -gt 0 ]
}
