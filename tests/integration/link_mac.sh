#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter follows its interface's MAC address while serving (issue 41;
# bond failover, keepalived, an operator's `ip link set address`). On the
# 1-queue bed with nothing on the client end (TB_PEER_XDP=0) and the
# default settings:
#  - status shows the interface's MAC address ("mac") from the start;
#  - `ip link set dev IF address 02:31:31:31:31:31` while serving, the
#    client's neighbour entries moved to it: within 5 s one log line says
#    "MAC address" with the new address, and from the first answer on
#    every request to echo and reverse, IPv4 and IPv6, is answered;
#    replies carry the new address as their source (frames built by
#    hand); frames still sent to the old address are not answered;
#    status has "mac":"02:31:31:31:31:31" and
#    reqrouter_link_changes_total{change="mac"} is 1;
#  - changed back to the first address: followed again (a second log
#    line, the counter at 2, every request answered).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 1
source tests/integration/lib/link.sh
NEW=02:31:31:31:31:31
OLD=$TB_MAC_SRV

# client_neigh MAC: the client's neighbour entries for the server's
# addresses point at MAC (the bed's are static: nothing else moves them).
client_neigh() {
	tb_cli ip neigh replace "$TB_IP4_SRV" lladdr "$1" dev "$TB_IF_CLI" \
		nud permanent &&
		tb_cli ip -6 neigh replace "$TB_IP6_SRV" lladdr "$1" \
			dev "$TB_IF_CLI" nud permanent
}
# raw DST-MAC ARGS...: echo requests in frames built by hand to DST-MAC
# (rawframes.py exchange: the reply's MACs must be the request's swapped).
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
raw() {
	local dst=$1
	shift
	tb_cli python3 "$RR_LIB/rawframes.py" exchange --ifname "$TB_IF_CLI" \
		--src-mac "$TB_MAC_CLI" --dst-mac "$dst" --src-ip "$TB_IP4_CLI" \
		--dst-ip "$TB_IP4_SRV" --dport 7 --func echo --count 10 \
		--min-size 0 --max-size 1400 --timeout 1 "$@"
}
# move MAC WHAT: set the server's address to MAC, the client's
# neighbour entries after it, and check that reqrouter follows.
move() {
	local mac=$1 what=$2
	link_mark
	tb_srv ip link set dev "$TB_IF_SRV" address "$mac" ||
		die "cannot set $TB_IF_SRV's address to $mac"
	client_neigh "$mac" || die "cannot point the client's neighbours at $mac"
	check "$what: a log line says 'MAC address' and $mac within 5 s" \
		link_wait_line 5 "MAC address" "$mac"
	check_eq "$what: an echo request answered within 3 s" answered \
		"$(link_echo "$TB_IP4_SRV" 100 --tries 3)"
	check "$what: then 200 IPv4 + 200 IPv6 requests to echo and reverse, all answered" \
		serves 200 --timeout 2
	check_eq "$what: status has the new address" "$mac" \
		"$(link_status 'd.get("mac", "").lower()')"
}

link_start main || die "reqrouter -i $TB_IF_SRV did not start"
check_eq "start: status has the interface's MAC address" "$OLD" \
	"$(link_status 'd.get("mac", "").lower()')"
check "before: 100 IPv4 + 100 IPv6 requests to echo and reverse answered" \
	serves 100 --timeout 2

say "== the address changed to $NEW while serving"
move "$NEW" changed
check "changed: replies come from $NEW (10 frames built by hand)" raw "$NEW"
check "changed: frames to the old address $OLD are not answered" \
	raw "$OLD" --expect-none
check_eq "changed: one log line about it" 1 "$(link_lines "MAC address" "$NEW")"
check_eq "changed: reqrouter_link_changes_total{change=\"mac\"}" 1 \
	"$(link_changes mac)"
check "changed: still running" link_alive

say "== changed back to $OLD"
move "$OLD" back
check "back: replies come from $OLD" raw "$OLD"
check_eq "back: one log line about it" 1 "$(link_lines "MAC address" "$OLD")"
check_eq "back: reqrouter_link_changes_total{change=\"mac\"}" 2 \
	"$(link_changes mac)"

rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
check "SIGTERM: no XDP program left" eval '! xdp_on_srv'
finish
