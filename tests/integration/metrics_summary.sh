#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The exit summary, which the unit's journal gets: what moved and nothing
# else. On the bare defaults (2 queues, 2 threads each, the installed
# config, nothing on the veth peer), five requests to reverse and none to
# any other function, then SIGTERM: one row in the table (reverse's, 5
# in, 5 out), the totals, and no row, counter or line that says 0 of
# something; no line longer than 200 characters.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

TB_PEER_XDP=0
RR_TIER=auto # the defaults
RR_CACHE=yes
rr_bed 2

rr_start summary -i "$TB_IF_SRV" -q 2 -t 2 -c configs/service.conf ||
	die "reqrouter did not start"
for i in 1 2 3 4 5; do
	check_eq "reverse answers request $i" "olleh$i" "$(cli_ask 1 1232 "${i}hello")"
done
rr_kill_wait TERM 10
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
say "    the summary:"
sed 's/^/      /' "$RR_OUT"

check "the table's header" grep -qE '^port +function +rx +tx +dropped$' "$RR_OUT"
check_eq "one row: reverse's, 5 requests in, 5 replies out, none dropped" \
	"1232 reverse 5 5 0" "$(grep -E '^[0-9]+ ' "$RR_OUT" | tr -s ' ')"
check "the totals" grep -qx 'in user space: 5 requests, 5 replies, 0 dropped' "$RR_OUT"
check_eq "no counter that stayed 0 (NAME=0)" "" "$(grep -E '=0( |$)' "$RR_OUT")"
check_eq "no line of zeros (0 requests, 0 limited, 0 hits)" "" \
	"$(grep -E ': 0 (requests|hits)|, 0 limited \(dropped\), 0 slipped' "$RR_OUT")"
check_eq "no line longer than 200 characters" "" \
	"$(awk 'length > 200 { print NR ": " length }' "$RR_OUT")"
check_eq "a few lines, not a screenful" 1 "$(($(wc -l <"$RR_OUT") <= 6))"
finish
