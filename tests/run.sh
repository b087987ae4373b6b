#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tests/run.sh [TIER...]: runs the test tiers named (lint, unit, bpf,
# integration; without a name, unit, bpf and integration: make test runs
# make lint, whose drift checks are the lint tier, first) and prints one
# closing line, "N passed, N failed, N skipped". A test is a script in
# tests/lint/ (the docs, man pages and help against the tables and --help
# they come from: a build, no privileges), an executable in
# $BUILD/tests/unit/ (cmocka unit tests) or $BUILD/tests/bpf/ (BPF
# program tests), or a script in tests/integration/ (a test bed), each run
# by tools/lib/runner.sh (a time limit each; 0 pass, 77 skip, else
# failure). With SAN_BUILD set (a build made with SAN=1), the unit tests
# and the integration tests in SAN_TESTS, of the tiers named, run a second
# time against it; with SAN_ONLY=1 too, only against it (make test-san).
# The integration tests run three at a time, each on a
# bed of its own, but for those in ALONE (below), which run one at a time
# after them.
set -u
cd "$(dirname "$0")/.." || exit 1
BUILD=${BUILD:-build}
export BUILD

LINT_LIMIT=${LINT_LIMIT:-120}
UNIT_LIMIT=${UNIT_LIMIT:-300}
INTEGRATION_LIMIT=${INTEGRATION_LIMIT:-600}
RUN_JOBS=${RUN_JOBS:-4}
source tools/lib/runner.sh

# The sanitizer pass runs reqrouter's own code under ASan and UBSan along
# the paths the tests drive, each path once: SAN_TESTS, one test a line,
# its name first, then the code it drives. Left out, with what runs their
# code instead:
# - packet_badinput, invoker_vlan, invoker_tx_csum: parsing and reply
#   building for malformed, tagged and offloaded frames, which the
#   fuzz_request target (ASan and UBSan, in the main pass) runs through
#   rr_serve() and rr_serve_partial() far harder; the ring handling
#   around them is invoker_requests'.
# - guard_abuse: --user is invoker_privileges', the allow-lists'
#   user-space side tcp_limits'; the rest is the XDP program's.
# - cell_ops: reload, deploy and threads N with cells are
#   reload_functions', module_deploy's and control_threads' (all on
#   the default isolation = cell).
# - cell_quarantine: quarantine and unquarantine are
#   cell_faults'; only quarantine_expire's timer is not run.
# - control_drain, control_stale, invoker_busy_poll, invoker_host_traffic:
#   a few lines of the main loop or of reqrouterctl each, or only the
#   XDP program.
# - tcp_pool: the pool's choices are tcp_limits' code paths at a larger
#   count (25 s more under the sanitizers for no new line).
SAN_TESTS=${SAN_TESTS:-"
	invoker_requests      the request path: 4 queues x 2 threads, IPv4/6
	invoker_cli_errors    option and config parsing, its error paths
	invoker_lifecycle     start, stop by signal, a stale or foreign program
	invoker_modes         -S, -N, -B, -p, -c and fewer queues than the NIC
	control_ctl           the control socket's commands, text and JSON
	control_clients       slow and over-long control clients
	control_starve        control clients refused, evicted, cut off by uid
	metrics_http_starve   HTTP connections followed, evicted, cut off
	control_threads       threads N under load: sockets made and torn down
	cell_faults           cells that crash or spin, restarts, quarantine
	reload_functions      50 reloads under load: states made and freed
	module_deploy         dlopen, deploy and remove under load
	kv_cells              memory shared between cells, kv.so
	invoker_privileges    --user and the capability drop, threads and cells
	invoker_faults        overload, links down and up, the interface gone
	tcp_functions         functions over TCP
	tcp_limits            TCP timeouts, connection limits, allow-lists
"}

# Integration tests whose checks need the machine to themselves: a load
# generator's rate (rl, invoker_coalesce, invoker_soak, control_threads,
# module_deploy: 20 000 requests/s and more, of which a share must be
# sent), latency windows of a few hundred milliseconds (tcp_limits,
# tcp_pool, sockperf), gathers' deadlines of 50 ms (gather: one of its checks
# missed beside two others, once in three runs), which worker a busy or
# slow worker's request goes to (steer), a flood's copies counted against
# a budget per second (gather_abuse), SCHED_FIFO workers
# (invoker_priority); or that take a whole CPU from the host
# (invoker_cpu_hotplug takes one offline) or a whole
# CPU from their neighbours (invoker_faults' flood, invoker_busy_poll's
# spin, control_starve's 40 clients connecting again and again while
# root's health must answer within 1 s; metrics_http_starve's /healthz
# within 1 s under drip-fed connections, missed once in 20 beside
# others; tools_bench_tier's max-rate load on both CPUs). Each runs alone, after the
# others, which run RUN_JOBS at a time (default 4; 1 runs every test
# alone), each on a bed of its own: they mostly wait (for replies, a
# metrics rewrite, a deadline), and nothing they check is upset by a
# neighbour.
ALONE=${ALONE-"
	control_starve control_threads gather gather_abuse invoker_busy_poll
	invoker_coalesce invoker_cpu_hotplug invoker_faults invoker_priority
	invoker_soak metrics_http_starve module_deploy rl rl_defaults sockperf
	steer tcp_limits tcp_pool tools_bench_tier
"}

# The longest of the tests run together (20-50 s each in a fresh root),
# started first so that the pass does not end with one of them running
# on its own while the other slots are idle; the rest follow by name.
FIRST=${FIRST-"
	doc_commands cell_faults service_sandbox tier_abuse spread canary
	guard_abuse dns_cookies invoker_lifecycle guard_ports_checksums
	dns_knot tier_bare_veth
"}

# Integration tests that build reqrouter again, each into a directory of
# its own, and touch neither the network nor a clock: in the main pass
# they run beside the unit and BPF program tests, which leave most of a
# CPU idle, and their lines come after those tests' (EARLY="" runs them
# with the other integration tests).
EARLY=${EARLY-"build_clang service_deb"}

# early_start BUILD-DIR: the EARLY tests in the background, their lines
# and counts kept for early_finish.
early_start() {
	(
		# Counted apart, in this subshell, and added by early_finish.
		# shellcheck disable=SC2030
		RUN_PASS=0 RUN_FAIL=0 RUN_SKIP=0 RUN_FAILED=()
		for t in $EARLY; do
			BUILD=$1 run_one "tests/integration/$t.sh" \
				"$INTEGRATION_LIMIT" bash "tests/integration/$t.sh"
		done
		echo "$RUN_PASS $RUN_FAIL $RUN_SKIP ${RUN_FAILED[*]}" \
			>"$RUN_LOGS/early.counts"
	) >"$RUN_LOGS/early.out" 2>&1 &
	EARLY_PID=$!
}

# early_finish: waits for the EARLY tests, prints their lines and adds
# their counts.
early_finish() {
	wait "$EARLY_PID"
	echo "== integration tests that build, beside the ones above"
	cat "$RUN_LOGS/early.out"
	run_add_counts "$RUN_LOGS/early.counts" "the early tests"
}

# run_pass BUILD-DIR LABEL TIERS: of TIERS, the unit and BPF program
# tests against BUILD-DIR. The main pass (no label) runs the EARLY tests
# beside them.
# shellcheck disable=SC2031 # EARLY's subshell counted apart
run_pass() {
	local build=$1 label=$2 tiers=$3 t tier early=
	[ -z "$label" ] && [ -n "$EARLY" ] && [[ $tiers == *" integration "* ]] &&
		early=1
	[ -n "$early" ] && early_start "$build"
	for tier in unit bpf; do
		[[ $tiers == *" $tier "* ]] || continue
		echo "== $tier tests ($build/tests/$tier)$label"
		if ! compgen -G "$build/tests/$tier/*" >/dev/null; then
			# Nothing to run is a failure that says why, not a count
			# of zero.
			RUN_FAIL=$((RUN_FAIL + 1))
			RUN_FAILED+=("$build/tests/$tier$label")
			printf 'FAIL  %-40s no tests: %s builds them\n' \
				"$build/tests/$tier$label" \
				"make ${label:+SAN=1 }tests-build${label:+-san}"
			continue
		fi
		for t in "$build/tests/$tier"/*; do
			{ [ -x "$t" ] && [ -f "$t" ]; } || continue
			BUILD=$build run_one "tests/$tier/${t##*/}$label" \
				"$UNIT_LIMIT" "$t"
		done
	done
	[ -n "$early" ] && early_finish
	return 0
}

# run_integration ALONE|TOGETHER BUILD-DIR LABEL TESTS: of the
# integration tests TESTS (names without .sh), those in ALONE one at a
# time, or the others RUN_JOBS at a time, against BUILD-DIR.
# shellcheck disable=SC2031 # EARLY's subshell counted apart
run_integration() {
	local how=$1 build=$2 label=$3 tests=$4 t kind
	for t in $tests; do
		[ -z "$label" ] && [[ " $EARLY " == *" $t "* ]] && continue
		kind=TOGETHER
		[[ " ${ALONE//[$'\t\n']/ } " == *" $t "* ]] && kind=ALONE
		[ "$kind" = "$how" ] || continue
		t=tests/integration/$t.sh
		if [ ! -f "$t" ]; then
			# A name in SAN_TESTS without its script: a failure, not a
			# silent gap in the pass.
			RUN_FAIL=$((RUN_FAIL + 1))
			RUN_FAILED+=("$t$label")
			printf 'FAIL  %-40s no such test\n' "$t$label"
			continue
		fi
		if [ "$how" = ALONE ] || [ "$RUN_JOBS" -le 1 ]; then
			BUILD=$build run_one "$t$label" "$INTEGRATION_LIMIT" bash "$t"
		else
			BUILD=$build run_bg "$t$label" "$INTEGRATION_LIMIT" bash "$t"
		fi
	done
}

tiers=" ${*:-unit bpf integration} "
for tier in $tiers; do
	case $tier in
	lint | unit | bpf | integration) ;;
	*)
		echo "tests/run.sh: no tier '$tier' (lint, unit, bpf, integration)" >&2
		exit 2
		;;
	esac
done
SAN_ONLY=${SAN_ONLY:-0}
if [ "$SAN_ONLY" = 1 ] && [ -z "${SAN_BUILD:-}" ]; then
	echo "tests/run.sh: SAN_ONLY=1 needs SAN_BUILD (a build made with SAN=1)" >&2
	exit 2
fi
if [[ $tiers == *" lint "* ]] && [ "$SAN_ONLY" != 1 ]; then
	echo "== drift checks (tests/lint)"
	for t in tests/lint/*.sh; do
		run_one "$t" "$LINT_LIMIT" bash "$t"
	done
fi
[ "$SAN_ONLY" = 1 ] || run_pass "$BUILD" "" "$tiers"
# The BPF program tests (tests/bpf/) stay out of the sanitizer pass: what
# they test is the XDP program, which no sanitizer sees, and their
# user-space side (xdp.c's set-up, hh.c's reading) runs in every
# reqrouter of the pass.
[ -n "${SAN_BUILD:-}" ] && run_pass "$SAN_BUILD" " [san]" "${tiers/ bpf / }"
if [[ $tiers == *" integration "* ]]; then
	all=$(
		for t in $FIRST; do echo "$t"; done
		cd tests/integration && for t in *.sh; do echo "${t%.sh}"; done
	)
	all=$(awk '!seen[$0]++' <<<"$all")
	# The first word of each line of SAN_TESTS is a test's name.
	san=$(awk 'NF { print $1 }' <<<"$SAN_TESTS")
	# Every name in ALONE must be a test's: a renamed test must not slip
	# in among the others unnoticed.
	for t in $ALONE; do
		[ -f "tests/integration/$t.sh" ] && continue
		RUN_FAIL=$((RUN_FAIL + 1))
		RUN_FAILED+=("ALONE:$t")
		printf 'FAIL  %-40s no such test\n' "ALONE names $t"
	done
	echo "== integration tests, $RUN_JOBS at a time (tests/integration)"
	[ "$SAN_ONLY" = 1 ] || run_integration TOGETHER "$BUILD" "" "$all"
	[ -n "${SAN_BUILD:-}" ] &&
		run_integration TOGETHER "$SAN_BUILD" " [san]" "$san"
	run_wait
	echo "== integration tests, one at a time (tests/integration)"
	[ "$SAN_ONLY" = 1 ] || run_integration ALONE "$BUILD" "" "$all"
	[ -n "${SAN_BUILD:-}" ] &&
		run_integration ALONE "$SAN_BUILD" " [san]" "$san"
fi

run_summary
