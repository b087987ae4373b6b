#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Head-of-line blocking, as a client sees it.

Sends SLOW requests (each makes the function spin, e.g. faulty's "slow",
300 ms), waits --settle ms for them to be taken, then QUICK requests one
every --gap ms from another socket, each unique, and waits for every reply
(at most --wait s after the last send). A quick request answered more than
--late ms after it was sent waited behind a slow call. Prints one JSON
line: {"slow": answered, "quick": sent, "answered": n, "late": n,
"max_ms": m, "wrong": n}.

  hol_probe.py ADDR PORT [--slow-payload slow] [--slow 1] [--quick 40]
               [--gap 4] [--late 150] [--settle 30] [--wait 2]
"""
import argparse
import json
import select
import socket
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("addr")
    ap.add_argument("port", type=int)
    ap.add_argument("--slow-payload", default="slow")
    ap.add_argument("--slow", type=int, default=1)
    ap.add_argument("--quick", type=int, default=40)
    ap.add_argument("--gap", type=float, default=4.0, help="ms")
    ap.add_argument("--late", type=float, default=150.0, help="ms")
    ap.add_argument("--settle", type=float, default=30.0, help="ms")
    ap.add_argument("--wait", type=float, default=2.0, help="s")
    a = ap.parse_args()

    fam = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    dst = (a.addr, a.port)
    slow = socket.socket(fam, socket.SOCK_DGRAM)
    quick = socket.socket(fam, socket.SOCK_DGRAM)
    for _ in range(a.slow):
        slow.sendto(a.slow_payload.encode(), dst)
    time.sleep(a.settle / 1000)

    sent = {}
    res = {"slow": 0, "quick": a.quick, "answered": 0, "late": 0,
           "max_ms": 0.0, "wrong": 0}

    def take(sock, now):
        data, src = sock.recvfrom(2048)
        if src[:2] != dst:
            res["wrong"] += 1
        elif sock is slow:
            if data == a.slow_payload.encode():
                res["slow"] += 1
            else:
                res["wrong"] += 1
        elif data in sent and sent[data] is not None:
            ms = (now - sent[data]) * 1000
            sent[data] = None
            res["answered"] += 1
            res["max_ms"] = max(res["max_ms"], round(ms, 1))
            if ms > a.late:
                res["late"] += 1
        else:
            res["wrong"] += 1

    socks = [slow, quick]
    nxt = time.monotonic()
    i = 0
    deadline = None
    while True:
        now = time.monotonic()
        if i < a.quick and now >= nxt:
            p = b"quick %d" % i
            sent[p] = now
            quick.sendto(p, dst)
            i += 1
            nxt += a.gap / 1000
            if i == a.quick:
                deadline = now + a.wait
            continue
        if deadline and (now >= deadline or (
                res["answered"] == a.quick and res["slow"] == a.slow)):
            break
        timeout = (nxt - now) if i < a.quick else (deadline - now)
        r, _, _ = select.select(socks, [], [], max(timeout, 0))
        now = time.monotonic()
        for s in r:
            take(s, now)
    print(json.dumps(res))


if __name__ == "__main__":
    main()
