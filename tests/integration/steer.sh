#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# steering: which of a queue's workers gets a request, on the bare
# defaults (cells, no XDP program on the veth peer), -q 1 -t 2, the test
# module faulty, whose "slow" spins 300 ms inside the function, with
# own_cells = no: it shares the two workers with the built-in functions,
# which is what steering chooses among (a module has cells of its own by
# default: docs/DESIGN.md, "Cell groups").
#
# - least_loaded, the default: the worker stuck in the call receives
#   nothing new (its socket's rx grows by the slow request only), and no
#   quick request is late.
# - steering = round_robin, applied by reqrouterctl reload while serving:
#   quick requests sent while one worker is inside a slow call go to it in
#   turn and wait behind the call (head-of-line blocking): about half of
#   them are late (> 150 ms).
# - the queuing delay of every request is measured from the XDP program's
#   stamp (reqrouter_queue_delay_seconds): one sample per request, and
#   the late ones show up above 100 ms.
# - steering = groups: with workers = 1 every request goes to worker 1;
#   with workers = 0 and group_delay_us, the group grows into worker 1
#   while worker 0 is stuck in the call (said in one line), and shrinks
#   back once the requests wait no more.
# - classes from a function's own XDP program: work's sends a request for
#   20 us or more as class 1; with workers = 0 | 1, on the bare veth (the
#   classifier sends nothing from XDP, so it runs there too), the short
#   requests all reach worker 0 and the long ones worker 1.
# - overload: both workers stuck, a burst of 6000 requests: what no worker
#   has room for is dropped in XDP, counted as drop/overload, the rest
#   answered once the calls return, and every UMEM frame comes home.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TMODS=$BUILD/tests/modules
CTL=$BUILD/reqrouterctl
PORT=7700
[ -f "$TMODS/faulty.so" ] || die "no $TMODS/faulty.so (run make first)"

# The bare defaults a user meets: no XDP program on the veth peer, the
# default tier and cache (work's XDP classifier runs in the XDP tier).
TB_PEER_XDP=0
RR_TIER=auto
RR_CACHE=yes
rr_bed 1
SOCK=$RR_TMP/ctl.sock
# faulty alone: each other test module would be a cell group more.
MODS=$RR_TMP/mods
mkdir -p "$MODS"
cp "$TMODS/faulty.so" "$MODS/"
# The counters as reqrouter has them 0.2 s after they are asked for
# (rr_metrics_scrape), not at the metrics file's next rewrite.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom
CONF=$RR_TMP/reqrouter.conf

# conf STEERING [MORE]: the config, with the slow call inside max_run_us,
# steering = STEERING ("" leaves the default) and MORE lines in faulty's
# section.
conf() {
	{
		printf '[reqrouter]\nmetrics_detail = socket\n'
		printf '[function work]\nmax_us = 100\nsteering = groups\nworkers = 0 | 1\n'
		printf '[function faulty]\nown_cells = no\nmax_run_us = 2000000\n'
		[ -n "$1" ] && printf 'steering = %s\n' "$1"
		printf '%b' "${2:-}"
	} >"$CONF"
}
reload() {
	"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.out" 2>&1
	check_eq "reload exits 0" 0 "$?"
}
# probe NAME ARGS...: hol_probe.py from the client, JSON in $RR_TMP/NAME.json
probe() {
	local name=$1
	shift
	tb_cli timeout -k 2 20 python3 $RR_LIB/hol_probe.py "$TB_IP4_SRV" $PORT \
		"$@" >"$RR_TMP/$name.json"
	say "    $name: $(cat "$RR_TMP/$name.json")"
}
field() { json_eval "d['$2']" "$RR_TMP/$1.json"; }
# rx THREAD [PORT]: requests worker THREAD of queue 0 took for faulty
# (or the function on PORT).
rx() {
	metric "$M" reqrouter_rx_packets_total "port=\"${2:-$PORT}\"" \
		'queue="0"' "thread=\"$1\""
}
stats() { rr_metrics_scrape "$LISTEN" "$M" || bad "GET /metrics failed"; }

conf ""
rr_start main -i "$TB_IF_SRV" -q 1 -t 2 -c "$CONF" --functions-dir "$MODS" \
	--control "$SOCK" --metrics-listen "$LISTEN" || die "reqrouter did not start"
stats
check_eq "faulty answers" hello "$(cli_ask 1 $PORT hello)"
check_eq "the metrics say least_loaded over both workers" 2 \
	"$(metric "$M" reqrouter_steering_workers "port=\"$PORT\"" 'steering="least_loaded"')"

say "--- the default, least_loaded: a worker in a slow call takes nothing new"
stats
before0=$(rx 0) before1=$(rx 1)
probe ll --quick 40 --gap 4
check_eq "the slow request answered" 1 "$(field ll slow)"
check_eq "every quick request answered" 40 "$(field ll answered)"
check_eq "no wrong reply" 0 "$(field ll wrong)"
check_eq "no quick request waited behind the call" 0 "$(field ll late)"
stats
d0=$(($(rx 0) - before0)) d1=$(($(rx 1) - before1))
say "    worker 0 took $d0, worker 1 took $d1"
check "the worker in the slow call took nothing new (1 and 40)" \
	test "$d0" -eq 1 -a "$d1" -eq 40 -o "$d0" -eq 40 -a "$d1" -eq 1

say "--- steering = round_robin, by reload: quick requests behind a slow call"
conf round_robin
reload
check "reload says what it changed" grep -q "steering" "$RR_TMP/reload.out"
sed 's/^/    /' "$RR_TMP/reload.out"
probe rr --quick 40 --gap 4
check_eq "the slow request answered" 1 "$(field rr slow)"
check_eq "every quick request answered" 40 "$(field rr answered)"
check_eq "no wrong reply" 0 "$(field rr wrong)"
late=$(field rr late)
check "about half the quick requests waited behind the call ($late late of 40)" \
	test "$late" -ge 10 -a "$late" -le 30

say "--- queuing delay, from the XDP program's stamp"
stats
n=$(metric "$M" reqrouter_queue_delay_seconds_count "port=\"$PORT\"")
total=$(metric "$M" reqrouter_rx_packets_total "port=\"$PORT\"")
check_eq "one queuing delay per request taken ($total)" "$total" "$n"
fast=$(metric "$M" reqrouter_queue_delay_seconds_bucket "port=\"$PORT\"" 'le="0.1"')
check "the late ones waited over 100 ms ($((n - fast)) of $n; $late were late)" \
	test $((n - fast)) -ge "$late"

say "--- steering = groups, workers = 1: the function keeps to its group"
conf groups 'workers = 1\n'
reload
stats
before0=$(rx 0) before1=$(rx 1)
probe g1 --slow 0 --quick 40 --gap 1
check_eq "every request answered" 40 "$(field g1 answered)"
stats
check_eq "worker 0, outside the group, took none" 0 $(($(rx 0) - before0))
check_eq "worker 1 took all 40" 40 $(($(rx 1) - before1))
check_eq "the metrics say a group of one worker" 1 \
	"$(metric "$M" reqrouter_steering_workers "port=\"$PORT\"" 'steering="groups"')"

say "--- workers = 5 with -t 2: every thread serves it, said once"
conf groups 'workers = 5\n'
reload
check "the log says the list names no running thread" \
	wait_for 3 grep -q "\[function faulty\] workers = 5 names no thread of the 2 each queue has: every thread serves it" "$RR_ERR"
check_eq "faulty answers" hello "$(cli_ask 1 $PORT hello)"
stats
check_eq "the metrics say both workers" 2 \
	"$(metric "$M" reqrouter_steering_workers "port=\"$PORT\"" 'steering="groups"')"

say "--- groups that grow: workers = 0, group_delay_us = 2000"
conf groups 'workers = 0\ngroup_delay_us = 2000\n'
reload
stats
before1=$(rx 1)
probe g2 --quick 60 --gap 5
check_eq "every quick request answered" 60 "$(field g2 answered)"
check "the group grew into worker 1 while worker 0 was stuck, said in one line" \
	grep -q "\[function faulty\] group grows to workers 0,1: its requests waited [0-9]* us for one, over group_delay_us 2000" "$RR_ERR"
stats
check "worker 1 took requests once the group grew ($(($(rx 1) - before1)))" \
	test $(($(rx 1) - before1)) -gt 0
late=$(field g2 late)
check "fewer quick requests late than with round_robin's alternation ($late of 60)" \
	test "$late" -lt 30
check "quiet again, it shrinks back to worker 0, said in one line" \
	wait_for 5 grep -q "\[function faulty\] group shrinks to workers 0: its requests waited [0-9]* us for one, under half of group_delay_us 2000" "$RR_ERR"
stats
check_eq "the metrics say the group is back to one worker" 1 \
	"$(metric "$M" reqrouter_steering_workers "port=\"$PORT\"" 'steering="groups"')"
conf least_loaded
reload

say "--- classes from a function's XDP program: work, workers = 0 | 1"
check "work's start-up line says it is classified in XDP" \
	grep -q "serving 'work' on UDP port 9010, in user space, classified in XDP (tier xdp)" "$RR_ERR"
check_eq "the metrics say class 1 has a group of one worker" 1 \
	"$(metric "$M" reqrouter_steering_workers 'port="9010"' 'class="1"')"
tb_cli timeout -k 2 20 python3 - "$TB_IP4_SRV" <<'EOF' >"$RR_TMP/classes.out"
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
ok = 0
for i in range(30):
    us = 60 if i % 3 == 0 else 5
    # Every other one with leading zeros, which do not change its class.
    s.sendto(b"%0*d r%d" % (4 if i % 2 else 1, us, i), (sys.argv[1], 9010))
    reply = s.recv(2048).split()
    ok += reply[0] == b"%d" % us and reply[2] == b"r%d" % i
print(ok)
EOF
check_eq "30 work requests answered, each with its own tag" 30 \
	"$(cat "$RR_TMP/classes.out")"
stats
say "    work: worker 0 took $(rx 0 9010), worker 1 took $(rx 1 9010)"
check_eq "the 20 short requests (class 0) all went to worker 0" 20 \
	"$(rx 0 9010)"
check_eq "the 10 long ones (class 1) all went to worker 1" 10 "$(rx 1 9010)"

say "--- overload: both workers inside a slow call, a burst of 6000"
tb_cli timeout -k 2 20 python3 - "$TB_IP4_SRV" $PORT <<'EOF' >"$RR_TMP/burst.out"
import socket, sys, time
dst = (sys.argv[1], int(sys.argv[2]))
slow = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
slow.sendto(b"slow", dst)
slow.sendto(b"slow", dst)
time.sleep(0.03)
q = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
q.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4 << 20)
for i in range(6000):
    q.sendto(b"burst %d" % i, dst)
q.settimeout(1.5)
got = 0
try:
    while True:
        q.recv(2048)
        got += 1
except socket.timeout:
    pass
print(got)
EOF
got=$(cat "$RR_TMP/burst.out")
stats
over=$(metric "$M" reqrouter_xdp_packets_total 'verdict="drop"' 'reason="overload"')
say "    answered $got, dropped as overload in XDP: $over"
check "some of the burst dropped in XDP as overload" test "${over:-0}" -gt 0
check "at least one RX ring's worth answered ($got)" test "$got" -ge 2048
"$CTL" --control "$SOCK" --json stats >"$RR_TMP/stats.json"
check_eq "every UMEM frame back at rest" 0 "$(rr_umem_held "$RR_TMP/stats.json")"
check_eq "faulty still answers" hello "$(cli_ask 1 $PORT hello)"

rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
