#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Who is calling, on the bed, with reqrouter's defaults (heavy hitters on,
# 1 request in 100 sampled, both tiers as they come): a skewed load to
# reverse from four addresses of the client (60 % from one, 15 % from
# each of two others in another /24, 10 % over IPv6). reqrouterctl top
# and the metrics must name the heavy source first, with about its share
# and a rate of the order of what was sent, the two /24s in order, at most
# RR_HH_TOPK series per function and kind, the sampling ratio and an
# error bound; top FUNCTION shows that function alone, an unknown one is
# refused. A reload to heavy_hitters_sample = 1 samples every request of
# reverse (and no other function's more); heavy_hitters = no turns it off
# for reverse, and its series go.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
LOAD=$RR_LIB/skewed_load.py

# The defaults, all of them: the in-kernel tier and the reply cache too.
RR_TIER=auto
RR_CACHE=yes
rr_bed 2
SOCK=/run/reqrouter/$TB_IF_SRV.sock
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/hh.conf
# Second addresses on the client, inside the test bed only: one more in
# the bed's /24, two in another, one more IPv6.
HEAVY=$TB_IP4_CLI
B1=198.18.1.2
B2=198.18.1.3
V6=fd00:7272::3
tb_cli ip addr add "$B1/24" dev "$TB_IF_CLI" || die "cannot add $B1"
tb_cli ip addr add "$B2/24" dev "$TB_IF_CLI" || die "cannot add $B2"
tb_cli ip -6 addr add "$V6/64" dev "$TB_IF_CLI" nodad ||
	die "cannot add $V6"

py() { json_eval "$@"; }
# is EXPR: true if the Python expression EXPR is.
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
is() { [ "$(py "$1" - <<<'{}')" = True ]; }
# load SECONDS RATE SRC:WEIGHT...: the skewed load to reverse; its JSON
# summary in $RR_TMP/load.json.
load() {
	local secs=$1 rate=$2 args=() s
	shift 2
	for s in "$@"; do args+=(--src "$s"); done
	tb_cli python3 "$LOAD" --dst "$TB_IP4_SRV" --dst6 "$TB_IP6_SRV" \
		--port 1232 --rate "$rate" --duration "$secs" "${args[@]}" \
		>"$RR_TMP/load.json"
}
top_json() { "$CTL" --control "$SOCK" --json top >"$RR_TMP/top.json"; }
# hh EXPR: EXPR over reverse's entry of the last top_json, as f.
hh() {
	py "(lambda f: $1)([f for f in d['functions'] if f['name'] == 'reverse'][0])" \
		"$RR_TMP/top.json"
}

: >"$CONF"
rr_start hh -c "$CONF" -i "$TB_IF_SRV" -q 2 --metrics-file "$M" ||
	die "reqrouter did not start"

say "== a skewed load: $HEAVY 60 %, $B1 and $B2 15 % each, $V6 10 %"
load 6 5000 "$HEAVY:12" "$B1:3" "$B2:3" "$V6:2" ||
	die "the load did not run"
sed 's/^/    /' "$RR_TMP/load.json"
sent=$(py 'd["total"]' "$RR_TMP/load.json")
secs=$(py 'd["seconds"]' "$RR_TMP/load.json")
check "the load sent at least 20000 requests ($sent)" test "$sent" -ge 20000
# The sketch is read every second: the last of the load is in after it.
sleep 1.5
top_json
check_eq "top --json: ok" True "$(py 'd["ok"]' "$RR_TMP/top.json")"
check_eq "top --json: reverse samples 1 in 100" 100 "$(hh 'f["sample"]')"
check_eq "top --json: the heaviest source is $HEAVY" "$HEAVY" \
	"$(hh 'f["sources"]["top"][0]["source"]')"
share=$(hh '"%.2f" % f["sources"]["top"][0]["share"]')
check "top --json: its share is about 60 % ($share)" \
	is "0.45 <= $share <= 0.75"
# A rate decayed over 10 s, from reqrouter's start: of the order of what
# was sent, never more.
want=$(py "round($sent * 0.6 / $secs)" - <<<'{}')
rate=$(hh 'f["sources"]["top"][0]["requests_per_s"]')
check "top --json: its rate ($rate/s) is of the order of the $want/s sent" \
	is "0.3 * $want <= $rate <= 1.2 * $want"
check_eq "top --json: the heavier /24 first, then the other" \
	"198.18.0.0/24 198.18.1.0/24" \
	"$(hh '" ".join(e["prefix"] for e in f["prefixes"]["top"][:2])')"
check_eq "top --json: at most 10 sources and 10 prefixes" True \
	"$(hh 'len(f["sources"]["top"]) <= 10 and len(f["prefixes"]["top"]) <= 10')"
check_eq "top --json: an error bound for each kind" True \
	"$(hh 'f["sources"]["error_bound"] >= 0 and f["prefixes"]["error_bound"] >= 0')"
check_eq "top --json: echo, unasked, is listed too, with nothing to show" True \
	"$(py '[f["sources"]["top"] for f in d["functions"] if f["name"] == "echo"] == [[]]' "$RR_TMP/top.json")"

"$CTL" --control "$SOCK" top reverse >"$RR_TMP/top.txt" 2>&1
check_eq "top reverse: exit 0" 0 $?
sed 's/^/    /' "$RR_TMP/top.txt"
check_eq "top reverse: the first source listed" "$HEAVY" \
	"$(awk '$1 == "source" { getline; print $1; exit }' "$RR_TMP/top.txt")"
check "top reverse: reverse alone" eval \
	"! grep -q '^echo ' '$RR_TMP/top.txt'"
"$CTL" --control "$SOCK" top nosuch >"$RR_TMP/nosuch.txt" 2>&1
check_eq "top nosuch: exit 1" 1 $?
check "top nosuch: says so" grep -q "no function 'nosuch' is served" \
	"$RR_TMP/nosuch.txt"

say "== the metrics"
check "the metrics file has reverse's heavy hitters" wait_for 3 \
	grep -q 'reqrouter_heavy_hitter_requests_per_second{port="1232"' "$M"
sed -n '/heavy_hitter/p' "$M" | grep -v '^#' | sed 's/^/    /'
hits() {
	metric_lines "$M" reqrouter_heavy_hitter_requests_per_second |
		grep -F "$1" | grep -F "$2"
}
check_eq "the heaviest source series of reverse is $HEAVY's" "$HEAVY" \
	"$(hits 'function="reverse"' 'kind="source"' | sort -t' ' -k2 -gr |
		head -n1 | sed -E 's/.*source="([^"]*)".*/\1/')"
n=$(hits 'function="reverse"' 'kind="source"' | wc -l)
check "at most 10 source series for reverse ($n)" test "$n" -ge 1 -a "$n" -le 10
n=$(hits 'function="reverse"' 'kind="prefix"' | wc -l)
check "at most 10 prefix series for reverse ($n)" test "$n" -ge 2 -a "$n" -le 10
check_eq "the sampling ratio of reverse" 0.01 \
	"$(metric_lines "$M" reqrouter_heavy_hitters_sample_ratio | grep -F 'function="reverse"' | awk '{ print $2 }')"
check "an error bound per kind" test "$(metric_lines "$M" \
	reqrouter_heavy_hitters_error_bound_requests_per_second |
	grep -cF 'function="reverse"')" = 2
if command -v promtool >/dev/null; then
	check "promtool accepts the metrics" eval "promtool check metrics <'$M' >'$RR_TMP/lint' 2>&1"
fi

say "== reload: heavy_hitters_sample = 1 for reverse"
cat >"$CONF" <<EOF
[function reverse]
heavy_hitters_sample = 1
EOF
"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.txt" 2>&1
check_eq "reload: exit 0" 0 $?
check "reload: applied" grep -q "heavy_hitters_sample: applied" \
	"$RR_TMP/reload.txt"
sleep 1.5
top_json
before=$(hh 'f["samples"]')
load 2 1000 "$B1:1" || die "the load did not run"
sent=$(py 'd["total"]' "$RR_TMP/load.json")
sleep 1.5
top_json
check_eq "top --json: reverse samples 1 in 1" 1 "$(hh 'f["sample"]')"
check_eq "every one of the $sent requests from $B1 sampled" "$sent" \
	"$(hh "f['samples'] - $before")"

say "== reload: heavy_hitters = no for reverse"
cat >"$CONF" <<EOF
[function reverse]
heavy_hitters = no
EOF
"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.txt" 2>&1
check_eq "reload: exit 0" 0 $?
sleep 1.5
top_json
check_eq "top --json: off for reverse" False "$(hh 'f["heavy_hitters"]')"
check_eq "top --json: still on for echo" True \
	"$(py '[f["heavy_hitters"] for f in d["functions"] if f["name"] == "echo"][0]' "$RR_TMP/top.json")"
"$CTL" --control "$SOCK" top reverse >"$RR_TMP/top.txt" 2>&1
check "top reverse: says it is off" grep -q "heavy hitters off" "$RR_TMP/top.txt"
sleep 1.2
check_eq "no series for reverse any more" 0 \
	"$(grep -c 'heavy_hitter.*function="reverse"' "$M")"

rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
