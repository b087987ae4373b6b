#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The ways to run reqrouter besides the default, each with real requests:
# -S (generic XDP) and -N (native), -B (busy polling), -p (a subset of the
# functions: the other ports stay with the kernel), -c (a config file that
# moves a function to another port and switches one off) and -q 2 on a
# 4-queue veth (requests landing on the unserved queues go to the kernel,
# and the XDP counters must still account for them).
#
# Kernel sockets answering "KERNEL:" + payload sit on the function ports the
# whole time, so every reply says whether reqrouter or the kernel sent it.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 4
M=$RR_TMP/metrics.prom

tb_srv_bg python3 $RR_LIB/hostnet.py udp-echo 1232,7,1300 --prefix KERNEL: \
	--log "$RR_TMP/decoy.count" --ready "$RR_TMP/decoy.ready"
RR_BG_PIDS+=("$TB_PID")
tb_wait_file "$RR_TMP/decoy.ready" 10 || die "the kernel decoy did not start"
decoy() { cat "$RR_TMP/decoy.count"; }

xdp_mode() { # xdp, xdpgeneric or nothing
	ip -n "$TB_NS_SRV" link show dev "$TB_IF_SRV" |
		grep -oE '(^|[ ])xdp(generic|drv|offload)?( |$)' | tr -d ' ' | head -n 1
}

# serve ADDR PORTS N: N requests from 64 sockets, all answered by reqrouter.
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
serve() {
	tb_cli python3 "$RR_LIB/udpclient.py" "$1" "$2" -n "$3" -s 64 -q \
		>"$RR_TMP/serve.out" 2>&1
	local rc=$?
	sed 's/^/    /' "$RR_TMP/serve.out"
	return "$rc"
}

stop() { # label
	rr_kill_wait TERM 5
	check_eq "$1: SIGTERM exit status" 0 "$RR_RC"
	[ "$RR_RC" = running ] && rr_kill_wait KILL 2
	check "$1: no XDP program left" eval '! xdp_on_srv'
}

for m in S:xdpgeneric N:xdp; do
	flag=-${m%%:*}
	want=${m#*:}
	say "== $flag"
	d0=$(decoy)
	if rr_start "mode$flag" -i "$TB_IF_SRV" "$flag" -q 4; then
		check_eq "$flag: attach mode on $TB_IF_SRV" "$want" "$(xdp_mode)"
		check "$flag: 500 IPv4 requests answered by reqrouter" \
			serve "$TB_IP4_SRV" 1232:reverse,7:echo 500
		check "$flag: 200 IPv6 requests answered by reqrouter" \
			serve "$TB_IP6_SRV" 1232:reverse,7:echo 200
		check_eq "$flag: the kernel sockets got none of them" "$d0" "$(decoy)"
		stop "$flag"
	else
		bad "$flag: reqrouter did not start"
	fi
done

say "== -B (busy polling), one worker per queue"
d0=$(decoy)
if rr_start busy -i "$TB_IF_SRV" -B -q 4 -t 1; then
	check "-B: busy polling is what it says it does" grep -q 'busy' "$RR_ERR"
	check "-B: 500 requests answered by reqrouter" \
		serve "$TB_IP4_SRV" 1232:reverse,7:echo 500
	check_eq "-B: the kernel sockets got none of them" "$d0" "$(decoy)"
	stop "-B"
else
	bad "-B: reqrouter did not start"
fi

say "== -p 1232: echo's port 7 stays with the kernel"
d0=$(decoy)
if rr_start only1232 -i "$TB_IF_SRV" -q 4 -p 1232 --metrics-file "$M"; then
	check "-p 1232: 300 requests to 1232 answered by reqrouter" \
		serve "$TB_IP4_SRV" 1232:reverse 300
	check_eq "-p 1232: none reached the kernel" "$d0" "$(decoy)"
	check "-p 1232: 100 requests to 7 answered by the kernel's socket" \
		tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 7:any -n 100 -s 16 -q
	check_eq "-p 1232: the kernel socket counted them" $((d0 + 100)) "$(decoy)"
	tb_wait_file "$M" 5
	check_eq "-p 1232: no socket for port 7 in the metrics" 0 \
		"$(grep -c 'port="7"' "$M")"
	check_eq "-p 1232: XDP passed the port-7 requests (pass/no_function)" 100 \
		"$(wait_metric "$M" 5 reqrouter_xdp_packets_total \
			'reason="no_function"' -- 100)"
	stop "-p 1232"
else
	bad "-p 1232: reqrouter did not start"
fi
rm -f "$M"

say "== -c FILE: reverse moved to 1300, echo switched off"
cat >"$RR_TMP/moved.conf" <<EOF
[reqrouter]
interface = $TB_IF_SRV
queues = 4
threads = 2
metrics_file = $M
metrics_detail = socket

[function reverse]
port = 1300

[function echo]
enabled = no
EOF
sed 's/^/    /' "$RR_TMP/moved.conf"
d0=$(decoy)
if rr_start conf -c "$RR_TMP/moved.conf"; then
	check "-c: reverse answers on 1300 (300 requests)" \
		serve "$TB_IP4_SRV" 1300:reverse 300
	check_eq "-c: none of them reached the kernel" "$d0" "$(decoy)"
	check "-c: 1232 and 7 are the kernel's again (100 requests)" \
		tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:any,7:any \
		-n 100 -s 16 -q
	check_eq "-c: the kernel sockets on 1232 and 7 counted them" \
		$((d0 + 100)) "$(decoy)"
	tb_wait_file "$M" 5
	check_eq "-c: metrics: requests on port 1300" 300 \
		"$(wait_metric "$M" 5 reqrouter_rx_packets_total 'port="1300"' -- 300)"
	check_eq "-c: metrics: 4 queues x 2 threads x 1 port" 8 \
		"$(metric_lines "$M" reqrouter_rx_packets_total | grep -c .)"
	stop "-c"
else
	bad "-c: reqrouter did not start"
fi
rm -f "$M"

say "== -q 2 on a 4-queue veth"
d0=$(decoy)
if rr_start q2 -i "$TB_IF_SRV" -q 2 --metrics-file "$M"; then
	# 64 sockets spread over all 4 TX queues, so about half the requests
	# arrive on queues reqrouter does not serve: the kernel answers those.
	tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse -n 400 \
		-s 64 -q --kernel-prefix KERNEL: >"$RR_TMP/q2.out" 2>&1
	rc=$?
	sed 's/^/    /' "$RR_TMP/q2.out"
	check_eq "-q 2: every request answered correctly, by reqrouter or the kernel" 0 "$rc"
	kern=$(($(decoy) - d0))
	rx=$(wait_metric "$M" 5 reqrouter_rx_packets_total -- $((400 - kern)))
	check_eq "-q 2: reqrouter's requests + the kernel's = 400" 400 $((rx + kern))
	check "-q 2: both got some (reqrouter $rx, kernel $kern)" \
		test "$rx" -gt 0 -a "$kern" -gt 0
	check_eq "-q 2: metrics list queues 0 and 1 only" "0 1" \
		"$(metric_lines "$M" reqrouter_rx_packets_total |
			grep -o 'queue="[0-9]*"' | sort -u | tr -dc '0-9\n' | xargs)"
	# Every request the XDP program saw is in its counters: the ones it
	# did not redirect must show up as passed, on some exported line.
	passed=$(metric "$M" reqrouter_xdp_packets_total 'verdict="pass"')
	check "-q 2: XDP counters show the $kern requests it passed to the kernel (pass total $passed)" \
		test "$passed" -ge "$kern"
	metric_lines "$M" reqrouter_xdp_packets_total | awk '$2 > 0' | sed 's/^/    /'
	stop "-q 2"
else
	bad "-q 2: reqrouter did not start"
fi
finish
