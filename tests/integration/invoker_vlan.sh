#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# VLAN-tagged requests: the test kernel has no 802.1Q module, so requests
# are raw frames sent with AF_PACKET from the client namespace: untagged (a
# control), 802.1Q, and QinQ (802.1ad outer + 802.1Q inner), over IPv4 and
# IPv6, to reverse and echo. Replies are read with AF_PACKET too, with
# PACKET_AUXDATA on, since the kernel moves the outer tag into metadata.
# rawframes.py checks each reply: both tags back with the same TCI (PCP
# bits included), MACs, addresses and ports swapped, lengths, the IPv4
# header checksum and the UDP checksum (recomputed in python), payload.
# IPv4 requests with options (tagged or not) must be answered likewise;
# frames with three tags (more than the XDP program parses) go to the kernel.
#
# First on the defaults (vlans = host): the host has no VLAN device (this
# kernel cannot make one), so a tagged request is not answered (a reply
# would leave on a VLAN the host does not have) and is counted as
# pass/vlan_not_ours, while a priority tag (VLAN ID 0, 802.1p) is
# answered. The rest runs with --vlans listing the IDs it sends.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

COUNT=20 # requests per variant, payloads spread over 0-1400 bytes

# A user's host: nothing on the client's end (the workers answer).
TB_PEER_XDP=0
rr_bed 4
M=$RR_TMP/metrics.prom

exchange() { # label ip-version port func tags [rawframes options...]
	local s d what=$1 ipv=$2 port=$3 func=$4 tags=$5
	if [ "$2" = 4 ]; then
		s=$TB_IP4_CLI d=$TB_IP4_SRV
	else
		s=$TB_IP6_CLI d=$TB_IP6_SRV
	fi
	shift 5
	check "$what" tb_cli python3 $RR_LIB/rawframes.py exchange \
		--ifname "$TB_IF_CLI" --src-mac "$TB_MAC_CLI" \
		--dst-mac "$TB_MAC_SRV" --src-ip "$s" --dst-ip "$d" \
		--dport "$port" --func "$func" --tags "$tags" --count $COUNT \
		--min-size 0 --max-size 1400 --timeout 2 "$@"
}

say "== the defaults: only the host's VLANs (none here)"
rr_start defaults -i "$TB_IF_SRV" -q 4 --metrics-file "$M" ||
	die "reqrouter -i $TB_IF_SRV -q 4 did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
for ipv in 4 6; do
	exchange "IPv$ipv priority tag (VLAN ID 0, PCP 5): answered, tag kept" \
		$ipv 1232 reverse 8100:0xa000
	exchange "IPv$ipv 802.1Q VID 999, a VLAN the host does not have: not answered" \
		$ipv 1232 reverse 8100:0x03e7 --expect-none --timeout 0.5
	exchange "IPv$ipv QinQ 802.1ad VID 200 + 802.1Q VID 100: not answered" \
		$ipv 7 echo 88a8:0xa0c8,8100:0x2064 --expect-none --timeout 0.5
done
n=$(wait_metric "$M" 5 reqrouter_xdp_packets_total 'reason="vlan_not_ours"' -- \
	$((4 * COUNT)))
check_eq "every tagged request passed to the kernel as vlan_not_ours" \
	$((4 * COUNT)) "$n"
check_eq "the priority-tagged ones were answered" $((2 * COUNT)) \
	"$(wait_metric "$M" 3 reqrouter_tx_packets_total -- $((2 * COUNT)))"
rr_kill_wait TERM 3
check_eq "SIGTERM: exit status" 0 "$RR_RC"

say "== --vlans 7,100,200,3000,4094: the IDs sent answered"
rr_start main -i "$TB_IF_SRV" -q 4 --metrics-file "$M" \
	--vlans 7,100,200,3000,4094 ||
	die "reqrouter -i $TB_IF_SRV -q 4 --vlans ... did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check "the log says which tags are answered" \
	grep -q 'answering VLAN tags 7, 100, 200, 3000, 4094 (vlans)' "$RR_ERR"

sent=0
# TCIs carry PCP bits too (0x6064: PCP 3, VID 100): a reply must keep the
# whole tag, not just the VID.
for ipv in 4 6; do
	exchange "IPv$ipv untagged (control): correct replies" $ipv 1232 reverse ""
	exchange "IPv$ipv 802.1Q VID 100: reverse replies tagged and correct" \
		$ipv 1232 reverse 8100:0x6064
	exchange "IPv$ipv 802.1Q VID 4094: echo replies tagged and correct" \
		$ipv 7 echo 8100:0x0ffe
	exchange "IPv$ipv QinQ 802.1ad VID 200 + 802.1Q VID 100: reverse replies keep both tags" \
		$ipv 1232 reverse 88a8:0xa0c8,8100:0x2064
	exchange "IPv$ipv QinQ 802.1ad VID 7 + 802.1Q VID 3000: echo replies keep both tags" \
		$ipv 7 echo 88a8:0x0007,8100:0x0bb8
	sent=$((sent + 5 * COUNT))
done

# IPv4 options are the kernel's (a reply built by swapping addresses would
# get a source route or a timestamp wrong): passed, tagged or not, never
# answered.
sleep 1.1
opt0=$(metric "$M" reqrouter_xdp_packets_total 'reason="ip_options"')
check "IPv4 with 8 bytes of options: not answered" tb_cli python3 $RR_LIB/rawframes.py \
	exchange --ifname "$TB_IF_CLI" --src-mac "$TB_MAC_CLI" \
	--dst-mac "$TB_MAC_SRV" --src-ip "$TB_IP4_CLI" --dst-ip "$TB_IP4_SRV" \
	--dport 1232 --ip-options 2 --count 5 --timeout 0.5 --expect-none
check "IPv4 with 40 bytes of options, QinQ: not answered" tb_cli python3 $RR_LIB/rawframes.py \
	exchange --ifname "$TB_IF_CLI" --src-mac "$TB_MAC_CLI" \
	--dst-mac "$TB_MAC_SRV" --src-ip "$TB_IP4_CLI" --dst-ip "$TB_IP4_SRV" \
	--dport 7 --tags 88a8:0x00c8,8100:0x0064 --ip-options 10 --count 5 \
	--timeout 0.5 --expect-none
opt=$(($(wait_metric "$M" 5 reqrouter_xdp_packets_total 'reason="ip_options"' -- \
	$((opt0 + 10))) - opt0))
check_eq "IPv4 options: XDP passed all 10 to the kernel (ip_options)" 10 "$opt"

# Three tags are more than the XDP program parses: such frames go to the
# kernel (which drops them here), never to a function.
sleep 1.1
pass0=$(metric "$M" reqrouter_xdp_packets_total 'verdict="pass"')
check "three VLAN tags: not answered" tb_cli python3 $RR_LIB/rawframes.py \
	exchange --ifname "$TB_IF_CLI" --src-mac "$TB_MAC_CLI" \
	--dst-mac "$TB_MAC_SRV" --src-ip "$TB_IP4_CLI" --dst-ip "$TB_IP4_SRV" \
	--dport 1232 --tags 88a8:5,8100:6,8100:7 --count 5 --timeout 0.5 \
	--expect-none
pass=$(($(wait_metric "$M" 5 reqrouter_xdp_packets_total 'verdict="pass"' -- \
	$((pass0 + 5))) - pass0))
check "three VLAN tags: XDP passed them (pass +$pass >= 5)" test "$pass" -ge 5

rx=$(wait_metric "$M" 5 reqrouter_rx_packets_total -- $sent)
check_eq "metrics: requests received" "$sent" "$rx"
check_eq "metrics: replies sent" "$sent" "$(wait_metric "$M" 3 reqrouter_tx_packets_total -- $sent)"
check_eq "metrics: dropped" 0 "$(metric "$M" reqrouter_dropped_packets_total)"
check_eq "metrics: XDP redirected every request" "$sent" \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="redirect"')"

rr_kill_wait TERM 3
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
