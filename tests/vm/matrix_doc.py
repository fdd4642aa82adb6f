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


# What each program needs that not every kernel has: the facts the matrix is read against, and
# what a kernel not in it gets "on paper". Written by hand; the table above it is measured.
NEEDS = """## What each part needs

| part | needs | first kernel |
|---|---|---|
| kernel engine (`xr_gen`) | `BPF_PROG_RUN` with live frames; `bpf_loop` (its back-off) | 5.18 |
| xsk engine, frames built in userspace (`replay`, `--rewrite`, `gen udp`, `icmp`, `syn`, `dns`) | AF_XDP; the reply program where answers are counted | 4.18 |
| xsk engine with a hook (`lorawan send`): the frame builder `xr_build` | `bpf_xdp_load_bytes`, `bpf_xdp_store_bytes`; without them, JoinRequests and ABP uplinks are finished in userspace (the uplinks from the AES-NI ring: a CPU with AES-NI; no confirmed uplinks, no MAC answers) | 5.18 |
| TCP sessions (`gen tcp`, `mqtt`, `redis`, `replay --sessions`): `xr_replies_tcp` | `bpf_loop`, `bpf_xdp_load_bytes` | 5.18 |
| LoRaWAN's answers: `xr_replies_lora` | `bpf_xdp_load_bytes`; without it `xr_replies_lora_acks` matches PUSH_ACKs and PULL_ACKs, copies JoinAccepts out by direct loads, and counts data downlinks unread (for runs that wait for none) | 5.18 |
| `count`'s drop reasons | `skb:kfree_skb` with its reason (and, from 6.x, `rx_sk`: both shapes are loaded) | 5.17 |
| `count`'s sockets' books (`unattributed`) | the `sock_recv_length` tracepoint | after 6.1 (6.12 has it) |

A kernel that lacks one of these refuses the run in one line naming it and the first kernel that
has it (`xdpreplay probe` gives a row per program). Passing the verifier is another matter: the
verifier of 6.1 loses bounds that 6.12's keeps, and gave up on `gen mqtt`'s reply program at its
million instructions until the TCP pump's fill became a global function (verified once, not at each
caller's state); only a run on that kernel says, which is why the matrix is measured.

## On paper (not measured here)

- **Ubuntu 22.04 (5.15)**: as 5.10: the xsk engine for the commands whose frames are built in
  userspace and for `lorawan send`'s ABP uplinks and joins, TCP sessions refused
  (`bpf_loop` 5.17, `bpf_xdp_*_bytes` 5.18), the kernel engine refused (live frames 5.18), `count`
  without drop reasons. Its HWE kernel (6.8) is
  as Ubuntu 24.04.
- **Ubuntu 24.04 (6.8)**: every facility above; the verifier lies between 6.1's and 6.12's, both
  of which take every program.
- **RHEL 9 / Rocky 9 (5.14 with BPF backported)**: its BPF and XDP were rebased to 5.18 and later
  (CentOS Stream 9: "BPF and XDP rebase to v5.18"), live frames among them, so the facilities
  above are there; what its verifier takes is unmeasured.
"""


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
        f.write("\n".join(out) + "\n" + NEEDS)
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        print("usage: matrix_doc.py MATRIX.tsv DOC.md", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1], sys.argv[2]))
