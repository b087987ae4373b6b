#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A quarantine is held once, in the function's slot, and every operation
# that rewrites the function's port in the XDP program keeps it: a change
# of threads, remove, unquarantine of a removed function. With
# quarantine_action = pass a quarantined or removed port goes to the
# kernel (no socket there: ICMP port unreachable, "<refused>"); with drop
# the XDP program drops its requests ("<none>"). Meanwhile reverse, on the
# same workers (faulty with own_cells = no: a change of threads is what
# rewrites the port here, and that needs one cell group), answers
# throughout. On the bare defaults a user meets: no
# XDP program on the client's veth. With quarantine_expire the quarantine
# lifts itself after that many seconds (60 by default, which the log of the
# runs without it says), and the log says so; quarantined again soon after
# that, the function stays out twice as long, until an operator lifts it.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
PORT=7700
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"
rr_faults_are_signals

export TB_PEER_XDP=0
rr_bed $QUEUES
# faulty alone: each other test module would be a cell group more.
MODS=$RR_TMP/mods
mkdir -p "$MODS"
cp "$TMODS/faulty.so" "$MODS/"
SOCK=$RR_TMP/ctl.sock

ask() { cli_ask 0.5 $PORT "$1"; }
ctl() { "$CTL" -s "$SOCK" "$@"; }
# port_is WANT: faulty's reply to "hello" is WANT within 2 s of retries
# (a cell on another queue may be the one restarting).
# shellcheck disable=SC2317 # called through check
port_is() {
	local i r
	for ((i = 0; i < 4; i++)); do
		r=$(ask hello)
		[ "$r" = "$1" ] && return 0
	done
	echo "    faulty's reply: $r, not $1"
	return 1
}
# quarantined N: faulty has been quarantined N times (logged).
# shellcheck disable=SC2317 # called through wait_for and check
quarantined() {
	[ "$(grep -c "function 'faulty' quarantined" "$RR_ERR")" -ge "$1" ]
}
# quarantine N WHAT: crash faulty and wait for its Nth quarantine.
quarantine() {
	ask crash >/dev/null
	wait_for 5 quarantined "$1"
	check "$2: a crash quarantines faulty (quarantine #$1)" quarantined "$1"
}
reverse_answers() {
	check_eq "$1: reverse still answers" hello "$(cli_ask 1 1232 olleh)"
}

for action in pass drop; do
	if [ $action = pass ]; then shut="<refused>"; else shut="<none>"; fi
	printf '[reqrouter]\nisolation = cell\n\n[function faulty]\nown_cells = no\nquarantine_faults = 1\nquarantine_action = %s\n' \
		$action >"$RR_TMP/$action.conf"
	rr_start $action -i "$TB_IF_SRV" -q $QUEUES -c "$RR_TMP/$action.conf" \
		--functions-dir "$MODS" --control "$SOCK" ||
		die "reqrouter with quarantine_action = $action did not start"
	check "$action: faulty answers" port_is hello

	quarantine 1 $action
	check "$action: with no quarantine_expire set, it comes back in 60 s by itself (the default)" \
		grep -q "it comes back in 60 s (quarantine_expire), or" "$RR_ERR"
	check "$action: the quarantined port is shut ($shut)" port_is "$shut"
	check "$action: threads 2" ctl threads 2
	check_eq "$action: two cells per queue" $((QUEUES * 2)) \
		"$(pgrep -c -P "$RR_PID")"
	check "$action: still shut after threads 2" port_is "$shut"
	ctl status >"$RR_TMP/status.txt"
	check "$action: status still marks it quarantined" \
		grep -Eq '^faulty .*\(quarantined\)' "$RR_TMP/status.txt"
	reverse_answers "$action, threads 2"
	check "$action: unquarantine" ctl unquarantine faulty
	check "$action: faulty answers again" port_is hello

	quarantine 2 "$action, again"
	check "$action: remove faulty (quarantined)" ctl remove faulty
	check "$action: a removed port passes to the kernel" port_is "<refused>"
	out=$(ctl unquarantine faulty)
	check_eq "$action: unquarantine of the removed function: exit 0" 0 "$?"
	check "$action: ... says it stays removed" \
		grep -q "out of quarantine, but removed: port $PORT stays with the kernel" <<<"$out"
	check "$action: unquarantine does not bring a removed function back" \
		port_is "<refused>"
	check "$action: threads 1" ctl threads 1
	check "$action: still removed after threads 1" port_is "<refused>"
	reverse_answers "$action, threads 1"

	rr_kill_wait TERM 10
	check_eq "$action: SIGTERM: exit 0" 0 "$RR_RC"
done

# quarantine_expire: the quarantine lifts itself, and says so.
printf '[reqrouter]\nisolation = cell\n\n[function faulty]\nquarantine_faults = 1\nquarantine_expire = 2\n' \
	>"$RR_TMP/expire.conf"
rr_start expire -i "$TB_IF_SRV" -q $QUEUES -c "$RR_TMP/expire.conf" \
	--functions-dir "$MODS" --control "$SOCK" ||
	die "reqrouter with quarantine_expire = 2 did not start"
check "expire: faulty answers" port_is hello
quarantine 1 expire
check "expire: the log says when it will come back" \
	grep -q "it comes back in 2 s (quarantine_expire), or with reqrouterctl unquarantine faulty" "$RR_ERR"
check "expire: the quarantined port is shut" port_is "<none>"
# shellcheck disable=SC2317 # called through wait_for
lifted() { grep -q "function 'faulty' is out of quarantine after 2 s (quarantine_expire)" "$RR_ERR"; }
wait_for 4 lifted
check "expire: lifted by itself after 2 s, and said so" lifted
check "expire: faulty answers again" port_is hello
# Quarantined again within twice its last quarantine of its release: it is
# still faulty, and stays out twice as long.
quarantine 2 expire
check "expire: quarantined again soon: 4 s, doubled once, and the log says why" \
	grep -q "it comes back in 4 s (quarantine_expire, doubled 1 time: it faulted again soon after its last release), or with reqrouterctl unquarantine faulty" "$RR_ERR"
# shellcheck disable=SC2317 # called through wait_for
lifted4() { grep -q "function 'faulty' is out of quarantine after 4 s (quarantine_expire)" "$RR_ERR"; }
check "expire: still shut 2.5 s on" sh -c "sleep 2.5; ! grep -q 'out of quarantine after 4 s' '$RR_ERR'"
wait_for 3 lifted4
check "expire: lifted by itself after 4 s" lifted4
check "expire: faulty answers again after the doubled quarantine" port_is hello
# By hand: the doubling starts over.
quarantine 3 expire
ctl unquarantine faulty >/dev/null
quarantine 4 expire
check "expire: after an unquarantine by hand, back to 2 s" \
	test "$(grep -c 'it comes back in 2 s (quarantine_expire), or' "$RR_ERR")" -ge 2
reverse_answers "expire"
rr_kill_wait TERM 10
check_eq "expire: SIGTERM: exit 0" 0 "$RR_RC"

finish
