#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Ask two DNS servers the same queries over UDP and TCP; compare the bytes.

  dnsbytes.py A B [--names a,b] [--transport udp|tcp|both] [--list]

A and B are ADDR@PORT. Each case (a query built here) goes to both, over
UDP as one datagram and over TCP as one message on a connection of its
own (RFC 1035 4.2.2: a two-byte length first); the replies must be the
same bytes, the message ID included (both get the same one). Unlike
dnscompare.py, which ignores NSID and the size, nothing is left out: this
is for what a server says about itself (CHAOS TXT, NSID) and for whole
answers over TCP, where both must send what Knot DNS sends. A case that
gets no reply from either server agrees. Exit status 1 on a mismatch, 2
when the harness itself fails.

The cases expect both servers to serve configs/example.zone with the
record tests/integration/dns_chaos.sh adds (four.example.com: 20 TXT
records, over 4 KiB) and identity, version and nsid set.
"""
import argparse
import os
import select
import socket
import struct
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=wrong-import-position
from dns_cases import header, opt, question  # noqa: E402

CH, TXT, NSID, EXPIRE = 3, 16, 3, 9


def option(code, data=b""):
    return struct.pack(">HH", code, len(data)) + data


def ask(name="www.example.com", qtype=1, qclass=1, edns=None, opcode=0):
    """A query; @edns: None (no OPT), or opt()'s keyword arguments."""
    q = question(name, qtype, qclass)
    if edns is None:
        return header(opcode=opcode) + q
    return header(ar=1, opcode=opcode) + q + opt(**edns)


NSID_ONLY = {"options": option(NSID)}
NSID_DO = {"options": option(NSID), "do": True}

CASES = []
for n in ("id.server", "hostname.bind", "version.server", "version.bind",
          "ID.Server", "Version.BIND"):
    CASES += [
        ("CH TXT %s" % n, ask(n, TXT, CH)),
        ("CH TXT %s edns" % n, ask(n, TXT, CH, {})),
        ("CH TXT %s nsid do" % n, ask(n, TXT, CH, NSID_DO)),
    ]
CASES += [
    ("CH A id.server", ask("id.server", 1, CH, NSID_ONLY)),
    ("CH ANY version.bind", ask("version.bind", 255, CH)),
    ("CH TXT fortune", ask("fortune", TXT, CH)),
    ("CH TXT authors.bind", ask("authors.bind", TXT, CH, {})),
    ("CH TXT below id.server", ask("x.id.server", TXT, CH)),
    ("CH TXT id.server NOTIFY", ask("id.server", TXT, CH, NSID_ONLY, 4)),
    ("IN TXT id.server", ask("id.server", TXT, 1, NSID_ONLY)),
    ("ANY TXT version.bind", ask("version.bind", TXT, 255)),
    ("nsid www A", ask(edns=NSID_ONLY)),
    ("nsid www A with DO", ask(edns=NSID_DO)),
    ("no nsid asked", ask(edns={})),
    ("nsid with data in the query",
     ask(edns={"options": option(NSID, b"hello")})),
    ("nsid and expire", ask(edns={"options": option(NSID) + option(EXPIRE)})),
    ("expire and nsid", ask(edns={"options": option(EXPIRE) + option(NSID)})),
    ("nsid nxdomain", ask("nope.example.com", edns=NSID_ONLY)),
    ("nsid refused, with EDE", ask("www.example.org", edns=NSID_ONLY)),
    ("nsid refused, EDE and expire",
     ask("www.example.org", edns={"options": option(NSID) + option(EXPIRE)})),
    ("nsid referral", ask("www.sub.example.com", edns=NSID_ONLY)),
    ("nsid BADVERS", ask(edns={"version": 1, "options": option(NSID)})),
    ("nsid no question", header(qd=0, ar=1) + opt(options=option(NSID))),
    ("nsid trailing bytes (FORMERR)",
     ask(edns=NSID_ONLY) + b"\x00"),
    ("nsid long TXT 512", ask("long.example.com", TXT,
                              edns={"size": 512, "options": option(NSID)})),
    ("nsid long TXT 1232", ask("long.example.com", TXT, edns=NSID_ONLY)),
    ("nsid huge TXT 4096", ask("huge.example.com", TXT,
                               edns={"size": 4096, "options": option(NSID)})),
    # Whole over TCP, cut (TC) over UDP.
    ("long TXT", ask("long.example.com", TXT)),
    ("huge TXT", ask("huge.example.com", TXT)),
    ("huge TXT edns 1232", ask("huge.example.com", TXT, edns={})),
    ("four TXT (over 4 KiB)", ask("four.example.com", TXT, edns={})),
    ("four TXT (over 4 KiB) nsid", ask("four.example.com", TXT,
                                       edns=NSID_DO)),
    ("longalias TXT", ask("longalias.example.com", TXT)),
]


def server(spec):
    addr, _, port = spec.rpartition("@")
    if not addr or not port.isdigit():
        raise SystemExit("dnsbytes: server %r is not ADDR@PORT" % spec)
    return addr, int(port)


def family(addr):
    return socket.AF_INET6 if ":" in addr else socket.AF_INET


def over_udp(srv, msg, timeout):
    with socket.socket(family(srv[0]), socket.SOCK_DGRAM) as s:
        s.connect(srv)
        s.send(msg)
        if not select.select([s], [], [], timeout)[0]:
            return None
        try:
            return s.recv(65535)
        except OSError:
            return None


def recv_all(s, n, deadline):
    out = b""
    while len(out) < n:
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([s], [], [], left)[0]:
            return None
        part = s.recv(n - len(out))
        if not part:
            return None
        out += part
    return out


def over_tcp(srv, msg, timeout):
    deadline = time.monotonic() + timeout
    try:
        with socket.create_connection(srv, timeout=timeout) as s:
            s.sendall(struct.pack(">H", len(msg)) + msg)
            hdr = recv_all(s, 2, deadline)
            if hdr is None:
                return None
            return recv_all(s, struct.unpack(">H", hdr)[0], deadline)
    except OSError as e:
        print("dnsbytes: TCP to %s@%d: %s" % (srv[0], srv[1], e))
        sys.exit(2)


def brief(m):
    """A reply in one line: rcode, flags, counts, size."""
    if m is None:
        return "(no reply)"
    if len(m) < 12:
        return "(%d bytes)" % len(m)
    _, fl, qd, an, ns, ar = struct.unpack(">HHHHHH", m[:12])
    flags = [f for f, bit in (("qr", 15), ("aa", 10), ("tc", 9), ("rd", 8))
             if fl >> bit & 1]
    return "rcode %d %s qd %d an %d ns %d ar %d, %d bytes" % (
        fl & 0xF, "".join(flags) or "-", qd, an, ns, ar, len(m))


def first_diff(a, b):
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return min(len(a), len(b))


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", nargs="?", help="ADDR@PORT of the reference")
    p.add_argument("b", nargs="?", help="ADDR@PORT of the server tested")
    p.add_argument("--names", default="A,B")
    p.add_argument("--transport", choices=("udp", "tcp", "both"),
                   default="both")
    p.add_argument("--timeout", type=float, default=2)
    p.add_argument("--list", action="store_true", help="list the cases")
    args = p.parse_args()
    if args.list:
        for label, _ in CASES:
            print(label)
        return 0
    if not args.a or not args.b:
        p.error("two servers needed")
    servers = [server(args.a), server(args.b)]
    names = args.names.split(",")
    ways = {"udp": [("udp", over_udp)], "tcp": [("tcp", over_tcp)],
            "both": [("udp", over_udp), ("tcp", over_tcp)]}[args.transport]
    bad = total = 0
    for proto, send in ways:
        for i, (label, msg) in enumerate(CASES):
            msg = struct.pack(">H", 0x6200 + i) + msg[2:]
            got = [send(s, msg, args.timeout) for s in servers]
            total += 1
            if got[0] == got[1]:
                print("ok        %s %s: %s" % (proto, label, brief(got[0])))
                continue
            bad += 1
            print("MISMATCH  %s %s" % (proto, label))
            for name, m in zip(names, got):
                print("    %-9s %s" % (name, brief(m)))
                if m is not None:
                    print("    %-9s %s" % ("", m.hex()))
            if None not in got:
                print("    first difference at byte %d" %
                      first_diff(got[0], got[1]))
    print("%d cases (%s): %d mismatches" % (total, args.transport, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
