#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/bench-dns's Python side: the queries it sends, one result row per
generator run, and the closing table.

bench_dns.py queries HEX-FILE TEXT-FILE  the queries, for rrload (hex) and
                                         for kxdpgun and dnsperf (text)
bench_dns.py answers ADDR QUERIES OUT    each query of QUERIES (hex) asked
                                         of ADDR port 53, the answers into
                                         OUT (hex): the reflector's requests,
                                         as long as dns's replies
bench_dns.py rrload JSON TEST BUSY       a row from rrload's --json summary
bench_dns.py kxdpgun OUTPUT SECONDS [GEN]
                                         a row from kxdpgun's output
bench_dns.py dnsperf OUTPUT [GEN [BUSY]] a row from dnsperf's output; with
                                         BUSY, for CPU per answer too
bench_dns.py report CSV CLK-TCK          medians, CPU per answer, ratios:
                                         a table for the UDP servers and
                                         one for the TCP ones, as present

A row is "generator,offered/s,answered/s,wrong,busy ticks,answered".
"""
import csv
import json
import re
import socket
import statistics
import struct
import sys

QUERIES = [("www", 1), ("www", 28), ("mail", 1), ("", 15), ("ns1", 28),
           ("nothere", 1), ("", 2), ("ftp", 1)]
TYPES = {1: "A", 28: "AAAA", 15: "MX", 2: "NS"}
SERVERS = ["knot-udp", "knot-xdp", "rr-dns", "rr-dns-coalesce", "rr-dns-cache",
           "reflector"]
SERVERS_TCP = ["knot-tcp", "rr-dns-tcp"]


def queries(hex_path, txt_path):
    """Names and types both servers answer the same way."""
    with open(hex_path, "w", encoding="utf-8") as hexf, \
            open(txt_path, "w", encoding="utf-8") as txt:
        for name, qtype in QUERIES:
            q = struct.pack(">HHHHHH", 0, 0x0100, 1, 0, 0, 0)
            labels = ([name] if name else []) + ["example", "com"]
            for label in labels:
                q += bytes([len(label)]) + label.encode()
            q += b"\0" + struct.pack(">HH", qtype, 1)
            hexf.write("0x" + q.hex() + "\n")
            txt.write("%s %s\n" % (".".join(labels), TYPES[qtype]))


def answers(addr, queries_path, out_path):
    """The answer to each query, as the server at @addr gives it."""
    with open(queries_path, encoding="utf-8") as f:
        qs = [bytes.fromhex(line.strip()[2:]) for line in f if line.strip()]
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    out = []
    for q in qs:
        for _ in range(3):
            s.sendto(q, (addr, 53))
            try:
                a = s.recv(65535)
            except socket.timeout:
                continue
            if a[:2] == q[:2]:
                out.append(a)
                break
        else:
            sys.exit("bench-dns: no answer from %s to a query" % addr)
    with open(out_path, "w", encoding="utf-8") as f:
        for a in out:
            f.write("0x" + a.hex() + "\n")


def rrload_row(path, test, busy):
    """rrload's XDP engine: every answer checked against the function."""
    with open(path, encoding="utf-8") as f:
        d = json.load(f)
    print("%s,%.0f,%.0f,%d,%s,%d" % (test, d["sent_per_s"],
                                     d["answered_per_s"], d["wrong"], busy,
                                     d["answered"]))


def read(path):
    """A generator's whole output."""
    with open(path, encoding="utf-8", errors="replace") as f:
        return f.read()


def kxdpgun_row(path, seconds, gen="kxdpgun"):
    """Knot's AF_XDP generator (-T: over TCP): totals over the run."""
    t = read(path)
    sent = re.search(r"total queries:\s+(\d+)", t)
    ans = re.search(r"total replies:\s+(\d+)", t)
    d = float(seconds)
    if not sent or not ans:
        sys.stderr.write("bench-dns: kxdpgun said: %s\n" % t[-300:])
        return
    print("%s,%.0f,%.0f,,," % (gen, int(sent.group(1)) / d,
                               int(ans.group(1)) / d))


def dnsperf_row(path, gen="dnsperf", busy=None):
    """dnsperf: kernel sockets, the classic benchmark client (-m tcp: over
    TCP); with @busy, the server's busy ticks and the answers counted."""
    t = read(path)
    sent = re.search(r"Queries sent:\s+(\d+)", t)
    done = re.search(r"Queries completed:\s+(\d+)", t)
    qps = re.search(r"Queries per second:\s+([\d.]+)", t)
    rt = re.search(r"Run time \(s\):\s+([\d.]+)", t)
    if not sent or not qps or not rt:
        sys.stderr.write("bench-dns: dnsperf said: %s\n" % t[-300:])
        return
    print("%s,%.0f,%.0f,,%s,%s" % (
        gen, int(sent.group(1)) / float(rt.group(1)), float(qps.group(1)),
        busy if busy is not None else "",
        done.group(1) if busy is not None and done else ""))


def med(v):
    """The median, NaN for none."""
    return statistics.median(v) if v else float("nan")


def span(v):
    """A rate in thousands with its spread."""
    if not v:
        return "-"
    return "%.0f k [%.0f-%.0f]" % (med(v) / 1e3, min(v) / 1e3, max(v) / 1e3)


def report(path, clk_tck):
    """The tables of medians and the ratios between the servers."""
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    hz = float(clk_tck)
    present = {r["server"] for r in rows}

    def cells(s, g, key):
        return [float(r[key]) for r in rows
                if r["server"] == s and r["generator"] == g and r[key]]

    def ratio(a, b, g):
        x = med(cells(a, g, "answered_per_s"))
        y = med(cells(b, g, "answered_per_s"))
        return x / y if y else float("nan")

    def cpu(s, g):
        v = [float(r["srv_busy_ticks"]) / hz * 1e6 / float(r["answered"])
             for r in rows if r["server"] == s and r["generator"] == g and
             r["srv_busy_ticks"] and float(r["answered"] or 0) > 0]
        return "%.2f [%.2f-%.2f]" % (med(v), min(v), max(v)) if v else "-"

    def wrong(s):
        return sum(int(r["wrong"] or 0) for r in rows
                   if r["server"] == s and r["wrong"])

    if present & set(SERVERS):
        print("\n| server | rrload XDP engine, answered/s | kxdpgun |"
              " dnsperf | CPU us/answer at 50k/s | wrong |")
        print("|---|---|---|---|---|---|")
        for s in [s for s in SERVERS if s in present]:
            print("| %s | %s | %s | %s | %s | %d |" % (
                s, span(cells(s, "rrload", "answered_per_s")),
                span(cells(s, "kxdpgun", "answered_per_s")),
                span(cells(s, "dnsperf", "answered_per_s")),
                cpu(s, "rrload-cpu"), wrong(s)))
        # Only the ratios of servers that ran (--servers).
        said = ["%s / %s (%s): %.2fx" % (a, b, g, ratio(a, b, g))
                for a, b, g in (("rr-dns", "knot-xdp", "rrload"),
                                ("rr-dns-cache", "knot-xdp", "rrload"),
                                ("rr-dns", "knot-udp", "rrload"),
                                ("rr-dns", "knot-xdp", "kxdpgun"),
                                ("rr-dns-coalesce", "knot-xdp", "rrload"),
                                ("rr-dns-coalesce", "knot-xdp", "kxdpgun"),
                                ("rr-dns-cache", "knot-xdp", "kxdpgun"),
                                ("rr-dns-cache", "reflector", "rrload"))
                if {a, b} <= present]
        if said:
            print("\n" + "\n".join(said))
        per_rep(rows, hz, present)
    if present & set(SERVERS_TCP):
        paced = med([float(r["offered_per_s"]) for r in rows
                     if r["generator"] == "dnsperf-tcp-cpu" and
                     r["offered_per_s"]])
        print("\n| server (TCP) | dnsperf -m tcp, answered/s | kxdpgun -T |"
              " CPU us/answer at %.0fk/s (dnsperf -m tcp) |" % (paced / 1e3))
        print("|---|---|---|---|")
        for s in SERVERS_TCP:
            print("| %s | %s | %s | %s |" % (
                s, span(cells(s, "dnsperf-tcp", "answered_per_s")),
                span(cells(s, "kxdpgun-tcp", "answered_per_s")),
                cpu(s, "dnsperf-tcp-cpu")))
        print("\nrr-dns-tcp / knot-tcp: %.2fx (dnsperf -m tcp), %.2fx"
              " (kxdpgun -T)"
              % (ratio("rr-dns-tcp", "knot-tcp", "dnsperf-tcp"),
                 ratio("rr-dns-tcp", "knot-tcp", "kxdpgun-tcp")))


def per_rep(rows, hz, present):
    """Each repetition's ratios: the servers of one repetition ran one
    after the other, minutes apart at most."""
    by = {}
    for r in rows:
        by.setdefault((r["rep"], r["generator"]), {})[r["server"]] = r

    def rate(rep, gen, s):
        r = by.get((rep, gen), {}).get(s)
        return float(r["answered_per_s"]) if r and r["answered_per_s"] \
            else float("nan")

    def us(rep, s):
        r = by.get((rep, "rrload-cpu"), {}).get(s)
        if not r or not r["srv_busy_ticks"] or not float(r["answered"] or 0):
            return float("nan")
        return float(r["srv_busy_ticks"]) / hz * 1e6 / float(r["answered"])

    reps = sorted({r["rep"] for r in rows}, key=int)
    def against_knot(rr):
        """rr-dns or a variant of it against knot-xdp, each repetition."""
        need = {rr, "knot-xdp"}
        return [
            ("%s / knot-xdp, rrload (target >= 1.5)" % rr, need,
             lambda p: rate(p, "rrload", rr) / rate(p, "rrload", "knot-xdp")),
            ("%s / knot-xdp, kxdpgun (target >= 1.5)" % rr, need,
             lambda p: rate(p, "kxdpgun", rr) /
             rate(p, "kxdpgun", "knot-xdp")),
            ("CPU per answer %s / knot-xdp at 50k/s (target <= 0.7)" % rr,
             need, lambda p: us(p, rr) / us(p, "knot-xdp")),
        ]

    lines = against_knot("rr-dns") + against_knot("rr-dns-coalesce") + [
        ("rr-dns-cache / reflector, rrload (target >= 0.9)",
         {"rr-dns-cache", "reflector"},
         lambda p: rate(p, "rrload", "rr-dns-cache") /
         rate(p, "rrload", "reflector")),
    ]
    lines = [(n, f) for n, need, f in lines if need <= present]
    if lines:
        print("\nPer repetition:")
    for name, f in lines:
        v = []
        for p in reps:
            try:
                v.append("%.2f" % f(p))
            except ZeroDivisionError:
                v.append("nan")
        print("  %s: %s" % (name, " ".join(v)))


# name: (function, the numbers of arguments it takes)
COMMANDS = {"queries": (queries, (2,)), "answers": (answers, (3,)),
            "rrload": (rrload_row, (3,)),
            "kxdpgun": (kxdpgun_row, (2, 3)),
            "dnsperf": (dnsperf_row, (1, 2, 3)), "report": (report, (2,))}

if __name__ == "__main__":
    cmd = COMMANDS.get(sys.argv[1] if len(sys.argv) > 1 else "")
    if not cmd or len(sys.argv) - 2 not in cmd[1]:
        sys.exit(__doc__.strip())
    cmd[0](*sys.argv[2:])
