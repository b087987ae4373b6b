#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# That a few cannot hold the TCP pool of a function (tcp = yes,
# src/daemon/serve/tcp.c: admit(), sweep()), on the bare defaults (2-queue
# bed, nothing on the client end, reqrouter -i IF -c CONF, the TCP loop in
# a cell; tcp_max_connections 1024, tcp_max_per_source 32,
# tcp_max_per_prefix 128 by /24 and /56, tcp_idle_timeout 10 s shrinking
# to tcp_idle_timeout_full 500 ms), with tests/integration/lib/tcpclient.py
# from 65 more client addresses (32 in the bed's /24, 4 in each of eight
# /24s of 198.19.0.0/16, one in a ninth; the server routes 198.19.0.0/16
# and fd00:7272::/48 to the bed):
#  - one /24: 32 addresses open 32 connections each (1024, the pool's
#    size) and send a message on each every 2 s; the /24 keeps 128 of
#    them, the last opened (each one past 128 closes its own prefix's
#    connection idle longest), and a newcomer from another /24, and one
#    from the same /24, are answered;
#  - eight /24s, 128 connections each (1024), a message on each every
#    2 s: a newcomer from a ninth /24 is answered within 1 s, and the
#    holders cannot keep the pool full (fewer than 1000 open after each
#    second: a connection idle 1 s may stay only while at most 997 are
#    open); those closed are counted as idle_timeout_shrunk or
#    evicted_full, none refused;
#  - 992 connections (97 %) left idle: 3.5 s later at most 889 are open
#    (one idle 3 s may stay only while at most 889 are open; 0.5 s for
#    the client to see the closes), each closed idle for far less than
#    tcp_idle_timeout (counted idle_timeout_shrunk); 448 (under half) left
#    idle are all still open after 3 s;
#  - tcp_max_connections = 6: full, a newcomer takes the place of the
#    connection idle longest (evicted_full), or, when all 6 have a message
#    under way, is closed at once (refused_full), and answered once they
#    are gone;
#  - tcp_max_per_prefix = 2 (tcp_idle_timeout_full = tcp_idle_timeout, so
#    that the evictions alone close): a third connection from one /24
#    closes the /24's idlest, not another's; a third from one /56 the
#    /56's (fd00:7272::/64 and fd00:7272:0:ff::/64 are one /56,
#    fd00:7272:0:100::/64 another); two of a /24 mid-message: a third of
#    it is closed at once (refused_prefix), another /24's answered; each
#    event counted in GET /metrics.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
source tests/integration/lib/tcp.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults: rr_start passes them on as they are
RR_CACHE=yes
rr_bed 2
LISTEN=$TB_IP4_SRV:9464
P=$RR_TMP/http.prom
NEW4=198.19.9.1 # a newcomer from a /24 of its own
SITE4=198.18.0.99 # a newcomer from the bed's /24
SITE6=fd00:7272:0:ff::2 # the bed's /56, another /64
OTHER6=fd00:7272:0:100::2 # another /56

# Addresses inside the bed only: 198.18.0.100-131 in the bed's /24, and
# 198.19.P.1-4 for P in 0..7, on the client's end; the server reaches
# them over the veth.
{
	for ((i = 100; i < 132; i++)); do
		echo "addr add 198.18.0.$i/24 dev $TB_IF_CLI"
	done
	for ((p = 0; p < 8; p++)); do
		for ((a = 1; a <= 4; a++)); do
			echo "addr add 198.19.$p.$a/24 dev $TB_IF_CLI"
		done
	done
	echo "addr add $NEW4/24 dev $TB_IF_CLI"
	echo "addr add $SITE4/24 dev $TB_IF_CLI"
	# Deprecated: usable when bound to, never the source of other traffic.
	echo "addr add $SITE6/64 dev $TB_IF_CLI nodad preferred_lft 0"
	echo "addr add $OTHER6/64 dev $TB_IF_CLI nodad preferred_lft 0"
} >"$RR_TMP/addrs"
tb_cli ip -batch "$RR_TMP/addrs" || die "cannot add the client's addresses"
tb_srv ip route add 198.19.0.0/16 dev "$TB_IF_SRV" ||
	die "cannot route 198.19.0.0/16 to the bed"
tb_srv ip -6 route add fd00:7272::/48 dev "$TB_IF_SRV" ||
	die "cannot route fd00:7272::/48 to the bed"

# from LIST: SRC*N,SRC*N... for hold --from, N from each address of LIST.
from() {
	local n=$1 a out=
	shift
	for a in "$@"; do out+="${out:+,}$a*$n"; done
	echo "$out"
}
SITE_ADDRS=()
for ((i = 100; i < 132; i++)); do SITE_ADDRS+=("198.18.0.$i"); done
EIGHT_ADDRS=()
for ((p = 0; p < 8; p++)); do
	for ((a = 1; a <= 4; a++)); do EIGHT_ADDRS+=("198.19.$p.$a"); done
done

# event NAME: reverse's connections that ended so, from GET /metrics.
event() {
	metric "$P" reqrouter_tcp_events_total 'function="reverse"' "event=\"$1\""
}
# shellcheck disable=SC2317 # called through wait_for
none_open() {
	tcp_scrape "http://$LISTEN/metrics" &&
		[ "$(metric "$P" reqrouter_tcp_connections)" = 0 ]
}
# newcomer NAME I: the word of hold NAME's I-th newcomer, and whether it
# came within 1 s.
newcomer() {
	tcp_get "$1" "'%s %s' % (d['newcomers'][$2]['word'], 'at once' if d['newcomers'][$2]['ms'] < 1000 else 'late') if len(d['newcomers']) > $2 else 'none'"
}

cat >"$RR_TMP/defaults.conf" <<EOF
[reqrouter]
metrics_listen = $LISTEN

[function reverse]
tcp = yes
EOF

say "== the defaults: 32 addresses of one /24, 32 connections each, a message on each every 2 s"
rr_start defaults -i "$TB_IF_SRV" -c "$RR_TMP/defaults.conf" ||
	die "reqrouter with tcp = yes did not start"
tcp site hold "$TB_IP4_SRV" --from "$(from 32 "${SITE_ADDRS[@]}")" \
	--every 2 --for 4.5 --newcomer "$NEW4" --newcomer "$SITE4" \
	--newcomer-at 1
check_eq "1024 connections from one /24: each answered once open" 1024 \
	"$(tcp_get site 'd["first"].get("answered", 0)')"
check_eq "... the /24 keeps 128 (tcp_max_per_prefix), the last 128 opened" \
	"128 from 896" "$(tcp_get site '"%d from %s" % (d["kept"], d["kept_from"])')"
check_eq "a newcomer from another /24 ($NEW4): answered at once" \
	"answered at once" "$(newcomer site 0)"
check_eq "a newcomer from the same /24 ($SITE4): answered at once" \
	"answered at once" "$(newcomer site 1)"
check_eq "... every message on those held answered; 127 held to the end (one gave way to $SITE4)" \
	"True 127" "$(tcp_get site '"%s %d" % (d["asked"] > 0 and d["answered"] == d["asked"], d["open_end"])')"
check "the connections are gone within 3 s" wait_for 3 none_open
check_eq "GET /metrics: 897 closed for a newcomer of their /24, none refused or closed otherwise" \
	"897 0 0 0 0" \
	"$(event evicted_prefix) $(event refused_full) $(event refused_prefix) $(event evicted_full) $(event idle_timeout_shrunk)"

say "== the defaults: eight /24s, 128 connections each, a message on each every 2 s"
tcp eight hold "$TB_IP4_SRV" --from "$(from 32 "${EIGHT_ADDRS[@]}")" \
	--every 2 --for 5 --newcomer "$NEW4" --newcomer-at 2.5
check_eq "1024 connections from eight /24s: each answered once open" 1024 \
	"$(tcp_get eight 'd["first"].get("answered", 0)')"
check_eq "a newcomer from a ninth /24 ($NEW4): answered at once" \
	"answered at once" "$(newcomer eight 0)"
check "... the pool not held full: $(tcp_get eight 'd["open_at"]') open after each second" \
	test "$(tcp_get eight 'int(len(d["open_at"]) >= 4 and max(d["open_at"]) < 1000)')" = 1
check "... every message on those still held answered or closed, none wrong or lost ($(tcp_get eight 'd["held"]'))" \
	test "$(tcp_get eight 'int(d["answered"] > 0 and set(d["held"]) <= {"answered", "closed"})')" = 1
EIGHT_CLOSED=$((1024 - $(tcp_get eight 'd["open_end"]')))
check "the connections are gone within 3 s" wait_for 3 none_open
# Section one closed none for either reason (checked above).
check "GET /metrics: closed for the pool's filling ($(event idle_timeout_shrunk) idle_timeout_shrunk, $(event evicted_full) evicted_full; $EIGHT_CLOSED seen closed), none refused ($(event refused_full))" \
	test "$(($(event idle_timeout_shrunk) + $(event evicted_full)))" -ge "$EIGHT_CLOSED" \
	-a "$EIGHT_CLOSED" -gt 0 -a "$(event refused_full)" = 0

say "== the defaults: 992 connections (97 %), then 448 (44 %), left idle"
IDLE_SHRUNK0=$(event idle_timeout_shrunk)
tcp near hold "$TB_IP4_SRV" --from "$(from 31 "${EIGHT_ADDRS[@]}")" --for 3.5
check_eq "992 connections from eight /24s: each answered once open" 992 \
	"$(tcp_get near 'd["first"].get("answered", 0)')"
check "... left idle, at most 889 open 3.5 s later ($(tcp_get near 'd["open_at"]') open after each second, $(tcp_get near 'd["open_end"]') at the end)" \
	test "$(tcp_get near 'int(d["open_end"] <= 889)')" = 1
NEAR_CLOSED=$((992 - $(tcp_get near 'd["open_end"]')))
check "the connections are gone within 3 s" wait_for 3 none_open
check "GET /metrics: $(($(event idle_timeout_shrunk) - IDLE_SHRUNK0)) closed idle for less than tcp_idle_timeout (idle_timeout_shrunk; $NEAR_CLOSED seen closed), none for tcp_idle_timeout" \
	test "$(($(event idle_timeout_shrunk) - IDLE_SHRUNK0))" -ge "$NEAR_CLOSED" \
	-a "$NEAR_CLOSED" -gt 0 -a "$(event idle_timeout)" = 0
tcp half hold "$TB_IP4_SRV" --from "$(from 14 "${EIGHT_ADDRS[@]}")" --for 3
check_eq "448 connections (under half the pool) left idle: all open after 3 s" \
	"448 448" "$(tcp_get half '"%d %d" % (d["first"].get("answered", 0), d["open_end"])')"
check "the connections are gone within 3 s" wait_for 3 none_open
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== tcp_max_connections = 6"
cat >"$RR_TMP/six.conf" <<EOF
[reqrouter]
metrics_listen = $LISTEN
tcp_max_connections = 6

[function reverse]
tcp = yes
EOF
rr_start six -i "$TB_IF_SRV" -c "$RR_TMP/six.conf" ||
	die "reqrouter with tcp_max_connections = 6 did not start"
tcp full conns "$TB_IP4_SRV" ask@198.19.0.1 ask@198.19.0.2 ask@198.19.1.1 \
	ask@198.19.1.2 ask@198.19.2.1 ask@198.19.2.2 "ask@$NEW4" each
check_eq "6 open, a 7th: answered; the one idle longest closed for it" \
	"answered answered answered answered answered answered answered caaaaaa" \
	"$(tcp_get full 'd["results"]')"
check "the connections are gone within 2 s" wait_for 2 none_open
tcp busy conns "$TB_IP4_SRV" half@198.19.0.1 half@198.19.0.2 half@198.19.1.1 \
	half@198.19.1.2 half@198.19.2.1 half@198.19.2.2 "ask@$NEW4" \
	sleep:2.5 "ask@$NEW4"
check_eq "6 open mid-message, a 7th: closed; once they time out, answered" \
	"begun begun begun begun begun begun closed slept answered" \
	"$(tcp_get busy 'd["results"]')"
check "... closed at once ($(tcp_get busy 'd["closed_max_ms"]') ms)" \
	test "$(tcp_get busy 'int(d["closed_max_ms"] is not None and d["closed_max_ms"] < 500)')" = 1
check "the connections are gone within 2 s" wait_for 2 none_open
check_eq "GET /metrics: 1 closed for a newcomer to the full pool, 1 newcomer refused" \
	"1 1" "$(event evicted_full) $(event refused_full)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== tcp_max_per_prefix = 2"
cat >"$RR_TMP/prefix.conf" <<EOF
[reqrouter]
metrics_listen = $LISTEN
tcp_max_per_prefix = 2
tcp_idle_timeout_full = 10000

[function reverse]
tcp = yes
EOF
rr_start prefix -i "$TB_IF_SRV" -c "$RR_TMP/prefix.conf" ||
	die "reqrouter with tcp_max_per_prefix = 2 did not start"
tcp p4 conns "$TB_IP4_SRV" ask@198.19.0.1 ask@198.19.1.1 ask@198.19.0.2 \
	ask@198.19.0.3 each
check_eq "a third from one /24: answered; the /24's idlest closed, not the other /24's" \
	"answered answered answered answered caaa" "$(tcp_get p4 'd["results"]')"
check "the connections are gone within 2 s" wait_for 2 none_open
tcp p6 conns "$TB_IP4_SRV" --addr6 "$TB_IP6_SRV" "ask@[$TB_IP6_CLI]" \
	"ask@[$OTHER6]" "ask@[$SITE6]" "ask@[$TB_IP6_CLI]" each
check_eq "a third from one /56 (two /64s of it): the /56's idlest closed, not another /56's" \
	"answered answered answered answered caaa" "$(tcp_get p6 'd["results"]')"
check "the connections are gone within 2 s" wait_for 2 none_open
tcp pbusy conns "$TB_IP4_SRV" half@198.19.3.1 half@198.19.3.2 ask@198.19.3.3 \
	ask@198.19.4.1
check_eq "two of a /24 mid-message: a third from it closed; another /24's answered" \
	"begun begun closed answered" "$(tcp_get pbusy 'd["results"]')"
check "... closed at once ($(tcp_get pbusy 'd["closed_max_ms"]') ms)" \
	test "$(tcp_get pbusy 'int(d["closed_max_ms"] is not None and d["closed_max_ms"] < 500)')" = 1
check "the connections are gone within 3 s" wait_for 3 none_open
check_eq "GET /metrics: 2 closed for a newcomer of their prefix, 1 refused, none for a full pool" \
	"2 1 0" "$(event evicted_prefix) $(event refused_prefix) $(event evicted_full)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

finish
