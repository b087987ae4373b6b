#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""The bad-input battery: malformed and unusual frames against reqrouter.

Each class in CLASSES is one kind of frame, built byte by byte and sent
with AF_PACKET from the client namespace on the client's veth, with the
outcome reqrouter must produce for it:

  pass:REASON   the XDP program hands the frame to the kernel and counts
                reqrouter_xdp_packets_total{verdict="pass",reason=REASON}
  drop:REASON   the frame reaches a worker, which recycles it without a
                reply and counts reqrouter_dropped_packets_total{reason=...}
  xdrop:REASON  the XDP program drops it, counted with verdict="drop"
  answered      a valid but unusual request: every frame gets a correct
                reply (checked field by field, checksums recomputed here)
  A|B           either outcome, decided by whether replies came back;
                "refused" stands for any one counter taking every frame
                (for frames whose handling is a policy choice)

For each class the battery sends COUNT frames, then one ordinary request on
each of 8 kernel UDP sockets (IPv4 and IPv6), which must all be answered;
then it waits for the metrics file and checks that the class's counter
moved by exactly COUNT, that the port's rx/tx/drop counters moved by exactly
what was sent, that no other XDP reason or drop reason moved (whatever
reasons the metrics file lists, new ones included), and that no
reply came back for a frame that should not get one. Together these say
that no frame was lost or answered twice.

  hardening_frames.py list
  hardening_frames.py battery --ifname IF --src-mac M --dst-mac M
      --src4 A --dst4 A --src6 A --dst6 A --metrics FILE [--count N]
      [--only NAME,...] [--port 1232]

Background traffic to other ports may run meanwhile: port-labelled
counters are compared for the battery's port only, and the XDP redirect
counter only from below.
"""
import argparse
import ipaddress
import os
import random
import re
import select
import socket
import sys
import time

sys.dont_write_bytecode = True  # no __pycache__ left in the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "..", "tools", "lib"))
# pylint: disable=wrong-import-position
from rawframes import (  # noqa: E402
    mac_str, open_packet_socket, parse_frame, recv_frame, describe_frame)
from hardening_classes import CLASSES, Ctx, pl  # noqa: E402
from promtext import msum, read_text, samples  # noqa: E402

SO_RCVBUFFORCE = getattr(socket, "SO_RCVBUFFORCE", 33)


def request_payload(frame, want):
    """The UDP payload the reply must answer, from the request frame."""
    p = parse_frame(frame, None)
    if p is None:
        return None
    return p.payload[:p.ulen - 8] if want == "short" else p.payload


class Metrics:
    """Prometheus text from reqrouter's --metrics-file."""

    def __init__(self, path):
        self.path = path

    def read(self):
        """{"name{labels}": value} of the file as it is now."""
        return samples(read_text(self.path))


def delta(a, b, name, *subs):
    return msum(b, name, *subs) - msum(a, name, *subs)


class Normal:
    """Ordinary requests over kernel UDP sockets: 4 IPv4 and 4 IPv6, so
    the kernel checks each reply's checksum and several RX queues see
    traffic."""

    def __init__(self, a):
        self.socks = []
        for fam, addr in ((socket.AF_INET, a.dst4), (socket.AF_INET6,
                                                      a.dst6)):
            for _ in range(4):
                s = socket.socket(fam, socket.SOCK_DGRAM)
                s.setblocking(False)
                self.socks.append((s, addr))
        self.port = a.port

    def round(self, timeout):
        """Returns the number of correct replies (of len(self.socks))."""
        want = {}
        for s, addr in self.socks:
            p = random.randbytes(random.randint(1, 200))
            s.sendto(p, (addr, self.port))
            want[s.fileno()] = (s, p[::-1])
        good = 0
        end = time.monotonic() + timeout
        while want and time.monotonic() < end:
            r, _, _ = select.select([w[0] for w in want.values()], [], [],
                                    max(0, end - time.monotonic()))
            for s in r:
                try:
                    data = s.recv(65536)
                except BlockingIOError:
                    continue
                _, exp = want.pop(s.fileno())
                good += data == exp
        # A late reply would be taken for the next round's: drain.
        for s, _ in self.socks:
            try:
                while True:
                    s.recv(65536)
            except BlockingIOError:
                pass
        return good


def outcomes(expect):
    """The outcomes a class allows: 'answered', 'pass:R' (the XDP program
    passes it to the kernel, reason R), 'xdrop:R' (the XDP program drops
    it), 'drop:R' (a worker drops it) or 'refused' (any one of those,
    whichever: for frames whose handling is policy, not parsing)."""
    return expect.split("|")


def group_key(expect):
    alts = [o for o in outcomes(expect) if o != "answered"]
    return "|".join(alts) if alts else None


def rounds(classes, size=4):
    """Classes grouped so that no two in a group can move the same counter
    (answered ones are told apart by their replies; a 'refused' class,
    at most one per group, by what is left): one metrics period then
    checks a whole group."""
    out = []
    for idx, cls in classes:
        key = group_key(cls[1])
        for r in out:
            if len(r) < size and (key is None or key not in
                                  (group_key(c[1]) for _, c in r)):
                r.append((idx, cls))
                break
        else:
            out.append([(idx, cls)])
    return out


LABEL = re.compile(r'(\w+)="([^"]*)"')


def xdp_keys(snap):
    """(verdict, reason) of every XDP counter the metrics file has."""
    keys = set()
    for k in snap:
        if k.startswith("reqrouter_xdp_packets_total{"):
            lab = dict(LABEL.findall(k))
            keys.add((lab.get("verdict"), lab.get("reason")))
    return keys


def drop_reasons(snap):
    return {dict(LABEL.findall(k)).get("reason") for k in snap
            if k.startswith("reqrouter_dropped_packets_total{")}


def counter(kind, reason):
    """An outcome as the counter it moves: ('xdp', verdict, reason) or
    ('drop', reason)."""
    if kind == "pass":
        return ("xdp", "pass", reason)
    if kind == "xdrop":
        return ("xdp", "drop", reason)
    return ("drop", reason)


class Battery:
    def __init__(self, a):
        self.a = a
        self.metrics = Metrics(a.metrics)
        self.raw = open_packet_socket(a.ifname)
        # Background traffic shares this socket's view of the interface:
        # room for many seconds of it, so no reply is lost here.
        self.raw.setsockopt(socket.SOL_SOCKET, SO_RCVBUFFORCE, 64 << 20)
        self.normal = Normal(a)
        self.fails = 0
        self.replies = {}  # our source port -> [(frame, parsed)]
        self.sink = []
        self.notes = []
        # Frames the client's kernel sent that the test did not ask for
        # (IPv6 chatter: MLD, router or neighbour solicitations). The bed
        # is made silent; these are watched so a round is never judged on
        # a frame the test did not send.
        self.foreign = []

    def say(self, ok, msg):
        print(("ok    " if ok else "FAIL  ") + msg, flush=True)
        if not ok:
            self.fails += 1

    def bind_sink(self, sport):
        """Hold the port on the client so the kernel does not answer the
        replies to our raw requests with ICMP (the server would count it
        as not_udp)."""
        for fam, addr in ((socket.AF_INET, "0.0.0.0"), (socket.AF_INET6,
                                                         "::")):
            s = socket.socket(fam, socket.SOCK_DGRAM)
            if fam == socket.AF_INET6:
                s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1)
            s.bind((addr, sport))
            self.sink.append(s)

    def pump(self, until):
        """Collect replies from the function port until the deadline."""
        while True:
            got = recv_frame(self.raw, max(0.0, until - time.monotonic()),
                             self.outgoing)
            if got is None:
                return
            p = parse_frame(*got)
            if p and p.sport == self.a.port:
                self.replies.setdefault(p.dport, []).append((got[0], p))

    def outgoing(self, data):
        """The client's own traffic to the server is UDP between the two
        addresses (the ordinary requests and the background load); any
        other frame its kernel sends is chatter the test did not send."""
        p = parse_frame(data, None)
        ours = {ipaddress.ip_address(a) for a in (
            self.a.src4, self.a.dst4, self.a.src6, self.a.dst6)}
        if p and p.src in ours and p.dst in ours:
            return
        self.foreign.append(describe_frame(data))

    def settle(self):
        """Wait until the XDP counters other than redirects (background
        traffic) stand still and the client kernel has sent nothing of
        its own for 1.5 s, so its early IPv6 chatter (MLD reports after
        the link came up) is over: at most 10 s."""
        last, still = None, 0
        end = time.monotonic() + 10
        while time.monotonic() < end:
            snap = self.metrics.read()
            cur = {k: v for k, v in snap.items()
                   if k.startswith("reqrouter_xdp_packets_total") and
                   'reason="function"' not in k}
            cur["foreign"] = len(self.foreign)
            if len(cur) > 1 and cur == last:
                still += 1
                if still >= 15:
                    return snap
            else:
                still = 0
            last = cur
            self.pump(time.monotonic() + 0.1)
        return self.metrics.read()

    def check_reply(self, k, frame, p, payload):
        errs = []
        req = parse_frame(frame, None)
        if p.tags != (req.tags if req else []):
            errs.append("tags %s" % p.tags)
        if p.dst_mac != frame[6:12] or p.src_mac != frame[0:6]:
            errs.append("MACs %s -> %s" % (mac_str(p.src_mac),
                                           mac_str(p.dst_mac)))
        if req and (p.src != req.dst or p.dst != req.src):
            errs.append("addresses %s -> %s" % (p.src, p.dst))
        if not (p.ip_hdr_ok and p.ip_len_ok and p.udp_len_ok):
            errs.append("bad IP header checksum or lengths")
        if not p.udp_csum_ok:
            errs.append("bad UDP checksum 0x%04x" % p.ucsum)
        if p.payload != payload[::-1]:
            errs.append("payload %d bytes, want %d reversed" % (
                len(p.payload), len(payload)))
        return errs

    def send_class(self, idx, cls):
        """Send one class's frames; returns (ctx, frames sent, error)."""
        # Below the ephemeral range (32768-60999): the background load's
        # and the ordinary requests' sockets never hold these ports.
        k = Ctx(self.a, cls[5] if len(cls) > 5 else 21000 + idx)
        self.bind_sink(k.sport)
        sent = []
        for _ in range(self.a.count):
            f = cls[2](k, pl())
            try:
                self.raw.send(f)
            except OSError as e:
                return k, sent, "cannot send a %d-byte frame: %s" % (
                    len(f), e)
            sent.append(f)
        return k, sent, None

    def check_replies(self, cls, k, sent):
        """Errors about an answered class's replies, and a detail."""
        name, _, _, want, _ = cls[:5]
        replies = self.replies.get(k.sport, [])
        pending = [(f, want if isinstance(want, bytes) else
                    request_payload(f, want)) for f in sent]
        errs, bad = [], []
        for _, p in replies:
            for i, (f, pay) in enumerate(pending):
                if pay is not None and p.payload == pay[::-1]:
                    e = self.check_reply(k, f, p, pay)
                    if e:
                        bad.append("; ".join(e))
                    del pending[i]
                    break
            else:
                bad.append("an unmatched or duplicate reply (%d bytes)"
                           % len(p.payload))
        if pending:
            errs.append("%d of %d frames got no reply" % (len(pending),
                                                          len(sent)))
        errs += sorted(set(bad))[:3]
        if name.startswith("dst_mac_") and replies and \
                replies[0][1].src_mac[0] & 1:
            self.notes.append("%s: reply sent with group source MAC %s"
                              % (name, mac_str(replies[0][1].src_mac)))
        return errs, "%d correct replies" % (len(replies) - len(bad))

    def evaluate(self, rnd, sent, goods, base, snap):
        """Match one metrics snapshot against the round. Returns
        ({idx: outcome}, {idx: [errors]}, [errors no class owns])."""
        a, n = self.a, self.a.count
        pf = 'port="%d"' % a.port
        got, errs, refused = {}, {}, None
        exp = {}  # counter -> expected delta
        exp_rx = exp_tx = sum(goods)
        for idx, cls in rnd:
            errs[idx] = []
            cnt = len(sent[idx][1])
            nrep = len(self.replies.get(sent[idx][0].sport, []))
            alts = outcomes(cls[1])
            others = [o for o in alts if o != "answered"]
            if "answered" in alts and nrep >= cnt:
                got[idx] = "answered"
            elif nrep == 0 and others:
                got[idx] = others[0] if len(others) == 1 else "refused"
            else:
                got[idx] = None
                errs[idx].append("%d replies to %d frames (%s)"
                                 % (nrep, cnt, cls[1]))
                continue
            o = got[idx]
            if o == "answered":
                exp_rx += cnt
                exp_tx += cnt
            elif o == "refused":
                refused = idx
            else:
                kind, _, reason = o.partition(":")
                c = counter(kind, reason)
                exp[c] = exp.get(c, 0) + cnt
                if kind == "drop":
                    exp_rx += cnt
        # What moved, for every counter the file has.
        moved = {}
        for verdict, reason in xdp_keys(snap) | xdp_keys(base):
            if reason != "function":
                moved[("xdp", verdict, reason)] = delta(
                    base, snap, "reqrouter_xdp_packets_total",
                    'verdict="%s"' % verdict, 'reason="%s"' % reason)
        for reason in drop_reasons(snap) | drop_reasons(base):
            moved[("drop", reason)] = delta(
                base, snap, "reqrouter_dropped_packets_total", pf,
                'reason="%s"' % reason)
        rx = delta(base, snap, "reqrouter_rx_packets_total", pf)
        tx = delta(base, snap, "reqrouter_tx_packets_total", pf)
        redirect = delta(base, snap, "reqrouter_xdp_packets_total",
                         'reason="function"')
        for c in exp:
            moved.setdefault(c, 0)
        left = {c: moved[c] - exp.get(c, 0) for c in moved}
        if refused is not None:
            cnt = len(sent[refused][1])
            hit = [c for c, v in left.items() if v == cnt]
            rest = [c for c, v in left.items() if v and v != cnt]
            if len(hit) == 1 and not rest and \
                    (hit[0][0] == "drop") == (rx - exp_rx == cnt):
                c = hit[0]
                left[c] = 0
                if c[0] == "drop":
                    exp_rx += cnt
                    got[refused] = "drop:" + c[1]
                else:
                    got[refused] = ("pass:" if c[1] == "pass" else
                                    "xdrop:") + c[2]
            else:
                got[refused] = None
                errs[refused].append("no reply, and no single counter "
                                     "took all %d frames" % cnt)
        shared = []
        owner = {}
        for idx, cls in rnd:
            o = got.get(idx)
            if o and o != "answered":
                kind, _, reason = o.partition(":")
                owner[counter(kind, reason)] = idx
        for c, v in sorted(left.items()):
            if v:
                msg = "%s +%d, want +%d" % ("/".join(c[1:]) if c[0] == "xdp"
                                            else "dropped/" + c[1],
                                            moved[c], moved[c] - v)
                if c in owner:
                    errs[owner[c]].append(msg)
                else:
                    shared.append(msg)
        if rx != exp_rx:
            shared.append("rx +%d, want +%d" % (rx, exp_rx))
        if tx != exp_tx:
            shared.append("tx +%d, want +%d" % (tx, exp_tx))
        if redirect < exp_rx:  # background traffic may add to it
            shared.append("xdp redirect +%d, want >= %d"
                          % (redirect, exp_rx))
        for m in ("reqrouter_kick_errors_total",
                  "reqrouter_xsk_rx_invalid_descs_total",
                  "reqrouter_xsk_tx_invalid_descs_total"):
            d = delta(base, snap, m)
            if d:
                shared.append("%s +%d" % (m, d))
        return got, errs, shared

    def run_round(self, rnd, base):
        """Send the classes of one round, an ordinary request on every
        socket after each, then wait until the metrics and the replies
        add up exactly (or the time is up)."""
        sent, send_errs, goods = {}, {}, []
        foreign_before = len(self.foreign)
        for idx, cls in rnd:
            k, frames, err = self.send_class(idx, cls)
            sent[idx] = (k, frames)
            send_errs[idx] = [err] if err else []
            good = self.normal.round(3.0)
            goods.append(good)
            if good != len(self.normal.socks):
                send_errs[idx].append(
                    "only %d of %d ordinary requests answered after it"
                    % (good, len(self.normal.socks)))
        end = time.monotonic() + self.a.wait
        while True:
            self.pump(time.monotonic() + 0.1)
            snap = self.metrics.read()
            got, errs, shared = self.evaluate(rnd, sent, goods, base, snap)
            if not shared and not any(errs.values()):
                break
            if time.monotonic() >= end:
                break
        self.pump(time.monotonic() + 0.05)  # a late duplicate shows here
        for (idx, cls), good in zip(rnd, goods):
            k, frames = sent[idx]
            o = got.get(idx)
            e = send_errs[idx] + errs[idx]
            if o == "answered":
                re, detail = self.check_replies(cls, k, frames)
                e += re
            else:
                extra = len(self.replies.get(k.sport, []))
                if extra and o:
                    e.append("%d replies to frames that got none" % extra)
                kind, _, reason = (o or "?:?").partition(":")
                detail = {"pass": "xdp pass/%s", "xdrop": "xdp drop/%s",
                          "drop": "dropped/%s"}.get(kind, "%s") % reason
                detail += " +%d" % len(frames)
            self.say(not e, "%-36s %-20s %s" % (
                cls[0], cls[1], "; ".join(e) if e else
                "%s%s, %d/%d ordinary answered after it" % (
                    "" if "|" not in cls[1] else "-> ", detail, good,
                    len(self.normal.socks))))
            if e:
                pass
            elif o == "answered" and cls[4]:
                self.notes.append("%s: answered (%s)" % (cls[0], cls[4]))
            elif "|" in cls[1]:
                self.notes.append("%s: %s" % (cls[0], o if o == "answered"
                                              else "refused, " + detail))
        if shared:
            self.say(False, "round [%s]: %s" % (
                " ".join(c[0] for _, c in rnd), "; ".join(shared)))
        chatter = self.foreign[foreign_before:]
        if chatter:
            self.say(False, "round [%s]: the client kernel sent %d frame(s) "
                     "of its own meanwhile, so the counts above may include "
                     "them: %s" % (" ".join(c[0] for _, c in rnd),
                                   len(chatter), "; ".join(chatter[:4])))
        return snap

    def run(self, classes):
        base = self.settle()
        if not base:
            self.say(False, "no metrics at %s" % self.a.metrics)
            return 1
        quiet_from = len(self.foreign)  # chatter while settling is fine
        for rnd in rounds(classes):
            base = self.run_round(rnd, base)
        chatter = len(self.foreign) - quiet_from
        self.say(not chatter, "the bed stayed silent: the client kernel sent "
                 "%d frame(s) of its own during the rounds" % chatter)
        for n in self.notes:
            print("note  " + n)
        print("battery: %d classes, %d frames each, %d failed"
              % (len(classes), self.a.count, self.fails))
        return 1 if self.fails else 0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("list")
    b = sub.add_parser("battery")
    for opt in ("ifname", "src-mac", "dst-mac", "src4", "dst4", "src6",
                "dst6", "metrics"):
        b.add_argument("--" + opt, required=True)
    b.add_argument("--port", type=int, default=1232,
                   help="the reverse function's port")
    b.add_argument("--count", type=int, default=16)
    b.add_argument("--wait", type=float, default=6.0,
                   help="seconds to wait for the metrics per class")
    b.add_argument("--only", default="")
    a = ap.parse_args()
    if a.cmd == "list":
        for c in CLASSES:
            print("%-36s %s" % (c[0], c[1]))
        print("%d classes" % len(CLASSES))
        return 0
    only = set(filter(None, a.only.split(",")))
    classes = [(i, c) for i, c in enumerate(CLASSES)
               if not only or c[0] in only]
    if only and len(classes) != len(only):
        print("unknown class in --only")
        return 2
    return Battery(a).run(classes)


if __name__ == "__main__":
    sys.exit(main())
