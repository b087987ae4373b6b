#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The rate limiter's dry run (rate_limit_mode = log, issue 44), on the
# bare defaults (TB_PEER_XDP=0) but for dns's limit, 50 queries/s per
# prefix, and every request sampled into the heavy hitters:
#  - in log mode a flood of 400 queries/s from four addresses of
#    198.18.1.0/24 (each over a source's half of the /24's budget, so
#    that the /24 is what refuses) gets every query answered (no slip), the queries over
#    the limit are counted in reqrouter_rate_limit_would_limit_packets_total
#    (none in reqrouter_rate_limited_packets_total), reqrouterctl top
#    marks the flood's /24 "would be rate-limited (log)" (and not
#    rate-limited), and the metrics mark it rate_limit="would_limit";
#  - reloaded to rate_limit_mode = drop, the same flood gets at most
#    rate x time + burst answers (5 % slack), the rest limited.
# A client in the bed's own /24 at 20/s beside it is answered in both.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
FLOOD=$RR_LIB/rl_flood.py
rr_bed 2
M=$RR_TMP/metrics.prom
SOCK=$RR_TMP/ctl.sock
CONF=$RR_TMP/rl.conf
SRCS=()
for i in 2 3 4 5; do
	tb_cli ip addr add "198.18.1.$i/24" dev "$TB_IF_CLI" ||
		die "cannot add 198.18.1.$i"
	SRCS+=(--flood "198.18.1.$i")
done

# conf MODE: dns at 50/s per prefix in MODE, every request sampled.
conf() {
	printf '[function dns]\nzone = example.com %s/configs/example.zone\nrate_limit = 50\nrate_limit_mode = %s\nheavy_hitters_sample = 1\n' \
		"$PWD" "$1" >"$CONF"
}
# flood NAME: 3 s at 400/s from 198.18.1.2-5 beside a client at 20/s (JSON
# in $RR_TMP/NAME.json); top, as JSON and as text, 2 s in.
flood() {
	tb_cli_bg python3 "$FLOOD" --dst "$TB_IP4_SRV" --port 53 --duration 3 \
		"${SRCS[@]}" --flood-rate 400 --client "$TB_IP4_CLI" \
		--client-rate 20 >"$RR_TMP/$1.json"
	local fpid=$TB_PID
	RR_BG_PIDS+=("$fpid")
	sleep 2
	"$CTL" --control "$SOCK" --json top dns >"$RR_TMP/$1.top" 2>&1
	"$CTL" --control "$SOCK" top dns >"$RR_TMP/$1.toptxt" 2>&1
	rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
	cp "$M" "$RR_TMP/$1.prom"
	wait "$fpid" || bad "the flood did not run"
	sed 's/^/    /' "$RR_TMP/$1.json"
}
f() { json_eval "$2" "$RR_TMP/$1.json"; }
# marked NAME KEY: whether top marks the flood's /24 with KEY.
marked() {
	json_eval '[e.get("'"$2"'", False) for e in d["functions"][0]["prefixes"]["top"] if e["prefix"] == "198.18.1.0/24"] == [True]' \
		"$RR_TMP/$1.top"
}

conf log
rr_start log -c "$CONF" -i "$TB_IF_SRV" -q 2 --metrics-file "$M" \
	--control "$SOCK" || die "reqrouter did not start"
check "start-up: the dry run said" \
	grep -qF "a dry run (rate_limit_mode = log)" "$RR_ERR"

say "== rate_limit_mode = log: 3 s at 400/s from four addresses, limit 50/s"
flood log
sent=$(f log 'd["flood"]["sent"]')
ans=$(f log 'd["flood"]["answers"]')
slips=$(f log 'd["flood"]["slips"]')
check "the flood sent more than the limit allows (${sent:-none})" \
	test "${sent:-0}" -ge 1000
check_eq "every query of the flood answered" "${sent:-x}" "${ans:-y}"
check_eq "none slipped" 0 "${slips:-x}"
check_eq "the client answered in full" True \
	"$(f log 'd["client"]["answers"] == d["client"]["sent"] > 0')"
rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
would=$(metric "$M" reqrouter_rate_limit_would_limit_packets_total 'function="dns"')
limited=$(metric "$M" reqrouter_rate_limited_packets_total 'function="dns"')
check "would-limit counted the queries over the limit (${would:-none} >= $((sent - 50 * 4 - 50)))" \
	test "${would:-0}" -ge $((sent - 50 * 4 - 50))
check_eq "none counted as limited" 0 "${limited:-x}"
check_eq "top: the flood's /24 would be limited" True "$(marked log would_limit)"
check_eq "top: and is not marked limited" False "$(marked log limited)"
check "top's text: 'would be rate-limited (log)' on 198.18.1.0/24" \
	grep -qE '^  198\.18\.1\.0/24 .*would be rate-limited \(log\)' "$RR_TMP/log.toptxt"
check "metrics: the heavy hitter marked rate_limit=\"would_limit\"" \
	grep -qE '^reqrouter_heavy_hitter_requests_per_second\{.*source="198\.18\.1\.0/24",rate_limit="would_limit"\}' \
	"$RR_TMP/log.prom"
"$CTL" --control "$SOCK" stats >"$RR_TMP/stats.txt" 2>&1
check "reqrouterctl stats: the dry run and what it would limit" \
	grep -qE '^  rate limit 50 replies/s per prefix \(log: a dry run\):.* would_limit [1-9]' \
	"$RR_TMP/stats.txt"

say "== reload to rate_limit_mode = drop: the same flood"
conf drop
"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.out" 2>&1
check_eq "reload: exit 0" 0 $?
flood drop
sent=$(f drop 'd["flood"]["sent"]')
ans=$(f drop 'd["flood"]["answers"]')
secs=$(f drop 'd["seconds"]')
max=$(json_eval "int((50 * ${secs:-0} + 50) * 1.05)" - <<<'{}')
check "the flood got at most $max answers (${ans:-none} of ${sent:-none})" \
	test "${ans:-999999}" -le "$max"
check_eq "the client answered in full" True \
	"$(f drop 'd["client"]["answers"] == d["client"]["sent"] > 0')"
check_eq "top: the flood's /24 is limited" True "$(marked drop limited)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
