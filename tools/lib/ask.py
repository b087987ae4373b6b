#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send one UDP request and print the reply: ask.py ADDR PORT TEXT."""
import socket
import sys

addr, port, text = sys.argv[1], int(sys.argv[2]), sys.argv[3]
family = socket.AF_INET6 if ":" in addr else socket.AF_INET
with socket.socket(family, socket.SOCK_DGRAM) as s:
    s.settimeout(2)
    s.sendto(text.encode(), (addr, port))
    try:
        reply = s.recv(65535).decode(errors="replace")
    except socket.timeout:
        print(f"  udp {addr}:{port} {text!r:24} -> (no reply)")
        sys.exit(1)
print(f"  udp [{addr}]:{port:<5} {text!r:24} -> {reply!r}")
