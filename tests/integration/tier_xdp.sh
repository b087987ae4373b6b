#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The in-kernel tier on the 4-queue bed, with real packets:
#  - tier auto: echo and reverse are answered inside XDP (XDP_TX). A python
#    client in the other namespace checks every reply itself over ordinary
#    sockets, so the client's kernel verified each UDP checksum: payloads
#    0-1400 B, IPv4 and IPv6, client TX checksumming on and off; the
#    client's InCsumErrors must not grow. The metrics put every request in
#    the xdp tier and none on the AF_XDP sockets.
#  - punts: with xdp_max_payload = 100, longer requests go on to the AF_XDP
#    workers (user tier) and are answered there, counted as punted.
#  - the reply cache: in the user tier, a repeated request of a pure
#    function is answered from the cache inside XDP, a changed payload
#    never is, and cache = no turns it off.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

RR_TIER=auto
RR_CACHE=yes
QUEUES=4
rr_bed $QUEUES
command -v ethtool >/dev/null || die "ethtool is needed to switch TX checksumming"
M=$RR_TMP/metrics.prom

# One client run; every reply checked by udpclient.py.
ask() { # WHAT ADDR ARGS...
	local what=$1 addr=$2
	shift 2
	check "$what: every request got a correct reply" \
		tb_cli python3 $RR_LIB/udpclient.py "$addr" "$@" --deadline 60
}

rr_start auto -i "$TB_IF_SRV" -q $QUEUES -t 2 --metrics-file "$M" ||
	die "reqrouter -q $QUEUES -t 2 (tier auto) did not start"
check "log: reverse is answered in XDP" \
	grep -q "serving 'reverse' on UDP port 1232, in XDP first" "$RR_ERR"
check "log: echo is answered in XDP" \
	grep -q "serving 'echo' on UDP port 7, in XDP first" "$RR_ERR"
# The bed's client end runs an XDP program, so XDP_TX replies arrive and
# nothing needs saying (tier_bare_veth.sh has the other case).
check "log: no warning about the veth's peer, which runs an XDP program" \
	bash -c "! grep -q 'is a veth and its' '$RR_ERR'"

sent=0
for mode in on off; do
	tb_cli ethtool -K "$TB_IF_CLI" tx "$mode" >/dev/null 2>&1
	c4=$(udp_csum_errors)
	c6=$(udp6_csum_errors)
	ask "XDP tier, IPv4, client tx csum $mode" "$TB_IP4_SRV" \
		1232:reverse,7:echo -n 1000 -s 64 --min-size 0 --max-size 1400
	ask "XDP tier, IPv6, client tx csum $mode" "$TB_IP6_SRV" \
		1232:reverse,7:echo -n 300 -s 64 --min-size 0 --max-size 1400
	sent=$((sent + 1300))
	check_eq "client tx csum $mode: Udp InCsumErrors unchanged" "$c4" "$(udp_csum_errors)"
	check_eq "client tx csum $mode: Udp6InCsumErrors unchanged" "$c6" "$(udp6_csum_errors)"
done
sleep 1.2 # the next metrics write
check_eq "metrics: every request answered in the xdp tier" "$sent" \
	"$(metric "$M" reqrouter_tx_packets_total 'tier="xdp"')"
check_eq "metrics: the xdp tier saw every request" "$sent" \
	"$(metric "$M" reqrouter_rx_packets_total 'tier="xdp"')"
check_eq "metrics: nothing reached the AF_XDP sockets" 0 \
	"$(metric "$M" reqrouter_rx_packets_total 'tier="user"')"
check_eq "metrics: nothing punted" 0 \
	"$(metric "$M" reqrouter_punted_packets_total)"
check_eq "metrics: no drops in the xdp tier" 0 \
	"$(metric "$M" reqrouter_dropped_packets_total 'tier="xdp"')"
check_eq "XDP counters: tx/function per queue add up" "$sent" \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="tx",reason="function"')"
check "XDP counters: more than one queue answered" test \
	"$(metric_lines "$M" reqrouter_xdp_packets_total |
		grep 'verdict="tx",reason="function"' | grep -vc ' 0$')" -gt 1
rr_kill_wait TERM 5
check_eq "tier auto: SIGTERM exit status" 0 "$RR_RC"
check "tier auto: the summary names the in-kernel replies" \
	grep -q "^in XDP: reverse: .* replies" "$RR_OUT"

say "== punts: xdp_max_payload = 100"
cat >"$RR_TMP/punt.conf" <<EOF
[function reverse]
xdp_max_payload = 100
[function echo]
xdp_max_payload = 100
EOF
rr_start punt -c "$RR_TMP/punt.conf" -i "$TB_IF_SRV" -q $QUEUES -t 2 \
	--metrics-file "$M" || die "reqrouter with xdp_max_payload did not start"
ask "punts: short ones in XDP, long ones in user space" "$TB_IP4_SRV" \
	1232:reverse,7:echo -n 600 -s 32 --min-size 0 --max-size 400
sleep 1.2
xdp_tx=$(metric "$M" reqrouter_tx_packets_total 'tier="xdp"')
user_tx=$(metric "$M" reqrouter_tx_packets_total 'tier="user"')
punted=$(metric "$M" reqrouter_punted_packets_total)
check "punts: some answered in XDP ($xdp_tx)" test "$xdp_tx" -gt 0
check "punts: some answered by the workers ($user_tx)" test "$user_tx" -gt 0
check_eq "punts: every punted request answered in user space" "$punted" "$user_tx"
check_eq "punts: all 600 answered" 600 $((xdp_tx + user_tx))
check_eq "punts: redirect/punted per queue add up" "$punted" \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="redirect",reason="punted"')"
rr_kill_wait TERM 5

say "== the reply cache (tier user, pure functions)"
RR_TIER=user
rr_start cache -i "$TB_IF_SRV" -q $QUEUES -t 2 --metrics-file "$M" ||
	die "reqrouter --tier user did not start"
check "log: reverse's replies are cached" \
	grep -q "serving 'reverse' on UDP port 1232, in user space (tier user), replies cached in XDP" "$RR_ERR"
# The same 20 payloads over and over from 8 sockets: the first of each is
# answered by a worker, which caches the reply; the rest come from XDP.
ask "cache: 400 requests over 20 payloads, all correct" "$TB_IP4_SRV" \
	1232:reverse -n 400 -s 8 --min-size 1 --max-size 200 --distinct 20
sleep 1.2
hits=$(metric "$M" reqrouter_cache_hits_total)
inserts=$(metric "$M" reqrouter_cache_insertions_total)
# Two workers that answer the same payload at once race for its entry:
# the loser skips its insert (counted), which is not a lost reply.
skips=$(metric "$M" reqrouter_cache_skips_total)
user_rx=$(metric "$M" reqrouter_rx_packets_total 'tier="user"')
check "cache: most requests answered from the cache ($hits of 400)" \
	test "$hits" -ge 300
check_eq "cache: every request answered once, by a worker or the cache" \
	400 $((hits + user_rx))
check_eq "cache: every worker reply was stored or its skip counted" \
	"$user_rx" "$((inserts + skips))"
check_eq "cache: tx/cache per queue add up" "$hits" \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="tx",reason="cache"')"
# Fresh payloads of the same lengths: the cache holds none of them, and a
# wrong reply (one for another payload) would fail the client.
before=$hits
ask "cache: 400 distinct payloads, all correct" "$TB_IP4_SRV" \
	1232:reverse -n 400 -s 8 --min-size 1 --max-size 200
sleep 1.2
check_eq "cache: no distinct payload answered from the cache" "$before" \
	"$(metric "$M" reqrouter_cache_hits_total)"
ask "cache over IPv6, repeated payloads" "$TB_IP6_SRV" \
	1232:reverse,7:echo -n 200 -s 8 --min-size 1 --max-size 200 --distinct 10
rr_kill_wait TERM 5
check "cache: the summary reports hits" \
	grep -q "^reply cache: reverse: [1-9][0-9]* hits" "$RR_OUT"

cat >"$RR_TMP/nocache.conf" <<EOF
[function reverse]
cache = no
EOF
rr_start nocache -c "$RR_TMP/nocache.conf" -i "$TB_IF_SRV" -q $QUEUES \
	-t 2 --metrics-file "$M" || die "reqrouter with cache = no did not start"
ask "cache = no: repeated payloads answered by the workers" "$TB_IP4_SRV" \
	1232:reverse -n 200 -s 8 --min-size 1 --max-size 200 --distinct 5
sleep 1.2
check_eq "cache = no: no cache hits" 0 "$(metric "$M" reqrouter_cache_hits_total 'function="reverse"')"
check_eq "cache = no: all 200 answered by the workers" 200 \
	"$(metric "$M" reqrouter_tx_packets_total 'function="reverse"' 'tier="user"')"
rr_kill_wait TERM 5
rr_check_sanitizers
finish
