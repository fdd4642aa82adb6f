#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Man pages from the binary's own --help, so that the two never disagree.

  scripts/mkman.py XDPREPLAY OUTDIR

writes OUTDIR/xdpreplay.8 (from 'xdpreplay --help') and one page per command
(xdpreplay-replay.8, ...; a command whose help names 'xdpreplay CMD SUB --help'
gets xdpreplay-CMD-SUB.8 too). help2man's heuristics fold our examples and
indented option groups into running text; this reads the one layout every
--help here follows:

  Usage: LINE                        -> SYNOPSIS
  paragraphs                         -> DESCRIPTION
  Options: / Examples:               -> OPTIONS / EXAMPLES
  Other heading: (flush left)        -> a subsection of the current section
  '  -x, --long ARG  text' or '      --long ARG  text', continued at the
  text's column                      -> a tagged paragraph (deeper lines verbatim)
  '  group:'                         -> a subsection (gen's per-protocol options)
  '  word  text' (a name, 2+ spaces) -> a tagged paragraph (commands, PROTO)
  Exit status: ...                   -> EXIT STATUS
"""
import datetime
import os
import re
import subprocess
import sys

OPTION = re.compile(r"^(  -[A-Za-z0-9]([ ,].*)?|      --?\S.*)$")
TERM = re.compile(r"^  ([a-z][a-z0-9_-]*)(\s{2,})(\S.*)$")
GROUP = re.compile(r"^  ([a-z][a-z0-9 _-]*):$")
HEADING = re.compile(r"^([A-Z][^:]*):$")
SUBPAGE = re.compile(r"'xdpreplay (\w+) (\w+) --help'")
# a mode of a command ('xdpreplay replay --sessions --help'): xdpreplay-replay-sessions.8
MODEPAGE = re.compile(r"'xdpreplay (\w+) --(\w+) --help'")


def roff(text):
    """Escapes a line of text for roff: backslashes, a leading dot or quote, minus signs."""
    text = text.replace("\\", "\\e").replace("-", "\\-")
    if text.startswith((".", "'")):
        text = "\\&" + text
    return text


def split_option(line):
    """'  -i, --iface IFACE    text' -> ('-i, --iface IFACE', 'text', column of text)."""
    body = line.lstrip(" ")
    m = re.search(r"\s{2,}", body)
    if not m:
        return body, "", 0
    return body[: m.start()], body[m.end():], len(line) - len(body) + m.end()


class Page:
    def __init__(self):
        self.out = []
        self.para = []  # running text not yet written

    def flush(self):
        if self.para:
            self.out.append(roff(" ".join(self.para)))
            self.para = []

    def raw(self, s):
        self.flush()
        self.out.append(s)

    def text(self, s):
        self.para.append(s.strip())

    def verbatim(self, lines):
        self.raw(".PP\n.nf")
        for ln in lines:
            self.out.append(roff(ln))
        self.out.append(".fi")


def convert(help_text, page):
    lines = help_text.rstrip("\n").split("\n")
    i = 0
    section = "DESCRIPTION"
    if lines and lines[0].startswith("Usage: "):
        page.raw(".SH SYNOPSIS")
        page.raw(".nf\n" + roff(lines[0][len("Usage: "):]))
        i = 1
        while i < len(lines) and lines[i].startswith("   or: "):
            page.out.append(roff(lines[i][len("   or: "):]))
            i += 1
        page.out.append(".fi")
    page.raw(".SH DESCRIPTION")
    while i < len(lines):
        line = lines[i]
        i += 1
        if not line.strip():
            page.raw(".PP")
            continue
        m = HEADING.match(line)
        if m:
            name = m.group(1)
            if name in ("Options", "Examples"):
                section = name.upper()
                page.raw(".SH " + section)
            else:
                page.raw('.SS "%s"' % roff(name))
            continue
        if line.startswith("Exit status"):
            section = "EXIT STATUS"
            page.raw('.SH "EXIT STATUS"')
            page.text(re.sub(r"^Exit status:?\s*", "", line))
            while i < len(lines) and lines[i].strip():
                page.text(lines[i])
                i += 1
            if page.para:
                page.para[0] = page.para[0][:1].upper() + page.para[0][1:]
            continue
        if section == "EXAMPLES":
            block = [line.strip()]
            while i < len(lines) and lines[i].startswith("    "):
                block.append("    " + lines[i].strip())
                i += 1
            page.verbatim(block)
            continue
        m = GROUP.match(line)
        if m:
            page.raw('.SS "%s"' % roff(m.group(1)))
            continue
        if OPTION.match(line):
            tag, first, col = split_option(line)
            page.raw(".TP\n" + roff(tag))
            if first:
                page.text(first)
            verb = []
            while i < len(lines) and lines[i].strip() and not OPTION.match(lines[i]) \
                    and not GROUP.match(lines[i]) and lines[i].startswith(" " * 8):
                nxt = lines[i]
                indent = len(nxt) - len(nxt.lstrip(" "))
                if col and indent > col:
                    verb.append(nxt[col:])
                else:
                    if verb:
                        page.verbatim(verb)
                        verb = []
                    page.text(nxt)
                i += 1
            if verb:
                page.verbatim(verb)
            continue
        m = TERM.match(line)
        if m:
            page.raw(".TP\n.B " + roff(m.group(1)))
            page.text(m.group(3))
            col = 2 + len(m.group(1)) + len(m.group(2))
            while i < len(lines) and lines[i].startswith(" " * col) and lines[i].strip():
                page.text(lines[i])
                i += 1
            continue
        if line.startswith("  "):
            # an indented paragraph (gen's notes under a protocol's options)
            page.raw(".PP")
            page.text(line)
            while i < len(lines) and lines[i].startswith("  ") and lines[i].strip() \
                    and not OPTION.match(lines[i]) and not GROUP.match(lines[i]):
                page.text(lines[i])
                i += 1
            continue
        page.text(line)
    page.flush()


def run(xr, args):
    p = subprocess.run([xr] + args, capture_output=True, text=True)
    return p.stdout or p.stderr


def header(name, summary, version, date):
    return [
        '.TH %s 8 "%s" "xdpreplay %s" "System Administration"' % (name.upper(), date, version),
        ".nh\n.ad l",
        ".SH NAME",
        "%s \\- %s" % (roff(name), roff(summary)),
    ]


def main():
    xr, outdir = sys.argv[1], sys.argv[2]
    os.makedirs(outdir, exist_ok=True)
    version = run(xr, ["--version"]).split()[-1]
    epoch = os.environ.get("SOURCE_DATE_EPOCH")
    when = datetime.datetime.fromtimestamp(int(epoch), datetime.timezone.utc) if epoch \
        else datetime.datetime.now(datetime.timezone.utc)
    date = when.strftime("%Y-%m-%d")
    top = run(xr, ["--help"])
    commands = re.findall(r"^  (\w+)\s{2,}(.*)$", top.split("Commands:", 1)[1].split("\n\n")[0], re.M)
    pages = []
    for cmd, summary in commands:
        text = run(xr, [cmd, "--help"])
        pages.append(("xdpreplay-" + cmd, summary, text))
        # a command with subcommands lists them as '  sub   summary'
        summaries = dict(re.findall(r"^  (\w+)\s{2,}(.*)$", text, re.M))
        for sub in dict.fromkeys(s for c, s in SUBPAGE.findall(text) if c == cmd):
            pages.append(("xdpreplay-%s-%s" % (cmd, sub), summaries.get(sub, cmd + " " + sub),
                          run(xr, [cmd, sub, "--help"])))
        for mode in dict.fromkeys(m for c, m in MODEPAGE.findall(text) if c == cmd):
            pages.append(("xdpreplay-%s-%s" % (cmd, mode), "%s --%s" % (cmd, mode),
                          run(xr, [cmd, "--" + mode, "--help"])))
    names = ["xdpreplay"] + [p[0] for p in pages]
    see_also = ".SH \"SEE ALSO\"\n" + ",\n".join(".BR %s (8)" % roff(n) for n in names)
    main_page = Page()
    main_page.out = header("xdpreplay", "put a precise, known load on a server and measure where "
                           "it went", version, date)
    convert(top, main_page)
    with open(os.path.join(outdir, "xdpreplay.8"), "w") as f:
        f.write("\n".join(main_page.out + [see_also.replace(".BR xdpreplay (8),\n", "", 1)]) + "\n")
    for name, summary, text in pages:
        page = Page()
        page.out = header(name, summary, version, date)
        convert(text, page)
        others = [n for n in names if n != name]
        page.out.append(".SH \"SEE ALSO\"\n" + ",\n".join(".BR %s (8)" % roff(n) for n in others))
        with open(os.path.join(outdir, name + ".8"), "w") as f:
            f.write("\n".join(page.out) + "\n")


if __name__ == "__main__":
    main()
