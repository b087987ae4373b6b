#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# A gather is not an amplifier (issue 42): what one source, or many, can
# make a gathering function send, on the bare defaults: the one-queue
# bed with a bare veth (TB_PEER_XDP=0), cells, fanout (port 9014) with
# no allow-list, every budget and limit at its default. The targets are
# ranges answered by one wildcard socket per family in the client
# namespace (lib/sg_many.py): 198.19.0.1-254 (a local route), 1022 IPv6
# addresses fd00:7373::1-3fe on the client's end, and 198.18.0.50:8,
# where this script itself forges replies. One reqrouter throughout,
# fanout's group changed by reload:
#  - no allow-list: the start's log says fanout gathers from every
#    source, how many copies a request makes and what bounds them, and
#    so does --check, which still accepts the config; with an allow
#    list, neither says it;
#  - a cold group of 1022 IPv6 targets (the start's): its first request
#    is answered (N/1022) by the same cell, every target got its copy,
#    no call ran past max_run_us (before, the scatter ran inside the
#    function's call, 10 to 25 ms of CPU, and the cell was killed);
#  - one source (198.18.0.2) floods fanout over 254 targets with 2000
#    requests/s for 2 s while a client in another prefix asks every
#    300 ms: the flood gets no more gathers than its prefix's budget
#    (gather_source_rate, 1000 copies/s: a group at once four times,
#    then one each 254 ms), the rest counted as gather_source_rate, the
#    client is answered every time, and the targets get no more copies
#    than those gathers' (before: thousands of gathers, hundreds of
#    thousands of copies);
#  - the same flood spread over 64 source prefixes, each within its own
#    budget: the function's (gather_rate, 10000 copies/s) holds it, the
#    rest counted as gather_rate;
#  - forged replies (group forge: 198.19.0.1:7 answers 1, 198.18.0.50:8
#    is this script): the copies of four gathers in a row carry
#    generations that are not the one before plus one; then, reading
#    no copy, a flood of replies from 198.18.0.50:8 that guess the next
#    generation from the last one seen (+1 to +4) with the value 1000000
#    is not merged: the gather answers "1 1/2 missed 1", the guesses
#    count as gather_late (before, the guess was right and the reply
#    said 1000001 2/2).
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
rr_bed 1
# The counters as reqrouter has them 0.2 s after they are asked for
# (rr_metrics_scrape), not at the metrics file's next rewrite.
LISTEN=127.0.0.1:9464
M=$RR_TMP/http.prom
CTL=$BUILD/reqrouterctl
SOCK=$RR_TMP/ctl.sock
CONF=$RR_TMP/gather.conf
COUNTS=$RR_TMP/counts
PORT=9014
NET6=fd00:7373::

# The targets' addresses: a /24 as a local route (the client answers ARP
# for it), 1022 IPv6 addresses on the client's end (a local route would
# answer no neighbour solicitation), and the forger's.
tb_cli ip route add local 198.19.0.0/24 dev lo ||
	die "cannot route 198.19.0.0/24 to the client's lo"
tb_srv ip route add 198.19.0.0/24 dev "$TB_IF_SRV" ||
	die "cannot route 198.19.0.0/24 on the server's end"
for ((i = 1; i <= 1022; i++)); do
	printf 'address add %s%x/128 dev %s nodad\n' "$NET6" $i "$TB_IF_CLI"
done >"$RR_TMP/addrs6"
tb_cli ip -b "$RR_TMP/addrs6" || die "cannot add the IPv6 targets"
tb_srv ip -6 route add "$NET6/118" dev "$TB_IF_SRV" ||
	die "cannot route $NET6/118 on the server's end"
tb_cli ip addr add 198.18.0.50/24 dev "$TB_IF_CLI" ||
	die "cannot add 198.18.0.50 to the client's end"
# A client in a prefix of its own, and 64 prefixes of a spread flood.
spread=()
{
	echo "address add 198.51.100.7/32 dev $TB_IF_CLI"
	for ((i = 0; i < 64; i++)); do
		echo "address add 100.64.$i.1/32 dev $TB_IF_CLI"
		spread+=(--src "100.64.$i.1")
	done
} >"$RR_TMP/addrs4"
tb_cli ip -b "$RR_TMP/addrs4" || die "cannot add the flood's sources"

tb_cli_bg python3 "$RR_LIB/sg_many.py" --seconds 80 --counts "$COUNTS" \
	>"$RR_TMP/targets.log" 2>&1
TARGETS_PID=$TB_PID
RR_BG_PIDS+=("$TARGETS_PID")
wait_for 5 grep -q '^ready$' "$RR_TMP/targets.log" ||
	die "the targets did not start: $(cat "$RR_TMP/targets.log")"

# conf GROUP [LINES...]: fanout on GROUP, with LINES in its section.
conf() {
	local group=$1 i j
	shift
	{
		printf '[group wide]\ntargets = 198.19.0.1-198.19.0.254:7\n'
		printf '[group forge]\ntargets = 198.19.0.1:7, 198.18.0.50:8\n'
		printf '[group cold6]\n'
		for ((i = 1; i <= 1022; i += 8)); do
			printf 'targets ='
			for ((j = i; j < i + 8 && j <= 1022; j++)); do
				printf ' [%s%x]:7' "$NET6" $j
			done
			echo
		done
		printf '[function fanout]\ngroup = %s\n' "$group"
		printf '%s\n' "$@"
	} >"$CONF"
}
reload() { # WHAT: reqrouterctl reload, which must succeed
	"$CTL" --control "$SOCK" reload >"$RR_TMP/reload.out" 2>&1
	local rc=$?
	check_eq "reload ($1): exit 0" 0 $rc
	[ $rc = 0 ] || sed 's/^/    /' "$RR_TMP/reload.out"
}
# drops REASON: fanout's requests dropped for REASON so far.
drops() {
	metric "$M" reqrouter_dropped_packets_total 'function="fanout"' \
		"reason=\"$1\""
}
# copies FAMILY: the messages the targets of FAMILY (v4, v6) got so far.
copies() { awk -v f="$1" '$1 == f { print $2 }' "$COUNTS"; }
overruns() { grep -c 'ran past max_run_us' "$RR_ERR"; }

# flood NAME ARGS...: lib/udp_flood.py to fanout for 2 s at 2000
# requests/s, 100 bytes each (ARGS: its sources); its JSON in
# $RR_TMP/NAME.json (got reads the last one), the targets' copies
# meanwhile in COPIES.
flood() {
	local name=$1 before
	shift
	FLOOD=$name
	before=$(copies v4)
	tb_cli python3 "$RR_LIB/udp_flood.py" --dst "$TB_IP4_SRV" \
		--port $PORT --duration 2 --rate 2000 --len 100 "$@" \
		>"$RR_TMP/$name.json" 2>&1
	sleep 0.3 # the targets' last copies counted
	COPIES=$(($(copies v4) - before))
	say "    $(cat "$RR_TMP/$name.json"), $COPIES copies"
}
# got GROUP FIELD: what udp_flood.py said of GROUP (flood, client), -1
# if it said nothing.
got() {
	local v
	v=$(json_eval "d['$1']['$2']" "$RR_TMP/$FLOOD.json" 2>/dev/null)
	echo "${v:--1}"
}

say "== no allow-list: said at start and by --check"
conf cold6
rr_start gather_abuse -i "$TB_IF_SRV" -q 1 -c "$CONF" \
	--metrics-listen "$LISTEN" --control "$SOCK" ||
	die "reqrouter with fanout did not start"
warned() { grep -c "'fanout' gathers and has no allow-list" "$1"; }
check_eq "the log says fanout gathers from every source" 1 "$(warned "$RR_ERR")"
check "... how many copies a request makes, and what bounds them" \
	grep -q "up to 1022 .*gather_rate, 10000 copies/s, and gather_source_rate, 1000 copies/s for one source prefix. Give it allow in \[function fanout\]" \
	"$RR_ERR"
grep "'fanout' gathers" "$RR_ERR" | sed 's/^/    /'
START_ERR=$RR_ERR
rr_run check --check -c "$CONF" -i "$TB_IF_SRV"
check_eq "--check accepts the config" 0 "$RR_RC"
check "... and its verdict says it was warned" \
	grep -q "fine, with the warning above; it would serve" "$RR_OUT"
check_eq "... and says the same" 1 "$(warned "$RR_ERR")"
cp "$CONF" "$RR_TMP/allowed.conf"
echo "allow = $TB_IP4_CLI/32" >>"$RR_TMP/allowed.conf"
rr_run check_allowed --check -c "$RR_TMP/allowed.conf" -i "$TB_IF_SRV"
check_eq "with an allow-list, --check accepts it" 0 "$RR_RC"
check_eq "... and says nothing of the sort" 0 "$(warned "$RR_ERR")"
RR_ERR=$START_ERR

say "== a cold group of 1022 IPv6 targets"
# The start's group, never asked yet: the first request to it.
cell=$(pgrep -P "$RR_PID")
rr_metrics_scrape "$LISTEN" "$M"
timeouts=$(drops timeout)
before=$(copies v6)
reply=$(cli_ask 3 $PORT cold)
say "    reply: ${reply:0:60}"
check "the first request to the cold group is answered (N/1022)" \
	grep -Eq '^[0-9]+ [0-9]+/1022( |$)' <<<"$reply"
check_eq "... no call ran past max_run_us" 0 "$(overruns)"
check_eq "... by the same cell" "$cell" "$(pgrep -P "$RR_PID")"
rr_metrics_scrape "$LISTEN" "$M"
check_eq "... no request dropped as timeout" "$timeouts" "$(drops timeout)"
wait_for 2 test "$(copies v6)" -ge $((before + 1022))
check_eq "... and each of the 1022 targets got its copy" \
	$((before + 1022)) "$(copies v6)"

say "== one source floods, another asks now and then"
conf wide
reload "254 targets"
rr_metrics_scrape "$LISTEN" "$M"
src_drops=$(drops gather_source_rate)
flood one --src "$TB_IP4_CLI" --client 198.51.100.7 --client-ms 300
# A group of 254 is 254 copies: four at once, then one each 254 ms,
# over the flood's 2 s and its half a second of replies.
check "the flood's gathers: its prefix's budget, 14 at most ($(got flood replies))" \
	test "$(got flood replies)" -ge 0 -a "$(got flood replies)" -le 14
check "the client in another prefix asked ($(got client sent)) and was answered every time" \
	test "$(got client sent)" -ge 5 -a \
	"$(got client replies)" = "$(got client sent)"
check "the targets got those gathers' copies, no more ($COPIES)" \
	test "$COPIES" -le $((254 * (14 + $(got client sent))))
rr_metrics_scrape "$LISTEN" "$M"
check "the rest counted as gather_source_rate" \
	test "$(drops gather_source_rate)" -ge \
	$((src_drops + $(got flood sent) - 14))

say "== the flood spread over 64 source prefixes"
rr_metrics_scrape "$LISTEN" "$M"
fn_drops=$(drops gather_rate)
flood spread "${spread[@]}"
# The function's budget: a second's worth (10000 copies) and 10000 a
# second over 2.5 s, 137 groups of 254.
check "the flood's gathers: the function's budget, 137 at most ($(got flood replies))" \
	test "$(got flood replies)" -ge 0 -a "$(got flood replies)" -le 137
check "the targets got those gathers' copies, no more ($COPIES)" \
	test "$COPIES" -le $((254 * 137))
rr_metrics_scrape "$LISTEN" "$M"
check "the rest counted as gather_rate" \
	test "$(drops gather_rate)" -gt "$fn_drops"

say "== forged replies must guess a random generation"
conf forge 'gather_deadline_us = 100000'
reload "two targets, the second one forged"
cat >"$RR_TMP/forge.py" <<'EOF2'
import socket, struct, sys, time
srv, port, target, tport = sys.argv[1], int(sys.argv[2]), sys.argv[3], \
    int(sys.argv[4])
HDR = struct.Struct("!IIIHH")
f = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
f.bind((target, tport))
f.settimeout(2)
c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
c.settimeout(2)
c.connect((srv, port))

def ask(text):
    c.send(text.encode())
    try:
        return c.recv(2048).decode().strip()
    except socket.timeout:
        return "<none>"

# Four gathers in a row, each copy to this target read: its generation.
gens = []
for i in range(4):
    c.send(b"look%d" % i)
    data, (_, gport) = f.recvfrom(2048)
    magic, gather, gen, tgt, flags = HDR.unpack_from(data)
    gens.append(gen)
    try:
        c.recv(2048)
    except socket.timeout:
        pass
print("gens", " ".join("%08x" % g for g in gens))
print("consecutive", sum(1 for a, b in zip(gens, gens[1:])
                        if b == (a + 1) & 0xffffffff))
# The guess, blind: the next request's generations from the last one
# seen, forged from this target's address to the gather port.
last = gens[-1]
forged = [HDR.pack(0x72725347, gather, (last + k) & 0xffffffff, tgt, 0) +
          b"1000000" for k in range(1, 5)]
c.send(b"forge")
end = time.monotonic() + 0.05
n = 0
while time.monotonic() < end:
    for m in forged:
        f.sendto(m, (srv, gport))
        n += 1
try:
    reply = c.recv(2048).decode().strip()
except socket.timeout:
    reply = "<none>"
print("forged", n)
print("reply", reply)
EOF2
rr_metrics_scrape "$LISTEN" "$M"
late=$(metric "$M" reqrouter_xdp_packets_total 'reason="gather_late"')
tb_cli python3 "$RR_TMP/forge.py" "$TB_IP4_SRV" $PORT 198.18.0.50 8 \
	>"$RR_TMP/forge.out" 2>&1
sed 's/^/    /' "$RR_TMP/forge.out"
check_eq "four gathers' generations: none the one before plus one" 0 \
	"$(awk '$1 == "consecutive" { print $2 }' "$RR_TMP/forge.out")"
check_eq "replies guessing the next generation are not merged" \
	"reply 1 1/2 missed 1" "$(grep '^reply ' "$RR_TMP/forge.out")"
forged=$(awk '$1 == "forged" { print $2 }' "$RR_TMP/forge.out")
rr_metrics_scrape "$LISTEN" "$M"
check "... they count as gather_late" \
	test "$(metric "$M" reqrouter_xdp_packets_total 'reason="gather_late"')" \
	-ge $((late + ${forged:-1} / 2))

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
kill -TERM "$TARGETS_PID"
wait "$TARGETS_PID"
RR_BG_PIDS=()
finish
