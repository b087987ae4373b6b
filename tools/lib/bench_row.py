#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One row of tools/bench's results.csv from one rrload --json summary.

bench_row.py REP SERVER TEST SIZE TARGET JSON BUSY-TICKS
"""
import json
import sys


def row(rep, srv, test, size, target, path, busy):
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
        us("max"), busy))


if __name__ == "__main__":
    if len(sys.argv) != 8:
        sys.exit(__doc__.strip())
    print(row(*sys.argv[1:8]))
