#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/soak's analysis: who starved in a window that lost frames, and
the run's figures as JSON.

soak_report.py sched FROM TO PID THREADS SCHED-LOG
    Per reqrouter thread, from the samples ("time tid run_ns wait_ns", one
    a thread a second) between FROM and TO (epoch seconds): how long it ran
    on average, the second in which it ran least and how long it waited
    for a CPU in it, and the longest wait in any second. A worker that ran
    for nothing while it waited was starved; one that neither ran nor
    waited was blocked, stopped or asleep with work queued. Workers are
    created queue by queue, thread by thread, so the thread ids in order
    after the main thread's are q0/t0, q0/t1, q1/t0...

soak_report.py json WINDOWS-TSV RRLOAD-JSON OUT KEY=VALUE...
    The figures: tools/soak's settings and totals (KEY=VALUE), rrload's
    summary and one record per window, written to OUT.
"""
import json
import sys


class Thread:
    """One thread's samples, folded second by second."""

    def __init__(self, t, run, wait):
        self.last = (t, run, wait)
        self.total = 0.0
        self.span = 0.0
        self.least = None  # (ran, waited, span) of the leanest second
        self.most = 0.0

    def add(self, t, run, wait):
        """Fold in the next sample."""
        r = run - self.last[1]
        wt = wait - self.last[2]
        dt = t - self.last[0]
        self.total += r
        self.span += dt
        if self.least is None or r < self.least[0]:
            self.least = (r, wt, dt)
        if wt > self.most:
            self.most = wt
        self.last = (t, run, wait)


def read_threads(path, t_from, t_to):
    """The threads seen in the samples between T_FROM - 1 and T_TO."""
    threads = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            fields = line.split()
            if len(fields) < 4:
                continue
            t, run, wait = float(fields[0]), float(fields[2]), float(fields[3])
            if t < t_from - 1 or t > t_to:
                continue
            tid = fields[1]
            if tid in threads:
                threads[tid].add(t, run, wait)
            else:
                threads[tid] = Thread(t, run, wait)
    return threads


def sched(t_from, t_to, pid, nthreads, path):
    """Print one line per thread that has two samples or more."""
    threads = read_threads(path, float(t_from), float(t_to))
    nthreads = int(nthreads)
    k = 0
    for tid in sorted(threads, key=int):
        if tid == pid:
            name = "main"
        else:
            name = "q%d/t%d" % (k // nthreads, k % nthreads)
            k += 1
        th = threads[tid]
        if th.least is None:
            continue
        ran, waited, span = th.least
        print("        %-6s (tid %s) ran %3.0f ms/s on average; least in a"
              " second: ran %4.0f ms, waited %4.0f ms for a CPU; longest"
              " wait in a second: %4.0f ms"
              % (name, tid, th.total / 1e6 / (th.span or 1e-9),
                 ran / 1e6 / (span or 1e-9), waited / 1e6 / (span or 1e-9),
                 th.most / 1e6))


def windows(path):
    """The per-window records tools/soak wrote, tab-separated."""
    win = []
    with open(path, encoding="utf-8") as f:
        for line in f:
            c = line.rstrip("\n").split("\t")
            win.append({"window": int(c[0]), "rx": int(c[1]),
                        "tx": int(c[2]), "lost": int(c[3]),
                        "sockets_busy": int(c[4]), "sockets": int(c[5]),
                        "rss_kib": int(c[6] or 0), "fds": int(c[7] or 0),
                        "idle_sockets": [s for s in c[8].split(",") if s],
                        "cpu_percent": int(c[9]),
                        "runq_wait_ms": int(c[10]),
                        "loadavg_1m": float(c[11])})
    return win


def figures(tsv, load_path, out, pairs):
    """Write the run's figures as JSON to OUT."""
    v = dict(p.split("=", 1) for p in pairs)

    def n(key):
        return int(v.get(key) or 0)

    try:
        with open(load_path, encoding="utf-8") as f:
            load = json.load(f)
    except (OSError, ValueError):
        load = None
    doc = {
        "duration_s": n("duration"), "window_s": n("window"),
        "rate_target": n("rate"), "conns": n("conns"), "size": v["size"],
        "ports": [1232, 7], "queues": n("queues"), "threads": n("threads"),
        "windows": n("windows"), "windows_passed": n("windows_passed"),
        "rrload": load,
        "server_rx": n("rx"), "server_tx": n("tx"), "server_lost": n("lost"),
        "frames_accounted": bool(n("frames_ok")),
        "umem_frames_per_queue": [int(x) for x in v["umem"].split(",") if x],
        "rss_kib": {"idle": n("rss_idle"), "first": n("rss_first"),
                    "last": n("rss_last"), "max": n("rss_max")},
        "rss_slack_kib": n("rss_slack"),
        "reqrouter_exit": v["exit"],
        "checks": n("checks"), "failed": n("failed"),
        "pass": n("failed") == 0,
        "per_window": windows(tsv),
    }
    with open(out, "w", encoding="utf-8") as f:
        json.dump(doc, f, indent=2)
        f.write("\n")


if __name__ == "__main__":
    if len(sys.argv) == 7 and sys.argv[1] == "sched":
        sched(*sys.argv[2:])
    elif len(sys.argv) >= 5 and sys.argv[1] == "json":
        figures(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        sys.exit(__doc__.strip())
