#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# answer_for = local, the default: reqrouter answers a request only if its
# destination is one of the host's own addresses (its local routes, read
# from netlink), whatever reaches the interface's MAC. On the 2-queue bed,
# reqrouter with default settings:
#  - the server's own IPv4 and IPv6 addresses are answered;
#  - an address of the bed's subnet that nobody holds (198.18.0.77,
#    fd00:7272::77), sent to the server's MAC (a static neighbour on the
#    client), is not, and is counted as not_local; likewise with an
#    802.1Q tag (raw frames: the kernel has no 8021q), while tagged
#    requests to the server's own addresses are answered;
#  - a VIP on the server's lo (192.0.2.10/32, 2001:db8::10/128, routed via
#    the server on the client) is answered, the reply from the VIP; an
#    AnyIP range (ip route add local 198.51.100.0/25 dev lo) too; addresses
#    next to them that are not the host's are not;
#  - the VIP removed while a client asks every 20 ms: no longer answered
#    within a second; added again: answered within a second;
#  - --answer-for any answers the unassigned address too.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

RR_TIER=auto # the defaults: nothing on the command line but -i and -q
RR_CACHE=yes
rr_bed 2
M=$RR_TMP/metrics.prom
GP=$RR_LIB/guard_probe.py
NOWHERE4=198.18.0.77
NOWHERE6=fd00:7272::77
VIP4=192.0.2.10
VIP6=2001:db8::10
OTHER4=192.0.2.11
OTHER6=2001:db8::11
ANYIP=198.51.100.7
NOT_ANYIP=198.51.100.200

# The client sends the unassigned addresses of its own subnet to the
# server's MAC, and the documentation ranges through the server.
tb_cli ip neigh replace $NOWHERE4 lladdr "$TB_MAC_SRV" dev "$TB_IF_CLI" nud permanent
tb_cli ip -6 neigh replace $NOWHERE6 lladdr "$TB_MAC_SRV" dev "$TB_IF_CLI" nud permanent
tb_cli ip route add 192.0.2.0/24 via "$TB_IP4_SRV" || die "client route"
tb_cli ip route add 198.51.100.0/24 via "$TB_IP4_SRV" || die "client route"
tb_cli ip -6 route add 2001:db8::/64 via "$TB_IP6_SRV" || die "client route"

ask() { # WHAT ADDR all|none: 20 requests each to reverse and echo, side by side
	local what=$1 addr=$2 expect=$3 fn pid=() rc
	for fn in reverse echo; do
		tb_cli python3 $GP ask "$addr" "$(fn_port $fn)" --func $fn -n 20 \
			--timeout 0.5 --expect "$expect" >"$RR_TMP/ask.$fn" 2>&1 &
		pid+=($!)
	done
	for fn in reverse echo; do
		wait "${pid[0]}"
		rc=$?
		pid=("${pid[@]:1}")
		cat "$RR_TMP/ask.$fn"
		check "$what ($fn)" test $rc -eq 0
	done
}
fn_port() { if [ "$1" = echo ]; then echo 7; else echo 1232; fi; }
not_local() {
	metric "$M" reqrouter_xdp_packets_total 'verdict="pass"' 'reason="not_local"'
}
# raw IPV DST TAGS all|none: 5 raw frames to reverse, untagged or with
# TAGS, from the client's veth to the server's MAC.
# shellcheck disable=SC2317 # called through check
raw() {
	local src=$TB_IP4_CLI extra=()
	[ "$1" = 6 ] && src=$TB_IP6_CLI
	[ "$4" = none ] && extra=(--expect-none)
	tb_cli python3 "$RR_LIB/rawframes.py" exchange --ifname "$TB_IF_CLI" \
		--src-mac "$TB_MAC_CLI" --dst-mac "$TB_MAC_SRV" --src-ip "$src" \
		--dst-ip "$2" --dport 1232 --tags "$3" --count 5 --min-size 1 \
		--max-size 200 --timeout 0.3 --udp-csum full "${extra[@]}"
}

# The tagged frames' VLANs as the host's (this kernel makes no VLAN
# device; invoker_vlan.sh tests the default, vlans = host).
rr_start main -i "$TB_IF_SRV" -q 2 --vlans 100,200 --metrics-file "$M" ||
	die "reqrouter -i $TB_IF_SRV -q 2 did not start"
check "log: it answers for the host's own addresses" \
	grep -q "answering requests for the host's own addresses" "$RR_ERR"
tb_wait_file "$M" 5 || die "no metrics file at $M"

say "== the server's own addresses"
ask "IPv4 $TB_IP4_SRV answered" "$TB_IP4_SRV" all
ask "IPv6 $TB_IP6_SRV answered" "$TB_IP6_SRV" all
check "IPv4, 802.1Q VID 100: answered, tag kept" raw 4 "$TB_IP4_SRV" 8100:100 all
check "IPv6, 802.1Q VID 100: answered, tag kept" raw 6 "$TB_IP6_SRV" 8100:100 all

say "== unassigned addresses of the bed's subnet, sent to the server's MAC"
nl0=$(not_local)
ask "IPv4 $NOWHERE4 not answered" $NOWHERE4 none
ask "IPv6 $NOWHERE6 not answered" $NOWHERE6 none
check "IPv4 $NOWHERE4, 802.1Q VID 100: not answered" raw 4 $NOWHERE4 8100:100 none
check "IPv6 $NOWHERE6, 802.1Q VID 100: not answered" raw 6 $NOWHERE6 8100:100 none
check "IPv6 $NOWHERE6, QinQ: not answered" raw 6 $NOWHERE6 88a8:200,8100:100 none
want=$((nl0 + 4 * 20 + 3 * 5))
wait_metric "$M" 5 reqrouter_xdp_packets_total 'verdict="pass"' \
	'reason="not_local"' -- $want >/dev/null
sleep 1.1 # one more metrics write: nothing more is counted
check_eq "metrics: every one counted as pass/not_local" $want "$(not_local)"

say "== a VIP on lo, an AnyIP range, and addresses next to them"
tb_srv ip addr add $VIP4/32 dev lo || die "cannot add $VIP4 to lo"
tb_srv ip -6 addr add $VIP6/128 dev lo || die "cannot add $VIP6 to lo"
tb_srv ip route add local 198.51.100.0/25 dev lo || die "cannot add the AnyIP route"
sleep 0.3 # reqrouter follows within 100 ms
# udpclient checks each reply's source: the VIP's, not the interface's.
check "VIP $VIP4: 200 requests answered, from the VIP" tb_cli python3 \
	$RR_LIB/udpclient.py $VIP4 1232:reverse,7:echo -n 200 -s 16 -q
check "VIP $VIP6: 200 requests answered, from the VIP" tb_cli python3 \
	$RR_LIB/udpclient.py $VIP6 1232:reverse,7:echo -n 200 -s 16 -q
check "AnyIP $ANYIP: 200 requests answered, from it" tb_cli python3 \
	$RR_LIB/udpclient.py $ANYIP 1232:reverse,7:echo -n 200 -s 16 -q
check "log: the change of addresses was noticed" \
	grep -q "the host's addresses changed" "$RR_ERR"
nl0=$(not_local)
ask "$OTHER4, never assigned: not answered" $OTHER4 none
ask "$OTHER6, never assigned: not answered" $OTHER6 none
ask "$NOT_ANYIP, next to the AnyIP range: not answered" $NOT_ANYIP none
want=$((nl0 + 6 * 20))
check_eq "metrics: those counted as pass/not_local" $want \
	"$(wait_metric "$M" 5 reqrouter_xdp_packets_total 'verdict="pass"' \
		'reason="not_local"' -- $want)"

say "== the VIP removed while serving, then added again"
tb_cli_bg python3 $RR_LIB/guard_probe.py watch $VIP4 1232 --duration 4 \
	--interval 0.02 --log "$RR_TMP/watch.log" >"$RR_TMP/watch.out"
WATCH=$TB_PID
RR_BG_PIDS+=("$WATCH")
sleep 0.5
t_del=$(date +%s.%N)
tb_srv ip addr del $VIP4/32 dev lo
sleep 1.7
t_add=$(date +%s.%N)
tb_srv ip addr add $VIP4/32 dev lo
wait "$WATCH"
sed 's/^/    /' "$RR_TMP/watch.out"
check "before the removal: every request answered" python3 $GP judge \
	"$RR_TMP/watch.log" --from 0 --to "$t_del" --want all --within 0
check "removed: no longer answered within a second" python3 $GP judge \
	"$RR_TMP/watch.log" --from "$t_del" --to "$t_add" --want none
check "added again: answered within a second" python3 $GP judge \
	"$RR_TMP/watch.log" --from "$t_add" --want all

rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2

say "== --answer-for any: every destination that reaches the MAC"
rr_start any -i "$TB_IF_SRV" -q 2 --answer-for any --vlans 100,200 \
	--metrics-file "$M" ||
	die "reqrouter --answer-for any did not start"
ask "--answer-for any: IPv4 $NOWHERE4 answered" $NOWHERE4 all
ask "--answer-for any: IPv6 $NOWHERE6 answered" $NOWHERE6 all
check "--answer-for any: the log does not claim the destination check" \
	eval "! grep -q \"answering requests for the host's own addresses\" \"$RR_ERR\""
sleep 1.1
check_eq "--answer-for any: nothing counted as not_local" 0 "$(not_local)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
finish
