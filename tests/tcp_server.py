#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A TCP listener for the tests: accepts connections and closes each at once
(or with --echo answers each line, until the client's FIN, or with
--echo --close-first closes after the first answer), until an idle TIMEOUT;
writes the number accepted to OUT. Touches a ready file once listening."""
import argparse
import select
import socket

ap = argparse.ArgumentParser()
ap.add_argument("--addr", default="198.18.0.2")
ap.add_argument("--port", type=int, default=80)
ap.add_argument("--backlog", type=int, default=4096)
ap.add_argument("--timeout", type=float, default=2.0)
ap.add_argument("--no-accept", action="store_true", help="listen only, for TIMEOUT seconds")
ap.add_argument("--echo", action="store_true", help="answer each line of a connection")
ap.add_argument("--close-first", action="store_true", help="--echo: close after the first answer")
ap.add_argument("--ready", required=True)
ap.add_argument("--out", required=True)
a = ap.parse_args()

s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
s.bind((a.addr, a.port))
s.listen(a.backlog)
s.setblocking(False)
open(a.ready, "w").close()
n = 0
if a.no_accept:
    select.select([], [], [], a.timeout)
while not a.no_accept and select.select([s], [], [], a.timeout)[0]:
    while True:
        try:
            c, _ = s.accept()
        except BlockingIOError:
            break
        if a.echo:
            c.setblocking(True)
            c.settimeout(a.timeout)
            f = c.makefile("rb")
            for line in f:
                c.sendall(line)
                if a.close_first:
                    break
            f.close()
        c.close()
        n += 1
open(a.out, "w").write("%d\n" % n)
