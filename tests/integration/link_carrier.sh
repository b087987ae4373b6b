#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter follows its interface going down and up while serving (issue
# 41). On the 1-queue bed with nothing on the client end (TB_PEER_XDP=0)
# and the default settings:
#  - `ip link set IF down` while serving: within 3 s a log line says
#    "link down"; health (reqrouterctl health, the default config has no
#    /healthz) says not ready, why naming "down", and exits 1; status
#    says ready false too; the XDP program stays attached and reqrouter
#    keeps running (still alive 3 s later);
#  - `ip link set IF up` (the client's end up too): a log line says
#    "link up", health is ready again within 2 s, and every request to
#    echo and reverse, IPv4 and IPv6, is answered again;
#  - reqrouter_link_changes_total counts the down and the up
#    ({change="down"} and {change="up"} 1 each); a second down and up
#    makes them 2 each, and is followed the same way.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 1
source tests/integration/lib/link.sh

# down_up N: the server's link down and up again, the Nth time.
down_up() {
	local n=$1 what="down #$1" rc
	link_mark
	tb_srv ip link set dev "$TB_IF_SRV" down ||
		die "cannot set $TB_IF_SRV down"
	check "$what: a log line says 'link down' within 3 s" \
		link_wait_line 3 "link down"
	check "$what: health says not ready, why naming 'down'" \
		wait_for 1 link_not_ready down
	say "    health: $LINK_HEALTH"
	"$CTL" --control "$SOCK" health >/dev/null 2>&1
	rc=$?
	check_eq "$what: reqrouterctl health exits 1" 1 "$rc"
	check_eq "$what: status says not ready" False "$(link_status 'd["ready"]')"
	check "$what: the XDP program stays attached" xdp_on_srv
	sleep 3
	check "$what: reqrouter still runs 3 s later" link_alive

	what="up #$n"
	tb_srv ip link set dev "$TB_IF_SRV" up ||
		die "cannot set $TB_IF_SRV up"
	tb_cli ip link set dev "$TB_IF_CLI" up
	link_wait_ready 5
	check "$what: health ready again within 2 s (${LINK_MS} ms: $LINK_HEALTH)" \
		test "$LINK_HEALTH" = ready -a "$LINK_MS" -le 2000
	check "$what: a log line says 'link up'" link_wait_line 1 "link up"
	check_eq "$what: an echo request answered within 3 s" answered \
		"$(link_echo "$TB_IP4_SRV" 100 --tries 3)"
	check "$what: then 200 IPv4 + 200 IPv6 requests to echo and reverse, all answered" \
		serves 200 --timeout 2
	check_eq "$what: reqrouter_link_changes_total{change=\"down\"} and {change=\"up\"}" \
		"$n $n" "$(link_changes down) $(link_changes up)"
}

link_start main || die "reqrouter -i $TB_IF_SRV did not start"
check_eq "start: health" ready "$(link_health)"
check "before: 100 IPv4 + 100 IPv6 requests to echo and reverse answered" \
	serves 100 --timeout 2
check_eq "start: no link change counted yet (down, up)" "0 0" \
	"$(link_changes down) $(link_changes up)"

say "== the link down and up while serving"
down_up 1
say "== and once more"
down_up 2

rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
check "SIGTERM: no XDP program left" eval '! xdp_on_srv'
finish
