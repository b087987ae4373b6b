#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Taking an instance out of service without losing a request, and serving
# an address the host owns elsewhere (an anycast service address on lo):
# - reqrouterctl drain: health fails at once ("draining"), every request
#   that still arrives is answered, and the instance exits with status 0
#   once none has come for the quiet period; reqrouterctl waits for that.
# - --drain-on-term: SIGTERM drains the same way; a second SIGTERM stops.
# - a drain whose requests never stop ends at its timeout, status 0.
# - a request to 203.0.113.10 (on the server's lo, routed to it by the
#   client) is answered from 203.0.113.10.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
ANYCAST=203.0.113.10

rr_bed 1
SOCK=/run/reqrouter/$TB_IF_SRV.sock

# load SECONDS RATE NAME: rrload in the background, JSON in $RR_TMP/NAME.json.
load() {
	tb_cli_bg "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232 -c 8 -r "$2" -d "$1" \
		--timeout 1000 -q --json "$RR_TMP/$3.json"
	LOAD=$TB_PID
	RR_BG_PIDS+=("$LOAD")
}
# lost NAME: "sent answered wrong timeouts" of a finished load.
result() {
	json_get "$RR_TMP/$1.json" sent answered wrong timeouts
}

# The service address first: on lo in the server, routed by the client.
tb_srv ip addr add "$ANYCAST/32" dev lo
tb_cli ip route add "$ANYCAST/32" via "$TB_IP4_SRV"
rr_start main -i "$TB_IF_SRV" -q 1 || die "reqrouter did not start"
out=$(tb_cli python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(1)
s.sendto(b"anycast", (sys.argv[1], 1232))
data, addr = s.recvfrom(2048)
print(data.decode(), addr[0])' "$ANYCAST" 2>&1)
check_eq "a request to the service address is answered from it" \
	"tsacyna $ANYCAST" "$out"

# reqrouterctl drain under load.
load 4 10000 drain
sleep 1
"$CTL" -s "$SOCK" --quiet 1 --wait 20 drain >"$RR_TMP/drain.out" 2>&1 &
DRAIN=$!
sleep 0.3
out=$("$CTL" --control "$SOCK" health)
check_eq "health while draining: exit 1, says why" "1 not ready: draining" "$? $out"
check "still running while requests come" kill -0 "$RR_PID"
wait "$LOAD"
start=$(date +%s%N)
wait "$DRAIN"
rc=$?
check_eq "reqrouterctl drain: exit 0" 0 "$rc"
check "... and says so" grep -q "drained and stopped" "$RR_TMP/drain.out"
rr_wait_exit 5
check_eq "the instance exited with status 0" 0 "$RR_RC"
read -r sent ans wrong tmo < <(result drain)
say "    sent $sent answered $ans wrong $wrong timeouts $tmo"
check "requests were sent during the drain ($sent)" [ "$sent" -ge 30000 ]
check_eq "drain: every request answered" "$sent" "$ans"
check_eq "drain: no wrong reply, no timeout" "0 0" "$wrong $tmo"
check "it logged why it stopped" grep -q "drained: no request for 1000 ms" "$RR_ERR"

# SIGTERM drains with --drain-on-term.
rr_start term -i "$TB_IF_SRV" -q 1 --drain-on-term ||
	die "reqrouter --drain-on-term did not start"
load 3 10000 term
sleep 1
kill -TERM "$RR_PID"
sleep 0.3
out=$("$CTL" --control "$SOCK" health)
check_eq "after SIGTERM: draining" "1 not ready: draining" "$? $out"
wait "$LOAD"
rr_wait_exit 6
check_eq "--drain-on-term: exit 0 after the requests stopped" 0 "$RR_RC"
read -r sent ans wrong tmo < <(result term)
check_eq "SIGTERM drain: every request answered ($sent)" "$sent" "$ans"
check "it logged the drain" grep -q "SIGTERM: draining" "$RR_ERR"

rr_start term2 -i "$TB_IF_SRV" -q 1 --drain-on-term || die "restart failed"
load 5 5000 term2
sleep 0.5
kill -TERM "$RR_PID"
sleep 0.3
kill -TERM "$RR_PID"
rr_wait_exit 3
check_eq "a second SIGTERM stops at once: exit 0" 0 "$RR_RC"
# Its load, unanswered from here on, is not what is checked.
kill -INT "$LOAD" 2>/dev/null
wait "$LOAD"

# A drain whose requests never stop ends at its timeout.
rr_start timeout -i "$TB_IF_SRV" -q 1 || die "restart failed"
load 6 5000 endless
sleep 0.5
start=$(date +%s)
"$CTL" -s "$SOCK" --quiet 1 --wait 2 drain >/dev/null
check_eq "drain with a timeout: exit 0" 0 $?
took=$(($(date +%s) - start))
check "it ended at its timeout (${took}s, requests still coming)" \
	test "$took" -ge 2 -a "$took" -le 4
rr_wait_exit 3
check_eq "exit 0 at the timeout" 0 "$RR_RC"
check "it logged the timeout" grep -q "drain timeout (2000 ms)" "$RR_ERR"
check "the requests were still coming when it ended" kill -0 "$LOAD"
kill -INT "$LOAD" 2>/dev/null
wait "$LOAD"

out=$("$CTL" -s "$SOCK" --quiet 5 --wait 2 drain 2>&1)
check_eq "--quiet above --wait: exit 2" 2 $?

finish
