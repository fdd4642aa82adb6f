#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Writes docs/kernels.md from the rows tests/vm/matrix.sh gathered (kernel, command, engine,
what happened; tab-separated): one table, a row per command and engine, a column per kernel,
then each cell's words in full.

    tests/vm/matrix_doc.py results/vm/matrix.tsv docs/kernels.md
"""
import datetime
import sys

ORDER = ["count", "replay", "replay --rewrite", "gen udp", "gen icmp", "gen syn", "gen dns", "gen tcp",
         "gen mqtt", "gen redis", "lorawan send", "lorawan send --join"]
ENGINE_NAMES = {"": "", "kernel": "kernel engine", "xsk": "xsk engine"}


def kernel_key(release):
    """6.1.0-50-amd64 -> (6, 1, 0): the columns oldest first."""
    head = release.split("-")[0].split("+")[0]
    return tuple(int(x) for x in head.split(".") if x.isdigit())


def cell(result):
    """The table's word for a result; the full words go below the table."""
    if result.startswith("works without"):
        return "works, no drop reasons"
    if "not traced" in result:
        return "works, reasons only"
    if result.startswith("works"):
        return "works, exact"
    if result.startswith("refused"):
        return "refused"
    return "**FAILS**"


def main(tsv, doc):
    rows = {}
    for line in open(tsv):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 4:
            print(f"matrix_doc: not a row of four fields: {line!r}", file=sys.stderr)
            return 2
        kernel, command, engine, result = parts
        rows[(command, engine, kernel)] = result
    if not rows:
        print("matrix_doc: no rows: did any VM run the smoke pass?", file=sys.stderr)
        return 2
    kernels = sorted({k for _, _, k in rows}, key=kernel_key)
    lines = sorted({(c, e) for c, e, _ in rows},
                   key=lambda ce: (ORDER.index(ce[0]) if ce[0] in ORDER else len(ORDER), ce))
    out = ["# Kernels: what works where", "",
           "Measured by `tests/vm/matrix.sh -d docs/kernels.md` on "
           f"{datetime.date.today().isoformat()}: Debian's own kernel packages booted under QEMU "
           "(tests/vm/vmtest.sh), the same checkout in each, `tests/run.sh kernels/` inside "
           "(tests/t_kernels.sh): each command once on each engine over a veth pair, at a low rate, "
           "the server's `xdpreplay count` holding the books. \"exact\": the server counted every "
           "frame the sender said it sent. Emulation keeps no time, so no rate is judged here.", "",
           "| command | engine | " + " | ".join(kernels) + " |",
           "|---|---|" + "---|" * len(kernels)]
    for c, e in lines:
        cells = [cell(rows[(c, e, k)]) if (c, e, k) in rows else "not run" for k in kernels]
        out.append(f"| `{c}` | {ENGINE_NAMES.get(e, e)} | " + " | ".join(cells) + " |")
    out += ["", "## Each cell in words", ""]
    for k in kernels:
        out.append(f"### {k}")
        out.append("")
        for c, e in lines:
            if (c, e, k) in rows:
                where = f" on the {ENGINE_NAMES[e]}" if e in ENGINE_NAMES and e else ""
                out.append(f"- `{c}`{where}: {rows[(c, e, k)]}")
        out.append("")
    with open(doc, "w") as f:
        f.write("\n".join(out))
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: matrix_doc.py MATRIX.tsv DOC.md", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
