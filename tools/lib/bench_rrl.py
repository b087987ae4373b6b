#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/bench-rrl's Python side: one result row per server and rep, and
the closing table.

bench_rrl.py header
    the CSV's first line
bench_rrl.py row FLOOD-JSON LEGIT-JSON BUSY-TICKS SERVER-RX DROPPED SLIPPED
    the fields after "rep,server" from the flood's and the legitimate
    client's rrload --json summaries, the server CPU's busy ticks and the
    frames its veth took in over the flood, and the requests its rate
    limiter dropped and slipped, as the server counts them
bench_rrl.py report CSV CLK-TCK
    per server the medians of the reps, [lowest-highest]

With --cookies (DNS Cookies and validated sources, issue 44):
bench_rrl.py cookie-queries QUERIES OUT SERVER
    asks SERVER (port 53) once with a client cookie alone; the server
    cookie its BADCOOKIE carries, valid for this host, goes into each of
    QUERIES (hex, as bench_dns.py writes them), written to OUT
bench_rrl.py forged-queries QUERIES OUT
    each of QUERIES with a COOKIE option whose server cookie is version
    1, made now, with a hash no secret gives: checked in XDP, never valid
bench_rrl.py cookie-header
bench_rrl.py cookie-row FLOOD-JSON COOKIE-JSON PLAIN-JSON BUSY-TICKS
                        SERVER-RX DROPPED SLIPPED
bench_rrl.py cookie-report CSV CLK-TCK

The CSV's columns are HEADER's; a missing summary leaves its fields
empty, so a failed run still shows as a row.
"""
import csv
import ipaddress
import os
import socket
import statistics
import struct
import sys
import time

from bench_row import load

HEADER = ("rep,server,flood_net,sources,seconds,flood_sent,srv_rx,"
          "flood_answered,flood_slipped,flood_wrong,legit_sent,"
          "legit_answered,legit_wrong,legit_p50_us,legit_p99_us,"
          "srv_busy_ticks,limiter_dropped,limiter_slipped")
SERVERS = ["knot-rrl", "rr-rrl", "knot-xdp", "rr-dns"]




def flood_fields(flood_path, rx):
    """The flood's fields of a row, from flood_net to flood_wrong."""
    fl = load(flood_path)
    if not fl:
        return [""] * 3 + ["", rx, "", "", ""]
    return [fl["spoof_cidr"] or "", fl["spoof_sources"],
            "%.3f" % fl["elapsed_s"], fl["sent"], rx,
            fl["flood_answered"], fl["flood_slipped"], fl["wrong"]]


def row(flood_path, legit_path, busy, rx, dropped, slipped):
    """The fields after rep and server; see HEADER."""
    lg = load(legit_path)
    out = flood_fields(flood_path, rx)
    if lg and lg["latency_us"]["samples"]:
        lat = lg["latency_us"]
        out += [lg["sent"], lg["answered"], lg["wrong"],
                "%.1f" % lat["p50"], "%.1f" % lat["p99"]]
    elif lg:
        out += [lg["sent"], lg["answered"], lg["wrong"], "", ""]
    else:
        out += [""] * 5
    out += [busy, dropped, slipped]
    print(",".join(str(x) for x in out))


def prefixes(net, sources):
    """How many /24s (/64s) the flood's sources fall in: spoof.c spreads
    them evenly, so every one while there are at least as many sources."""
    n = ipaddress.ip_network(net)
    cut = 24 if n.version == 4 else 64
    if n.prefixlen >= cut:
        return 1
    return min(int(sources), 2 ** (cut - n.prefixlen))


def span(v, fmt):
    """The median and the range of @v, each in @fmt."""
    if not v:
        return "-"
    return (fmt + " [" + fmt + "-" + fmt + "]") % (
        statistics.median(v), min(v), max(v))


def report(path, clk_tck):
    """The table of medians, and rr-rrl's CPU against knot-rrl's."""
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    hz = float(clk_tck)

    def num(r, k):
        return float(r[k]) if r.get(k) not in (None, "") else None

    def vals(s, fn):
        """fn over server s's rows, leaving out the rows it cannot use."""
        out = []
        for r in rows:
            if r["server"] != s:
                continue
            try:
                out.append(fn(r))
            except (TypeError, ZeroDivisionError):
                pass
        return out

    def handled(r):
        """What the server's request path dealt with: every answer, and
        every request its limiter slipped or dropped (the slips as the
        server counts them, some never reaching the client)."""
        slips = max(num(r, "flood_slipped"), num(r, "limiter_slipped"))
        return (num(r, "flood_answered") + num(r, "legit_answered") +
                slips + num(r, "limiter_dropped"))

    def rate(get):
        return lambda r: get(r) / num(r, "seconds")

    def field(k):
        return lambda r: num(r, k)

    def cpu_per(get):
        """Server CPU, in microseconds, per what get counts."""
        return lambda r: num(r, "srv_busy_ticks") / hz * 1e6 / get(r)

    def per_prefix(r):
        return (num(r, "flood_answered") / num(r, "seconds") /
                prefixes(r["flood_net"], r["sources"]))

    def legit_pct(r):
        return 100 * num(r, "legit_answered") / num(r, "legit_sent")

    def k(v):
        return [x / 1e3 for x in v]

    present = [s for s in SERVERS if any(r["server"] == s for r in rows)]
    present += sorted({r["server"] for r in rows} - set(SERVERS))
    print("\n| server | flood offered k/s | reached the veth k/s |"
          " handled k/s | limiter drops k/s | flood answers/s | slips/s |"
          " answers/s per /24 | client answered % | client p50 / p99 ms |"
          " CPU us per request handled | per request at the veth |"
          " per flood request offered | wrong |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for s in present:
        wrong = sum(int(num(r, "flood_wrong") or 0) +
                    int(num(r, "legit_wrong") or 0)
                    for r in rows if r["server"] == s)
        ms = [x / 1e3 for x in vals(s, field("legit_p50_us"))]
        ms99 = [x / 1e3 for x in vals(s, field("legit_p99_us"))]
        cells = [
            span(k(vals(s, rate(field("flood_sent")))), "%.0f"),
            span(k(vals(s, rate(field("srv_rx")))), "%.0f"),
            span(k(vals(s, rate(handled))), "%.0f"),
            span(k(vals(s, rate(field("limiter_dropped")))), "%.0f"),
            span(vals(s, rate(field("flood_answered"))), "%.0f"),
            span(vals(s, rate(field("flood_slipped"))), "%.0f"),
            span(vals(s, per_prefix), "%.0f"),
            span(vals(s, legit_pct), "%.1f"),
            span(ms, "%.1f") + " / " + span(ms99, "%.1f"),
            span(vals(s, cpu_per(handled)), "%.3f"),
            span(vals(s, cpu_per(field("srv_rx"))), "%.3f"),
            span(vals(s, cpu_per(field("flood_sent"))), "%.3f"),
            "%d" % wrong]
        print("| %s | %s |" % (s, " | ".join(cells)))

    def med(s):
        v = vals(s, cpu_per(handled))
        return statistics.median(v) if v else float("nan")

    if "rr-rrl" in present and "knot-rrl" in present:
        print("\nCPU per request handled, rr-rrl / knot-rrl: %.2fx;"
              " rr-rrl / rr-dns: %.2fx; knot-rrl / knot-xdp: %.2fx"
              % (med("rr-rrl") / med("knot-rrl"),
                 med("rr-rrl") / med("rr-dns"),
                 med("knot-rrl") / med("knot-xdp")))


COOKIE_HEADER = ("rep,server,flood_net,sources,seconds,flood_sent,srv_rx,"
                 "flood_answered,flood_slipped,flood_wrong,cookie_sent,"
                 "cookie_answered,cookie_wrong,plain_sent,plain_answered,"
                 "plain_wrong,srv_busy_ticks,limiter_dropped,"
                 "limiter_slipped")
# The flood carries forged cookies (each checked in XDP), or none.
COOKIE_SERVERS = ["rr-cookies", "rr-unchecked", "rr-nocookies",
                  "rr-nocookies-unchecked"]


def with_cookie(query, cookie):
    """@query (no additional records) with an OPT record that carries
    the COOKIE option @cookie."""
    opt = struct.pack("!HH", 10, len(cookie)) + cookie
    return (query[:10] + struct.pack("!H", 1) + query[12:] + b"\0" +
            struct.pack("!HHIH", 41, 1232, 0, len(opt)) + opt)


def read_queries(path):
    with open(path, encoding="utf-8") as f:
        return [bytes.fromhex(line.strip()[2:]) for line in f if line.strip()]


def write_queries(path, queries):
    with open(path, "w", encoding="utf-8") as f:
        for q in queries:
            f.write("0x" + q.hex() + "\n")


def server_cookie(reply):
    """The COOKIE option of @reply's OPT record (the last record), or
    None."""
    at = reply.rfind(b"\x00\x00\x29")
    o = at + 11
    while at > 0 and o + 4 <= len(reply):
        code, olen = struct.unpack("!HH", reply[o:o + 4])
        if code == 10:
            return reply[o + 4:o + 4 + olen]
        o += 4 + olen
    return None


def cookie_queries(queries_path, out_path, server):
    """The client's cookie, as a resolver learns it: one query with a
    client cookie alone, the server cookie of its answer kept."""
    qs = read_queries(queries_path)
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.settimeout(1)
    cookie = None
    for _ in range(3):  # a datagram lost is asked again
        s.sendto(with_cookie(qs[0], os.urandom(8)), (server, 53))
        try:
            cookie = server_cookie(s.recv(4096))
            break
        except socket.timeout:
            continue
    if not cookie or len(cookie) != 24:
        sys.exit("bench-rrl: %s gave no server cookie" % server)
    write_queries(out_path, [with_cookie(q, cookie) for q in qs])


def forged_queries(queries_path, out_path):
    head = struct.pack("!B3xI", 1, int(time.time()))
    write_queries(out_path, [with_cookie(q, os.urandom(8) + head +
                                         os.urandom(8))
                             for q in read_queries(queries_path)])


def cookie_row(flood_path, cookie_path, plain_path, busy, rx, dropped,
               slipped):
    """The fields after rep and server; see COOKIE_HEADER."""
    out = flood_fields(flood_path, rx)
    for path in (cookie_path, plain_path):
        lg = load(path)
        out += [lg["sent"], lg["answered"], lg["wrong"]] if lg else [""] * 3
    out += [busy, dropped, slipped]
    print(",".join(str(x) for x in out))


def cookie_report(path, clk_tck):
    """The table of medians; the cookie client's share and the XDP
    rate with the flood's cookies checked against without."""
    with open(path, encoding="utf-8") as f:
        rows = list(csv.DictReader(f))
    hz = float(clk_tck)

    def vals(srv, fn):
        out = [row_value(r, fn) for r in rows if r["server"] == srv]
        return [v for v in out if v is not None]

    def pct(who):
        return lambda r: 100 * r[who + "_answered"] / r[who + "_sent"]

    def xdp_rate(r):
        """Frames the server's veth took in per second of its CPU's
        busy time: with the flood at max rate, what XDP gets through."""
        return r["srv_rx"] / (r["srv_busy_ticks"] / hz) / 1e3

    print("\n| server | flood offered k/s | reached the veth k/s |"
          " XDP k/s per CPU-second | cookie client answered % |"
          " plain client (flood's /24) answered % | flood answers/s |"
          " slips/s | flood wrong |")
    print("|---|---|---|---|---|---|---|---|---|")
    for srv in COOKIE_SERVERS:
        if not any(r["server"] == srv for r in rows):
            continue
        cells = [
            span(vals(srv, lambda r: r["flood_sent"] / r["seconds"] / 1e3),
                 "%.0f"),
            span(vals(srv, lambda r: r["srv_rx"] / r["seconds"] / 1e3),
                 "%.0f"),
            span(vals(srv, xdp_rate), "%.0f"),
            span(vals(srv, pct("cookie")), "%.1f"),
            span(vals(srv, pct("plain")), "%.1f"),
            span(vals(srv, lambda r: r["flood_answered"] / r["seconds"]),
                 "%.0f"),
            span(vals(srv, lambda r: r["flood_slipped"] / r["seconds"]),
                 "%.0f"),
            "%d" % sum(vals(srv, lambda r: r["flood_wrong"]))]
        print("| %s | %s |" % (srv, " | ".join(cells)))
    share = vals("rr-cookies", pct("cookie"))
    for srv, ref, what in (
            ("rr-nocookies", "rr-nocookies-unchecked",
             "a spoofed flood beside the clients, cookies checked / not"
             " (target >= 0.9x)"),
            ("rr-cookies", "rr-unchecked",
             "the flood's every query with a forged cookie, checked /"
             " not")):
        per_rep = rep_ratios(rows, srv, ref, xdp_rate)
        if not per_rep:
            continue
        print("\nXDP rate per CPU-second, %s: %.2fx, the median of each"
              " repetition's %s / %s: %s"
              % (what, statistics.median(per_rep), srv, ref,
                 " ".join("%.2f" % x for x in per_rep)))
    if share:
        print("The cookie client answered %.1f %% (target >= 99 %%). The"
              " flood's wrong replies with cookies are its BADCOOKIE"
              " answers, made for each spoofed source where rrload checks"
              " them against its own." % statistics.median(share))


def row_value(r, fn):
    """fn of a cookie row's numeric fields, or None where it lacks one."""
    try:
        return fn({k: float(v) for k, v in r.items()
                   if v not in (None, "") and
                   k not in ("server", "flood_net")})
    except (KeyError, ZeroDivisionError):
        return None


def rep_ratios(rows, srv, ref, fn):
    """fn's value for srv over ref's in each repetition that has both."""
    by = {}
    for r in rows:
        v = row_value(r, fn)
        if v is not None:
            by.setdefault(int(r["rep"]), {})[r["server"]] = v
    return [d[srv] / d[ref] for _, d in sorted(by.items())
            if srv in d and ref in d and d[ref]]


def main(argv):
    """Runs the subcommand argv[1] with the rest as its arguments."""
    arity = {"header": 0, "row": 6, "report": 2, "cookie-queries": 3,
             "forged-queries": 2, "cookie-header": 0, "cookie-row": 7,
             "cookie-report": 2}
    if len(argv) < 2 or arity.get(argv[1]) != len(argv) - 2:
        sys.exit(__doc__.strip())
    if argv[1] == "header":
        print(HEADER)
    elif argv[1] == "cookie-header":
        print(COOKIE_HEADER)
    else:
        {"row": row, "report": report, "cookie-queries": cookie_queries,
         "forged-queries": forged_queries, "cookie-row": cookie_row,
         "cookie-report": cookie_report}[argv[1]](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
