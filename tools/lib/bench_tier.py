# SPDX-License-Identifier: GPL-2.0
"""tools/bench-tier's report: the in-kernel tier against the reflector.

Usage: bench_tier.py TIER_CSV HEADER CLK_TCK

Reads the slices tools/bench-tier ran (one CSV row each) and prints, in
Markdown, per placement and size: each repetition's ratio, the median of
its slices' ratios (rr-xdp's rate in slice k over the reflector's in the
same slice, run next to it: a burst of the VM's noise in one slice
moves one ratio, not the repetition's); the median and the worst
repetition against issue 48's 0.9; each server's rate; and, with the
receive work on the server's CPU (threaded), the server CPU's busy time
per reply at that rate. The server measured is the one that is not
"reflector": rr-xdp, or with --control reflector-b, a second reflector.
"""
import collections
import csv
import statistics
import sys

TARGET = 0.9


def main():
    path, header, clk_tck = sys.argv[1], sys.argv[2], int(sys.argv[3])
    # (placement, size) -> rep -> server -> [answered, seconds, busy ticks]
    cells = collections.OrderedDict()
    # (placement, size) -> rep -> slice -> server -> replies/s
    slices = collections.defaultdict(
        lambda: collections.defaultdict(lambda: collections.defaultdict(dict)))
    wrong = 0
    for r in csv.DictReader(open(path)):
        key = (r["placement"], int(r["size"]))
        per = cells.setdefault(key, collections.OrderedDict())
        srv = per.setdefault(int(r["rep"]), {}).setdefault(
            r["server"], [0, 0.0, 0])
        answered = int(r["answered"])
        rate = float(r["answered_per_s"])
        slices[key][int(r["rep"])][int(r["slice"])][r["server"]] = rate
        srv[0] += answered
        srv[1] += answered / rate if rate > 0 else 0.0
        srv[2] += int(r["srv_busy_ticks"])
        wrong += int(r["wrong"])

    names = {srv for reps in cells.values() for servers in reps.values()
             for srv in servers}
    names.discard("reflector")
    me = names.pop() if names else "rr-xdp"
    out = []
    a = out.append
    for line in header.splitlines():
        a("    " + line)
    a("")
    a("| placement, size | %s / reflector per repetition | median |"
      " worst | >= %.1fx every repetition | %s k/s | reflector k/s |"
      " CPU per reply, %s / reflector |" % (me, TARGET, me, me))
    a("|---|---|---|---|---|---|---|---|")
    met = True
    for (where, size), reps in cells.items():
        ratios, rate = [], {me: [], "reflector": []}
        cpu = {me: [0, 0], "reflector": [0, 0]}
        for rep, servers in reps.items():
            rr, ref = servers.get(me), servers.get("reflector")
            pairs = [p[me] / p["reflector"]
                     for p in slices[(where, size)][rep].values()
                     if p.get("reflector") and me in p]
            ratios.append(statistics.median(pairs) if pairs else 0.0)
            if not rr or not ref or not rr[1] or not ref[1]:
                continue
            for name, s in ((me, rr), ("reflector", ref)):
                rate[name].append(s[0] / s[1] / 1e3)
                cpu[name][0] += s[2]
                cpu[name][1] += s[0]
        worst = min(ratios)
        ok = worst >= TARGET
        met = met and ok
        if where == "threaded" and cpu[me][1] and cpu["reflector"][1]:
            us = ["%.2f" % (1e6 * cpu[n][0] / clk_tck / cpu[n][1])
                  for n in (me, "reflector")]
            cpu_text = "%s / %s us" % tuple(us)
        else:
            cpu_text = "— (on the client's CPU)"
        a("| %s, %d B | %s | %.3f | %.3f | %s | %s | %s | %s |" % (
            where, size, " ".join("%.3f" % x for x in ratios),
            statistics.median(ratios), worst, "yes" if ok else "no",
            "%.0f" % statistics.median(rate[me])
            if rate[me] else "—",
            "%.0f" % statistics.median(rate["reflector"])
            if rate["reflector"] else "—", cpu_text))
    a("")
    a("Wrong replies: %d (the XDP engine checks each reply's length and 16"
      " bytes at each end). Target %s." % (
          wrong, "met" if met and not wrong else "not met"))
    print("\n".join(out))


if __name__ == "__main__":
    main()
