#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# deadline_us, as a user who sets one meets it: reqrouter -q 1 -t 1 on the
# bare defaults (no XDP program on the veth peer) serving [function work]
# with deadline_us = 30000, and a client that sends 10 requests of 100 ms
# each at once, and 10 more 50 ms later, while the worker is in its first
# call: far more than one worker can answer within 30 ms.
#
# - Each request is answered or dropped, and every drop is counted as
#   expired (by the worker, tier user, or in XDP before the UMEM copy,
#   tier xdp, and drop/expired in the XDP verdicts): answered + expired
#   is all 20, and the function was called only for those answered.
# - Most are dropped, at least one is answered, the worker drops some of
#   the first burst and XDP some of the second, and no answer comes later
#   than the deadline plus what a call takes.
# - With deadline_us = 0 after a reload, the same burst is answered
#   whole, nothing more expires: the deadline is what dropped them.
# - reqrouterctl stats says the deadline and both counts of expired, and
#   the time in user space (p50, p99): with no deadline, replies taken in
#   one batch of 100 ms calls past 500 ms at p99, and the wait for a
#   worker (until the batch is taken) past 50 ms; and so do tools/bench's
#   quantiles of that burst alone, from the histograms' buckets in two
#   stats --json answers (tools/lib/bench_row.py).
# - A deadline_us below 100 (but 0) or above 10 s is refused at start
#   with FILE:LINE, in one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

PORT=9010
N=20
TB_PEER_XDP=0
rr_bed 1
M=$RR_TMP/metrics.prom
CONF=$RR_TMP/reqrouter.conf
printf '[function work]\nenabled = yes\nmax_us = 100000\nmax_run_us = 1000000\ndeadline_us = 30000\n' \
	>"$CONF"

SOCK=$RR_TMP/ctl.sock
CTL=$BUILD/reqrouterctl
rr_start main -i "$TB_IF_SRV" -q 1 -t 1 -c "$CONF" --metrics-file "$M" \
	--control "$SOCK" ||
	die "reqrouter with a deadline did not start"
tb_wait_file "$M" 5 || die "no metrics file"
check "the start-up lines say work's deadline" \
	grep -q "'work': a request older than 30000 us when a worker reaches it is dropped, counted as expired (deadline_us)" "$RR_ERR"
check "status says it in work's row" \
	grep -Eq '^work +9010 +[a-z]+ +0 +30000us ' <("$BUILD/reqrouterctl" -s "$SOCK" status)

# burst NAME: N/2 requests of 100 ms to work at once, N/2 more 50 ms
# later; prints "ANSWERED LATEST_MS", the latest answer's time after its
# request in ms.
burst() {
	tb_cli timeout -k 2 20 python3 -c '
import socket, sys, time
host, port, n = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
sent = {}
for i in range(n):
    if i == n // 2:
        time.sleep(0.05)
    tag = b"t%d" % i
    sent[tag] = time.monotonic()
    s.sendto(b"100000 " + tag, (host, port))
got, latest = 0, 0.0
end = time.monotonic() + 5
s.settimeout(0.2)
while time.monotonic() < end and got < n:
    try:
        data = s.recv(2048)
    except socket.timeout:
        continue
    tag = data.split(b" ")[-1]
    if tag in sent:
        got += 1
        latest = max(latest, time.monotonic() - sent.pop(tag))
print(got, int(latest * 1000))
' "$TB_IP4_SRV" "$PORT" "$N" >"$RR_TMP/$1.out" 2>"$RR_TMP/$1.err"
	cat "$RR_TMP/$1.out"
}
dropped() {
	metric "$M" reqrouter_dropped_packets_total 'function="work"' \
		"tier=\"$1\"" "reason=\"$2\""
}
called() {
	metric "$M" reqrouter_tx_packets_total 'function="work"'
}
xdp_expired() {
	metric "$M" reqrouter_xdp_packets_total 'verdict="drop"' \
		'reason="expired"'
}
snapshot() {
	rr_metrics_fresh "$M" || bad "the metrics file was not rewritten within 3 s"
	EXP_USER=$(dropped user expired)
	EXP_XDP=$(dropped xdp expired)
	XDP_VERDICT=$(xdp_expired)
	TX=$(called)
}

say "== deadline_us = 30000: $N requests of 100 ms in two bursts"
snapshot
b_user=$EXP_USER b_xdp=$EXP_XDP b_tx=$TX
read -r got latest <<<"$(burst deadline)"
sleep 0.5
snapshot
expired=$((EXP_USER - b_user + EXP_XDP - b_xdp))
say "answered $got, latest ${latest} ms; expired: worker $((EXP_USER - b_user)), XDP $((EXP_XDP - b_xdp))"
check "at least one request was answered ($got)" [ "${got:-0}" -ge 1 ]
check "most were dropped as expired ($expired of $N)" [ "$expired" -ge $((N / 2)) ]
check_eq "answered + expired is every request" "$N" $((got + expired))
check_eq "the function answered only those answered" "$got" $((TX - b_tx))
check "the worker dropped some ($((EXP_USER - b_user)))" [ $((EXP_USER - b_user)) -ge 1 ]
check "XDP dropped some, before the UMEM ($((EXP_XDP - b_xdp)))" [ $((EXP_XDP - b_xdp)) -ge 1 ]
check_eq "XDP's expired drops are in its verdicts too" \
	$((EXP_XDP - b_xdp)) "$XDP_VERDICT"
check "no answer later than the deadline and a call ($latest ms)" \
	[ "${latest:-9999}" -le 250 ]
"$CTL" -s "$SOCK" --json stats >"$RR_TMP/stats.json"
work() { json_eval "[f for f in d['functions'] if f['name'] == 'work'][0]$1" "$RR_TMP/stats.json"; }
check_eq "stats --json: the deadline and what expired, as the metrics say" \
	"30000 $EXP_USER $EXP_XDP" \
	"$(work "['deadline']['us']") $(work "['deadline']['expired_user']") $(work "['deadline']['expired_xdp']")"
"$CTL" -s "$SOCK" stats >"$RR_TMP/stats.txt"
sed -n '/^work/,/^[a-z]/p' "$RR_TMP/stats.txt" | sed 's/^/    /' | head -n 8
check "stats says the deadline and both counts" \
	grep -qE "^  deadline 30000 us: expired_user [0-9]+, expired_xdp [0-9]+" "$RR_TMP/stats.txt"
check "stats says how long requests waited for a worker" \
	grep -q "waited for a worker p50" "$RR_TMP/stats.txt"

say "== deadline_us = 0 after a reload: the same burst"
sed -i 's/^deadline_us = .*/deadline_us = 0/' "$CONF"
kill -HUP "$RR_PID"
for ((i = 0; i < 50; i++)); do
	grep -q 'deadline_us' "$RR_ERR" && break
	sleep 0.1
done
check "the reload applied deadline_us" grep -q 'deadline_us' "$RR_ERR"
sleep 0.3
snapshot
b_user=$EXP_USER b_xdp=$EXP_XDP
"$CTL" -s "$SOCK" --json stats >"$RR_TMP/before.json"
read -r got latest <<<"$(burst none)"
sleep 0.5
snapshot
check_eq "every request answered without a deadline" "$N" "$got"
check_eq "none expired" 0 $((EXP_USER - b_user + EXP_XDP - b_xdp))
"$CTL" -s "$SOCK" --json stats >"$RR_TMP/stats.json"
# atleast V US: a quantile at least V us (None: over 1 s).
# shellcheck disable=SC2317 # called through check
atleast() { python3 -c "import sys; v = sys.argv[1]; sys.exit(0 if v == 'None' or float(v) >= float(sys.argv[2]) else 1)" "$2" "$1"; }
p99=$(work "['latency_us']['p99']")
check "stats --json: p99 of the replies' time past 500 ms, a batch of 100 ms calls ($p99 us)" \
	atleast 500000 "$p99"
p99=$(work "['queue_delay_us']['p99']")
check "... and of the wait for a worker past 50 ms ($p99 us)" atleast 50000 "$p99"
# tools/bench's quantiles over one cell, from two answers' buckets.
read -r qd50 qd99 sv50 sv99 <<<"$(cd tools/lib && python3 -c '
import sys, bench_row
print(*(v or "empty" for v in bench_row.server_quantiles(*sys.argv[1:])))' \
	"$PORT" "$RR_TMP/before.json" "$RR_TMP/stats.json")"
say "the burst alone, as tools/bench reads it: queue delay p50 $qd50 p99 $qd99 us, service p50 $sv50 p99 $sv99 us"
check "tools/bench's p99 of the burst's wait for a worker past 50 ms ($qd99 us)" \
	atleast 50000 "$qd99"
check "... and of its service time past 100 ms, a call's ($sv99 us)" \
	atleast 100000 "$sv99"
check_eq "stats --json: the wait's buckets add up to its count" \
	"$(work "['queue_delay_us']['count']")" \
	"$(json_eval "sum([f for f in d['functions'] if f['name'] == 'work'][0]['queue_delay_us']['buckets'])" "$RR_TMP/stats.json")"
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

say "== a deadline out of range"
for bad_value in 50 20000000; do
	printf '[function work]\nenabled = yes\ndeadline_us = %s\n' "$bad_value" \
		>"$RR_TMP/bad.conf"
	rr_run bad -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/bad.conf"
	check "deadline_us = $bad_value: refused (exit $RR_RC)" [ "$RR_RC" -ne 0 ]
	check "deadline_us = $bad_value: one line with FILE:LINE" \
		grep -q "bad.conf:3: .*deadline_us" "$RR_ERR"
	sed 's/^/    /' "$RR_ERR"
done

finish
