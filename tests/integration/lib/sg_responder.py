# SPDX-License-Identifier: GPL-2.0
"""Targets of a gather for the tests (tests/integration/gather.sh).

Binds one UDP socket per address (a socket bound to 0.0.0.0 would answer
from whatever address the kernel picks, not the one a target is known
by) and answers each message the way its address was told to:

    ADDR=echo            the message back, unchanged (header + payload)
    ADDR=value:N         the 16-byte header, then "N"
    ADDR=silent          nothing
    ADDR=twice           the answer, sent twice
    ADDR=late:MS         the answer, MS milliseconds later
    ADDR=from:OTHER      the answer from OTHER (an address of this
                         namespace, bound by a socket of its own)

Behaviours combine with '+': "twice+value:3", "late:200+value:4". The
answer is the echo unless value:N is given.

Prints "ready" once every socket is bound, then a line per message
received: "got ADDR gather=G gen=N target=I flags=F len=L" (the header's
fields, L the payload's length after the header), flushed, for the test
to count. Runs at most --seconds; SIGTERM ends it at once, exit 0.
"""

import argparse
import heapq
import select
import signal
import socket
import struct
import sys
import time

HDR = struct.Struct("!IIIHH")
MAGIC = 0x72725347


class Stop(Exception):
    pass


def on_term(signum, frame):
    raise Stop()


def parse_behaviour(spec):
    """'twice+value:3' -> dict of the behaviour's parts."""
    b = {"silent": False, "twice": False, "late_ms": 0, "value": None,
         "from": None}
    for part in spec.split("+"):
        kind, _, arg = part.partition(":")
        if kind == "echo" and not arg:
            pass
        elif kind == "silent" and not arg:
            b["silent"] = True
        elif kind == "twice" and not arg:
            b["twice"] = True
        elif kind == "late" and arg.isdigit():
            b["late_ms"] = int(arg)
        elif kind == "value" and arg.isdigit():
            b["value"] = arg.encode()
        elif kind == "from" and arg:
            b["from"] = arg
        else:
            raise ValueError("bad behaviour %r" % part)
    return b


def bind(addr, port):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 20)
    s.bind((addr, port))
    return s


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--port", type=int, default=7)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("targets", nargs="+", metavar="ADDR=BEHAVIOUR")
    args = ap.parse_args()

    signal.signal(signal.SIGTERM, on_term)
    signal.signal(signal.SIGINT, on_term)
    behaviour = {}
    socks = {}  # address -> socket
    for t in args.targets:
        addr, sep, spec = t.partition("=")
        if not sep:
            ap.error("want ADDR=BEHAVIOUR, not %r" % t)
        try:
            behaviour[addr] = parse_behaviour(spec)
        except ValueError as e:
            ap.error("%s: %s" % (addr, e))
    try:
        for addr in behaviour:
            socks[addr] = bind(addr, args.port)
        for b in behaviour.values():
            if b["from"] and b["from"] not in socks:
                socks[b["from"]] = bind(b["from"], args.port)
    except OSError as e:
        print("cannot bind: %s" % e, file=sys.stderr)
        return 1
    by_fd = {s.fileno(): a for a, s in socks.items()}
    print("ready", flush=True)

    later = []  # (when, seq, socket, data, peer)
    seq = 0
    end = time.monotonic() + args.seconds
    try:
        while True:
            now = time.monotonic()
            while later and later[0][0] <= now:
                _, _, s, data, peer = heapq.heappop(later)
                s.sendto(data, peer)
            if now >= end:
                break
            wait = min(end - now, 0.5)
            if later:
                wait = min(wait, max(later[0][0] - now, 0))
            ready, _, _ = select.select(list(socks.values()), [], [], wait)
            for s in ready:
                data, peer = s.recvfrom(65535)
                addr = by_fd[s.fileno()]
                b = behaviour.get(addr)
                if len(data) >= HDR.size:
                    magic, g, gen, tgt, flags = HDR.unpack_from(data)
                    print("got %s gather=%d gen=%d target=%d flags=%d len=%d"
                          % (addr, g, gen, tgt, flags, len(data) - HDR.size)
                          + ("" if magic == MAGIC else " bad-magic"),
                          flush=True)
                else:
                    print("got %s short len=%d" % (addr, len(data)),
                          flush=True)
                if b is None or b["silent"]:
                    continue
                reply = data if b["value"] is None else \
                    data[:HDR.size] + b["value"]
                out = socks[b["from"]] if b["from"] else s
                for _ in range(2 if b["twice"] else 1):
                    if b["late_ms"]:
                        seq += 1
                        heapq.heappush(later, (time.monotonic() +
                                               b["late_ms"] / 1000.0,
                                               seq, out, reply, peer))
                    else:
                        out.sendto(reply, peer)
    except Stop:
        pass
    finally:
        for s in socks.values():
            s.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
