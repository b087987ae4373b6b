#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Requests over an ordinary UDP socket, for the tests of what reqrouter
answers (guard_*.sh): whether a destination or a source port is answered,
and when that changes.

  guard_probe.py ask ADDR PORT [-n N] [--sport P] [--bind A]
                 [--func reverse|echo] [--timeout S] --expect all|none
      send N requests (distinct payloads) from one socket, bound to source
      port P and address A if given, and collect the replies for S
      seconds (all: until every one came). A reply counts only if it
      comes from ADDR:PORT and carries func(request). Exit 0 if every
      request got a correct reply (all) or none got any reply at all
      (none).

  guard_probe.py watch ADDR PORT --duration D [--interval I] --log FILE
      one request every I seconds for D seconds; FILE gets one line per
      request: the time it was sent (seconds since the epoch, as date
      +%s.%N gives) and 1 if a correct reply came within 0.5 s, else 0.

  guard_probe.py dns ADDR [--name NAME] [-n N] [--timeout S]
      the same DNS query (the same bytes, ID included) N times to port 53,
      one after the other: exit 0 if every one got an answer (same ID,
      NOERROR, at least one record), all of them the same bytes.

  guard_probe.py judge FILE --from T1 [--to T2] --want all|none
                 [--within S]
      of the requests sent between T1 and T2, all from some point on must
      have the wanted outcome (a reply, or none), and that point must come
      at most S seconds after T1. Prints when it came.
"""
import argparse
import ipaddress
import os
import select
import socket
import struct
import sys
import time

REPLY_WAIT = 0.5  # watch: a reply later than this counts as none


def expected(func, payload):
    return payload[::-1] if func == "reverse" else payload


def open_socket(addr, sport=0, bind=None):
    fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.bind((bind or ("::" if fam == socket.AF_INET6 else "0.0.0.0"), sport))
    s.setblocking(False)
    return s


def receive(s, until):
    """(data, (addr, port)) datagrams until the deadline, as they come."""
    while True:
        left = until - time.monotonic()
        if left <= 0:
            return
        r, _, _ = select.select([s], [], [], left)
        if not r:
            return
        while True:
            try:
                data, src = s.recvfrom(65536)
            except BlockingIOError:
                break
            except ConnectionRefusedError:
                continue  # an ICMP error for an earlier request
            yield data, src


def from_server(src, addr, port):
    return (ipaddress.ip_address(src[0].split("%")[0]) ==
            ipaddress.ip_address(addr) and src[1] == port)


def cmd_ask(a):
    s = open_socket(a.addr, a.sport, a.bind)
    want = {}
    for i in range(a.count):
        p = b"guard %d " % i + os.urandom(8).hex().encode()
        want[expected(a.func, p)] = p
        s.sendto(p, (a.addr, a.port))
    good = wrong = 0
    end = time.monotonic() + a.timeout
    for data, src in receive(s, end):
        if from_server(src, a.addr, a.port) and want.pop(data, None):
            good += 1
        else:
            wrong += 1
        if a.expect == "all" and not want:
            break
    print("ask %s port %d from %s port %d: %d sent, %d correct replies, "
          "%d other datagrams" % (a.addr, a.port, a.bind or "any",
                                  s.getsockname()[1], a.count, good, wrong))
    if a.expect == "all":
        return 0 if good == a.count and not wrong else 1
    return 0 if good + wrong == 0 else 1


def cmd_watch(a):
    s = open_socket(a.addr)
    sent = []  # (wall time, monotonic time, payload)
    got = {}  # payload -> monotonic time of the reply
    start = time.monotonic()
    i = 0
    while True:
        now = time.monotonic()
        if now - start >= a.duration:
            break
        if now >= start + i * a.interval:
            p = b"watch %d " % i + os.urandom(4).hex().encode()
            sent.append((time.time(), now, p))
            s.sendto(p, (a.addr, a.port))
            i += 1
        for data, src in receive(s, min(start + i * a.interval,
                                        start + a.duration)):
            if from_server(src, a.addr, a.port):
                got.setdefault(expected(a.func, data), time.monotonic())
    for data, src in receive(s, time.monotonic() + REPLY_WAIT):
        if from_server(src, a.addr, a.port):
            got.setdefault(expected(a.func, data), time.monotonic())
    with open(a.log, "w") as f:
        for wall, mono, p in sent:
            ok = p in got and got[p] - mono <= REPLY_WAIT
            f.write("%.6f %d\n" % (wall, ok))
    print("watch %s port %d: %d requests, %d answered" % (
        a.addr, a.port, len(sent), sum(p in got for _, _, p in sent)))
    return 0


def dns_query(name, qid=0x2a2a):
    q = struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        q += bytes([len(label)]) + label.encode()
    return q + b"\0" + struct.pack("!HH", 1, 1)  # A, IN


def cmd_dns(a):
    s = open_socket(a.addr)
    q = dns_query(a.name)
    answers = []
    for _ in range(a.count):
        s.sendto(q, (a.addr, 53))
        got = None
        for data, src in receive(s, time.monotonic() + a.timeout):
            if from_server(src, a.addr, 53) and data[:2] == q[:2]:
                got = data
                break
        answers.append(got)
    good = [r for r in answers if r and len(r) >= 12 and r[2] & 0x80 and
            not r[3] & 0x0F and struct.unpack_from("!H", r, 6)[0] >= 1]
    same = len(set(good)) <= 1
    print("dns %s %s A: %d queries, %d answers, %d good, %s" % (
        a.addr, a.name, a.count, sum(r is not None for r in answers),
        len(good), "all the same" if same else "differing"))
    return 0 if len(good) == a.count and same else 1


def cmd_judge(a):
    rows = []
    with open(a.file) as f:
        for line in f:
            t, ok = line.split()
            t = float(t)
            if t >= a.frm and (a.to is None or t < a.to):
                rows.append((t, ok == "1"))
    good = a.want == "all"
    if len(rows) < 5:
        print("judge: only %d requests in the window" % len(rows))
        return 1
    k = len(rows)
    while k > 0 and rows[k - 1][1] == good:
        k -= 1
    if k == len(rows):
        print("judge: the last of %d requests did not have the wanted "
              "outcome (%s)" % (len(rows), a.want))
        return 1
    after = rows[k][0] - a.frm if k else 0.0
    print("judge: %s answered from %.0f ms on (of %d requests, %d before "
          "that went the other way)" % (
              "all" if good else "none", after * 1000, len(rows),
              sum(ok != good for _, ok in rows[:k])))
    return 0 if after <= a.within else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ask = sub.add_parser("ask")
    watch = sub.add_parser("watch")
    for p in (ask, watch):
        p.add_argument("addr")
        p.add_argument("port", type=int)
        p.add_argument("--func", choices=("reverse", "echo"),
                       default="reverse")
    ask.add_argument("-n", "--count", type=int, default=10)
    ask.add_argument("--sport", type=int, default=0)
    ask.add_argument("--bind", help="the source address")
    ask.add_argument("--timeout", type=float, default=1.0)
    ask.add_argument("--expect", choices=("all", "none"), required=True)
    watch.add_argument("--duration", type=float, required=True)
    watch.add_argument("--interval", type=float, default=0.02)
    watch.add_argument("--log", required=True)
    dns = sub.add_parser("dns")
    dns.add_argument("addr")
    dns.add_argument("--name", default="www.example.com")
    dns.add_argument("-n", "--count", type=int, default=50)
    dns.add_argument("--timeout", type=float, default=1.0)
    judge = sub.add_parser("judge")
    judge.add_argument("file")
    judge.add_argument("--from", dest="frm", type=float, required=True)
    judge.add_argument("--to", type=float)
    judge.add_argument("--want", choices=("all", "none"), required=True)
    judge.add_argument("--within", type=float, default=1.0)
    a = ap.parse_args()
    return {"ask": cmd_ask, "watch": cmd_watch, "dns": cmd_dns,
            "judge": cmd_judge}[a.cmd](a)


if __name__ == "__main__":
    sys.exit(main())
