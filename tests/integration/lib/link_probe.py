#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Sized requests for the tests of following the interface (link_*.sh).

Every request goes out with IP_MTU_DISCOVER = IP_PMTUDISC_DO (IPv4) or
IPV6_MTU_DISCOVER = IPV6_PMTUDISC_DO (IPv6): the client's kernel never
fragments it, so a request either fits the link whole or is refused here
(EMSGSIZE), and a reply arrives whole or not at all.

  link_probe.py echo ADDR SIZE [--port P] [--tries N] [--timeout S]
      SIZE random bytes to echo (port 7); prints one word: answered,
      wrong (a reply that differs), none (no reply in any of N tries,
      a new socket each), refused (ICMP port unreachable: the kernel, not
      reqrouter, had it) or emsgsize (too big for the client's own link)

  link_probe.py dns ADDR NAME [--edns SIZE] [--timeout S]
      a TXT query for NAME to port 53 with an EDNS OPT record of SIZE
      (0: none); prints "tc LEN" (truncated), "full LEN", "rcodeN LEN" (an
      error) or "none", LEN the reply's length in bytes
"""
import argparse
import os
import socket
import struct
import sys

IP_MTU_DISCOVER = 10  # <linux/in.h>
IP_PMTUDISC_DO = 2
IPV6_MTU_DISCOVER = 23  # <linux/in6.h>
IPV6_PMTUDISC_DO = 2


def open_socket(addr, timeout):
    """A connected UDP socket to ADDR that never fragments."""
    v6 = ":" in addr
    s = socket.socket(socket.AF_INET6 if v6 else socket.AF_INET,
                      socket.SOCK_DGRAM)
    if v6:
        s.setsockopt(socket.IPPROTO_IPV6, IPV6_MTU_DISCOVER, IPV6_PMTUDISC_DO)
    else:
        s.setsockopt(socket.IPPROTO_IP, IP_MTU_DISCOVER, IP_PMTUDISC_DO)
    s.settimeout(timeout)
    return s


def cmd_echo(a):
    """One SIZE-byte echo request, up to TRIES times; the outcome's word."""
    word = "none"
    for _ in range(a.tries):
        payload = os.urandom(a.size)
        with open_socket(a.addr, a.timeout) as s:
            s.connect((a.addr, a.port))
            try:
                s.send(payload)
            except OSError as e:
                if e.errno == 90:  # EMSGSIZE
                    return "emsgsize"
                raise
            try:
                got = s.recv(65535)
            except socket.timeout:
                continue
            except ConnectionRefusedError:
                word = "refused"
                continue
            return "answered" if got == payload else "wrong"
    return word


def dns_query(name, edns):
    """A TXT query for NAME, with an OPT record of EDNS bytes (0: none)."""
    qname = b"".join(bytes([len(p)]) + p.encode()
                     for p in name.rstrip(".").split(".")) + b"\0"
    msg = struct.pack("!HHHHHH", 0x2b2b, 0, 1, 0, 0, 1 if edns else 0)
    msg += qname + struct.pack("!HH", 16, 1)
    if edns:
        msg += b"\0" + struct.pack("!HHIH", 41, edns, 0, 0)
    return msg


def cmd_dns(a):
    """The reply's kind and length."""
    with open_socket(a.addr, a.timeout) as s:
        s.sendto(dns_query(a.name, a.edns), (a.addr, 53))
        try:
            r = s.recv(65535)
        except socket.timeout:
            return "none"
    if len(r) < 12:
        return "short %d" % len(r)
    rcode = r[3] & 0xf
    if rcode:
        return "rcode%d %d" % (rcode, len(r))
    return "%s %d" % ("tc" if r[2] & 0x02 else "full", len(r))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    e = sub.add_parser("echo")
    e.add_argument("addr")
    e.add_argument("size", type=int)
    e.add_argument("--port", type=int, default=7)
    e.add_argument("--tries", type=int, default=1)
    e.add_argument("--timeout", type=float, default=1.0)
    d = sub.add_parser("dns")
    d.add_argument("addr")
    d.add_argument("name")
    d.add_argument("--edns", type=int, default=1232)
    d.add_argument("--timeout", type=float, default=1.0)
    a = ap.parse_args()
    print(cmd_echo(a) if a.cmd == "echo" else cmd_dns(a))
    return 0


if __name__ == "__main__":
    sys.exit(main())
