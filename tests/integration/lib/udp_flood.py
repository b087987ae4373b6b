#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A paced UDP flood from one or many sources beside one modest client.

  udp_flood.py --dst ADDR --port PORT --duration S --rate N --len L
               --src ADDR [--src ADDR ...] [--client ADDR --client-ms MS]

Every source is a kernel UDP socket bound to its address (an address of
the client's interface, so a "spoofed" spread of sources is a spread of
real ones the namespace owns). The --src sockets share --rate requests/s
in turn, each request L bytes of text; the --client socket sends one
request every MS milliseconds. Replies are read as they come and for
half a second after. Prints one JSON object: per group ("flood",
"client") the requests sent and the replies received.
"""
import argparse
import json
import socket
import time


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--duration", type=float, default=2)
    ap.add_argument("--rate", type=float, default=2000)
    ap.add_argument("--len", type=int, default=100)
    ap.add_argument("--src", action="append", required=True)
    ap.add_argument("--client")
    ap.add_argument("--client-ms", type=float, default=300)
    a = ap.parse_args()

    def sock(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind((addr, 0))
        s.setblocking(False)
        return s

    flood = [sock(x) for x in a.src]
    owner = {s: "flood" for s in flood}
    client = None
    if a.client:
        client = sock(a.client)
        owner[client] = "client"
    stats = {"flood": {"sent": 0, "replies": 0},
             "client": {"sent": 0, "replies": 0}}
    dst = (a.dst, a.port)
    payload = (b"x" * a.len)[:a.len]

    def drain():
        for s, g in owner.items():
            try:
                while True:
                    s.recv(65535)
                    stats[g]["replies"] += 1
            except (BlockingIOError, ConnectionRefusedError):
                pass

    start = time.monotonic()
    end = start + a.duration
    interval = 1.0 / a.rate
    next_flood = start
    next_client = start
    i = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        while next_flood <= now:
            try:
                flood[i % len(flood)].sendto(payload, dst)
                stats["flood"]["sent"] += 1
            except BlockingIOError:
                pass
            i += 1
            next_flood += interval
        if client is not None and next_client <= now:
            try:
                client.sendto(payload, dst)
                stats["client"]["sent"] += 1
            except BlockingIOError:
                pass
            next_client += a.client_ms / 1000.0
        drain()
        time.sleep(min(max(next_flood - time.monotonic(), 0), 0.001))
    quiet = time.monotonic() + 0.5
    while time.monotonic() < quiet:
        drain()
        time.sleep(0.01)
    print(json.dumps(stats))


if __name__ == "__main__":
    main()
