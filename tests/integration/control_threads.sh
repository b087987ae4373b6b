#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Workers per queue changed while serving (reqrouterctl threads N): on a
# 4-queue bed under open-loop load from 64 sockets, 20 steps up and down
# between 1 and 4 threads per queue lose no request and give no wrong
# reply; threads added get their share of the requests; at rest no frame
# is left with a worker or on a ring; bad values are refused in one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
QUEUES=4
STEPS=(2 4 1 3 2 4 3 1 4 2 1 2 3 4 1 3 4 2 3 1)

rr_bed $QUEUES
SOCK=/run/reqrouter/$TB_IF_SRV.sock
# The counters as reqrouter has them 0.2 s after they are asked for
# (rr_metrics_scrape), not at the metrics file's next rewrite.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom

rr_start main -i "$TB_IF_SRV" -q $QUEUES -t 1 --metrics-listen "$LISTEN" \
	--metrics-detail socket ||
	die "reqrouter -q $QUEUES -t 1 did not start"

tb_cli_bg "$BUILD/rrload" -s "$TB_IP4_SRV" -p 1232,7 -c 64 -r 20000 -d 12 \
	-l 1-1400 --timeout 1000 -q --json "$RR_TMP/load.json"
LOAD=$TB_PID
RR_BG_PIDS+=("$LOAD")
sleep 0.5
done_ok=0
for n in "${STEPS[@]}"; do
	if out=$("$CTL" --control "$SOCK" threads "$n"); then
		done_ok=$((done_ok + 1))
	else
		say "    threads $n: $out"
	fi
	sleep 0.3
done
check_eq "${#STEPS[@]} steps, each accepted" ${#STEPS[@]} "$done_ok"
check "the load ran through every step" kill -0 "$LOAD"
check_eq "status shows the last count" 1 \
	"$("$CTL" --control "$SOCK" --json status | json_get - threads)"
wait "$LOAD"
check_eq "rrload: exit 0" 0 $?
rr_load_checks "$RR_TMP/load.json" 200000

# Every thread there ever was got requests on every queue.
rr_metrics_scrape "$LISTEN" "$M" || bad "GET /metrics failed"
for t in 1 2 3; do
	rx=$(metric "$M" reqrouter_rx_packets_total "thread=\"$t\"")
	check "thread $t served requests ($rx)" [ "$rx" -gt 0 ]
done
"$CTL" --control "$SOCK" --json stats >"$RR_TMP/stats.json"
check_eq "at rest: no frame with a worker or on a ring" 0 \
	"$(rr_umem_held "$RR_TMP/stats.json")"
check "requests still answered with 1 thread" serves 100

for bad in 0 17 many; do
	out=$("$CTL" --control "$SOCK" threads "$bad" 2>&1)
	check_eq "threads $bad: exit 1, one line" "1 1" "$? $(wc -l <<<"$out")"
done
check "up again to 4 after the refusals" "$CTL" --control "$SOCK" threads 4
check "requests answered with 4 threads" serves 100
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

finish
