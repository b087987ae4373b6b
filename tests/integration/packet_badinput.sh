#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The bad-input battery over the real path: ~80 classes of malformed and
# unusual frames (lib/hardening_classes.py has the table: truncated
# Ethernet/VLAN/IPv4/IPv6/UDP headers, IHL < 5 and beyond the packet,
# IPv4 options, inconsistent IP and UDP lengths, fragments, IPv6
# extension headers, jumbo lengths, requests over the MTU, zero payloads,
# bad, partial and zero checksums, TTL 0, broadcast and multicast
# destinations, destinations the host does not hold, loop-prone and low
# source ports, QinQ, unknown EtherTypes...)
# are sent as raw frames from the client namespace while rrload keeps
# ordinary traffic going to another port. For each class: the named
# counter moves by exactly the frames sent (or every frame is answered
# correctly), ordinary requests are answered right after it, and nothing
# else moves. Afterwards reqrouter still runs, every UMEM frame is back in
# the fill ring, and it stops cleanly.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

rr_bed 4
M=$RR_TMP/metrics.prom
HF=$RR_LIB/hardening_frames.py
HM=$RR_LIB/hardening_metrics.py
# The load generator is not under test: in the sanitizer pass take it
# from the plain build when there is one.
RRLOAD=$BUILD/rrload
case $BUILD in
*/san) [ -x "${BUILD%/san}/rrload" ] && RRLOAD=${BUILD%/san}/rrload ;;
esac

# veth accepts MTU + 4 bytes (room for one VLAN tag): a client MTU of 1504
# lets an untagged request be 4 bytes over the server's MTU, too big for
# any reply. The server keeps 1500.
tb_cli ip link set dev "$TB_IF_CLI" mtu 1504 || die "cannot set the client MTU"

# The battery's tags are VLANs 100, 200 and 300, the host's here (this
# kernel makes no VLAN device; invoker_vlan.sh tests vlans = host).
rr_start main -i "$TB_IF_SRV" -q 4 --vlans 100,200,300 --metrics-file "$M" \
	--metrics-listen 127.0.0.1:9464 ||
	die "reqrouter -i $TB_IF_SRV -q 4 did not start"
tb_wait_file "$M" 5 || die "no metrics file at $M"
# The battery reads the counters as they are: reqrouter's /metrics (the
# text the file has), fetched on the server's loopback every 50 ms into
# $ML, where the file, rewritten once a second, would hold up each of its
# rounds for a second.
ML=$RR_TMP/live.prom
tb_srv_bg python3 -c '
import os, sys, time, urllib.request
while True:
    try:
        text = urllib.request.urlopen("http://127.0.0.1:9464/metrics",
                                      timeout=2).read()
        with open(sys.argv[1] + ".tmp", "wb") as f:
            f.write(text)
        os.replace(sys.argv[1] + ".tmp", sys.argv[1])
    except OSError:
        pass
    time.sleep(0.05)' "$ML"
RR_BG_PIDS+=("$TB_PID")
tb_wait_file "$ML" 5 || die "no metrics from http://127.0.0.1:9464/metrics"

check "before the battery: 200 IPv4 + 200 IPv6 requests answered" serves 200

say "== background: rrload, 200 requests/s to echo (port 7) on 16 sockets"
tb_cli_bg "$RRLOAD" -s "$TB_IP4_SRV" -p 7 -c 16 -r 200 -d 300 -q \
	--timeout 3000 --json "$RR_TMP/load.json" >"$RR_TMP/load.out" 2>&1
LOAD_PID=$TB_PID
RR_BG_PIDS+=("$LOAD_PID")

say "== the battery: $(python3 $HF list | tail -n 1), 16 frames each"
tb_cli python3 $HF battery --ifname "$TB_IF_CLI" \
	--src-mac "$TB_MAC_CLI" --dst-mac "$TB_MAC_SRV" \
	--src4 "$TB_IP4_CLI" --dst4 "$TB_IP4_SRV" \
	--src6 "$TB_IP6_CLI" --dst6 "$TB_IP6_SRV" \
	--metrics "$ML" --count 16 >"$RR_TMP/battery.out" 2>&1
brc=$?
cat "$RR_TMP/battery.out"
CHK_CHECKS=$((CHK_CHECKS + $(grep -c '^ok ' "$RR_TMP/battery.out")))
nfail=$(grep -c '^FAIL' "$RR_TMP/battery.out")
CHK_CHECKS=$((CHK_CHECKS + nfail))
CHK_FAILS=$((CHK_FAILS + nfail))
if [ $brc -ne 0 ] && [ "$nfail" -eq 0 ]; then
	bad "the battery itself failed (exit $brc)"
fi

kill -INT "$LOAD_PID" 2>/dev/null
for _ in $(seq 50); do kill -0 "$LOAD_PID" 2>/dev/null || break; sleep 0.1; done
wait "$LOAD_PID" 2>/dev/null
sed 's/^/    /' "$RR_TMP/load.out" | head -n 2
json() { json_get "$RR_TMP/load.json" "$1"; }
if [ -s "$RR_TMP/load.json" ]; then
	sent=$(json sent)
	check "background load: sent some ($sent)" test "${sent:-0}" -gt 1000
	check_eq "background load: wrong replies" 0 "$(json wrong)"
	check_eq "background load: duplicates" 0 "$(json duplicates)"
	# A loaded test machine may answer late (over 3 s): late, not lost.
	check "background load: every request answered ($(json answered) + $(json late) late + $(json in_flight) in flight of $sent)" \
		test "$(($(json answered) + $(json late) + $(json in_flight)))" -eq "$sent"
else
	bad "background load: no summary from rrload"
fi

check "reqrouter still running" kill -0 "$RR_PID"
check "after the battery: 200 IPv4 + 200 IPv6 requests answered" serves 200

say "== frame accounting at rest"
python3 $HM at-rest "$M" --timeout 10 >"$RR_TMP/rest.out"
rc=$?
sed 's/^/    /' "$RR_TMP/rest.out"
check "every UMEM frame back in the fill ring (rx, worker, tx, completion, kernel all 0)" \
	test $rc -eq 0
check_eq "dropped as reply_too_big: 32 (the two over-MTU classes)" 32 \
	"$(metric "$M" reqrouter_dropped_packets_total 'reason="reply_too_big"')"
# The two the kernel would drop too: a bad IPv4 header checksum and a zero
# UDP checksum over IPv6 (RFC 8200); everything else malformed never got
# past the XDP program.
check_eq "dropped as malformed: 32 (bad IPv4 header checksum, zero IPv6 UDP checksum)" 32 \
	"$(metric "$M" reqrouter_dropped_packets_total 'reason="malformed"')"
# UDP checksums that do not check out, IPv4 and IPv6: refused like the
# kernel refuses them (partial ones, from offloading senders, answered).
check_eq "dropped as bad_checksum: 32 (bad UDP checksum, IPv4 and IPv6)" 32 \
	"$(metric "$M" reqrouter_dropped_packets_total 'reason="bad_checksum"')"
check_eq "dropped in all: those 96" 96 \
	"$(metric "$M" reqrouter_dropped_packets_total)"
check_eq "xsk: no invalid descriptors" 0 \
	"$(($(metric "$M" reqrouter_xsk_rx_invalid_descs_total) + $(metric "$M" reqrouter_xsk_tx_invalid_descs_total)))"

rr_kill_wait TERM 5
check_eq "SIGTERM: exit status" 0 "$RR_RC"
[ "$RR_RC" = running ] && rr_kill_wait KILL 2
check "SIGTERM: no XDP program left" eval '! xdp_on_srv'
check "summary printed with reply_too_big=32" \
	grep -q '^in user space: .* reply_too_big=32' "$RR_OUT"
check "summary printed with bad_checksum=32" \
	grep -q '^in user space: .* bad_checksum=32' "$RR_OUT"
finish
