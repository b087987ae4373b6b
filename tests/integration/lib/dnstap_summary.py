#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""One line per DNS message, from dnstap-ldns -y or from kdig, to compare.

  dnstap_summary.py tap  < `dnstap-ldns -y -r FILE`
  dnstap_summary.py kdig < `kdig ...` (one or more queries' output)

Each line: KIND PROTO ID QNAME QTYPE RCODE ANSWERS [CLIENT], where KIND is
AQ or AR for a dnstap AUTH_QUERY or AUTH_RESPONSE (CLIENT: its
query_address) and AR for each reply kdig printed, so that a reply kdig
got is found among the tap's lines as it is. A tap message that names no
such fields, or a kdig reply without a header, is a line of '?'.
"""
import re
import sys


def tap(text):
    for doc in text.split("\n---"):
        kind = re.search(r"^  type: (AUTH_QUERY|AUTH_RESPONSE)$", doc, re.M)
        if not kind:
            if doc.strip():
                print("? tap message without AUTH_QUERY/AUTH_RESPONSE")
            continue
        proto = re.search(r"^  socket_protocol: (\w+)$", doc, re.M)
        client = re.search(r'^  query_address: "([^"]+)"$', doc, re.M)
        head = re.search(r"rcode: (\w+), id: (\d+)", doc)
        counts = re.search(r"ANSWER: (\d+),", doc)
        quest = re.search(r";; QUESTION SECTION:\n\s*;(\S+)\s+\w+\s+(\w+)",
                          doc)
        if not (proto and client and head and counts and quest):
            print("? tap message without the fields")
            continue
        print("AQ" if kind.group(1) == "AUTH_QUERY" else "AR",
              proto.group(1), head.group(2), quest.group(1).lower(),
              quest.group(2), head.group(1), counts.group(1),
              client.group(1))


def kdig(text):
    for part in re.split(r"\n(?=;; ->>HEADER<<-)", text):
        head = re.search(r"->>HEADER<<- opcode: \w+; status: (\w+); id: (\d+)",
                         part)
        if not head:
            continue
        counts = re.search(r"ANSWER: (\d+);", part)
        quest = re.search(r";; QUESTION SECTION:\n;; (\S+)\s+\w+\s+(\w+)",
                          part)
        proto = re.search(r";; From \S+\((UDP|TCP)\)", part)
        if not (counts and quest and proto):
            print("? kdig reply without the fields")
            continue
        print("AR", proto.group(1), head.group(2), quest.group(1).lower(),
              quest.group(2), head.group(1), counts.group(1))


def main():
    if len(sys.argv) != 2 or sys.argv[1] not in ("tap", "kdig"):
        sys.exit("usage: dnstap_summary.py tap|kdig < TEXT")
    text = sys.stdin.read()
    tap(text) if sys.argv[1] == "tap" else kdig(text)


if __name__ == "__main__":
    main()
