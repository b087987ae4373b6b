#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A CPU a worker is pinned to goes offline while it serves: the kernel
# moves the worker to the CPUs left and forgets its pinning. reqrouter
# says so once, keeps answering, and pins the worker to its CPU again
# when the CPU is back. On the 1-queue bed with 2 workers (CPUs 0 and 1,
# cells, the defaults): CPU 1 off and on again, the trap puts it back
# whatever happens. Skipped where CPU 1 cannot be taken offline (one CPU,
# no hotplug, a container). Runs alone: the whole host loses a CPU.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CPU=1
ONLINE=/sys/devices/system/cpu/cpu$CPU/online
if ! { [ -w "$ONLINE" ] && echo 1 >"$ONLINE"; } 2>/dev/null; then
	skip "CPU $CPU cannot be taken offline here (no $ONLINE to write)"
fi
[ "$(nproc --all)" -ge 2 ] || skip "one CPU: none to take offline"

TB_PEER_XDP=0
rr_bed 1
# shellcheck disable=SC2317 # the trap calls it
cpu_back() { echo 1 >"$ONLINE" 2>/dev/null; }
trap 'cpu_back; rr_cleanup' EXIT
trap 'cpu_back; rr_cleanup; exit 130' INT TERM

rr_start main -i "$TB_IF_SRV" -q 1 -t 2 --cpus 0,1 ||
	die "reqrouter -q 1 -t 2 --cpus 0,1 did not start"
# pinned_list: the CPU lists of the workers' cells, sorted: "0 1".
pinned_list() {
	for p in $(pgrep -P "$RR_PID" '^rr-cell'); do
		awk '/^Cpus_allowed_list:/ { print $2 }' "/proc/$p/status"
	done | sort | tr '\n' ' ' | sed 's/ $//'
}
check_eq "two cells, pinned to CPU 0 and CPU 1" "0 1" "$(pinned_list)"
# shellcheck disable=SC2317 # called through check
answers() {
	tb_cli python3 "$RR_LIB/udpclient.py" "$TB_IP4_SRV" 1232:reverse,7:echo \
		-n 200 -s 16 --deadline 20 -q
}
check "requests answered" answers

echo 0 >"$ONLINE" || die "cannot take CPU $CPU offline"
# shellcheck disable=SC2317 # called through wait_for
said_off() { grep -q "CPU $CPU is offline: the kernel moved worker 0/1 off it" "$RR_ERR"; }
wait_for 5 said_off
check "CPU $CPU offline: said once, naming the worker" \
	test "$(grep -c "CPU $CPU is offline" "$RR_ERR")" = 1
check "CPU $CPU offline: requests still answered" answers
check "reqrouter still runs" kill -0 "$RR_PID"

cpu_back
# shellcheck disable=SC2317 # called through wait_for
said_back() { grep -q "CPU $CPU is back: worker 0/1 is pinned to it again" "$RR_ERR"; }
wait_for 5 said_back
check "CPU $CPU back: the worker pinned to it again, and said so" said_back
check_eq "both cells pinned as at start" "0 1" "$(pinned_list)"
check "requests answered" answers

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
