#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What keeps a TCP client of a function (tcp = yes, src/daemon/tcp.c) from
# holding anything, on the bare defaults (2-queue bed, nothing on the
# client end, reqrouter -i IF -c CONF, the TCP loop in a cell), with
# tests/integration/lib/tcpclient.py:
#  - tcp_io_timeout = 500: a client that sends half a message (half its
#    body, or one byte of its length) and stops is closed 0.4 to 2 s later,
#    and meanwhile another connection gets each of 20 messages answered at
#    once; one that pipelines 2000 messages and reads none of the replies
#    is closed 0.4 to 2 s later; tcp_idle_timeout = 500: a connection left
#    idle after a reply is closed 0.4 to 1.5 s later, one with a message
#    every 200 ms stays open for 2 s; a message of length 0 closes its
#    connection (the framing has none); each close counted by its event in
#    GET /metrics;
#  - tcp_max_per_source = 3: the 4th connection from one address is closed
#    at once without a reply while the first 3 are still answered, and one
#    more is taken once one of them goes; tcp_max_connections = 5: with 3
#    from one address and 2 from another, the next from either family is
#    answered, and the connection idle longest closed for it (tcp_pool.sh
#    has the rest of the pool's sharing);
#  - allow = 198.18.0.0/29, fd00:7272::/125: connections from addresses
#    outside the list (a second address on the client, IPv4 and IPv6) are
#    closed without a reply and their UDP requests get nothing, while the
#    client's own addresses are answered over both.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
source tests/integration/lib/tcp.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults: rr_start passes them on as they are
RR_CACHE=yes
rr_bed 2
LISTEN=$TB_IP4_SRV:9464
P=$RR_TMP/http.prom
CLI4B=198.18.0.3 # more addresses on the client, inside the test bed only
CLI4C=198.18.0.5
OUT4=198.18.0.9 # outside the allow-list below
OUT6=fd00:7272::9
tb_cli ip addr add "$CLI4B/24" dev "$TB_IF_CLI" || die "cannot add $CLI4B"
tb_cli ip addr add "$CLI4C/24" dev "$TB_IF_CLI" || die "cannot add $CLI4C"
tb_cli ip addr add "$OUT4/24" dev "$TB_IF_CLI" || die "cannot add $OUT4"
# Deprecated: usable when bound to, never the source of other traffic.
tb_cli ip -6 addr add "$OUT6/64" dev "$TB_IF_CLI" nodad preferred_lft 0 ||
	die "cannot add $OUT6"

# event NAME: reverse's connections that ended so, from GET /metrics.
event() {
	metric "$P" reqrouter_tcp_events_total 'function="reverse"' "event=\"$1\""
}
# none_open: no connection open, per GET /metrics.
# shellcheck disable=SC2317 # called through wait_for
none_open() {
	tcp_scrape "http://$LISTEN/metrics" &&
		[ "$(metric "$P" reqrouter_tcp_connections)" = 0 ]
}
# within NAME KEY LO HI: LO <= NAME's KEY <= HI (ms; false if it is null).
# shellcheck disable=SC2317 # called through check
within() {
	test "$(tcp_get "$1" "int(d['$2'] is not None and $3 <= d['$2'] <= $4)")" = 1
}
# udp_from SRC DST EXPECT: 5 UDP requests to reverse from SRC, EXPECT all
# or none answered.
# shellcheck disable=SC2317 # called through check
udp_from() {
	tb_cli python3 "$RR_LIB/hardening_abuse.py" --src "$1" --dst "$2" \
		--port 1232 -n 5 --expect "$3" --timeout 1 >"$RR_TMP/udp.out" 2>&1
	local rc=$?
	sed 's/^/    /' "$RR_TMP/udp.out"
	return "$rc"
}

say "== tcp_io_timeout = 500, tcp_idle_timeout = 500"
cat >"$RR_TMP/timeouts.conf" <<EOF
[reqrouter]
metrics_listen = $LISTEN
tcp_io_timeout = 500
tcp_idle_timeout = 500

[function reverse]
tcp = yes
EOF
rr_start timeouts -i "$TB_IF_SRV" -c "$RR_TMP/timeouts.conf" ||
	die "reqrouter with tcp = yes did not start"
tcp half half "$TB_IP4_SRV" --length 1000 --send 501 --meanwhile 20 --wait 4
check "half a message: closed 0.4 to 2 s later ($(tcp_get half 'd["closed_ms"]') ms)" \
	within half closed_ms 400 2000
check_eq "meanwhile another connection: 20 of 20 answered" 20 \
	"$(tcp_get half 'd["meanwhile_correct"]')"
check "... each at once (the slowest in $(tcp_get half 'd["meanwhile_max_ms"]') ms)" \
	within half meanwhile_max_ms 0 300
tcp hdr half "$TB_IP6_SRV" --length 1000 --send 1 --meanwhile 5 --wait 4
check "one byte of a length, over IPv6: closed 0.4 to 2 s later ($(tcp_get hdr 'd["closed_ms"]') ms)" \
	within hdr closed_ms 400 2000
check_eq "... meanwhile 5 of 5 answered on another connection" 5 \
	"$(tcp_get hdr 'd["meanwhile_correct"]')"
tcp unread slowread "$TB_IP4_SRV" -n 2000 --size 1000 --chunk 0 --wait 4
check "2000 pipelined, no reply read: closed 0.4 to 2 s later ($(tcp_get unread 'd["closed_ms"]') ms)" \
	within unread closed_ms 400 2000
# A slow but steady reader is progress, though the loop's own send()s
# wait for room: 4 KB read every 50 ms for 3 s, far longer than the
# time-outs. Once it reads at full speed, it takes the rest, and the
# connection may then idle out (idle_timeout).
tcp slow slowread "$TB_IP4_SRV" -n 4000 --size 1000 --chunk 4096 --every 0.05 --wait 3
check_eq "a slow but steady reader of 4000 pipelined replies: kept open while it reads, every reply correct" \
	"False True" "$(tcp_get slow '"%s %s" % (d["closed_while_reading"], d["answered"] == d["correct"] and d["answered"] > 100)')"
tcp idle idle "$TB_IP4_SRV" --wait 4
check "idle after a reply: closed 0.4 to 1.5 s later ($(tcp_get idle 'd["closed_ms"]') ms)" \
	within idle closed_ms 400 1500
tcp alive keepalive "$TB_IP4_SRV" --every 0.2 --for 2
check_eq "a message every 200 ms: open for 2 s, every message answered" \
	"open 1" "$(tcp_get alive '"%s %d" % (d["how"], d["sent"] >= 8 and d["correct"] == d["sent"])')"
tcp zero conns "$TB_IP4_SRV" ask: ask
check_eq "a message of length 0: the connection closed; the next one answered" \
	"closed answered" "$(tcp_get zero 'd["results"]')"
tcp_scrape "http://$LISTEN/metrics"
check_eq "GET /metrics: 1 connection closed for a bad frame" 1 "$(event bad_frame)"
check_eq "GET /metrics: 3 connections closed for tcp_io_timeout" 3 "$(event io_timeout)"
# The idle one; the slow reader's may idle out too once it has all.
check "GET /metrics: 1 or 2 closed for tcp_idle_timeout ($(event idle_timeout))" \
	test "$(event idle_timeout)" -ge 1 -a "$(event idle_timeout)" -le 2
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== tcp_max_per_source = 3, tcp_max_connections = 5, an allow-list"
cat >"$RR_TMP/limits.conf" <<EOF
[reqrouter]
metrics_listen = $LISTEN
tcp_max_per_source = 3
tcp_max_connections = 5

[function reverse]
tcp = yes
allow = 198.18.0.0/29, fd00:7272::/125
EOF
rr_start limits -i "$TB_IF_SRV" -c "$RR_TMP/limits.conf" ||
	die "reqrouter with TCP limits did not start"
tcp src conns "$TB_IP4_SRV" ask ask ask ask again drop sleep:0.2 ask again
check_eq "4 from one address: the 4th closed, the 3 others answered; one gone, a 4th taken" \
	"answered answered answered closed answered dropped slept answered answered" \
	"$(tcp_get src 'd["results"]')"
check "... closed at once ($(tcp_get src 'd["closed_max_ms"]') ms)" \
	within src closed_max_ms 0 500
check "the connections are gone within 2 s" wait_for 2 none_open
tcp full conns "$TB_IP4_SRV" --addr6 "$TB_IP6_SRV" "ask@$CLI4B" "ask@$CLI4B" "ask@$CLI4B" \
	"ask@$CLI4C" "ask@$CLI4C" "ask@$CLI4C" "ask@[$TB_IP6_CLI]" each
check_eq "5 connections open: the 6th, from an address with 2, answered, the one idle longest closed for it; so for an IPv6 one" \
	"answered answered answered answered answered answered answered ccaaaaa" \
	"$(tcp_get full 'd["results"]')"
check "the connections are gone within 2 s" wait_for 2 none_open
tcp allow4 conns "$TB_IP4_SRV" "ask@$OUT4" ask
check_eq "from $OUT4, outside the allow-list: closed without a reply; from $TB_IP4_CLI: answered" \
	"closed answered" "$(tcp_get allow4 'd["results"]')"
tcp allow6 conns "$TB_IP6_SRV" "ask@[$OUT6]" ask
check_eq "from $OUT6, outside the allow-list: closed without a reply; from $TB_IP6_CLI: answered" \
	"closed answered" "$(tcp_get allow6 'd["results"]')"
check "UDP from $OUT4: nothing back" udp_from "$OUT4" "$TB_IP4_SRV" none
check "UDP from $OUT6: nothing back" udp_from "$OUT6" "$TB_IP6_SRV" none
check "UDP from $TB_IP4_CLI: answered" udp_from "$TB_IP4_CLI" "$TB_IP4_SRV" all
tcp_scrape "http://$LISTEN/metrics"
check_eq "GET /metrics: refused by source, when full, by the allow-list; closed for a newcomer to the full pool" \
	"1 0 2 2" \
	"$(event refused_source) $(event refused_full) $(event refused_allow) $(event evicted_full)"
check_eq "GET /metrics: 13 connections accepted" 13 "$(event accepted)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

finish
