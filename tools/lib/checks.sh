# SPDX-License-Identifier: GPL-2.0
# shellcheck shell=bash
#
# One pass/fail vocabulary for the integration tests, the scale tests and
# the tools that check what they measure (tools/soak): a check that fails
# is counted and the script goes on, so one run reports every problem;
# finish is the script's last word. Exit status 0 is a pass, 77 a skip
# (the script says why), 1 a failure, as tests/run.sh expects.
#
#   say TEXT...             one line of output
#   ok TEXT / bad TEXT      a passed / failed check
#   check TEXT CMD...       ok if CMD succeeds, else bad
#   check_eq TEXT WANT GOT  ok if GOT is WANT, else bad saying both
#   skip TEXT               exit 77, saying why
#   die TEXT                a failed check, then finish
#   finish                  exit 1 if any check failed, else 0
#   wait_for SECONDS CMD... poll CMD every 0.1 s until it succeeds
#
# The counts are in CHK_CHECKS and CHK_FAILS.

CHK_CHECKS=0
CHK_FAILS=0

say() { printf '%s\n' "$*"; }
ok() {
	CHK_CHECKS=$((CHK_CHECKS + 1))
	printf 'ok    %s\n' "$*"
}
bad() {
	CHK_CHECKS=$((CHK_CHECKS + 1))
	CHK_FAILS=$((CHK_FAILS + 1))
	printf 'FAIL  %s\n' "$*"
}
# check DESCRIPTION CMD...: run CMD, ok if it succeeds.
check() {
	local what=$1
	shift
	if "$@"; then ok "$what"; else bad "$what"; fi
}
# check_eq DESCRIPTION EXPECTED ACTUAL
check_eq() {
	if [ "$2" = "$3" ]; then
		ok "$1 ($3)"
	else
		bad "$1: expected '$2', got '$3'"
	fi
}
skip() {
	echo "SKIP: $*"
	exit 77
}
die() {
	bad "$*"
	finish
}

# finish: the script's last word; exit 1 if any check failed.
finish() {
	echo "---"
	if [ "$CHK_FAILS" -gt 0 ]; then
		echo "$CHK_FAILS of $CHK_CHECKS checks failed"
		exit 1
	fi
	echo "all $CHK_CHECKS checks passed"
	exit 0
}

# wait_for SECONDS CMD...: run CMD every 0.1 s until it succeeds, for at
# most SECONDS; the status of the last try.
wait_for() {
	local limit=$1 i
	shift
	for ((i = 0; i < limit * 10; i++)); do
		"$@" && return 0
		sleep 0.1
	done
	"$@"
}
