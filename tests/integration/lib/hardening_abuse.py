#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Requests from a chosen source address, for the allow-list tests.

  hardening_abuse.py --src ADDR --dst ADDR --port PORT [--func reverse|echo]
                     [-n N] [--expect all|none] [--timeout S]

Sends N requests over a kernel UDP socket bound to ADDR (an address of the
client's interface), with distinct random payloads, and counts the correct
replies (reverse or echo of the payload, from DST:PORT). --expect all:
exit 0 only if every request was answered correctly; --expect none: exit 0
only if nothing at all came back within the timeout.
"""
import argparse
import ipaddress
import os
import select
import socket
import sys
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--src", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--func", choices=("reverse", "echo"), default="reverse")
    ap.add_argument("-n", type=int, default=20)
    ap.add_argument("--expect", choices=("all", "none"), default="all")
    ap.add_argument("--timeout", type=float, default=2.0)
    a = ap.parse_args()

    fam = socket.AF_INET6 if ":" in a.dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.bind((a.src, 0))
    s.setblocking(False)
    want = {}
    for i in range(a.n):
        p = b"%d:" % i + os.urandom(16 + i)
        want[p[::-1] if a.func == "reverse" else p] = True
        s.sendto(p, (a.dst, a.port))
    good = other = 0
    dst = ipaddress.ip_address(a.dst)
    end = time.monotonic() + a.timeout
    while time.monotonic() < end and (a.expect == "none" or want):
        r, _, _ = select.select([s], [], [], max(0, end - time.monotonic()))
        if not r:
            continue
        try:
            data, src = s.recvfrom(65536)
        except BlockingIOError:
            continue
        if ipaddress.ip_address(src[0].split("%")[0]) == dst and \
                src[1] == a.port and want.pop(data, False):
            good += 1
        else:
            other += 1
    print("%d requests from %s to [%s]:%d (%s): %d answered correctly, "
          "%d other datagrams"
          % (a.n, a.src, a.dst, a.port, a.func, good, other))
    if a.expect == "all":
        return 0 if good == a.n and not other else 1
    return 0 if good == 0 and other == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
