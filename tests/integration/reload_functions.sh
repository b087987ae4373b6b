#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Functions with settings and state (function API 2), end to end, with the
# bundled kv function: reqrouter -q 2 -t 2 loads its table from the
# config at start-up; rrload checks every reply against the same table
# (--fn-config). Then, with rrload sending at a steady rate, 50 SIGHUP
# reloads each build a new state and retire the old one: no request may be
# lost or answered wrongly. A changed table is served after a reload; a
# broken one is refused in one line while the old state keeps serving.
# The function's own counters appear in the metrics, a request it chooses
# not to answer is counted as no_reply, and a bad setting stops start-up
# with one line naming the file, the line and the function.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
THREADS=2
RELOADS=50
PORT=7379

rr_bed $QUEUES
M=$RR_TMP/metrics.prom
TABLE=$RR_TMP/kv.txt
CONF=$RR_TMP/reqrouter.conf
# rrload checks against a frozen copy while the served table changes.
GOOD_TABLE=$RR_TMP/kv-good.txt
GOOD_CONF=$RR_TMP/good.conf
PAYLOADS=$RR_TMP/keys.txt

for ((i = 0; i < 200; i++)); do
	echo "key$i value of key $i"
done >"$TABLE"
cp "$TABLE" "$GOOD_TABLE"
printf '[function kv]\ntable = %s\n' "$TABLE" >"$CONF"
printf '[function kv]\ntable = %s\n' "$GOOD_TABLE" >"$GOOD_CONF"
# Keys in the table, and some that are not (an empty reply).
{
	for ((i = 0; i < 200; i += 3)); do echo "key$i"; done
	echo "missing"
	echo "0x6b6579" # "key", in hex
} >"$PAYLOADS"

# rrload ARGS...: a socket-engine run against kv, checked with the good
# table; JSON summary in $RR_TMP/load.json.
rrload() {
	tb_cli "$BUILD/rrload" -s "$TB_IP4_SRV" -p $PORT -f kv \
		--fn-config "$GOOD_CONF" --payloads "$PAYLOADS" -q \
		--json "$RR_TMP/load.json" "$@"
}
json() { json_get "$RR_TMP/load.json" "$1"; }
# reloads: how many reloads reqrouter has reported so far.
reloads() {
	grep -c 'reload: 1 function re-initialised' "$RR_ERR"
}
# hup_and_wait N: send SIGHUP, wait (5 s at most) until N reloads are done.
hup_and_wait() {
	local i
	kill -HUP "$RR_PID"
	for ((i = 0; i < 100; i++)); do
		[ "$(reloads)" -ge "$1" ] && return 0
		sleep 0.05
	done
	return 1
}
# ask KEY: kv's reply to KEY from an ordinary socket ("<none>" if none).
ask() { cli_ask 0.5 $PORT "$1"; }

rr_start main -i "$TB_IF_SRV" -q $QUEUES -t $THREADS -c "$CONF" \
	--metrics-file "$M" ||
	die "reqrouter with [function kv] did not start"
check "start-up log says kv is served on port $PORT" \
	grep -q "serving 'kv' on UDP port $PORT" "$RR_ERR"
check_eq "a key is answered with its value" "value of key 7" "$(ask key7)"
check_eq "a missing key gets an empty reply" "<empty>" "$(ask nokey)"

rrload -c 8 -w 4 -n 4000 --timeout 1000
check_eq "closed loop: 4000 requests answered" 4000 "$(json answered)"
check_eq "closed loop: no wrong reply" 0 "$(json wrong)"

# 50 reloads under open-loop load. Each waits for the one before to be
# reported, so no SIGHUP is merged with another.
say "open loop at 20000/s while $RELOADS reloads happen"
tb_cli_bg "$BUILD/rrload" -s "$TB_IP4_SRV" -p $PORT -f kv \
	--fn-config "$GOOD_CONF" --payloads "$PAYLOADS" -q -c 16 -r 20000 \
	-d 11 --timeout 1000 --json "$RR_TMP/reload.json"
LOAD_PID=$TB_PID
RR_BG_PIDS+=("$LOAD_PID")
sleep 1
done_ok=0
for ((r = 1; r <= RELOADS; r++)); do
	hup_and_wait "$r" && done_ok=$((done_ok + 1))
	sleep 0.05
done
check_eq "$RELOADS reloads reported, each as it happened" $RELOADS "$done_ok"
check "the load ran through every reload" kill -0 "$LOAD_PID"
wait "$LOAD_PID"
rc=$?
cp "$RR_TMP/reload.json" "$RR_TMP/load.json" 2>/dev/null
check_eq "rrload during reloads exits 0" 0 "$rc"
sent=$(json sent)
say "    sent $sent, answered $(json answered), timeouts $(json timeouts), wrong $(json wrong)"
check "during reloads: at least 180000 requests sent" [ "$sent" -ge 180000 ]
check_eq "during reloads: every request answered" "$sent" "$(json answered)"
check_eq "during reloads: no timeout" 0 "$(json timeouts)"
check_eq "during reloads: no wrong reply" 0 "$(json wrong)"
check_eq "no reload failed" 0 "$(grep -c 'reload:.*old state keeps' "$RR_ERR")"

# A changed table is what the next reload serves.
sed -i 's/^key7 .*/key7 changed by the reload/' "$TABLE"
check_eq "before the reload: the old value" "value of key 7" "$(ask key7)"
hup_and_wait $((RELOADS + 1)) || bad "reload $((RELOADS + 1)) not reported"
check_eq "after the reload: the new value" "changed by the reload" "$(ask key7)"

# A broken table: one line, and the state before keeps serving.
echo "key7 twice" >>"$TABLE"
kill -HUP "$RR_PID"
wait_for 5 grep -q 'old state keeps serving' "$RR_ERR"
line=$(grep 'old state keeps serving' "$RR_ERR")
say "    $line"
check_eq "a failing reload is one line" 1 "$(grep -c 'old state keeps serving' "$RR_ERR")"
check "it names the table's line and the function" \
	grep -q "function kv: .*:201: key 'key7' given twice" <<<"$line"
check_eq "the state before the failed reload still answers" \
	"changed by the reload" "$(ask key7)"
check "reqrouter is still running" kill -0 "$RR_PID"

# The function chooses not to answer an empty request.
tb_cli python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.sendto(b"", (sys.argv[1], int(sys.argv[2])))' "$TB_IP4_SRV" $PORT
check_eq "an empty request is counted as no_reply" 1 \
	"$(wait_metric "$M" 5 reqrouter_dropped_packets_total 'reason="no_reply"' -- 1)"
check_eq "no function error" 0 \
	"$(metric "$M" reqrouter_dropped_packets_total 'reason="function_error"')"

# Its own counters: every key sent that is in the table is a hit.
hits=$(metric "$M" reqrouter_function_events_total 'function="kv"' 'counter="kv_hits"')
misses=$(metric "$M" reqrouter_function_events_total 'function="kv"' 'counter="kv_misses"')
say "    kv_hits $hits, kv_misses $misses"
check "metrics: kv_hits counted (> 200000)" [ "$hits" -gt 200000 ]
check "metrics: kv_misses counted" [ "$misses" -gt 0 ]
check "metrics: kv_hits is a counter of reqrouter_function_events_total" \
	grep -q '^reqrouter_function_events_total{port="[0-9]*",function="kv",version="[^"]*",counter="kv_hits"} ' "$M"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the exit summary lists kv's counters" \
	grep -q '^function kv: kv_hits=' "$RR_OUT"

# A bad setting stops start-up, in one line naming file, line, function.
printf '[function kv]\ntable = %s\ncolour = red\n' "$GOOD_TABLE" >"$CONF"
rr_run bad -i "$TB_IF_SRV" -q 1 -c "$CONF"
check_eq "unknown kv key: exit 1" 1 "$RR_RC"
check "unknown kv key: one line with file:line and the function" \
	grep -q "$CONF:3: function kv: unknown key 'colour'" "$RR_ERR"
if xdp_on_srv; then
	bad "unknown kv key: an XDP program was left attached"
else
	ok "unknown kv key: nothing left attached"
fi

finish
