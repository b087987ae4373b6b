#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The reply cache is one partition per RX queue (kern/shared/cache.h): a
# queue's cell maps its own partition and no other, so a function running
# in it can reach no other queue's cached answers, which it does not
# answer anyway. On a 2-queue bed with the dns function (cache on) in
# cells: the main process maps the whole table, each cell exactly one
# partition (half of it), and the cache still answers repeated queries,
# which may arrive on either queue, from the partition of theirs.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
TB_PEER_XDP=0

command -v kdig >/dev/null || die "kdig (knot-dnsutils) is needed: make deps"
RR_TIER=auto
RR_CACHE=yes
rr_bed 2
M=$RR_TMP/metrics.prom
ZONE=$RR_TMP/example.zone
cp configs/example.zone "$ZONE"
cat >"$RR_TMP/rr.conf" <<EOF
[function dns]
zone = example.com $ZONE
rate_limit = 0
EOF
ENTRY=552     # sizeof(struct rr_cache_entry)
PART=$((4096 * ENTRY)) # 8192 entries shared out over 2 queues

rr_start main -i "$TB_IF_SRV" -q 2 -c "$RR_TMP/rr.conf" --isolation cell \
	--metrics-file "$M" || die "reqrouter with dns in cells did not start"
# The workers' cells (dns's TCP loop is a cell of its own, which maps no
# cache at all).
cells=$(pgrep -P "$RR_PID" '^rr-cell')
check_eq "one worker cell per queue" 2 "$(wc -w <<<"$cells")"

# The validated sources' table (2^15 sets of 64 bytes), which the TCP
# loop keeps to mark a source at accept, and no worker cell of a function
# without tokens (RR_FN_TOKENS) keeps.
VALIDATE=$((32768 * 64))
# bpf_maps PID: the sizes of PID's mappings of BPF maps, in bytes, one a
# line (the reply cache is the only map the workers map that big, but the
# validated sources' table), the table apart as "validate".
bpf_maps() {
	local range rest size
	while read -r range rest; do
		[[ $rest == *anon_inode:bpf-map* ]] || continue
		size=$((16#${range#*-} - 16#${range%-*}))
		if [ "$size" -eq "$VALIDATE" ]; then
			echo validate
		elif [ "$size" -ge $((1024 * ENTRY)) ]; then
			echo "$size"
		fi
	done <"/proc/$1/maps"
}
check_eq "the main process maps the whole cache (two partitions)" \
	$((2 * PART)) "$(bpf_maps "$RR_PID" | sort -n | tail -n 1)"
for c in $cells; do
	check_eq "cell $c maps one partition of the cache, its queue's" \
		"$PART" "$(bpf_maps "$c" | tr '\n' ' ' | sed 's/ $//')"
done
for c in $(pgrep -P "$RR_PID" '^rr-tcp'); do
	check_eq "the TCP loop's cell $c maps none of the cache, and the validated sources" \
		validate "$(bpf_maps "$c")"
done

# A pass program on the client for the XDP_TX answers.
tb_cli_bg "$BUILD/reflector" --pass -i "$TB_IF_CLI"
PASS=$TB_PID
RR_BG_PIDS+=("$PASS")
sleep 0.3
# Each kdig is a new source port: the queries spread over both queues.
answer() {
	tb_cli kdig @"$TB_IP4_SRV" -p 53 +notcp +noedns +short +retry=0 \
		+timeout=1 www.example.com A | sort | tr '\n' ' '
}
first=$(answer)
check_eq "dns answers www.example.com A" "192.0.2.80 192.0.2.81 " "$first"
wrong=0
for _ in $(seq 20); do
	[ "$(answer)" = "$first" ] || wrong=$((wrong + 1))
done
check_eq "asked 20 times more: the same answer each time" 0 "$wrong"
hits=$(wait_metric "$M" 5 reqrouter_cache_hits_total 'function="dns"' -- 10)
check "the cache answered most repeats ($hits hits of 20)" [ "$hits" -ge 10 ]
kill "$PASS"
wait "$PASS" 2>/dev/null

rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
finish
