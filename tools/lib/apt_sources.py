#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Print this machine's apt sources for one Debian release, one-line style.

tools/test-fresh bootstraps a minimal Debian root and must take its mirror
from the machine it runs on, never from an address written into the code.
This reads /etc/apt/sources.list, /etc/apt/sources.list.d/*.list (one-line
style) and *.sources (deb822 style), keeps the binary ("deb") entries whose
suite is RELEASE, RELEASE-updates or RELEASE-security, and prints them as
"deb URI SUITE COMPONENTS" lines, the plain release first. Exit status 1,
with one line on stderr, when there is no entry for the plain release.

Usage: apt_sources.py RELEASE [ETC_APT]
"""
import glob
import os
import sys


def one_line_entries(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.split("#", 1)[0].split()
            if len(line) < 4 or line[0] != "deb":
                continue
            words = line[1:]
            if words[0].startswith("["):  # options: [arch=amd64 signed-by=...]
                while words and not words[0].endswith("]"):
                    words.pop(0)
                words.pop(0)
            if len(words) >= 3:
                yield words[0], words[1], words[2:]


def deb822_entries(path):
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    for stanza in text.split("\n\n"):
        fields, key = {}, None
        for line in stanza.splitlines():
            if line.startswith("#") or not line.strip():
                continue
            if line[0] in " \t" and key:  # continuation line
                fields[key] += " " + line.strip()
                continue
            key, _, value = line.partition(":")
            key = key.strip().lower()
            fields[key] = value.strip()
        if fields.get("enabled", "yes").lower() == "no":
            continue
        if "deb" not in fields.get("types", "").split():
            continue
        for uri in fields.get("uris", "").split():
            for suite in fields.get("suites", "").split():
                yield uri, suite, fields.get("components", "").split()


def main():
    if len(sys.argv) not in (2, 3):
        sys.exit(__doc__.strip().splitlines()[-1])
    release = sys.argv[1]
    etc = sys.argv[2] if len(sys.argv) == 3 else "/etc/apt"
    wanted = [release, release + "-updates", release + "-security"]
    entries = []
    for path in [os.path.join(etc, "sources.list")] + sorted(
            glob.glob(os.path.join(etc, "sources.list.d", "*.list"))):
        if os.path.isfile(path):
            entries += one_line_entries(path)
    for path in sorted(glob.glob(os.path.join(etc, "sources.list.d",
                                              "*.sources"))):
        entries += deb822_entries(path)

    seen, out = set(), []
    for uri, suite, comps in entries:
        if suite in wanted and "main" in comps and (uri, suite) not in seen:
            seen.add((uri, suite))
            out.append((wanted.index(suite), uri, suite, comps))
    if not any(e[0] == 0 for e in out):
        print("apt_sources: no 'deb' source for %s (main) in %s"
              % (release, etc), file=sys.stderr)
        return 1
    for _, uri, suite, comps in sorted(out, key=lambda e: e[0]):
        print("deb %s %s %s" % (uri, suite, " ".join(comps)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
