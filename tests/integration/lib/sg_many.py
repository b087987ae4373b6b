# SPDX-License-Identifier: GPL-2.0
"""Gather targets by the thousand (tests/integration/gather_abuse.sh).

sg_responder.py binds a socket per address; a group of a thousand
targets would pass select()'s limit. Here one wildcard socket per family
takes every message to PORT on any address of the namespace (a local
route such as `ip route add local 198.19.0.0/24 dev lo` gives it a
whole range), counts it, and unless --silent answers it from the address
it was sent to (IP_PKTINFO, IPV6_PKTINFO) with its 16-byte header and
--value.

Prints "ready" once bound. Every 50 ms, and at the end, rewrites
--counts with one line per family, "v4 MESSAGES BYTES" and "v6 MESSAGES
BYTES" (BYTES: the UDP payloads), for the test to read at any time.
Runs at most --seconds; SIGTERM ends it at once, exit 0.
"""

import argparse
import os
import select
import signal
import socket
import struct
import sys
import time

HDR_LEN = 16
IP_PKTINFO = 8  # <linux/in.h>; the socket module lacks it on older Pythons


class Stop(Exception):
    pass


def on_term(signum, frame):
    raise Stop()


def wildcard(family, port):
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    if family == socket.AF_INET6:
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
        s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_RECVPKTINFO, 1)
        s.bind(("::", port))
    else:
        s.setsockopt(socket.IPPROTO_IP, IP_PKTINFO, 1)
        s.bind(("0.0.0.0", port))
    s.setblocking(False)
    return s


def answer_anc(family, anc):
    """The ancillary data that sends the answer from the address the
    message came to, or None."""
    for level, kind, data in anc:
        if family == socket.AF_INET6 and level == socket.IPPROTO_IPV6 \
                and kind == socket.IPV6_PKTINFO:
            return [(level, kind, data)]
        if family == socket.AF_INET and level == socket.IPPROTO_IP \
                and kind == IP_PKTINFO:
            # struct in_pktinfo: ifindex, spec_dst, addr; answer from addr.
            dst = data[8:12]
            return [(level, kind, struct.pack("I4s4s", 0, dst, dst))]
    return None


def write_counts(path, counts):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        for name in ("v4", "v6"):
            f.write("%s %d %d\n" % (name, counts[name][0], counts[name][1]))
    os.replace(tmp, path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--value", default="1")
    ap.add_argument("--silent", action="store_true")
    ap.add_argument("--counts", required=True)
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    try:
        socks = {wildcard(socket.AF_INET, args.port): "v4",
                 wildcard(socket.AF_INET6, args.port): "v6"}
    except OSError as e:
        print("cannot bind: %s" % e, file=sys.stderr)
        return 1
    counts = {"v4": [0, 0], "v6": [0, 0]}
    value = args.value.encode()
    write_counts(args.counts, counts)
    print("ready", flush=True)
    end = time.monotonic() + args.seconds
    next_write = 0.0
    try:
        while True:
            now = time.monotonic()
            if now >= next_write:
                write_counts(args.counts, counts)
                next_write = now + 0.05
            if now >= end:
                break
            ready, _, _ = select.select(list(socks), [], [],
                                        min(end - now, 0.05))
            for s in ready:
                name = socks[s]
                fam = s.family
                for _ in range(256):
                    try:
                        data, anc, _, peer = s.recvmsg(4096, 256)
                    except BlockingIOError:
                        break
                    counts[name][0] += 1
                    counts[name][1] += len(data)
                    if args.silent or len(data) < HDR_LEN:
                        continue
                    out = answer_anc(fam, anc)
                    if out is None:
                        continue
                    try:
                        s.sendmsg([data[:HDR_LEN] + value], out, 0, peer)
                    except OSError:
                        pass
    except Stop:
        pass
    finally:
        write_counts(args.counts, counts)
        for s in socks:
            s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
