#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""tools/bench's plots: gnuplot PNGs (rate vs size, latency bars, queue
and thread scaling) from the medians, with their data under OUT/plotdata.
A missing gnuplot loses the plots, never the tables."""
import os
import subprocess

from bench_stats import ORDER


def gnuplot(script):
    """Run one gnuplot script; a failure is reported, not raised."""
    try:
        subprocess.run(["gnuplot"], input=script.encode(), check=True)
    except Exception as e:  # pylint: disable=broad-except
        print("bench: gnuplot failed: %s" % e)


RATE_PLOT = """set terminal pngcairo size 900,560
set output '%s/rate_vs_size.png'
set title 'Max reply rate vs payload size (XDP engine offers, replies counted; median, min-max)'
set xlabel 'UDP payload (bytes)'
set ylabel 'replies/s (millions)'
set key outside right
set grid
set logscale y
plot %s
"""


def histogram(png, title, ylabel, scale, plot, key=""):
    """A gnuplot script for clustered bars into PNG; SCALE is the y axis
    line, KEY an optional legend line."""
    return ("set terminal pngcairo size 900,520\n"
            "set output '%s'\n"
            "set title '%s'\n"
            "set style data histograms\n"
            "set style histogram clustered gap 1\n"
            "set style fill solid 0.8 border -1\n"
            "set ylabel '%s'\n"
            "%s\n"
            "set grid ytics\n"
            "set xtics rotate by -25\n"
            "%s"
            "plot %s\n") % (png, title, ylabel, scale, key, plot)


def rate_plot(st, out, dat, servers, sizes):
    """rate_vs_size.png: max reply rate of each server by payload size."""
    plots = []
    for srv in servers:
        with open(os.path.join(dat, "rate-%s.dat" % srv), "w",
                  encoding="utf-8") as f:
            for size in sizes:
                s = st.stat((srv, "rate-xdp", size), "answered_per_s")
                if s:
                    f.write("%d %f %f %f\n" % (size, s[0] / 1e6, s[1] / 1e6,
                                               s[2] / 1e6))
        if any(st.stat((srv, "rate-xdp", size), "answered_per_s")
               for size in sizes):
            plots.append("'%s/rate-%s.dat' using 1:2:3:4 with yerrorlines"
                         " title '%s'" % (dat, srv, srv))
    # A run restricted with --tests may have no rate cells: no empty plot.
    if plots:
        gnuplot(RATE_PLOT % (out, ", ".join(plots)))


def bars(st, out, dat, spec, names):
    """One PNG of clustered bars: metrics of a 64 B test per server.
    SPEC is (file name, title, test, [(metric, label)...], y label)."""
    fname, title, test, metrics, ylabel = spec
    if not any(st.med((srv, test, 64), m) for srv in names
               for m, _ in metrics):
        return
    path = os.path.join(dat, fname + ".dat")
    with open(path, "w", encoding="utf-8") as f:
        for srv in names:
            vals = [st.med((srv, test, 64), m) for m, _ in metrics]
            f.write(srv + " " + " ".join("%f" % v if v is not None else "NaN"
                                         for v in vals) + "\n")
    cols = ", ".join("'%s' using %d:xtic(1) title '%s'" % (path, i + 2, lab)
                     for i, (_, lab) in enumerate(metrics))
    gnuplot(histogram("%s/%s.png" % (out, fname), title, ylabel,
                      "set logscale y", cols, key="set key top left\n"))


def scaling_plot(st, out, dat, scale_names):
    """scaling.png: reqrouter's queue and thread combinations (the 1q1t
    servers' points are their max-rate cells)."""
    path = os.path.join(dat, "scaling.dat")
    with open(path, "w", encoding="utf-8") as f:
        for srv in scale_names:
            x = st.med((srv, "rate-xdp" if srv in ORDER else "scale-xdp", 64),
                       "answered_per_s")
            s = st.med((srv, "rate-sock" if srv in ORDER else "scale-sock",
                        64), "answered_per_s")
            f.write("%s %s %s\n" % (srv, "%f" % (x / 1e3) if x else "NaN",
                                    "%f" % (s / 1e3) if s else "NaN"))
    if any(st.med((srv, t, 64), "answered_per_s") for srv in scale_names
           for t in ("rate-xdp", "scale-xdp", "rate-sock", "scale-sock")):
        gnuplot(histogram("%s/scaling.png" % out, "reqrouter queues x threads,"
                          " all workers on CPU 1, 64 B",
                          "replies/s (thousands)", "set yrange [0:*]",
                          "'%s' using 2:xtic(1) title 'XDP engine', '' using 3"
                          " title 'socket client (64 sockets)'" % path))


def plot_all(st, out, sizes, servers, scale_names, open_rate):
    """Every plot of the report into OUT."""
    dat = os.path.join(out, "plotdata")
    os.makedirs(dat, exist_ok=True)
    rate_plot(st, out, dat, servers, sizes)
    bars(st, out, dat, ("latency_closed", "Closed loop, 1 request in flight,"
                        " busy client, 64 B (median of reps)", "lat-closed",
                        [("p50_us", "p50"), ("p90_us", "p90"),
                         ("p99_us", "p99")], "latency (us)"), servers)
    bars(st, out, dat, ("latency_open", "Open loop at %s requests/s, 64 B"
                        " (median of reps)" % open_rate, "lat-open",
                        [("p50_us", "p50"), ("p99_us", "p99"),
                         ("p999_us", "p99.9")], "latency (us)"), servers)
    scaling_plot(st, out, dat, scale_names)
