#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Raw Ethernet frames over AF_PACKET for the integration tests.

The test kernel has no 802.1Q module, so VLAN and QinQ requests are built
here byte by byte and sent on the client's veth; replies are read from the
same AF_PACKET socket with PACKET_AUXDATA on, because the receiving kernel
moves the outer tag into the skb's metadata (tp_vlan_tci, tp_vlan_tpid).

  rawframes.py exchange --ifname IF --src-mac M --dst-mac M --src-ip A
                        --dst-ip A --dport P [--tags 88a8:200,8100:100]
                        [--func reverse|echo] [--count N] ...
      send N UDP requests (IPv4 or IPv6 by address) with the given tags,
      outermost first, and check every reply field by field: tags kept,
      MACs, addresses and ports swapped, lengths, IPv4 header checksum,
      UDP checksum (computed here), payload = func(request).

  rawframes.py bad-csum --ifname IF ... --dport P [--count N]
      send N UDP datagrams whose checksum is wrong on purpose (to show the
      receiver's kernel really checks, so a clean InCsumErrors means
      something).

  rawframes.py sniff --ifname IF --dport P --duration S [--ready FILE]
      count the UDP frames the host sends out of IF to port P for S
      seconds (or until SIGTERM) by the kind of checksum they carry: full,
      partial (the pseudo-header's sum that TX checksum offload leaves for
      the device), zero or bad. FILE is created once the socket listens.
"""
import argparse
import ipaddress
import os
import random
import signal
import socket
import struct
import sys
import time

ETH_P_ALL = 0x0003
ETH_P_IP = 0x0800
ETH_P_IPV6 = 0x86DD
VLAN_TPIDS = (0x8100, 0x88A8)
SOL_PACKET = 263
SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)
PACKET_AUXDATA = 8
PACKET_OUTGOING = 4
TP_STATUS_CSUMNOTREADY = 1 << 3
TP_STATUS_VLAN_VALID = 1 << 4
TP_STATUS_VLAN_TPID_VALID = 1 << 6
AUXDATA = struct.Struct("=IIIHHHH")  # struct tpacket_auxdata
IPPROTO_UDP = 17


def csum16(data):
    """The Internet checksum (RFC 1071) of DATA, folded, not inverted."""
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack("!%dH" % (len(data) // 2), data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return s


def pseudo_header(src, dst, length):
    if src.version == 4:
        return src.packed + dst.packed + struct.pack("!BBH", 0, IPPROTO_UDP,
                                                     length)
    return src.packed + dst.packed + struct.pack("!IxxxB", length,
                                                 IPPROTO_UDP)


def udp_checksum(src, dst, udp):
    """UDP checksum over pseudo header + UDP (checksum field as given)."""
    c = 0xFFFF - csum16(pseudo_header(src, dst, len(udp)) + udp)
    return c or 0xFFFF


def udp_checksum_ok(src, dst, udp):
    return csum16(pseudo_header(src, dst, len(udp)) + udp) == 0xFFFF


def udp_partial_ok(src, dst, udp):
    """A checksum left for the receiver to trust (CHECKSUM_PARTIAL, which
    veth hands over as it is): the field must hold the pseudo-header sum,
    folded, not inverted, so that summing from the UDP header on would
    complete it."""
    return struct.unpack_from("!H", udp, 6)[0] == csum16(
        pseudo_header(src, dst, len(udp)))


def build_udp_ip(src, dst, sport, dport, payload, csum="full", ident=0,
                 opt_words=0):
    """An IPv4 or IPv6 packet carrying one UDP datagram. csum: full, zero
    (IPv4 only), bad (deliberately wrong, and not partial either) or
    partial (the pseudo-header's sum alone, as a sender with TX checksum
    offload leaves it). opt_words: IPv4 options, that many 4-byte words
    of NOPs."""
    ulen = 8 + len(payload)
    udp = struct.pack("!HHHH", sport, dport, ulen, 0) + payload
    if csum in ("full", "bad"):
        c = udp_checksum(src, dst, udp)
        if csum == "bad":
            c = (c + 0x1111) & 0xFFFF or 0x1111
            # Nor the pseudo-header's sum: a receiver trusts that as a
            # checksum left to the device (CHECKSUM_PARTIAL).
            if c == csum16(pseudo_header(src, dst, ulen)):
                c = (c + 0x1111) & 0xFFFF or 0x1111
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    elif csum == "partial":
        c = csum16(pseudo_header(src, dst, ulen))
        udp = udp[:6] + struct.pack("!H", c) + udp[8:]
    if src.version == 4:
        hlen = 20 + 4 * opt_words
        hdr = struct.pack("!BBHHHBBH4s4s", 0x40 | hlen // 4, 0, hlen + ulen,
                          ident, 0x4000, 64, IPPROTO_UDP, 0, src.packed,
                          dst.packed) + b"\x01" * (4 * opt_words)
        hdr = hdr[:10] + struct.pack("!H", 0xFFFF - csum16(hdr)) + hdr[12:]
        return hdr + udp
    hdr = struct.pack("!IHBB16s16s", 6 << 28, ulen, IPPROTO_UDP, 64,
                      src.packed, dst.packed)
    return hdr + udp


def build_frame(dst_mac, src_mac, tags, ip):
    """TAGS: [(tpid, tci), ...], outermost first."""
    f = dst_mac + src_mac
    for tpid, tci in tags:
        f += struct.pack("!HH", tpid, tci)
    et = ETH_P_IP if ip[0] >> 4 == 4 else ETH_P_IPV6
    return f + struct.pack("!H", et) + ip


def mac_bytes(s):
    return bytes(int(x, 16) for x in s.split(":"))


def mac_str(b):
    return ":".join("%02x" % x for x in b)


def parse_tags(spec):
    tags = []
    for item in filter(None, spec.split(",")):
        tpid, _, tci = item.partition(":")
        tags.append((int(tpid, 16), int(tci, 0)))
    return tags


def open_packet_socket(ifname):
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW,
                      socket.htons(ETH_P_ALL))
    s.bind((ifname, ETH_P_ALL))
    s.setsockopt(SOL_PACKET, PACKET_AUXDATA, 1)
    return s


def recv_frame(s, timeout, on_outgoing=None):
    """One incoming frame: (bytes, outer tag (tpid, tci) or None, whether
    its L4 checksum is partial (TP_STATUS_CSUMNOTREADY)), or None after
    TIMEOUT seconds. Outgoing frames (the host's own; a packet socket never
    sees what it sent itself) are skipped, after being handed to
    ON_OUTGOING when given."""
    end = time.monotonic() + timeout
    while True:
        left = end - time.monotonic()
        if left <= 0:
            return None
        s.settimeout(left)
        try:
            data, anc, _, addr = s.recvmsg(65536, 1024)
        except socket.timeout:
            return None
        if addr[2] == PACKET_OUTGOING:
            if on_outgoing:
                on_outgoing(data)
            continue
        outer = None
        partial = False
        for level, typ, cdata in anc:
            if level == SOL_PACKET and typ == PACKET_AUXDATA and \
                    len(cdata) >= AUXDATA.size:
                status, _, _, _, _, tci, tpid = AUXDATA.unpack(
                    cdata[:AUXDATA.size])
                partial = bool(status & TP_STATUS_CSUMNOTREADY)
                if status & TP_STATUS_VLAN_VALID:
                    if not status & TP_STATUS_VLAN_TPID_VALID:
                        tpid = 0x8100
                    outer = (tpid, tci)
        return data, outer, partial


class Parsed:
    pass


def describe_frame(data):
    """A few words on a frame: EtherType, protocol, addresses, ICMPv6 type."""
    if len(data) < 14:
        return "runt frame of %d bytes" % len(data)
    et = struct.unpack_from("!H", data, 12)[0]
    if et == ETH_P_IPV6 and len(data) >= 54:
        src = ipaddress.ip_address(data[22:38])
        dst = ipaddress.ip_address(data[38:54])
        what = "IPv6 next header %d" % data[20]
        if data[20] == 58 and len(data) > 54:
            what = "ICMPv6 type %d" % data[54]
        return "%s %s > %s" % (what, src, dst)
    if et == ETH_P_IP and len(data) >= 34:
        return "IPv4 protocol %d %s > %s" % (
            data[23], ipaddress.ip_address(data[26:30]),
            ipaddress.ip_address(data[30:34]))
    return "EtherType 0x%04x" % et


def parse_frame(data, outer, partial=False):
    """Split a received frame; None if it is not UDP over IPv4/IPv6.
    PARTIAL: the sender left the UDP checksum for the device to complete
    (TX checksum offload) and the frame came over veth as it was."""
    p = Parsed()
    p.csum_partial = partial
    p.dst_mac, p.src_mac = data[0:6], data[6:12]
    p.tags = [outer] if outer else []
    p.aux_tag = outer is not None
    off = 12
    if len(data) < off + 2:
        return None
    et = struct.unpack_from("!H", data, off)[0]
    while et in VLAN_TPIDS and len(data) >= off + 6:
        tci = struct.unpack_from("!H", data, off + 2)[0]
        p.tags.append((et, tci))
        off += 4
        et = struct.unpack_from("!H", data, off)[0]
    off += 2
    p.ethertype = et
    if et == ETH_P_IP:
        if len(data) < off + 20 or data[off] >> 4 != 4:
            return None
        ihl = (data[off] & 0xF) * 4
        hdr = data[off:off + ihl]
        p.ip_hdr_ok = csum16(hdr) == 0xFFFF
        p.ip_len = struct.unpack_from("!H", data, off + 2)[0]
        p.proto = data[off + 9]
        p.src = ipaddress.ip_address(data[off + 12:off + 16])
        p.dst = ipaddress.ip_address(data[off + 16:off + 20])
        p.ip_len_ok = p.ip_len <= len(data) - off
        l4 = data[off + ihl:off + p.ip_len]
    elif et == ETH_P_IPV6:
        if len(data) < off + 40:
            return None
        p.ip_hdr_ok = True
        plen = struct.unpack_from("!H", data, off + 4)[0]
        p.proto = data[off + 6]
        p.src = ipaddress.ip_address(data[off + 8:off + 24])
        p.dst = ipaddress.ip_address(data[off + 24:off + 40])
        p.ip_len_ok = plen <= len(data) - off - 40
        l4 = data[off + 40:off + 40 + plen]
    else:
        return None
    if p.proto != IPPROTO_UDP or len(l4) < 8:
        return None
    p.sport, p.dport, p.ulen, p.ucsum = struct.unpack_from("!HHHH", l4)
    p.udp_len_ok = p.ulen == len(l4)
    p.udp = l4[:p.ulen]
    p.payload = l4[8:p.ulen]
    if p.ucsum == 0:
        p.udp_csum_ok = p.src.version == 4  # "no checksum", IPv4 only
    elif partial:
        p.udp_csum_ok = udp_partial_ok(p.src, p.dst, p.udp)
    else:
        p.udp_csum_ok = udp_checksum_ok(p.src, p.dst, p.udp)
    return p


def common_args(ap):
    ap.add_argument("--ifname", required=True)
    ap.add_argument("--src-mac", required=True)
    ap.add_argument("--dst-mac", required=True)
    ap.add_argument("--src-ip", required=True)
    ap.add_argument("--dst-ip", required=True)
    ap.add_argument("--sport", type=int, default=0,
                    help="source port (default: random)")
    ap.add_argument("--dport", type=int, required=True)
    ap.add_argument("--tags", default="",
                    help="TPID:TCI list, outermost first, e.g. 88a8:200,8100:100")
    ap.add_argument("--count", type=int, default=10)


def cmd_bad_csum(args):
    src, dst = ipaddress.ip_address(args.src_ip), ipaddress.ip_address(
        args.dst_ip)
    s = open_packet_socket(args.ifname)
    sport = args.sport or random.randint(20000, 60000)
    for i in range(args.count):
        ip = build_udp_ip(src, dst, sport, args.dport, b"bad checksum %d" % i,
                          csum="bad", ident=i)
        s.send(build_frame(mac_bytes(args.dst_mac), mac_bytes(args.src_mac),
                           parse_tags(args.tags), ip))
    print("sent %d UDP datagrams with a wrong checksum to %s port %d"
          % (args.count, dst, args.dport))
    return 0


def cmd_exchange(args):
    rng = random.Random(args.seed)
    src, dst = ipaddress.ip_address(args.src_ip), ipaddress.ip_address(
        args.dst_ip)
    tags = parse_tags(args.tags)
    smac, dmac = mac_bytes(args.src_mac), mac_bytes(args.dst_mac)
    s = open_packet_socket(args.ifname)
    sport = args.sport or rng.randint(20000, 60000)
    fails = 0
    zero_csums = 0
    partial_csums = 0
    aux_tags = 0
    ok = 0

    def fail(i, msg):
        nonlocal fails
        fails += 1
        if fails <= 20:
            print("  request %d: %s" % (i, msg))

    for i in range(args.count):
        if args.count > 1:
            size = args.min_size + (args.max_size - args.min_size) * i // (
                args.count - 1)
        else:
            size = args.max_size
        payload = rng.randbytes(size)
        if args.udp_csum == "mixed":
            csum = "zero" if i % 2 else "full"
        else:
            csum = args.udp_csum
        ip = build_udp_ip(src, dst, sport, args.dport, payload, csum, ident=i,
                          opt_words=args.ip_options)
        s.send(build_frame(dmac, smac, tags, ip))
        want = payload[::-1] if args.func == "reverse" else payload
        # Where no reply may come, only the last request waits the whole
        # timeout: a late reply to an earlier one lands in a later wait,
        # and fails all the same.
        wait = args.timeout
        if args.expect_none and i < args.count - 1:
            wait = min(wait, 0.05)
        end = time.monotonic() + wait
        reply = None
        while reply is None:
            got = recv_frame(s, end - time.monotonic())
            if got is None:
                break
            p = parse_frame(*got)
            if p and p.src == dst and p.dst == src and \
                    p.sport == args.dport and p.dport == sport:
                reply = p
        if args.expect_none:
            if reply is None:
                ok += 1
            else:
                fail(i, "got a reply, expected none")
            continue
        if reply is None:
            fail(i, "no reply within %.1fs (%d-byte payload, udp csum %s)"
                 % (args.timeout, size, csum))
            continue
        errs = []
        if reply.tags != tags:
            errs.append("tags %s, sent %s" % (
                fmt_tags(reply.tags), fmt_tags(tags)))
        if tags and not reply.aux_tag:
            # The receiving kernel always moves the outer tag into the
            # skb's metadata; finding it only in the data means the frame
            # was not what it looks like.
            errs.append("outer tag not reported in PACKET_AUXDATA")
        if reply.dst_mac != smac or reply.src_mac != dmac:
            errs.append("MACs %s -> %s not swapped" % (
                mac_str(reply.src_mac), mac_str(reply.dst_mac)))
        if not reply.ip_hdr_ok:
            errs.append("bad IPv4 header checksum")
        if not reply.ip_len_ok or not reply.udp_len_ok:
            errs.append("IP/UDP length fields inconsistent")
        if not reply.udp_csum_ok:
            errs.append("bad %sUDP checksum 0x%04x" % (
                "partial " if reply.csum_partial else "", reply.ucsum))
        if reply.payload != want:
            errs.append("payload wrong: %d bytes, want %d (%s)" % (
                len(reply.payload), len(want), args.func))
        if reply.ucsum == 0:
            zero_csums += 1
        if reply.csum_partial:
            partial_csums += 1
        if reply.aux_tag:
            aux_tags += 1
        if errs:
            fail(i, "; ".join(errs))
        else:
            ok += 1
    if args.expect_none:
        print("rawframes %s tags [%s] -> %s:%d: %d requests, %d unanswered "
              "as expected" % (args.ifname, fmt_tags(tags), dst, args.dport,
                               args.count, ok))
        return 0 if ok == args.count else 1
    print("rawframes %s tags [%s] -> %s:%d: %d requests, %d correct replies, "
          "%d bad, %d with UDP checksum 0, %d with a partial UDP checksum, "
          "%d with the outer tag in PACKET_AUXDATA"
          % (args.ifname, fmt_tags(tags), dst, args.dport, args.count, ok,
             fails, zero_csums, partial_csums, aux_tags))
    return 0 if ok == args.count else 1


def csum_kind(p):
    """full, partial, zero or bad: what a UDP checksum field holds."""
    if p.ucsum == 0:
        return "zero"
    if udp_checksum_ok(p.src, p.dst, p.udp):
        return "full"
    if udp_partial_ok(p.src, p.dst, p.udp):
        return "partial"
    return "bad"


def cmd_sniff(args):
    s = open_packet_socket(args.ifname)
    # Room for every frame of a burst, replies and other ports included.
    s.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 16 << 20)
    kinds = dict.fromkeys(("full", "partial", "zero", "bad"), 0)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))

    def outgoing(data):
        p = parse_frame(data, None)
        if p and p.dport == args.dport:
            kinds[csum_kind(p)] += 1

    if args.ready:
        open(args.ready, "w").close()
    end = time.monotonic() + args.duration
    while time.monotonic() < end and not stop:
        try:
            recv_frame(s, min(0.1, end - time.monotonic()), outgoing)
        except InterruptedError:
            pass
    # What is queued still counts (at most a second more).
    end = time.monotonic() + 1
    while time.monotonic() < end and recv_frame(s, 0.01, outgoing):
        pass
    print("sniff %s: %d UDP frames out to port %d: %s" % (
        args.ifname, sum(kinds.values()), args.dport,
        ", ".join("%d %s" % (n, k) for k, n in kinds.items())))
    return 0


def fmt_tags(tags):
    return ",".join("%04x:%d/pcp%d" % (t, c & 0xFFF, c >> 13) for t, c in tags)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    ex = sub.add_parser("exchange")
    common_args(ex)
    ex.add_argument("--func", choices=("reverse", "echo"), default="reverse")
    ex.add_argument("--min-size", type=int, default=0)
    ex.add_argument("--max-size", type=int, default=1400)
    ex.add_argument("--udp-csum",
                    choices=("full", "zero", "mixed", "bad", "partial"),
                    default="mixed",
                    help="request UDP checksums (zero: IPv4 only; bad: "
                    "wrong on purpose; partial: the pseudo-header's sum)")
    ex.add_argument("--timeout", type=float, default=2.0)
    ex.add_argument("--ip-options", type=int, default=0, metavar="WORDS",
                    help="IPv4 options: WORDS 4-byte words of NOPs")
    ex.add_argument("--expect-none", action="store_true",
                    help="the requests must go unanswered (for TIMEOUT)")
    ex.add_argument("--seed", type=int,
                    default=int.from_bytes(os.urandom(4), "little"))
    bc = sub.add_parser("bad-csum")
    common_args(bc)
    sn = sub.add_parser("sniff")
    sn.add_argument("--ifname", required=True)
    sn.add_argument("--dport", type=int, required=True)
    sn.add_argument("--duration", type=float, required=True)
    sn.add_argument("--ready", help="create this file once listening")
    args = ap.parse_args()
    if args.cmd == "exchange":
        if ":" in args.dst_ip and args.udp_csum in ("zero", "mixed"):
            args.udp_csum = "full"  # IPv6 forbids a zero UDP checksum
        return cmd_exchange(args)
    if args.cmd == "sniff":
        return cmd_sniff(args)
    return cmd_bad_csum(args)


if __name__ == "__main__":
    sys.exit(main())
