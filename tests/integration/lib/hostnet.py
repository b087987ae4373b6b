#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Ordinary host traffic for the integration tests: kernel-socket servers
that must keep working next to reqrouter, and a TCP client.

  hostnet.py udp-echo PORT[,PORT...] [--prefix TEXT] [--log FILE]
      dual-stack UDP echo on each port; replies are PREFIX + payload, so a
      reply from this server is told apart from reqrouter's. With --log,
      the number of datagrams received so far is rewritten to FILE.
  hostnet.py tcp-echo PORT
      dual-stack TCP echo, any number of connections.
  hostnet.py tcp-client ADDR PORT [--conns N] [--bytes N]
      N connections one after another, each sends random bytes, half-closes
      and must read the same bytes back.

Servers write --ready FILE once listening and exit after --lifetime seconds.
"""
import argparse
import os
import random
import select
import socket
import sys
import time


def dual_stack(kind, port):
    s = socket.socket(socket.AF_INET6, kind)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 0)
    s.bind(("::", port))
    return s


def ready(path):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write("ready\n")
        os.rename(path + ".tmp", path)


def write_count(path, n):
    if path:
        with open(path + ".tmp", "w") as f:
            f.write("%d\n" % n)
        os.rename(path + ".tmp", path)


def udp_echo(args):
    socks = [dual_stack(socket.SOCK_DGRAM, int(p))
             for p in args.ports.split(",")]
    prefix = args.prefix.encode()
    received = 0
    write_count(args.log, 0)
    ready(args.ready)
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end:
        r, _, _ = select.select(socks, [], [], 0.2)
        for s in r:
            data, src = s.recvfrom(65536)
            received += 1
            s.sendto(prefix + data, src)
            write_count(args.log, received)
    return 0


def tcp_echo(args):
    ls = dual_stack(socket.SOCK_STREAM, int(args.port))
    ls.listen(16)
    conns = []
    ready(args.ready)
    end = time.monotonic() + args.lifetime
    while time.monotonic() < end:
        r, _, _ = select.select([ls] + conns, [], [], 0.2)
        for s in r:
            if s is ls:
                c, _ = ls.accept()
                conns.append(c)
                continue
            try:
                data = s.recv(65536)
            except OSError:
                data = b""
            if data:
                s.sendall(data)
            else:
                s.close()
                conns.remove(s)
    return 0


def tcp_client(args):
    rng = random.Random()
    ok = 0
    for i in range(args.conns):
        payload = rng.randbytes(args.bytes)
        try:
            s = socket.create_connection((args.addr, args.port),
                                         timeout=args.timeout)
            got = bytearray()
            sent = 0
            # Interleave sending and reading so neither side's buffers fill.
            while sent < len(payload):
                sent += s.send(payload[sent:sent + 16384])
                s.setblocking(False)
                try:
                    while True:
                        chunk = s.recv(65536)
                        if not chunk:
                            break
                        got += chunk
                except BlockingIOError:
                    pass
                s.setblocking(True)
                s.settimeout(args.timeout)
            s.shutdown(socket.SHUT_WR)
            while True:
                chunk = s.recv(65536)
                if not chunk:
                    break
                got += chunk
            s.close()
        except OSError as e:
            print("  connection %d to [%s]:%d: %s" % (i, args.addr, args.port,
                                                    e))
            continue
        if bytes(got) == payload:
            ok += 1
        else:
            print("  connection %d: sent %d bytes, got %d back%s"
                  % (i, len(payload), len(got),
                     "" if len(got) != len(payload) else " (different)"))
    print("tcp-client [%s]:%d: %d of %d connections echoed %d bytes intact"
          % (args.addr, args.port, ok, args.conns, args.bytes))
    return 0 if ok == args.conns else 1


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    u = sub.add_parser("udp-echo")
    u.add_argument("ports")
    u.add_argument("--prefix", default="")
    u.add_argument("--log")
    t = sub.add_parser("tcp-echo")
    t.add_argument("port")
    for p in (u, t):
        p.add_argument("--ready")
        p.add_argument("--lifetime", type=float, default=170)
    c = sub.add_parser("tcp-client")
    c.add_argument("addr")
    c.add_argument("port", type=int)
    c.add_argument("--conns", type=int, default=3)
    c.add_argument("--bytes", type=int, default=100000)
    c.add_argument("--timeout", type=float, default=5)
    args = ap.parse_args()
    return {"udp-echo": udp_echo, "tcp-echo": tcp_echo,
            "tcp-client": tcp_client}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
