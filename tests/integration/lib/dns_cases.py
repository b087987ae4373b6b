#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""dnscompare.py's questions: the kdig cases (arguments after the server)
and the raw cases, datagrams built here for what kdig cannot send (another
opcode, malformed questions, broken EDNS), with the builders they use.
Labels are what the allow-lists name; keep them stable.
"""
import struct

ZONE = "example.com."

# (label, kdig arguments after the server). Labels are what the allow-list
# names; keep them stable.
KDIG_CASES = [
    # Every type the server answers, at the apex and below it.
    ("apex SOA", "example.com SOA"),
    ("apex NS", "example.com NS"),
    ("apex A", "example.com A"),
    ("apex AAAA", "example.com AAAA"),
    ("apex MX", "example.com MX"),
    ("apex TXT", "example.com TXT"),
    ("www A", "www.example.com A"),
    ("www AAAA", "www.example.com AAAA"),
    ("ns1 A", "ns1.example.com A"),
    ("ns1 AAAA", "ns1.example.com AAAA"),
    ("mail A", "mail.example.com A"),
    ("mail AAAA", "mail.example.com AAAA"),
    ("SRV", "_sip._udp.example.com SRV"),
    ("SRV target", "sip.example.com A"),
    # NODATA: the name exists, the type does not.
    ("nodata www MX", "www.example.com MX"),
    ("nodata www TXT", "www.example.com TXT"),
    ("nodata apex CNAME", "example.com CNAME"),
    ("nodata apex SRV", "example.com SRV"),
    ("nodata www PTR", "www.example.com PTR"),
    ("nodata www CAA", "www.example.com CAA"),
    ("nodata apex DNSKEY", "example.com DNSKEY"),
    ("nodata www TYPE65280", "www.example.com TYPE65280"),
    ("nodata empty non-terminal", "b.example.com A"),
    ("nodata empty non-terminal TXT", "b.example.com TXT"),
    ("nodata empty non-terminal _udp", "_udp.example.com SRV"),
    ("below empty non-terminal", "a.b.example.com A"),
    # NXDOMAIN.
    ("nxdomain", "nothere.example.com A"),
    ("nxdomain below a name", "x.www.example.com A"),
    ("nxdomain below empty non-terminal", "x.b.example.com A"),
    ("nxdomain deep", "a.b.c.d.nothere.example.com AAAA"),
    ("nxdomain MX", "nothere.example.com MX"),
    # CNAME: the record itself, a chain inside the zone, out of it,
    # dangling, a loop.
    ("cname A", "ftp.example.com A"),
    ("cname AAAA", "ftp.example.com AAAA"),
    ("cname asked for", "ftp.example.com CNAME"),
    ("cname to nodata", "ftp.example.com MX"),
    ("cname chain A", "alias.example.com A"),
    ("cname chain AAAA", "alias.example.com AAAA"),
    ("cname chain TXT", "alias.example.com TXT"),
    ("cname chain CNAME", "alias.example.com CNAME"),
    ("cname out of zone", "outside.example.com A"),
    ("cname dangling", "dangling.example.com A"),
    ("cname loop", "loop1.example.com A"),
    ("cname to wildcard", "wcname.example.com TXT"),
    ("cname into delegation", "dcname.example.com A"),
    # Wildcards.
    ("wildcard TXT", "x.wild.example.com TXT"),
    ("wildcard deep", "a.b.wild.example.com TXT"),
    ("wildcard nodata", "x.wild.example.com A"),
    ("wildcard asked for", "*.wild.example.com TXT"),
    ("wildcard parent", "wild.example.com TXT"),
    # A delegation: a referral, not an answer.
    ("referral", "www.sub.example.com A"),
    ("referral at the cut", "sub.example.com A"),
    ("referral NS", "sub.example.com NS"),
    ("referral DS", "sub.example.com DS"),
    ("referral glue name", "ns.sub.example.com A"),
    # Case: the question comes back as asked, and so do the names written
    # as pointers to it.
    ("case www", "wWw.ExAmPlE.cOm A"),
    ("case apex NS", "EXAMPLE.COM NS"),
    ("case apex MX", "Example.Com MX"),
    ("case cname chain", "AlIaS.Example.Com A"),
    ("case nxdomain", "NoThErE.eXaMpLe.CoM A"),
    ("case nodata", "WWW.EXAMPLE.COM MX"),
    ("case wildcard", "X.WiLd.example.com TXT"),
    ("case referral", "WWW.SUB.EXAMPLE.COM A"),
    ("case SRV", "_SIP._UDP.example.com SRV"),
    ("case refused", "WWW.EXAMPLE.NET A"),
    # EDNS.
    ("edns", "www.example.com A +edns"),
    ("edns bufsize 512", "www.example.com A +bufsize=512"),
    ("edns bufsize 1232", "www.example.com A +bufsize=1232"),
    ("edns bufsize 4096", "www.example.com A +bufsize=4096"),
    ("edns bufsize 100", "www.example.com A +bufsize=100"),
    ("edns DO", "www.example.com A +dnssec"),
    ("edns nsid", "www.example.com A +nsid"),
    ("edns cookie", "www.example.com A +cookie"),
    ("edns unknown option", "www.example.com A +ednsopt=65001:cafe"),
    ("edns version 1", "www.example.com A +edns=1"),
    ("edns nxdomain", "nothere.example.com A +edns"),
    ("edns refused", "www.example.net A +edns"),
    ("edns referral", "www.sub.example.com A +edns"),
    # Header flags in the query.
    ("flags no RD", "www.example.com A +norecurse"),
    ("flags CD", "www.example.com A +cdflag"),
    ("flags no AD", "www.example.com A +noadflag"),
    ("flags AA TC RA Z in query",
     "www.example.com A +aaflag +tcflag +raflag +zflag"),
    # Truncation: an RRset of about 700 bytes (long) and of about 2000
    # (huge); longalias is a CNAME to long.
    ("tc long no edns", "long.example.com TXT +noedns +notcp +ignore"),
    ("tc long bufsize 1232", "long.example.com TXT +bufsize=1232 +notcp +ignore"),
    ("tc long bufsize 512", "long.example.com TXT +bufsize=512 +notcp +ignore"),
    ("tc long bufsize 700", "long.example.com TXT +bufsize=700 +notcp +ignore"),
    ("tc huge no edns", "huge.example.com TXT +noedns +notcp +ignore"),
    ("tc huge bufsize 1232", "huge.example.com TXT +bufsize=1232 +notcp +ignore"),
    ("tc huge bufsize 4096", "huge.example.com TXT +bufsize=4096 +notcp +ignore"),
    ("tc via cname no edns", "longalias.example.com TXT +noedns +notcp +ignore"),
    ("tc via cname bufsize 1232",
     "longalias.example.com TXT +bufsize=1232 +notcp +ignore"),
    # big: an RRset of over 6 KB (25 TXT records), more than any UDP size.
    ("tc big no edns", "big.example.com TXT +noedns +notcp +ignore"),
    ("tc big bufsize 1232", "big.example.com TXT +bufsize=1232 +notcp +ignore"),
    ("tc big bufsize 4096", "big.example.com TXT +bufsize=4096 +notcp +ignore"),
    # The TC bit followed: kdig's default retries a truncated reply over
    # TCP, and the whole answer must be Knot's.
    ("follow long no edns", "long.example.com TXT +noedns"),
    ("follow huge bufsize 1232", "huge.example.com TXT +bufsize=1232"),
    ("follow huge bufsize 4096", "huge.example.com TXT +bufsize=4096"),
    ("follow big no edns", "big.example.com TXT +noedns"),
    ("follow big bufsize 1232", "big.example.com TXT +bufsize=1232"),
    ("follow big bufsize 4096", "big.example.com TXT +bufsize=4096"),
    ("follow via cname", "longalias.example.com TXT +noedns"),
    # Outside the zone, and other classes.
    ("refused other zone", "www.example.net A"),
    ("refused parent", "com NS"),
    ("refused root", ". NS"),
    ("refused suffix match", "wwwexample.com A"),
    ("refused zone as label", "example.com.example.org A"),
    ("class CH", "example.com SOA -c CH"),
    ("class CH version.bind", "version.bind TXT -c CH"),
    ("class HS", "www.example.com A -c CLASS4"),
    # Types that are not plain lookups.
    ("ANY", "example.com ANY"),
    ("ANY www", "www.example.com ANY"),
    ("NOTIFY opcode", "example.com NOTIFY"),
    # DNS Cookies, both with Knot's mod-cookies defaults: BADCOOKIE over
    # UDP without a valid server cookie (a cookie from another client,
    # long expired: RFC 9018 A.1's), the answer over TCP; the server
    # cookies themselves differ (dns_wire.normal()).
    ("cookie client alone", "www.example.com A +cookie=2464c4abcf10c957 +nobadcookie"),
    ("cookie invalid", "www.example.com A +nobadcookie "
     "+cookie=2464c4abcf10c957010000005cf79f111f8130c3eee29480"),
    ("cookie refused zone", "www.example.net A +cookie=2464c4abcf10c957 +nobadcookie"),
    ("cookie nxdomain", "nothere.example.com A +cookie"),
    ("cookie CH version.bind", "version.bind TXT -c CH +cookie=2464c4abcf10c957 +nobadcookie"),
]

# --- raw queries -----------------------------------------------------------

def wire_name(name):
    out = b""
    for label in name.rstrip(".").split("."):
        if label:
            out += bytes([len(label)]) + label.encode()
    return out + b"\0"


def header(qd=1, an=0, ns=0, ar=0, opcode=0, flags=0x0100, rcode=0, qid=0):
    return struct.pack(">HHHHHH", qid, flags | opcode << 11 | rcode, qd, an,
                       ns, ar)


def question(name="www.example.com", qtype=1, qclass=1):
    return wire_name(name) + struct.pack(">HH", qtype, qclass)


def opt(size=1232, version=0, do=False, options=b"", owner=b"\0", rcode=0):
    ttl = rcode << 24 | version << 16 | (0x8000 if do else 0)
    return owner + struct.pack(">HHIH", 41, size, ttl, len(options)) + options


A_RR = wire_name("www.example.com") + struct.pack(">HHIH", 1, 1, 60, 4) + \
    bytes([192, 0, 2, 1])

# (label, datagram). The ID (first two bytes) is set per server when sent.
RAW_CASES = [
    ("raw plain query", header() + question()),
    ("raw case preserved", header() + question("wWw.eXaMpLe.CoM")),
    ("raw opcode IQUERY", header(opcode=1) + question()),
    ("raw opcode STATUS", header(opcode=2) + question()),
    ("raw opcode 3", header(opcode=3) + question()),
    ("raw opcode UPDATE", header(opcode=5, flags=0, qd=1) +
     question("example.com", 6)),
    ("raw opcode 15", header(opcode=15) + question()),
    ("raw no question", header(qd=0)),
    ("raw no question with EDNS", header(qd=0, ar=1) + opt()),
    ("raw two questions", header(qd=2) + question() + question()),
    ("raw header only, QDCOUNT 1", header()),
    ("raw question cut in the name", header() + question()[:7]),
    ("raw question without type and class", header() + wire_name("www.example.com")),
    ("raw question without class", header() + question()[:-2]),
    ("raw 11 bytes", header()[:11]),
    ("raw empty datagram", b""),
    ("raw QR set (a response)", header(flags=0x8100) + question()),
    ("raw trailing garbage", header() + question() + b"\x01\x02\x03"),
    ("raw compression pointer in question",
     header() + b"\x03www\xc0\x0c" + struct.pack(">HH", 1, 1)),
    ("raw compression loop in question",
     header() + b"\xc0\x0c" + struct.pack(">HH", 1, 1)),
    ("raw label of 64 bytes", header() + b"\x40" + b"a" * 64 +
     wire_name("example.com") + struct.pack(">HH", 1, 1)),
    ("raw name over 255 bytes", header() +
     b"".join(b"\x3f" + b"a" * 63 for _ in range(4)) + wire_name("example.com") +
     struct.pack(">HH", 1, 1)),
    ("raw answer record in a query", header(an=1) + question() + A_RR),
    ("raw authority record in a query", header(ns=1) + question() + A_RR),
    ("raw count past the end", header(ar=1) + question()),
    ("raw two OPT records", header(ar=2) + question() + opt() + opt()),
    ("raw OPT owner not root", header(ar=1) + question() +
     opt(owner=wire_name("example.com"))),
    ("raw OPT in answer section", header(an=1) + question() + opt()),
    ("raw OPT option cut short", header(ar=1) + question() +
     opt(options=struct.pack(">HH", 65001, 8) + b"\x01\x02")),
    ("raw OPT with rdata past the end", header(ar=1) + question() +
     opt()[:-2] + struct.pack(">H", 40)),
    ("raw OPT UDP size 0", header(ar=1) + question() + opt(size=0)),
    ("raw OPT version 1", header(ar=1) + question() + opt(version=1)),
    ("raw OPT version 255 with DO", header(ar=1) + question() +
     opt(version=255, do=True)),
    ("raw OPT extended rcode in query", header(ar=1) + question() +
     opt(rcode=1)),
    ("raw OPT Z flags", header(ar=1) + question() +
     struct.pack(">BHHIH", 0, 41, 1232, 0x7fff, 0)),
    ("raw rcode in query", header(rcode=5) + question()),
    ("raw qtype 0", header() + question(qtype=0)),
    ("raw qtype OPT", header() + question(qtype=41)),
    ("raw qtype AXFR", header() + question("example.com", 252)),
    ("raw qtype IXFR", header() + question("example.com", 251)),
    ("raw qtype TSIG", header() + question(qtype=250)),
    ("raw qclass ANY", header() + question(qclass=255)),
    ("raw qclass NONE", header() + question(qclass=254)),
    ("raw qclass 0", header() + question(qclass=0)),
    ("raw root name", header() + question(".", 2)),
    ("raw name with a dot in a label", header() +
     b"\x07www.exa\x03com\x00" + struct.pack(">HH", 1, 1)),
    ("raw name with a zero byte", header() + b"\x03w\x00w" +
     wire_name("example.com") + struct.pack(">HH", 1, 1)),
    ("raw 512 bytes of padding after", header() + question() + bytes(400)),
    # COOKIE options of lengths no cookie has (RFC 7873 5.2.2): FORMERR.
    ("raw cookie of 7 bytes", header(ar=1) + question() +
     opt(options=struct.pack(">HH", 10, 7) + bytes(7))),
    ("raw cookie of 12 bytes", header(ar=1) + question() +
     opt(options=struct.pack(">HH", 10, 12) + bytes(12))),
    ("raw cookie of 41 bytes", header(ar=1) + question() +
     opt(options=struct.pack(">HH", 10, 41) + bytes(41))),
    ("raw cookie empty", header(ar=1) + question() +
     opt(options=struct.pack(">HH", 10, 0))),
]

# Over TCP, on one connection, in this order (dnscompare.py --tcp): kdig
# +keepopen asks the kdig form of each one after another, and the wire
# forms go in one write, pipelined. (label, kdig arguments or None, the
# message; its ID is set when sent.) Answers of every kind, big's 6 KB
# among them, and errors; each gets a reply.
PIPELINE_CASES = [
    ("apex SOA", "example.com SOA", header() + question("example.com", 6)),
    ("apex TXT", "example.com TXT", header() + question("example.com", 16)),
    ("big TXT", "big.example.com TXT",
     header() + question("big.example.com", 16)),
    ("nxdomain", "nothere.example.com A",
     header() + question("nothere.example.com")),
    ("cname chain A", "alias.example.com A",
     header() + question("alias.example.com")),
    ("referral", "www.sub.example.com A",
     header() + question("www.sub.example.com")),
    ("huge TXT edns", "huge.example.com TXT +bufsize=1232",
     header(ar=1) + question("huge.example.com", 16) + opt()),
    ("refused other zone", "www.example.net A",
     header() + question("www.example.net")),
    ("wildcard TXT", "x.wild.example.com TXT",
     header() + question("x.wild.example.com", 16)),
    ("edns DO", "www.example.com A +dnssec",
     header(ar=1) + question() + opt(do=True)),
    ("edns version 1", "www.example.com A +edns=1",
     header(ar=1) + question() + opt(version=1)),
    ("case www", "wWw.ExAmPlE.cOm A", header() + question("wWw.ExAmPlE.cOm")),
    ("NOTIFY", "example.com NOTIFY",
     header(opcode=4, flags=0x0400) + question("example.com", 6)),
    ("opcode 3 (NOTIMP)", None, header(opcode=3) + question()),
    ("www A", "www.example.com A", header() + question()),
    # Last: knotd closes the connection once it has answered FORMERR.
    ("trailing garbage (FORMERR)", None,
     header() + question() + b"\x01\x02\x03"),
]
