#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bad-input battery's frames: builders that put a frame together byte
by byte (Ethernet, VLAN tags, IPv4, IPv6 and its extension headers, UDP)
and CLASSES, the table of frame kinds with the outcome reqrouter must
produce for each. hardening_frames.py sends them and checks the outcomes;
its docstring says what the outcomes mean.
"""
import ipaddress
import random
import struct

from rawframes import csum16, mac_bytes, pseudo_header, udp_checksum

ETH_P_IP, ETH_P_IPV6, ETH_P_ARP = 0x0800, 0x86DD, 0x0806
Q, AD = 0x8100, 0x88A8


class Ctx:
    """Addresses and the port the frames of one class are built with."""

    def __init__(self, a, sport):
        self.smac = mac_bytes(a.src_mac)
        self.dmac = mac_bytes(a.dst_mac)
        self.src4 = ipaddress.ip_address(a.src4)
        self.dst4 = ipaddress.ip_address(a.dst4)
        self.src6 = ipaddress.ip_address(a.src6)
        self.dst6 = ipaddress.ip_address(a.dst6)
        self.port = a.port
        self.sport = sport


def eth(k, ethertype, body, tags=(), dmac=None):
    f = (dmac or k.dmac) + k.smac
    for tpid, tci in tags:
        f += struct.pack("!HH", tpid, tci)
    return f + struct.pack("!H", ethertype) + body


def udp_hdr(k, payload, src, dst, ulen=None, csum="full", dport=None):
    """A UDP header and payload; the checksum covers the first ULEN bytes
    (or all, when ULEN claims more than there is)."""
    ulen = 8 + len(payload) if ulen is None else ulen
    u = struct.pack("!HHHH", k.sport, dport or k.port, ulen, 0) + payload
    if csum in ("full", "bad"):
        covered = u[:ulen] if 8 <= ulen <= len(u) else u
        c = udp_checksum(src, dst, covered)
        if csum == "bad":
            c = (c + 0x1111) & 0xFFFF or 0x1111
            # Nor the pseudo-header's sum, which a receiver trusts as a
            # checksum left to the device (partial, below).
            if c == csum16(pseudo_header(src, dst, ulen)):
                c = (c + 0x1111) & 0xFFFF or 0x1111
        u = u[:6] + struct.pack("!H", c) + u[8:]
    elif csum == "partial":
        # What a sender with TX checksum offload leaves (CHECKSUM_PARTIAL,
        # handed over as it is by veth): the pseudo-header's sum, folded,
        # not inverted, for the device to finish.
        c = csum16(pseudo_header(src, dst, ulen))
        u = u[:6] + struct.pack("!H", c) + u[8:]
    return u


def ip4(k, l4, ihl=5, opts=b"", tot=None, ttl=64, frag=0x4000, proto=17,
        version=4, hcsum="good", src=None, dst=None):
    src, dst = src or k.src4, dst or k.dst4
    tot = ihl * 4 + len(l4) if tot is None else tot
    h = struct.pack("!BBHHHBBH4s4s", version << 4 | ihl, 0, tot,
                    random.getrandbits(16), frag, ttl, proto, 0, src.packed,
                    dst.packed) + opts
    c = 0xFFFF - csum16(h[:max(ihl * 4, 20)])
    if hcsum == "bad":
        c = (c + 0x0101) & 0xFFFF
    return h[:10] + struct.pack("!H", c) + h[12:] + l4


def ip6(k, l4, nexthdr=17, plen=None, hlim=64, version=6, ext=b"",
        src=None, dst=None):
    src, dst = src or k.src6, dst or k.dst6
    body = ext + l4
    plen = len(body) if plen is None else plen
    return struct.pack("!IHBB16s16s", version << 28, plen, nexthdr, hlim,
                       src.packed, dst.packed) + body


def udp4(k, payload, csum="full", ulen=None, dport=None, src=None, dst=None,
         **ipkw):
    u = udp_hdr(k, payload, src or k.src4, dst or k.dst4, ulen, csum, dport)
    return ip4(k, u, src=src, dst=dst, **ipkw)


def udp6(k, payload, csum="full", ulen=None, dst=None, **ipkw):
    u = udp_hdr(k, payload, k.src6, dst or k.dst6, ulen, csum)
    return ip6(k, u, dst=dst, **ipkw)


def v4(k, payload, tags=(), dmac=None, **kw):
    return eth(k, ETH_P_IP, udp4(k, payload, **kw), tags, dmac)


def v6(k, payload, tags=(), dmac=None, **kw):
    return eth(k, ETH_P_IPV6, udp6(k, payload, **kw), tags, dmac)


def ext6(nexthdr, body):
    """An IPv6 extension header (hop-by-hop, routing, destination options)
    padded to a multiple of 8 bytes."""
    body += b"\0" * (-(len(body) + 2) % 8)
    return struct.pack("!BB", nexthdr, (len(body) + 2) // 8 - 1) + body


def frag6(nexthdr, offset, more):
    return struct.pack("!BBHI", nexthdr, 0, offset << 3 | more,
                       random.getrandbits(32))


def pl(n=24):
    return random.randbytes(n)


def truncated_udp4(k, p):
    """IPv4 whose total length leaves 4 bytes for UDP, and the frame ends
    there too."""
    u = udp_hdr(k, b"", k.src4, k.dst4)[:4]
    return eth(k, ETH_P_IP, ip4(k, u))


def arp_request(k, p):
    body = struct.pack("!HHBBH6s4s6s4s", 1, ETH_P_IP, 6, 4, 1, k.smac,
                       k.src4.packed, b"\0" * 6, k.dst4.packed)
    return eth(k, ETH_P_ARP, body)


def tcp_syn(k, p):
    tcp = struct.pack("!HHIIBBHHH", k.sport, k.port, 1, 0, 5 << 4, 0x02,
                      1024, 0, 0)
    return eth(k, ETH_P_IP, ip4(k, tcp, proto=6))


def padded(k, p):
    """Ethernet padding after a consistent IPv4 packet (as short frames on
    a real wire have): answered, the padding not echoed."""
    return v4(k, p) + b"\xa5" * 30


def udp_shorter_than_ip(k, p):
    """UDP length < IP payload: the datagram is the first ULEN bytes."""
    u = udp_hdr(k, p, k.src4, k.dst4, ulen=8 + len(p) - 10)
    return eth(k, ETH_P_IP, ip4(k, u))


BCAST = b"\xff" * 6
MCAST = bytes.fromhex("01005e000001")
OTHER = bytes.fromhex("020000c0ffee")
OVER = 1476  # a payload making a 1504-byte IPv4 packet: 4 over the MTU

def passed(name, reason, build):
    """A class the XDP program hands to the kernel, counted as REASON."""
    return (name, "pass:" + reason, build, None, "")


# name, expected outcome(s) (see outcomes()), builder(ctx, payload) ->
# frame, the request payload a reply must answer (None: the one given),
# a note printed when the class is answered, and optionally a fixed UDP
# source port. "answered|refused" would mark a frame whose handling is
# policy: either is fine as long as it is exact. None is left:
# docs/SECURITY.md ("What the XDP program answers") names the outcome of
# group and foreign addresses, checksums and loop-prone ports.
CLASSES = [
    # Ethernet and VLAN headers cut short
    passed("eth_header_only_ipv4", "malformed",
     lambda k, p: eth(k, ETH_P_IP, b"")),
    passed("eth_header_only_ipv6", "malformed",
     lambda k, p: eth(k, ETH_P_IPV6, b"")),
    passed("vlan_tag_truncated", "malformed",
     lambda k, p: k.dmac + k.smac + struct.pack("!HH", Q, 100)),
    passed("vlan_tag_no_l3", "malformed",
     lambda k, p: eth(k, ETH_P_IP, b"", tags=[(Q, 100)])),
    passed("qinq_inner_tag_truncated", "malformed",
     lambda k, p: k.dmac + k.smac + struct.pack("!HHH", AD, 200, Q) + b"\0"),
    passed("three_vlan_tags", "not_ip",
     lambda k, p: v4(k, p, tags=[(AD, 300), (Q, 200), (Q, 100)])),
    # a VLAN the host does not answer (the test's vlans are 100, 200, 300)
    passed("vlan_not_the_hosts", "vlan_not_ours",
     lambda k, p: v4(k, p, tags=[(Q, 999)])),
    passed("qinq_inner_not_the_hosts", "vlan_not_ours",
     lambda k, p: v6(k, p, tags=[(AD, 200), (Q, 999)])),
    # IPv4 header
    passed("ipv4_header_truncated", "malformed",
     lambda k, p: eth(k, ETH_P_IP, udp4(k, p)[:12])),
    passed("ipv4_ihl_0", "malformed", lambda k, p: v4(k, p, ihl=0)),
    passed("ipv4_ihl_4", "malformed", lambda k, p: v4(k, p, ihl=4)),
    passed("ipv4_ihl_15_beyond_total_length", "malformed",
     lambda k, p: v4(k, b"", ihl=15, tot=28)),
    passed("ipv4_ihl_15_beyond_frame", "malformed",
     lambda k, p: v4(k, b"", ihl=15, tot=68)),
    passed("ipv4_version_6", "malformed",
     lambda k, p: v4(k, p, version=6)),
    passed("ipv4_total_length_beyond_frame", "malformed",
     lambda k, p: v4(k, p, tot=20 + 8 + len(p) + 200)),
    passed("ipv4_total_length_65535_jumbo", "malformed",
     lambda k, p: v4(k, p, tot=65535)),
    passed("ipv4_total_length_below_ihl", "malformed",
     lambda k, p: v4(k, p, tot=12)),
    passed("ipv4_total_length_below_udp_length", "malformed",
     lambda k, p: v4(k, p, tot=20 + 8 + len(p) - 10)),
    passed("ipv4_fragment_first", "fragment",
     lambda k, p: v4(k, p, frag=0x2000)),
    passed("ipv4_fragment_later", "fragment",
     lambda k, p: v4(k, p, frag=0x2000 | 185)),
    passed("ipv4_fragment_last", "fragment",
     lambda k, p: v4(k, p, frag=185)),
    passed("ipv4_protocol_253", "not_udp",
     lambda k, p: eth(k, ETH_P_IP, ip4(k, p, proto=253))),
    passed("tcp_syn_to_function_port", "not_udp", tcp_syn),
    # UDP header
    passed("udp_header_truncated", "malformed", truncated_udp4),
    passed("udp_length_0", "malformed", lambda k, p: v4(k, p, ulen=0)),
    passed("udp_length_7", "malformed", lambda k, p: v4(k, p, ulen=7)),
    passed("udp_length_beyond_ip_payload", "malformed",
     lambda k, p: v4(k, p, ulen=8 + len(p) + 100)),
    passed("udp_port_without_function", "no_function",
     lambda k, p: v4(k, p, dport=9)),
    # other EtherTypes
    passed("ethertype_unknown_88b5", "not_ip",
     lambda k, p: eth(k, 0x88B5, p)),
    passed("ethertype_802_3_length", "not_ip",
     lambda k, p: eth(k, len(p) + 3, b"\x42\x42\x03" + p)),
    passed("arp_request", "not_ip", arp_request),
    # IPv6
    passed("ipv6_header_truncated", "malformed",
     lambda k, p: eth(k, ETH_P_IPV6, udp6(k, p)[:20])),
    passed("ipv6_version_4", "malformed", lambda k, p: v6(k, p, version=4)),
    passed("ipv6_payload_length_beyond_frame", "malformed",
     lambda k, p: v6(k, p, plen=8 + len(p) + 100)),
    passed("ipv6_udp_header_truncated", "malformed",
     lambda k, p: v6(k, p, plen=4)),
    passed("ipv6_udp_length_0", "malformed", lambda k, p: v6(k, p, ulen=0)),
    passed("ipv6_udp_length_beyond_payload", "malformed",
     lambda k, p: v6(k, p, ulen=8 + len(p) + 100)),
    passed("ipv6_hop_by_hop", "ipv6_ext_header",
     lambda k, p: v6(k, p, nexthdr=0, ext=ext6(17, b"\x01\x02\0\0"))),
    ("ipv6_routing_header", "pass:ipv6_ext_header",
     lambda k, p: v6(k, p, nexthdr=43,
                     ext=ext6(17, b"\x04\0\0\0\0\0")), None, ""),
    passed("ipv6_destination_options", "ipv6_ext_header",
     lambda k, p: v6(k, p, nexthdr=60, ext=ext6(17, b"\x01\x02\0\0"))),
    passed("ipv6_fragment_first", "ipv6_ext_header",
     lambda k, p: v6(k, p, nexthdr=44, ext=frag6(17, 0, 1))),
    passed("ipv6_fragment_later", "ipv6_ext_header",
     lambda k, p: v6(k, p, nexthdr=44, ext=frag6(17, 64, 0))),
    passed("ipv6_jumbogram_payload_length_0", "ipv6_ext_header",
     lambda k, p: v6(k, p, nexthdr=0, plen=0,
                     ext=ext6(17, struct.pack("!BBI", 0xC2, 4,
                                              8 + 8 + len(p))))),
    passed("ipv6_no_next_header", "not_udp",
     lambda k, p: eth(k, ETH_P_IPV6, ip6(k, p, nexthdr=59))),
    # larger than the MTU allows a reply to be (needs the client's MTU
    # raised to 1504: veth takes MTU + 4 bytes, room for one VLAN tag)
    ("request_over_mtu_ipv4", "drop:reply_too_big",
     lambda k, p: v4(k, random.randbytes(OVER)), None, ""),
    ("request_over_mtu_ipv6", "drop:reply_too_big",
     lambda k, p: v6(k, random.randbytes(OVER - 20)), None, ""),
    # valid but unusual: answered
    ("zero_payload_ipv4", "answered", lambda k, p: v4(k, b""), b"", ""),
    ("zero_payload_ipv6", "answered", lambda k, p: v6(k, b""), b"", ""),
    ("ipv4_ttl_0", "answered", lambda k, p: v4(k, p, ttl=0), None, ""),
    ("ipv6_hop_limit_0", "answered", lambda k, p: v6(k, p, hlim=0), None,
     ""),
    # IPv4 options (record route, timestamps, source routes) ask things
    # of the host that a reply made by swapping addresses gets wrong: the
    # XDP program hands them to the kernel now, never answered.
    passed("ipv4_options_ihl_6", "ip_options",
     lambda k, p: v4(k, p, ihl=6, opts=b"\x01\x01\x01\x00")),
    passed("ipv4_options_ihl_15", "ip_options",
     lambda k, p: v4(k, p, ihl=15, opts=b"\x01" * 40)),
    ("ethernet_padding_after_ip", "answered", padded, None, ""),
    ("udp_length_below_ip_payload", "answered", udp_shorter_than_ip,
     "short", ""),
    # The kernel's checksum rules, in both tiers (this battery runs the
    # user tier): a UDP checksum that does not check out is refused,
    # counted bad_checksum, where it used to be answered.
    ("udp_checksum_bad_ipv4", "drop:bad_checksum",
     lambda k, p: v4(k, p, csum="bad"), None, ""),
    ("udp_checksum_bad_ipv6", "drop:bad_checksum",
     lambda k, p: v6(k, p, csum="bad"), None, ""),
    # Only the pseudo-header's sum, as a veth peer or a container with
    # TX checksum offload sends it: the kernel trusts it, so do we.
    ("udp_checksum_partial_ipv4", "answered",
     lambda k, p: v4(k, p, csum="partial"), None, ""),
    ("udp_checksum_partial_ipv6", "answered",
     lambda k, p: v6(k, p, csum="partial"), None, ""),
    ("udp_checksum_zero_ipv4", "answered",
     lambda k, p: v4(k, p, csum="zero"), None, ""),
    # RFC 8200 forbids a zero UDP checksum over IPv6 and the kernel drops
    # it: docs/SECURITY.md says malformed, so that is the one outcome now.
    ("udp_checksum_zero_ipv6", "drop:malformed",
     lambda k, p: v6(k, p, csum="zero"), None, ""),
    # The kernel drops a bad IPv4 header checksum; docs/SECURITY.md says
    # malformed, no longer a policy left open.
    ("ipv4_header_checksum_bad", "drop:malformed",
     lambda k, p: v4(k, p, hcsum="bad"), None, ""),
    # Group and foreign addresses: docs/SECURITY.md names each outcome
    # (not_unicast, other_host), so they are exact now.
    passed("dst_mac_broadcast", "not_unicast",
     lambda k, p: v4(k, p, dmac=BCAST)),
    passed("dst_mac_multicast", "not_unicast",
     lambda k, p: v4(k, p, dmac=MCAST)),
    passed("dst_mac_other_host", "other_host",
     lambda k, p: v4(k, p, dmac=OTHER)),
    passed("dst_ip_subnet_broadcast", "not_unicast",
     lambda k, p: v4(k, p, dst=ipaddress.ip_address("198.18.0.255"),
                     dmac=BCAST)),
    passed("dst_ip_multicast", "not_unicast",
     lambda k, p: v4(k, p, dst=ipaddress.ip_address("224.0.0.1"),
                     dmac=MCAST)),
    passed("src_ip_limited_broadcast", "not_unicast",
     lambda k, p: v4(k, p, src=ipaddress.ip_address("255.255.255.255"))),
    # answer_for = local (the default): an address of the bed's subnet
    # that nobody holds, sent to the server's MAC, is not the host's to
    # answer: the kernel's (which drops it, not being a router).
    passed("dst_ip_not_local_ipv4", "not_local",
     lambda k, p: v4(k, p, dst=ipaddress.ip_address("198.18.0.77"))),
    passed("dst_ip_not_local_ipv6", "not_local",
     lambda k, p: v6(k, p, dst=ipaddress.ip_address("fd00:7272::77"))),
    # Loop guards: a source port that answers anything (echo) or that
    # reqrouter serves is loop_source_port, any other below the
    # function's min_source_port (default 1024) low_source_port; 1024
    # is a client's port. Exact outcomes now that docs/SECURITY.md names them.
    ("udp_source_port_7_echo", "xdrop:loop_source_port",
     lambda k, p: v4(k, p), None, "", 7),
    ("udp_source_port_1232_function", "xdrop:loop_source_port",
     lambda k, p: v6(k, p), None, "", 1232),
    ("udp_source_port_0", "xdrop:loop_source_port",
     lambda k, p: v4(k, p), None, "", 0),
    ("udp_source_port_53", "xdrop:low_source_port",
     lambda k, p: v6(k, p), None, "", 53),
    ("udp_source_port_1023", "xdrop:low_source_port",
     lambda k, p: v4(k, p), None, "", 1023),
    ("udp_source_port_1024", "answered", lambda k, p: v6(k, p), None, "",
     1024),
    ("vlan_8021q", "answered", lambda k, p: v4(k, p, tags=[(Q, 100)]),
     None, ""),
    ("vlan_8021ad_single", "answered",
     lambda k, p: v6(k, p, tags=[(AD, 100)]), None, ""),
    ("qinq_8021ad_8021q", "answered",
     lambda k, p: v4(k, p, tags=[(AD, 200), (Q, 100)]), None, ""),
    ("qinq_8021q_8021q", "answered",
     lambda k, p: v6(k, p, tags=[(Q, 200), (Q, 100)]), None, ""),
    ("vlan_full_mtu_ipv4", "answered",
     lambda k, p: v4(k, random.randbytes(1472), tags=[(Q, 100)]), None,
     ""),
    ("full_mtu_ipv6", "answered", lambda k, p: v6(k, random.randbytes(1452)),
     None, ""),
]
