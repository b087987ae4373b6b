#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/bench-steer's arithmetic.

  bench_steer.py rate FILE      rrload JSON: answers/s, a whole number
  bench_steer.py offered FILE   rrload JSON: requests sent/s
  bench_steer.py mix FILE       rrload --mix JSON: "answers/s,short p50,
                                short p99,long p50,long p99" (us; short is
                                the class asking for the fewest us)
  bench_steer.py report CSV     medians, ranges and each repetition's
                                ratios, against the issue's goals
"""
import csv
import json
import statistics
import sys
from collections import defaultdict


def load(path):
    with open(path) as f:
        return json.load(f)


def cmd_rate(path):
    print(int(load(path)["answered_per_s"]))


def cmd_offered(path):
    print(int(load(path)["sent_per_s"]))


def cmd_mix(path):
    d = load(path)
    classes = sorted(d["mix"], key=lambda c: c["us"])
    s, lg = classes[0]["latency_us"], classes[-1]["latency_us"]
    print("%d,%.1f,%.1f,%.1f,%.1f" % (d["answered_per_s"], s["p50"],
                                      s["p99"], lg["p50"], lg["p99"]))


def med(xs):
    return "%.1f [%.1f-%.1f]" % (statistics.median(xs), min(xs), max(xs))


def cmd_report(path):
    rows = list(csv.DictReader(open(path)))
    by = defaultdict(dict)  # (rep, test) -> policy -> row
    for r in rows:
        by[(r["rep"], r["test"])][r["policy"] + "@" + r["offered"]] = r
    bi = [v for (rep, t), v in sorted(by.items()) if t == "bimodal"]
    if bi:
        print("bimodal mix 90:6us,10:60us at the same offered rate:")
        cols = defaultdict(lambda: defaultdict(list))
        ratios = []
        for v in bi:
            pol = {k.split("@")[0]: r for k, r in v.items()}
            for p, r in pol.items():
                for c in ("answered_per_s", "short_p50_us", "short_p99_us",
                          "long_p50_us", "long_p99_us"):
                    cols[p][c].append(float(r[c]))
            rr = pol.get("round_robin")
            ratios.append({
                p: (float(rr["short_p99_us"]) / float(r["short_p99_us"]),
                    float(r["long_p99_us"]) / float(rr["long_p99_us"]))
                for p, r in pol.items() if rr and p != "round_robin"})
        for p, c in cols.items():
            print("  %-13s answered/s %s  short p50 %s p99 %s  long p50 %s "
                  "p99 %s (us)" % (p, med(c["answered_per_s"]),
                                   med(c["short_p50_us"]),
                                   med(c["short_p99_us"]),
                                   med(c["long_p50_us"]),
                                   med(c["long_p99_us"])))
        for p in sorted({p for r in ratios for p in r}):
            print("  short p99 round_robin / %s per rep: %s (goal >= 3)" % (
                p, " ".join("%.2f" % r[p][0] for r in ratios if p in r)))
            print("  long p99 %s / round_robin per rep: %s (goal <= 1.5)" % (
                p, " ".join("%.2f" % r[p][1] for r in ratios if p in r)))
    uni = [v for (rep, t), v in sorted(by.items()) if t == "uniform"]
    if uni:
        print("uniform: reverse 64 B at the XDP engine's max rate:")
        cols = defaultdict(list)
        ratios = []
        for v in uni:
            pol = {k.split("@")[0]: float(r["answered_per_s"])
                   for k, r in v.items()}
            for p, x in pol.items():
                cols[p].append(x)
            if "round_robin" in pol and "least_loaded" in pol:
                ratios.append(pol["least_loaded"] / pol["round_robin"])
        for p, xs in cols.items():
            print("  %-13s answers/s %s" % (p, med(xs)))
        if ratios:
            print("  least_loaded / round_robin per rep: %s (goal >= 0.97)"
                  % " ".join("%.2f" % x for x in ratios))
    cost = defaultdict(list)
    for r in rows:
        if r["test"] == "cost":
            cost[r["policy"]].append(float(r["answered_per_s"]))
    if cost:
        print("cost: the XDP program's ns per request (BPF_PROG_TEST_RUN):")
        base = statistics.median(cost.get("round_robin-t2", [0])) or 1
        for p, xs in cost.items():
            print("  %-24s %s ns (%+.0f ns on round_robin-t2)" % (
                p, med(xs), statistics.median(xs) - base))
    peaks = sorted({(r["policy"], r["rep"]) for r in rows
                    if r["test"] == "overload-peak"})
    for prio, rep in peaks:
        rr = [r for r in rows if r["rep"] == rep and r["policy"] == prio and
              r["test"].startswith(("overload", "hog"))]
        peak = float([r for r in rr if r["test"] == "overload-peak"][0]
                     ["answered_per_s"])
        curve = "; ".join(
            "%s offered %s/s: %s/s answered (%.2fx)%s" % (
                r["test"].replace("overload", "sweep").replace("sweep-", ""),
                r["offered"], r["answered_per_s"],
                float(r["answered_per_s"]) / peak if peak else 0,
                ", %s/s dropped as overload" % r["overload_drops_per_s"]
                if r["overload_drops_per_s"] not in ("", "0") else "") +
            (", p99 wait %s us, service %s us" % (
                r["short_p99_us"], r["long_p99_us"])
             if r["short_p99_us"] else "")
            for r in rr if r["test"] != "overload-peak")
        print("overload, %s, rep %s, peak %d/s: %s" % (
            prio, rep, peak, curve))
    cmd_spread(rows)


def cmd_spread(rows):
    peaks = defaultdict(dict)  # rep -> list -> (rate, us per reply)
    for r in rows:
        if r["test"] == "spread-peak":
            peaks[r["rep"]][r["policy"]] = (
                float(r["answered_per_s"]),
                float(r["overload_drops_per_s"] or 0))
    if not peaks:
        return
    print("spread: hash in XDP on -q 1, the peak answered rate over the "
          "offered sweep, and the server's CPU us per reply there:")
    cols = defaultdict(lambda: ([], []))
    ratios = []
    for rep, v in sorted(peaks.items()):
        for p, (rate, us) in v.items():
            cols[p][0].append(rate)
            cols[p][1].append(us)
        if "off" in v and len(v) > 1:
            other = [p for p in v if p != "off"][0]
            ratios.append(v[other][0] / v["off"][0] if v["off"][0] else 0)
    for p, (rates, uss) in cols.items():
        print("  xdp_spread %-5s peak %s/s, %s us per reply" % (
            p, med(rates), med(uss)))
    if ratios:
        print("  spread / off per rep: %s (goal >= 1.6)" %
              " ".join("%.2f" % x for x in ratios))


def main():
    if len(sys.argv) != 3 or sys.argv[1] not in (
            "rate", "offered", "mix", "report"):
        sys.exit(__doc__)
    globals()["cmd_" + sys.argv[1]](sys.argv[2])


if __name__ == "__main__":
    main()
