#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""A TCP client for the tests: COUNT connections one after another, each
sending LINES lines and reading each answer; then it closes first, or with
--wait-close reads until the server closes. Prints how many answers it read."""
import argparse
import socket

ap = argparse.ArgumentParser()
ap.add_argument("--addr", default="198.18.0.2")
ap.add_argument("--port", type=int, default=80)
ap.add_argument("--count", type=int, default=100)
ap.add_argument("--lines", type=int, default=3)
ap.add_argument("--size", type=int, default=100, help="bytes in a line")
ap.add_argument("--wait-close", action="store_true")
a = ap.parse_args()

answers = 0
line = b"x" * (a.size - 1) + b"\n"
for _ in range(a.count):
    c = socket.create_connection((a.addr, a.port), timeout=5)
    f = c.makefile("rb")
    for _ in range(a.lines):
        c.sendall(line)
        if f.readline() == line:
            answers += 1
        if a.wait_close:
            break
    if a.wait_close:
        f.read()
    f.close()
    c.close()
print(answers)
