#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/bench-observe's table: what capture and dnstap cost.

bench_observe.py CSV CLK-TCK CPU-RATE

CSV is bench-observe's (rep,server,generator,offered_per_s,answered_per_s,
wrong,srv_busy_ticks,answered; generator "max" or "cpu"). Prints, per
server, the median answered/s at the generator's max with its range, and
the server CPU's busy time per answer at CPU-RATE offered; then each
server that observes (capture, dnstap) against its base, the same server
without it, as ratios of the medians.
"""
import csv
import statistics
import sys

from bench_rrl import span

# (the server that observes, its base, what it adds)
PAIRS = [("reverse-capture", "reverse", "capture 1 in 100, user tier"),
         ("reverse-xdp-capture", "reverse-xdp",
          "capture 1 in 100, XDP tier"),
         ("dns-tap", "dns", "dnstap at full rate, reply cache in XDP"),
         ("dns-user-tap", "dns-user", "dnstap at full rate, user tier")]


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: bench_observe.py CSV CLK-TCK CPU-RATE")
    with open(sys.argv[1], encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    hz = float(sys.argv[2])
    order = []
    for r in rows:
        if r["server"] not in order:
            order.append(r["server"])

    def rate(s):
        return [float(r["answered_per_s"]) for r in rows
                if r["server"] == s and r["generator"] == "max"]

    def cpu(s):
        return [float(r["srv_busy_ticks"]) / hz * 1e6 / float(r["answered"])
                for r in rows if r["server"] == s and r["generator"] == "cpu"
                and r["srv_busy_ticks"] and float(r["answered"] or 0) > 0]

    def wrong(s):
        return sum(int(r["wrong"] or 0) for r in rows if r["server"] == s)

    def ratio(a, b):
        x, y = a and statistics.median(a), b and statistics.median(b)
        return "%.3f" % (x / y) if x and y else "-"

    print("\n| server | answered/s at max | CPU us/answer at %s/s | wrong |"
          % sys.argv[3])
    print("|---|---|---|---|")
    for s in order:
        print("| %s | %s | %s | %d |" % (s, span(rate(s), "%.0f"),
                                         span(cpu(s), "%.2f"), wrong(s)))
    print("\n| what it costs | answered/s, to its base | CPU/answer, to its"
          " base |")
    print("|---|---|---|")
    for a, b, what in PAIRS:
        if a in order and b in order:
            print("| %s (%s / %s) | %s | %s |" % (
                what, a, b, ratio(rate(a), rate(b)), ratio(cpu(a), cpu(b))))


if __name__ == "__main__":
    main()
