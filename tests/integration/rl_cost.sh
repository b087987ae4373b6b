#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Rate limiting by cost (rate_limit_us, issue 44), on the bare defaults
# (TB_PEER_XDP=0): the work function (functions/work.c, spins the
# microseconds a request asks for) with rate_limit_us = 10000, 10 ms of
# its time a second per /24, of which one source may spend half. For 3 s
# a client at 198.18.1.2 asks for 1000 us of work 50 times a second
# (50 ms/s, ten times its share) while another, at 198.18.33.2 (another
# /24 and /20), asks the same function for 1 us as often:
#  - the expensive client is limited: at most 40 % of its requests
#    answered (its budget allows some 20 of 150), the rest dropped in
#    XDP as rate_limited;
#  - the cheap one, whose calls cost far less than its share, gets every
#    request answered: charged for its own calls only.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
rr_bed 2
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/cost.conf
tb_cli ip addr add 198.18.1.2/24 dev "$TB_IF_CLI" || die "cannot add 198.18.1.2"
tb_cli ip addr add 198.18.33.2/24 dev "$TB_IF_CLI" || die "cannot add 198.18.33.2"
printf '[function work]\nenabled = yes\nmax_us = 2000\nrate_limit_us = 10000\n' >"$CONF"

rr_start cost -c "$CONF" -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter did not start"
check "start-up: the cost limit said" \
	grep -qF "cost limit for 'work': 10000 us of its time a second per source prefix" "$RR_ERR"

say "== 3 s: 1000 us of work at 50/s from 198.18.1.2, 1 us at 50/s from 198.18.33.2"
tb_cli python3 "$RR_LIB/rl_flood.py" --dst "$TB_IP4_SRV" --port 9010 \
	--duration 3 --flood 198.18.1.2 --flood-rate 50 --flood-payload 1000 \
	--client 198.18.33.2 --client-rate 50 --client-payload 1 \
	>"$RR_TMP/cost.json" || die "the clients did not run"
sed 's/^/    /' "$RR_TMP/cost.json"
r() { json_eval "$1" "$RR_TMP/cost.json"; }
esent=$(r 'd["flood"]["sent"]')
eans=$(r 'd["flood"]["answers"]')
csent=$(r 'd["client"]["sent"]')
cans=$(r 'd["client"]["answers"]')
check "the expensive client is limited: at most 40 % answered (${eans:-none} of ${esent:-none})" \
	test $((${eans:-999} * 100)) -le $((${esent:-0} * 40))
check "it got its burst at least (${eans:-none})" test "${eans:-0}" -ge 3
check_eq "the cheap client of the same function answered in full" \
	"${csent:-x}" "${cans:-y}"
rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
limited=$(metric "$M" reqrouter_rate_limited_packets_total 'function="work"')
check "the rest counted as work's rate-limited requests (${limited:-none})" \
	test "${limited:-0}" -ge $((${esent:-0} - ${eans:-0} - 5))
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
