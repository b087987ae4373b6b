#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Ask two DNS servers the same questions and compare the answers.

  dnscompare.py A B [--allow FILE] [--only LABEL...] [--list] [--show]
  dnscompare.py --self-test

A and B are ADDR@PORT (IPv6 addresses as they are). Every case runs against
both: the kdig cases through kdig (knot-dnsutils) over UDP, the raw cases
as hand-built datagrams from this script, for what kdig cannot send
(another opcode, malformed questions, broken EDNS). Each pair of replies is
compared section by section: opcode, rcode (extended included), flags,
EDNS (version, DO, UDP size, options), question, answer, authority and
additional, with the owner names' case. Ignored, because they may
legitimately differ: the message ID, the order of records within an RRset,
the NSID option (a server's own name), the message size (compression is
the server's choice). A case that gets no reply from either server agrees.

Equal answers of different sizes are noted, not counted: the size is
the server's choice of compression and options (NSID).

Every mismatch is printed with both sides. A mismatch whose case label and
section are on the allow-list (FILE: "LABEL<TAB>SECTION<TAB>why" lines,
'#' comments) is printed as allowed; any other makes the exit status 1.
Exit status 2: the harness itself failed (kdig missing, a case broken).
--self-test checks the comparison on replies built here, with no server:
what must count as a difference does, what may differ does not.

The cases name records of configs/example.zone (example.com.), with the
two CNAMEs tests/integration/dns_knot.sh adds (wcname, dcname). kdig runs
with +noidn first, or it would lower-case the names it sends; truncation
cases add +ignore, so a truncated reply is compared as it came instead of
being retried over TCP. --show prints each case's replies in one line.
"""
import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=wrong-import-position
from dns_cases import KDIG_CASES, RAW_CASES, opt, wire_name  # noqa: E402
from dns_wire import (  # noqa: E402
    Malformed, compare, parse_kdig, parse_wire, show)

# --- running the cases -----------------------------------------------------

def split_server(spec):
    addr, _, port = spec.rpartition("@")
    if not addr or not port.isdigit():
        raise SystemExit("dnscompare: server %r is not ADDR@PORT" % spec)
    return addr, int(port)


def run_kdig(server, args, timeout):
    addr, port = server
    cmd = ["kdig", "+noidn", "@" + addr, "-p", str(port),
           "+timeout=%d" % timeout, "+retry=1"] + args.split()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout * 3 + 5)
    except FileNotFoundError:
        print("dnscompare: kdig not found (knot-dnsutils)")
        sys.exit(2)
    try:
        return parse_kdig(r.stdout.decode("utf-8", "replace"))
    except (ValueError, IndexError) as e:
        return {"malformed": "kdig output not understood: %s" % e}


def run_raw(servers, cases, wait):
    """Sends every raw case to every server at once, each from its own
    socket, and collects the replies for up to @wait seconds."""
    socks = {}
    for ci, (_, dgram) in enumerate(cases):
        for si, (addr, port) in enumerate(servers):
            fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.connect((addr, port))
            qid = (0x5100 + ci * 2 + si) & 0xFFFF
            pkt = struct.pack(">H", qid) + dgram[2:] if len(dgram) >= 2 \
                else dgram
            s.send(pkt)
            socks[s] = (ci, si)
    replies = {}
    deadline = time.monotonic() + wait
    while socks and time.monotonic() < deadline:
        ready, _, _ = select.select(list(socks), [], [],
                                    max(0, deadline - time.monotonic()))
        for s in ready:
            try:
                data = s.recv(65535)
            except OSError as e:  # e.g. port unreachable
                data = None
                replies[socks[s]] = {"noreply": [str(e)]}
            if data is not None:
                try:
                    replies[socks[s]] = parse_wire(data)
                except Malformed as e:
                    replies[socks[s]] = {"malformed": str(e)}
            s.close()
            del socks[s]
    for s in socks:
        s.close()
    return [[replies.get((ci, si)) for si in range(len(servers))]
            for ci in range(len(cases))]


def load_allow(path):
    allow = {}
    if not path:
        return allow
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 3 or not parts[2].strip():
                raise SystemExit("dnscompare: %s:%d: want LABEL<TAB>SECTION"
                                 "<TAB>why" % (path, n))
            allow[(parts[0], parts[1])] = parts[2].strip()
    return allow


def self_test():
    """The comparison itself, on replies built here: what must count as a
    difference does, what must not does not. Returns the failures."""
    www = wire_name("www.example.com")

    def reply(flags=0x8500, rcode=0, qname=www, rrs=((60, b"\x01"),
              (60, b"\x02")), owner=www, edns=None, extra=b""):
        ar = 1 if edns is not None else 0
        m = struct.pack(">HHHHHH", 7, flags | rcode, 1, len(rrs), 0, ar)
        m += qname + struct.pack(">HH", 1, 1)
        for ttl, last in rrs:
            m += owner + struct.pack(">HHIH", 1, 1, ttl, 4) + \
                b"\xc0\x00\x02" + last
        if edns is not None:
            m += edns
        return parse_wire(m + extra)

    base = reply()
    cases = [
        ("the same reply", reply(), []),
        ("another ID only", parse_wire(b"\x12\x34" + reply_bytes(base)),
         []),
        ("records of an RRset in another order",
         reply(rrs=((60, b"\x02"), (60, b"\x01"))), []),
        ("a flag (TC)", reply(flags=0x8700), ["flags"]),
        ("AA clear", reply(flags=0x8100), ["flags"]),
        ("the rcode", reply(rcode=3), ["rcode"]),
        ("the question's case", reply(qname=wire_name("WWW.example.com")),
         ["question"]),
        ("an owner's case", reply(owner=wire_name("www.Example.com")),
         ["answer"]),
        ("a TTL", reply(rrs=((60, b"\x01"), (59, b"\x02"))), ["answer"]),
        ("a record less", reply(rrs=((60, b"\x01"),)), ["answer"]),
        ("EDNS present", reply(edns=opt()), ["edns"]),
        ("EDNS DO", (reply(edns=opt()), reply(edns=opt(do=True))),
         ["edns"]),
        ("EDNS size", (reply(edns=opt()), reply(edns=opt(size=4096))),
         ["edns"]),
        ("NSID only", (reply(edns=opt()), reply(edns=opt(
            options=struct.pack(">HH", 3, 2) + b"vm"))), []),
        ("another EDNS option", (reply(edns=opt()), reply(edns=opt(
            options=struct.pack(">HH", 15, 2) + b"\x00\x14"))),
         ["edns"]),
        ("bytes after the last record", reply(extra=b"\x00"),
         ["warnings"]),
        ("no reply", None, ["reply"]),
    ]
    fails = []
    for what, other, want in cases:
        a, b = other if isinstance(other, tuple) else (base, other)
        got, _, _ = compare(a, b)
        if got != want:
            fails.append("%s: differs in %s, expected %s" % (what, got, want))
    return fails


def reply_bytes(m):
    """Back to the wire, for the self-test's ID case: only what reply()
    makes (one question, A records)."""
    out = struct.pack(">HHHHH", 0x8500, 1, len(m["answer"]), 0, 0)
    out += wire_name("www.example.com") + struct.pack(">HH", 1, 1)
    for owner, ttl, _, _, rdata in m["answer"]:
        out += wire_name(owner) + struct.pack(">HHIH", 1, 1, ttl, 4) + \
            socket.inet_aton(rdata)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", nargs="?", help="ADDR@PORT of the reference server")
    p.add_argument("b", nargs="?", help="ADDR@PORT of the server under test")
    p.add_argument("--self-test", action="store_true",
                   help="check the comparison on replies built here")
    p.add_argument("--names", default="A,B",
                   help="what to call the two servers in the output")
    p.add_argument("--allow", help="allow-list file")
    p.add_argument("--only", action="append",
                   help="run only the cases whose label starts with this")
    p.add_argument("--no-raw", action="store_true", help="kdig cases only")
    p.add_argument("--timeout", type=int, default=1,
                   help="kdig's wait for a reply, seconds")
    p.add_argument("--list", action="store_true", help="list the cases")
    p.add_argument("--show", action="store_true",
                   help="print a one-line summary of each case's replies")
    o = p.parse_args()
    if o.self_test:
        fails = self_test()
        for f in fails:
            print("self-test FAILED: " + f)
        print("self-test: %s" % ("failed" if fails else "passed"))
        return 1 if fails else 0
    if not o.b:
        p.error("two servers, A and B, are needed")
    names = o.names.split(",")
    servers = [split_server(o.a), split_server(o.b)]
    allow = load_allow(o.allow)
    pick = lambda label: not o.only or any(label.startswith(x)
                                           for x in o.only)
    kcases = [c for c in KDIG_CASES if pick(c[0])]
    rcases = [] if o.no_raw else [c for c in RAW_CASES if pick(c[0])]
    if o.list:
        for label, args in kcases:
            print("%-40s kdig %s" % (label, args))
        for label, dgram in rcases:
            print("%-40s %d bytes: %s" % (label, len(dgram), dgram.hex()))
        return 0

    results = []
    for label, args in kcases:
        results.append((label, "kdig " + args,
                        [run_kdig(s, args, o.timeout) for s in servers]))
    for (label, dgram), got in zip(rcases, run_raw(servers, rcases, 1.5)):
        results.append((label, "raw " + dgram.hex(), got))

    bad = allowed = sizes = 0
    used = set()
    for label, what, (ra, rb) in results:
        diff, na, nb = compare(ra, rb)
        if o.show:
            print("%-40s %s | %s" % (label, " ".join(show_reply(na)),
                                     " ".join(show_reply(nb))))
        for sec in diff:
            key = (label, sec)
            why = allow.get(key)
            if why:
                allowed += 1
                used.add(key)
                tag = "ALLOWED"
            else:
                bad += 1
                tag = "MISMATCH"
            print("%s  %s: %s  (%s)" % (tag, label, sec, what))
            for side, m in ((names[0], na), (names[1], nb)):
                lines = show_reply(m) if sec == "reply" else show(sec, m)
                for line in lines:
                    print("    %-10s %s" % (side + ":", line))
            if why:
                print("    allowed: %s" % why)
        if not diff and na and nb and "size" in na and "size" in nb and \
                na["size"] != nb["size"]:
            sizes += 1
            print("note  %s: the same answer in %s and %s bytes (%s)" % (
                label, na["size"], nb["size"], what))
    for key in sorted(set(allow) - used):
        print("note  allow-list entry matched nothing: %s / %s" % key)
    print("%d cases (%d kdig, %d raw): %d mismatches, %d allowed; "
          "%d equal answers of different sizes" %
          (len(results), len(kcases), len(rcases), bad, allowed, sizes))
    return 1 if bad else 0


def show_reply(m):
    if m is None:
        return ["(no reply)"]
    if "noreply" in m or "malformed" in m:
        return show("warnings", m)
    return ["%s %s %s, %d/%d/%d RRsets" % (
        m["opcode"], m["rcode"], " ".join(m["flags"]), len(m["answer"]),
        len(m["authority"]), len(m["additional"]))]


if __name__ == "__main__":
    sys.exit(main())
