#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Asks one UDP service the same question from many source addresses.

  sources.py --dst ADDR --port P --addrs FILE [--text T]
             [--asks K | --duration S --allow R[,R...]]

The addresses are FILE's, one a line, which the caller has put on this
namespace's interface; each gets an ordinary UDP socket, and asks --text
with {addr} in it replaced by its address
bound to it (the kernel checks every reply's checksum). In rounds, one
request from every address, then the replies for up to a second.

  --asks K: K rounds; prints {"sources", "by_reply": {reply: sources
            that got only it}, "mixed": sources that got two replies,
            "none": sources that got some request unanswered}.
  --duration S: rounds for S seconds, ten a second at most (a steady
            load from every address); prints {"sent", "answered", "wrong"}, a reply not
            in --allow being wrong.
"""
import argparse
import ipaddress
import json
import select
import socket
import sys
import time


def round_trip(socks, dst, text):
    """One request from each socket: their replies by index (None: lost)."""
    got = [None] * len(socks)
    by_fd = {}
    for i, s in enumerate(socks):
        s.sendto(text.replace(b"{addr}", s.getsockname()[0].encode()), dst)
        by_fd[s.fileno()] = i
    left = len(socks)
    deadline = time.monotonic() + 1.0
    poller = select.poll()
    for s in socks:
        poller.register(s, select.POLLIN)
    while left and time.monotonic() < deadline:
        for fd, _ in poller.poll(max(1, int((deadline - time.monotonic()) * 1000))):
            i = by_fd[fd]
            data = socks[i].recv(2048)
            if got[i] is None:
                left -= 1
            got[i] = data
    return got


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--addrs", required=True)
    ap.add_argument("--text", default="hello")
    ap.add_argument("--asks", type=int, default=3)
    ap.add_argument("--duration", type=float, default=0)
    ap.add_argument("--allow", default="")
    a = ap.parse_args()
    with open(a.addrs) as f:
        addrs = [str(ipaddress.ip_address(w)) for w in f.read().split()]
    if not 1 <= len(addrs) <= 1000 or a.duration > 60:
        sys.exit("1 to 1000 sources, and at most 60 s")
    socks = []
    for addr in addrs:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind((addr, 0))
        s.setblocking(False)
        socks.append(s)
    dst = (a.dst, a.port)
    text = a.text.encode()
    if a.duration:
        allow = {r.encode() for r in a.allow.split(",") if r}
        sent = answered = wrong = 0
        end = time.monotonic() + a.duration
        while time.monotonic() < end:
            began = time.monotonic()
            got = round_trip(socks, dst, text)
            time.sleep(max(0.0, began + 0.1 - time.monotonic()))
            sent += len(got)
            answered += sum(r is not None for r in got)
            wrong += sum(r is not None and r not in allow for r in got)
        print(json.dumps({"sent": sent, "answered": answered, "wrong": wrong}))
        return
    seen = [set() for _ in socks]
    lost = [False] * len(socks)
    for _ in range(a.asks):
        for i, r in enumerate(round_trip(socks, dst, text)):
            if r is None:
                lost[i] = True
            else:
                seen[i].add(r.decode(errors="replace"))
    by_reply = {}
    for i, replies in enumerate(seen):
        if len(replies) == 1 and not lost[i]:
            r = next(iter(replies))
            by_reply[r] = by_reply.get(r, 0) + 1
    print(json.dumps({
        "sources": len(addrs),
        "by_reply": by_reply,
        "mixed": sum(len(r) > 1 for r in seen),
        "none": sum(lost),
    }))


if __name__ == "__main__":
    main()
