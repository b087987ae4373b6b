#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The sockperf function against the real sockperf client (Debian's
# sockperf), as a user measuring reqrouter would run it: reqrouter -q 2 in
# the server namespace with [function sockperf] enabled, sockperf in the
# client namespace for 1 s a run, bounded by timeout and by a message rate
# where the client would otherwise send flat out.
#
# - ping-pong --data-integrity: every message answered byte for byte
#   (sockperf exits non-zero otherwise), latency figures printed and sane.
# - throughput: sockperf asks for no reply, so none may come back; the
#   server counts every message as no_reply (and as sockperf_silent).
# - under-load --reply-every 10: the one message in ten that asks for a
#   reply gets it, the rest are counted as no_reply.
# - a hand-built message over IPv4 and IPv6: the reply is the request with
#   only the CLIENT flag cleared; a datagram that is no sockperf message
#   gets nothing and is counted.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

QUEUES=2
PORT=11111
SECS=1

rr_bed $QUEUES
command -v sockperf >/dev/null ||
	die "sockperf is not installed (tools/install-deps.sh installs it)"
# The counters as reqrouter has them when asked (GET /metrics on the
# server's loopback), not at the metrics file's next rewrite.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom
CONF=$RR_TMP/reqrouter.conf
printf '[function sockperf]\nenabled = yes\n' >"$CONF"

rr_start main -i "$TB_IF_SRV" -q $QUEUES -c "$CONF" --metrics-listen "$LISTEN" ||
	die "reqrouter with [function sockperf] did not start"
check "start-up log says sockperf is served on port $PORT" \
	grep -q "serving 'sockperf' on UDP port $PORT" "$RR_ERR"

# sp NAME MODE ARGS...: run sockperf MODE against the server for $SECS s
# (it spends 2 s more on its own start-up); output in $RR_TMP/NAME.out,
# exit status in SP_RC.
sp() {
	local name=$1 mode=$2
	shift 2
	tb_cli timeout -k 2 $((SECS + 15)) sockperf "$mode" -i "$TB_IP4_SRV" \
		-p $PORT -t $SECS "$@" >"$RR_TMP/$name.out" 2>&1
	SP_RC=$?
	sed -e 's/\x1b\[[0-9;]*m//g' "$RR_TMP/$name.out" | sed -n -e '/Total Run\|Valid Duration\|avg-latency\|percentile 50\.\|percentile 99\.000\|Total of\|Message Rate\|rror\|failed/s/^/    /p'
}
# field NAME KEY: the number after "KEY=" on sockperf's "[Total Run]" line.
field() {
	sed -n "s/.*\[Total Run\].*$2=\([0-9]*\).*/\1/p" "$RR_TMP/$1.out" |
		head -n 1
}
# server counters, summed over queues and workers
srv() { metric "$M" "$@" "port=\"$PORT\""; }
# snapshot: the server's counters 0.2 s after the call, with everything
# sent before it counted.
snapshot() {
	rr_metrics_scrape "$LISTEN" "$M" || bad "GET /metrics failed"
	RX=$(srv reqrouter_rx_packets_total)
	TX=$(srv reqrouter_tx_packets_total)
	NOREPLY=$(srv reqrouter_dropped_packets_total 'reason="no_reply"')
	SILENT=$(metric "$M" reqrouter_function_events_total 'counter="sockperf_silent"')
	INVALID=$(metric "$M" reqrouter_function_events_total 'counter="sockperf_invalid"')
}
# cli_rx: packets the client's interface received (the bed is silent:
# nothing else arrives there; sockperf's own socket statistics do not do,
# as throughput mode never reads its socket).
cli_rx() { tb_cli cat "/sys/class/net/$TB_IF_CLI/statistics/rx_packets"; }

say "== ping-pong, 64-byte messages, --data-integrity"
snapshot
rx0=$RX tx0=$TX
sp pingpong ping-pong -m 64 --data-integrity
check_eq "ping-pong: sockperf exits 0 (every reply intact)" 0 "$SP_RC"
sent=$(field pingpong SentMessages)
got=$(field pingpong ReceivedMessages)
check "ping-pong: more than 100 round trips in ${SECS} s (got ${got:-none})" \
	[ "${got:-0}" -gt 100 ]
if [ -n "$sent" ] && [ $((sent - ${got:-0})) -le 1 ]; then
	ok "ping-pong: at most one message unanswered ($sent sent, $got received)"
else
	bad "ping-pong: ${sent:-?} sent, ${got:-none} received"
fi
avg=$(sed -n 's/.*avg-latency=\([0-9.]*\).*/\1/p' "$RR_TMP/pingpong.out")
p50=$(sed -n 's/.*percentile 50\.000 = *\([0-9.]*\).*/\1/p' "$RR_TMP/pingpong.out")
# A round trip on this bed takes 5-400 µs; sockperf prints half of it.
check "ping-pong: average latency printed and sane (0 < $avg < 5000 µs)" \
	awk -v v="$avg" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 5000) }'
check "ping-pong: median printed and sane (0 < $p50 < 5000 µs)" \
	awk -v v="$p50" 'BEGIN { exit !(v + 0 > 0 && v + 0 < 5000) }'
snapshot
if [ $((TX - tx0)) -eq $((RX - rx0)) ] && [ $((TX - tx0)) -ge "${got:-1}" ]; then
	ok "ping-pong: the server sent a reply per message ($((TX - tx0)))"
else
	bad "ping-pong: server rx +$((RX - rx0)), tx +$((TX - tx0)); client got ${got:-none}"
fi
check_eq "ping-pong: nothing counted as no_reply" 0 "$NOREPLY"

say "== throughput, 20000 messages/s: no message asks for a reply"
rx0=$RX tx0=$TX nr0=$NOREPLY si0=$SILENT
in0=$(cli_rx)
sp throughput throughput -m 64 --mps 20000
check_eq "throughput: sockperf exits 0" 0 "$SP_RC"
sent=$(sed -n 's/.*Total of \([0-9]*\) messages sent.*/\1/p' \
	"$RR_TMP/throughput.out")
check "throughput: sockperf reports its message rate" \
	grep -q 'Summary: Message Rate is [1-9]' "$RR_TMP/throughput.out"
snapshot
say "    sent ${sent:-?}; server: rx +$((RX - rx0)), tx +$((TX - tx0)), no_reply +$((NOREPLY - nr0)), sockperf_silent +$((SILENT - si0))"
if [ -n "$sent" ] && [ $(((RX - rx0) * 10)) -ge $((sent * 9)) ]; then
	ok "throughput: the server took in at least 90% of the $sent messages"
else
	bad "throughput: ${sent:-?} sent, the server took in $((RX - rx0))"
fi
check_eq "throughput: every one counted as no_reply" $((RX - rx0)) \
	$((NOREPLY - nr0))
check_eq "throughput: and as sockperf_silent" $((RX - rx0)) $((SILENT - si0))
check_eq "throughput: no reply sent" 0 $((TX - tx0))
check_eq "throughput: the client's interface received nothing" 0 \
	$(($(cli_rx) - in0))

say "== under-load at 5000 messages/s, one in 10 asks for a reply"
rx0=$RX tx0=$TX nr0=$NOREPLY
sp underload under-load -m 64 --mps 5000 --reply-every 10
check_eq "under-load: sockperf exits 0" 0 "$SP_RC"
sent=$(field underload SentMessages)
got=$(field underload ReceivedMessages)
snapshot
say "    server: rx +$((RX - rx0)), tx +$((TX - tx0)), no_reply +$((NOREPLY - nr0))"
if [ -n "$sent" ] && [ "${got:-0}" -gt 0 ] &&
	[ $((got - sent / 10)) -ge -1 ] && [ $((got - sent / 10)) -le 1 ]; then
	ok "under-load: one reply per 10 messages ($sent sent, $got received)"
else
	bad "under-load: ${sent:-?} sent, ${got:-none} received, want one in 10"
fi
check_eq "under-load: the server answered exactly the marked messages" \
	"$((RX - rx0 - (NOREPLY - nr0)))" "$((TX - tx0))"
check "under-load: and counted the other nine in ten as no_reply" \
	[ $(((NOREPLY - nr0) * 10)) -ge $(((RX - rx0) * 8)) ]
check "under-load: latency printed and sane" \
	awk -v v="$(sed -n 's/.*avg-latency=\([0-9.]*\).*/\1/p' "$RR_TMP/underload.out")" \
	'BEGIN { exit !(v + 0 > 0 && v + 0 < 5000) }'

say "== hand-built messages (IPv4, IPv6)"
# probe ADDR: a ping-pong message (seq 0x0102030405060708, payload "hello
# reqrouter") and a throughput one; prints the reply to the first in hex
# and whether the second got any reply.
probe() {
	tb_cli python3 -c '
import socket, struct, sys
addr, port = sys.argv[1], int(sys.argv[2])
fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
s = socket.socket(fam, socket.SOCK_DGRAM)
s.settimeout(1)
def msg(flags, body=b"hello reqrouter"):
    return struct.pack(">QHI", 0x0102030405060708, flags, 14 + len(body)) + body
s.sendto(msg(3), (addr, port))
try:
    print(s.recv(2048).hex())
except socket.timeout:
    print("none")
s.sendto(msg(1), (addr, port))
s.sendto(b"not sockperf", (addr, port))
s.settimeout(0.5)
try:
    s.recv(2048)
    print("answered")
except socket.timeout:
    print("silent")' "$1" $PORT
}
# The request with flags 0x0003 (CLIENT|PONG) comes back as 0x0002.
want="01020304050607080002000000$(printf '%02x' 29)$(printf 'hello reqrouter' | od -An -tx1 | tr -d ' \n')"
for addr in "$TB_IP4_SRV" "$TB_IP6_SRV"; do
	mapfile -t out < <(probe "$addr")
	check_eq "$addr: the reply is the message with CLIENT cleared" \
		"$want" "${out[0]}"
	check_eq "$addr: a throughput message and a stray datagram get nothing" \
		silent "${out[1]}"
done
snapshot
check_eq "the two stray datagrams counted as sockperf_invalid" 2 "$INVALID"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the exit summary lists sockperf's counters" \
	grep -q '^function sockperf: sockperf_silent=' "$RR_OUT"

finish
