#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""dnscompare.py's reading of DNS replies: a reply from the wire or from
kdig's output turned into one normal form, section by section, so that
two servers' replies compare field by field (what may differ left out).
"""
import re
import socket
import struct

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
# A server's ADDR@PORT( in kdig's warnings.
SERVER_AT = re.compile(r"\S+@\d+\(")
SECTIONS = ["opcode", "rcode", "flags", "edns", "question", "answer",
            "authority", "additional", "warnings"]


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
            # "truncated reply from 192.0.2.1@53(UDP), retrying over
            # TCP": the same words from either server.
            m["warnings"].append(SERVER_AT.sub("SERVER(", line[3:]))
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


def cookie_shape(o):
    """A COOKIE option (kdig's "COOKIE: HEX" or our "COOKIE=hex") as what
    two servers must agree on: its shape, the server cookie's version and
    length, not its bytes (another secret, another time; kdig's +cookie
    makes a new client cookie each run)."""
    name = o.split(":")[0].split("=")[0].strip()
    if name != "COOKIE":
        return o
    val = o[len(name):].lstrip(":= ").lower()
    if len(val) <= 16:
        return "COOKIE client %d bytes" % (len(val) // 2)
    return "COOKIE client %d bytes, server version %s, %d bytes" % (
        min(len(val), 16) // 2, val[16:18], (len(val) - 16) // 2)


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
        e["options"] = sorted(cookie_shape(o) for o in e["options"]
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
