#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A DNS query flood from several addresses beside one modest client.

  rl_flood.py --dst ADDR --port PORT --duration S
              --flood ADDR [--flood ADDR ...] --flood-rate N
              --client ADDR --client-rate N [--client-cookie HEX]

Every source is a kernel UDP socket bound to its address (an address of
the client's interface). The flood sources share --flood-rate queries/s
in turn, the client sends --client-rate; all ask example.com. A with a
numbered ID; with --client-cookie the client's queries carry an OPT record
with a COOKIE option of those bytes. Replies are read as they come and for half a second after:
a reply with TC set is a slip, any other an answer. Prints one JSON
object: per group (flood, client) the queries sent, answers and slips.

With --flood-payload and --client-payload TEXT (not DNS: every reply is
an answer), each group sends its TEXT, a space and the request's number.
"""
import argparse
import json
import socket
import struct
import time

QNAME = b"\x07example\x03com\x00"


def query(qid, cookie=None):
    if not cookie:
        return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + QNAME + \
            struct.pack("!HH", 1, 1)
    opt = struct.pack("!HH", 10, len(cookie)) + cookie
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 1) + QNAME + \
        struct.pack("!HH", 1, 1) + b"\x00" + \
        struct.pack("!HHIH", 41, 1232, 0, len(opt)) + opt


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, default=53)
    ap.add_argument("--duration", type=float, default=4)
    ap.add_argument("--flood", action="append", required=True)
    ap.add_argument("--flood-rate", type=float, default=4000)
    ap.add_argument("--client", required=True)
    ap.add_argument("--client-rate", type=float, default=50)
    ap.add_argument("--flood-payload")
    ap.add_argument("--client-payload")
    ap.add_argument("--client-cookie", default="")
    a = ap.parse_args()

    def sock(addr):
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
        s.bind((addr, 0))
        s.setblocking(False)
        return s

    flood = [sock(x) for x in a.flood]
    client = sock(a.client)
    groups = {"flood": {"sent": 0, "answers": 0, "slips": 0},
              "client": {"sent": 0, "answers": 0, "slips": 0}}
    owner = {s: "flood" for s in flood}
    owner[client] = "client"
    asked = set()
    dst = (a.dst, a.port)
    raw = a.flood_payload is not None or a.client_payload is not None

    def request(group, n):
        if not raw:
            return query(n, bytes.fromhex(a.client_cookie)
                         if group == "client" else None)
        text = a.flood_payload if group == "flood" else a.client_payload
        return (text or "").encode() + b" %d" % n

    def drain():
        for s, g in owner.items():
            try:
                while True:
                    r = s.recv(2048)
                    if raw:
                        groups[g]["answers"] += 1
                        continue
                    if len(r) < 12 or not r[2] & 0x80:
                        continue
                    if g == "client":
                        qid = struct.unpack("!H", r[:2])[0]
                        if qid not in asked:
                            continue
                        asked.discard(qid)
                    groups[g]["slips" if r[2] & 0x02 else "answers"] += 1
            except BlockingIOError:
                pass

    start = time.monotonic()
    end = start + a.duration
    nf = nc = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        while nf < int((now - start) * a.flood_rate):
            try:
                flood[nf % len(flood)].sendto(request("flood", nf & 0xffff),
                                              dst)
                groups["flood"]["sent"] += 1
            except BlockingIOError:
                pass
            nf += 1
        while nc < int((now - start) * a.client_rate) + 1:
            try:
                client.sendto(request("client", nc & 0xffff), dst)
                asked.add(nc & 0xffff)
                groups["client"]["sent"] += 1
            except BlockingIOError:
                pass
            nc += 1
        drain()
        time.sleep(0.0005)
    stop = time.monotonic() + 0.5
    while time.monotonic() < stop:
        drain()
        time.sleep(0.01)
    groups["seconds"] = round(end - start, 3)
    print(json.dumps(groups))


if __name__ == "__main__":
    main()
