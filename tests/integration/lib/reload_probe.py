#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What a client sees of reqrouter while it reloads (dns_reload_background.sh).

load SERVER ZONE_ORIGIN NRECORDS STOPFILE: DNS queries for A records at a
steady rate, one socket, until STOPFILE exists (or --max seconds), then a
last second for the stragglers. Every query is for a name whose answer is
known: hN (10.a.b.c, as the test's zone generator writes them) or
"changed", whose address is either of --old and --new. Prints one JSON
object: sent, answered, lost, wrong, the answers to "changed" by address,
and when the first new one came.

watch SOCKET HEALTHZ_URL STOPFILE: until STOPFILE exists (or --max), in
rounds: `status` on the control socket, GET HEALTHZ_URL, `status` again.
A round whose two statuses both say "reloading" was entirely inside the
reload. Prints one JSON object: rounds, those inside the reload, how many
of them /healthz answered 200, and the slowest control and HTTP answers
inside the reload.
"""
import argparse
import json
import os
import random
import select
import socket
import struct
import sys
import time
import urllib.error
import urllib.request


def query(qid, name):
    msg = struct.pack(">HHHHHH", qid, 0, 1, 0, 0, 0)
    for label in name.rstrip(".").split("."):
        msg += bytes([len(label)]) + label.encode()
    return msg + b"\0" + struct.pack(">HH", 1, 1)


def skip_name(msg, at):
    while True:
        n = msg[at]
        if n == 0:
            return at + 1
        if n & 0xC0 == 0xC0:
            return at + 2
        at += 1 + n


def first_a(msg):
    """rcode and the first A record's address in the answer, or None."""
    _, flags, qd, an, _, _ = struct.unpack(">HHHHHH", msg[:12])
    at = 12
    for _ in range(qd):
        at = skip_name(msg, at) + 4
    for _ in range(an):
        at = skip_name(msg, at)
        rtype, _, _, rdlen = struct.unpack(">HHIH", msg[at:at + 10])
        at += 10
        if rtype == 1 and rdlen == 4:
            return flags & 0xF, socket.inet_ntoa(msg[at:at + 4])
        at += rdlen
    return flags & 0xF, None


def expected(k):
    return "10.%d.%d.%d" % ((k >> 16) & 255, (k >> 8) & 255, k & 255)


def load(a):
    family = socket.AF_INET6 if ":" in a.server else socket.AF_INET
    s = socket.socket(family, socket.SOCK_DGRAM)
    s.setblocking(False)
    s.connect((a.server, 53))
    out = {}  # id -> (sent at, expected address or None for "changed")
    res = {"sent": 0, "answered": 0, "wrong": 0, "late": 0,
           "changed": {}, "first_new_s": None}
    start = time.monotonic()
    gap = 1.0 / a.rate
    due = start
    qid = 0
    end = None

    def receive(now):
        while True:
            try:
                msg = s.recv(2048)
            except BlockingIOError:
                return
            if len(msg) < 12:
                res["wrong"] += 1
                continue
            rid = struct.unpack(">H", msg[:2])[0]
            if rid not in out:
                res["late"] += 1
                continue
            sent_at, want = out.pop(rid)
            res["answered"] += 1
            rcode, addr = first_a(msg)
            if want is None:
                res["changed"][addr] = res["changed"].get(addr, 0) + 1
                if addr == a.new and res["first_new_s"] is None:
                    res["first_new_s"] = round(now - start, 3)
                if rcode or addr not in (a.old, a.new):
                    res["wrong"] += 1
            elif rcode or addr != want:
                res["wrong"] += 1

    while True:
        now = time.monotonic()
        if end is None and (os.path.exists(a.stop) or
                            now - start > a.max):
            end = now + 1.0
        if end is not None and (now >= end or not out):
            break
        if end is None and now >= due:
            qid = (qid + 1) & 0xFFFF
            if qid % 4 == 0:
                name, want = "changed." + a.origin, None
            else:
                k = random.randrange(a.records)
                name, want = "h%d.%s" % (k, a.origin), expected(k)
            out[qid] = (now, want)
            s.send(query(qid, name))
            res["sent"] += 1
            due += gap
        wait = max(0.0, min(due - time.monotonic(), 0.05))
        select.select([s], [], [], wait)
        receive(time.monotonic())
    res["lost"] = len(out)
    res["seconds"] = round(time.monotonic() - start, 3)
    print(json.dumps(res))


def control(path, line):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(5)
    c.connect(path)
    c.sendall(line.encode() + b"\n")
    data = b""
    while True:
        chunk = c.recv(65536)
        if not chunk:
            break
        data += chunk
    c.close()
    return json.loads(data)


def watch(a):
    res = {"rounds": 0, "inside": 0, "healthz_ok_inside": 0,
           "status_ms_max_inside": 0.0, "healthz_ms_max_inside": 0.0,
           "errors": []}
    start = time.monotonic()
    while not os.path.exists(a.stop) and time.monotonic() - start < a.max:
        try:
            t0 = time.monotonic()
            before = control(a.socket, "status")
            t1 = time.monotonic()
            try:
                with urllib.request.urlopen(a.url, timeout=5) as r:
                    code = r.status
            except urllib.error.HTTPError as e:
                code = e.code
            t2 = time.monotonic()
            after = control(a.socket, "status")
        except (OSError, ValueError) as e:
            res["errors"].append(str(e))
            time.sleep(0.05)
            continue
        res["rounds"] += 1
        if before.get("reloading") and after.get("reloading"):
            res["inside"] += 1
            res["healthz_ok_inside"] += code == 200
            res["status_ms_max_inside"] = max(
                res["status_ms_max_inside"], round((t1 - t0) * 1e3, 1))
            res["healthz_ms_max_inside"] = max(
                res["healthz_ms_max_inside"], round((t2 - t1) * 1e3, 1))
        time.sleep(0.02)
    print(json.dumps(res))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = p.add_subparsers(dest="cmd", required=True)
    lp = sub.add_parser("load")
    lp.add_argument("server")
    lp.add_argument("origin")
    lp.add_argument("records", type=int)
    lp.add_argument("stop")
    lp.add_argument("--rate", type=float, default=400)
    lp.add_argument("--old", default="192.0.2.1")
    lp.add_argument("--new", default="192.0.2.2")
    lp.add_argument("--max", type=float, default=60)
    wp = sub.add_parser("watch")
    wp.add_argument("socket")
    wp.add_argument("url")
    wp.add_argument("stop")
    wp.add_argument("--max", type=float, default=60)
    a = p.parse_args()
    if a.cmd == "load":
        load(a)
    else:
        watch(a)
    return 0


if __name__ == "__main__":
    sys.exit(main())
