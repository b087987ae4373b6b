#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Send one UDP request and print the reply.

ask.py ADDR PORT TEXT                    a line for people (tools/demo.sh)
ask.py --reply [--timeout S] ADDR PORT TEXT
                                         the reply alone, "<empty>" for an
                                         empty one, "<none>" for none,
                                         "<refused>" for an ICMP port
                                         unreachable (tests)
"""
import socket
import sys


def ask(addr, port, text, timeout):
    """The reply to TEXT as a string, None if none came in time, or
    ConnectionRefusedError if the host said no socket is there (the
    socket is connected to hear of that)."""
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        s.connect((addr, port))
        s.send(text.encode())
        try:
            return s.recv(65535).decode(errors="replace")
        except socket.timeout:
            return None
        except ConnectionRefusedError as e:
            return e


def main(argv):
    """Parse argv, ask, print; exit 1 if a person asked and got nothing."""
    raw = argv[:1] == ["--reply"]
    if raw:
        argv = argv[1:]
    timeout = 2.0
    if argv[:1] == ["--timeout"]:
        timeout = float(argv[1])
        argv = argv[2:]
    if len(argv) != 3:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    addr, port, text = argv[0], int(argv[1]), argv[2]
    reply = ask(addr, port, text, timeout)
    if isinstance(reply, ConnectionRefusedError):
        if raw:
            print("<refused>")
            return 0
        reply = None
    if raw:
        print("<none>" if reply is None else reply or "<empty>")
        return 0
    if reply is None:
        print(f"  udp {addr}:{port} {text!r:24} -> (no reply)")
        return 1
    print(f"  udp [{addr}]:{port:<5} {text!r:24} -> {reply!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
