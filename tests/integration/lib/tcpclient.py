#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A client of functions served over TCP, for the integration tests.

Every message goes with a two-byte big-endian length ahead of it, as does
every reply (tcp = yes, src/daemon/tcp.c). Each run prints one JSON object
on stdout (the shell reads it with json_eval), with a "summary" line for
people; the exit status is 0 unless the client itself failed.

  tcpclient.py pipeline ADDR PORT [-n N] [--min-size B] [--max-size B]
                        [--shut]
      N messages of sizes spread over [min, max] (both ends included),
      shuffled, random, sent in one write by a thread while the replies are
      read: sent, answered, correct (the reply at position i is message i's),
      ms; --shut: a FIN right behind the last message, and how says whether
      the server closed once it had answered them all (eof).
  tcpclient.py parallel ADDR PORT [--slow N] [--slow-size B] [--gap S] [-n N]
      A first connection sends N messages byte by byte, GAP seconds between
      bytes; once it is under way a second connection pipelines -n
      messages: slow_correct, slow_ms, fast_correct, fast_ms and
      slow_busy (the first was still mid-message when the second was done).
  tcpclient.py half ADDR PORT [--length B] [--send B] [--meanwhile N]
      Sends the first --send bytes of a framed message of --length bytes
      and stops; meanwhile N messages go one after another on a second
      connection: closed_ms (from the half message to the server's close),
      how (eof, reset, open), meanwhile_correct, meanwhile_max_ms.
  tcpclient.py idle ADDR PORT [--wait S]
      One message answered, then nothing: closed_ms from the reply to the
      server's close, how.
  tcpclient.py keepalive ADDR PORT [--every S] [--for S]
      A message every S seconds for --for seconds on one connection:
      sent, correct, how (open if the server never closed it).
  tcpclient.py conns ADDR PORT STEP...
      Connections held open together, one STEP at a time: "ask" (or
      ask@SRC, from source address SRC; ask:TEXT sends TEXT; both:
      ask@SRC:TEXT) connects and sends one message: answered (the right
      reply; the connection is kept), closed (EOF or reset, no reply),
      silent (nothing within --timeout), wrong or refused. "again" asks
      every connection still held once more: answered if all answer.
      "each" asks each of them once more: one letter a connection, in the
      order they were opened: a (answered), c (closed), s (silent), w
      (wrong). "half" (or half@SRC) connects and sends one byte of a
      message's length, and holds the connection so, busy ("begun"; not
      among those asked again). "drop" closes the oldest one held.
      "sleep:S" waits. A step from an IPv6 SRC goes to --addr6 when ADDR
      is IPv4. results (one word a step, space-separated), closed_max_ms
      (connect to close, of the steps that ended closed).
  tcpclient.py hold ADDR PORT --from SRC*N[,SRC*N...] [--every S] [--for S]
                    [--newcomer SRC]... [--newcomer-at S]
      A pool held by a few: N connections from each SRC in turn, one
      message each (the fill), then for --for seconds a message on each
      one still open every --every seconds (0: none, they idle), each
      close by the server noted; at --newcomer-at seconds each
      --newcomer connects and sends one message. first (the fill's
      answers by word), kept (open 0.2 s after the fill), kept_from (the
      first of those, by the order opened), open_at (open after 1, 2, 3
      ... s), open_end, closed_max_ms, asked and answered (while held),
      held (their words), newcomers (word and ms of each).
  tcpclient.py slowread ADDR PORT [-n N] [--size B] [--mixed] [--chunk B]
                        [--every S] [--rcvbuf B] [--wait S]
      N messages of B bytes (--mixed: 1..B) pipelined in one write, the
      replies read CHUNK bytes every S seconds, a client slow but never
      stalled: answered, correct, how (open if the server kept it).
      --chunk 0: no reply read at all: how (closed or open) and closed_ms
      from the write's start.
  tcpclient.py until ADDR PORT [--within S] [--text TEXT]
      New connections, one message each, until one is answered or S
      seconds pass: answered, ms, tries.

Common options: --func reverse|echo (what a correct reply is), --src ADDR
(the source address of every connection but a step's own), --timeout S.
"""
import argparse
import json
import os
import random
import resource
import select
import selectors
import socket
import sys
import threading
import time


def now_ms():
    return time.monotonic() * 1000.0


def frame(payload):
    return len(payload).to_bytes(2, "big") + payload


def expected(func, payload):
    return payload[::-1] if func == "reverse" else payload


def connect(addr, port, src, timeout):
    family = socket.AF_INET6 if ":" in addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.settimeout(timeout)
    if src:
        s.bind((src, 0))
    s.connect((addr, port))
    return s


class Reader:
    """Reads framed replies off a socket; knows when the peer closed."""

    def __init__(self, sock):
        self.sock = sock
        self.buf = b""
        self.how = None  # None while open; "eof" or "reset" once closed

    def fill(self, deadline):
        """Reads more before DEADLINE (monotonic s); False if nothing came."""
        if self.how:
            return False
        left = deadline - time.monotonic()
        if left <= 0:
            return False
        self.sock.settimeout(left)
        try:
            d = self.sock.recv(1 << 20)
        except socket.timeout:
            return False
        except (ConnectionResetError, BrokenPipeError):
            self.how = "reset"
            return False
        if not d:
            self.how = "eof"
            return False
        self.buf += d
        return True

    def reply(self, deadline):
        """The next whole reply, or None (closed, or none in time)."""
        while True:
            if len(self.buf) >= 2:
                n = int.from_bytes(self.buf[:2], "big")
                if len(self.buf) >= 2 + n:
                    r = self.buf[2:2 + n]
                    self.buf = self.buf[2 + n:]
                    return r
            if not self.fill(deadline):
                return None

    def closed_by(self, deadline):
        """Waits until the peer closes (True) or DEADLINE (False); what
        arrives meanwhile is kept."""
        while not self.how:
            if not self.fill(deadline) and not self.how:
                if time.monotonic() >= deadline:
                    return False
        return True


def ask_once(sock, payload, func, timeout):
    """Sends one message on SOCK: (word, reader)."""
    r = Reader(sock)
    try:
        sock.sendall(frame(payload))
    except (ConnectionResetError, BrokenPipeError):
        return "closed", r
    got = r.reply(time.monotonic() + timeout)
    if got is None:
        return ("closed" if r.how else "silent"), r
    return ("answered" if got == expected(func, payload) else "wrong"), r


def sizes_spread(n, lo, hi, rng):
    if n == 1:
        return [hi]
    sizes = [lo + (hi - lo) * i // (n - 1) for i in range(n)]
    rng.shuffle(sizes)
    return sizes


def send_all_later(sock, data, err, limit=60.0, shut=False):
    """A thread that sends DATA in one write on its own handle of SOCK, so
    that the reader's time-outs do not cut the write short; SHUT: then
    shuts the write side (a FIN behind the last message)."""
    w = socket.socket(fileno=os.dup(sock.fileno()))
    w.settimeout(limit)

    def send():
        try:
            w.sendall(data)
            if shut:
                w.shutdown(socket.SHUT_WR)
        except OSError as e:
            err.append(e)
        w.close()

    t = threading.Thread(target=send, daemon=True)
    t.start()
    return t


def pipeline_on(sock, msgs, func, timeout, shut=False):
    """MSGS in one write (a thread) while the replies are read, SHUT: then
    the write side shut: (answered, correct, first_bad, how)."""
    err = []
    t = send_all_later(sock, b"".join(frame(m) for m in msgs), err,
                       shut=shut)

    r = Reader(sock)
    answered = correct = 0
    first_bad = None
    deadline = time.monotonic() + timeout
    for i, m in enumerate(msgs):
        got = r.reply(deadline)
        if got is None:
            break
        answered += 1
        if got == expected(func, m):
            correct += 1
        elif first_bad is None:
            first_bad = i
    t.join(timeout=1)
    return answered, correct, first_bad, r.how or ("error" if err else None)


def cmd_pipeline(a, rng):
    sizes = sizes_spread(a.n, a.min_size, a.max_size, rng)
    msgs = [rng.randbytes(sz) for sz in sizes]
    s = connect(a.addr, a.port, a.src, a.timeout)
    t0 = now_ms()
    answered, correct, first_bad, how = pipeline_on(s, msgs, a.func,
                                                   a.timeout, a.shut)
    if a.shut and answered == a.n:
        # Then the server closes: it has answered all there was.
        r = Reader(s)
        how = r.how if r.closed_by(time.monotonic() + a.timeout) else None
    ms = now_ms() - t0
    s.close()
    total = sum(sizes)
    return {"sent": a.n, "answered": answered, "correct": correct,
            "first_bad": first_bad, "bytes": total, "ms": round(ms),
            "how": how,
            "summary": "%d messages (%d..%d B, %d B) pipelined in one "
                       "write to [%s]:%d%s: %d answered, %d correct in "
                       "order, in %d ms%s" % (
                           a.n, min(sizes), max(sizes), total, a.addr,
                           a.port, ", then a FIN" if a.shut else "",
                           answered, correct, ms,
                           ", then closed (%s)" % how if a.shut and how
                           else "")}


def cmd_parallel(a, rng):
    slow_msgs = [rng.randbytes(a.slow_size) for _ in range(a.slow)]
    started = threading.Event()
    res = {"slow_correct": 0, "slow_done_at": None}
    slow = connect(a.addr, a.port, a.src, a.timeout)

    def trickle():
        r = Reader(slow)
        t0 = now_ms()
        for m in slow_msgs:
            for b in frame(m):
                slow.sendall(bytes([b]))
                started.set()
                time.sleep(a.gap)
            got = r.reply(time.monotonic() + a.timeout)
            if got == expected(a.func, m):
                res["slow_correct"] += 1
        res["slow_ms"] = round(now_ms() - t0)
        res["slow_done_at"] = time.monotonic()

    t = threading.Thread(target=trickle, daemon=True)
    t.start()
    started.wait(a.timeout)
    time.sleep(0.1)  # well into its first message
    msgs = [rng.randbytes(sz) for sz in
            sizes_spread(a.n, 1, a.fast_max_size, rng)]
    fast = connect(a.addr, a.port, a.src, a.timeout)
    t0 = now_ms()
    _, correct, _, _ = pipeline_on(fast, msgs, a.func, a.timeout)
    fast_ms = now_ms() - t0
    fast_done = time.monotonic()
    fast.close()
    t.join(a.slow * (a.slow_size + 2) * (a.gap + 0.05) + a.timeout)
    slow.close()
    busy = res["slow_done_at"] is None or res["slow_done_at"] > fast_done
    return {"slow": a.slow, "slow_correct": res["slow_correct"],
            "slow_ms": res.get("slow_ms"), "fast": a.n,
            "fast_correct": correct, "fast_ms": round(fast_ms),
            "slow_busy": busy,
            "summary": "byte by byte: %d of %d messages of %d B answered "
                       "correctly in %s ms; meanwhile %d of %d pipelined on "
                       "a second connection in %d ms%s" % (
                           res["slow_correct"], a.slow, a.slow_size,
                           res.get("slow_ms"), correct, a.n, fast_ms,
                           " (the first still mid-message)" if busy else "")}


def cmd_slowread(a, rng):
    msgs = [rng.randbytes(rng.randint(1, a.size) if a.mixed else a.size)
            for _ in range(a.n)]
    data = b"".join(frame(m) for m in msgs)
    family = socket.AF_INET6 if ":" in a.addr else socket.AF_INET
    s = socket.socket(family, socket.SOCK_STREAM)
    # Before connecting: the window the client offers stays small.
    if a.rcvbuf:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
    if a.src:
        s.bind((a.src, 0))
    s.settimeout(a.timeout)
    s.connect((a.addr, a.port))
    # The write outlasts the run: the client never stops sending first.
    send_all_later(s, data, [], a.wait + 30)
    t0 = time.monotonic()
    if not a.chunk:
        # Reads nothing: only when the server closes (a reset, with our
        # messages unread on its side; or a FIN) matters.
        p = select.poll()
        p.register(s.fileno(), select.POLLRDHUP | select.POLLERR |
                   select.POLLHUP)
        closed = p.poll(a.wait * 1000)
        ms = (time.monotonic() - t0) * 1000
        s.close()
        return {"sent": a.n, "answered": 0, "correct": 0,
                "how": "closed" if closed else "open",
                "closed_ms": round(ms) if closed else None,
                "summary": "%d messages of %d B pipelined, no reply read: %s "
                           "after %d ms" % (a.n, a.size, "closed" if closed
                                            else "still open", ms)}
    buf = b""
    how = None
    answered = correct = 0
    while answered < a.n and time.monotonic() - t0 < a.wait:
        time.sleep(a.every)
        try:
            d = s.recv(a.chunk)
        except socket.timeout:
            continue
        except ConnectionResetError:
            how = "reset"
            break
        if not d:
            how = "eof"
            break
        buf += d
        while len(buf) >= 2 and len(buf) >= 2 + int.from_bytes(buf[:2],
                                                               "big"):
            n = int.from_bytes(buf[:2], "big")
            correct += buf[2:2 + n] == expected(a.func, msgs[answered])
            answered += 1
            buf = buf[2 + n:]
    ms = (time.monotonic() - t0) * 1000
    # Whether the server let go only once the reading was over.
    while_reading = bool(how)
    if not how and answered < a.n:
        # Closed meanwhile, behind replies not read yet? A second's reading
        # at full speed finds the end of what a closed one had queued.
        r = Reader(s)
        end = time.monotonic() + 1
        while r.fill(end):
            r.buf = b""
        how = r.how
    s.close()
    return {"sent": a.n, "answered": answered, "correct": correct,
            "how": how or "open", "ms": round(ms),
            "closed_while_reading": while_reading,
            "summary": "%d messages of %s%d B pipelined, the replies read "
                       "%d B every %d ms: %d answered, %d correct, %s after "
                       "%d ms" % (a.n, "up to " if a.mixed else "", a.size,
                                  a.chunk, a.every * 1000, answered, correct,
                                  "closed (%s)" % how if how else "open", ms)}


def cmd_half(a, rng):
    msg = frame(rng.randbytes(a.length))[:a.send]
    s = connect(a.addr, a.port, a.src, a.timeout)
    s.sendall(msg)
    t0 = time.monotonic()
    worst = 0.0
    correct = 0
    if a.meanwhile:
        o = connect(a.addr, a.port, a.src, a.timeout)
        for _ in range(a.meanwhile):
            p = rng.randbytes(rng.randint(1, 1000))
            t1 = now_ms()
            word, _ = ask_once(o, p, a.func, a.timeout)
            worst = max(worst, now_ms() - t1)
            correct += word == "answered"
        o.close()
    r = Reader(s)
    closed = r.closed_by(t0 + a.wait)
    ms = (time.monotonic() - t0) * 1000
    s.close()
    return {"closed_ms": round(ms) if closed else None,
            "how": r.how or "open", "late_bytes": len(r.buf),
            "meanwhile": a.meanwhile, "meanwhile_correct": correct,
            "meanwhile_max_ms": round(worst, 1),
            "summary": "%d of a %d-byte frame sent: %s after %d ms; "
                       "meanwhile %d of %d answered on another connection, "
                       "the slowest in %.1f ms" % (
                           a.send, a.length + 2,
                           "closed (%s)" % r.how if closed else "still open",
                           ms, correct, a.meanwhile, worst)}


def cmd_idle(a, rng):
    s = connect(a.addr, a.port, a.src, a.timeout)
    word, r = ask_once(s, rng.randbytes(100), a.func, a.timeout)
    t0 = time.monotonic()
    closed = word == "answered" and r.closed_by(t0 + a.wait)
    ms = (time.monotonic() - t0) * 1000
    s.close()
    return {"first": word, "closed_ms": round(ms) if closed else None,
            "how": r.how or "open",
            "summary": "one message %s, then idle: %s after %d ms" % (
                word, "closed (%s)" % r.how if closed else "still open",
                ms)}


def cmd_keepalive(a, rng):
    s = connect(a.addr, a.port, a.src, a.timeout)
    t0 = time.monotonic()
    sent = correct = 0
    how = None
    while time.monotonic() - t0 < a.for_s:
        word, r = ask_once(s, rng.randbytes(rng.randint(1, 200)), a.func,
                           a.timeout)
        sent += 1
        correct += word == "answered"
        if r.how:
            how = r.how
            break
        time.sleep(a.every)
    ms = (time.monotonic() - t0) * 1000
    s.close()
    return {"sent": sent, "correct": correct, "how": how or "open",
            "ms": round(ms),
            "summary": "a message every %.0f ms for %d ms: %d of %d "
                       "answered, %s" % (a.every * 1000, ms, correct, sent,
                                         "closed (%s)" % how if how
                                         else "still open")}


def cmd_conns(a, rng):
    held = []  # open connections that answered
    busy = []  # connections left mid-message
    words = []
    closed_ms = []
    for step in a.steps:
        if step.startswith("sleep:"):
            time.sleep(float(step[6:]))
            words.append("slept")
            continue
        if step == "drop":
            if held:
                held.pop(0).close()
            words.append("dropped")
            continue
        if step == "each":
            letters = ""
            for s in held:
                w = ask_once(s, rng.randbytes(64), a.func, a.timeout)[0]
                letters += w[0] if w in ("answered", "closed", "silent",
                                         "wrong") else "?"
            words.append(letters or "-")
            continue
        if step.startswith("half"):
            src = step[5:].strip("[]") if step.startswith("half@") else a.src
            dst = a.addr6 if src and ":" in src and a.addr6 else a.addr
            try:
                s = connect(dst, a.port, src, a.timeout)
                s.sendall(b"\x00")
            except OSError:
                words.append("refused")
                continue
            busy.append(s)
            words.append("begun")
            continue
        if step == "again":
            ok = 0
            for s in held:
                ok += ask_once(s, rng.randbytes(64), a.func,
                               a.timeout)[0] == "answered"
            words.append("answered" if ok == len(held) else
                         "%d/%d" % (ok, len(held)))
            continue
        if not step.startswith("ask"):
            raise SystemExit("unknown step %r" % step)
        rest = step[3:]
        text = None
        if ":" in rest and not rest.startswith("@"):
            rest, text = "", rest[1:]
        elif rest.startswith("@") and ":" in rest and \
                rest.rfind(":") > rest.rfind("]"):
            # ask@SRC:TEXT; an IPv6 SRC goes in brackets.
            rest, text = rest[:rest.rfind(":")], rest[rest.rfind(":") + 1:]
        src = rest[1:].strip("[]") if rest.startswith("@") else a.src
        payload = text.encode() if text is not None else rng.randbytes(64)
        t0 = now_ms()
        dst = a.addr6 if src and ":" in src and a.addr6 else a.addr
        try:
            s = connect(dst, a.port, src, a.timeout)
        except OSError:
            words.append("refused")
            continue
        word, _ = ask_once(s, payload, a.func, a.timeout)
        words.append(word)
        if word == "answered":
            held.append(s)
        else:
            if word == "closed":
                closed_ms.append(now_ms() - t0)
            s.close()
    for s in held + busy:
        s.close()
    res = " ".join(words)
    return {"results": res,
            "closed_max_ms": round(max(closed_ms)) if closed_ms else None,
            "summary": "%s: %s" % (" ".join(a.steps), res)}


def enough_files(n):
    """Raises the soft limit on descriptors to N (within the hard one)."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = n if hard == resource.RLIM_INFINITY else min(n, hard)
    if soft != resource.RLIM_INFINITY and soft < want:
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def cmd_hold(a, rng):
    plan = []
    for part in a.from_.split(","):
        src, _, n = part.partition("*")
        plan += [src] * int(n or 1)
    enough_files(len(plan) + 256)
    conns = []  # [socket, order opened, closed at (s after the fill)]
    first = {}
    for i, src in enumerate(plan):
        dst = a.addr6 if ":" in src and a.addr6 else a.addr
        try:
            s = connect(dst, a.port, src, a.timeout)
            word, _ = ask_once(s, rng.randbytes(32), a.func, a.timeout)
        except OSError:
            word, s = "refused", None
        first[word] = first.get(word, 0) + 1
        if word == "answered":
            conns.append([s, i, None])
        elif s:
            s.close()
    t0 = time.monotonic()
    sel = selectors.DefaultSelector()
    for c in conns:
        sel.register(c[0], selectors.EVENT_READ, c)

    def note_closed(c, at):
        c[2] = at
        sel.unregister(c[0])

    def watch(wait):
        # Anything a held connection gets unasked is the server's close.
        for key, _ in sel.select(timeout=wait):
            c = key.data
            try:
                c[0].setblocking(False)
                d = c[0].recv(65536)
            except BlockingIOError:
                continue
            except OSError:
                d = b""
            finally:
                c[0].setblocking(True)
            if not d:
                note_closed(c, time.monotonic() - t0)

    def open_now():
        return sum(c[2] is None for c in conns)

    kept = None
    open_at = []
    asked = answered = 0
    held_words = {}
    next_round = a.every if a.every > 0 else None
    newcomers = []
    while True:
        now = time.monotonic() - t0
        if now >= a.for_s:
            break
        watch(0.02)
        now = time.monotonic() - t0
        if kept is None and now >= 0.2:
            kept = [c[1] for c in conns if c[2] is None]
        if now >= len(open_at) + 1:
            open_at.append(open_now())
        if a.newcomer and not newcomers and now >= a.newcomer_at:
            for src in a.newcomer:
                dst = a.addr6 if ":" in src and a.addr6 else a.addr
                t1 = now_ms()
                try:
                    s = connect(dst, a.port, src, a.timeout)
                    word, _ = ask_once(s, rng.randbytes(32), a.func,
                                       a.timeout)
                    s.close()
                except OSError:
                    word = "refused"
                newcomers.append({"src": src, "word": word,
                                  "ms": round(now_ms() - t1)})
        if next_round is not None and now >= next_round:
            for c in conns:
                if c[2] is not None:
                    continue
                asked += 1
                word, _ = ask_once(c[0], rng.randbytes(32), a.func,
                                   a.timeout)
                held_words[word] = held_words.get(word, 0) + 1
                if word == "answered":
                    answered += 1
                else:
                    note_closed(c, time.monotonic() - t0)
            next_round += a.every
    if kept is None:
        kept = [c[1] for c in conns if c[2] is None]
    closed = [c[2] for c in conns if c[2] is not None]
    for c in conns:
        c[0].close()
    return {"planned": len(plan), "first": first, "kept": len(kept),
            "kept_from": min(kept) if kept else None, "open_at": open_at,
            "open_end": open_now(),
            "closed_max_ms": round(max(closed) * 1000) if closed else None,
            "asked": asked, "answered": answered, "held": held_words,
            "newcomers": newcomers,
            "summary": "%d connections (%s), %d open after the fill; "
                       "%s every %s s for %s s: open after each second %s, "
                       "%d of %d answered; newcomers: %s" % (
                           len(plan), ", ".join(
                               "%d %s" % (n, w) for w, n in first.items()),
                           len(kept), "a message" if a.every > 0 else
                           "no message", a.every, a.for_s, open_at,
                           answered, asked, ", ".join(
                               "%s %s in %d ms" % (n["src"], n["word"],
                                                   n["ms"])
                               for n in newcomers) or "none")}


def cmd_until(a, rng):
    t0 = time.monotonic()
    tries = 0
    word = None
    while time.monotonic() - t0 < a.within and tries < 1000:
        tries += 1
        payload = a.text.encode() if a.text else rng.randbytes(32)
        try:
            s = connect(a.addr, a.port, a.src, 0.5)
            word, _ = ask_once(s, payload, a.func, 0.5)
            s.close()
        except OSError:
            word = "refused"
        if word == "answered":
            break
        time.sleep(0.05)
    ms = (time.monotonic() - t0) * 1000
    return {"answered": word == "answered", "ms": round(ms), "tries": tries,
            "summary": "%s after %d ms and %d connections" % (
                "answered" if word == "answered" else "not answered", ms,
                tries)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = {}
    for name in ("pipeline", "parallel", "half", "idle", "keepalive",
                 "conns", "until", "slowread", "hold"):
        p[name] = sub.add_parser(name)
        p[name].add_argument("addr")
        p[name].add_argument("port", type=int)
        p[name].add_argument("--func", choices=("reverse", "echo"),
                             default="reverse")
        p[name].add_argument("--src", default=None)
        p[name].add_argument("--timeout", type=float, default=5.0)
        p[name].add_argument("--seed", type=int, default=None)
    p["pipeline"].add_argument("-n", type=int, default=200)
    p["pipeline"].add_argument("--min-size", type=int, default=1)
    p["pipeline"].add_argument("--max-size", type=int, default=60000)
    p["pipeline"].add_argument("--shut", action="store_true",
                               help="shut the write side after the last "
                               "message; how says whether the server then "
                               "closed")
    p["parallel"].add_argument("--slow", type=int, default=3)
    p["parallel"].add_argument("--slow-size", type=int, default=20)
    p["parallel"].add_argument("--gap", type=float, default=0.01)
    p["parallel"].add_argument("-n", type=int, default=50)
    p["parallel"].add_argument("--fast-max-size", type=int, default=2000)
    p["half"].add_argument("--length", type=int, default=1000)
    p["half"].add_argument("--send", type=int, default=500)
    p["half"].add_argument("--meanwhile", type=int, default=20)
    p["half"].add_argument("--wait", type=float, default=5.0)
    p["idle"].add_argument("--wait", type=float, default=5.0)
    p["keepalive"].add_argument("--every", type=float, default=0.2)
    p["keepalive"].add_argument("--for", dest="for_s", type=float,
                                default=2.0)
    p["conns"].add_argument("steps", nargs="+")
    p["conns"].add_argument("--addr6", default=None,
                            help="where the steps from an IPv6 source go")
    p["slowread"].add_argument("-n", type=int, default=20)
    p["slowread"].add_argument("--size", type=int, default=60000)
    p["slowread"].add_argument("--mixed", action="store_true",
                               help="sizes random in [1, --size]")
    p["slowread"].add_argument("--chunk", type=int, default=4096)
    p["slowread"].add_argument("--every", type=float, default=0.05)
    p["slowread"].add_argument("--rcvbuf", type=int, default=8192)
    p["slowread"].add_argument("--wait", type=float, default=30.0)
    p["hold"].add_argument("--from", dest="from_", required=True,
                           help="SRC*N[,SRC*N...]: N connections from SRC")
    p["hold"].add_argument("--every", type=float, default=0.0)
    p["hold"].add_argument("--for", dest="for_s", type=float, default=3.0)
    p["hold"].add_argument("--newcomer", action="append", default=[])
    p["hold"].add_argument("--newcomer-at", type=float, default=1.0)
    p["hold"].add_argument("--addr6", default=None)
    p["until"].add_argument("--within", type=float, default=2.0)
    p["until"].add_argument("--text", default=None)
    a = ap.parse_args()
    if a.cmd == "conns":
        a.timeout = min(a.timeout, 1.5)
    seed = a.seed if a.seed is not None else \
        int.from_bytes(os.urandom(4), "little")
    rng = random.Random(seed)
    out = globals()["cmd_" + a.cmd](a, rng)
    out["seed"] = seed
    json.dump(out, sys.stdout)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
