#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Every function's default rate limit (issue 42, item 6): `reqrouter -i
# IF` with no config limits echo and reverse to 100000 replies/s per /24
# (/64), burst 100000, in XDP, which no normal client meets; dns keeps
# NSD's 200. On the bare defaults (the 2-queue bed with nothing on the
# client's end, TB_PEER_XDP=0; tier auto, the reply cache on):
#  - `--list` shows each function's limit (echo, reverse 100000; dns
#    200) and what it means; with `rate_limit = 0` in echo's section it
#    shows off; the start-up lines say echo's and reverse's;
#  - a normal client, 800 requests to echo and reverse over 16 sockets
#    (IPv4 and IPv6 side by side, as fast as they are answered: some
#    40 k/s), is answered in full and nothing is counted as rate-limited;
#  - a flood of echo requests from one /24 (rrload's XDP engine at
#    500 k/s, five times the limit, from 64 spoofed sources of
#    198.18.64.0/24, 4 s; the engine brings its own program to the
#    client's end) gets at most 100000 x time + 100000 answers (5 %
#    slack), 99 % of the rest counted as drop/rate_limited and all of
#    those in reqrouter_rate_limited_packets_total; while it lasts,
#    reqrouterctl top marks its /24 rate-limited and the bed's client's
#    /24 not, and the client, asking meanwhile, is answered;
#  - with `rate_limit = 0` the same flood is not limited at all.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
rr_bed 2
# The counters as reqrouter has them 0.2 s after they are asked for
# (rr_metrics_scrape), not at the metrics file's next rewrite.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom
SOCK=$RR_TMP/ctl.sock
RATE=100000

say "== --list with no config"
"$RR" --list >"$RR_TMP/list.out" 2>&1
check_eq "--list: exit 0" 0 $?
sed 's/^/    /' "$RR_TMP/list.out"
check "--list: a column for the limit" \
	grep -qE '^function +port +tiers +pure +limit/s +description' "$RR_TMP/list.out"
check "--list: echo limited to $RATE/s" \
	grep -qE "^echo +7 +xdp,user +yes +$RATE " "$RR_TMP/list.out"
check "--list: reverse limited to $RATE/s" \
	grep -qE "^reverse +1232 +xdp,user +yes +$RATE " "$RR_TMP/list.out"
check "--list: dns to NSD's 200/s" \
	grep -qE '^dns +53 +user +yes +200 ' "$RR_TMP/list.out"
check "--list: what the limit is and how it goes off" \
	grep -qF 'rate_limit = 0 in its section turns it off' "$RR_TMP/list.out"
printf '[function echo]\nrate_limit = 0\n' >"$RR_TMP/off.conf"
"$RR" -c "$RR_TMP/off.conf" --list >"$RR_TMP/list-off.out" 2>&1
check "--list with rate_limit = 0 for echo: off" \
	grep -qE '^echo +7 +xdp,user +yes +off ' "$RR_TMP/list-off.out"

rr_start defaults -i "$TB_IF_SRV" -q 2 --metrics-listen "$LISTEN" \
	--control "$SOCK" || die "reqrouter -i $TB_IF_SRV -q 2 did not start"
for fn in echo reverse; do
	check "start-up: $fn's limit said" \
		grep -qF "rate limit for '$fn': $RATE replies/s per source prefix (/24, /64), burst $RATE, in XDP" \
		"$RR_ERR"
done
limited() { # the requests the limiter dropped, every function
	metric "$M" reqrouter_xdp_packets_total 'verdict="drop"' \
		'reason="rate_limited"'
}

say "== a normal client: 800 requests to echo and reverse, IPv4 and IPv6"
check "every request answered" serves 400
rr_metrics_scrape "$LISTEN" "$M" || bad "GET /metrics failed"
check_eq "none counted as rate-limited" 0 "$(limited)"

# flood NAME: 4 s of rrload's XDP engine to echo at 500 k/s from 64
# sources of one /24, its JSON in $RR_TMP/NAME.json; the bed's client
# asks a second in (its result in $RR_TMP/NAME.client), and top is asked
# at 3 s, when even half that rate has spent the burst.
flood() {
	local pid start
	start=$(date +%s%N)
	tb_cli_bg timeout 30 "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" \
		-s "$TB_IP4_SRV" -p 7 -l 64 -d 4 -r 500000 \
		--spoof 64@198.18.64.0/24 -q \
		--json "$RR_TMP/$1.json" >"$RR_TMP/$1.out" 2>&1
	pid=$TB_PID
	RR_BG_PIDS+=("$pid")
	sleep 1
	tb_cli python3 "$RR_LIB/udpclient.py" "$TB_IP4_SRV" 7:echo -n 100 \
		-s 4 --timeout 1 -q >"$RR_TMP/$1.client" 2>&1
	echo "rc=$?" >>"$RR_TMP/$1.client"
	sed 's/^/    client: /' "$RR_TMP/$1.client"
	while (($(date +%s%N) - start < 3000000000)); do
		sleep 0.1
	done
	"$CTL" --control "$SOCK" --json top echo >"$RR_TMP/$1.top" 2>&1
	wait "$pid"
	echo "rrload rc=$?" >>"$RR_TMP/$1.out"
	sed 's/^/    /' "$RR_TMP/$1.out"
}

say "== a flood from 198.18.64.0/24 at 500 k/s, 4 s"
flood on
read -r sent fans secs < <(json_get "$RR_TMP/on.json" sent flood_answered elapsed_s)
max=$(json_eval "int(($RATE * ${secs:-0} + $RATE) * 1.05)" - <<<'{}')
check "the flood sent more than its limit allows ($sent > $max)" \
	test "${sent:-0}" -gt "$max"
check "it got at most $max answers (${fans:-none})" test "${fans:-0}" -le "$max"
check "it got its burst at least (${fans:-none})" test "${fans:-0}" -ge "$RATE"
rr_metrics_scrape "$LISTEN" "$M" || bad "GET /metrics failed"
lim=$(limited)
check "99 % of the rest counted as drop/rate_limited (${lim:-none} of $((sent - fans)))" \
	test $((${lim:-0} * 100)) -ge $(((sent - fans) * 99))
fnlim=$(metric "$M" reqrouter_rate_limited_packets_total 'function="echo"')
check "and as echo's rate-limited requests (${fnlim:-none})" \
	test "${fnlim:-0}" -eq "${lim:-x}"
check "the bed's client was answered meanwhile" \
	grep -q '^rc=0$' "$RR_TMP/on.client"
top() { json_eval "$1" "$RR_TMP/on.top"; }
check_eq "top: the flood's /24 is marked rate-limited" True \
	"$(top '[e.get("limited") for e in d["functions"][0]["prefixes"]["top"] if e["prefix"] == "198.18.64.0/24"] == [True]')"
check_eq "top: the client's /24 is not (where listed)" True \
	"$(top 'all(e.get("limited") is False for e in d["functions"][0]["prefixes"]["top"] if e["prefix"] == "198.18.0.0/24")')"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== rate_limit = 0: the same flood, nothing limited"
tb_cli ip link set dev "$TB_IF_CLI" xdp off 2>/dev/null
printf '[function echo]\nrate_limit = 0\n' >"$RR_TMP/off.conf"
rr_start off -i "$TB_IF_SRV" -q 2 -c "$RR_TMP/off.conf" \
	--metrics-listen "$LISTEN" --control "$SOCK" ||
	die "reqrouter with rate_limit = 0 did not start"
check "start-up: echo has none" \
	grep -qF "no rate limit for 'echo' (rate_limit = 0)" "$RR_ERR"
flood off
rr_metrics_scrape "$LISTEN" "$M" || bad "GET /metrics failed"
check_eq "nothing counted as rate-limited" 0 "$(limited)"
read -r sent fans < <(json_get "$RR_TMP/off.json" sent flood_answered)
check "the flood got more answers than the limit would allow ($fans > $max)" \
	test "${fans:-0}" -gt "$max"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
