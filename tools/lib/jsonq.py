#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Read values out of a JSON document for shell scripts (tools/lib/json.sh).

jsonq.py FILE KEY...     the top-level KEYs' values on one line
jsonq.py -e EXPR FILE    EXPR evaluated with the document as d

FILE "-" is standard input: rrload's --json summaries, reqrouterctl --json.
"""
import json
import sys


def load(path):
    """The document in PATH, or on standard input for "-"."""
    if path == "-":
        return json.load(sys.stdin)
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def main(argv):
    """Print what argv asks for; exit 2 on a usage error."""
    if len(argv) >= 3 and argv[0] == "-e":
        print(eval(argv[1], {"d": load(argv[2])}))  # pylint: disable=eval-used
        return 0
    if len(argv) < 2:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    d = load(argv[0])
    print(*(d[k] for k in argv[1:]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
