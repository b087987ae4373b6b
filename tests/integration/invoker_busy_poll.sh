#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# -B with preferred busy polling: reqrouter sets SO_PREFER_BUSY_POLL,
# SO_BUSY_POLL and SO_BUSY_POLL_BUDGET on every socket and the interface's
# napi_defer_hard_irqs and gro_flush_timeout, serves requests correctly,
# and puts the two sysfs values back to what they were (not to defaults)
# when it exits: after SIGTERM, after a start-up that fails once they were
# set, and under --user, which can no longer open them.
#
# Once requests arrive it asks the sockets for their NAPI ID; a kernel that
# gives them none (veth on 6.18) has nothing to busy-poll, and the deferred
# interrupts would only delay every packet by gro_flush_timeout, so
# reqrouter must say so, fall back to plain spinning and put the values back
# at once. Either outcome passes, as long as log and sysfs agree. Where
# the settings cannot be written at all, -B spins plainly from the start.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=4
OLD_DEFER=1     # not the defaults (0), so restoring is told from resetting
OLD_GRO=12345

rr_bed $QUEUES
knobs() {
	echo "$(tb_srv cat "/sys/class/net/$TB_IF_SRV/napi_defer_hard_irqs")" \
		"$(tb_srv cat "/sys/class/net/$TB_IF_SRV/gro_flush_timeout")"
}
tb_srv sh -c "echo $OLD_DEFER >/sys/class/net/$TB_IF_SRV/napi_defer_hard_irqs &&
	echo $OLD_GRO >/sys/class/net/$TB_IF_SRV/gro_flush_timeout" ||
	die "cannot set $TB_IF_SRV's NAPI settings"
check_eq "before: napi_defer_hard_irqs and gro_flush_timeout" \
	"$OLD_DEFER $OLD_GRO" "$(knobs)"

rr_start busy -i "$TB_IF_SRV" -B -q $QUEUES -t 1 ||
	die "reqrouter -B did not start"
sed -n '/busy/p' "$RR_ERR" | sed 's/^/    /'
check "-B: preferred busy polling set up (root may set every option)" \
	grep -qF "busy polling: preferred (SO_PREFER_BUSY_POLL, 20 us, budget 64; $TB_IF_SRV napi_defer_hard_irqs 2 (was $OLD_DEFER), gro_flush_timeout 200000 ns (was $OLD_GRO) until exit)" \
	"$RR_ERR"
check "-B: the workers say which busy polling runs" \
	grep -qE "workers started( as cells)? \(busy-polling, preferred; normal priority\)" "$RR_ERR"
# Before the first request nothing can have been checked.
check_eq "-B, before any request: the values reqrouter set" \
	"2 200000" "$(knobs)"

check "-B: every request got a correct reply" serves 500
# The main thread checks every 100 ms; give it 3 s on a loaded machine.
for ((i = 0; i < 30; i++)); do
	grep -q 'plain spinning after all' "$RR_ERR" && break
	sleep 0.1
done
if grep -q 'plain spinning after all' "$RR_ERR"; then
	say "    $(grep -F 'after all' "$RR_ERR")"
	check_eq "no NAPI for the sockets: the old values are back at once" \
		"$OLD_DEFER $OLD_GRO" "$(knobs)"
else
	say "    the sockets have a NAPI ID: preferred busy polling stays"
	check_eq "NAPI IDs found: the values stay while reqrouter runs" \
		"2 200000" "$(knobs)"
fi
check "-B: every request got a correct reply, after the check" serves 500
check_eq "-B: one busy polling line at start" 1 \
	"$(grep -c 'busy polling: preferred' "$RR_ERR")"
check "-B: at most one fallback line" \
	test "$(grep -c 'after all' "$RR_ERR")" -le 1
rr_kill_wait TERM 3
check_eq "-B: SIGTERM: exit status" 0 "$RR_RC"
check_eq "-B, after exit: the old values" "$OLD_DEFER $OLD_GRO" "$(knobs)"
check "-B: no warning about putting them back" \
	eval "! grep -q 'cannot put' '$RR_ERR'"

# A start-up that fails after the values were set: CPU 1000 does not
# exist, so pinning the first worker fails.
rr_run badcpu -i "$TB_IF_SRV" -B -q $QUEUES --cpus 1000
check_eq "-B --cpus 1000: exit status" 1 "$RR_RC"
check "-B --cpus 1000: the values had been set" \
	grep -q 'busy polling: preferred' "$RR_ERR"
check_eq "-B --cpus 1000, after the failed start: the old values" \
	"$OLD_DEFER $OLD_GRO" "$(knobs)"

# --user drops the right to open the sysfs files before the workers start;
# the files opened at set-up still take the old values back.
if getent passwd nobody >/dev/null; then
	rr_start user -i "$TB_IF_SRV" -B -q $QUEUES --user nobody ||
		die "reqrouter -B --user nobody did not start"
	check "-B --user nobody: every request got a correct reply" serves 200
	rr_kill_wait TERM 3
	check_eq "-B --user nobody: SIGTERM: exit status" 0 "$RR_RC"
	check_eq "-B --user nobody, after exit: the old values" \
		"$OLD_DEFER $OLD_GRO" "$(knobs)"
	check "-B --user nobody: no warning about putting them back" \
		eval "! grep -q 'cannot put' '$RR_ERR'"
else
	say "no user 'nobody': --user case left out"
fi

# Where the interface settings cannot be written (here: /sys mounted
# read-only for reqrouter alone), -B says so in one line and spins as
# before, with nothing changed.
RR_OUT=$RR_TMP/rosys.out
RR_ERR=$RR_TMP/rosys.err
tb_srv_bg unshare -m sh -c 'mount --bind /sys /sys &&
	mount -o remount,bind,ro /sys && exec "$@"' sh \
	"$RR" -i "$TB_IF_SRV" -B -q $QUEUES >"$RR_OUT" 2>"$RR_ERR"
RR_PID=$TB_PID
for ((i = 0; i < 150; i++)); do
	grep -q 'ready on' "$RR_ERR" 2>/dev/null && break
	kill -0 "$RR_PID" 2>/dev/null || break
	sleep 0.1
done
if grep -q 'ready on' "$RR_ERR"; then
	sed -n '/busy/p' "$RR_ERR" | sed 's/^/    /'
	check "read-only /sys: one line, plain spinning, and why" \
		test "$(grep -c 'busy polling' "$RR_ERR")" = 1 -a \
		"$(grep -c 'busy polling: plain spinning on the rings (napi_defer_hard_irqs refused: Read-only file system)' "$RR_ERR")" = 1
	check "read-only /sys: the workers spin plainly" \
		grep -qE "workers started( as cells)? \(busy-polling, plain spinning; normal priority\)" \
		"$RR_ERR"
	check_eq "read-only /sys: nothing changed" "$OLD_DEFER $OLD_GRO" \
		"$(knobs)"
	check "read-only /sys: every request got a correct reply" serves 200
	rr_kill_wait TERM 3
	check_eq "read-only /sys: SIGTERM: exit status" 0 "$RR_RC"
else
	sed 's/^/    /' "$RR_ERR"
	rr_kill_wait KILL 3
	bad "reqrouter -B under a read-only /sys did not start"
fi

# Without -B nothing is touched.
rr_start sleepy -i "$TB_IF_SRV" -q $QUEUES || die "reqrouter did not start"
check_eq "without -B: the values are left alone" \
	"$OLD_DEFER $OLD_GRO" "$(knobs)"
check "without -B: no busy polling line" \
	eval "! grep -q 'busy polling' '$RR_ERR'"
rr_kill_wait TERM 3
finish
