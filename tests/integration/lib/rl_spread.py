#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A spoofed spread of DNS queries from many /24s beside one real client.

  rl_spread.py --ifname IF --src-mac M --dst-mac M --dst ADDR [--port P]
               --duration S --client ADDR [--client-rate N]
               [--spread-rate N] [--aim-seed SEED --aim-rate N]

The spread: raw frames on IF (AF_PACKET), each from a random address of
a /24 of 10.0.0.0/8 or 100.64.0.0/10 (private ranges; the frames go only
to ADDR on the bed, and the replies back into the client's namespace,
which is no router and drops them), in queries of example.com. A that
carry their sequence number in the ID:
  - --spread-rate N a second from /24s drawn at random, each new draw a
    new /24 nearly always;
  - with --aim-seed, --aim-rate N a second from each /24 of those ranges
    whose bucket in the rate limiter's table before issue 42 (3 rows of
    4096 per function, the XDP program's hh_seed SEED XORed with
    RR_RL_SEED_XOR, rows picked by 12 bits of the fasthash of the /24)
    is the client's /24's in one of the rows. That table limited a /24
    only when all three of its buckets refused, so a uniform spread had
    to pass about rate_limit x 4096 a second to limit anyone: only the
    1 in 4096 of it that shares a bucket with the client counts against
    the client, and this sends only those, at a per-/24 rate under the
    limit. Every /24 stays under its limit; their sum on each of the
    client's buckets is what a uniform spread of about 4096 times as
    much would put there. The table after issue 42 has a bucket per
    prefix, and the aim means nothing to it.
The client is a kernel UDP socket bound to ADDR at --client-rate
queries a second; replies are read as they come and for half a second
after, a reply with TC set counting as a slip. The replies to the
spread are counted on IF (frames in, from ADDR's PORT).

Prints one JSON object: spread {sent, prefixes, aimed, answers, slips},
client {sent, answers, slips}, seconds. Bounded: --duration at most 30 s,
rates at most 20000 a second.
"""
import argparse
import ipaddress
import json
import os
import random
import socket
import struct
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import rawframes  # noqa: E402

QNAME = b"\x07example\x03com\x00"
U64 = (1 << 64) - 1
HH_M = 0x880355F21E6D1965
RL_SEED_XOR = 0x5851F42D4C957F2D
OLD_ROWS, OLD_WIDTH = 3, 4096
RANGES = (ipaddress.ip_network("10.0.0.0/8"),
          ipaddress.ip_network("100.64.0.0/10"))
PACKET_OUTGOING = 4


def query(qid):
    return struct.pack("!HHHHHH", qid, 0x0100, 1, 0, 0, 0) + QNAME + \
        struct.pack("!HH", 1, 1)


def mix(h):
    h ^= h >> 23
    h = (h * 0x2127599BF4325C37) & U64
    return h ^ (h >> 47)


def hround(h, v):
    return ((h ^ mix(v)) * HH_M) & U64


def old_columns(seed, net):
    """The /24 NET's (its address as an int) bucket in each row of the
    table before issue 42: rr_hh_hash(hh_seed ^ RR_RL_SEED_XOR, AF_INET,
    its address as it lies in memory (little-endian) masked to /24, 0)'s
    source hash, 12 bits from bit 16r."""
    a = int.from_bytes(net.to_bytes(4, "big"), "little") & 0xFFFFFF
    x = (seed ^ RL_SEED_XOR) ^ ((2 * HH_M) & U64)
    x = hround(x, a)
    x = hround(x, 0)
    h = mix(x)
    return [(h >> (16 * r)) & (OLD_WIDTH - 1) for r in range(OLD_ROWS)]


def all_24s():
    for net in RANGES:
        base = int(net.network_address)
        for n in range(net.num_addresses >> 8):
            yield base + (n << 8)


def aimed_24s(seed, client24):
    want = old_columns(seed, client24)
    return [n for n in all_24s()
            if any(a == b for a, b in zip(old_columns(seed, n), want))]


def ip_udp(src, dst, sport, dport, payload, ident):
    """An IPv4 packet (addresses as 4 bytes) with one UDP datagram, both
    checksums full."""
    ulen = 8 + len(payload)
    udp = struct.pack("!HHHH", sport, dport, ulen, 0) + payload
    c = 0xFFFF - rawframes.csum16(src + dst + struct.pack("!BBH", 0, 17,
                                                          ulen) + udp)
    udp = udp[:6] + struct.pack("!H", c or 0xFFFF) + udp[8:]
    hdr = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 20 + ulen, ident, 0x4000,
                      64, 17, 0, src, dst)
    return hdr[:10] + struct.pack("!H", 0xFFFF - rawframes.csum16(hdr)) + \
        hdr[12:] + udp


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ifname", required=True)
    ap.add_argument("--src-mac", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--dst", required=True)
    ap.add_argument("--port", type=int, default=53)
    ap.add_argument("--duration", type=float, default=5)
    ap.add_argument("--client", required=True)
    ap.add_argument("--client-rate", type=float, default=50)
    ap.add_argument("--spread-rate", type=float, default=2000)
    ap.add_argument("--aim-seed", type=int)
    ap.add_argument("--aim-rate", type=float, default=100)
    a = ap.parse_args()
    a.duration = min(a.duration, 30)
    a.spread_rate = min(a.spread_rate, 20000)

    dst = ipaddress.ip_address(a.dst).packed
    cli = ipaddress.ip_address(a.client).packed
    client24 = int.from_bytes(cli, "big") & ~0xFF
    aimed = []
    if a.aim_seed is not None:
        aimed = [n for n in aimed_24s(a.aim_seed, client24) if n != client24]
    aim_total = min(a.aim_rate * len(aimed), 20000)

    tx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    tx.bind((a.ifname, 0))
    rx = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                       socket.htons(rawframes.ETH_P_IP))
    rx.bind((a.ifname, rawframes.ETH_P_IP))
    rx.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    rx.setblocking(False)
    cs = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    cs.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 1 << 22)
    cs.bind((a.client, 0))
    cs.setblocking(False)
    eth = rawframes.mac_bytes(a.dst_mac) + rawframes.mac_bytes(a.src_mac) + \
        struct.pack("!H", rawframes.ETH_P_IP)
    rng = random.Random(42)
    spread = {"sent": 0, "prefixes": 0, "aimed": len(aimed), "answers": 0,
              "slips": 0}
    client = {"sent": 0, "answers": 0, "slips": 0}
    seen = set()
    asked = set()
    bases = [(int(n.network_address), n.num_addresses >> 8) for n in RANGES]

    def send_from(net24, seq):
        src = (net24 + rng.randrange(1, 255)).to_bytes(4, "big")
        ip = ip_udp(src, dst, rng.randrange(1024, 65536), a.port,
                    query(seq & 0xFFFF), seq & 0xFFFF)
        try:
            tx.send(eth + ip)
        except BlockingIOError:
            return
        spread["sent"] += 1
        seen.add(net24)

    def random_24():
        base, n = bases[rng.randrange(len(bases))]
        return base + (rng.randrange(n) << 8)

    def drain():
        while True:
            try:
                data, addr = rx.recvfrom(2048)
            except BlockingIOError:
                break
            if addr[2] == PACKET_OUTGOING or len(data) < 14 + 20 + 8 + 12:
                continue
            ip = data[14:]
            hl = (ip[0] & 0x0F) * 4
            if ip[9] != 17 or ip[12:16] != dst or ip[16:20] == cli:
                continue
            if struct.unpack_from("!H", ip, hl)[0] != a.port:
                continue
            spread["slips" if ip[hl + 8 + 2] & 0x02 else "answers"] += 1
        while True:
            try:
                r = cs.recv(2048)
            except BlockingIOError:
                break
            if len(r) < 12 or not r[2] & 0x80:
                continue
            qid = struct.unpack("!H", r[:2])[0]
            if qid not in asked:
                continue
            asked.discard(qid)
            client["slips" if r[2] & 0x02 else "answers"] += 1

    start = time.monotonic()
    end = start + a.duration
    ns = na = nc = 0
    seq = 0
    while True:
        now = time.monotonic()
        if now >= end:
            break
        el = now - start
        while ns < int(el * a.spread_rate):
            send_from(random_24(), seq)
            seq += 1
            ns += 1
        while aimed and na < int(el * aim_total):
            send_from(aimed[na % len(aimed)], seq)
            seq += 1
            na += 1
        while nc < int(el * a.client_rate) + 1:
            try:
                cs.sendto(query(nc & 0xFFFF), (a.dst, a.port))
                asked.add(nc & 0xFFFF)
                client["sent"] += 1
            except BlockingIOError:
                pass
            nc += 1
        drain()
        time.sleep(0.0005)
    stop = time.monotonic() + 0.5
    while time.monotonic() < stop:
        drain()
        time.sleep(0.01)
    spread["prefixes"] = len(seen)
    print(json.dumps({"spread": spread, "client": client,
                      "seconds": round(end - start, 3)}))


if __name__ == "__main__":
    main()
