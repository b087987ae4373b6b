# SPDX-License-Identifier: GPL-2.0
"""Stands in for systemd's notification socket: binds a unix datagram
socket at PATH and appends every message it receives to LOG, one line per
assignment ("READY=1"), each prefixed with the time since start in ms.

    python3 notify_listen.py PATH LOG

Runs until SIGTERM."""
import os
import signal
import socket
import sys
import time

path, log = sys.argv[1], sys.argv[2]
sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
try:
    os.unlink(path)
except FileNotFoundError:
    pass
sock.bind(path)
os.chmod(path, 0o777)
signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
t0 = time.monotonic()
with open(log, "a", buffering=1) as out:
    while True:
        msg = sock.recv(4096).decode(errors="replace")
        ms = int((time.monotonic() - t0) * 1000)
        for line in msg.splitlines():
            out.write("%d %s\n" % (ms, line))
