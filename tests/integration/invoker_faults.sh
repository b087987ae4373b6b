#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Faults under one reqrouter process (-q 1 -t 1, a batch of 4): overload
# from 64 sockets with 64 requests each in flight plus the XDP engine's
# flood, so the RX ring overflows (the fill ring holds every frame and
# cannot run dry first, and with a batch of 4 the TX ring never fills:
# those counters are reported, not required to move); then the
# server's link, and then the client's, go down and up while requests are
# being sent. Each time: the process survives, backpressure is counted and
# never an error, no reply is wrong, ordinary requests are answered again
# afterwards, and every UMEM frame comes back (reqrouter_umem_frames:
# under load none vanishes and a worker holds at most a batch per socket;
# at rest all are in the fill ring or, after the kernel's copy-mode RX
# dropped frames, a few in its pool).
# Finally SIGTERM stops it with exit 0 and nothing attached; and a new one
# whose interface is deleted under it exits non-zero, saying so.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
# rrload's XDP engine attaches its own program to the client end.
TB_PEER_XDP=0

rr_bed 1
# The load generators are not under test: in the sanitizer pass
# (BUILD=build/san) take them from the plain build when there is one.
RRLOAD=$BUILD/rrload
case $BUILD in
*/san) [ -x "${BUILD%/san}/rrload" ] && RRLOAD=${BUILD%/san}/rrload ;;
esac
M=$RR_TMP/metrics.prom
HM=$RR_LIB/hardening_metrics.py

# The test takes links down on purpose and needs their global IPv6
# addresses back: the bed sets keep_addr_on_down (tools/testbed.sh).
check "the bed keeps IPv6 addresses on link down" test \
	"$(tb_cli cat "/proc/sys/net/ipv6/conf/$TB_IF_CLI/keep_addr_on_down")" = 1

# The overload below comes from one /24, far past the default rate limit,
# which would drop it in XDP before it loads anything: off here.
printf '[function %s]\nrate_limit = 0\n' reverse echo >"$RR_TMP/norl.conf"
rr_start main -i "$TB_IF_SRV" -q 1 -t 1 -b 4 --metrics-file "$M" \
	-c "$RR_TMP/norl.conf" || die "reqrouter -q 1 -t 1 -b 4 did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"

# serves_again N SECONDS: after a fault, retry until N requests per family
# are all answered (ARP and ND may have to run again first).
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
serves_again() {
	local end=$((SECONDS + $2))
	while [ "$SECONDS" -lt "$end" ]; do
		serves "$1" --timeout 3 >/dev/null 2>&1 && { serves "$1" --timeout 3; return; }
		sleep 0.5
	done
	serves "$1" --timeout 3
}

at_rest() { # WHAT MAX_KERNEL
	python3 $HM at-rest "$M" --timeout 10 --max-kernel "$2" \
		>"$RR_TMP/rest.out"
	local rc=$?
	sed 's/^/    /' "$RR_TMP/rest.out"
	REST_KERNEL=$(sed -n 's/.* kernel=\([0-9]*\).*/\1/p' "$RR_TMP/rest.out" |
		head -n 1)
	check "$1" test $rc -eq 0
}

m() { metric "$M" "$@"; }

check "before: 100 IPv4 + 100 IPv6 requests answered" serves 100 --timeout 3

say "== overload: rrload 64 sockets x 64 in flight x 1400 B, plus the XDP engine's flood, 3 s"
tb_cli_bg "$RRLOAD" -s "$TB_IP4_SRV" -p 1232 -c 64 -w 64 -l 1400 \
	-d 3 -q --json "$RR_TMP/sock.json" >"$RR_TMP/sock.out" 2>&1
SOCK_PID=$TB_PID
RR_BG_PIDS+=("$SOCK_PID")
tb_cli_bg "$RRLOAD" --engine xdp -i "$TB_IF_CLI" -s "$TB_IP4_SRV" \
	-p 1232 -l 64 -d 3 -q --json "$RR_TMP/xdp.json" >"$RR_TMP/xdp.out" 2>&1
XDP_PID=$TB_PID
RR_BG_PIDS+=("$XDP_PID")
# -b 4 and two function sockets: a worker holds at most 8 frames.
python3 $HM watch "$M" --seconds 4 --max-worker 8 >"$RR_TMP/watch.out"
wrc=$?
for p in $SOCK_PID $XDP_PID; do
	for _ in $(seq 150); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
	kill -INT "$p" 2>/dev/null
	wait "$p" 2>/dev/null
done
sed 's/^/    /' "$RR_TMP/watch.out"
check "under load: no frame vanishes and the worker holds at most a batch per socket" \
	test $wrc -eq 0
say "    socket engine: $(head -n 2 "$RR_TMP/sock.out" | tr -s ' \n' ' ')"
say "    xdp engine:    $(head -n 3 "$RR_TMP/xdp.out" | tr -s ' \n' ' ')"
json() { json_get "$RR_TMP/$1.json" "$2"; }
check "socket engine ran and got answers ($(json sock answered) of $(json sock sent))" \
	test "$(json sock answered)" -gt 0 2>/dev/null
check_eq "socket engine: no wrong replies under overload" 0 "$(json sock wrong)"
check_eq "socket engine: no duplicate replies" 0 "$(json sock duplicates)"
check "xdp engine ran (sent $(json xdp sent))" test "$(json xdp sent)" -gt 0 2>/dev/null
check "reqrouter survived the overload" kill -0 "$RR_PID"

rx_full=$(m reqrouter_xsk_rx_ring_full_total)
fill_empty=$(m reqrouter_xsk_rx_fill_ring_empty_descs_total)
rx_dropped=$(m reqrouter_xsk_rx_dropped_total)
tx_full=$(m reqrouter_tx_ring_full_total)
say "    backpressure: xsk rx_ring_full=$rx_full rx_fill_ring_empty_descs=$fill_empty" \
	"rx_dropped=$rx_dropped, tx_ring_full rounds=$tx_full"
check "overload reached: the kernel counted RX backpressure (rx_ring_full + fill_ring_empty + rx_dropped > 0)" \
	test $((rx_full + fill_empty + rx_dropped)) -gt 0
check_eq "backpressure is not an error: kick errors" 0 "$(m reqrouter_kick_errors_total)"
check_eq "no invalid descriptors (rx + tx)" 0 \
	$(($(m reqrouter_xsk_rx_invalid_descs_total) + $(m reqrouter_xsk_tx_invalid_descs_total)))
check_eq "no request dropped by the workers" 0 "$(m reqrouter_dropped_packets_total)"

# A frame the kernel's copy-mode RX takes from the fill ring and then
# cannot place on a full RX ring goes to the pool's free list, not back
# to the fill ring, and shows as "kernel" (0 or 1 seen here after an
# overload). The pool hands it out again first, so the next ordinary
# traffic must bring it back: a frame still missing then is a leak.
at_rest "after the overload: frames back (rx/worker/tx/completion 0, fill + kernel = 4096, kernel <= 8)" 8
say "    frames the kernel's pool held at rest after the overload: ${REST_KERNEL:-?}"
check "after the overload: 300 IPv4 + 300 IPv6 requests answered" serves_again 300 10
at_rest "after ordinary traffic: every frame back in the fill ring, kernel 0 too" 0

for side in server client; do
	if [ $side = server ]; then
		ns=$TB_NS_SRV dev=$TB_IF_SRV
	else
		ns=$TB_NS_CLI dev=$TB_IF_CLI
	fi
	say "== the $side's link ($dev) down for 1 s and up again, under load"
	tb_cli_bg "$RRLOAD" -s "$TB_IP4_SRV" -p 1232,7 -c 16 -w 4 \
		-l 1-1400 -d 3 -q --timeout 500 --json "$RR_TMP/link.json" \
		>"$RR_TMP/link.out" 2>&1
	LINK_PID=$TB_PID
	RR_BG_PIDS+=("$LINK_PID")
	sleep 1
	ip -n "$ns" link set dev "$dev" down
	sleep 1
	check "$side link down: reqrouter still running" kill -0 "$RR_PID"
	check "$side link down: the XDP program stays attached" xdp_on_srv
	ip -n "$ns" link set dev "$dev" up
	for _ in $(seq 100); do kill -0 "$LINK_PID" 2>/dev/null || break; sleep 0.1; done
	kill -INT "$LINK_PID" 2>/dev/null
	wait "$LINK_PID" 2>/dev/null
	say "    load across the outage: $(head -n 2 "$RR_TMP/link.out" | tr -s ' \n' ' ')"
	check_eq "$side link down/up: no wrong replies" 0 "$(json link wrong)"
	check "$side link up: reqrouter still running" kill -0 "$RR_PID"
	check "$side link up: 200 IPv4 + 200 IPv6 requests answered again" \
		serves_again 200 15
	check_eq "$side link down/up: kick errors (ENETDOWN is not one)" 0 \
		"$(m reqrouter_kick_errors_total)"
	at_rest "$side link down/up: every frame back in the fill ring" 0
done

check "reqrouter did not log a warning or error after start-up" \
	eval "! grep -Eiv 'ready on|serving|attached|sockets on|workers started|copy mode' '$RR_ERR' | grep -qiE 'error|fail|warn'"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2
check "SIGTERM: no XDP program left" eval '! xdp_on_srv'
check "SIGTERM: summary printed" grep -q '^in user space: ' "$RR_OUT"
sed -n 's/^in user space: /    in user space: /p' "$RR_OUT"

# Last, because it takes the test bed apart: the interface itself goes
# away under a running reqrouter. It cannot recover; it must notice,
# say so and exit non-zero rather than hang or crash.
say "== the server's interface deleted while reqrouter runs"
rr_start gone -i "$TB_IF_SRV" -q 1 || die "reqrouter did not start again"
check "serves before the interface goes" serves 50 --timeout 3
ip -n "$TB_NS_SRV" link del dev "$TB_IF_SRV"
rr_exits_on_its_own "interface deleted" 1
check "interface deleted: the last line names the interface" \
	eval "tail -n 1 '$RR_ERR' | grep -q '$TB_IF_SRV'"
finish
