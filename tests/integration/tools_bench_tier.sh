#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bench-tier keeps working: a run of one repetition, two slices a
# server, at 64 B in both placements puts reqrouter's in-kernel tier and
# the reflector each on a bed of its own, alternates the XDP engine
# between them, and reports each cell's ratio, both rates and (threaded)
# the CPU per reply, with no wrong reply; its CSV has a row per slice and
# server, each with replies. --control runs a second reflector in the
# in-kernel tier's place. Its usage errors are one line and exit 2.
# Nothing is timed against a threshold: the figures of a busy machine
# (this suite's) mean nothing. Needs root, two CPUs, veth and threaded
# NAPI; 77 (skip) otherwise.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
source tools/testbed.sh

tb_prereqs
[ "$(nproc)" -ge 2 ] || skip "needs 2 CPUs (the server's and the client's)"
command -v ethtool >/dev/null || skip "needs ethtool (GRO on a veth)"
for b in reqrouter reflector rrload; do
	[ -x "$BUILD/$b" ] || die "no binary at $BUILD/$b (run make first)"
done
export BUILD
TMP=$(mktemp -d /tmp/rr-bench-tier-test.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

say "== tools/bench-tier, one repetition, 64 B, both placements"
tools/bench-tier --no-build --reps 1 --slices 2 --sizes 64 \
	--out "$TMP/out" >"$TMP/report.md" 2>"$TMP/err"
check_eq "exit status" 0 "$?"
check "the command heads the report" \
	grep -q '^    tools/bench-tier --no-build --reps 1' "$TMP/report.md"
for where in softirq threaded; do
	check "a row for $where, 64 B, with a ratio and both rates" \
		grep -qE "^\| $where, 64 B \| [0-9]+\.[0-9]{3} \| [0-9.]+ \| [0-9.]+ \| (yes|no) \| [1-9][0-9]* \| [1-9][0-9]* \|" \
		"$TMP/report.md"
done
check "the CPU per reply, threaded" \
	grep -qE '^\| threaded, 64 B .*\| [0-9]+\.[0-9]{2} / [0-9]+\.[0-9]{2} us \|$' \
	"$TMP/report.md"
check "no wrong reply" grep -q '^Wrong replies: 0 ' "$TMP/report.md"
check "the report in --out" test -s "$TMP/out/tier.md"
# 2 placements x 2 slices x 2 servers, each with replies.
check_eq "a CSV row per slice and server" 8 \
	"$(awk -F, 'NR > 1 && $8 > 0' "$TMP/out/tier.csv" | wc -l)"
check_eq "each server in half of them" 4 \
	"$(awk -F, 'NR > 1 && $5 == "rr-xdp"' "$TMP/out/tier.csv" | wc -l)"

say "== --control: a second reflector in rr-xdp's place"
tools/bench-tier --no-build --control --reps 1 --slices 2 --sizes 64 \
	--placements softirq --out "$TMP/ctl" >"$TMP/ctl.md" 2>"$TMP/err"
check_eq "exit status" 0 "$?"
check "a row of reflector-b against the reflector" \
	grep -qE "^\| softirq, 64 B \| [0-9]+\.[0-9]{3} \| .*\| [1-9][0-9]* \| [1-9][0-9]* \|" \
	"$TMP/ctl.md"
check "its head names reflector-b" grep -q '| reflector-b / reflector per' \
	"$TMP/ctl.md"
check_eq "no rr-xdp in its CSV, reflector-b in half" "0 2" \
	"$(awk -F, 'NR > 1 && $5 == "rr-xdp"' "$TMP/ctl/tier.csv" | wc -l) $(awk -F, 'NR > 1 && $5 == "reflector-b" && $8 > 0' "$TMP/ctl/tier.csv" | wc -l)"

say "== usage errors"
tools/bench-tier --no-build --placements sideways >/dev/null 2>"$TMP/err"
check_eq "--placements sideways: exit 2" 2 "$?"
check "says what --placements takes" grep -q 'softirq and threaded' "$TMP/err"
check_eq "one line" 1 "$(wc -l <"$TMP/err")"
tools/bench-tier --no-build --sizes 64,x >/dev/null 2>&1
check_eq "--sizes 64,x: exit 2" 2 "$?"
tools/bench-tier --no-build --reps 0 >/dev/null 2>&1
check_eq "--reps 0: exit 2" 2 "$?"
finish
