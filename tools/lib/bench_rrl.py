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

The CSV's columns are HEADER's; a missing summary leaves its fields
empty, so a failed run still shows as a row.
"""
import csv
import ipaddress
import statistics
import sys

from bench_row import load

HEADER = ("rep,server,flood_net,sources,seconds,flood_sent,srv_rx,"
          "flood_answered,flood_slipped,flood_wrong,legit_sent,"
          "legit_answered,legit_wrong,legit_p50_us,legit_p99_us,"
          "srv_busy_ticks,limiter_dropped,limiter_slipped")
SERVERS = ["knot-rrl", "rr-rrl", "knot-xdp", "rr-dns"]




def row(flood_path, legit_path, busy, rx, dropped, slipped):
    """The fields after rep and server; see HEADER."""
    fl = load(flood_path)
    lg = load(legit_path)
    out = []
    if fl:
        out += [fl["spoof_cidr"] or "", fl["spoof_sources"],
                "%.3f" % fl["elapsed_s"], fl["sent"], rx,
                fl["flood_answered"], fl["flood_slipped"], fl["wrong"]]
    else:
        out += [""] * 3 + ["", rx, "", "", ""]
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


def main(argv):
    """Runs the subcommand argv[1] with the rest as its arguments."""
    arity = {"header": 0, "row": 6, "report": 2}
    if len(argv) < 2 or arity.get(argv[1]) != len(argv) - 2:
        sys.exit(__doc__.strip())
    if argv[1] == "header":
        print(HEADER)
    else:
        {"row": row, "report": report}[argv[1]](*argv[2:])


if __name__ == "__main__":
    main(sys.argv)
