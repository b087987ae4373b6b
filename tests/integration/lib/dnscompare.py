#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Ask two DNS servers the same questions and compare the answers.

  dnscompare.py A B [--tcp [--no-pipeline]] [--allow FILE] [--only LABEL...]
                [--no-raw] [--list] [--show]
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

The cases name records of configs/example.zone (example.com.), with what
tests/integration/dns_knot.sh adds: two CNAMEs (wcname, dcname) and big,
a TXT RRset of over 6 KB. kdig runs
with +noidn first, or it would lower-case the names it sends; truncation
cases add +ignore, so a truncated reply is compared as it came instead of
being retried over TCP; the "follow" cases leave kdig its default, a
truncated reply retried over TCP, and a line "followed" says when both
servers' replies were. --show prints each case's replies in one line.

--tcp asks everything over TCP instead (RFC 7766: a two-byte length
before each message): the kdig cases with +tcp (their +notcp and +ignore
dropped), the raw cases framed, each on a connection of its own (at most
24 open to a server at once, 6 of them awaiting a reply). How a
connection ended is not compared, only noted where the servers differ:
without a reply (closed, reset, or still open after 0.5 s), or after one
(closed within 0.2 s or kept open). Then, unless --no-pipeline, the
pipeline cases (dns_cases.PIPELINE_CASES, labels "pipeline ..."), each
server's on one connection: kdig +keepopen asks them one after another,
and their messages go in one write, pipelined, whose replies must all
come, in the order asked (section "order"), each compared as above.
The raw case of no bytes is left out over TCP.
"""
import argparse
import os
import select
import socket
import struct
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# pylint: disable=wrong-import-position
from dns_cases import (  # noqa: E402
    KDIG_CASES, PIPELINE_CASES, RAW_CASES, opt, wire_name)
from dns_wire import (  # noqa: E402
    Malformed, compare, parse_kdig, parse_wire, show)

# --- running the cases -----------------------------------------------------

def split_server(spec):
    addr, _, port = spec.rpartition("@")
    if not addr or not port.isdigit():
        raise SystemExit("dnscompare: server %r is not ADDR@PORT" % spec)
    return addr, int(port)


def kdig_output(server, args, timeout, retry=1):
    addr, port = server
    cmd = ["kdig", "+noidn", "@" + addr, "-p", str(port),
           "+timeout=%d" % timeout, "+retry=%d" % retry] + args.split()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout * 3 + 5)
    except FileNotFoundError:
        print("dnscompare: kdig not found (knot-dnsutils)")
        sys.exit(2)
    return r.stdout.decode("utf-8", "replace")


def kdig_reply(text):
    try:
        return parse_kdig(text)
    except (ValueError, IndexError) as e:
        return {"malformed": "kdig output not understood: %s" % e}


def run_kdig(server, args, timeout):
    return kdig_reply(kdig_output(server, args, timeout))


def tcp_args(args):
    """A kdig case over TCP: +tcp; +notcp and +ignore, which say what to
    do with a truncated UDP reply, left out."""
    return " ".join(a for a in args.split()
                    if a not in ("+notcp", "+ignore")) + " +tcp"


def run_kdig_keepopen(server, arglist, timeout):
    """The kdig cases @arglist in one kdig on one TCP connection
    (+keepopen), one after another: their replies in the order they came
    (a reply ends with kdig's ";; From" line)."""
    text = kdig_output(server, "+tcp +keepopen " + " ".join(arglist),
                       timeout * len(arglist), retry=0)
    chunks, cur = [], []
    for line in text.splitlines():
        cur.append(line)
        if line.startswith(";; From "):
            chunks.append("\n".join(cur))
            cur = []
    return [kdig_reply(c) for c in chunks]


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


def with_id(dgram, qid):
    return struct.pack(">H", qid & 0xFFFF) + dgram[2:] if len(dgram) >= 2 \
        else dgram


def framed(msg):
    return struct.pack(">H", len(msg)) + msg


def take_frames(buf):
    """The whole messages at the start of @buf, and what is left."""
    out = []
    while len(buf) >= 2 and len(buf) >= 2 + struct.unpack(">H", buf[:2])[0]:
        n = struct.unpack(">H", buf[:2])[0]
        out.append(buf[2:2 + n])
        buf = buf[2 + n:]
    return out, buf


def parsed(data):
    try:
        return parse_wire(data)
    except Malformed as e:
        return {"malformed": str(e)}


def run_raw_tcp(servers, cases, wait, window=24, waiting=6, linger=0.2):
    """Every raw case framed on a connection of its own to every server,
    at most @window connections open to a server at once (below
    reqrouter's tcp_max_per_source), @waiting of them still without a
    reply (knotd's listen backlog is 10: past it a SYN waits a second for
    its retry): the first reply on each, or how the connection ended
    without one; after a reply, whether the server closed the connection
    within @linger seconds (the reply's "after")."""
    todo = [(ci, si) for ci in range(len(cases)) for si in range(len(servers))]
    conns, replies = {}, {}
    per, unanswered = [0] * len(servers), [0] * len(servers)
    while todo or conns:
        rest = []
        for ci, si in todo:
            if per[si] >= window or unanswered[si] >= waiting:
                rest.append((ci, si))
                continue
            unanswered[si] += 1
            s = socket.create_connection(servers[si], timeout=5)
            s.sendall(framed(with_id(cases[ci][1], 0x5100 + ci * 2 + si)))
            s.setblocking(False)
            conns[s] = [(ci, si), b"", time.monotonic() + wait]
            per[si] += 1
        todo = rest
        left = min(c[2] for c in conns.values()) - time.monotonic()
        ready, _, _ = select.select(list(conns), [], [], max(0, left))
        for s in list(conns):
            key, buf, deadline = conns[s]
            got = replies.get(key)
            end = None
            if s in ready:
                try:
                    part = s.recv(65535)
                except OSError:
                    part = None
                if not part:
                    end = "reset" if part is None else "closed"
                elif got is None:
                    buf += part
                    msgs, buf = take_frames(buf)
                    if msgs:
                        got = replies[key] = parsed(msgs[0])
                        conns[s][2] = time.monotonic() + linger
                        unanswered[key[1]] -= 1
            elif time.monotonic() >= deadline:
                end = "open"
            if got is None and end:
                unanswered[key[1]] -= 1
                replies[key] = {"noreply": [
                    "no reply, connection still open" if end == "open"
                    else "connection %s without a reply" % end]}
            elif got is not None and end:
                got["after"] = "kept open" if end == "open" else end
            if not end:
                conns[s][1] = buf
                continue
            s.close()
            del conns[s]
            per[key[1]] -= 1
    return [[replies.get((ci, si)) for si in range(len(servers))]
            for ci in range(len(cases))]


def run_pipeline(server, msgs, wait):
    """@msgs in one write on one connection (IDs 0x7000 and up, in
    order), the replies read until all came, the server closed or @wait
    seconds passed: {index: reply} and the indexes in the order the
    replies came."""
    deadline = time.monotonic() + wait
    got, order, buf = {}, [], b""
    with socket.create_connection(server, timeout=wait) as s:
        s.sendall(b"".join(framed(with_id(m, 0x7000 + i))
                           for i, m in enumerate(msgs)))
        while len(order) < len(msgs):
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([s], [], [], left)[0]:
                break
            try:
                part = s.recv(65535)
            except OSError:
                break
            if not part:
                break
            frames, buf = take_frames(buf + part)
            for f in frames:
                i = struct.unpack(">H", f[:2])[0] - 0x7000 if len(f) >= 2 \
                    else -1
                order.append(i)
                got[i] = parsed(f)
    return got, order


def run_pipelines(servers, cases, timeout):
    """The pipeline cases over TCP, on one connection per server and
    way: (label, what, replies) for each, and the order each server's
    pipelined replies came in."""
    results = []
    kd = [(i, label, args) for i, (label, args, _) in enumerate(cases)
          if args]
    per = [run_kdig_keepopen(s, [a for _, _, a in kd], timeout)
           for s in servers]
    for n, (i, label, args) in enumerate(kd):
        results.append(("pipeline kdig %d %s" % (i + 1, label),
                        "kdig +tcp +keepopen, query %d: %s" % (n + 1, args),
                        [p[n] if n < len(p) else None for p in per]))
    msgs = [m for _, _, m in cases]
    runs = [run_pipeline(s, msgs, 3) for s in servers]
    for i, (label, _, m) in enumerate(cases):
        results.append(("pipeline raw %d %s" % (i + 1, label),
                        "%d messages pipelined, message %d: %s" % (
                            len(msgs), i + 1, m.hex()),
                        [got.get(i) for got, _ in runs]))
    return results, [order for _, order in runs]


def in_order(order, n):
    """Whether the pipelined replies came in @order, all @n of them in
    the order asked."""
    return order == list(range(n))


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
    for order, want in (([0, 1, 2], True), ([0, 2, 1], False),
                        ([0, 1], False), ([], False)):
        if in_order(order, 3) != want:
            fails.append("pipelined replies in order %s: in order is %s, "
                         "expected %s" % (order, not want, want))
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
    p.add_argument("--tcp", action="store_true",
                   help="over TCP, and the pipeline cases")
    p.add_argument("--no-pipeline", action="store_true",
                   help="--tcp without the pipeline cases")
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
    if o.tcp:
        kcases = [(label, tcp_args(args)) for label, args in kcases]
    rcases = [] if o.no_raw else [c for c in RAW_CASES if pick(c[0])]
    if o.tcp:
        # A frame of length 0 is no message: knotd waits for one, which
        # holds up its only TCP worker for its tcp-io-timeout.
        rcases = [c for c in rcases if c[1]]
    pcases = [c for c in PIPELINE_CASES
              if o.tcp and not o.no_pipeline and pick("pipeline")]
    if o.list:
        for label, args in kcases:
            print("%-40s kdig %s" % (label, args))
        for label, dgram in rcases:
            print("%-40s %d bytes: %s" % (label, len(dgram), dgram.hex()))
        for i, (label, args, msg) in enumerate(pcases):
            print("%-40s kdig %s; %d bytes: %s" % (
                "pipeline %d %s" % (i + 1, label), args or "-", len(msg),
                msg.hex()))
        return 0

    results = []
    # kdig spends its time waiting: four at once.
    with ThreadPoolExecutor(4) as pool:
        got = list(pool.map(lambda job: run_kdig(job[0], job[1], o.timeout),
                            [(s, args) for _, args in kcases
                             for s in servers]))
    for i, (label, args) in enumerate(kcases):
        results.append((label, "kdig " + args, got[2 * i:2 * i + 2]))
    if o.tcp:
        raw = run_raw_tcp(servers, rcases, 0.5)
    else:
        raw = run_raw(servers, rcases, 1.5)
    for (label, dgram), got in zip(rcases, raw):
        results.append((label, "raw %s%s" % ("framed " if o.tcp else "",
                                             dgram.hex()), got))
    orders = []
    if pcases:
        presults, orders = run_pipelines(servers, pcases, o.timeout)
        results += presults

    bad = allowed = sizes = followed = 0
    used = set()

    def report(label, sec, what, lines):
        nonlocal bad, allowed
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
        for side, line in lines:
            print("    %-10s %s" % (side + ":", line))
        if why:
            print("    allowed: %s" % why)

    for label, what, (ra, rb) in results:
        diff, na, nb = compare(ra, rb)
        # Every pipelined message gets a reply: none is no agreement.
        if label.startswith("pipeline") and not diff and \
                any(m is None or "noreply" in m for m in (ra, rb)):
            diff = ["reply"]
        if o.show:
            print("%-40s %s | %s" % (label, " ".join(show_reply(na)),
                                     " ".join(show_reply(nb))))
        for sec in diff:
            report(label, sec, what,
                   [(side, line) for side, m in ((names[0], na),
                                                 (names[1], nb))
                    for line in (show_reply(m) if sec == "reply"
                                 else show(sec, m))])
        if not diff and na and nb and "size" in na and "size" in nb and \
                na["size"] != nb["size"]:
            sizes += 1
            print("note  %s: the same answer in %s and %s bytes (%s)" % (
                label, na["size"], nb["size"], what))
        if not diff and na and nb and "noreply" in na and "noreply" in nb \
                and na["noreply"] != nb["noreply"]:
            print("note  %s: no reply from either; %s: %s; %s: %s (%s)" % (
                label, names[0], "; ".join(na["noreply"]), names[1],
                "; ".join(nb["noreply"]), what))
        if not diff and "after" in (na or {}) and "after" in (nb or {}) \
                and na["after"] != nb["after"]:
            print("note  %s: after the reply, %s: connection %s; %s: "
                  "connection %s (%s)" % (label, names[0], ra.get("after"),
                                          names[1], rb.get("after"), what))
        if all(m and any("retrying over TCP" in w
                         for w in m.get("warnings", ())) for m in (na, nb)):
            followed += 1
            print("followed  %s: truncated over UDP, retried over TCP, "
                  "%d answer records from %s, %d from %s" % (
                      label, len(ra["answer"]), names[0],
                      len(rb["answer"]), names[1]))
    if orders:
        if not all(in_order(order, len(pcases)) for order in orders):
            report("pipeline raw order", "order",
                   "%d messages pipelined" % len(pcases),
                   [(side, " ".join(str(i + 1) for i in order) or "(none)")
                    for side, order in zip(names, orders)])
    for key in sorted(set(allow) - used):
        print("note  allow-list entry matched nothing: %s / %s" % key)
    print("%d cases (%d kdig, %d raw, %d pipelined%s): %d mismatches, "
          "%d allowed; %d equal answers of different sizes; %d followed "
          "over TCP" % (len(results), len(kcases), len(rcases),
                        len(results) - len(kcases) - len(rcases),
                        ", over TCP" if o.tcp else "", bad, allowed, sizes,
                        followed))
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
