#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The dns function behind the reply cache: DNS answers are pure but for the
# 2-byte message ID they echo (id_bytes = 2), so a query repeated with
# another ID is answered from the cache inside XDP, with that ID. kdig
# gets the same answer (but its ID) from the cache as from the function;
# rrload's XDP engine sends 12 different queries, each numbered in its ID,
# and checks every answer in full against the function's; the metrics
# show that the cache answered most. A reload (SIGHUP) retires cached
# answers: a changed zone is served at once; with cells too, and the
# cache hits again after it.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
TB_PEER_XDP=0 # rrload's XDP engine brings its own program to the client

command -v kdig >/dev/null || die "kdig (knot-dnsutils) is needed: make deps"
RR_TIER=auto
RR_CACHE=yes
rr_bed 1
M=$RR_TMP/metrics.prom
ZONE=$RR_TMP/example.zone
cp configs/example.zone "$ZONE"
cat >"$RR_TMP/rr.conf" <<EOF
[function dns]
zone = example.com $ZONE
max_amplification = 0
rate_limit = 0
EOF

rr_start main -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/rr.conf" --metrics-file "$M" ||
	die "reqrouter with the dns function did not start"
check "the log says dns's replies are cached" \
	grep -q "serving 'dns' on UDP port 53, in user space (tier user), replies cached in XDP" "$RR_ERR"

# A pass program on the client for the XDP_TX answers, while kdig runs.
tb_cli_bg "$BUILD/reflector" --pass -i "$TB_IF_CLI"
PASS=$TB_PID
RR_BG_PIDS+=("$PASS")
sleep 0.3
# answer: kdig's answer section for www.example.com A, sorted.
answer() {
	tb_cli kdig @"$TB_IP4_SRV" -p 53 +notcp +noedns +short +retry=0 \
		+timeout=1 www.example.com A | sort | tr '\n' ' '
}
first=$(answer)
check_eq "the function answers www.example.com A" "192.0.2.80 192.0.2.81 " "$first"
for i in 1 2 3 4 5; do
	check_eq "asked again ($i): the same answer" "$first" "$(answer)"
done
hits=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- 5)
check "the cache answered the repeats ($hits hits)" [ "$hits" -ge 5 ]
kill "$PASS"
wait "$PASS" 2>/dev/null

# rrload: 12 queries, each answer checked in full, most from the cache.
python3 - "$RR_TMP/queries.txt" <<'EOF'
import struct, sys
names = ["www", "ftp", "mail", "ns1", "nothere", "WwW", "alias", ""]
types = [1, 28, 15, 16, 2, 6]
with open(sys.argv[1], "w") as f:
    for i in range(12):
        n, t = names[i % len(names)], types[i % len(types)]
        q = struct.pack(">HHHHHH", 0, 0x0100, 1, 0, 0, 0)
        for label in ((n + ".") if n else "").split(".")[:-1] + ["example", "com"]:
            q += bytes([len(label)]) + label.encode()
        q += b"\0" + struct.pack(">HH", t, 1)
        f.write("0x" + q.hex() + "\n")
EOF
before=$(metric "$M" reqrouter_cache_hits_total 'function="dns"')
tb_cli "$BUILD/rrload" --engine xdp -i "$TB_IF_CLI" -s "$TB_IP4_SRV" -p 53 \
	--fn-config "$RR_TMP/rr.conf" --payloads "$RR_TMP/queries.txt" \
	-n 20000 -r 20000 -q --json "$RR_TMP/x.json" >/dev/null 2>"$RR_TMP/x.err"
check_eq "rrload --engine xdp: exit 0" 0 $?
read -r sent ans wrong < <(json_get "$RR_TMP/x.json" sent answered wrong)
say "    sent $sent answered $ans wrong $wrong"
check "rrload: at least 19900 of 20000 answers, each checked ($ans)" [ "$ans" -ge 19900 ]
check_eq "rrload: no wrong answer" 0 "$wrong"
after=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- $((before + 10000)))
check "most answers came from the cache ($((after - before)) hits)" [ $((after - before)) -ge 10000 ]

# A changed zone after a reload: the cached answer is retired.
sed -i 's/^www\t\tIN A\t192.0.2.80$/www\t\tIN A\t192.0.2.90/' "$ZONE"
grep -q '192.0.2.90' "$ZONE" || die "could not edit the zone copy"
kill -HUP "$RR_PID"
for ((i = 0; i < 50; i++)); do
	grep -q 'reload: 1 function re-initialised' "$RR_ERR" && break
	sleep 0.1
done
tb_cli_bg "$BUILD/reflector" --pass -i "$TB_IF_CLI"
PASS=$TB_PID
RR_BG_PIDS+=("$PASS")
sleep 0.3
check_eq "after the reload: the new zone's answer" "192.0.2.81 192.0.2.90 " "$(answer)"
check_eq "... and again (from the cache now)" "192.0.2.81 192.0.2.90 " "$(answer)"
kill "$PASS"
wait "$PASS" 2>/dev/null
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"

# With cells: a reload forks fresh cells before the generation moves, and
# they must cache under the new one, or the cache never hits again.
rr_start cells -i "$TB_IF_SRV" -q 1 -c "$RR_TMP/rr.conf" --isolation cell \
	--metrics-file "$M" || die "reqrouter --isolation cell did not start"
tb_cli_bg "$BUILD/reflector" --pass -i "$TB_IF_CLI"
PASS=$TB_PID
RR_BG_PIDS+=("$PASS")
sleep 0.3
for i in 1 2 3; do answer >/dev/null; done
hits=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- 2)
check "cells: the cache answers repeats ($hits hits)" [ "$hits" -ge 2 ]
kill -HUP "$RR_PID"
for ((i = 0; i < 50; i++)); do
	grep -q 'reload: 1 function re-initialised' "$RR_ERR" && break
	sleep 0.1
done
for i in 1 2 3 4; do
	check_eq "cells, after the reload ($i): the answer" "192.0.2.81 192.0.2.90 " "$(answer)"
done
after=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- $((hits + 3)))
check "cells, after the reload: the cache hits again ($((after - hits)) hits)" \
	[ $((after - hits)) -ge 3 ]
kill "$PASS"
wait "$PASS" 2>/dev/null
rr_kill_wait TERM 10
check_eq "cells: SIGTERM: exit 0" 0 "$RR_RC"

finish
