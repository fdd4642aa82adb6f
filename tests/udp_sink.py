#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A UDP server for the tests: binds ADDR:PORT, optionally with a tiny receive
buffer, a pause before reading (so that the socket overflows) or a reading
rate (a server of known capacity), then reads
until COUNT datagrams or an idle TIMEOUT, and writes one line per datagram
(the XRSEQ tag of its payload) to OUT. Touches a ready file once bound."""
import argparse
import socket
import time

ap = argparse.ArgumentParser()
ap.add_argument("--addr", default="198.18.0.2")
ap.add_argument("--port", type=int, default=9)
ap.add_argument("--count", type=int, default=0)
ap.add_argument("--timeout", type=float, default=2.0)
ap.add_argument("--rcvbuf", type=int, default=0)
ap.add_argument("--hold", type=float, default=0.0, help="seconds to wait before reading")
ap.add_argument("--rate", type=float, default=0.0, help="read at most this many datagrams a second")
ap.add_argument("--ready", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()

s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
if a.rcvbuf:
    # SO_RCVBUFFORCE (as root) is not capped by net.core.rmem_max; SO_RCVBUF otherwise
    try:
        s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_RCVBUFFORCE", 33), a.rcvbuf)
    except PermissionError:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, a.rcvbuf)
s.bind((a.addr, a.port))
open(a.ready, "w").close()
if a.hold:
    time.sleep(a.hold)
s.settimeout(a.timeout)
n = 0
due = time.monotonic()
with open(a.out, "w") as out:
    while not a.count or n < a.count:
        if a.rate:
            # a server of known capacity: one datagram every 1/rate seconds, on average
            now = time.monotonic()
            if due > now:
                time.sleep(due - now)
            due = max(due, now - 0.05) + 1.0 / a.rate
        try:
            data = s.recv(65536)
        except socket.timeout:
            break
        i = data.find(b"XRSEQ")
        out.write((data[i + 5:i + 8].decode() if i >= 0 else "-") + "\n")
        n += 1
