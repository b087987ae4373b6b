#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The installed configuration (configs/service.conf, which make install
# puts at /etc/reqrouter/reqrouter.conf) serves echo and reverse only to
# loopback and the documentation and benchmarking ranges. reqrouter as the
# unit starts it (-i IF -c FILE) on the bare 2-queue bed (nothing on the
# client's end, as on a real host's neighbour):
#  - the bed's IPv4 client (198.18.0.2, in 198.18.0.0/15) is answered,
#    echo and reverse, every request;
#  - its IPv6 client (fd00:7272::2, not in any of the ranges) is refused,
#    and so is an IPv4 source outside them (100.64.0.2), all counted as
#    source_not_allowed;
#  - the log says both functions are served to an allow-list;
#  - with -t 2 (two workers a queue, steered least_loaded, the default)
#    the same file answers every allowed request, both workers of a
#    queue taking their share, and still refuses the others.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults: the file decides
RR_CACHE=yes
rr_bed 2
M=$RR_TMP/metrics.prom
GP=$RR_LIB/guard_probe.py
OUTSIDE4=100.64.0.2 # shared address space: in none of the allowed ranges

tb_cli ip addr add $OUTSIDE4/32 dev "$TB_IF_CLI" || die "cannot add $OUTSIDE4"

rr_start main -i "$TB_IF_SRV" -c configs/service.conf --metrics-file "$M" ||
	die "reqrouter -c configs/service.conf did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check "log: the workers are raised only while their requests wait (worker_priority = auto)" \
	grep -q "normal priority, realtime (SCHED_FIFO 1) while requests wait over 1 ms" "$RR_ERR"
for fn in echo:7 reverse:1232; do
	check "log: ${fn%:*} is served to its allow-list only" \
		grep -q "serving '${fn%:*}' on UDP port ${fn#*:} to the sources in its allow-list" "$RR_ERR"
	# What a newcomer on a real host needs to see: why nobody is
	# answered, and where to change it.
	check "log: ${fn%:*}'s allow-list is named at start, with where to change it" \
		grep -q "'${fn%:*}' answers only 127.0.0.0/8, .*: see allow in \[function ${fn%:*}\] of configs/service.conf" "$RR_ERR"
done

check "IPv4 client $TB_IP4_CLI: 200 requests to echo and reverse answered" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 200 -s 16 -q
refused=0
for fn in echo:7 reverse:1232; do
	check "IPv6 client $TB_IP6_CLI: ${fn%:*} refused" tb_cli python3 "$GP" \
		ask "$TB_IP6_SRV" "${fn#*:}" --func "${fn%:*}" -n 20 \
		--timeout 0.3 --expect none
	check "IPv4 source $OUTSIDE4: ${fn%:*} refused" tb_cli python3 "$GP" \
		ask "$TB_IP4_SRV" "${fn#*:}" --func "${fn%:*}" -n 20 \
		--bind $OUTSIDE4 --timeout 0.3 --expect none
	refused=$((refused + 40))
done
wait_metric "$M" 5 reqrouter_xdp_packets_total 'verdict="drop"' \
	'reason="source_not_allowed"' -- $refused >/dev/null
sleep 1.1 # one more metrics write: nothing more is counted
check_eq "metrics: every refused request counted as source_not_allowed" \
	$refused "$(metric "$M" reqrouter_xdp_packets_total 'verdict="drop"' \
		'reason="source_not_allowed"')"
check_eq "metrics: every allowed one answered" 200 \
	"$(metric "$M" reqrouter_tx_packets_total)"
check "IPv4 client, after the refusals: still answered" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 50 -s 16 -q

rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"

say "--- the same file, -t 2: two workers a queue, least_loaded between them"
rm -f "$M"
rr_start t2 -i "$TB_IF_SRV" -c configs/service.conf -t 2 \
	--metrics-file "$M" --metrics-detail socket ||
	die "reqrouter -c configs/service.conf -t 2 did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check "IPv4 client: 400 requests over 32 sockets answered" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 400 -s 32 -q
check "IPv4 source $OUTSIDE4: reverse still refused" tb_cli python3 "$GP" \
	ask "$TB_IP4_SRV" 1232 --func reverse -n 20 --bind $OUTSIDE4 \
	--timeout 0.3 --expect none
wait_metric "$M" 5 reqrouter_tx_packets_total -- 400 >/dev/null
# took Q T: requests worker T of queue Q took, echo and reverse.
took() {
	echo $(($(metric "$M" reqrouter_rx_packets_total 'port="7"' \
		"queue=\"$1\"" "thread=\"$2\"") + $(metric "$M" \
		reqrouter_rx_packets_total 'port="1232"' "queue=\"$1\"" \
		"thread=\"$2\"")))
}
total=0
for q in 0 1; do
	t0=$(took $q 0) t1=$(took $q 1)
	say "    queue $q: worker 0 took $t0, worker 1 took $t1"
	total=$((total + t0 + t1))
	[ $((t0 + t1)) = 0 ] && continue
	check "queue $q: both of its workers took requests ($t0 and $t1)" \
		[ "$t0" -gt 0 -a "$t1" -gt 0 ]
done
check_eq "every answered request was taken by one of the four workers" \
	400 "$total"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
