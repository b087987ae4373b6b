#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Frame accounting from reqrouter's metrics file, for the hardening tests.

  hardening_metrics.py at-rest FILE [--timeout S] [--max-kernel N]

Waits (at most S seconds) until every queue's UMEM frames are back where an
idle invoker keeps them: reqrouter_umem_frames says rx, worker, tx and
completion are 0, fill + kernel + stock (the frames workers keep for
gathers' copies) is the UMEM size (4096) and kernel is at most N (default
0: every frame in the fill ring or a stock). Only a metrics write
made after the call started counts, so the picture is a fresh one. Prints
one line per queue; exit status 0 if every queue was at rest.

  hardening_metrics.py watch FILE --seconds S --max-worker N

Reads every metrics write for S seconds (say, under load) and checks each
queue's frames in every one: all states reported, none negative, never
more than N in a worker's hands (one batch per socket), and no fewer than
the UMEM size in all (a frame may not vanish). Under load the states can
overlap by what the kernel took from a ring but has not yet published, so
the total is not required to be exact there; at rest it is (at-rest).
Prints the largest count seen in each state. Exit status 0 if all held.

  hardening_metrics.py get FILE NAME [SUBSTRING...]

Prints the sum of NAME's samples whose labels contain every SUBSTRING.
"""
import argparse
import os
import re
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "lib"))
# pylint: disable=wrong-import-position
from promtext import msum, samples  # noqa: E402
from promtext import read_text as read  # noqa: E402

UMEM_FRAMES = 4096
STATES = ("fill", "rx", "worker", "stock", "tx", "completion", "kernel")
SAMPLE = re.compile(r'^reqrouter_umem_frames\{queue="(\d+)",state="(\w+)"\}'
                    r' (\d+)$')


def frames(text):
    """{queue: {state: count}} from the metrics text."""
    out = {}
    for line in text.splitlines():
        m = SAMPLE.match(line)
        if m:
            out.setdefault(int(m.group(1)), {})[m.group(2)] = int(m.group(3))
    return out


def problems(q, st, max_kernel):
    errs = []
    if set(st) != set(STATES):
        return ["states %s" % sorted(st)]
    for s in ("rx", "worker", "tx", "completion"):
        if st[s]:
            errs.append("%s=%d" % (s, st[s]))
    if sum(st.values()) != UMEM_FRAMES:
        errs.append("states add up to %d" % sum(st.values()))
    if st["fill"] + st["kernel"] + st["stock"] != UMEM_FRAMES:
        errs.append("fill+kernel+stock=%d" % (
            st["fill"] + st["kernel"] + st["stock"]))
    if st["kernel"] > max_kernel:
        errs.append("kernel=%d > %d" % (st["kernel"], max_kernel))
    return errs


def at_rest(a):
    start = time.time()
    end = time.monotonic() + a.timeout
    last = None
    while True:
        try:
            fresh = os.stat(a.file).st_mtime > start
        except FileNotFoundError:
            fresh = False
        if fresh:
            last = frames(read(a.file))
            if last and not any(problems(q, st, a.max_kernel)
                                for q, st in last.items()):
                break
        if time.monotonic() >= end:
            break
        time.sleep(0.2)
    if not last:
        print("no reqrouter_umem_frames in %s" % a.file)
        return 1
    bad = 0
    for q in sorted(last):
        st = last[q]
        errs = problems(q, st, a.max_kernel)
        bad += bool(errs)
        print("queue %d: %s%s" % (q, " ".join("%s=%d" % (s, st.get(s, -1))
                                              for s in STATES),
                                  "  <- " + ", ".join(errs) if errs else ""))
    return 1 if bad else 0


def watch(a):
    end = time.monotonic() + a.seconds
    seen = {s: 0 for s in STATES}
    mtime, writes, bad = 0, 0, 0
    while time.monotonic() < end:
        try:
            m = os.stat(a.file).st_mtime
        except FileNotFoundError:
            m = 0
        if m and m != mtime:
            mtime = m
            fr = frames(read(a.file))
            if fr:
                writes += 1
            for q, st in fr.items():
                for s in STATES:
                    seen[s] = max(seen[s], st.get(s, 0))
                if set(st) != set(STATES) or \
                        min(st.values()) < 0 or \
                        st["worker"] > a.max_worker or \
                        sum(st.values()) < UMEM_FRAMES:
                    bad += 1
                    print("queue %d: states add up to %d (at least %d), "
                          "worker at most %d: %s" % (
                              q, sum(st.values()), UMEM_FRAMES,
                              a.max_worker,
                              " ".join("%s=%d" % (s, st.get(s, -1))
                                       for s in STATES)))
        time.sleep(0.05)
    print("%d metrics writes, most frames seen in each state: %s" % (
        writes, " ".join("%s=%d" % (s, seen[s]) for s in STATES)))
    return 1 if bad or not writes else 0


def get(a):
    """Print the exact sum of a metric's samples."""
    print(msum(samples(read(a.file)), a.name, *a.subs))
    return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    r = sub.add_parser("at-rest")
    r.add_argument("file")
    r.add_argument("--timeout", type=float, default=10)
    r.add_argument("--max-kernel", type=int, default=0)
    w = sub.add_parser("watch")
    w.add_argument("file")
    w.add_argument("--seconds", type=float, required=True)
    w.add_argument("--max-worker", type=int, required=True)
    g = sub.add_parser("get")
    g.add_argument("file")
    g.add_argument("name")
    g.add_argument("subs", nargs="*")
    a = ap.parse_args()
    return {"at-rest": at_rest, "watch": watch, "get": get}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
