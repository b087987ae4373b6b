#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# tools/bench-xdp (build/xdpprice) keeps working as the XDP program
# changes: a run with a tiny repeat prints every row of every frame, each
# measured one with the verdict its configuration must give (XDP_TX where
# reverse or the reply cache answers in XDP, XDP_REDIRECT for the user
# tier and a query with a DNS cookie, XDP_PASS for a port with no
# function) and a time above zero; the two rows that make no sense for
# their frame say so instead; every
# program the in-kernel tier runs has its instruction counts and the
# verifier's statistics, the second load's count equal to the first's;
# the clock helpers are priced for scale.
# Nothing is timed against a threshold: the figures of a busy machine
# mean nothing, and xdpprice itself fails a run whose counters show
# another path than the configuration's. No test bed: xdpprice makes a
# network namespace of its own. Needs root; 77 (skip) otherwise.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh

[ "$(id -u)" = 0 ] || skip "needs root (BPF, a network namespace)"
[ -x "$BUILD/xdpprice" ] || die "no binary at $BUILD/xdpprice (run make first)"
export BUILD
TMP=$(mktemp -d /tmp/rr-bench-xdp.XXXXXX)
trap 'rm -rf "$TMP"' EXIT

say "== tools/bench-xdp --json, 300 runs a row"
tools/bench-xdp --no-build --repeat 300 --batches 1 --json \
	>"$TMP/price.json" 2>"$TMP/price.err"
status=$?
[ "$status" = 77 ] && skip "$(grep -m 1 SKIP "$TMP/price.json")"
check_eq "exit status" 0 "$status"
[ "$status" = 0 ] || {
	cat "$TMP/price.err"
	finish
}

# One line per check from the document: "ok TEXT" or "bad TEXT". The
# expectations are this test's own, not the tool's table.
"$RR_PY" - "$TMP/price.json" >"$TMP/checks" <<'EOF'
import json
import sys

d = json.load(open(sys.argv[1]))
frames = ["ipv4-64", "ipv4-800", "ipv6-64"]
want = {
    "reflector": "XDP_TX", "defaults": "XDP_TX", "no_local_dst": "XDP_TX",
    "local_trie": "XDP_TX", "no_mac": "XDP_TX", "no_min_src": "XDP_TX",
    "no_hh": "XDP_TX", "no_rl": "XDP_TX", "rl_busy": "XDP_TX",
    "rl_spread": "XDP_TX",
    "no_csum": "XDP_TX", "no_amp": "XDP_TX", "allow": "XDP_TX",
    "bare": "XDP_TX", "user": "XDP_REDIRECT",
    "user_no_cache": "XDP_REDIRECT", "cache_hit": "XDP_TX",
    "cookie_forged": "XDP_REDIRECT", "cookie_unchecked": "XDP_REDIRECT",
    "no_function": "XDP_PASS",
}
# No request over IPv6 lacks a checksum; 800 bytes are never cached.
na = {("ipv6-64", "no_csum"), ("ipv4-800", "cache_hit")}
rows = {(r["frame"], r["id"]): r for r in d["rows"]}


def say(good, text):
    print(("ok " if good else "bad ") + text)


for f in frames:
    h = d["harness_ns"].get(f, 0)
    say(h > 0, f"{f}: the harness alone takes time ({h} ns)")
    for rid, verdict in want.items():
        r = rows.get((f, rid))
        if r is None:
            say(False, f"{f}, {rid}: no row")
            continue
        if (f, rid) in na:
            say("na" in r, f"{f}, {rid}: said to make no sense ({r.get('na')})")
            continue
        say(r.get("verdict") == verdict,
            f"{f}, {rid}: {r.get('verdict')}, want {verdict}")
        say(r.get("raw_ns", 0) > 0 and len(r.get("batches_ns", [])) == 1,
            f"{f}, {rid}: measured ({r.get('raw_ns')} ns with the harness)")
for name in ["bpf_ktime_get_ns", "bpf_ktime_get_coarse_ns"]:
    say(name in d["helpers_ns"], f"{name} priced for scale")
say(len(rows) == len(frames) * len(want),
    f"{len(rows)} rows, want {len(frames) * len(want)}")

progs = {(p["object"], p["name"]): p for p in d["programs"]}
for key in [("reqrouter", "reqrouter_xdp"), ("reqrouter", "reqrouter_verdict"),
            ("reverse", "rr_fn_reverse"), ("reflector", "reflect")]:
    p = progs.get(key)
    name = "/".join(key)
    if p is None:
        say(False, f"{name}: not listed")
        continue
    say(p["xlated_insns"] > 0 and p["jited_bytes"] > 0
        and p["verified_insns"] > 0,
        f"{name}: {p['xlated_insns']} xlated insns, {p['jited_bytes']} "
        f"JITed bytes, {p['verified_insns']} verified")
    v = p.get("verifier", {})
    say(v.get("processed_insns") == p["verified_insns"]
        and v.get("peak_states", 0) > 0,
        f"{name}: the verifier's statistics, from a load like the first "
        f"({v.get('processed_insns')} insns, peak states "
        f"{v.get('peak_states')})")
EOF
check "the JSON document reads" test -s "$TMP/checks"
while read -r verdict text; do
	if [ "$verdict" = ok ]; then ok "$text"; else bad "$text"; fi
done <"$TMP/checks"

say "== the tables"
tools/bench-xdp --no-build --repeat 100 --batches 1 --frames ipv4-64 \
	--rows reflector,bare >"$TMP/price.txt" 2>"$TMP/price.err"
check_eq "exit status" 0 "$?"
check "the command heads the tables" grep -q '^tools/bench-xdp --repeat 100' \
	"$TMP/price.txt"
check "the defaults' row" grep -qE '^  in-kernel tier, defaults +XDP_TX ' \
	"$TMP/price.txt"
check "the program table" grep -qE '^  reqrouter/reqrouter_xdp +[0-9]+ ' \
	"$TMP/price.txt"
check "only the frame asked for" test "$(grep -c '^UDP/' "$TMP/price.txt")" = 1
# --rows: those asked for, and the defaults the deltas are taken against.
check_eq "only the rows asked for, and the defaults" 3 \
	"$(grep -cE '^  (bare XDP_TX reflector|in-kernel tier, defaults|parse \+ tier only) +XDP_TX ' "$TMP/price.txt")"
check_eq "no other row" 3 "$(grep -cE '^  [-+a-z].* +XDP_(TX|PASS|REDIRECT) ' "$TMP/price.txt")"

say "== usage errors"
"$BUILD/xdpprice" --repeat 0 >/dev/null 2>"$TMP/err"
check_eq "xdpprice --repeat 0: exit 2" 2 "$?"
"$BUILD/xdpprice" --frames ipv5-64 >/dev/null 2>"$TMP/err"
check_eq "xdpprice --frames ipv5-64: exit 2" 2 "$?"
check "says what --frames takes" grep -q 'ipv4-64' "$TMP/err"
"$BUILD/xdpprice" --rows defaults,nope >/dev/null 2>"$TMP/err"
check_eq "xdpprice --rows defaults,nope: exit 2" 2 "$?"
check "says what --rows takes" grep -q "the ids --json prints" "$TMP/err"
tools/bench-xdp --no-build --batches x >/dev/null 2>&1
check_eq "bench-xdp --batches x: exit 2" 2 "$?"
finish
