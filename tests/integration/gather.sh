#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# Gathers (issue 26) as a user of fanout (port 9014) sees them, on the
# one-queue bed with a bare veth (TB_PEER_XDP=0) and the default
# isolation (cells). The targets are python responders
# (lib/sg_responder.py) on extra addresses of the client namespace,
# 198.18.0.101-120, one socket each, each told how to answer; fanout's
# group and reduction change by reload, one reqrouter throughout the
# first part:
#  - sum over 10 targets answering 1..10 is "55 10/10", each target
#    asked once with its own index, the reply sent as soon as the last
#    reply is in (well before the deadline); a reload that takes group
#    ten down to five targets asks those five; two IPv6 targets and an
#    IPv4 one in a group sum as well; split = yes sends each echo its own
#    item (an empty payload past the list: no value, missed); concat over 3 echoes
#    returns each body; topk k=3, min, max, count and or, once each;
#  - a silent target: the reply comes after gather_deadline_us (50 ms),
#    well under a second, "45 9/10 missed 4";
#  - a target that answers twice is counted once (gather_duplicate);
#  - one that answers after the deadline is missed, and its reply counts
#    as gather_late when it comes;
#  - one that answers from another address is missed
#    (gather_wrong_source);
#  - a reload while a gather is outstanding: its reply still comes;
#  - a cell killed (SIGKILL) while a gather is outstanding: restarted,
#    every UMEM frame back, the next request answered;
#  - gather_limit = 1: a second request while the first is outstanding
#    is dropped (gather_limit), the first answered;
#  - the default (gather_scatter = umem) puts nothing on the egress;
#    with gather_scatter = tc the scatter program is there, sums and
#    misses as the default does, the host's own traffic (ping, other
#    UDP, both ways) is untouched, and the program is gone once
#    reqrouter exits;
#  - gather_scatter = socket sums with no copy built in the UMEM and no
#    stock of frames kept;
#  - with gather_scatter = umem the first gather's copies go through the
#    stack and the later ones' are built in the UMEM
#    (reqrouter_gather_copies_umem_total): sums, IPv6, a silent target
#    (never learned: always through the stack), the targets' MAC
#    changed (all missed once, then through the stack, then learned
#    again); the stock of frames is
#    counted apart and the frames add up to 4096, before and after a
#    cell holding a stock is killed;
#  - --check refuses a group without targets, bad targets, fanout
#    without a group or with an unknown one, need over the group's
#    size, each in one line, and accepts the good config.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
rr_bed 1
# The metrics as reqrouter counts them at the moment asked (GET /metrics,
# scrape), not at the metrics file's next rewrite, up to a second later;
# on the server's loopback, off the bed's link, whose traffic (and the
# client end's MAC) the test changes.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom
CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
CONF=$RR_TMP/gather.conf
RESP_LOG=$RR_TMP/responders.log
ASK=$RR_TMP/ask.py
NET=198.18.0
PORT=9014

# The targets: values 1..10 on .101-.110, echoes on .111-.113, a silent
# one (.114), one that answers twice (.115), one 200 ms late (.116), one
# from another address (.117, answering from .120) and one 20 ms late
# (.118: its gather is still open when the other's second answer comes).
for ((i = 101; i <= 120; i++)); do
	tb_cli ip addr add "$NET.$i/24" dev "$TB_IF_CLI" ||
		die "cannot add $NET.$i to the client end"
done
# Two IPv6 targets, answering 20 and 22.
NET6=fd00:7272::
for i in 101 102; do
	tb_cli ip -6 addr add "$NET6$i/64" dev "$TB_IF_CLI" nodad ||
		die "cannot add $NET6$i to the client end"
done
targets=("$NET6""101=value:20" "$NET6""102=value:22")
for ((i = 1; i <= 10; i++)); do targets+=("$NET.$((100 + i))=value:$i"); done
targets+=("$NET.111=echo" "$NET.112=echo" "$NET.113=echo"
	"$NET.114=silent" "$NET.115=twice+value:7" "$NET.116=late:200+value:5"
	"$NET.117=from:$NET.120+value:5" "$NET.118=late:20+value:3")
sg_responders "$RESP_LOG" 110 "${targets[@]}"

# The client: requests to fanout, each from a socket of its own, the
# first at once and each other AT_MS after the first; each reply (or
# "<none>") in OUT/I.reply and the milliseconds it took in OUT/I.ms.
cat >"$ASK" <<'EOF'
import os, select, socket, sys, time
addr, port, out, timeout = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    float(sys.argv[4])
reqs = [(0.0, sys.argv[5].encode())]
rest = sys.argv[6:]
for i in range(0, len(rest) - 1, 2):
    reqs.append((float(rest[i]) / 1000, rest[i + 1].encode()))
socks, sent, got = [], {}, {}
start = time.monotonic()
for _ in reqs:
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.connect((addr, port))
    socks.append(s)
end = start + reqs[-1][0] + timeout
while len(got) < len(reqs) and time.monotonic() < end:
    now = time.monotonic()
    for i, (at, text) in enumerate(reqs):
        if i not in sent and now - start >= at:
            # Taken before the send: over the veth, the gather may
            # start (and its deadline run) before send() returns.
            sent[i] = time.monotonic()
            socks[i].send(text)
    later = [at for i, (at, _) in enumerate(reqs) if i not in sent]
    wait = end - now if not later else min(later) - (now - start)
    r, _, _ = select.select([s for i, s in enumerate(socks)
                             if i in sent and i not in got], [], [],
                            max(min(wait, 0.05), 0))
    for s in r:
        i = socks.index(s)
        got[i] = (s.recv(65535), time.monotonic() - sent[i])
for i in range(len(reqs)):
    reply, secs = got.get(i, (None, None))
    with open(os.path.join(out, "%d.reply" % i), "wb") as f:
        f.write(b"<none>" if reply is None else reply)
    with open(os.path.join(out, "%d.ms" % i), "w") as f:
        f.write("-" if secs is None else "%d" % (secs * 1000))
EOF

# fan TEXT [TIMEOUT [AT_MS TEXT]...]: fanout's reply to TEXT (the later
# requests' in $RR_TMP/ask/1.reply, ...); ms: the first one's time.
fan() {
	local text=$1 timeout=${2:-2}
	shift
	[ $# -gt 0 ] && shift
	rm -rf "$RR_TMP/ask"
	mkdir -p "$RR_TMP/ask"
	tb_cli python3 "$ASK" "$TB_IP4_SRV" $PORT "$RR_TMP/ask" "$timeout" \
		"$text" "$@"
	cat "$RR_TMP/ask/0.reply"
}
ms() { cat "$RR_TMP/ask/0.ms"; }

# conf GROUP REDUCE [LINES...]: the config, fanout on GROUP; the groups
# are always all there (several lines and blanks for some, as a user
# may write them).
conf() {
	local group=$1 reduce=$2
	shift 2
	cat >"$CONF" <<EOF
[group ten]
targets = $NET.101-$NET.${TEN_LAST:-110}:7
[group three]
targets = $NET.111:7, $NET.112:7 $NET.113:7
[group silent]
targets = $NET.101-$NET.104:7, $NET.114:7
targets = $NET.105-$NET.109:7
[group twice]
targets = $NET.115:7 $NET.118:7
[group late]
targets = $NET.101-$NET.103:7, $NET.116:7
[group wrong]
targets = $NET.117:7, $NET.101-$NET.102:7
[group six]
targets = [$NET6$((101))]:7 [$NET6$((102))]:7, $NET.101:7
[function fanout]
group = $group
reduce = $reduce
EOF
	printf '%s\n' "$@" >>"$CONF"
}
reload() { # WHAT: reqrouterctl reload, which must succeed
	"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.out" 2>&1
	local rc=$?
	check_eq "reload ($1): exit 0" 0 $rc
	[ $rc = 0 ] || sed 's/^/    /' "$RR_TMP/reload.out"
}
# scrape: the metrics now, in $M.
scrape() { rr_scrape srv "http://$LISTEN/metrics" "$M"; }
# xdp REASON: reqrouter_xdp_packets_total for REASON, all queues, as of
# the last scrape.
xdp() { metric "$M" reqrouter_xdp_packets_total "reason=\"$1\""; }
# moved_by_one WHAT REASON BEFORE: the XDP counter REASON reaches
# BEFORE + 1 within 3 s, and stays there (0.2 s later).
moved_by_one() {
	METRIC_REFRESH=scrape wait_metric "$M" 3 reqrouter_xdp_packets_total \
		"reason=\"$2\"" -- $(($3 + 1)) >/dev/null
	sleep 0.2
	scrape
	check_eq "$1: $2 moved by 1" $(($3 + 1)) "$(xdp "$2")"
}
# got ADDR: the messages the responder at ADDR received so far.
got() { grep -c "^got $1 " "$RESP_LOG"; }
# held: UMEM frames in the workers' hands or their rings, now.
held() {
	"$CTL" --control "$SOCK" --json stats >"$RR_TMP/stats.json" &&
		rr_umem_held "$RR_TMP/stats.json"
}
# shellcheck disable=SC2317 # called through wait_for
held_is() { [ "$(held)" = "$1" ]; }
# outstanding TIMEOUT AT_MS...: start fanout requests in the background
# (at these offsets, see fan), then wait (at most 3 s) until the silent
# target has been asked the first time; the client's PID in ASK_PID.
outstanding() {
	local timeout=$1 before n
	shift
	before=$(got "$NET.114")
	rm -rf "$RR_TMP/ask"
	mkdir -p "$RR_TMP/ask"
	tb_cli_bg python3 "$ASK" "$TB_IP4_SRV" $PORT "$RR_TMP/ask" "$timeout" "$@"
	ASK_PID=$TB_PID # it ends by itself, after TIMEOUT at most
	for ((n = 0; n < 60; n++)); do
		[ "$(got "$NET.114")" -gt "$before" ] && return 0
		sleep 0.05
	done
	return 1
}

say "== reductions (one reqrouter, reloaded between them)"
conf ten sum 'gather_deadline_us = 1000000'
rr_start gather -i "$TB_IF_SRV" -q 1 -c "$CONF" \
	--metrics-listen "$LISTEN" --control "$SOCK" || die "reqrouter with fanout did not start"
check "log: fanout served on its port" \
	grep -q "serving 'fanout' on UDP port $PORT" "$RR_ERR"
check "the default builds the copies in the UMEM" \
	grep -q "gathers: each copy built in the UMEM" "$RR_ERR"
check "... and puts nothing on the host's egress" \
	test -z "$(tb_srv tc filter show dev "$TB_IF_SRV" egress)"
cells=$(pgrep -c -P "$RR_PID")
check_eq "one cell (isolation cell, the default)" 1 "$cells"

check_eq "sum over 10 targets answering 1..10" "55 10/10" "$(fan 12345)"
t=$(ms)
check "sum: answered once all were in ($t ms), not at the 1 s deadline" \
	test "$t" != - -a "${t/-/0}" -lt 500
ok_targets=0
for ((i = 0; i < 10; i++)); do
	grep -q "^got $NET.$((101 + i)) gather=[0-9]* gen=[0-9]* target=$i flags=0 len=5$" \
		"$RESP_LOG" && [ "$(got "$NET.$((101 + i))")" = 1 ] &&
		ok_targets=$((ok_targets + 1))
done
check_eq "sum: each target asked once, with its index and the payload" 10 \
	$ok_targets
check_eq "sum again: the same" "55 10/10" "$(fan again)"
TEN_LAST=105 conf ten sum 'gather_deadline_us = 1000000'
reload "group ten down to five targets"
check "... the reload says the groups changed" \
	grep -q '\[group\]: 7 groups, applied' "$RR_TMP/reload.out"
check_eq "the group's new targets asked: 1..5" "15 5/5" "$(fan five)"
conf six sum 'gather_deadline_us = 1000000'
reload "IPv6 targets"
check_eq "two IPv6 targets and an IPv4 one" "43 3/3" "$(fan six)"

conf three sum 'split = yes' 'gather_deadline_us = 300000'
reload "split = yes"
check_eq "a payload per target: 3,4,5 to three echoes" "12 3/3" \
	"$(fan '3,4,5')"
check_eq "... and two items for three: the third gets none, misses" \
	"13 2/3 missed 2" "$(fan '6,7')"
conf three concat 'gather_deadline_us = 1000000'
reload concat
check_eq "concat over 3 echoes: each body, then the count (lines joined by |)" \
	"concat me|concat me|concat me|3/3|" "$(fan 'concat me' | tr '\n' '|')"
conf ten topk 'k = 3' 'gather_deadline_us = 1000000'
reload "topk, k = 3"
check_eq "topk k=3 over 1..10" "10,9,8 10/10" "$(fan 42)"
for r in "min 1" "max 10" "count 10" "or 15"; do
	conf ten "${r% *}" 'gather_deadline_us = 1000000'
	reload "${r% *}"
	check_eq "${r% *} over 1..10" "${r#* } 10/10" "$(fan 42)"
done

say "== targets that miss (deadline 50 ms) or answer twice"
conf silent sum 'gather_deadline_us = 50000'
reload "silent target"
reply=$(fan silent)
t=$(ms)
check_eq "a silent target (index 4): missed, the nine summed" \
	"45 9/10 missed 4" "$reply"
check "silent: the reply came after the deadline, well under 1 s ($t ms)" \
	test "$t" != - -a "${t/-/0}" -ge 50 -a "${t/-/0}" -lt 1000

conf twice sum 'gather_deadline_us = 1000000'
reload "a target that answers twice"
scrape
dup=$(xdp gather_duplicate)
late=$(xdp gather_late)
check_eq "a target answering twice is counted once" "10 2/2" "$(fan twice)"
moved_by_one "twice" gather_duplicate "$dup"
check_eq "twice: nothing counted late" "$late" "$(xdp gather_late)"

conf late sum 'gather_deadline_us = 50000'
reload "a late target"
scrape
late=$(xdp gather_late)
check_eq "a target 200 ms late (index 3): missed" "6 3/4 missed 3" \
	"$(fan late)"
moved_by_one "late, once its reply came" gather_late "$late"

conf wrong sum 'gather_deadline_us = 50000'
reload "a target answering from another address"
scrape
wrong=$(xdp gather_wrong_source)
check_eq "a target answering from another address (index 0): missed" \
	"3 2/3 missed 0" "$(fan wrong)"
moved_by_one "wrong source" gather_wrong_source "$wrong"

say "== a reload while a gather is outstanding (deadline 500 ms)"
conf silent sum 'gather_deadline_us = 500000'
reload "deadline 500 ms"
if outstanding 3 during-reload; then
	check_eq "while it is outstanding, the worker holds its frame" 1 \
		"$(held)"
	reload "with a gather outstanding"
	wait "$ASK_PID"
	# A cell renewed by the reload answers its gathers before it makes
	# way (for a second at most).
	check_eq "its reply still comes, correct" "45 9/10 missed 4" \
		"$(cat "$RR_TMP/ask/0.reply")"
	t=$(ms)
	check "... at its deadline ($t ms)" \
		test "$t" != - -a "${t/-/0}" -ge 500 -a "${t/-/0}" -lt 2000
else
	bad "the silent target was never asked: no gather to reload under"
fi
check "every UMEM frame back once idle" wait_for 3 held_is 0

say "== a cell killed while a gather is outstanding"
cell=$(pgrep -P "$RR_PID")
check "the cell is named rr-cell" grep -q '^rr-cell' "/proc/$cell/comm"
deaths() { grep -c 'died outside a function\|crashed' "$RR_ERR"; }
# shellcheck disable=SC2317 # called through wait_for
restarted_since() { [ "$(deaths)" -gt "$1" ]; }
# shellcheck disable=SC2317 # likewise
new_cell() { # OLD-PID: one cell runs, not OLD-PID
	local now
	now=$(pgrep -P "$RR_PID")
	[ -n "$now" ] && [ "$now" != "$1" ]
}
restarts=$(deaths)
if outstanding 1 during-kill; then
	kill -KILL "$cell"
	wait "$ASK_PID"
	say "    the request it held: $(cat "$RR_TMP/ask/0.reply")"
else
	bad "the silent target was never asked: no gather to kill a cell under"
fi
check "the restart is logged" wait_for 5 restarted_since "$restarts"
grep 'died outside a function\|crashed' "$RR_ERR" | tail -n 1 |
	sed 's/^/    /'
check "a new cell runs" wait_for 5 new_cell "$cell"
check "every UMEM frame back once idle (worker 0)" wait_for 3 held_is 0
scrape
check_eq "metrics: no UMEM frame in a worker's hands" 0 \
	"$(metric "$M" reqrouter_umem_frames 'state="worker"')"
check_eq "the next request is answered, correct" "45 9/10 missed 4" \
	"$(fan after-kill)"
conf ten sum 'gather_deadline_us = 500000'
reload "back to ten"
check_eq "and a complete one" "55 10/10" "$(fan after-kill)"

say "== gather_limit = 1 (deadline 500 ms)"
conf silent sum 'gather_deadline_us = 500000' 'gather_limit = 1'
reload "gather_limit = 1"
scrape
limit=$(metric "$M" reqrouter_dropped_packets_total 'function="fanout"' \
	'reason="gather_limit"')
check_eq "the first of two requests 150 ms apart is answered" \
	"45 9/10 missed 4" "$(fan first 1 150 second)"
check_eq "the second, while the first is outstanding, is not" "<none>" \
	"$(cat "$RR_TMP/ask/1.reply")"
METRIC_REFRESH=scrape wait_metric "$M" 3 reqrouter_dropped_packets_total \
	'function="fanout"' 'reason="gather_limit"' -- $((limit + 1)) >/dev/null
scrape
check_eq "gather_limit: fanout's drops moved by 1" $((limit + 1)) \
	"$(metric "$M" reqrouter_dropped_packets_total 'function="fanout"' \
		'reason="gather_limit"')"
check_eq "after it: one request, one reply" "45 9/10 missed 4" \
	"$(fan alone)"

say "== gather_scatter = tc: the copies cloned at TC egress"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
conf ten sum 'gather_deadline_us = 1000000'
rr_start gather_tc -i "$TB_IF_SRV" -q 1 -c "$CONF" \
	--metrics-listen "$LISTEN" --control "$SOCK" --gather-scatter tc ||
	die "reqrouter with gather_scatter = tc did not start"
check "log: the scatter program is on the egress" \
	grep -q "gathers: the scatter program is on $TB_IF_SRV's egress (TC)" \
	"$RR_ERR"
check "the scatter program is on the egress while fanout is served" \
	grep -q 'reqrouter_scat.*' <(tb_srv tc filter show dev "$TB_IF_SRV" egress)
check_eq "tc: sum over 10 targets answering 1..10" "55 10/10" "$(fan tc)"
conf six sum 'gather_deadline_us = 1000000'
reload "tc, IPv6 targets"
check_eq "tc: two IPv6 targets and an IPv4 one" "43 3/3" "$(fan tc6)"
conf silent sum 'gather_deadline_us = 50000'
"$CTL" --control "$SOCK" reload >/dev/null 2>&1
check_eq "tc: a silent target missed" "45 9/10 missed 4" "$(fan tc2)"

say "== the host's own traffic, with the scatter program on the egress"
# pings NS ARGS...: one ping from NS (cli or srv) answered within 2 s.
# shellcheck disable=SC2317 # called through check
pings() {
	local ns=$1
	shift
	"tb_$ns" ping -c 1 -W 2 -q "$@" >/dev/null 2>&1
}
check "ping from the client namespace" pings cli "$TB_IP4_SRV"
check "ping from the server namespace to a target's address" \
	pings srv "$NET.111"
check "ping over IPv6" pings cli -6 "$TB_IP6_SRV"
# A plain UDP exchange each way: a one-shot echo in the server namespace
# on port 5999, and the server namespace asking an echo target (.111:7)
# from an ordinary socket, without a gather header.
tb_srv_bg timeout 5 python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.bind((sys.argv[1], 5999))
print("ready", flush=True)
d, peer = s.recvfrom(2048)
s.sendto(d, peer)
' "$TB_IP4_SRV" >"$RR_TMP/udp_echo.out" 2>&1
UDP_PID=$TB_PID # ends by itself, within 5 s
wait_for 3 grep -q ready "$RR_TMP/udp_echo.out"
check_eq "UDP to another port of the server is answered by its socket" \
	"plain udp" "$(cli_ask 2 5999 'plain udp')"
wait "$UDP_PID"
check_eq "UDP from the server namespace to a target, and its answer" \
	"from the host" "$(tb_srv python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
s.sendto(b"from the host", (sys.argv[1], 7))
try:
    print(s.recv(2048).decode())
except socket.timeout:
    print("<none>")
' "$NET.111")"

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
filters=$(tb_srv tc filter show dev "$TB_IF_SRV" egress)
check "after exit: no reqrouter_scatter filter on the egress" \
	test -z "$(grep 'reqrouter_scat' <<<"$filters")"
[ -n "$filters" ] && say "    egress filters left: $filters"

# copies [N]: fanout's copies built in the UMEM so far: once they reach N
# (3 s at most; a count past N shows), or without N as they are now.
copies() {
	if [ $# -gt 0 ]; then
		METRIC_REFRESH=scrape wait_metric "$M" 3 \
			reqrouter_gather_copies_umem_total \
			'function="fanout"' -- "$1" >/dev/null
	else
		scrape
	fi
	metric "$M" reqrouter_gather_copies_umem_total 'function="fanout"'
}

say "== gather_scatter = socket: every copy through the worker's socket"
conf ten sum 'gather_deadline_us = 1000000'
rr_start gather_socket -i "$TB_IF_SRV" -q 1 -c "$CONF" \
	--metrics-listen "$LISTEN" --control "$SOCK" --gather-scatter socket ||
	die "reqrouter with gather_scatter = socket did not start"
check "log: the copies are sent through the worker's socket" \
	grep -q "gathers: each copy sent through its worker's socket" "$RR_ERR"
check_eq "socket: sum over 10 targets" "55 10/10" "$(fan s-first)"
check_eq "socket: and again" "55 10/10" "$(fan s-second)"
check_eq "... no copy built in the UMEM" 0 "$(copies)"
check_eq "... no stock of frames kept" 0 \
	"$(metric "$M" reqrouter_umem_frames 'state="stock"')"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== gather_scatter = umem (the default): the copies built in the UMEM"
conf ten sum 'gather_deadline_us = 1000000'
rr_start gather_umem -i "$TB_IF_SRV" -q 1 -c "$CONF" \
	--metrics-listen "$LISTEN" --control "$SOCK" ||
	die "reqrouter with the default gather_scatter did not start"
check "... nothing is put on the host's egress" \
	test -z "$(tb_srv tc filter show dev "$TB_IF_SRV" egress)"
before101=$(got "$NET.101")
check_eq "umem: the first sum (no way to a target known yet)" "55 10/10" \
	"$(fan u-first)"
check_eq "... its copies went through the stack" 0 "$(copies)"
lines=$(wc -l <"$RESP_LOG")
check_eq "umem: the second sum" "55 10/10" "$(fan u-second)"
check_eq "... its ten copies built in the UMEM" 10 "$(copies 10)"
# Each of .101-.110 got its own index (.101 index 0) and the payload.
asked_right=$(tail -n +$((lines + 1)) "$RESP_LOG" |
	sed -n "s/^got $NET\.1\([01][0-9]\) gather=[0-9]* gen=[0-9]* target=\([0-9]\) flags=0 len=8$/\1 \2/p" |
	awk '$1 - 1 == $2' | wc -l)
check_eq "... each target asked once, with its index and the payload" 10 \
	"$asked_right"
check_eq "... target 0 asked once per gather" $((before101 + 2)) \
	"$(got "$NET.101")"
conf six sum 'gather_deadline_us = 1000000'
reload "umem, IPv6 targets"
fan u6 >/dev/null
check_eq "umem: two IPv6 targets and an IPv4 one, built in the UMEM" \
	"43 3/3" "$(fan u6)"
check_eq "... 3 more copies from the UMEM" 13 "$(copies 13)"
conf silent sum 'gather_deadline_us = 50000'
reload "umem, a silent target"
fan u-silent >/dev/null
check_eq "umem: a silent target missed, the others built in the UMEM" \
	"45 9/10 missed 4" "$(fan u-silent)"
check_eq "... 9 more copies from the UMEM (the silent one's never)" 22 \
	"$(copies 22)"
# A target's MAC changes (a host replaced; its gratuitous ARP updated
# the kernel's neighbours, which the flush stands for): the learned way
# is stale, the gather misses them all once, then asks through the
# stack, then learns the new way.
conf ten sum 'gather_deadline_us = 50000'
reload "umem, ten again, deadline 50 ms"
fan u-warm >/dev/null
c0=$(copies)
tb_cli ip link set dev "$TB_IF_CLI" address 02:72:72:00:00:99 ||
	die "cannot change the client end's MAC"
tb_srv ip neigh flush dev "$TB_IF_SRV"
check_eq "umem: the targets' MAC changed: all missed once" \
	"0 0/10 missed 0,1,2,3,4,5,6,7,8,9" "$(fan u-moved)"
check_eq "... the next gather asks through the stack, all answer" \
	"55 10/10" "$(fan u-moved)"
check_eq "... no copy of it built in the UMEM" $((c0 + 10)) "$(copies)"
check_eq "... the one after is built in the UMEM again" "55 10/10" \
	"$(fan u-moved)"
check_eq "... its ten copies" $((c0 + 20)) "$(copies $((c0 + 20)))"
scrape
stock=$(metric "$M" reqrouter_umem_frames 'state="stock"')
check "the worker keeps a stock of frames for the copies ($stock)" \
	test "${stock:-0}" -gt 0 -a "${stock:-0}" -le 256
# all_frames: the states of queue 0's frames add up to the UMEM's 4096.
all_frames() {
	local s n=0
	scrape
	for s in fill rx worker stock tx completion kernel; do
		n=$((n + $(metric "$M" reqrouter_umem_frames "state=\"$s\"")))
	done
	echo $n
}
check_eq "... counted apart: the frames still add up to 4096" 4096 \
	"$(all_frames)"
cell=$(pgrep -P "$RR_PID")
restarts=$(deaths)
kill -KILL "$cell"
check "a cell killed holding a stock is restarted" \
	wait_for 5 restarted_since "$restarts"
check "... a new cell runs" wait_for 5 new_cell "$cell"
check "... every UMEM frame back once idle" wait_for 3 held_is 0
check_eq "... the dead cell's stock back: the frames add up to 4096" 4096 \
	"$(all_frames)"
fan u-after >/dev/null
c1=$(copies)
check_eq "... and the next cell answers" "55 10/10" "$(fan u-after)"
check_eq "... its copies built in the UMEM" $((c1 + 10)) \
	"$(copies $((c1 + 10)))"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== --check"
# check_refuses WHAT WANT: --check of $CONF exits non-zero with one line
# of stderr matching WANT before its verdict.
check_refuses() {
	rr_run check --check -c "$CONF" -i "$TB_IF_SRV"
	check "--check refuses $1 (exit $RR_RC)" test "$RR_RC" -ne 0
	check "--check: $1 said in one line" \
		test "$(grep -c -- "$2" "$RR_ERR")" = 1 -a \
		"$(wc -l <"$RR_ERR")" = 1
	sed 's/^/    stderr: /' "$RR_ERR" | head -n 4
}
printf '[group g]\ntargets =\n[function fanout]\ngroup = g\n' >"$CONF"
check_refuses "a group without targets" "\[group g\] has no targets"
printf '[group g]\n[function fanout]\ngroup = g\n' >"$CONF"
check_refuses "a group without a targets line" \
	"$CONF:1: \[group g\] has no targets"
printf '[group g]\ntargets = 1.2.3:7\n[function fanout]\ngroup = g\n' >"$CONF"
check_refuses "target 1.2.3:7" "target '1.2.3:7': bad IPv4 address"
printf '[group g]\ntargets = 10.0.0.9-10.0.0.1:7\n[function fanout]\ngroup = g\n' \
	>"$CONF"
check_refuses "target 10.0.0.9-10.0.0.1:7" \
	"target '10.0.0.9-10.0.0.1:7': the range ends before it starts"
printf '[group g]\ntargets = %s.101-%s.110:7\n[function fanout]\nreduce = sum\n' \
	$NET $NET >"$CONF"
check_refuses "fanout without a group" "no group: fanout needs one"
printf '[group g]\ntargets = %s.101-%s.110:7\n[function fanout]\ngroup = h\n' \
	$NET $NET >"$CONF"
check_refuses "fanout naming an unknown group" "no \[group h\] in the config"
printf '[group g]\ntargets = %s.101-%s.110:7\n[function fanout]\ngroup = g\nneed = 11\n' \
	$NET $NET >"$CONF"
check_refuses "need = 11 for a group of 10" "need = 11: group g has only 10 targets"
printf '[group g]\ntargets = %s.101-%s.110:7\n[function fanout]\ngroup = g\nk = 0\n' \
	$NET $NET >"$CONF"
check_refuses "k = 0" \
	"$CONF:5: function fanout: k must be a number from 1 to 16, not '0'"
printf '[group g]\ntargets = %s.101-%s.110:7\n[function fanout]\ngroup = g\nneed = +3\n' \
	$NET $NET >"$CONF"
check_refuses "need = +3" \
	"$CONF:5: function fanout: need must be a number from 0 to 1024, not '+3'"
conf ten topk 'k = 3' 'need = 10' 'gather_deadline_us = 50000' \
	'gather_limit = 8'
rr_run check --check -c "$CONF" -i "$TB_IF_SRV"
check_eq "--check accepts the good config" 0 "$RR_RC"
check "... and says it would serve fanout" \
	grep -q "fanout on port $PORT" "$RR_OUT"

kill -TERM "$RESP_PID"
wait "$RESP_PID"
check_eq "the responders end on SIGTERM, exit 0" 0 $?
RR_BG_PIDS=()
finish
