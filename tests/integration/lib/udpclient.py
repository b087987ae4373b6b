#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A request/reply UDP client for the integration tests.

Sends COUNT requests over SOCKETS ordinary UDP sockets (so the kernel
verifies every reply's checksum and drops bad ones), one outstanding request
per socket, with payload sizes spread evenly over [--min-size, --max-size]
and random content. Each reply is checked against what the function on the
destination port must answer (computed here) and must come from the address
and port the request went to. Many sockets matter on veth: the kernel picks
a TX queue per socket, and that is the server's RX queue.

  udpclient.py ADDR PORT[:FUNC][,PORT[:FUNC]...] [options]

FUNC is reverse, echo, or any (any reply is accepted); without it the port's
default (1232 reverse, 7 echo) is used. Prints one summary line per port and
a total; exits 0 only if every request got a correct reply.
"""
import argparse
import ipaddress
import os
import random
import select
import socket
import sys
import time

DEFAULT_FUNCS = {1232: "reverse", 7: "echo"}


def expected_reply(func, payload):
    if func == "reverse":
        return payload[::-1]
    if func == "echo":
        return payload
    return None  # "any"


def parse_ports(spec):
    ports = []
    for item in spec.split(","):
        port, _, func = item.partition(":")
        port = int(port)
        func = func or DEFAULT_FUNCS.get(port, "any")
        if func not in ("reverse", "echo", "any"):
            raise SystemExit("unknown function %r" % func)
        ports.append((port, func))
    return ports


def sizes_spread(count, lo, hi, rng):
    """COUNT sizes covering [lo, hi] evenly (both ends included), shuffled."""
    if count == 1:
        return [hi]
    sizes = [lo + (hi - lo) * i // (count - 1) for i in range(count)]
    rng.shuffle(sizes)
    return sizes


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("addr")
    ap.add_argument("ports")
    ap.add_argument("-n", "--count", type=int, default=1000)
    ap.add_argument("-s", "--sockets", type=int, default=64)
    ap.add_argument("--min-size", type=int, default=0)
    ap.add_argument("--max-size", type=int, default=1400)
    ap.add_argument("--timeout", type=float, default=5.0,
                    help="seconds to wait for each reply (generous: a loaded "
                    "2-core VM can take seconds)")
    ap.add_argument("--deadline", type=float, default=60.0,
                    help="seconds for the whole run")
    ap.add_argument("--rate", type=float, default=0,
                    help="at most this many requests a second (0: no limit)")
    ap.add_argument("--distinct", type=int, default=0,
                    help="send only this many different payloads, over and "
                    "over (0: every payload new), to exercise a reply cache")
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("-q", "--quiet", action="store_true",
                    help="do not print each bad reply")
    ap.add_argument("--kernel-prefix", default=None,
                    help="also accept PREFIX + payload (a kernel socket's "
                    "answer, see hostnet.py udp-echo --prefix); counted apart")
    args = ap.parse_args()

    seed = args.seed if args.seed is not None else int.from_bytes(
        os.urandom(4), "little")
    rng = random.Random(seed)
    ports = parse_ports(args.ports)
    family = socket.AF_INET6 if ":" in args.addr else socket.AF_INET
    server_ip = ipaddress.ip_address(args.addr)

    sizes = sizes_spread(args.count, args.min_size, args.max_size, rng)
    # Request i goes to ports[i % len(ports)]: every port gets the full
    # spread of sizes only if sizes and ports do not line up, so shuffle.
    plan = [(ports[i % len(ports)], sizes[i]) for i in range(args.count)]
    rng.shuffle(plan)
    pool = ([rng.randbytes(rng.randint(args.min_size, args.max_size))
             for _ in range(args.distinct)] if args.distinct > 0 else None)

    socks = []
    for _ in range(args.sockets):
        s = socket.socket(family, socket.SOCK_DGRAM)
        s.setblocking(False)
        s.bind(("::" if family == socket.AF_INET6 else "0.0.0.0", 0))
        socks.append(s)
    poller = select.poll()
    byfd = {}
    for s in socks:
        poller.register(s.fileno(), select.POLLIN)
        byfd[s.fileno()] = s

    stats = {p: {"sent": 0, "ok": 0, "wrong": 0, "lost": 0, "bytes": 0,
                 "kernel": 0} for p, _ in ports}
    kprefix = (args.kernel_prefix.encode()
               if args.kernel_prefix is not None else None)
    outstanding = {}  # fd -> (port, func, payload, sent_at)
    idle = list(socks)
    retired = 0
    nxt = 0
    start = time.monotonic()
    problems = 0

    def report(msg):
        nonlocal problems
        problems += 1
        if not args.quiet and problems <= 20:
            print("  " + msg)

    while nxt < len(plan) or outstanding:
        now = time.monotonic()
        if now - start > args.deadline:
            break
        while idle and nxt < len(plan):
            if args.rate and nxt >= (now - start) * args.rate:
                break
            s = idle.pop()
            (port, func), size = plan[nxt]
            nxt += 1
            payload = (pool[nxt % len(pool)] if pool
                       else rng.randbytes(size))
            try:
                s.sendto(payload, (args.addr, port))
            except OSError as e:
                report("sendto port %d failed: %s" % (port, e))
                stats[port]["sent"] += 1
                stats[port]["lost"] += 1
                idle.append(s)
                continue
            stats[port]["sent"] += 1
            outstanding[s.fileno()] = (port, func, payload, now)
        for fd, _ in poller.poll(10 if args.rate else 50):
            s = byfd[fd]
            while True:
                try:
                    data, src = s.recvfrom(65536)
                except BlockingIOError:
                    break
                except OSError as e:
                    report("recvfrom: %s" % e)
                    break
                req = outstanding.pop(fd, None)
                if req is None:
                    report("unexpected datagram of %d bytes from %s"
                           % (len(data), src))
                    continue
                port, func, payload, _ = req
                want = expected_reply(func, payload)
                src_ok = (ipaddress.ip_address(src[0].split("%")[0])
                          == server_ip and src[1] == port)
                if not src_ok:
                    stats[port]["wrong"] += 1
                    report("reply to port %d came from %s" % (port, src))
                elif kprefix is not None and data == kprefix + payload:
                    stats[port]["ok"] += 1
                    stats[port]["kernel"] += 1
                elif want is not None and data != want:
                    stats[port]["wrong"] += 1
                    report("port %d (%s): %d-byte request, %d-byte reply "
                           "differs (first 16: sent %s got %s)"
                           % (port, func, len(payload), len(data),
                              payload[:16].hex(), data[:16].hex()))
                else:
                    stats[port]["ok"] += 1
                    stats[port]["bytes"] += len(payload)
                idle.append(s)
        now = time.monotonic()
        for fd, (port, func, payload, t) in list(outstanding.items()):
            if now - t > args.timeout:
                # A late reply would be taken for the next request's:
                # retire the socket instead of reusing it.
                del outstanding[fd]
                stats[port]["lost"] += 1
                retired += 1
                report("no reply within %.1fs to a %d-byte request to "
                       "port %d" % (args.timeout, len(payload), port))
        if not idle and not outstanding:
            break

    elapsed = time.monotonic() - start
    unsent = len(plan) - nxt
    total = {k: sum(st[k] for st in stats.values())
             for k in ("sent", "ok", "wrong", "lost")}
    total["lost"] += len(outstanding)
    for p, func in ports:
        st = stats[p]
        print("port %-5d %-7s sent %5d ok %5d wrong %d lost %d%s"
              % (p, func, st["sent"], st["ok"], st["wrong"], st["lost"],
                 " (%d of the ok from the kernel)" % st["kernel"]
                 if kprefix is not None else ""))
    print("udpclient %s: %d requests over %d sockets, sizes %d-%d, "
          "%d ok, %d wrong, %d lost, %d unsent, %d sockets retired, "
          "%.2fs, seed %d"
          % (args.addr, total["sent"], args.sockets, args.min_size,
             args.max_size, total["ok"], total["wrong"], total["lost"],
             unsent, retired, elapsed, seed))
    good = (total["ok"] == args.count and total["wrong"] == 0
            and total["lost"] == 0 and unsent == 0)
    return 0 if good else 1


if __name__ == "__main__":
    sys.exit(main())
