#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter follows its interface's RX queue count while serving (issue
# 41; `ethtool -L`). The bed: the veth made with 4 queues on both ends,
# nothing on the client end (TB_PEER_XDP=0), then set to 1 RX queue with
# `ethtool -L IF rx 1` and the client's end to 1 TX queue (a veth takes
# a native XDP program only while it has no fewer RX queues than its
# peer has TX queues: with 4 TX queues on the client the program would
# go on in SKB mode). reqrouter runs with the default settings:
#  - started with the default queues on the 1 RX queue: status has
#    "queues":1 and "rx_queues":1, health ready, every request answered;
#  - `ethtool -L IF rx 4` while serving: within 5 s one log line says
#    "RX queues 1 -> 4"; status has "rx_queues":4 and a "restart_needed"
#    string, health is not ready with a why naming "restart",
#    reqrouter_link_changes_total{change="rx_queues"} is 1, and the queue
#    it serves still answers (the client's one TX queue sends all to it);
#  - `ethtool -L IF rx 1` again before any restart: one line says "RX
#    queues 4 -> 1", no restart is needed any more (no restart_needed,
#    health ready), the counter is at 2, every request answered;
#  - at 4 RX queues again, a restart (SIGTERM, exit 0) serves all four:
#    status "queues":4, "rx_queues":4, no restart_needed, health ready;
#    with the client's end at 4 TX queues requests arrive on several
#    queues and all are answered;
#  - going down while serving 4 queues: this kernel (6.18) refuses
#    `ethtool -L IF rx 1` itself while AF_XDP sockets are bound to the
#    queues it would remove ("requested channel counts are too low for
#    existing zerocopy AF_XDP sockets", copy mode too), so reqrouter is
#    never told; the test then checks that it goes on unchanged (no line,
#    "rx_queues":4, ready, requests answered). On a kernel that takes the
#    change the checks are the contract's: one "RX queues 4 -> 1" line,
#    requests answered, no restart_needed, health ready;
#  - so going down while serving is tested where the kernel allows it:
#    reqrouter started with -q 1 on the 4 RX queues, then `ethtool -L IF
#    rx 1`: one "RX queues 4 -> 1" line, the counter at 1, every request
#    answered, no restart_needed, health ready, "rx_queues":1.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
command -v ethtool >/dev/null || die "ethtool is needed to change the RX queues"

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 4
source tests/integration/lib/link.sh

# channels SIDE rx|tx N: ethtool -L on the server's or the client's end.
channels() {
	if [ "$1" = srv ]; then
		tb_srv ethtool -L "$TB_IF_SRV" "$2" "$3"
	else
		tb_cli ethtool -L "$TB_IF_CLI" "$2" "$3"
	fi
}
queues() { # "queues rx_queues restart_needed" from status
	link_status '"%s %s %s" % (d.get("queues"), d.get("rx_queues"),
		"restart_needed" if isinstance(d.get("restart_needed"), str) and
		d["restart_needed"] else ("-" if "restart_needed" not in d
			else "restart_needed=%r" % (d["restart_needed"],)))'
}
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
queues_redirected() { # how many RX queues the XDP program redirected from
	local q n=0
	rr_metrics_fresh "$M"
	for q in 0 1 2 3; do
		[ "$(metric "$M" reqrouter_xdp_packets_total "queue=\"$q\"" \
			'verdict="redirect"')" -gt 0 ] && n=$((n + 1))
	done
	echo "$n"
}

channels srv rx 1 || die "cannot set $TB_IF_SRV to 1 RX queue"
channels cli tx 1 || die "cannot set $TB_IF_CLI to 1 TX queue"
check_eq "bed: the server's end has 1 RX queue in sysfs" 1 \
	"$(tb_srv ls "/sys/class/net/$TB_IF_SRV/queues" | grep -c '^rx-')"

say "== started with the default queues on 1 RX queue"
link_start one || die "reqrouter -i $TB_IF_SRV did not start"
check_eq "bed: the XDP program is native" native "$(link_status 'd["xdp_mode"]')"
check_eq "start: status queues, rx_queues, restart_needed" "1 1 -" "$(queues)"
check_eq "start: health" ready "$(link_health)"
check "start: 100 IPv4 + 100 IPv6 requests answered" serves 100 --timeout 2

say "== ethtool -L rx 4 while serving 1 queue"
link_mark
channels srv rx 4 || die "cannot set $TB_IF_SRV to 4 RX queues"
check "up: a log line says 'RX queues 1 -> 4' within 5 s" \
	link_wait_line 5 "RX queues 1 -> 4"
check_eq "up: status queues, rx_queues, restart_needed" \
	"1 4 restart_needed" "$(queues)"
check "up: health not ready, why naming 'restart' (within 3 s)" \
	wait_for 3 link_not_ready restart
say "    health: $LINK_HEALTH"
check_eq "up: reqrouter_link_changes_total{change=\"rx_queues\"}" 1 \
	"$(link_changes rx_queues)"
check_eq "up: the queue it serves still answers" answered \
	"$(link_echo "$TB_IP4_SRV" 100 --tries 3)"
check "up: 100 IPv4 + 100 IPv6 requests answered" serves 100 --timeout 2
check_eq "up: one line about it" 1 "$(link_lines "RX queues 1 -> 4")"

say "== ethtool -L rx 1 again, before any restart"
link_mark
channels srv rx 1 || die "cannot set $TB_IF_SRV back to 1 RX queue"
check "back: a log line says 'RX queues 4 -> 1' within 5 s" \
	link_wait_line 5 "RX queues 4 -> 1"
link_wait_ready 3
check "back: health ready again, no restart needed ($LINK_HEALTH)" \
	test "$LINK_HEALTH" = ready
check_eq "back: status queues, rx_queues, restart_needed" "1 1 -" "$(queues)"
check_eq "back: reqrouter_link_changes_total{change=\"rx_queues\"}" 2 \
	"$(link_changes rx_queues)"
check "back: 100 IPv4 + 100 IPv6 requests answered" serves 100 --timeout 2
check_eq "back: one line about it" 1 "$(link_lines "RX queues 4 -> 1")"

say "== at 4 RX queues, a restart serves all four"
link_mark
channels srv rx 4 || die "cannot set $TB_IF_SRV to 4 RX queues"
check "at 4 again: a log line says 'RX queues 1 -> 4' within 5 s" \
	link_wait_line 5 "RX queues 1 -> 4"
rr_kill_wait TERM 5
check_eq "restart: SIGTERM exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2
link_start four || die "reqrouter -i $TB_IF_SRV did not start again"
check_eq "restart: the XDP program is native" native "$(link_status 'd["xdp_mode"]')"
check_eq "restart: status queues, rx_queues, restart_needed" "4 4 -" "$(queues)"
check_eq "restart: health" ready "$(link_health)"
channels cli tx 4 || die "cannot set $TB_IF_CLI to 4 TX queues"
check "restart: 200 IPv4 + 200 IPv6 requests answered" serves 200 --timeout 2
n=$(queues_redirected)
check "restart: requests came in on several RX queues ($n of 4)" test "$n" -ge 2

say "== ethtool -L rx 1 while serving 4 queues"
channels cli tx 1 || die "cannot set $TB_IF_CLI back to 1 TX queue"
link_wait_ready 3 # the veth's carrier goes off and on with ethtool -L
link_mark
if channels srv rx 1 >"$RR_TMP/ethtool.out" 2>&1; then
	say "    the kernel took it"
	check "down: a log line says 'RX queues 4 -> 1' within 5 s" \
		link_wait_line 5 "RX queues 4 -> 1"
	link_wait_ready 3
	check "down: health ready, no restart needed ($LINK_HEALTH)" \
		test "$LINK_HEALTH" = ready
	check_eq "down: status queues, rx_queues, restart_needed" "4 1 -" \
		"$(queues)"
	check "down: 200 IPv4 + 200 IPv6 requests answered" serves 200 --timeout 2
	check_eq "down: one line about it" 1 "$(link_lines "RX queues 4 -> 1")"
else
	say "    the kernel refuses it while AF_XDP sockets are bound to queues 1-3:"
	sed 's/^/      /' "$RR_TMP/ethtool.out"
	check_eq "refused: the interface keeps 4 RX queues" 4 \
		"$(tb_srv ls "/sys/class/net/$TB_IF_SRV/queues" | grep -c '^rx-')"
	check "refused: 200 IPv4 + 200 IPv6 requests answered" serves 200 --timeout 2
	check_eq "refused: no line about RX queues" 0 "$(link_lines "RX queues")"
	check_eq "refused: status queues, rx_queues, restart_needed" "4 4 -" \
		"$(queues)"
	check_eq "refused: health" ready "$(link_health)"
fi
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2

say "== -q 1 on 4 RX queues, then ethtool -L rx 1 while serving"
[ "$(tb_srv ls "/sys/class/net/$TB_IF_SRV/queues" | grep -c '^rx-')" = 4 ] ||
	channels srv rx 4 || die "cannot set $TB_IF_SRV to 4 RX queues"
link_start q1 -q 1 || die "reqrouter -i $TB_IF_SRV -q 1 did not start"
check_eq "-q 1: status queues, rx_queues, restart_needed" "1 4 -" "$(queues)"
check_eq "-q 1: health" ready "$(link_health)"
link_mark
channels srv rx 1 || die "cannot set $TB_IF_SRV to 1 RX queue under -q 1"
check "-q 1 down: a log line says 'RX queues 4 -> 1' within 5 s" \
	link_wait_line 5 "RX queues 4 -> 1"
link_wait_ready 3
check "-q 1 down: health ready, no restart needed ($LINK_HEALTH)" \
	test "$LINK_HEALTH" = ready
check_eq "-q 1 down: status queues, rx_queues, restart_needed" "1 1 -" \
	"$(queues)"
check_eq "-q 1 down: reqrouter_link_changes_total{change=\"rx_queues\"}" 1 \
	"$(link_changes rx_queues)"
check "-q 1 down: 200 IPv4 + 200 IPv6 requests answered" serves 200 --timeout 2
check_eq "-q 1 down: one line about it" 1 "$(link_lines "RX queues 4 -> 1")"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
check "SIGTERM: no XDP program left" eval '! xdp_on_srv'
finish
