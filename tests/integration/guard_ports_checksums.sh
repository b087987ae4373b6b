#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Loop guards and checksums, on the 2-queue bed (its client end runs an
# XDP program, so the in-kernel tier answers in tier auto):
#  - source ports: with the default min_source_port (1024) requests from
#    ports 1023 and 53 are refused in XDP, counted low_source_port, and
#    those from 1024 answered, IPv4 and IPv6; min_source_port = 53 in
#    reverse's section answers port 53 (not 52) for reverse alone;
#  - UDP checksums, in the user tier (--tier user) and in the XDP tier
#    (tier auto): a checksum that does not check out is refused and
#    counted bad_checksum (in user space, or as an in-kernel drop), even
#    for a payload the reply cache holds; the pseudo-header's sum alone
#    (what a sender with TX checksum offload leaves) is answered, raw and
#    from ordinary sockets with the client's TX checksumming on (partial
#    checksums, seen leaving the client) and off (full ones).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

RR_TIER=auto
RR_CACHE=yes
rr_bed 2
command -v ethtool >/dev/null || die "ethtool is needed to switch TX checksumming"
M=$RR_TMP/metrics.prom
GP=$RR_LIB/guard_probe.py

# asks_from SPORT all|none FUNCS...: 10 requests from source port SPORT to each
# of FUNCS (reverse, echo) over IPv4 and IPv6.
asks_from() {
	local sport=$1 expect=$2 fn port addr
	shift 2
	for fn in "$@"; do
		port=1232
		[ "$fn" = echo ] && port=7
		for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
			check "from port $sport to $fn at $addr: $([ "$expect" = all ] &&
				echo answered || echo refused)" tb_cli python3 "$GP" ask \
				"$addr" $port --func "$fn" --sport "$sport" -n 10 \
				--timeout 0.3 --expect "$expect"
		done
	done
}
xdp_count() { # REASON: reqrouter_xdp_packets_total{verdict="drop",reason=...}
	metric "$M" reqrouter_xdp_packets_total 'verdict="drop"' "reason=\"$1\""
}
# settled_eq WHAT WANT NAME FILTERS...: the metric reaches WANT and, one
# metrics write later, is still exactly WANT.
settled_eq() {
	local what=$1 want=$2
	shift 2
	wait_metric "$M" 5 "$@" -- "$want" >/dev/null
	sleep 1.1
	check_eq "$what" "$want" "$(metric "$M" "$@")"
}

say "== source ports, default settings"
rr_start ports -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter -i $TB_IF_SRV -q 2 did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
asks_from 1023 none reverse echo
asks_from 53 none reverse echo
asks_from 1024 all reverse echo
settled_eq "metrics: the 80 refused counted as drop/low_source_port" 80 \
	reqrouter_xdp_packets_total 'verdict="drop"' 'reason="low_source_port"'
check_eq "metrics: none counted as loop_source_port" 0 "$(xdp_count loop_source_port)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"

say "== min_source_port = 53 for reverse"
cat >"$RR_TMP/min53.conf" <<EOF
[function reverse]
min_source_port = 53
EOF
rr_start min53 -c "$RR_TMP/min53.conf" -i "$TB_IF_SRV" -q 2 \
	--metrics-file "$M" || die "reqrouter with min_source_port = 53 did not start"
asks_from 53 all reverse
asks_from 52 none reverse
asks_from 53 none echo
settled_eq "metrics: port 52 to reverse and 53 to echo counted as low_source_port" \
	40 reqrouter_xdp_packets_total 'verdict="drop"' 'reason="low_source_port"'
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"

# raw IPV CSUM all|none [rawframes options]: 10 raw requests to reverse
# with the given UDP checksum (full, bad, partial, zero).
# shellcheck disable=SC2317 # called through check
raw() {
	local src=$TB_IP4_CLI dst=$TB_IP4_SRV extra=()
	[ "$1" = 6 ] && src=$TB_IP6_CLI dst=$TB_IP6_SRV
	[ "$3" = none ] && extra=(--expect-none)
	tb_cli python3 "$RR_LIB/rawframes.py" exchange --ifname "$TB_IF_CLI" \
		--src-mac "$TB_MAC_CLI" --dst-mac "$TB_MAC_SRV" --src-ip "$src" \
		--dst-ip "$dst" --dport 1232 --count 10 --min-size 1 \
		--max-size 200 --timeout 0.3 --udp-csum "$2" "${extra[@]}" "${@:4}"
}
# sockets MODE: ordinary sockets with the client's TX checksumming MODE:
# the checksums seen leaving the client are partial (on) or full (off),
# every request is answered, and the client's kernel finds every reply's
# checksum good.
sockets() {
	local mode=$1 kind=full c4 c6 out=$RR_TMP/sniff.out
	[ "$mode" = on ] && kind=partial
	tb_cli ethtool -K "$TB_IF_CLI" tx "$mode" >/dev/null 2>&1 ||
		bad "ethtool -K $TB_IF_CLI tx $mode failed"
	c4=$(udp_csum_errors)
	c6=$(udp6_csum_errors)
	rm -f "$RR_TMP/sniff.ready"
	tb_cli_bg python3 "$RR_LIB/rawframes.py" sniff --ifname "$TB_IF_CLI" \
		--dport 1232 --duration 10 --ready "$RR_TMP/sniff.ready" >"$out"
	local sniff=$TB_PID
	RR_BG_PIDS+=("$sniff")
	wait_for 5 test -e "$RR_TMP/sniff.ready"
	check "tx $mode: 200 IPv4 + 200 IPv6 requests from sockets answered" \
		serves 100
	kill -TERM "$sniff"
	wait "$sniff"
	sed 's/^/    /' "$out"
	check "tx $mode: the client sent $kind UDP checksums to reverse" \
		grep -q "frames out to port 1232: .*\b[1-9][0-9]* $kind\b" "$out"
	check "tx $mode: only $kind ones" grep -Eq "^sniff .*: ([0-9]+) UDP frames out to port 1232: .*\b\1 $kind\b" "$out"
	check_eq "tx $mode: client Udp InCsumErrors unchanged" "$c4" "$(udp_csum_errors)"
	check_eq "tx $mode: client Udp6InCsumErrors unchanged" "$c6" "$(udp6_csum_errors)"
}
# checksums TIER: the checksum checks against reqrouter in TIER.
checksums() {
	local t=$1 seed4=$RANDOM seed6=$RANDOM
	check "$t tier, IPv4: full checksums answered" raw 4 full all --seed $seed4
	check "$t tier, IPv6: full checksums answered" raw 6 full all --seed $seed6
	# The same payloads again (the reply cache may hold them), with
	# checksums that do not check out.
	check "$t tier, IPv4: bad checksums refused" raw 4 bad none --seed $seed4
	check "$t tier, IPv6: bad checksums refused" raw 6 bad none --seed $seed6
	check "$t tier, IPv4: partial checksums answered" raw 4 partial all
	check "$t tier, IPv6: partial checksums answered" raw 6 partial all
	check "$t tier, IPv4: zero checksums answered" raw 4 zero all
	sockets on
	sockets off
}

say "== checksums, user tier"
RR_TIER=user
rr_start user -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter --tier user did not start"
checksums user
settled_eq "metrics: the 20 bad ones counted as bad_checksum in user space" 20 \
	reqrouter_dropped_packets_total 'reason="bad_checksum"'
check_eq "metrics: no other drop" 20 \
	"$(metric "$M" reqrouter_dropped_packets_total)"
check_eq "metrics: nothing answered in XDP but from the cache" 0 \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="tx"' 'reason="function"')"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"

say "== checksums, XDP tier (tier auto, the peer runs an XDP program)"
RR_TIER=auto
rr_start auto -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter (tier auto) did not start"
check "log: reverse is answered in XDP" \
	grep -q "serving 'reverse' on UDP port 1232, in XDP first (tier xdp)\$" "$RR_ERR"
checksums XDP
settled_eq "metrics: the 20 bad ones counted as bad_checksum in the xdp tier" 20 \
	reqrouter_dropped_packets_total 'tier="xdp"' 'reason="bad_checksum"'
check_eq "metrics: no other drop" 20 \
	"$(metric "$M" reqrouter_dropped_packets_total)"
check_eq "metrics: XDP dropped them (drop/function)" 20 "$(xdp_count function)"
check_eq "metrics: nothing reached the workers" 0 \
	"$(metric "$M" reqrouter_rx_packets_total 'tier="user"')"
# 50 raw requests, and 2 x 400 from sockets.
settled_eq "metrics: the xdp tier answered every good one" 450 \
	reqrouter_tx_packets_total 'tier="xdp"'
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
