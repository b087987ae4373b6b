#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# xdp_spread on the one-queue bed, from a bare veth (TB_PEER_XDP=0, what a
# pod's eth0 is) to a peer that takes XDP frames:
#  - bare: reverse with xdp_spread = 0-1 starts, its log says the spread
#    waits (replies from XDP would be lost) and the metrics say "held";
#    no cpumap thread runs, and the workers answer every request;
#  - an XDP program on the client end: within a second the spread is on
#    (log, metrics), a cpumap thread runs on CPUs 0 and 1, and of 400
#    requests (0-200 bytes, every reply checked by the client's kernel
#    and udpclient.py) those up to xdp_max_payload = 100 are run on the
#    spread CPUs and answered from there, the longer ones by the workers;
#    nothing is dropped;
#  - reload to xdp_spread = 1: CPU 0's thread goes, requests still
#    answered; the key taken out: spread off, no thread left;
#  - hash on the spread CPUs: what its program punts there (a DATA over
#    128 bytes, an invalid request) gets no reply and is counted
#    spread_punt; xdp_max_payload = 130 keeps the long ones on the
#    receiving CPU, for the workers, which answer them;
#  - a source outside the function's allow-list: refused on the receiving
#    CPU (source_not_allowed), nothing spread;
#  - work (a classifier) with xdp_spread: said to wait, answered by the
#    workers;
#  - a CPU this machine does not have: said in one line, requests stay;
#    41 CPUs, CPU 5000 or none: refused by --check with one line.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 1
M=$RR_TMP/metrics.prom
CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
CONF=$RR_TMP/spread.conf

attach() {
	tb_cli ip link set dev "$TB_IF_CLI" xdpdrv object \
		"$BUILD/bpf/peer_pass.bpf.o" program peer_pass
}
# threads CPU: the cpumap threads on CPU (every CPU without one); only
# reqrouter makes cpumaps on the bed's host while this test runs. A
# thread ends shortly after its entry goes (an RCU grace period), so
# threads_are waits up to a second for the count it wants.
threads() { pgrep -c "^cpumap/${1:-[0-9]*}/"; }
threads_are() { # WANT CPU WHAT
	local i got
	for ((i = 0; i < 20; i++)); do
		got=$(threads "$2")
		[ "$got" = "$1" ] && break
		sleep 0.05
	done
	check_eq "$3" "$1" "$got"
}
state() { # the reqrouter_xdp_spread_cpus line's state and value
	metric_lines "$M" reqrouter_xdp_spread_cpus |
		sed -n 's/.*state="\([a-z_]*\)"} \([0-9]*\)$/\1 \2/p'
}
# state_becomes WANT WHAT: the metrics say WANT within two seconds.
state_becomes() {
	local got i
	for ((i = 0; i < 40; i++)); do
		got=$(state)
		[ "$got" = "$1" ] && break
		sleep 0.05
	done
	check_eq "$2: reqrouter_xdp_spread_cpus says $1" "$1" "$got"
}
ask() { # WHAT N: N requests to reverse, 0-200 bytes, every reply checked
	check "$1: all $2 requests answered correctly" \
		tb_cli python3 $RR_LIB/udpclient.py "$TB_IP4_SRV" 1232:reverse \
		-n "$2" -s 16 --min-size 0 --max-size 200 --deadline 30
}
fn() { # COUNTER [LABEL]: reverse's counter, summed
	metric "$M" "$1" 'function="reverse"' ${2:+"$2"}
}
reload() {
	"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.out" 2>&1
	check_eq "reload ($1) exits 0" 0 "$?"
}

cat >"$CONF" <<EOF
[function reverse]
xdp_spread = 0-1
xdp_max_payload = 100
EOF
say "== a bare veth"
rr_start bare -c "$CONF" -i "$TB_IF_SRV" -q 1 --metrics-file "$M" \
	--control "$SOCK" || die "reqrouter with xdp_spread did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
check "log: the spread waits for the veth's peer" grep -q \
	"'reverse': xdp_spread = 0-1 waits: replies from XDP would be lost until the veth peer takes XDP frames" \
	"$RR_ERR"
state_becomes "held 0" "bare veth"
threads_are 0 "" "bare veth: no cpumap thread runs"
ask "bare veth" 200
sleep 1.2
check_eq "bare veth: the workers answered all 200" 200 \
	"$(fn reqrouter_tx_packets_total 'tier="user"')"
check_eq "bare veth: nothing ran on a spread CPU" 0 \
	"$(fn reqrouter_spread_packets_total)"

say "== the peer takes XDP frames"
attach || die "cannot attach peer_pass to $TB_IF_CLI"
state_becomes "on 2" "peer with XDP"
check "log: the spread is on" grep -q \
	"'reverse': its XDP program runs on CPUs 0-1 (xdp_spread)" "$RR_ERR"
threads_are 1 0 "a cpumap thread on CPU 0"
threads_are 1 1 "a cpumap thread on CPU 1"
u0=$(fn reqrouter_tx_packets_total 'tier="user"')
ask "spread" 400
sleep 1.2
spread=$(fn reqrouter_spread_packets_total)
xdp_tx=$(fn reqrouter_tx_packets_total 'tier="xdp"')
user=$(($(fn reqrouter_tx_packets_total 'tier="user"') - u0))
check "spread: the short requests ran on the spread CPUs ($spread)" \
	test "$spread" -gt 100
check_eq "spread: each of them answered from XDP" "$spread" "$xdp_tx"
check "spread: the long ones went to the workers ($user)" test "$user" -gt 100
check_eq "spread: all 400 answered, once" 400 $((xdp_tx + user))
check_eq "spread: redirect/spread per queue adds up" "$spread" \
	"$(metric "$M" reqrouter_xdp_packets_total 'verdict="redirect",reason="spread"')"
check_eq "spread: nothing dropped in XDP" 0 \
	"$(metric "$M" reqrouter_dropped_packets_total 'tier="xdp"')"

say "== reload: xdp_spread = 1, then none"
sed -i 's/^xdp_spread = .*/xdp_spread = 1/' "$CONF"
reload "xdp_spread = 1"
state_becomes "on 1" "xdp_spread = 1"
check "log: the new list said" grep -q \
	"'reverse': its XDP program runs on CPUs 1 (xdp_spread)" "$RR_ERR"
threads_are 0 0 "xdp_spread = 1: no cpumap thread left on CPU 0"
threads_are 1 1 "xdp_spread = 1: CPU 1's thread runs"
s0=$(fn reqrouter_spread_packets_total)
ask "xdp_spread = 1" 200
sleep 1.2
check "xdp_spread = 1: requests still run on CPU 1" \
	test "$(fn reqrouter_spread_packets_total)" -gt "$s0"
sed -i '/^xdp_spread/d' "$CONF"
reload "xdp_spread taken out"
check "log: the spread is off" grep -q \
	"'reverse': xdp_spread off: its XDP program runs on the CPU that receives its requests" \
	"$RR_ERR"
sleep 1.2
check_eq "xdp_spread off: no metrics line" "" "$(state)"
threads_are 0 "" "xdp_spread off: no cpumap thread left"
ask "xdp_spread off" 200
rr_kill_wait TERM 5
check_eq "SIGTERM exit status" 0 "$RR_RC"

say "== a punt on a spread CPU: hash"
# hash's program hands back what it cannot do (a DATA over 128 bytes, an
# invalid request); on a spread CPU that cannot reach a worker, so it is
# dropped and counted, and xdp_max_payload keeps the long ones home.
printf '[function hash]\nxdp_spread = 0-1\n' >"$CONF"
rm -f "$M"
rr_start hash -c "$CONF" -i "$TB_IF_SRV" -q 1 --metrics-file "$M" \
	--control "$SOCK" || die "reqrouter with hash's xdp_spread did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
state_becomes "on 2" "hash"
# hashes KIND N: N requests of KIND (short, long or invalid); prints how
# many got the right reply, none for invalid ones.
hashes() {
	tb_cli python3 - "$TB_IP4_SRV" "$1" "$2" <<'PY'
import socket, sys
addr, kind, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
def fnv(data, rounds):
    h = 0xcbf29ce484222325
    for _ in range(rounds):
        for b in data:
            h = ((h ^ b) * 0x100000001b3) & 0xffffffffffffffff
    return b"%016x" % h
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(0.3)
good = 0
for i in range(n):
    data = b"d%d-" % i + (b"x" * 200 if kind == "long" else b"")
    req = b"x" + data if kind == "invalid" else b"3 " + data
    s.sendto(req, (addr, 9012))
    try:
        good += s.recvfrom(2048)[0] == fnv(data, 3)
    except socket.timeout:
        pass
print(good)
PY
}
hfn() { metric "$M" "$1" 'function="hash"' ${2:+"$2"}; }
check_eq "hash: 50 short requests answered from the spread CPUs" 50 \
	"$(hashes short 50)"
check_eq "hash: 10 long ones get nothing (punted on a spread CPU)" 0 \
	"$(hashes long 10)"
check_eq "hash: 10 invalid ones get nothing" 0 "$(hashes invalid 10)"
sleep 1.2
check_eq "hash: the 20 punts counted as spread_punt" 20 \
	"$(hfn reqrouter_dropped_packets_total 'reason="spread_punt"')"
check_eq "hash: all 70 ran on the spread CPUs" 70 \
	"$(hfn reqrouter_spread_packets_total)"
printf 'xdp_max_payload = 130\n' >>"$CONF"
reload "hash, xdp_max_payload = 130"
check_eq "xdp_max_payload = 130: the long ones answered by the workers" 10 \
	"$(hashes long 10)"
check_eq "xdp_max_payload = 130: short ones still answered" 20 \
	"$(hashes short 20)"
rr_kill_wait TERM 5

say "== the guards come first: a source outside the allow-list"
# The allow-list is checked on the receiving CPU, before any spread: a
# refused request reaches no spread CPU.
printf '[function reverse]\nxdp_spread = 0-1\nallow = %s/32\n' \
	"$TB_IP4_SRV" >"$CONF"
rm -f "$M"
rr_start allow -c "$CONF" -i "$TB_IF_SRV" -q 1 --metrics-file "$M" ||
	die "reqrouter with an allow-list and xdp_spread did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
state_becomes "on 2" "allow-list"
# shellcheck disable=SC2317 # called through check
unanswered() { # every one of 20 requests lost (udpclient fails)
	! tb_cli python3 "$RR_LIB/udpclient.py" "$TB_IP4_SRV" 1232:reverse \
		-n 20 -s 20 --min-size 1 --max-size 64 --timeout 0.3 \
		--deadline 10 >"$RR_TMP/refused.out" 2>&1 &&
		grep -q "0 ok, 0 wrong, 20 lost" "$RR_TMP/refused.out"
}
check "allow-list: 20 requests from outside it get no reply" unanswered
sleep 1.2
check_eq "allow-list: all 20 dropped as source_not_allowed" 20 \
	"$(metric "$M" reqrouter_xdp_packets_total 'reason="source_not_allowed"')"
check_eq "allow-list: none ran on a spread CPU" 0 \
	"$(metric "$M" reqrouter_xdp_packets_total 'reason="spread"')"
rr_kill_wait TERM 5

say "== what cannot be spread"
cat >"$CONF" <<EOF
[function work]
xdp_spread = 0-1
[function reverse]
xdp_spread = 0,7
EOF
rr_start odd -c "$CONF" -i "$TB_IF_SRV" -q 1 --metrics-file "$M" ||
	die "reqrouter with a classifier's xdp_spread did not start"
check "log: work's program only classifies" grep -q \
	"'work': xdp_spread = 0-1 waits: its XDP program only classifies requests for the workers" \
	"$RR_ERR"
if [ "$(nproc --all)" -le 7 ]; then
	check "log: CPU 7 does not exist here, in one line" grep -q \
		"'reverse': xdp_spread = 0,7: CPU 7: .*(no such CPU); its requests stay on the CPU that receives them" \
		"$RR_ERR"
	ask "a CPU that does not exist" 100
	sleep 1.2
	check_eq "a CPU that does not exist: nothing spread" 0 \
		"$(fn reqrouter_spread_packets_total)"
else
	skip "CPU 7 exists on this machine: the missing-CPU case is not tried"
fi
check "work: 20 requests answered by its workers" tb_cli python3 -c '
import socket, sys
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
s.settimeout(2)
for i in range(20):
    s.sendto(b"5 t%d" % i, (sys.argv[1], 9010))
    reply = s.recvfrom(2048)[0]
    if not (reply.startswith(b"5 ") and reply.endswith(b" t%d" % i)):
        sys.exit("wrong reply %r" % reply)
' "$TB_IP4_SRV"
rr_kill_wait TERM 5

for bad in "0-40" "5000" ""; do
	printf '[function reverse]\nxdp_spread = %s\n' "$bad" >"$CONF"
	rr_run check-bad --check -c "$CONF" -i "$TB_IF_SRV"
	check "--check refuses xdp_spread = '$bad'" test "$RR_RC" -ne 0
	check "--check: one line points at the key's line" \
		grep -q "spread.conf:2: " "$RR_ERR"
done
finish
