#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Open-loop UDP requests from several source addresses, in fixed shares.

  skewed_load.py --dst ADDR --port PORT --rate N --duration S
                 --src ADDR:WEIGHT [--src ADDR:WEIGHT ...]

Each source is a kernel UDP socket bound to ADDR (an address of the
client's interface; IPv6 sources send to --dst6). Requests go out in a
fixed interleaving that gives each source its WEIGHT's share of --rate
requests/s in all, for --duration seconds; replies are read and thrown
away. Prints one JSON object: the requests sent per source, the total and
the seconds it took.
"""
import argparse
import json
import socket
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dst", required=True)
    ap.add_argument("--dst6")
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--rate", type=float, default=5000)
    ap.add_argument("--duration", type=float, default=4)
    ap.add_argument("--src", action="append", required=True)
    a = ap.parse_args()

    socks, weights = [], []
    for spec in a.src:
        addr, weight = spec.rsplit(":", 1)
        v6 = ":" in addr
        s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET,
                          socket.SOCK_DGRAM)
        s.bind((addr, 0))
        s.setblocking(False)
        socks.append((addr, s, (a.dst6 if v6 else a.dst, a.port)))
        weights.append(int(weight))
    # One round sends each source its weight's worth, spread out.
    order = []
    for i, w in enumerate(weights):
        order += [(k / w, i) for k in range(w)]
    order = [i for _, i in sorted(order)]
    sent = [0] * len(socks)
    start = time.monotonic()
    end = start + a.duration
    n = 0
    payload = b"who is calling?"
    while True:
        now = time.monotonic()
        if now >= end:
            break
        due = int((now - start) * a.rate)
        while n < due:
            i = order[n % len(order)]
            addr, s, dst = socks[i]
            try:
                s.sendto(payload, dst)
                sent[i] += 1
            except BlockingIOError:
                pass
            n += 1
        for _, s, _ in socks:
            try:
                while True:
                    s.recv(2048)
            except BlockingIOError:
                pass
        time.sleep(0.001)
    print(json.dumps({
        "sent": {socks[i][0]: sent[i] for i in range(len(socks))},
        "total": sum(sent),
        "seconds": round(time.monotonic() - start, 3),
    }))


if __name__ == "__main__":
    main()
