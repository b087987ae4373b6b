#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Real requests end to end: reqrouter -q 4 -t 2 serves reverse (1232) and
# echo (7) on a 4-queue veth; a python client in the other namespace sends
# thousands of requests (payloads 0-1400 bytes, random content) from 64
# ordinary UDP sockets and checks every reply itself. Ordinary sockets mean
# the client's kernel verified each reply's UDP checksum; the client's
# InCsumErrors must not grow. Done with the client's TX checksum offload on
# (the server sees partial checksums) and off, over IPv4 and IPv6. Then the
# metrics must show all 16 (queue, thread, slot) sockets busy, tx == rx on
# each, and no drops anywhere.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=4
THREADS=2
N4=2000 # IPv4 requests per checksum mode
N6=300  # IPv6 requests per checksum mode
SOCKS=64

rr_bed $QUEUES
command -v ethtool >/dev/null || die "ethtool is needed to switch TX checksumming"
M=$RR_TMP/metrics.prom

# The assertion on InCsumErrors only means something if the client's kernel
# really verifies checksums of what arrives on its veth: show that it does.
rr_csum_probe

rr_start main -i "$TB_IF_SRV" -q $QUEUES -t $THREADS --metrics-file "$M" \
	--metrics-detail socket ||
	die "reqrouter -i $TB_IF_SRV -q $QUEUES -t $THREADS did not start"
say "reqrouter running (pid $RR_PID): $(grep -c . "$RR_ERR") log lines"

sent=0
for mode in on off; do
	tb_cli ethtool -K "$TB_IF_CLI" tx "$mode" >/dev/null 2>&1
	state=$(tb_cli ethtool -k "$TB_IF_CLI" | awk '/^tx-checksumming:/ { print $2 }')
	check_eq "client tx-checksumming set" "$mode" "$state"

	c4=$(udp_csum_errors)
	c6=$(udp6_csum_errors)
	say "IPv4, tx checksumming $mode: $N4 requests, $SOCKS sockets, ports 1232+7"
	check "IPv4 tx $mode: every request got a correct reply" \
		tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
		-n $N4 -s $SOCKS --min-size 0 --max-size 1400 --deadline 60
	say "IPv6, tx checksumming $mode: $N6 requests, $SOCKS sockets"
	check "IPv6 tx $mode: every request got a correct reply" \
		tb_cli python3 $RR_LIB/udpclient.py "$TB_IP6_SRV" 1232:reverse,7:echo \
		-n $N6 -s $SOCKS --min-size 0 --max-size 1400 --deadline 60
	sent=$((sent + N4 + N6))
	check_eq "IPv4 tx $mode: client Udp InCsumErrors unchanged" "$c4" "$(udp_csum_errors)"
	check_eq "IPv6 tx $mode: client Udp6InCsumErrors unchanged" "$c6" "$(udp6_csum_errors)"
done

# Payloads up to the MTU (1500 - 28 for IPv4, 1500 - 48 for IPv6): the
# largest requests there are must be answered too.
check "IPv4 payloads 1400-1472 (up to the MTU): correct replies" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 200 -s $SOCKS --min-size 1400 --max-size 1472 -q
check "IPv6 payloads 1400-1452 (up to the MTU): correct replies" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP6_SRV" 1232:reverse,7:echo \
	-n 200 -s $SOCKS --min-size 1400 --max-size 1452 -q
sent=$((sent + 400))

# The metrics file is rewritten every second: wait for the last requests.
rx=$(wait_metric "$M" 5 reqrouter_rx_packets_total -- $sent)
check_eq "metrics: requests received (rx total)" "$sent" "$rx"
tx=$(wait_metric "$M" 5 reqrouter_tx_packets_total -- $sent)
check_eq "metrics: replies sent (tx total)" "$sent" "$tx"
check_eq "metrics: XDP redirected every request" "$sent" \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="redirect"')"

# Per socket: join rx and tx by label set.
per_sock=$(awk '
	/^reqrouter_(rx|tx)_packets_total\{/ {
		split($1, a, "{"); lab = a[2]
		if (a[1] ~ /rx/) rx[lab] = $2; else tx[lab] = $2
	}
	END { for (l in rx) print "{" l, rx[l], tx[l] }' "$M" | sort)
say "per socket (labels rx tx):"
printf '%s\n' "$per_sock" | sed 's/^/    /'
want=$((QUEUES * THREADS * 2))
check_eq "metrics: number of (queue, thread, slot) sockets" "$want" \
	"$(printf '%s\n' "$per_sock" | grep -c .)"
check_eq "metrics: sockets that received requests (rx > 0)" "$want" \
	"$(printf '%s\n' "$per_sock" | awk '$2 > 0' | grep -c .)"
check_eq "metrics: sockets with tx != rx" 0 \
	"$(printf '%s\n' "$per_sock" | awk '$2 != $3' | grep -c .)"
for q in $(seq 0 $((QUEUES - 1))); do
	for port in 1232 7; do
		for t in $(seq 0 $((THREADS - 1))); do
			n=$(printf '%s\n' "$per_sock" |
				grep -F "port=\"$port\"" | grep -F "queue=\"$q\"" |
				grep -cF "thread=\"$t\"")
			[ "$n" = 1 ] || bad "metrics: no line for queue $q port $port thread $t"
		done
	done
done
for m in reqrouter_dropped_packets_total reqrouter_xsk_rx_dropped_total \
	reqrouter_xsk_rx_ring_full_total reqrouter_xsk_rx_invalid_descs_total \
	reqrouter_xsk_tx_invalid_descs_total reqrouter_kick_errors_total; do
	if grep -qE "^${m}[{ ]" "$M"; then
		check_eq "metrics: $m" 0 "$(metric "$M" "$m")"
	else
		bad "metrics: $m missing from $M"
	fi
done

rr_kill_wait TERM 3
check_eq "SIGTERM: exit status" 0 "$RR_RC"
check "summary: 'in user space: $sent requests, $sent replies, 0 dropped'" \
	grep -q "^in user space: $sent requests, $sent replies, 0 dropped" "$RR_OUT"
check "no XDP program left on $TB_IF_SRV" eval '! xdp_on_srv'
finish
