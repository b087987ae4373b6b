#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter takes only the UDP ports it has functions for; everything else
# on the interface must reach the server's kernel as before. While it runs:
# ping over IPv4 and IPv6, TCP transfers, and UDP to a port without a
# function (a kernel echo server on 5000) all work, and meanwhile requests
# to 1232 and 7 are answered by reqrouter, not by kernel sockets that sit
# on those very ports (they would answer "KERNEL:..." and count what they
# get), and its start-up lines warn of those two. The XDP counters must
# show the other traffic passed.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

UDP_PORT=5000
TCP_PORT=5001
PINGS=5

rr_bed 4
M=$RR_TMP/metrics.prom

# Kernel servers first, so reqrouter starts next to live sockets.
tb_srv_bg python3 $RR_LIB/hostnet.py udp-echo $UDP_PORT --ready "$RR_TMP/udp.ready"
RR_BG_PIDS+=("$TB_PID")
tb_srv_bg python3 $RR_LIB/hostnet.py tcp-echo $TCP_PORT --ready "$RR_TMP/tcp.ready"
RR_BG_PIDS+=("$TB_PID")
tb_srv_bg python3 $RR_LIB/hostnet.py udp-echo 1232,7 --prefix KERNEL: \
	--log "$RR_TMP/decoy.count" --ready "$RR_TMP/decoy.ready"
RR_BG_PIDS+=("$TB_PID")
for f in udp tcp decoy; do
	tb_wait_file "$RR_TMP/$f.ready" 10 || die "the $f server did not start"
done

# Without reqrouter the kernel decoy answers 1232: proves the check below
# can tell the two apart.
check "before reqrouter: the kernel socket on 1232 answers (decoy works)" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:any -n 1 -s 1 -q
decoy0=$(cat "$RR_TMP/decoy.count")
check_eq "decoy counted the request" 1 "$decoy0"

rr_start main -i "$TB_IF_SRV" -q 4 -t 2 --metrics-file "$M" ||
	die "reqrouter did not start"
tb_wait_file "$M" 5 || die "no metrics file $M"
# The kernel sockets on 1232 and 7 lose those ports' datagrams on this
# interface: reqrouter says so at start, once for each, and for no other.
for p in 1232 7; do
	check_eq "start-up warns that a socket of the host holds UDP port $p" 1 \
		"$(grep -c "UDP port $p of '.*' is bound by a socket of this host" "$RR_ERR")"
done
check_eq "and warns of no other port" 2 "$(grep -c 'is bound by a socket of this host' "$RR_ERR")"
sleep 1.1 # a fresh write, after the start-up's own traffic
pass_nf0=$(metric "$M" reqrouter_xdp_packets_total 'verdict="pass"' 'reason="no_function"')
pass_nu0=$(metric "$M" reqrouter_xdp_packets_total 'verdict="pass"' 'reason="not_udp"')

# Requests to the functions run in the background the whole time.
tb_cli_bg python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse,7:echo \
	-n 3000 -s 64 --rate 750 --deadline 60 >"$RR_TMP/fn4.out" 2>&1
fn4=$TB_PID
RR_BG_PIDS+=("$fn4")
tb_cli_bg python3 $RR_LIB/udpclient.py "$TB_IP6_SRV" 1232:reverse,7:echo \
	-n 1000 -s 64 --rate 250 --deadline 60 >"$RR_TMP/fn6.out" 2>&1
fn6=$TB_PID
RR_BG_PIDS+=("$fn6")

for ip in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	out=$(tb_cli ping -c $PINGS -i 0.2 -W 2 "$ip" 2>&1)
	loss=$(printf '%s\n' "$out" | grep -o '[0-9.]*% packet loss')
	check_eq "ping $ip" "0% packet loss" "$loss"
done
for ip in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	check "TCP to [$ip]:$TCP_PORT: 3 connections echo 200 kB each" \
		tb_cli python3 $RR_LIB/hostnet.py tcp-client "$ip" $TCP_PORT \
		--conns 3 --bytes 200000
	check "UDP to [$ip]:$UDP_PORT (no function): kernel echo answers 300 requests" \
		tb_cli python3 $RR_LIB/udpclient.py "$ip" $UDP_PORT:echo \
		-n 300 -s 16 --max-size 1400 -q
done

for p in $fn4 $fn6; do
	wait "$p"
	rc=$?
	[ "$p" = "$fn4" ] && f=fn4 || f=fn6
	sed 's/^/    /' "$RR_TMP/$f.out"
	check_eq "meanwhile: requests to 1232/7 ($f) all answered correctly" 0 "$rc"
done
check_eq "kernel sockets on 1232/7 got nothing while reqrouter ran" \
	"$decoy0" "$(cat "$RR_TMP/decoy.count")"

want=4000
check_eq "metrics: reqrouter received the 1232/7 requests" $want \
	"$(wait_metric "$M" 5 reqrouter_rx_packets_total -- $want)"
nf=$(($(wait_metric "$M" 5 reqrouter_xdp_packets_total 'verdict="pass"' \
	'reason="no_function"' -- $((pass_nf0 + 600))) - pass_nf0))
nu=$(($(metric "$M" reqrouter_xdp_packets_total 'verdict="pass"' \
	'reason="not_udp"') - pass_nu0))
# 600 UDP requests to 5000; pings and TCP: at least 2 x PINGS echo requests
# and, per connection, the handshake plus ~140 data segments.
check "metrics: XDP passed the UDP-$UDP_PORT requests (pass/no_function +$nf >= 600)" \
	test "$nf" -ge 600
check "metrics: XDP passed ping and TCP (pass/not_udp +$nu >= $((2 * PINGS + 6 * 20)))" \
	test "$nu" -ge $((2 * PINGS + 6 * 20))
say "XDP verdicts:"
metric_lines "$M" reqrouter_xdp_packets_total | awk '$2 > 0' | sed 's/^/    /'

rr_kill_wait TERM 3
check_eq "SIGTERM: exit status" 0 "$RR_RC"
check "after reqrouter: the kernel socket on 1232 answers again" \
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:any -n 1 -s 1 -q
finish
