#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""DNS Cookies for the tests: a server cookie made as RFC 9018 says.

  dns_cookie.py make --secret HEX --ip ADDR --cc HEX [--time T]
      prints the COOKIE option's 24 bytes in hex: client cookie, then the
      server cookie for ADDR made at Unix time T (default: now)
  dns_cookie.py ask --dst ADDR --option HEX [--port 53]
      sends www.example.com A with EDNS and a COOKIE option of those bytes
      (any length), prints the reply's RCODE (extended), its answer count
      and the COOKIE option it carries (hex, "-" for none) on one line

SipHash-2-4 written from the paper, not from reqrouter's C, so that the
two are checked against each other.
"""
import argparse
import ipaddress
import socket
import struct
import time

M = 0xffffffffffffffff


def rotl(x, b):
    return ((x << b) | (x >> (64 - b))) & M


def siphash24(key, data):
    k0, k1 = struct.unpack("<QQ", key)
    v = [k0 ^ 0x736f6d6570736575, k1 ^ 0x646f72616e646f6d,
         k0 ^ 0x6c7967656e657261, k1 ^ 0x7465646279746573]

    def rounds(n):
        for _ in range(n):
            v[0] = (v[0] + v[1]) & M
            v[1] = rotl(v[1], 13) ^ v[0]
            v[0] = rotl(v[0], 32)
            v[2] = (v[2] + v[3]) & M
            v[3] = rotl(v[3], 16) ^ v[2]
            v[0] = (v[0] + v[3]) & M
            v[3] = rotl(v[3], 21) ^ v[0]
            v[2] = (v[2] + v[1]) & M
            v[1] = rotl(v[1], 17) ^ v[2]
            v[2] = rotl(v[2], 32)

    n = len(data) // 8 * 8
    for i in range(0, n, 8):
        m = struct.unpack("<Q", data[i:i + 8])[0]
        v[3] ^= m
        rounds(2)
        v[0] ^= m
    b = (len(data) & 0xff) << 56
    for i, c in enumerate(data[n:]):
        b |= c << (8 * i)
    v[3] ^= b
    rounds(2)
    v[0] ^= b
    v[2] ^= 0xff
    rounds(4)
    return v[0] ^ v[1] ^ v[2] ^ v[3]


def make(secret, ip, cc, t):
    head = struct.pack("!B3xI", 1, t & 0xffffffff)
    h = siphash24(secret, cc + head + ipaddress.ip_address(ip).packed)
    return cc + head + struct.pack("<Q", h)


def ask(dst, port, option):
    opt = struct.pack("!HH", 10, len(option)) + option
    q = struct.pack("!HHHHHH", 0x2b2b, 0x0100, 1, 0, 0, 1)
    q += b"\x03www\x07example\x03com\x00" + struct.pack("!HH", 1, 1)
    q += b"\x00" + struct.pack("!HHIH", 41, 1232, 0, len(opt)) + opt
    fam = socket.AF_INET6 if ":" in dst else socket.AF_INET
    s = socket.socket(fam, socket.SOCK_DGRAM)
    s.settimeout(2)
    s.sendto(q, (dst, port))
    r = s.recv(4096)
    rcode, an = r[3] & 0xf, struct.unpack("!H", r[6:8])[0]
    cookie = "-"
    # The OPT is the last record; its options end the message.
    at = r.rfind(b"\x00\x00\x29")
    if at > 0:
        rcode |= r[at + 5] << 4
        o, end = at + 11, len(r)
        while o + 4 <= end:
            code, olen = struct.unpack("!HH", r[o:o + 4])
            if code == 10:
                cookie = r[o + 4:o + 4 + olen].hex()
            o += 4 + olen
    return "%d %d %s" % (rcode, an, cookie)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    m = sub.add_parser("make")
    m.add_argument("--secret", required=True)
    m.add_argument("--ip", required=True)
    m.add_argument("--cc", required=True)
    m.add_argument("--time", type=int, default=None)
    a_ = sub.add_parser("ask")
    a_.add_argument("--dst", required=True)
    a_.add_argument("--port", type=int, default=53)
    a_.add_argument("--option", required=True)
    a = ap.parse_args()
    if a.cmd == "make":
        t = int(time.time()) if a.time is None else a.time
        print(make(bytes.fromhex(a.secret), a.ip, bytes.fromhex(a.cc),
                   t).hex())
    else:
        print(ask(a.dst, a.port, bytes.fromhex(a.option)))


if __name__ == "__main__":
    main()
