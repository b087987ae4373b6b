# SPDX-License-Identifier: GPL-2.0
"""Clients that try to starve reqrouter's health, and the probes that
must get through (control_starve.sh, metrics_http_starve.sh).

  starve.py hold PATH N SECS RETRY
      N connections to the control socket at PATH, for SECS seconds: the
      even ones say nothing, the odd ones send "health" a byte every
      0.5 s, never its newline. One closed is made again RETRY seconds
      later.
  starve.py drip HOST PORT SRC N SECS
      N TCP connections from address SRC to HOST:PORT, for SECS seconds,
      each sending a request head a byte every 2 s, never its end. One
      closed is made again 0.2 s later.
  starve.py probe HOST PORT ROUNDS SRC...
      ROUNDS rounds, 0.4 s apart, of GET /healthz and GET /metrics, each
      from the next SRC in turn, each with a 1 s time-out: one line each,
      "PATH SRC STATUS SECONDS" (status 0: no answer).
  starve.py lag HOST PORT SRC N LAG
      GET /metrics from SRC, sent LAG seconds after its connect, as a
      prober on a busy host may; N more connections from SRC, that say
      nothing, made as soon as it is connected. One line, as probe's.

hold and drip stop after SECS, or sooner on SIGTERM, and print one JSON
line: connects, closed (by the server), busy (control: refusals that
said so), held_max (the longest the server kept one open, in seconds),
open (still open at the end). Every loop ends after SECS (or ROUNDS)
whatever the server does.
"""
import http.client
import json
import select
import signal
import socket
import sys
import time

STOP = []
signal.signal(signal.SIGTERM, lambda sig, frame: STOP.append(sig))

HEAD = b"GET /metrics HTTP/1.1\r\nHost: reqrouter\r\nUser-Agent: drip\r\n"


class Conn:
    def __init__(self, sock, now):
        self.sock = sock
        self.opened = now
        self.next_byte = now
        self.sent = 0


def summary(stats, conns, now):
    stats["open"] = sum(1 for c in conns if c is not None)
    # One still open counts for as long as it has been.
    for c in conns:
        if c is not None:
            stats["held_max"] = max(stats["held_max"], now - c.opened)
    stats["held_max"] = round(stats["held_max"], 2)
    print(json.dumps(stats))


def run(conns, stats, end, connect, feed, every, retry):
    """The loop of a crowd of clients: connect the missing, feed the open
    every @every seconds, notice the closed (made again @retry seconds
    later); until @end or SIGTERM."""
    again = [0.0] * len(conns)
    while True:
        now = time.monotonic()
        if now >= end or STOP:
            break
        for i, c in enumerate(conns):
            if c is None and now >= again[i]:
                s = connect()
                if s is not None:
                    conns[i] = Conn(s, now)
                    stats["connects"] += 1
        socks = [c.sock for c in conns if c is not None]
        ready = select.select(socks, [], [], 0.05)[0] if socks else []
        if not socks:
            time.sleep(0.05)
        now = time.monotonic()
        for i, c in enumerate(conns):
            if c is None:
                continue
            gone = False
            if c.sock in ready:
                try:
                    data = c.sock.recv(4096)
                except BlockingIOError:
                    data = None
                except OSError:
                    data = b""
                if data and b"busy" in data:
                    stats["busy"] += 1
                gone = data == b""
            if not gone and now >= c.next_byte:
                gone = not feed(i, c)
                c.next_byte = now + every
            if gone:
                stats["closed"] += 1
                stats["held_max"] = max(stats["held_max"], now - c.opened)
                c.sock.close()
                conns[i] = None
                again[i] = now + retry
    summary(stats, conns, time.monotonic())


def send_byte(c, data):
    if c.sent >= len(data):
        return True
    try:
        c.sock.send(data[c.sent:c.sent + 1])
    except BlockingIOError:
        return True
    except OSError:
        return False
    c.sent += 1
    return True


def hold(path, n, secs, retry):
    def connect():
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.setblocking(False)
        try:
            s.connect(path)
        except OSError:  # the backlog full (EAGAIN): later
            s.close()
            return None
        return s

    def feed(i, c):
        return i % 2 == 0 or send_byte(c, b"health")

    stats = dict(kind="hold", connects=0, closed=0, busy=0, held_max=0.0)
    run([None] * n, stats, time.monotonic() + secs, connect, feed, 0.5,
        retry)


def drip(host, port, src, n, secs):
    def connect():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.settimeout(1)
        try:
            s.bind((src, 0))
            s.connect((host, port))
        except OSError:
            s.close()
            return None
        s.setblocking(False)
        return s

    def feed(i, c):
        return send_byte(c, HEAD)

    stats = dict(kind="drip", connects=0, closed=0, busy=0, held_max=0.0)
    run([None] * n, stats, time.monotonic() + secs, connect, feed, 2, 0.2)


def get(host, port, src, path, before=None):
    """GET @path from @src, with a 1 s time-out; @before(conn), if given,
    runs between the connect and the request. Prints the probe line."""
    start = time.monotonic()
    status = 0
    try:
        conn = http.client.HTTPConnection(host, port, timeout=1,
                                          source_address=(src, 0))
        if before:
            conn.connect()
            before(conn)
        conn.request("GET", path)
        resp = conn.getresponse()
        resp.read()
        status = resp.status
        conn.close()
    except (OSError, http.client.HTTPException):
        pass
    print("%s %s %d %.3f" % (path, src, status, time.monotonic() - start),
          flush=True)


def probe(host, port, rounds, srcs):
    for r in range(rounds):
        src = srcs[r % len(srcs)]
        for path in ("/healthz", "/metrics"):
            get(host, port, src, path)
        time.sleep(0.4)


def lag(host, port, src, n, secs):
    crowd = []

    def before(conn):
        for _ in range(n):
            crowd.append(socket.create_connection(
                (host, port), timeout=1, source_address=(src, 0)))
        time.sleep(secs)

    get(host, port, src, "/metrics", before)
    for s in crowd:
        s.close()


def main(argv):
    if argv[1] == "hold":
        hold(argv[2], int(argv[3]), float(argv[4]), float(argv[5]))
    elif argv[1] == "drip":
        drip(argv[2], int(argv[3]), argv[4], int(argv[5]), float(argv[6]))
    elif argv[1] == "lag":
        lag(argv[2], int(argv[3]), argv[4], int(argv[5]), float(argv[6]))
    elif argv[1] == "probe":
        probe(argv[2], int(argv[3]), int(argv[4]), argv[5:])
    else:
        sys.exit("usage: starve.py hold|drip|probe|lag ...")


if __name__ == "__main__":
    main(sys.argv)
