#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The work function and rrload --mix, as a user measuring reqrouter with
# requests of unequal cost would run them: reqrouter -q 1 -t 2 on the bare
# defaults (no XDP program on the veth peer) with [function work] enabled
# and max_us = 200, rrload in the client namespace.
#
# - Hand-made requests over IPv4 and IPv6: "60 TAG" comes back as
#   "60 NS TAG" with NS >= 60000 nanoseconds, "60" as "60 NS"; a request
#   over max_us and a payload that names no number get nothing, each
#   counted (work_refused, work_invalid, no_reply).
# - rrload --mix 90:6us,10:60us, open loop (2000/s, 2000 requests, at most
#   2 s) and closed loop: every request answered, none wrong, both classes
#   reported in the summary and the JSON, about 90/10, the long class's
#   p50 latency at least 60 us and the server's mean time spent at least
#   each class's microseconds; the server counted the microseconds spun.
# - rrload --mix over the bound: every request times out, none is called
#   wrong, and the server counts them as refused.
# - rrload --mix against echo, which answers no work reply: every reply
#   is wrong and rrload exits 1. Bad --mix specs are refused in one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

PORT=9010
MAX_US=200

# The bare defaults a user meets: no XDP program on the veth peer.
TB_PEER_XDP=0
rr_bed 1
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/reqrouter.conf
printf '[function work]\nenabled = yes\nmax_us = %s\n' $MAX_US >"$CONF"

rr_start main -i "$TB_IF_SRV" -q 1 -t 2 -c "$CONF" --metrics-file "$M" ||
	die "reqrouter with [function work] did not start"
check "start-up log says work is served on port $PORT" \
	grep -q "serving 'work' on UDP port $PORT" "$RR_ERR"
tb_wait_file "$M" 5 || die "no metrics file"

# events COUNTER: the work function's counter, summed over the workers.
events() {
	metric "$M" reqrouter_function_events_total 'function="work"' \
		"counter=\"$1\""
}
noreply() {
	metric "$M" reqrouter_dropped_packets_total 'reason="no_reply"' \
		"port=\"$PORT\""
}
# snapshot: the server's counters, once the metrics file has caught up.
snapshot() {
	rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
	REFUSED=$(events work_refused)
	INVALID=$(events work_invalid)
	BUSY=$(events work_busy_us)
	NOREPLY=$(noreply)
}
# mixrun NAME ARGS...: rrload --mix from the client namespace (at most
# 20 s), its stdout in $RR_TMP/NAME.out, JSON in $RR_TMP/NAME.json, exit
# status in MIX_RC.
mixrun() {
	local name=$1
	shift
	tb_cli timeout -k 2 20 "$BUILD/rrload" -s "$TB_IP4_SRV" -q \
		--json "$RR_TMP/$name.json" "$@" >"$RR_TMP/$name.out" \
		2>"$RR_TMP/$name.err"
	MIX_RC=$?
	sed 's/^/    /' "$RR_TMP/$name.out"
}
# shellcheck disable=SC2317 # called through check
in_range() { [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; }
# cls NAME I EXPR: EXPR over class I of NAME's JSON "mix", as c.
cls() { json_eval "(lambda c: $3)(d['mix'][$2])" "$RR_TMP/$1.json"; }

say "== hand-made requests (IPv4, IPv6)"
# probe ADDR: four requests, one reply or "none" a line.
probe() {
	tb_cli python3 -c '
import socket, sys
addr, port = sys.argv[1], int(sys.argv[2])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
# Generous where a reply is due (a loaded 2-core VM), short where not.
for req, wait in ((b"60 tag-1", 2), (b"60", 2), (b"201 over", 0.5), (b"abc", 0.5)):
    s.sendto(req, (addr, port))
    s.settimeout(wait)
    try:
        print(s.recv(2048).decode())
    except socket.timeout:
        print("none")' "$1" $PORT
}
snapshot
ref0=$REFUSED inv0=$INVALID nr0=$NOREPLY
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	mapfile -t out < <(probe "$addr")
	say "    $addr: ${out[*]}"
	if [[ ${out[0]} =~ ^60\ ([0-9]+)\ tag-1$ ]] &&
		[ "${BASH_REMATCH[1]}" -ge 60000 ]; then
		ok "$addr: '60 tag-1' gets '60 NS tag-1', NS >= 60000 (${out[0]})"
	else
		bad "$addr: '60 tag-1' got '${out[0]}'"
	fi
	if [[ ${out[1]} =~ ^60\ ([0-9]+)$ ]] && [ "${BASH_REMATCH[1]}" -ge 60000 ]; then
		ok "$addr: '60' gets '60 NS' (${out[1]})"
	else
		bad "$addr: '60' got '${out[1]}'"
	fi
	check_eq "$addr: a request over max_us = $MAX_US gets nothing" none "${out[2]}"
	check_eq "$addr: a payload that names no number gets nothing" none "${out[3]}"
done
snapshot
check_eq "the two requests over max_us counted as work_refused" 2 \
	$((REFUSED - ref0))
check_eq "the two payloads without a number counted as work_invalid" 2 \
	$((INVALID - inv0))
check_eq "all four counted as no_reply" 4 $((NOREPLY - nr0))

say "== rrload --mix 90:6us,10:60us, open loop, 2000/s"
busy0=$BUSY
mixrun open --mix 90:6us,10:60us -c 4 -r 2000 -n 2000 -d 2
check_eq "open loop: rrload exits 0" 0 "$MIX_RC"
rr_load_checks "$RR_TMP/open.json" 2000 "open loop: "
check_eq "open loop: two classes in the JSON, as given" "90:6 10:60" \
	"$(json_eval "' '.join('%d:%d' % (c['weight'], c['us']) for c in d['mix'])" "$RR_TMP/open.json")"
check "open loop: the summary has a line per class" \
	grep -q '^  class 90:6us: .* answered' "$RR_TMP/open.out"
check "open loop: ... with its latency" \
	grep -q '^    latency us: p50' "$RR_TMP/open.out"
check "open loop: ... the long class's too" \
	grep -q '^  class 10:60us: .* answered' "$RR_TMP/open.out"
check_eq "open loop: the classes' requests add up to those sent" 2000 \
	"$(json_eval "sum(c['sent'] for c in d['mix'])" "$RR_TMP/open.json")"
for i in 0 1; do
	check_eq "open loop: class $i: every request answered" True \
		"$(cls open $i "c['answered'] == c['sent'] and c['latency_us']['samples'] == c['sent']")"
done
long=$(cls open 1 "c['sent']")
check "open loop: about one request in ten in the long class ($long of 2000)" \
	in_range "${long:-0}" 100 300
check "open loop: the long class's p50 latency is at least 60 us ($(cls open 1 "c['latency_us']['p50']"))" \
	[ "$(cls open 1 "int(c['latency_us']['p50'] >= 60)")" = 1 ]
check "open loop: the short class's p50 is below the long one's" \
	[ "$(json_eval "int(d['mix'][0]['latency_us']['p50'] < d['mix'][1]['latency_us']['p50'])" "$RR_TMP/open.json")" = 1 ]
check "open loop: the server spent 6 us or more on a short request ($(cls open 0 "c['server_us_mean']") on average)" \
	[ "$(cls open 0 "int(6 <= c['server_us_mean'] < 60)")" = 1 ]
check "open loop: and 60 us or more on a long one ($(cls open 1 "c['server_us_mean']") on average)" \
	[ "$(cls open 1 "int(c['server_us_mean'] >= 60)")" = 1 ]
snapshot
short=$((2000 - ${long:-0}))
check "the server counted the microseconds spun ($((BUSY - busy0)) >= $((short * 6 + long * 60)))" \
	[ $((BUSY - busy0)) -ge $((short * 6 + long * 60)) ]

say "== rrload --mix, closed loop, 2 sockets with 4 requests out each"
mixrun closed --mix 90:6us,10:60us -c 2 -w 4 -n 1000 -d 2
check_eq "closed loop: rrload exits 0" 0 "$MIX_RC"
rr_load_checks "$RR_TMP/closed.json" 1000 "closed loop: "
check "closed loop: both classes answered" \
	[ "$(json_eval "int(all(c['answered'] > 0 for c in d['mix']))" "$RR_TMP/closed.json")" = 1 ]

say "== rrload --mix over the bound (max_us = $MAX_US)"
snapshot
ref0=$REFUSED
mixrun over --mix 1:$((MAX_US + 1))us -n 20 -r 100 --timeout 300
read -r sent ans wrong tmo < <(json_get "$RR_TMP/over.json" sent answered wrong timeouts)
check_eq "over the bound: 20 sent, none answered, none wrong, 20 timed out" \
	"20 0 0 20" "$sent $ans $wrong $tmo"
check_eq "over the bound: rrload exits 0 (a timeout is no wrong reply)" 0 "$MIX_RC"
snapshot
check_eq "over the bound: the server refused all 20 (work_refused)" 20 \
	$((REFUSED - ref0))

say "== rrload --mix against echo: no work replies"
mixrun echo -p 7 --mix 1:5us -n 50 -w 1
check_eq "against echo: rrload exits 1" 1 "$MIX_RC"
check_eq "against echo: every reply wrong" "50 0" \
	"$(json_get "$RR_TMP/echo.json" wrong answered)"

say "== without --mix, rrload's JSON has no mix"
mixrun plain -p 1232 -n 20
check_eq "reverse: rrload exits 0" 0 "$MIX_RC"
check_eq "no 'mix' in its JSON" False "$(json_eval "'mix' in d" "$RR_TMP/plain.json")"
check_eq "no class line in its summary" 0 "$(grep -c class "$RR_TMP/plain.out")"

say "== bad --mix specs: one line each, exit 2"
# usage WHAT ARGS...: rrload ARGS is refused in one line, exit 2.
usage() {
	local what=$1 rc
	shift
	"$BUILD/rrload" -s 198.18.0.1 "$@" >/dev/null 2>"$RR_TMP/usage.err"
	rc=$?
	if [ $rc = 2 ] && [ "$(wc -l <"$RR_TMP/usage.err")" = 1 ]; then
		ok "refuses $what: $(cat "$RR_TMP/usage.err")"
	else
		bad "$what: exit $rc, $(wc -l <"$RR_TMP/usage.err") lines"
	fi
}
usage "microseconds without 'us'" --mix 90:6
usage "a weight of 0" --mix 0:6us
usage "no weight" --mix 6us
usage "more than the work function's bound" --mix 1:100001us
usage "nine classes" --mix 1:1us,1:2us,1:3us,1:4us,1:5us,1:6us,1:7us,1:8us,1:9us
usage "the xdp engine" --mix 1:1us --engine xdp -i lo
usage "--payloads" --mix 1:1us --payloads /dev/null

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the exit summary lists work's counters" \
	grep -q '^function work: work_refused=' "$RR_OUT"

finish
