#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One row of tools/bench's results.csv from one rrload --json summary.

bench_row.py REP SERVER TEST SIZE TARGET JSON BUSY-TICKS [PORT BEFORE AFTER]

With PORT and two of reqrouter's `stats --json` answers taken before and
after the run, the row also has the p50 and p99 of the time the port's
requests waited for a worker (queue delay: the XDP program's arrival
stamp to the worker's batch) and spent in it (service: the batch taken
off RX to its replies on TX), over the run only: the difference of the
two answers' histogram buckets. A quantile is its bucket's upper bound,
as reqrouter's own stats give it ("inf" above the last, 1 s); empty
where nothing was counted (a server that is not reqrouter, or requests
answered in XDP).
"""
import json
import sys


def load(path):
    """A JSON document (rrload's summary, a stats --json answer), or
    None when the run left none or half of one."""
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def quantile(le, counts, q):
    """The @q quantile of histogram @counts (bounds @le, one more count
    above the last) as its bucket's upper bound, "inf" above the last, ""
    if empty."""
    total = sum(counts)
    if total <= 0:
        return ""
    seen = 0
    for bound, n in zip(le, counts):
        seen += n
        if seen >= q * total:
            return "%.1f" % bound
    return "inf"


def server_quantiles(port, before, after):
    """[qd p50, qd p99, service p50, service p99] over the run."""
    a, b = load(after), load(before)
    if not a or not b or "latency_le_us" not in a:
        return [""] * 4
    def fn(d):
        return next((f for f in d.get("functions", [])
                     if f.get("port") == int(port)), None)
    fa, fb = fn(a), fn(b)
    if not fa or not fb:
        return [""] * 4
    out = []
    for h in ("queue_delay_us", "latency_us"):
        diff = [x - y for x, y in zip(fa[h]["buckets"], fb[h]["buckets"])]
        out += [quantile(a["latency_le_us"], diff, q) for q in (0.5, 0.99)]
    return out


def row(rep, srv, test, size, target, path, busy, port=None, before=None,
        after=None):
    """The CSV line for one measurement."""
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    lat = d["latency_us"]

    def us(k):
        return "%.2f" % lat[k] if lat["samples"] > 0 else ""

    return ",".join(str(x) for x in (
        rep, srv, test, size, target, "%.0f" % d["sent_per_s"],
        "%.0f" % d["answered_per_s"], d["sent"], d["answered"], d["wrong"],
        d["timeouts"], us("p50"), us("p90"), us("p99"), us("p99_9"),
        us("max"), busy,
        *(server_quantiles(port, before, after) if port else [""] * 4)))


if __name__ == "__main__":
    if len(sys.argv) not in (8, 11):
        sys.exit(__doc__.strip())
    print(row(*sys.argv[1:]))
