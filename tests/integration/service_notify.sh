#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter as a Type=notify service, with a stand-in for systemd's
# notification socket (systemd is not PID 1 here): it says READY=1 with a
# STATUS= line once it serves, pings WATCHDOG=1 at half of WATCHDOG_USEC,
# reports a reload in STATUS=, and says STOPPING=1 on SIGTERM. A watchdog meant for another process (WATCHDOG_PID) is left
# alone, and without NOTIFY_SOCKET nothing is sent anywhere.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 2
SOCK=$RR_TMP/notify.sock
LOG=$RR_TMP/notify.log
: >"$LOG"
python3 $RR_LIB/notify_listen.py "$SOCK" "$LOG" &
RR_BG_PIDS+=($!)
for _ in $(seq 50); do [ -S "$SOCK" ] && break; sleep 0.1; done
[ -S "$SOCK" ] || die "the notification listener did not start"

# wait_for PATTERN SECONDS: until a line of the log matches.
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
wait_for() {
	local i
	for ((i = 0; i < $2 * 10; i++)); do
		grep -q -- "$1" "$LOG" && return 0
		sleep 0.1
	done
	return 1
}
count() { grep -c -- " $1\$" "$LOG"; }

say "== under a notification socket, watchdog every 1 s"
NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=1000000 rr_start main -i "$TB_IF_SRV" -q 2 \
	--control none || die "reqrouter did not start"
check "READY=1 once it serves" wait_for ' READY=1$' 3
check "STATUS= says what it serves" \
	grep -q " STATUS=serving 2 functions on $TB_IF_SRV, 2 queues x 1 worker$" "$LOG"
check "it logs the watchdog interval" grep -q 'systemd watchdog: every 0.5 s' "$RR_ERR"
check "the requests are answered" serves 20
w0=$(count WATCHDOG=1)
sleep 2.2
w1=$(count WATCHDOG=1)
check "WATCHDOG=1 about twice a second (+$((w1 - w0)) in 2.2 s)" \
	test $((w1 - w0)) -ge 3 -a $((w1 - w0)) -le 6
kill -HUP "$RR_PID"
check "a reload is reported in STATUS=" wait_for ' STATUS=reload: ' 3
check_eq "no STOPPING=1 while it serves" 0 "$(count STOPPING=1)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "STOPPING=1 on SIGTERM" wait_for ' STOPPING=1$' 2

say "== a drain keeps the watchdog fed (not ready, but alive)"
NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=1000000 rr_start drain -i "$TB_IF_SRV" -q 2 \
	--drain-on-term --control none || die "reqrouter did not start"
check "READY=1" wait_for ' READY=1$' 3
kill -TERM "$RR_PID" # with --drain-on-term: drains, exits after 2 s quiet
w0=$(count WATCHDOG=1)
sleep 1.6
w1=$(count WATCHDOG=1)
check "WATCHDOG=1 goes on while draining (+$((w1 - w0)) in 1.6 s)" \
	test $((w1 - w0)) -ge 2
rr_wait_exit 5
check_eq "the drain ends with exit 0" 0 "$RR_RC"

say "== a watchdog meant for another process"
: >"$LOG"
NOTIFY_SOCKET=$SOCK WATCHDOG_USEC=200000 WATCHDOG_PID=1 rr_start other \
	-i "$TB_IF_SRV" -q 1 --control none || die "reqrouter did not start"
check "READY=1 all the same" wait_for ' READY=1$' 3
sleep 1
check_eq "no WATCHDOG=1" 0 "$(count WATCHDOG=1)"
rr_kill_wait TERM 5

say "== not under systemd"
: >"$LOG"
rr_start plain -i "$TB_IF_SRV" -q 2 --control none || die "reqrouter did not start"
check "serves without a notification socket" serves 10
rr_kill_wait TERM 5
check_eq "exit 0" 0 "$RR_RC"
check_eq "nothing sent" 0 "$(grep -c . "$LOG")"
finish
