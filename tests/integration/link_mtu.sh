#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouter follows its interface's MTU while serving (issue 41), and says
# how big a request a UMEM frame lets it serve. On the 1-queue bed with
# nothing on the client end (TB_PEER_XDP=0); requests are sent with DF
# set (IP_MTU_DISCOVER = IP_PMTUDISC_DO, lib/link_probe.py), so a request
# arrives whole or not at all:
#  - raised: with the default settings (native XDP), the log has a line
#    "requests up to" at start and status "mtu":1500; both ends raised to
#    3000 while serving: within 5 s one log line says "MTU 1500 -> 3000",
#    a 2500-byte echo request is answered over IPv4 and IPv6, and
#    requests of up to 2900 bytes to echo and reverse all are; status has
#    "mtu":3000 and reqrouter_link_changes_total{change="mtu"} is 1;
#    lowered back to 1500: one "MTU 3000 -> 1500" line, the counter at 2;
#  - the frame limit: in SKB (generic) mode (-S) on an interface whose MTU
#    is 9000, set before the start, the log has a "requests up to" line;
#    a 1000-byte echo request is answered, a 5000-byte one (bigger than a
#    UMEM frame) is not, and the XDP program counts it as
#    reqrouter_xdp_packets_total{queue="0",verdict="drop",
#    reason="frame_too_big"} (dropped there, so the AF_XDP socket drops
#    nothing). On a veth only SKB mode gets there: a native XDP program
#    without fragments caps the peer's MTU at 3506 (and a native attach
#    with the peer at 9000 is refused), while the generic one takes
#    MTU 9000 on both ends (this kernel: 6.18);
#  - lowered: the dns function (a zone with a ~700-byte TXT RRset,
#    rate_limit = 0, cache = no) answers a TXT query with EDNS 1232 in
#    full at MTU 1500; both ends lowered to 600 while serving: within 5 s
#    a log line says "MTU 1500 -> 600", the same query gets a truncated
#    answer (TC) that fits 600 bytes, status has "mtu":600 and the
#    counter is 1. A fresh start at MTU 600 answers the same (the
#    behaviour followed is the one reqrouter has when it starts there).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 1
source tests/integration/lib/link.sh

# mtu N: both ends' MTU, the server's first.
mtu() {
	tb_srv ip link set dev "$TB_IF_SRV" mtu "$1" &&
		tb_cli ip link set dev "$TB_IF_CLI" mtu "$1"
}
status_mtu() { link_status 'd.get("mtu")'; }

say "== raised 1500 -> 3000 while serving (the default settings)"
link_start raised || die "reqrouter -i $TB_IF_SRV did not start"
check_eq "start: native XDP" native "$(link_status 'd["xdp_mode"]')"
check "start: the log says how big a request it serves ('requests up to')" \
	link_has_line "requests up to"
grep -F "requests up to" "$RR_ERR" | sed 's/^/    /'
check_eq "start: status mtu" 1500 "$(status_mtu)"
check_eq "start: a 1400-byte echo request answered" answered \
	"$(link_echo "$TB_IP4_SRV" 1400)"
link_mark
mtu 3000 || die "cannot set the MTU to 3000"
check "raised: a log line says 'MTU 1500 -> 3000' within 5 s" \
	link_wait_line 5 "MTU 1500 -> 3000"
check_eq "raised: a 2500-byte echo request answered (IPv4)" answered \
	"$(link_echo "$TB_IP4_SRV" 2500 --tries 3)"
check_eq "raised: a 2500-byte echo request answered (IPv6)" answered \
	"$(link_echo "$TB_IP6_SRV" 2500 --tries 3)"
check "raised: 100 IPv4 + 100 IPv6 requests of 0-2900 bytes answered" \
	serves 100 --timeout 2 --max-size 2900
check_eq "raised: status mtu" 3000 "$(status_mtu)"
check_eq "raised: reqrouter_link_changes_total{change=\"mtu\"}" 1 \
	"$(link_changes mtu)"
check_eq "raised: one line about it" 1 "$(link_lines "MTU 1500 -> 3000")"
link_mark
mtu 1500 || die "cannot set the MTU back to 1500"
check "back: a log line says 'MTU 3000 -> 1500' within 5 s" \
	link_wait_line 5 "MTU 3000 -> 1500"
check_eq "back: a 1400-byte echo request answered" answered \
	"$(link_echo "$TB_IP4_SRV" 1400 --tries 3)"
check_eq "back: reqrouter_link_changes_total{change=\"mtu\"}" 2 \
	"$(link_changes mtu)"
check_eq "back: status mtu" 1500 "$(status_mtu)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2

say "== the frame limit: -S on MTU 9000"
mtu 9000 || die "cannot set the MTU to 9000 (no XDP program attached)"
link_start frame -S || die "reqrouter -S did not start at MTU 9000"
check_eq "frame: SKB mode" skb "$(link_status 'd["xdp_mode"]')"
check_eq "frame: status mtu" 9000 "$(status_mtu)"
check "frame: the log says how big a request it serves ('requests up to')" \
	link_has_line "requests up to"
grep -F "requests up to" "$RR_ERR" | sed 's/^/    /'
check_eq "frame: a 1000-byte echo request answered" answered \
	"$(link_echo "$TB_IP4_SRV" 1000)"
check_eq "frame: a 5000-byte echo request not answered" none \
	"$(link_echo "$TB_IP4_SRV" 5000)"
check "frame: counted as drop/frame_too_big on queue 0" test \
	"$(wait_metric "$M" 3 reqrouter_xdp_packets_total 'queue="0"' \
		'verdict="drop"' 'reason="frame_too_big"' -- 1)" -ge 1
check_eq "frame: the AF_XDP socket dropped nothing (reqrouter_xsk_rx_dropped_total)" \
	0 "$(metric "$M" reqrouter_xsk_rx_dropped_total)"
check_eq "frame: a 1000-byte echo request still answered" answered \
	"$(link_echo "$TB_IP4_SRV" 1000)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2

say "== lowered 1500 -> 600 while serving (dns)"
mtu 1500 || die "cannot set the MTU back to 1500"
LONG=$(for i in $(seq 10 22); do
	printf '"long-text-%s-xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx" ' "$i"
done)
cat >"$RR_TMP/link.zone" <<EOF
\$ORIGIN example.com.
\$TTL 3600
@ IN SOA ns1 hostmaster 1 7200 3600 1209600 300
@ IN NS ns1
ns1 IN A 192.0.2.53
long IN TXT $LONG
EOF
cat >"$RR_TMP/dns.conf" <<EOF
[function dns]
zone = example.com $RR_TMP/link.zone
rate_limit = 0
cache = no
EOF
link_start lowered -c "$RR_TMP/dns.conf" ||
	die "reqrouter with the dns function did not start"
read -r kind len < <(link_dns "$TB_IP4_SRV" long.example.com)
check "at 1500: the ~700-byte TXT answer comes in full ($kind $len)" \
	test "$kind" = full -a "${len:-0}" -gt 572
link_mark
mtu 600 || die "cannot set the MTU to 600"
check "lowered: a log line says 'MTU 1500 -> 600' within 5 s" \
	link_wait_line 5 "MTU 1500 -> 600"
read -r kind len < <(link_dns "$TB_IP4_SRV" long.example.com)
check "lowered: the answer is truncated (TC) to fit 600 bytes ($kind $len)" \
	test "$kind" = tc -a "${len:-9999}" -le 572
check_eq "lowered: status mtu" 600 "$(status_mtu)"
check_eq "lowered: reqrouter_link_changes_total{change=\"mtu\"}" 1 \
	"$(link_changes mtu)"
check_eq "lowered: one line about it" 1 "$(link_lines "MTU 1500 -> 600")"
check_eq "lowered: a 500-byte echo request answered" answered \
	"$(link_echo "$TB_IP4_SRV" 500)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2
link_start fresh -c "$RR_TMP/dns.conf" ||
	die "reqrouter with the dns function did not start at MTU 600"
read -r kind len < <(link_dns "$TB_IP4_SRV" long.example.com)
check "fresh start at 600: the answer is truncated the same way ($kind $len)" \
	test "$kind" = tc -a "${len:-9999}" -le 572
rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
check "SIGTERM: no XDP program left" eval '! xdp_on_srv'
finish
