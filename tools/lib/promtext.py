#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The Python side's one reader of reqrouter's Prometheus text (what
tools/lib/prom.sh is to the shell), for the hardening tests' helpers.

samples(text) gives {"name{labels}": value}; msum() sums a metric's
samples whose labels hold every substring, exactly (Python integers).
"""


def read_text(path):
    """The metrics file's text, "" if it is not there (yet)."""
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except FileNotFoundError:
        return ""


def value(text):
    """A sample's value: exact for integers, truncated otherwise."""
    try:
        return int(text)
    except ValueError:
        return int(float(text))


def samples(text):
    """{"name{labels}": value} of every sample in TEXT."""
    out = {}
    for line in text.splitlines():
        if not line or line[0] == "#":
            continue
        key, _, val = line.rpartition(" ")
        try:
            out[key] = value(val)
        except ValueError:
            pass
    return out


def msum(snap, name, *subs):
    """The sum of NAME's samples in SNAP whose labels hold every SUBS."""
    return sum(v for k, v in snap.items()
               if (k.startswith(name + "{") or k == name)
               and all(s in k for s in subs))
