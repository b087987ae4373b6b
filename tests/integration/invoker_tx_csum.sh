#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Reply UDP checksums, computed by the kernel (--tx-csum offload: AF_XDP TX
# metadata, the skb's CHECKSUM_PARTIAL in copy mode) and in software
# (--tx-csum soft), each checked at the client:
#
# - With the server veth's TX checksumming off, the server kernel completes
#   an offloaded checksum itself (skb_checksum_help) before the frame
#   leaves, so the client kernel verifies every reply in full: a reply
#   with a wrong checksum is dropped (the request counts as lost) and
#   shows in Udp InCsumErrors / Udp6InCsumErrors, which must not move.
# - With it on (the veth default) an offloaded reply crosses the veth still
#   partial and the client kernel trusts it without looking. So an
#   AF_PACKET socket at the client reads the replies as they arrive and
#   checks the field: the pseudo-header sum when the kernel marks the frame
#   partial (TP_STATUS_CSUMNOTREADY), the full checksum otherwise.
#
# Each combination of server and client TX checksumming (the client's
# decides whether requests arrive with partial checksums) is run over
# IPv4 and IPv6. Then the metrics must show no invalid TX descriptors,
# failed kicks or drops, and auto must pick offload on this kernel.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=4
N4=400 # IPv4 requests per combination
N6=200 # IPv6 requests per combination
RAW=12 # raw-socket requests per family and combination
SOCKS=64

rr_bed $QUEUES
command -v ethtool >/dev/null || die "ethtool is needed to switch TX checksumming"
M=$RR_TMP/metrics.prom

rr_csum_probe

set_tx() { # NAMESPACE-RUNNER IFACE on|off
	local state
	$1 ethtool -K "$2" tx "$3" >/dev/null 2>&1
	state=$($1 ethtool -k "$2" | awk '/^tx-checksumming:/ { print $2 }')
	check_eq "$2 tx-checksumming set" "$3" "$state"
}

# raw_replies ADDR-SRC ADDR-DST PORT FUNC WANT-PARTIAL: RAW requests over an
# AF_PACKET socket; every reply's checksum checked as it arrived, and the
# number of partial ones must be WANT-PARTIAL.
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
raw_replies() {
	local out=$RR_TMP/raw.out partial
	tb_cli python3 "$RR_LIB/rawframes.py" exchange --ifname "$TB_IF_CLI" \
		--src-mac "$TB_MAC_CLI" --dst-mac "$TB_MAC_SRV" --src-ip "$1" \
		--dst-ip "$2" --dport "$3" --func "$4" --count "$RAW" \
		--min-size 0 --max-size 1400 --timeout 3 >"$out" 2>&1
	local rc=$?
	sed 's/^/    /' "$out"
	[ "$rc" -eq 0 ] || return 1
	partial=$(sed -n 's/.* \([0-9]*\) with a partial UDP checksum.*/\1/p' "$out")
	[ "$partial" = "$5" ] || {
		say "    $partial partial checksums, expected $5"
		return 1
	}
}

total=0
for mode in offload soft; do
	rm -f "$M"
	rr_start "$mode" -i "$TB_IF_SRV" -q $QUEUES --tx-csum "$mode" \
		--metrics-file "$M" || die "reqrouter --tx-csum $mode did not start"
	if [ "$mode" = offload ]; then
		want_log='TX checksum: offloaded (AF_XDP TX metadata)'
	else
		want_log='TX checksum: software (--tx-csum soft)'
	fi
	check "$mode: log says '$want_log', once" \
		test "$(grep -cF "$want_log" "$RR_ERR")" = 1
	sent=0
	for stx in on off; do
		set_tx tb_srv "$TB_IF_SRV" $stx
		for ctx in on off; do
			set_tx tb_cli "$TB_IF_CLI" $ctx
			what="$mode, server tx $stx, client tx $ctx"
			c4=$(udp_csum_errors)
			c6=$(udp6_csum_errors)
			check "$what, IPv4: every request got a correct reply" \
				tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" \
				1232:reverse,7:echo -n $N4 -s $SOCKS --min-size 0 \
				--max-size 1472 --deadline 60 -q
			check "$what, IPv6: every request got a correct reply" \
				tb_cli python3 $RR_LIB/udpclient.py "$TB_IP6_SRV" \
				1232:reverse,7:echo -n $N6 -s $SOCKS --min-size 0 \
				--max-size 1452 --deadline 60 -q
			check_eq "$what: client Udp InCsumErrors unchanged" \
				"$c4" "$(udp_csum_errors)"
			check_eq "$what: client Udp6InCsumErrors unchanged" \
				"$c6" "$(udp6_csum_errors)"
			# Partial on arrival only if the server kernel left it.
			want=0
			[ $mode = offload ] && [ $stx = on ] && want=$RAW
			check "$what, IPv4 raw: checksums as sent, $want partial" \
				raw_replies "$TB_IP4_CLI" "$TB_IP4_SRV" 1232 \
				reverse $want
			check "$what, IPv6 raw: checksums as sent, $want partial" \
				raw_replies "$TB_IP6_CLI" "$TB_IP6_SRV" 7 echo \
				$want
			sent=$((sent + N4 + N6 + 2 * RAW))
		done
	done
	tx=$(wait_metric "$M" 5 reqrouter_tx_packets_total -- $sent)
	check_eq "$mode: metrics: replies sent" "$sent" "$tx"
	for m in reqrouter_xsk_tx_invalid_descs_total \
		reqrouter_kick_errors_total reqrouter_dropped_packets_total; do
		check_eq "$mode: metrics: $m" 0 "$(metric "$M" $m)"
	done
	rr_kill_wait TERM 3
	check_eq "$mode: SIGTERM: exit status" 0 "$RR_RC"
	check "$mode: summary: $sent requests, $sent replies, 0 dropped" \
		grep -q "^in user space: $sent requests, $sent replies, 0 dropped" \
		"$RR_OUT"
	total=$((total + sent))
done

# auto (the default) picks offload where the kernel has it, as this one
# does; the config file's key says the same as the flag.
set_tx tb_srv "$TB_IF_SRV" off
rr_start auto -i "$TB_IF_SRV" -q $QUEUES ||
	die "reqrouter without --tx-csum did not start"
check "auto: log says offloaded" \
	grep -qF 'TX checksum: offloaded (AF_XDP TX metadata)' "$RR_ERR"
check "auto: every request got a correct reply" serves 100
rr_kill_wait TERM 3
check_eq "auto: SIGTERM: exit status" 0 "$RR_RC"

printf '[reqrouter]\ntx_csum = soft\n' >"$RR_TMP/soft.conf"
rr_start conf -i "$TB_IF_SRV" -q $QUEUES -c "$RR_TMP/soft.conf" ||
	die "reqrouter -c (tx_csum = soft) did not start"
check "config tx_csum = soft: log says software" \
	grep -qF 'TX checksum: software (--tx-csum soft)' "$RR_ERR"
check "config tx_csum = soft: every request got a correct reply" serves 100
rr_kill_wait TERM 3

rr_run bad -i "$TB_IF_SRV" --tx-csum sometimes
check_eq "--tx-csum sometimes: exit status" 2 "$RR_RC"
check "--tx-csum sometimes: one line that names the choices" \
	test "$(cat "$RR_ERR")" = "reqrouter: tx-csum must be auto, soft or offload, not 'sometimes'"
say "$total requests answered with offloaded and software checksums"
finish
