#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Functions over TCP (tcp = yes, src/daemon/tcp.c), on the bare defaults
# (2-queue bed, nothing on the client end, reqrouter -i IF -c CONF, the TCP
# loop in a cell), with tests/integration/lib/tcpclient.py:
#  - reverse with tcp = yes: 200 messages of 1 B to 60000 B pipelined in one
#    write on one connection are all answered, correct and in order, over
#    IPv4 and IPv6, and with a FIN right behind them (then the server
#    closes); so are messages of the framing's most, 65535 B; a connection that sends its messages byte by byte does
#    not hold up a second one, whose 50 pipelined messages are answered
#    while the first is mid-message; UDP on the same port still answers;
#  - the counters: reqrouterctl stats and GET /metrics count every message
#    and reply over TCP (transport="tcp") apart from UDP's, and the
#    connections accepted (reqrouter_tcp_events_total);
#  - the same with --isolation thread;
#  - the test module faulty with tcp = yes: a message that crashes it over
#    TCP gets its connection closed, the crash is logged and counted, and
#    within 2 s a new connection is answered again (UDP never stopped).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
source tests/integration/lib/tcp.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults: rr_start passes them on as they are
RR_CACHE=yes
TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"
rr_faults_are_signals

rr_bed 2
SOCK=/run/reqrouter/$TB_IF_SRV.sock
LISTEN=$TB_IP4_SRV:9464

# pipelines LABEL: 200 messages of 1 B..60000 B in one write, IPv4 then
# IPv6, then with a FIN behind them; 3 of the framing's most; then the
# byte-by-byte connection beside a pipelining one.
pipelines() {
	local a
	for a in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
		tcp pipe pipeline "$a" -n 200 --min-size 1 --max-size 60000
		check_eq "$1: [$a]: 200 pipelined messages answered, correct and in order" \
			"200 200" "$(tcp_get pipe '"%d %d" % (d["answered"], d["correct"])')"
	done
	tcp fin pipeline "$TB_IP4_SRV" -n 200 --min-size 1 --max-size 60000 --shut
	check_eq "$1: 200 pipelined, then a FIN: all answered, then the server closes" \
		"200 200 eof" "$(tcp_get fin '"%d %d %s" % (d["answered"], d["correct"], d["how"])')"
	tcp max pipeline "$TB_IP6_SRV" -n 3 --min-size 65533 --max-size 65535
	check_eq "$1: messages of 65533 to 65535 B, the framing's most, answered" \
		3 "$(tcp_get max 'd["correct"]')"
	tcp par parallel "$TB_IP4_SRV" --slow 3 --slow-size 20 --gap 0.01 -n 50
	check_eq "$1: byte by byte: 3 messages answered correctly" 3 \
		"$(tcp_get par 'd["slow_correct"]')"
	check_eq "$1: beside it, 50 pipelined on a second connection answered" 50 \
		"$(tcp_get par 'd["fast_correct"]')"
	check "$1: ... while the first was still mid-message, within 500 ms ($(tcp_get par 'd["fast_ms"]') ms)" \
		test "$(tcp_get par 'int(d["slow_busy"] and d["fast_ms"] < 500)')" = 1
}

cat >"$RR_TMP/main.conf" <<EOF
[reqrouter]
metrics_listen = $LISTEN

[function reverse]
tcp = yes
EOF

say "== reverse with tcp = yes, the TCP loop in a cell (the default)"
rr_start main -i "$TB_IF_SRV" -c "$RR_TMP/main.conf" ||
	die "reqrouter with tcp = yes did not start"
check "the log says reverse is served over TCP too" \
	grep -q "serving 'reverse' on TCP port 1232 too" "$RR_ERR"
check "the TCP loop runs as a cell of its own (rr-tcp)" \
	test -n "$(pgrep -x -P "$RR_PID" rr-tcp)"
pipelines cell
check_eq "UDP on the same port still answers" olleh "$(cli_ask 2 1232 hello)"

say "== the counters"
"$CTL" --control "$SOCK" --json stats >"$RR_TMP/stats.json"
# 200 + 200 + 200 + 3 pipelined, 3 byte by byte and 50 beside them, on 6
# connections.
check_eq "reqrouterctl stats: 656 messages and 656 replies over TCP, 6 connections" \
	"656 656 6" "$(json_eval '" ".join(str(x) for f in d["functions"]
		if f["name"] == "reverse" for x in (f["tcp"]["rx"], f["tcp"]["tx"],
		f["tcp"]["events"]["accepted"]))' "$RR_TMP/stats.json")"
check_eq "reqrouterctl stats: echo, without tcp, has no TCP counters" False \
	"$(json_eval 'any("tcp" in f for f in d["functions"] if f["name"] == "echo")' \
		"$RR_TMP/stats.json")"
"$CTL" --control "$SOCK" stats >"$RR_TMP/stats.txt"
check "reqrouterctl stats (text): TCP rx 656 tx 656" \
	grep -q '^reverse (port 1232): .*TCP rx 656 tx 656' "$RR_TMP/stats.txt"
tcp_scrape "http://$LISTEN/metrics"
check_eq "GET /metrics: 656 messages received over TCP" 656 \
	"$(metric "$RR_TMP/http.prom" reqrouter_rx_packets_total 'function="reverse"' 'transport="tcp"')"
check_eq "GET /metrics: 656 replies sent over TCP" 656 \
	"$(metric "$RR_TMP/http.prom" reqrouter_tx_packets_total 'function="reverse"' 'transport="tcp"')"
check_eq "GET /metrics: the one UDP request counted apart from them" 1 \
	"$(metric_lines "$RR_TMP/http.prom" reqrouter_rx_packets_total |
		grep 'function="reverse"' | grep -v 'transport="tcp"' | prom_sum)"
check_eq "GET /metrics: 6 connections accepted" 6 \
	"$(metric "$RR_TMP/http.prom" reqrouter_tcp_events_total 'function="reverse"' 'event="accepted"')"
check_eq "GET /metrics: no connection refused or timed out" 0 \
	"$(metric_lines "$RR_TMP/http.prom" reqrouter_tcp_events_total |
		grep -v 'event="accepted"' | prom_sum)"
check_eq "GET /metrics: no connection open at rest" 0 \
	"$(metric "$RR_TMP/http.prom" reqrouter_tcp_connections)"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== --isolation thread"
rr_start thread -i "$TB_IF_SRV" -c "$RR_TMP/main.conf" --isolation thread ||
	die "reqrouter --isolation thread with tcp = yes did not start"
check_eq "no cell: the TCP loop is a thread" 0 "$(pgrep -c -P "$RR_PID")"
pipelines thread
rr_kill_wait TERM 10
check_eq "threads: SIGTERM: exit 0" 0 "$RR_RC"

say "== a function that crashes over TCP (faulty, tcp = yes)"
cat >"$RR_TMP/faulty.conf" <<EOF
[reqrouter]
functions_dir = $TMODS
metrics_listen = $LISTEN

[function faulty]
tcp = yes
EOF
rr_start faulty -i "$TB_IF_SRV" -c "$RR_TMP/faulty.conf" ||
	die "reqrouter with faulty over TCP did not start"
TCP_PORT=7700
tcp ok conns "$TB_IP4_SRV" --func echo ask
check_eq "faulty answers over TCP while healthy" answered "$(tcp_get ok 'd["results"]')"
tcp crash conns "$TB_IP4_SRV" --func echo ask:crash
check_eq "'crash' over TCP: the connection is closed without a reply" closed \
	"$(tcp_get crash 'd["results"]')"
tcp until until "$TB_IP4_SRV" --func echo --within 3
check "a new connection is answered again within 2 s ($(tcp_get until 'd["ms"]') ms)" \
	test "$(tcp_get until 'int(d["answered"] and d["ms"] < 2000)')" = 1
check "the crash is logged with the function's name" \
	grep -q "function 'faulty' crashed over TCP: the TCP cell restarts" "$RR_ERR"
TCP_PORT=
check_eq "UDP to faulty answered all along" hello "$(cli_ask 2 7700 hello)"
tcp_scrape "http://$LISTEN/metrics"
check_eq "GET /metrics: the crash counted as faulty's" 1 \
	"$(metric "$RR_TMP/http.prom" reqrouter_function_faults_total 'function="faulty"' 'kind="crash"')"
check "reqrouter is still running" kill -0 "$RR_PID"
rr_kill_wait TERM 10
check_eq "faulty: SIGTERM: exit 0" 0 "$RR_RC"

finish
