#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# reqrouterctl capture and trace (issue 46), on the bare defaults (one
# queue, nothing on the client's end, TB_PEER_XDP=0; tier auto, the reply
# cache on), reqrouter's stream read back with tcpdump:
#  - capture --port 1232 --count 6: three requests to reverse (the user
#    tier) and their replies, the same frames as tcpdump saw on the
#    client's end (bytes and all), none of the echo requests sent
#    meanwhile (filtered out in XDP);
#  - --source with an IPv6 prefix takes the IPv6 request alone;
#  - a request from a loop-prone source port, dropped in XDP, is in the
#    capture with its reason as the packet's comment;
#  - -w - piped into tcpdump -r -, and into a reader that goes away
#    (one line, and its capture ends: the next one starts); a second
#    capture while one runs, an
#    unwritable path, a prefix that does not parse (at reqrouterctl and
#    at the socket): one clear line each; a capture ended by SIGINT reads
#    back;
#  - --seconds 1 with no traffic ends with an empty capture that reads
#    back;
#  - trace --count 2 with trace_sample = 2: two JSON lines of four
#    requests, with their tier, XDP verdict, queuing delay, function time
#    and reply size;
#  - with an XDP program on the client's end echo is answered in XDP:
#    its requests and the replies built there are in the capture;
#  - reverse with xdp_spread = 0-1: its requests run on another CPU,
#    and their replies built there are in the capture too;
#  - fanout gathers from a target on the client: the requests, the copy
#    built in the UMEM, the target's replies (judged in XDP) and the
#    gathered replies are in the capture;
#  TCP goes through the kernel's stack: tcpdump sees it, capture does not.
#  - every request of the test was answered.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

command -v tcpdump >/dev/null ||
	skip "no tcpdump (tools/install-deps.sh test installs it)"
TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
CTL=$BUILD/reqrouterctl
[ -x "$CTL" ] || die "no binary at $CTL (run make first)"
rr_bed 1
SOCK=/run/reqrouter/$TB_IF_SRV.sock
CONF=$RR_TMP/capture.conf
asked=0 answered=0

# fanout gathers from one target on the client (sg_responder.py, below).
fanout_conf() {
	printf '[group one]\ntargets = %s:7\n' "$TB_IP4_CLI"
	printf '[function fanout]\ngroup = one\ngather_deadline_us = 900000\n'
}
{
	printf '[function reverse]\ntrace_sample = 2\n'
	fanout_conf
} >"$CONF"
rr_start main -c "$CONF" -i "$TB_IF_SRV" -q 1 -t 1 ||
	die "reqrouter did not start"

# ask PORT TEXT WANT: one request from the client, its reply checked.
ask() {
	local got
	got=$(cli_ask 1 "$1" "$2")
	asked=$((asked + 1))
	[ "$got" = "$3" ] && answered=$((answered + 1))
}
# started N: wait until reqrouter has begun its N-th session.
# shellcheck disable=SC2317 # called through wait_for
sessions() {
	test "$(grep -c ' started from the control socket' "$RR_ERR")" -ge "$1"
}
started() { wait_for 5 sessions "$1"; }
# ctl_bg NAME ARGS...: reqrouterctl in the background, its stderr in
# $RR_TMP/NAME.err; PID in CP.
ctl_bg() {
	local name=$1
	shift
	"$CTL" -s "$SOCK" "$@" 2>"$RR_TMP/$name.err" &
	CP=$!
}
# ctl_wait: CP's exit status, within 10 s.
ctl_wait() {
	local i
	for ((i = 0; i < 100; i++)); do
		kill -0 "$CP" 2>/dev/null || break
		sleep 0.1
	done
	kill -0 "$CP" 2>/dev/null && kill -KILL "$CP"
	wait "$CP"
}
# pairs TEXT N PORT LEN: N requests of LEN bytes to PORT and N replies
# from it in frames' lines TEXT.
pairs() {
	check_eq "$2 requests to $3" "$2" "$(grep -c \
		"^IP $TB_IP4_CLI\.[0-9]* > $TB_IP4_SRV\.$3: UDP, length $4" "$1")"
	check_eq "$2 replies from $3" "$2" "$(grep -c \
		"^IP $TB_IP4_SRV\.$3 > $TB_IP4_CLI\.[0-9]*: UDP, length $4" "$1")"
}
# frames FILE [FILTER]: tcpdump's lines for FILE, stamps left out, and
# each frame's bytes.
frames() {
	tcpdump -r "$1" -nn -t -x "${@:2}" 2>/dev/null
}

say "== capture --port 1232 --count 6: the user tier, filtered in XDP"
tb_cli tcpdump -i "$TB_IF_CLI" -nn -U --immediate-mode \
	-w "$RR_TMP/wire.pcap" udp port 1232 2>"$RR_TMP/wire.err" &
WP=$!
RR_BG_PIDS+=("$WP")
# The wire's copy from its first frame: tcpdump says when it listens
# (a fixed half second was not always enough beside three other tests),
# and in immediate mode writes each frame as it comes, not a buffer's
# worth at a time that the SIGTERM below could cut off.
wait_for 10 grep -q "listening on" "$RR_TMP/wire.err" ||
	bad "tcpdump on the client's end did not start: $(cat "$RR_TMP/wire.err")"
ctl_bg a capture --port 1232 --count 6 -w "$RR_TMP/a.pcapng"
started 1 || bad "the capture did not start"
for i in 1 2 3; do
	ask 1232 "hello-$i" "$i-olleh"
	ask 7 "echo-$i" "echo-$i"
done
ctl_wait
check_eq "capture: exit 0" 0 $?
check "it says how many packets it wrote" \
	grep -q 'capture: 6 packets into .*a.pcapng, 0 lost' "$RR_TMP/a.err"
sleep 0.3
kill -TERM "$WP" && wait "$WP"
frames "$RR_TMP/a.pcapng" >"$RR_TMP/a.txt"
frames "$RR_TMP/wire.pcap" >"$RR_TMP/wire.txt"
sed 's/^/    /' "$RR_TMP/a.txt" | grep -v '0x00'
check_eq "6 frames read back" 6 "$(grep -c '^IP ' "$RR_TMP/a.txt")"
pairs "$RR_TMP/a.txt" 3 1232 7
check "the frames, bytes and all, are those on the wire" \
	diff "$RR_TMP/wire.txt" "$RR_TMP/a.txt"
check "the payloads are the requests' and the replies'" \
	test "$(tcpdump -r "$RR_TMP/a.pcapng" -nn -A 2>/dev/null |
		grep -oE '(hello-[0-9]|[0-9]-olleh)' | tr '\n' ' ')" = \
	"hello-1 1-olleh hello-2 2-olleh hello-3 3-olleh "
check "no echo request (port 7) is in it" \
	test "$(grep -c '\.7[: ]' "$RR_TMP/a.txt")" = 0
check "each packet says what became of it" \
	grep -aq 'reverse: request; worker 0.0: reply, 49 bytes' \
	"$RR_TMP/a.pcapng"

say "== a request dropped in XDP, with its reason"
ctl_bg b capture --port 1232 --count 1 -w "$RR_TMP/b.pcapng"
started 2 || bad "the capture did not start"
tb_cli python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind(("", 19))
s.sendto(b"from-chargen", (sys.argv[1], 1232))' "$TB_IP4_SRV"
ctl_wait
check_eq "capture: exit 0" 0 $?
frames "$RR_TMP/b.pcapng" >"$RR_TMP/b.txt"
check "the request from port 19 is in it" \
	grep -q "^IP $TB_IP4_CLI\.19 > $TB_IP4_SRV\.1232: UDP, length 12" \
	"$RR_TMP/b.txt"
check "its comment gives the reason" \
	grep -aq 'reverse: request; XDP: drop loop_source_port' \
	"$RR_TMP/b.pcapng"

say "== an IPv6 prefix"
ctl_bg v capture --source fd00:7272::/64 --count 2 -w "$RR_TMP/v.pcapng"
started 3 || bad "the capture did not start"
ask 1232 "over-v4" "4v-revo" # not from the prefix
got=$(tb_cli python3 tools/lib/ask.py --reply --timeout 1 "$TB_IP6_SRV" 1232 \
	"over-v6")
asked=$((asked + 1))
[ "$got" = "6v-revo" ] && answered=$((answered + 1))
ctl_wait
check_eq "capture: exit 0" 0 $?
frames "$RR_TMP/v.pcapng" >"$RR_TMP/v.txt"
check "the IPv6 request and its reply, not the IPv4 one" test \
	"$(grep -c "^IP6 $TB_IP6_CLI\.[0-9]* > $TB_IP6_SRV\.1232: UDP, length 7" \
		"$RR_TMP/v.txt") $(grep -c '^IP ' "$RR_TMP/v.txt")" = "1 0"

say "== -w - into tcpdump -r -"
"$CTL" -s "$SOCK" capture --port 7 --count 2 -w - 2>"$RR_TMP/c.err" |
	tcpdump -r - -nn -t >"$RR_TMP/c.txt" 2>/dev/null &
CP=$!
started 4 || bad "the capture did not start"
ask 7 "piped" "piped"
ctl_wait
sed 's/^/    /' "$RR_TMP/c.txt"
check_eq "tcpdump read the request and the reply" 2 \
	"$(grep -c 'UDP, length 5' "$RR_TMP/c.txt")"

say "== a reader that goes away mid-stream"
"$CTL" -s "$SOCK" capture --port 7 -w - 2>"$RR_TMP/p.err" |
	head -c 64 >/dev/null &
CP=$!
started 5 || bad "the capture did not start"
ask 7 "gone-1" "gone-1"
ask 7 "gone-2" "gone-2"
ctl_wait
check_eq "reqrouterctl said so in one line" 1 "$(wc -l <"$RR_TMP/p.err")"
check "naming the pipe" grep -q 'cannot write stdout: Broken pipe' \
	"$RR_TMP/p.err"

say "== --seconds 1 with nothing to capture"
timeout 10 "$CTL" -s "$SOCK" capture --port 7 --source 10.9.9.9/32 \
	--seconds 1 -w "$RR_TMP/s.pcapng" 2>"$RR_TMP/s.err"
check_eq "capture --seconds 1: exit 0" 0 $?
check "it says it wrote none" grep -q 'capture: 0 packets into' \
	"$RR_TMP/s.err"
check "the empty capture reads back" tcpdump -r "$RR_TMP/s.pcapng"

say "== one at a time; bad input: one line each"
ctl_bg d capture --source "$TB_IP4_CLI/32" -w "$RR_TMP/d.pcapng"
started 7 || bad "the capture did not start"
cp "$RR_TMP/b.pcapng" "$RR_TMP/e.pcapng"
"$CTL" -s "$SOCK" capture -w "$RR_TMP/e.pcapng" 2>"$RR_TMP/e.err"
check_eq "a second capture: exit 1" 1 $?
check_eq "in one line" 1 "$(wc -l <"$RR_TMP/e.err")"
check "saying one runs" grep -q 'already under way' "$RR_TMP/e.err"
check "the file it named keeps what it held" \
	cmp -s "$RR_TMP/b.pcapng" "$RR_TMP/e.pcapng"
check "and no file of its own is left beside it" \
	bash -c "! ls '$RR_TMP'/e.pcapng.* 2>/dev/null | grep -q ."
ask 1232 "during" "gnirud"
ask 7 "during" "during"
sleep 0.3 # a tick or two for the records to come
kill -INT "$CP"
ctl_wait
check_eq "capture ended by SIGINT: exit 0" 0 $?
check_eq "what it wrote reads back: the client's 4 packets" 4 \
	"$(frames "$RR_TMP/d.pcapng" | grep -c '^IP ')"
"$CTL" -s "$SOCK" capture --port 9999 -w - 2>"$RR_TMP/n.err" >/dev/null
check_eq "a port no function is served on: exit 1" 1 $?
check_eq "in one line" 1 "$(wc -l <"$RR_TMP/n.err")"
check "saying so" grep -q 'no function is served on port 9999' "$RR_TMP/n.err"
"$CTL" -s "$SOCK" capture -w /proc/no/such.pcapng 2>"$RR_TMP/f.err"
check_eq "an unwritable path: exit 1" 1 $?
check_eq "in one line" 1 "$(wc -l <"$RR_TMP/f.err")"
check "naming it" grep -q 'cannot write /proc/no/such.pcapng' \
	"$RR_TMP/f.err"
"$CTL" -s "$SOCK" capture --source 10.0.0.0/33 -w - 2>"$RR_TMP/g.err"
check_eq "a prefix that does not parse: exit 2" 2 $?
check_eq "in one line" 1 "$(wc -l <"$RR_TMP/g.err")"
python3 -c '
import socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
s.connect(sys.argv[1])
s.sendall(b"capture 0 10.0.0.300/8 0 0 256 1\n")
print(s.recv(4096).decode().strip())' "$SOCK" >"$RR_TMP/h.txt"
sed 's/^/    /' "$RR_TMP/h.txt"
check "the instance refuses it too, in one line" \
	grep -q '"ok":false.*is no address or prefix' "$RR_TMP/h.txt"

say "== trace --count 2, trace_sample = 2"
ctl_bg t trace --count 2 >"$RR_TMP/t.json"
started 8 || bad "the trace did not start"
timeout 5 "$CTL" -s "$SOCK" trace --count 2 2>"$RR_TMP/t2.err" >/dev/null
check_eq "a second trace meanwhile: exit 1" 1 $?
for i in 1 2 3 4; do
	ask 1232 "trace-$i" "$i-ecart"
done
ctl_wait
check_eq "trace: exit 0" 0 $?
sed 's/^/    /' "$RR_TMP/t.json"
check_eq "two lines" 2 "$(wc -l <"$RR_TMP/t.json")"
check "each with the function, its tier and verdict, its times and reply" \
	python3 -c '
import json, sys
for line in open(sys.argv[1]):
    d = json.loads(line)
    assert d["function"] == "reverse" and d["port"] == 1232, d
    assert d["tier"] == "user" and d["xdp"] == "redirect function", d
    assert d["verdict"] == "reply" and d["reply_bytes"] == 49, d
    assert d["queue_delay_us"] >= 0 and d["function_us"] > 0, d
    assert d["arrival_ns"] > 0 and d["queue"] == 0, d' "$RR_TMP/t.json"

timeout 10 "$CTL" -s "$SOCK" trace --seconds 1 >"$RR_TMP/t3.json" \
	2>"$RR_TMP/t3.err"
check_eq "trace --seconds 1 with nothing sampled: exit 0" 0 $?
check_eq "and no line" 0 "$(cat "$RR_TMP"/t3.json "$RR_TMP"/t3.err | wc -l)"

say "== trace with no trace_sample set anywhere"
: >"$CONF"
"$CTL" -s "$SOCK" reload >/dev/null 2>&1 || bad "reload without trace_sample failed"
timeout 5 "$CTL" -s "$SOCK" trace --count 1 >/dev/null 2>"$RR_TMP/t4.err"
check_eq "trace: exit 1 at once" 1 $?
check_eq "in one line" 1 "$(wc -l <"$RR_TMP/t4.err")"
check "saying no function has trace_sample" grep -q 'no function has trace_sample set' \
	"$RR_TMP/t4.err"

say "== the in-kernel tier: an XDP program on the client's end"
rr_peer_xdp_on
ctl_bg x capture --port 7 --count 4 -w "$RR_TMP/x.pcapng"
started 10 || bad "the capture did not start"
ask 7 "in-xdp-1" "in-xdp-1"
ask 7 "in-xdp-2" "in-xdp-2"
ctl_wait
check_eq "capture: exit 0" 0 $?
frames "$RR_TMP/x.pcapng" >"$RR_TMP/x.txt"
pairs "$RR_TMP/x.txt" 2 7 8
check "answered in XDP, by echo's program" \
	grep -aq 'echo: request; XDP: tx function' "$RR_TMP/x.pcapng"
check "the replies built there" grep -aq 'echo: reply; XDP' \
	"$RR_TMP/x.pcapng"

say "== xdp_spread: requests run on another CPU, their replies too"
{
	printf '[function reverse]\ntrace_sample = 2\nxdp_spread = 0-1\n'
	fanout_conf
} >"$CONF"
kill -HUP "$RR_PID"
wait_for 5 grep -q "'reverse': its XDP program runs on CPUs 0-1 (xdp_spread)" \
	"$RR_ERR" || bad "the spread did not start"
ctl_bg s capture --port 1232 --count 4 --seconds 5 -w "$RR_TMP/s.pcapng"
started 11 || bad "the capture did not start"
ask 1232 "spread-1" "1-daerps"
ask 1232 "spread-2" "2-daerps"
ctl_wait
check_eq "capture: exit 0" 0 $?
frames "$RR_TMP/s.pcapng" >"$RR_TMP/s.txt"
sed 's/^/    /' "$RR_TMP/s.txt" | grep -v '0x00'
pairs "$RR_TMP/s.txt" 2 1232 8
check "answered on a spread CPU, by reverse's program" \
	grep -aq 'reverse: request; XDP: tx function' "$RR_TMP/s.pcapng"
check "the replies built there" grep -aq 'reverse: reply; XDP' \
	"$RR_TMP/s.pcapng"

say "== a gather: its copy, its target's reply and its own reply"
sg_responders "$RR_TMP/resp.log" 30 "$TB_IP4_CLI=value:5"
ctl_bg g capture --count 7 --seconds 5 -w "$RR_TMP/g.pcapng"
started 12 || bad "the capture did not start"
# The first gather's copy goes through the stack (a target's way is not
# known yet): tcpdump sees it. Its reply teaches XDP the way: the
# second's is built in the UMEM, past the stack.
ask 9014 "a" "5 1/1"
ask 9014 "b" "5 1/1"
ctl_wait
check_eq "capture: exit 0" 0 $?
frames "$RR_TMP/g.pcapng" >"$RR_TMP/g.txt"
sed 's/^/    /' "$RR_TMP/g.txt" | grep -v '0x00'
strings "$RR_TMP/g.pcapng" | grep -a "; " | sed "s/^/    comment: /"
check_eq "7 frames: 2 requests, a copy, 2 replies to the gather, 2 replies" \
	7 "$(grep -c '^IP ' "$RR_TMP/g.txt")"
check_eq "the requests, told they wait for their gathers" 2 \
	"$(grep -ao "fanout: request; worker 0.0: no reply yet (a gather's)" \
		"$RR_TMP/g.pcapng" | wc -l)"
check_eq "the copy built in the UMEM" 1 \
	"$(grep -ao 'fanout: gather copy; worker 0.0' "$RR_TMP/g.pcapng" | wc -l)"
check_eq "the target's replies, judged in XDP" 2 \
	"$(grep -aoE "fanout: a target's reply; XDP: (gather merged|redirect gather)" \
		"$RR_TMP/g.pcapng" | wc -l)"
check_eq "the gathered replies the worker sent" 2 \
	"$(grep -ao 'fanout: reply; worker 0.0' "$RR_TMP/g.pcapng" | wc -l)"
check "the copy goes to the target, from the gather's port" \
	grep -q "^IP $TB_IP4_SRV\.[0-9]* > $TB_IP4_CLI\.7: UDP" "$RR_TMP/g.txt"

check_eq "every request of the test was answered ($asked)" "$asked" \
	"$answered"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
