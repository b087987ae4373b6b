#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# What GET /metrics says, as Prometheus reads it. With both tiers, the
# reply cache and a test module whose counter is named "faults" (tally,
# tests/modules/tally.c): promtool check metrics accepts the scrape, every
# family is there once (one reqrouter_function_faults_total: a function's
# counters are one family, reqrouter_function_events_total, the counter a
# label), reqrouter_build_info and reqrouter_ready say what and whether,
# every metric the example dashboard and alert rules query is there, and
# every family there is queried by one of them, and
# the table in docs/OPERATIONS.md lists exactly the families there are
# (reverse served over TCP too, so that the TCP families are there). Then, in the
# user tier, metrics_detail = socket, queue (the default) and function:
# each gives the documented labels and number of series with the same
# totals, and the latency histogram has counted each reply once, in
# cells and in threads.
cd "$(dirname "$0")/../.." || exit 1
source tests/integration/lib/common.sh
source tests/integration/lib/tcp.sh

command -v promtool >/dev/null ||
	die "promtool not found (tools/install-deps.sh installs prometheus)"
TMODS=$BUILD/tests/modules
[ -f "$TMODS/tally.so" ] || die "no $TMODS/tally.so (run make first)"
DASH=configs/reqrouter.grafana.json
RULES=configs/reqrouter.rules.yml

rr_bed 2
LISTEN=$TB_IP4_SRV:9464
mkdir -p "$RR_TMP/mods"
cp "$TMODS/tally.so" "$RR_TMP/mods/"

# scrape FILE: GET /metrics from the client namespace, the body into FILE.
scrape() {
	tb_cli python3 -c '
import sys, urllib.request
r = urllib.request.urlopen("http://%s/metrics" % sys.argv[1], timeout=5)
sys.stdout.write(r.read().decode())' "$LISTEN" >"$1"
}
# promtool_ok FILE: promtool check metrics finds nothing to say (its
# complaints are shown).
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
promtool_ok() {
	promtool check metrics <"$1" >"$1.lint" 2>&1 && return 0
	sed 's/^/    /' "$1.lint"
	return 1
}
# families FILE: the names of FILE's families (its TYPE lines), one a line.
families() { awk '$1 == "#" && $2 == "TYPE" { print $3 }' "$1"; }
# label_keys FILE NAME [SUBSTRING]: the label names of NAME's samples
# (those holding SUBSTRING), each distinct list once.
label_keys() {
	metric_lines "$1" "$2" | grep -F -- "${3:-}" |
		sed -E 's/^[^{]*\{(.*)\} [^ ]*$/\1/; s/="[^"]*"//g' | sort -u | xargs
}
# series FILE NAME [SUBSTRING]: how many samples NAME has.
series() { metric_lines "$1" "$2" | grep -cF -- "${3:-}"; }
# ask TEXT: tally's reply to TEXT.
ask() { cli_ask 1 9013 "$1"; }
# shellcheck disable=SC2317 # called through check, which shellcheck does not follow
not() { ! "$@"; }

say "== every family once: both tiers, the reply cache, a counter named faults, TCP"
RR_TIER=auto
RR_CACHE=yes
cat >"$RR_TMP/function.conf" <<EOF
[reqrouter]
metrics_detail = function

[function reverse]
tcp = yes
EOF
rr_start families -c "$RR_TMP/function.conf" -i "$TB_IF_SRV" -q 2 -t 2 \
	--functions-dir "$RR_TMP/mods" --metrics-listen "$LISTEN" ||
	die "reqrouter with the tally module did not start"
check "reverse and echo answered (in XDP)" serves 50
replies=""
for i in 1 2 3; do
	replies+="$(ask "fault-$i") $(ask "other-$i") "
done
check_eq "tally echoes 6 distinct requests" \
	"fault-1 other-1 fault-2 other-2 fault-3 other-3" "$(xargs <<<"$replies")"
tcp pipe pipeline "$TB_IP4_SRV" -n 3 --min-size 1 --max-size 100
check_eq "reverse over TCP: 3 messages answered" 3 "$(tcp_get pipe 'd["correct"]')"
sleep 0.5
A=$RR_TMP/families.prom
scrape "$A" || die "GET /metrics failed"
check "promtool check metrics accepts the scrape" promtool_ok "$A"
check_eq "no family twice" "" "$(families "$A" | sort | uniq -d | xargs)"
check_eq "one reqrouter_function_faults_total family" 1 \
	"$(grep -c '^# TYPE reqrouter_function_faults_total ' "$A")"
check_eq "... whose samples are reqrouter's own faults (kind=)" 0 \
	"$(metric_lines "$A" reqrouter_function_faults_total | grep -vc 'kind="')"
check_eq "tally's counters: a counter label of reqrouter_function_events_total" \
	"3 6" "$(metric "$A" reqrouter_function_events_total 'function="tally"' \
		'counter="faults"') $(metric "$A" reqrouter_function_events_total \
		'function="tally"' 'counter="requests"')"
check_eq "... with labels port, function, version, counter" "port,function,version,counter" \
	"$(label_keys "$A" reqrouter_function_events_total)"
check "tally's series carry its module's version, a hash of its file (so-...)" \
	grep -Eq '^reqrouter_function_events_total\{[^}]*function="tally",version="so-[0-9a-f]{12}",' "$A"
check "a built-in function's, reqrouter's version" grep -q \
	"^reqrouter_function_quarantined{[^}]*,version=\"$(cat VERSION)\"}" "$A"
api=$(awk '$2 == "RR_FUNCTION_API" { print $3 }' include/reqrouter/rr_function.h)
check_eq "reqrouter_build_info: the release and the function API" \
	"reqrouter_build_info{version=\"$(cat VERSION)\",function_api=\"$api\"} 1" \
	"$(metric_lines "$A" reqrouter_build_info)"
check_eq "reqrouter_ready 1 while serving" 1 "$(metric "$A" reqrouter_ready)"
check_eq "metrics_detail = function: the XDP tier per function" \
	"port,function,version,tier" "$(label_keys "$A" reqrouter_rx_packets_total 'tier="xdp"')"
check_eq "... and the cache" "port,function,version" \
	"$(label_keys "$A" reqrouter_cache_misses_total)"
check_eq "... one sample each" "2 1" \
	"$(series "$A" reqrouter_rx_packets_total 'tier="xdp"') $(series "$A" reqrouter_cache_misses_total)"
check_eq "... with the queues' totals" "100 6" \
	"$(metric "$A" reqrouter_rx_packets_total 'tier="xdp"') $(metric "$A" reqrouter_cache_misses_total)"
check_eq "the TCP connection counted as accepted" 1 \
	"$(metric "$A" reqrouter_tcp_events_total 'event="accepted"')"

# Every reqrouter_* name in the dashboard's queries and the rules'
# expressions is a sample name of the scrape.
python3 - "$DASH" "$RULES" "$A" >"$RR_TMP/names.out" <<'EOF'
import json, re, sys
import yaml

NAME = re.compile(r"\breqrouter_[a-z0-9_]+")
have = set()
with open(sys.argv[3]) as f:
    for line in f:
        if line and line[0] != "#":
            have.add(re.split(r"[{ ]", line, 1)[0])

def exprs(node):
    if isinstance(node, dict):
        for k, v in node.items():
            if k in ("expr", "definition") and isinstance(v, str):
                yield v
            elif k == "query" and isinstance(v, str):
                yield v
            else:
                yield from exprs(v)
    elif isinstance(node, list):
        for v in node:
            yield from exprs(v)

# A family's TYPE line exports it, samples or not (reqrouter_xdp_spread_cpus
# has none while no function has xdp_spread).
families = set()
with open(sys.argv[3]) as f:
    for line in f:
        if line.startswith("# TYPE "):
            families.add(line.split()[2])
have |= families
queried = set()
for what, doc in (("dashboard", json.load(open(sys.argv[1]))),
                  ("rules", yaml.safe_load(open(sys.argv[2])))):
    used = {n for e in exprs(doc) for n in NAME.findall(e)}
    print(what, len(used), " ".join(sorted(used - have)) or "-")
    # a histogram's family is queried through its _bucket, _sum, _count
    queried |= {re.sub(r"_(bucket|sum|count)$", "", n)
                if re.sub(r"_(bucket|sum|count)$", "", n) in families else n
                for n in used}
print("unqueried", len(families), " ".join(sorted(families - queried)) or "-")
EOF
read -r _ dash_n dash_missing < <(grep '^dashboard ' "$RR_TMP/names.out")
read -r _ rules_n rules_missing < <(grep '^rules ' "$RR_TMP/names.out")
check_eq "every metric the dashboard queries ($dash_n) is exported" - "$dash_missing"
check "... which are most of them" [ "${dash_n:-0}" -ge 25 ]
check_eq "every metric the alert rules query ($rules_n) is exported" - "$rules_missing"
check "... there are some" [ "${rules_n:-0}" -ge 5 ]
read -r _ fam_n unqueried < <(grep '^unqueried ' "$RR_TMP/names.out")
check_eq "every family exported ($fam_n) is on the dashboard or in the rules" - "$unqueried"
readme=$(awk '/^## Metrics/ { on = 1; next } /^## / { on = 0 } on' docs/OPERATIONS.md |
	grep '^| `reqrouter_' | cut -d'|' -f2 | grep -o 'reqrouter_[a-z0-9_]*' | sort)
check_eq "every family exported is in docs/OPERATIONS.md's table" "" \
	"$(comm -23 <(families "$A" | sort) <(echo "$readme") | xargs)"
check_eq "... and every family in the table is exported" "" \
	"$(comm -13 <(families "$A" | sort) <(echo "$readme") | xargs)"
rr_kill_wait TERM 5
check_eq "SIGTERM: exit 0" 0 "$RR_RC"
check "the exit summary keeps the function's counters" \
	grep -q '^function tally: requests=6 faults=3$' "$RR_OUT"

say "== metrics_detail: the user tier's labels at each level"
RR_TIER=user
RR_CACHE=no
rr_run bad -i "$TB_IF_SRV" --metrics-detail thread
check_eq "--metrics-detail thread: exit 2" 2 "$RR_RC"
check "... saying what it takes" \
	grep -q "must be socket, queue or function, not 'thread'" "$RR_ERR"
# level ARGS LABELS SERIES: reqrouter -q 2 -t 2 with ARGS answers 200
# requests; a user-tier family has LABELS (and with reason=, the drops)
# and SERIES samples, adding up to 200; the histogram counted each reply.
level() {
	local name=$1 labels=$3 n=$4 f
	f=$RR_TMP/$name.prom
	# shellcheck disable=SC2086 # ARGS are words
	rr_start "$name" -i "$TB_IF_SRV" -q 2 -t 2 $2 \
		--metrics-listen "$LISTEN" || {
		bad "$name: reqrouter did not start"
		return
	}
	check "$name: 200 requests answered" serves 100
	sleep 0.5
	scrape "$f" || bad "$name: GET /metrics failed"
	check "$name: promtool check metrics accepts it" promtool_ok "$f"
	check_eq "$name: reqrouter_rx_packets_total labels" "$labels" \
		"$(label_keys "$f" reqrouter_rx_packets_total)"
	check_eq "$name: ... the kernel's socket statistics'" "$labels" \
		"$(label_keys "$f" reqrouter_xsk_rx_ring_full_total)"
	check_eq "$name: ... the drops', with reason" "$labels,reason" \
		"$(label_keys "$f" reqrouter_dropped_packets_total)"
	# RR_DROPS in kern/shared/stats.h: a reason an X( line.
	local reasons
	reasons=$(sed -n '/^#define RR_DROPS(X)/,/^$/p' kern/shared/stats.h |
		grep -c 'X(')
	check_eq "$name: $n samples per family, $reasons reasons each for drops" \
		"$n $n $((n * reasons))" \
		"$(series "$f" reqrouter_rx_packets_total) $(series "$f" reqrouter_tx_packets_total) $(series "$f" reqrouter_dropped_packets_total)"
	check_eq "$name: rx and tx add up to 200 each" "200 200" \
		"$(metric "$f" reqrouter_rx_packets_total) $(metric "$f" reqrouter_tx_packets_total)"
	python3 - "$f" >"$f.hist" <<'EOF'
import re, sys
from collections import defaultdict

LINE = re.compile(r'^reqrouter_(request_duration_seconds|tx_packets_total)(_bucket|_sum|_count)?\{([^}]*)\} (\S+)$')
buckets, counts, sums, tx = defaultdict(list), {}, {}, defaultdict(int)
for line in open(sys.argv[1]):
    m = LINE.match(line.strip())
    if not m:
        continue
    name, part, labels, v = m.groups()
    fn = re.search(r'function="([^"]*)"', labels).group(1)
    if name == "tx_packets_total":
        tx[fn] += int(v)
    elif part == "_bucket":
        le = re.search(r'le="([^"]*)"', labels).group(1)
        buckets[fn].append((float(le), int(v)))
    elif part == "_count":
        counts[fn] = int(v)
    else:
        sums[fn] = float(v)
bad = []
for fn, b in buckets.items():
    les = [le for le, _ in b]
    vals = [v for _, v in b]
    if les != sorted(les) or les[-1] != float("inf") or len(les) != 21:
        bad.append(fn + ": buckets out of order")
    if vals != sorted(vals):
        bad.append(fn + ": buckets not cumulative")
    if vals[-1] != counts.get(fn):
        bad.append(fn + ": +Inf != _count")
    if counts.get(fn) != tx[fn]:
        bad.append("%s: _count %s, replies %d" % (fn, counts.get(fn), tx[fn]))
    if counts.get(fn) and not 0 < sums.get(fn, 0) < 10:
        bad.append(fn + ": implausible _sum")
print(sum(counts.values()), len(buckets), "; ".join(bad) or "-")
EOF
	check_eq "$name: reqrouter_request_duration_seconds counted the 200 replies, per function as tx, buckets in order" \
		"200 2 -" "$(cat "$f.hist")"
	rr_kill_wait TERM 5
	check_eq "$name: SIGTERM: exit 0" 0 "$RR_RC"
	check "$name: the exit summary has the totals" \
		grep -q '^in user space: 200 requests, 200 replies, 0 dropped' "$RR_OUT"
	check_eq "$name: ... and a line per function called, whatever the level" 2 \
		"$(grep -cE '^(7|1232) ' "$RR_OUT")"
}
level socket "--metrics-detail socket" "port,function,version,queue,thread,tier" 8
level queue "" "port,function,version,queue,tier" 4
# Threads for once (cells are the default): the histogram is theirs too.
level function "--metrics-detail function --isolation thread" "port,function,version,tier" 2
finish
