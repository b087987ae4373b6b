#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A concatenation on a two-queue interface (issue 26): a target's reply
# comes in on whichever RX queue its sender picked, not always the one
# of the worker that asked. The XDP program passes such a reply to the
# kernel (pass/gather_other_queue), which gives it to that worker's
# gather socket; the worker reads it from there. On the bare veth
# (TB_PEER_XDP=0), default isolation (cells), -q 2, fanout concatenating
# eight echo targets (python responders, lib/sg_responder.py):
#  - twelve requests, from sockets of their own (so they land on both
#    queues), are each answered with all eight bodies, "8/8";
#  - some replies did cross queues (gather_other_queue moved), and none
#    was lost;
#  - a datagram sent to a worker's gather port from the host itself,
#    with a sound header but not from a target, is not taken as a part.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
rr_bed 2
M=$RR_TMP/metrics.prom
SOCK=$RR_TMP/ctl.sock
CONF=$RR_TMP/gather.conf
RESP_LOG=$RR_TMP/responders.log
NET=198.18.0
PORT=9014

targets=()
for ((i = 101; i <= 108; i++)); do
	tb_cli ip addr add "$NET.$i/24" dev "$TB_IF_CLI" ||
		die "cannot add $NET.$i to the client end"
	targets+=("$NET.$i=echo")
done
sg_responders "$RESP_LOG" 60 "${targets[@]}"

cat >"$CONF" <<EOF2
[group eight]
targets = $NET.101-$NET.108:7
[function fanout]
group = eight
reduce = concat
gather_deadline_us = 1000000
EOF2
rr_start gather_queues -i "$TB_IF_SRV" -q 2 -c "$CONF" --metrics-file "$M" \
	--control "$SOCK" ||
	die "reqrouter with fanout on two queues did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check_eq "one cell per queue" 2 "$(pgrep -c -P "$RR_PID")"

whole=0
for ((i = 0; i < 12; i++)); do
	reply=$(cli_ask 3 $PORT "part$i")
	if [ "$(grep -c "^part$i$" <<<"$reply")" = 8 ] &&
		[ "$(tail -n 1 <<<"$reply")" = 8/8 ]; then
		whole=$((whole + 1))
	else
		say "    request $i: $(tr '\n' '|' <<<"$reply")"
	fi
done
check_eq "twelve concatenations over eight echoes, each whole (8/8)" 12 \
	$whole
rr_metrics_fresh "$M"
crossed=$(metric "$M" reqrouter_xdp_packets_total 'verdict="pass"' \
	'reason="gather_other_queue"')
check "some replies came in on the other worker's queue ($crossed)" \
	test "${crossed:-0}" -gt 0
check_eq "... none was missed" 0 \
	"$(metric "$M" reqrouter_gather_targets_missed_total 'function="fanout"')"

# A stranger on the host, to a gather port: loopback skips XDP, so only
# the worker's own checks stand between it and a gather's result.
ports=$(tb_srv ss -Hnul | awk '$4 ~ /^\*:|^\[::\]:/ { sub(/.*:/, "", $4); print $4 }' |
	sort -u)
say "    gather ports: $(tr '\n' ' ' <<<"$ports")"
# Keep a gather open (a silent ninth target is not asked: the deadline
# is what we wait on), send it a stranger's "part", then see the result.
cat >"$CONF" <<EOF2
[group eight]
targets = $NET.101-$NET.108:7, $NET.109:7
[function fanout]
group = eight
reduce = concat
gather_deadline_us = 1000000
EOF2
"$BUILD/reqrouterctl" --control "$SOCK" reload >/dev/null 2>&1 ||
	bad "reload with a ninth, silent target"
tb_cli_bg python3 tools/lib/ask.py --reply --timeout 3 "$TB_IP4_SRV" $PORT \
	s1 >"$RR_TMP/stranger.reply" 2>&1
ASK_PID=$TB_PID
sleep 0.1
for p in $ports; do
	for g in $(seq 0 127) $(seq 1024 1151); do
		# header: magic, gather, gen (any of the first few), target 8
		for gen in $(seq 1 32); do
			printf 'rrSG%08x%08x00080000fake' "$g" "$gen"
		done
	done | tb_srv python3 -c '
import socket, sys
port = int(sys.argv[1])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
data = sys.stdin.read()
rec = 4 + 8 + 8 + 8 + 4
for i in range(0, len(data), rec):
    r = data[i:i + rec]
    msg = r[:4].encode() + bytes.fromhex(r[4:28]) + r[28:].encode()
    s.sendto(msg, ("127.0.0.1", port))
' "$p"
done
wait "$ASK_PID"
reply=$(cat "$RR_TMP/stranger.reply")
check "the gather's result has none of the stranger's parts" \
	test "$(grep -c '^fake$' <<<"$reply")" = 0
check_eq "... and misses the silent target alone" "8/9 missed 8" \
	"$(tail -n 1 <<<"$reply")"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
kill -TERM "$RESP_PID"
wait "$RESP_PID"
RR_BG_PIDS=()
finish
