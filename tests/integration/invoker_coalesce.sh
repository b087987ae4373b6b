#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# coalesce_us. Off by default, said nowhere. Set, the start-up line and
# status say it, and under 50 k requests/s (rrload's XDP engine, every
# reply checked) the worker takes requests in rounds rather than one per
# wake-up: it is woken (switched to) less than half as often per answer
# as without the setting, every request answered. At 1000 requests/s it
# is not used: each request wakes the worker once, as without it. With
# busy polling it says it has no effect; past its range it is refused in
# one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
# The bare defaults a user meets: no XDP program on the veth peer (rrload's
# XDP engine brings its own to the client's end when it runs).
TB_PEER_XDP=0
rr_bed 1
SOCK=$RR_TMP/ctl.sock

# switches: voluntary context switches of the worker (its cell) so far.
switches() {
	local c
	for c in $(pgrep -P "$RR_PID"); do
		[ "$(cat /proc/"$c"/comm 2>/dev/null)" = "rr-cell 0/0" ] || continue
		awk '/^voluntary_ctxt_switches/ { print $2 }' /proc/"$c"/status
		return
	done
	echo 0
}
status_coalesce() {
	"$CTL" --control "$SOCK" --json status |
		python3 -c 'import json, sys; print(json.load(sys.stdin)["coalesce_us"])'
}

# load NAME RATE SECONDS ENGINE: rrload at RATE against reverse, its
# summary checked (every request answered), then the worker's switches
# per answer in PER (two decimals).
load() {
	local json=$RR_TMP/$1.json s0 s1 eng=()
	[ "$4" = xdp ] && eng=(--engine xdp -i "$TB_IF_CLI")
	s0=$(switches)
	tb_cli timeout 30 "$BUILD/rrload" "${eng[@]}" -s "$TB_IP4_SRV" -f reverse \
		-r "$2" -d "$3" -q --json "$json" >"$RR_TMP/$1.out" 2>&1
	s1=$(switches)
	rr_load_checks "$json" $(($2 * $3 * 9 / 10)) "$1: "
	PER=$(python3 -c "import json; d = json.load(open('$json')); print('%.2f' % (($s1 - $s0) / max(d['answered'], 1)))")
	say "    $1: $((s1 - s0)) switches, $PER per answer"
}

say "--- the default"
rr_start plain -i "$TB_IF_SRV" -q 1 -t 1 --control "$SOCK" ||
	die "reqrouter did not start"
check "the start-up line says no coalescing" \
	grep -qF "1 worker started as cells (sleeping in poll(); " "$RR_ERR"
check_eq "status: coalesce_us 0" 0 "$(status_coalesce)"
check "reverse is served in user space" \
	grep -q "serving 'reverse' on UDP port 1232, in user space" "$RR_ERR"
load plain-fast 50000 3 xdp
PLAIN_FAST=$PER
load plain-slow 1000 2 sock
PLAIN_SLOW=$PER
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "--- coalesce_us = 100"
printf '[reqrouter]\ncoalesce_us = 100\n' >"$RR_TMP/co.conf"
rr_start co -i "$TB_IF_SRV" -q 1 -t 1 -c "$RR_TMP/co.conf" --control "$SOCK" ||
	die "reqrouter did not start"
check "the start-up line says it" \
	grep -qF "1 worker started as cells (sleeping in poll(), coalescing 100 us; " "$RR_ERR"
check_eq "status: coalesce_us 100" 100 "$(status_coalesce)"
load co-fast 50000 3 xdp
check "50 k/s: under 0.5 wake-ups per answer ($PER)" \
	python3 -c "import sys; sys.exit(not $PER < 0.5)"
check "50 k/s: less than half as many as without it ($PER against $PLAIN_FAST)" \
	python3 -c "import sys; sys.exit(not $PER < $PLAIN_FAST / 2)"
load co-slow 1000 2 sock
check "1 k/s: not used, a wake-up per request as without it ($PER against $PLAIN_SLOW)" \
	python3 -c "import sys; sys.exit(not (0.8 <= $PER <= $PLAIN_SLOW * 1.25 + 0.1))"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "--- with -B"
rr_start busy -i "$TB_IF_SRV" -q 1 -t 1 -B --coalesce-us 100 ||
	die "reqrouter -B did not start"
check "it says coalesce_us has no effect" \
	grep -qF "coalesce_us = 100: no effect with busy_poll" "$RR_ERR"
check "the start-up line says no coalescing" \
	eval "! grep -q 'coalescing' '$RR_ERR'"
rr_kill_wait TERM 5

say "--- out of range"
rr_run range -i "$TB_IF_SRV" --coalesce-us 5000
check_eq "exit 2" 2 "$RR_RC"
check_eq "one line that names the setting and its range" 1 \
	"$(grep -c 'coalesce-us.*0-1000\|coalesce-us.*1000' "$RR_TMP/range.err")"
say "    $(cat "$RR_TMP/range.err")"

finish
