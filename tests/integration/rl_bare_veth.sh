#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The slip on a bare veth (issue 42): a veth whose peer runs no XDP
# program drops the XDP_TX frames sent to it, so the slip reply the XDP
# program builds is lost there; the workers send it instead, as they
# answer every other request there. On the bare defaults (the 2-queue bed
# with nothing on the client's end, TB_PEER_XDP=0; tier auto; dns with
# only its zone: rate_limit 200 replies/s per /24, burst 200, slip 2):
#  - 3 s of 4000 queries/s from eight addresses of one /24 (kernel
#    sockets, lib/rl_flood.py) get at most rate x time + burst answers
#    (5 % slack), and about one limited query in two gets the slip, a
#    truncated reply (TC) the client's kernel took (its UDP checksum
#    right); a client in another /24 at 50/s gets at least 99 % answered;
#  - the slips left from the workers: counted as redirect/slip in
#    reqrouter_xdp_packets_total (handed to a worker marked as a slip),
#    none as tx/slip (XDP_TX), and in reqrouter_rate_limit_slips_total;
#  - with an XDP program on the client's end the slips come from XDP
#    again (tx/slip grows, redirect/slip does not), and without it once
#    more from the workers.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 2
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/dns.conf
SRCS=()
for i in 2 3 4 5 6 7 8 9; do
	tb_cli ip addr add "198.18.1.$i/24" dev "$TB_IF_CLI" ||
		die "cannot add 198.18.1.$i"
	SRCS+=(--flood "198.18.1.$i")
done

# flood SECONDS: the flood and the client; JSON in $RR_TMP/flood.json.
flood() {
	tb_cli timeout 30 python3 "$RR_LIB/rl_flood.py" --dst "$TB_IP4_SRV" \
		--port 53 --duration "$1" "${SRCS[@]}" --flood-rate 4000 \
		--client "$TB_IP4_CLI" --client-rate 50 >"$RR_TMP/flood.json" ||
		die "the flood did not run"
	sed 's/^/    /' "$RR_TMP/flood.json"
}
f() { json_eval "$1" "$RR_TMP/flood.json"; }
xdp_slips() { # VERDICT: slips counted by the XDP program that way
	metric "$M" reqrouter_xdp_packets_total "verdict=\"$1\"" \
		'reason="slip"'
}

printf '[function dns]\nzone = example.com %s/configs/example.zone\n' \
	"$PWD" >"$CONF"
rr_start bare -c "$CONF" -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"

say "== 3 s of flood from 198.18.1.0/24 at 4000/s, a client at 50/s"
flood 3
read -r secs sent ans slips < <(f '"%s %s %s %s" % (d["seconds"], d["flood"]["sent"], d["flood"]["answers"], d["flood"]["slips"])')
max=$(json_eval "int((200 * $secs + 200) * 1.05)" - <<<'{}')
check "the flood sent at least 9000 queries ($sent)" test "$sent" -ge 9000
check "the flood got at most $max answers ($ans)" test "$ans" -le "$max"
lim=$((sent - ans))
check "about one limited query in two got the slip ($slips of $lim)" \
	test $((slips * 10)) -ge $((lim * 3)) -a $((slips * 10)) -le $((lim * 7))
read -r csent cans < <(f '"%s %s" % (d["client"]["sent"], d["client"]["answers"])')
check "the client got at least 99 % answered ($cans of $csent)" \
	test $((cans * 100)) -ge $((csent * 99))
rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
red=$(xdp_slips redirect)
tx=$(xdp_slips tx)
check "the slips went to the workers: redirect/slip ${red:-none} >= $slips > 0" \
	test "${red:-0}" -ge "$slips" -a "$slips" -gt 0
check_eq "none left by XDP_TX, lost on the bare veth: tx/slip" 0 "${tx:-none}"
counted=$(metric "$M" reqrouter_rate_limit_slips_total 'function="dns"')
check "reqrouter_rate_limit_slips_total counts them (${counted:-none})" \
	test "${counted:-0}" -ge "$slips"

say "== an XDP program on the client's end: the slips from XDP"
rr_peer_xdp_on
red0=$red tx0=$tx
flood 2
read -r slips < <(f 'd["flood"]["slips"]')
rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
red=$(xdp_slips redirect)
tx=$(xdp_slips tx)
check "the flood got slips ($slips)" test "$slips" -gt 0
check "they left by XDP_TX: tx/slip grew by $((tx - tx0)) >= $slips" \
	test $((tx - tx0)) -ge "$slips"
check_eq "none went to the workers: redirect/slip" "$red0" "$red"

say "== the client's end bare again: the workers slip"
tb_cli ip link set dev "$TB_IF_CLI" xdpdrv off
sleep 1.2
red0=$red tx0=$tx
flood 2
read -r slips < <(f 'd["flood"]["slips"]')
rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
red=$(xdp_slips redirect)
tx=$(xdp_slips tx)
check "the flood got slips ($slips)" test "$slips" -gt 0
check "from the workers: redirect/slip grew by $((red - red0)) >= $slips" \
	test $((red - red0)) -ge "$slips"
check_eq "none by XDP_TX" "$tx0" "$tx"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
