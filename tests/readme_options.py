#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Every option the README's and the guides' command lines use is one its command's --help lists.

  tests/readme_options.py XDPREPLAY README.md docs/*.md

A command line is a line of a fenced block that starts with 'xdpreplay CMD' (continued on
indented lines or after a backslash); after ' -- ' (search) the options are the inner
command's. Prints each option the help does not know, and exits 1 if there is one.
"""
import re
import subprocess
import sys

xr, docs = sys.argv[1], sys.argv[2:]
OPT = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*[a-z0-9]")
helps = {}


def options(cmd):
    """The options in 'xdpreplay CMD --help' (and its subcommands' for lorawan, replay --sessions')."""
    if cmd not in helps:
        p = subprocess.run([xr, *cmd.split(), "--help"], capture_output=True, text=True)
        helps[cmd] = set(OPT.findall(p.stdout))
    return helps[cmd]


def command_lines(text):
    for block in re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M):
        lines = []
        for ln in block.split("\n"):
            if lines and (ln.startswith(" ") or lines[-1].endswith("\\")):
                lines[-1] = lines[-1].rstrip("\\") + " " + ln.strip()
            else:
                lines.append(ln)
        for ln in lines:
            ln = re.sub(r"^(sudo )?(\./)?", "", ln)
            if ln.startswith("xdpreplay "):
                yield ln


def check(line):
    bad = []
    for part in line.split(" -- "):
        words = part.replace("xdpreplay ", "", 1).split()
        if not words or words[0] not in ("probe", "replay", "gen", "count", "lorawan", "search",
                                         "selftest", "report"):
            continue
        cmd = words[0] + (" " + words[1] if words[0] == "lorawan" and len(words) > 1 and
                          words[1] in ("fleet", "send") else "")
        # a mode of replay has its own options
        if words[0] == "replay" and "--sessions" in words:
            cmd = "replay --sessions"
        for o in OPT.findall(part.split("#")[0]):
            if o not in options(cmd) and o not in ("--help", "--version"):
                bad.append("%s: %s (in: %s)" % (cmd, o, line.strip()[:100]))
    return bad


found = ["%s: %s" % (d, b) for d in docs for ln in command_lines(open(d).read()) for b in check(ln)]
for b in found:
    print(b)
sys.exit(1 if found else 0)
