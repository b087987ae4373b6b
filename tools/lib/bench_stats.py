#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/bench's numbers: its raw rows (results.csv) grouped by server,
test and size, the median and spread of each metric, and summary.csv.
Used by bench_report.py and bench_plots.py."""
import csv
import os
import statistics
from collections import defaultdict

ORDER = ["sockserver-simple", "sockserver", "sockserver-busy", "rr-q1t1",
         "rr-q1t1-busy", "rr-q1t1-cell", "xskfloor", "rr-xdp", "rr-cache", "reflector"]
NUMS = ["sent_per_s", "answered_per_s", "wrong", "timeouts", "p50_us",
        "p90_us", "p99_us", "p999_us", "max_us", "cpu_us",
        "queue_delay_p50_us", "queue_delay_p99_us", "service_p50_us",
        "service_p99_us"]


def load(out, hz):
    """The rows of OUT/results.csv, each with its server CPU per reply
    (cpu_us, the cpu tests only) from clock ticks at HZ per second."""
    with open(os.path.join(out, "results.csv"), encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    for r in rows:  # server CPU per reply, in microseconds (cpu test)
        r["cpu_us"] = ""
        if r["test"].startswith("cpu") and float(r["answered"]) > 0:
            r["cpu_us"] = "%.3f" % (float(r["srv_busy_ticks"]) / hz * 1e6 /
                                    float(r["answered"]))
    return rows


def group(rows):
    """Every metric's values by (server, test, size)."""
    groups = defaultdict(lambda: defaultdict(list))
    for r in rows:
        key = (r["server"], r["test"], int(r["size"]))
        for k in NUMS:
            if r.get(k, "") not in ("", None):
                groups[key][k].append(float(r[k]))
    return groups


class Stats:
    """Median, min, max and count of a metric in a cell, and the
    forms the report prints them in."""

    def __init__(self, groups):
        self.groups = groups

    def stat(self, key, k):
        """(median, min, max, n) of metric K in cell KEY, or None."""
        v = self.groups.get(key, {}).get(k, [])
        if not v:
            return None
        return statistics.median(v), min(v), max(v), len(v)

    def kpps(self, key, k="answered_per_s"):
        """A rate in thousands with its spread, for a table."""
        s = self.stat(key, k)
        if not s:
            return "—"
        return "%.0f k [%.0f–%.0f]" % (s[0] / 1e3, s[1] / 1e3, s[2] / 1e3)

    def us(self, key, k):
        """A time in microseconds with its spread, for a table."""
        s = self.stat(key, k)
        if not s:
            return "—"
        if k == "cpu_us":
            return "%.2f [%.2f–%.2f]" % s[:3]
        return "%.1f [%.1f–%.1f]" % s[:3]

    def med(self, key, k):
        """The median alone, or None."""
        s = self.stat(key, k)
        return s[0] if s else None

    def has(self, server):
        """Whether any cell was measured for SERVER."""
        return any(g[0] == server for g in self.groups)

    def write_summary(self, out):
        """OUT/summary.csv: one row per cell and metric."""
        with open(os.path.join(out, "summary.csv"), "w",
                  encoding="utf-8") as f:
            w = csv.writer(f)
            w.writerow(["server", "test", "size", "metric", "median", "min",
                        "max", "n"])
            for key in sorted(self.groups):
                for k in NUMS:
                    s = self.stat(key, k)
                    if s:
                        w.writerow(list(key) + [k, "%.2f" % s[0],
                                                "%.2f" % s[1], "%.2f" % s[2],
                                                s[3]])
