#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Ask two DNS servers the same questions and compare the answers.

  dnscompare.py A B [--allow FILE] [--only LABEL...] [--list] [--show]
  dnscompare.py --self-test

A and B are ADDR@PORT (IPv6 addresses as they are). Every case runs against
both: the kdig cases through kdig (knot-dnsutils) over UDP, the raw cases
as hand-built datagrams from this script, for what kdig cannot send
(another opcode, malformed questions, broken EDNS). Each pair of replies is
compared section by section: opcode, rcode (extended included), flags,
EDNS (version, DO, UDP size, options), question, answer, authority and
additional, with the owner names' case. Ignored, because they may
legitimately differ: the message ID, the order of records within an RRset,
the NSID option (a server's own name), the message size (compression is
the server's choice). A case that gets no reply from either server agrees.

Equal answers of different sizes are noted, not counted: the size is
the server's choice of compression and options (NSID).

Every mismatch is printed with both sides. A mismatch whose case label and
section are on the allow-list (FILE: "LABEL<TAB>SECTION<TAB>why" lines,
'#' comments) is printed as allowed; any other makes the exit status 1.
Exit status 2: the harness itself failed (kdig missing, a case broken).
--self-test checks the comparison on replies built here, with no server:
what must count as a difference does, what may differ does not.

The cases name records of configs/example.zone (example.com.), with the
two CNAMEs tests/integration/dns_knot.sh adds (wcname, dcname). kdig runs
with +noidn first, or it would lower-case the names it sends; truncation
cases add +ignore, so a truncated reply is compared as it came instead of
being retried over TCP. --show prints each case's replies in one line.
"""
import argparse
import select
import socket
import struct
import subprocess
import sys
import time

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
]

TYPES = {
    1: "A", 2: "NS", 5: "CNAME", 6: "SOA", 12: "PTR", 15: "MX", 16: "TXT",
    28: "AAAA", 33: "SRV", 41: "OPT", 250: "TSIG", 251: "IXFR",
    252: "AXFR", 255: "ANY", 257: "CAA",
}
CLASSES = {1: "IN", 3: "CH", 4: "HS", 254: "NONE", 255: "ANY"}
OPCODES = {0: "QUERY", 1: "IQUERY", 2: "STATUS", 4: "NOTIFY", 5: "UPDATE"}
RCODES = {
    0: "NOERROR", 1: "FORMERR", 2: "SERVFAIL", 3: "NXDOMAIN", 4: "NOTIMP",
    5: "REFUSED", 6: "YXDOMAIN", 7: "YXRRSET", 8: "NXRRSET", 9: "NOTAUTH",
    10: "NOTZONE", 16: "BADVERS",
}
FLAG_BITS = [("qr", 15), ("aa", 10), ("tc", 9), ("rd", 8), ("ra", 7),
             ("z", 6), ("ad", 5), ("cd", 4)]
# EDNS options a server fills in about itself; never compared.
IGNORED_OPTIONS = {"NSID"}
OPTION_NAMES = {3: "NSID", 8: "ECS", 9: "EXPIRE", 10: "COOKIE", 12: "PADDING"}
SECTIONS = ["opcode", "rcode", "flags", "edns", "question", "answer",
            "authority", "additional", "warnings"]


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
    ("raw qtype AXFR over UDP", header() + question("example.com", 252)),
    ("raw qtype IXFR over UDP", header() + question("example.com", 251)),
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
]


# --- the normal form of a reply ---------------------------------------------

class Malformed(Exception):
    pass


def read_name(msg, off, depth=0):
    """The name at off in presentation form (case kept) and the offset
    after it in the message."""
    labels = []
    end = None
    seen = 0
    while True:
        if off >= len(msg):
            raise Malformed("name runs past the end")
        n = msg[off]
        if n & 0xC0 == 0xC0:
            if off + 1 >= len(msg):
                raise Malformed("cut compression pointer")
            ptr = (n & 0x3F) << 8 | msg[off + 1]
            if end is None:
                end = off + 2
            if ptr >= off or seen > 128:
                raise Malformed("compression pointer forward or looping")
            seen += 1
            off = ptr
            continue
        if n & 0xC0:
            raise Malformed("extended label type %#x" % n)
        off += 1
        if n == 0:
            break
        if off + n > len(msg):
            raise Malformed("label runs past the end")
        label = ""
        for b in msg[off:off + n]:
            c = chr(b)
            if c in ".\\\"();@$ " or b < 0x21 or b > 0x7E:
                label += "\\%03d" % b if (b < 0x21 or b > 0x7E) else "\\" + c
            else:
                label += c
        labels.append(label)
        off += n
    name = ".".join(labels) + "."
    if len(name) > 1 and sum(len(lb) for lb in labels) + len(labels) > 255:
        raise Malformed("name longer than 255")
    return name, end if end is not None else off


def rdata_text(msg, rtype, off, rdlen):
    end = off + rdlen
    data = msg[off:end]
    try:
        if rtype == 1 and rdlen == 4:
            return socket.inet_ntop(socket.AF_INET, data)
        if rtype == 28 and rdlen == 16:
            return socket.inet_ntop(socket.AF_INET6, data)
        if rtype in (2, 5, 12):
            name, after = read_name(msg, off)
            if after != end:
                raise Malformed("rdata length")
            return name
        if rtype == 15:
            name, after = read_name(msg, off + 2)
            if after != end:
                raise Malformed("rdata length")
            return "%d %s" % (struct.unpack(">H", data[:2])[0], name)
        if rtype == 6:
            mname, o = read_name(msg, off)
            rname, o = read_name(msg, o)
            if end - o != 20:
                raise Malformed("SOA length")
            return "%s %s %d %d %d %d %d" % ((mname, rname) +
                                             struct.unpack(">5I", msg[o:end]))
        if rtype == 16:
            parts, o = [], 0
            while o < rdlen:
                n = data[o]
                if o + 1 + n > rdlen:
                    raise Malformed("TXT string length")
                parts.append('"%s"' % data[o + 1:o + 1 + n].decode(
                    "latin-1").encode("unicode_escape").decode())
                o += 1 + n
            return " ".join(parts)
    except (struct.error, ValueError) as e:
        raise Malformed(str(e))
    return "\\# %d %s" % (rdlen, data.hex())


def parse_wire(msg):
    """A reply's normal form (see normal())."""
    if len(msg) < 12:
        raise Malformed("%d bytes: no header" % len(msg))
    _, fl, qd, an, ns, ar = struct.unpack(">HHHHHH", msg[:12])
    m = {
        "opcode": OPCODES.get(fl >> 11 & 0xF, "OPCODE%d" % (fl >> 11 & 0xF)),
        "rcode": fl & 0xF,
        "flags": sorted(f for f, bit in FLAG_BITS if fl >> bit & 1),
        "edns": None, "question": [], "answer": [], "authority": [],
        "additional": [], "warnings": [], "size": len(msg),
    }
    off = 12
    for _ in range(qd):
        name, off = read_name(msg, off)
        if off + 4 > len(msg):
            raise Malformed("question cut short")
        qt, qc = struct.unpack(">HH", msg[off:off + 4])
        off += 4
        m["question"].append("%s %s %s" % (
            name, CLASSES.get(qc, "CLASS%d" % qc),
            TYPES.get(qt, "TYPE%d" % qt)))
    for sec, count in (("answer", an), ("authority", ns), ("additional", ar)):
        for _ in range(count):
            name, off = read_name(msg, off)
            if off + 10 > len(msg):
                raise Malformed("record header cut short")
            rt, rc, ttl, rdlen = struct.unpack(">HHIH", msg[off:off + 10])
            off += 10
            if off + rdlen > len(msg):
                raise Malformed("rdata runs past the end")
            if rt == 41:
                if m["edns"] is not None:
                    raise Malformed("two OPT records")
                if sec != "additional" or name != ".":
                    raise Malformed("OPT out of place")
                m["edns"] = edns_from_wire(rc, ttl, msg[off:off + rdlen])
                m["rcode"] |= (ttl >> 24) << 4
            else:
                m[sec].append((name, ttl, CLASSES.get(rc, "CLASS%d" % rc),
                               TYPES.get(rt, "TYPE%d" % rt),
                               rdata_text(msg, rt, off, rdlen)))
            off += rdlen
    if off != len(msg):
        m["warnings"].append("%d bytes after the last record" %
                             (len(msg) - off))
    return m


def edns_from_wire(size, ttl, rdata):
    opts, o = [], 0
    while o < len(rdata):
        if o + 4 > len(rdata):
            raise Malformed("EDNS option cut short")
        code, n = struct.unpack(">HH", rdata[o:o + 4])
        if o + 4 + n > len(rdata):
            raise Malformed("EDNS option runs past the end")
        opts.append("%s=%s" % (OPTION_NAMES.get(code, "OPT%d" % code),
                               rdata[o + 4:o + 4 + n].hex()))
        o += 4 + n
    return {"version": ttl >> 16 & 0xFF, "do": bool(ttl & 0x8000),
            "z": ttl & 0x7FFF, "size": size, "options": opts}


def parse_kdig(text):
    """kdig's default text output, in the same normal form."""
    m = {"opcode": None, "rcode": None, "flags": [], "edns": None,
         "question": [], "answer": [], "authority": [], "additional": [],
         "warnings": [], "size": None}
    section = None
    got_header = False
    for line in text.splitlines():
        if line.startswith(";; ->>HEADER<<-"):
            got_header = True
            for part in line[15:].split(";"):
                key, _, val = part.strip().partition(": ")
                if key == "opcode":
                    m["opcode"] = val
                elif key == "status":
                    m["rcode"] = val
        elif line.startswith(";; Flags:"):
            m["flags"] = sorted(line[9:].split(";")[0].split())
        elif line.startswith(";; WARNING") or line.startswith(";; ERROR"):
            m["warnings"].append(line[3:])
        elif line.endswith("PSEUDOSECTION:") or line.endswith("SECTION:"):
            section = line[3:].split()[0].lower()
            if section == "edns":
                m["edns"] = {"options": []}
        elif line.startswith(";; Received") or line.startswith(";; Time") \
                or line.startswith(";; From"):
            section = None
            if line.startswith(";; Received ") and line.endswith(" B"):
                m["size"] = int(line.split()[2])
        elif not line.strip():
            continue
        elif section == "edns" and line.startswith(";; "):
            body = line[3:]
            if body.startswith("Version:"):
                for part in body.split(";"):
                    key, _, val = part.strip().partition(":")
                    m["edns"][key.strip().lower()] = val.strip()
            else:
                m["edns"]["options"].append(body)
        elif section == "question" and line.startswith(";; "):
            m["question"].append(" ".join(line[3:].split()))
        elif section in ("answer", "authority", "additional") and \
                not line.startswith(";"):
            f = line.split(None, 4)
            if len(f) < 4:
                m["warnings"].append("unparsed record line: " + line)
                continue
            rdata = f[4].strip() if len(f) > 4 else ""
            m[section].append((f[0], int(f[1]), f[2], f[3], rdata))
    if not got_header:
        if any("malformed" in w for w in m["warnings"]):
            return {"malformed": "; ".join(m["warnings"])}
        return {"noreply": m["warnings"]} if m["warnings"] else None
    return m


def normal(m):
    """What is compared: records grouped into RRsets in the order they
    first appear, each RRset's records sorted; ignored EDNS options
    dropped; rcode as a name."""
    if m is None or "noreply" in m:
        return m
    out = dict(m)
    if isinstance(out["rcode"], int):
        out["rcode"] = RCODES.get(out["rcode"], "RCODE%d" % out["rcode"])
    if out["edns"] is not None:
        e = dict(out["edns"])
        e["options"] = sorted(o for o in e["options"]
                              if o.split(":")[0].split("=")[0].strip()
                              not in IGNORED_OPTIONS)
        out["edns"] = e
    for sec in ("answer", "authority", "additional"):
        sets, order = {}, []
        for owner, ttl, cls, typ, rdata in out[sec]:
            key = (owner, cls, typ)
            if key not in sets:
                sets[key] = []
                order.append(key)
            sets[key].append((ttl, rdata))
        out[sec] = [(k, sorted(sets[k])) for k in order]
    return out


def show(sec, m):
    """One side of a mismatch, as lines."""
    if m is None:
        return ["(no reply)"]
    if "noreply" in m:
        return ["(no reply: %s)" % "; ".join(m["noreply"])]
    if "malformed" in m:
        return ["(malformed reply: %s)" % m["malformed"]]
    v = m[sec]
    if sec in ("answer", "authority", "additional"):
        lines = ["%s %d %s %s %s" % (k[0], ttl, k[1], k[2], rd)
                 for k, rrs in v for ttl, rd in rrs]
        return lines or ["(empty)"]
    if sec in ("question", "warnings"):
        return list(v) or ["(empty)"]
    if isinstance(v, list):
        return [" ".join(v) or "(none)"]
    return [str(v)]


def compare(a, b):
    """The sections in which a and b differ."""
    a, b = normal(a), normal(b)
    plain = lambda m: m is None or "noreply" in m or "malformed" in m
    if plain(a) or plain(b):
        if plain(a) and plain(b) and (a is None or "noreply" in a) == \
                (b is None or "noreply" in b):
            return [], a, b
        return ["reply"], a, b
    return [s for s in SECTIONS if a[s] != b[s]], a, b


# --- running the cases -----------------------------------------------------

def split_server(spec):
    addr, _, port = spec.rpartition("@")
    if not addr or not port.isdigit():
        raise SystemExit("dnscompare: server %r is not ADDR@PORT" % spec)
    return addr, int(port)


def run_kdig(server, args, timeout):
    addr, port = server
    cmd = ["kdig", "+noidn", "@" + addr, "-p", str(port),
           "+timeout=%d" % timeout, "+retry=1"] + args.split()
    try:
        r = subprocess.run(cmd, stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, timeout=timeout * 3 + 5)
    except FileNotFoundError:
        print("dnscompare: kdig not found (knot-dnsutils)")
        sys.exit(2)
    try:
        return parse_kdig(r.stdout.decode("utf-8", "replace"))
    except (ValueError, IndexError) as e:
        return {"malformed": "kdig output not understood: %s" % e}


def run_raw(servers, cases, wait):
    """Sends every raw case to every server at once, each from its own
    socket, and collects the replies for up to @wait seconds."""
    socks = {}
    for ci, (_, dgram) in enumerate(cases):
        for si, (addr, port) in enumerate(servers):
            fam = socket.AF_INET6 if ":" in addr else socket.AF_INET
            s = socket.socket(fam, socket.SOCK_DGRAM)
            s.connect((addr, port))
            qid = (0x5100 + ci * 2 + si) & 0xFFFF
            pkt = struct.pack(">H", qid) + dgram[2:] if len(dgram) >= 2 \
                else dgram
            s.send(pkt)
            socks[s] = (ci, si)
    replies = {}
    deadline = time.monotonic() + wait
    while socks and time.monotonic() < deadline:
        ready, _, _ = select.select(list(socks), [], [],
                                    max(0, deadline - time.monotonic()))
        for s in ready:
            try:
                data = s.recv(65535)
            except OSError as e:  # e.g. port unreachable
                data = None
                replies[socks[s]] = {"noreply": [str(e)]}
            if data is not None:
                try:
                    replies[socks[s]] = parse_wire(data)
                except Malformed as e:
                    replies[socks[s]] = {"malformed": str(e)}
            s.close()
            del socks[s]
    for s in socks:
        s.close()
    return [[replies.get((ci, si)) for si in range(len(servers))]
            for ci in range(len(cases))]


def load_allow(path):
    allow = {}
    if not path:
        return allow
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) < 3 or not parts[2].strip():
                raise SystemExit("dnscompare: %s:%d: want LABEL<TAB>SECTION"
                                 "<TAB>why" % (path, n))
            allow[(parts[0], parts[1])] = parts[2].strip()
    return allow


def self_test():
    """The comparison itself, on replies built here: what must count as a
    difference does, what must not does not. Returns the failures."""
    www = wire_name("www.example.com")

    def reply(flags=0x8500, rcode=0, qname=www, rrs=((60, b"\x01"),
              (60, b"\x02")), owner=www, edns=None, extra=b""):
        ar = 1 if edns is not None else 0
        m = struct.pack(">HHHHHH", 7, flags | rcode, 1, len(rrs), 0, ar)
        m += qname + struct.pack(">HH", 1, 1)
        for ttl, last in rrs:
            m += owner + struct.pack(">HHIH", 1, 1, ttl, 4) + \
                b"\xc0\x00\x02" + last
        if edns is not None:
            m += edns
        return parse_wire(m + extra)

    base = reply()
    cases = [
        ("the same reply", reply(), []),
        ("another ID only", parse_wire(b"\x12\x34" + reply_bytes(base)),
         []),
        ("records of an RRset in another order",
         reply(rrs=((60, b"\x02"), (60, b"\x01"))), []),
        ("a flag (TC)", reply(flags=0x8700), ["flags"]),
        ("AA clear", reply(flags=0x8100), ["flags"]),
        ("the rcode", reply(rcode=3), ["rcode"]),
        ("the question's case", reply(qname=wire_name("WWW.example.com")),
         ["question"]),
        ("an owner's case", reply(owner=wire_name("www.Example.com")),
         ["answer"]),
        ("a TTL", reply(rrs=((60, b"\x01"), (59, b"\x02"))), ["answer"]),
        ("a record less", reply(rrs=((60, b"\x01"),)), ["answer"]),
        ("EDNS present", reply(edns=opt()), ["edns"]),
        ("EDNS DO", (reply(edns=opt()), reply(edns=opt(do=True))),
         ["edns"]),
        ("EDNS size", (reply(edns=opt()), reply(edns=opt(size=4096))),
         ["edns"]),
        ("NSID only", (reply(edns=opt()), reply(edns=opt(
            options=struct.pack(">HH", 3, 2) + b"vm"))), []),
        ("another EDNS option", (reply(edns=opt()), reply(edns=opt(
            options=struct.pack(">HH", 15, 2) + b"\x00\x14"))),
         ["edns"]),
        ("bytes after the last record", reply(extra=b"\x00"),
         ["warnings"]),
        ("no reply", None, ["reply"]),
    ]
    fails = []
    for what, other, want in cases:
        a, b = other if isinstance(other, tuple) else (base, other)
        got, _, _ = compare(a, b)
        if got != want:
            fails.append("%s: differs in %s, expected %s" % (what, got, want))
    return fails


def reply_bytes(m):
    """Back to the wire, for the self-test's ID case: only what reply()
    makes (one question, A records)."""
    out = struct.pack(">HHHHH", 0x8500, 1, len(m["answer"]), 0, 0)
    out += wire_name("www.example.com") + struct.pack(">HH", 1, 1)
    for owner, ttl, _, _, rdata in m["answer"]:
        out += wire_name(owner) + struct.pack(">HHIH", 1, 1, ttl, 4) + \
            socket.inet_aton(rdata)
    return out


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("a", nargs="?", help="ADDR@PORT of the reference server")
    p.add_argument("b", nargs="?", help="ADDR@PORT of the server under test")
    p.add_argument("--self-test", action="store_true",
                   help="check the comparison on replies built here")
    p.add_argument("--names", default="A,B",
                   help="what to call the two servers in the output")
    p.add_argument("--allow", help="allow-list file")
    p.add_argument("--only", action="append",
                   help="run only the cases whose label starts with this")
    p.add_argument("--no-raw", action="store_true", help="kdig cases only")
    p.add_argument("--timeout", type=int, default=1,
                   help="kdig's wait for a reply, seconds")
    p.add_argument("--list", action="store_true", help="list the cases")
    p.add_argument("--show", action="store_true",
                   help="print a one-line summary of each case's replies")
    o = p.parse_args()
    if o.self_test:
        fails = self_test()
        for f in fails:
            print("self-test FAILED: " + f)
        print("self-test: %s" % ("failed" if fails else "passed"))
        return 1 if fails else 0
    if not o.b:
        p.error("two servers, A and B, are needed")
    names = o.names.split(",")
    servers = [split_server(o.a), split_server(o.b)]
    allow = load_allow(o.allow)
    pick = lambda label: not o.only or any(label.startswith(x)
                                           for x in o.only)
    kcases = [c for c in KDIG_CASES if pick(c[0])]
    rcases = [] if o.no_raw else [c for c in RAW_CASES if pick(c[0])]
    if o.list:
        for label, args in kcases:
            print("%-40s kdig %s" % (label, args))
        for label, dgram in rcases:
            print("%-40s %d bytes: %s" % (label, len(dgram), dgram.hex()))
        return 0

    results = []
    for label, args in kcases:
        results.append((label, "kdig " + args,
                        [run_kdig(s, args, o.timeout) for s in servers]))
    for (label, dgram), got in zip(rcases, run_raw(servers, rcases, 1.5)):
        results.append((label, "raw " + dgram.hex(), got))

    bad = allowed = sizes = 0
    used = set()
    for label, what, (ra, rb) in results:
        diff, na, nb = compare(ra, rb)
        if o.show:
            print("%-40s %s | %s" % (label, " ".join(show_reply(na)),
                                     " ".join(show_reply(nb))))
        for sec in diff:
            key = (label, sec)
            why = allow.get(key)
            if why:
                allowed += 1
                used.add(key)
                tag = "ALLOWED"
            else:
                bad += 1
                tag = "MISMATCH"
            print("%s  %s: %s  (%s)" % (tag, label, sec, what))
            for side, m in ((names[0], na), (names[1], nb)):
                lines = show_reply(m) if sec == "reply" else show(sec, m)
                for line in lines:
                    print("    %-10s %s" % (side + ":", line))
            if why:
                print("    allowed: %s" % why)
        if not diff and na and nb and "size" in na and "size" in nb and \
                na["size"] != nb["size"]:
            sizes += 1
            print("note  %s: the same answer in %s and %s bytes (%s)" % (
                label, na["size"], nb["size"], what))
    for key in sorted(set(allow) - used):
        print("note  allow-list entry matched nothing: %s / %s" % key)
    print("%d cases (%d kdig, %d raw): %d mismatches, %d allowed; "
          "%d equal answers of different sizes" %
          (len(results), len(kcases), len(rcases), bad, allowed, sizes))
    return 1 if bad else 0


def show_reply(m):
    if m is None:
        return ["(no reply)"]
    if "noreply" in m or "malformed" in m:
        return show("warnings", m)
    return ["%s %s %s, %d/%d/%d RRsets" % (
        m["opcode"], m["rcode"], " ".join(m["flags"]), len(m["answer"]),
        len(m["authority"]), len(m["additional"]))]


if __name__ == "__main__":
    sys.exit(main())
