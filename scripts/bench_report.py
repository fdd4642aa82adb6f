#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Tables for the benchmarks: medians of the runs scripts/bench-lib.sh recorded.
  bench_report.py replay RAW RATES REPS SECS [NAPI-MODE JSON-OUT]
  bench_report.py rewrite RAW SWEEP REPS SECS
  bench_report.py lorawan RAW READY REPS SECS
  bench_report.py meta PROBE_JSON OUT        where a benchmark runs (bench-lib.sh's bench_meta)
  bench_report.py docs [RESULTS [OUT]]       docs/benchmarks.md from results/
"""
import glob
import json
import os
import platform
import statistics
import sys
import time


def medians(path):
    """rows "name size pps cpu [round]" -> (names in order, {(name, size): (median pps, median cpu, runs)})"""
    names, res, _ = per_round(path)
    return names, res


def per_round(path):
    """as medians, and {(name, size): {round: pps}} for per-round ratios"""
    rows = [l.rstrip("\n").split("\t") for l in open(path) if l.strip()]
    runs, order, rounds = {}, [], {}
    for row in rows:
        name, size, pps, cpu = row[:4]
        runs.setdefault((name, size), []).append((float(pps), float(cpu)))
        rnd = int(row[4]) if len(row) > 4 else len(runs[(name, size)])
        rounds.setdefault((name, size), {})[rnd] = float(pps)
        if name not in order:
            order.append(name)
    return order, {k: (statistics.median(p for p, _ in v), statistics.median(c for _, c in v), len(v))
                   for k, v in runs.items()}, rounds


def round_ratios(rounds, ours, other):
    """ours/other per round both ran in (interleaved: the same moment of the machine), and their median"""
    a, b = rounds.get(ours, {}), rounds.get(other, {})
    r = [a[i] / b[i] for i in sorted(a) if i in b and b[i] > 0]
    return r, (statistics.median(r) if r else None)


def replay(a):
    names, res, rounds = per_round(a[0])
    mode = a[4] if len(a) > 4 else "default"
    print("Top speed on the test bed (veth, receiver counts and drops in XDP; NAPI: %s), medians of up to %s runs of %s s"
          % (mode, a[2], a[3]))
    print("%-26s %14s %14s %12s %12s" % ("sender", "64B pps", "300B pps", "64B us/pkt", "300B us/pkt"))
    for n in names:
        x, y = res.get((n, "64"), (0, 0, 0)), res.get((n, "300"), (0, 0, 0))
        print("%-26s %14.0f %14.0f %12.3f %12.3f" % (n, x[0], y[0], x[1], y[1]))
    print()
    print("xdpreplay / other, received pps, same frame size: median of the per-round ratios [each round's]")
    pairs = [("xdpreplay-1t", n) for n in names if not n.startswith("xdpreplay") and not n.endswith("-2t")
             and not n.endswith("-2p")]
    pairs += [("xdpreplay-2t", n) for n in names if n in ("xdp-trafficgen-2t", "trafgen-2p")]
    pairs += [("xdpreplay-2t", "xdpreplay-1t")]
    # xsk beside the kernel engine (bench_xsk_rows): against the same tools, one thread against two
    if "xdpreplay-xsk-1t" in names:
        pairs += [("xdpreplay-xsk-1t", n) for n in names if n in ("trafgen-1p", "tcpreplay")]
        pairs += [("xdpreplay-xsk-2t", "xdpreplay-xsk-1t"), ("xdpreplay-xsk-1t", "xdpreplay-1t"),
                  ("xdpreplay-xsk-2t", "xdpreplay-2t")]
    ratios = []
    for ours, n in pairs:
        for s in ("64", "300"):
            r, med = round_ratios(rounds, (ours, s), (n, s))
            if med is None:
                continue
            ratios.append({"ours": ours, "other": n, "size": s, "median": med, "rounds": r})
            print("  %-16s vs %-20s %4sB %7.2fx  [%s]" % (ours, n, s, med, " ".join("%.2f" % x for x in r)))
    if not any(n.startswith("xdp-trafficgen") for n in names):
        print("  xdp-trafficgen: not run; XDP_TOOLS=DIR (an xdp-tools v1.6.3 tree) builds and runs it")
    print()
    print("Rate precision (64 B, one run each): asked, received, error, per-second spread at the server,")
    print("CPU of one core, the frames the sender says fell behind its schedule, those the driver refused")
    print("(a ring the receiver had not drained), and the per-second spread of what the sender sent (xdpreplay")
    print("only: a receiver scheduled in bursts spreads the server's seconds, not the sender's); the last")
    print("rate: 90% of the top speed of a run just before it")
    print("%-10s %9s %11s %12s %9s %9s %7s %12s %9s %9s" % ("sender", "asked pps", "received", "achieved pps",
                                                           "error %", "spread %", "CPU %", "fell behind",
                                                           "refused", "sent spr %"))
    precision = []
    for l in open(a[1]):
        t, rate, n, ach, err, spread, cpu, behind, refused, sent_spread = \
            (l.rstrip("\n").split("\t") + ["-", "-", "-"])[:10]
        precision.append({"sender": t, "asked_pps": float(rate), "received": int(n), "achieved_pps": float(ach),
                          "error_pct": float(err), "spread_pct": float(spread), "cpu_pct": float(cpu),
                          "fell_behind": int(behind) if behind.isdigit() else None,
                          "driver_refused": int(refused) if refused.isdigit() else None,
                          "sent_spread_pct": float(sent_spread) if sent_spread != "-" else None})
        print("%-10s %9s %11s %12s %9s %9s %7s %12s %9s %9s" % (t, rate, n, ach, err, spread, cpu, behind, refused,
                                                                sent_spread))
    json.dump({"napi": mode,
               "top_speed": [{"sender": n, "size": s, "pps": v[0], "cpu_us_per_pkt": v[1], "runs": v[2],
                              "rounds": [rounds[(n, s)][i] for i in sorted(rounds[(n, s)])]}
                             for (n, s), v in res.items()],
               "ratios": ratios, "rate_precision": precision},
              open(a[5] if len(a) > 5 else "results/bench-replay.json", "w"), indent=1)


def rewrite(a):
    names, res, rounds = per_round(a[0])
    print("Rewrite overhead and SYN generation (received at the server), medians of up to %s runs of %s s"
          % (a[2], a[3]))
    print("%-30s %12s %12s" % ("sender", "pps", "us/pkt"))
    for n in names:
        for (name, size), v in res.items():
            if name == n:
                print("%-30s %12.0f %12.3f" % (n, v[0], v[1]))
    ratios = []

    def ratio(what, ours, other):
        r, med = round_ratios(rounds, (ours, "64"), (other, "64"))
        if med is not None:
            ratios.append({"what": what, "ours": ours, "other": other, "median": med, "rounds": r})
            print("  %-54s %6.3f  [%s]" % (what, med, " ".join("%.3f" % x for x in r)))

    print("\nper-round ratios of pps received (median [each round's])")
    # xdpreplay-...: the engine --engine auto takes; xdpreplay-xsk-...: xsk beside the kernel engine
    for p in ("xdpreplay", "xdpreplay-xsk"):
        if (p + "-static", "64") not in res:
            continue
        ratio("%s: src IP + src port + checksums / static" % p, p + "-src+sport+csum", p + "-static")
        ratio("%s: gen syn / hping3 --flood -S" % p, p + "-gen-syn", "hping3-S-flood")
    for n in ("static", "src+sport+csum", "gen-syn"):
        if ("xdpreplay-xsk-" + n, "64") in res:
            ratio("xsk / the kernel engine: %s" % n, "xdpreplay-xsk-" + n, "xdpreplay-" + n)
    print("  xdp-trafficgen: not run (Debian's 1.3.1 does not run on this kernel)")
    print("\nSYN rate sweep: asked for, sent, answered, answered within 10 ms and 50 ms (share of those asked")
    print("for: a SYN the sender did not keep up with is not answered in time)")
    best = {10: 0, 50: 0}
    for l in open(a[1]):
        rate, asked, sent, answered, w10, w50 = map(int, l.split())
        print("  %8d SYN/s: asked %8d, sent %8d, answered %8d, <=10 ms %.4f, <=50 ms %.4f"
              % (rate, asked, sent, answered, w10 / asked if asked else 0, w50 / asked if asked else 0))
        for b, w in ((10, w10), (50, w50)):
            if asked and w / asked >= 0.999:
                best[b] = max(best[b], rate)
    print("highest rate with >= 99.9%% answered within 10 ms: %d SYN/s; within 50 ms: %d SYN/s"
          % (best[10], best[50]))
    json.dump({"runs": [{"sender": n, "size": s, "pps": v[0], "cpu_us_per_pkt": v[1], "runs": v[2]}
                        for (n, s), v in res.items()], "ratios": ratios,
               "best_10ms": best[10], "best_50ms": best[50]},
              open("results/bench-rewrite.json", "w"), indent=1)


def lorawan(a):
    names, res, rounds = per_round(a[0])
    print("LoRaWAN uplinks over Semtech UDP received at the server, 1 generator thread, fleets of 300,000")
    print("devices x 2,000 gateways; medians of up to %s runs of %s s (hbK: each uplink heard by K gateways)"
          % (a[2], a[3]))
    print("(us/pkt: the sender's CPU time over frames received, fleet set-up and the precompute thread included)")
    print("%-20s %6s %14s %16s %10s" % ("sender", "fleet", "PUSH_DATA/s", "distinct uplinks/s", "us/pkt"))
    for n in names:
        for (name, hb), v in sorted(res.items()):
            if name == n:
                k = int(hb[2:]) if hb[2:].isdigit() else 1
                print("%-20s %6s %14.0f %16.0f %10.3f" % (n, hb, v[0], v[0] / k, v[1]))
    print()
    nc = res.get(("nc-loop", "hb1"))
    for hb in ("hb1", "hb3", "hb1v11"):
        ours = res.get(("xdpreplay-lorawan", hb))
        for n, what in (("xdpreplay-lorawan", "precomputed with AES-NI, written in BPF"),
                        ("xdpreplay-bpf-only", "all crypto in BPF")):
            # LoRaWAN 1.1 against the 1.0 fleet's static frames (the same sizes), and against 1.0
            r, med = round_ratios(rounds, (n, hb), ("xdpreplay-static", hb[:3]))
            if hb.endswith("v11"):
                r11, med11 = round_ratios(rounds, (n, hb), (n, "hb1"))
                if med11 is not None:
                    print("hb1: LoRaWAN 1.1 / 1.0 valid uplinks (%s), per round: %.1f%% [%s]"
                          % (what, 100 * med11, " ".join("%.1f" % (100 * x) for x in r11)))
            if med is not None:
                print("%s: valid uplinks (%s) / the same frames static, per round: %.1f%% [%s]"
                      % (hb, what, 100 * med, " ".join("%.1f" % (100 * x) for x in r)))
        if ours and nc and nc[0] > 0:
            print("%s: xdpreplay lorawan send / nc -w0 -u loop (PUSH_DATA/s) = %.0fx" % (hb, ours[0] / nc[0]))
    # xsk beside the kernel engine (bench_xsk_rows)
    for ours, other, what in (("xdpreplay-xsk-lorawan", "xdpreplay-xsk-static",
                               "xsk: valid uplinks / the same frames static"),
                              ("xdpreplay-xsk-lorawan", "xdpreplay-lorawan",
                               "xsk / the kernel engine: valid uplinks"),
                              ("xdpreplay-xsk-static", "xdpreplay-static", "xsk / the kernel engine: static")):
        r, med = round_ratios(rounds, (ours, "hb1"), (other, "hb1"))
        if med is not None:
            print("hb1: %s, per round: %.1f%% [%s]" % (what, 100 * med, " ".join("%.1f" % (100 * x) for x in r)))
    join = res.get(("xdpreplay-join", "otaa"))
    if join:
        print("join requests (1M OTAA devices, one JoinRequest each, valid MIC, distinct DevNonces): %.0f/s, "
              "%.3f us of sender CPU each" % (join[0], join[1]))
    ready = {}
    for l in open(a[1]):
        hb, secs, mib = l.split("\t")
        ready.setdefault(hb, []).append((float(secs), float(mib)))
    for hb, v in sorted(ready.items()):
        print("fleet %s (300k devices x 2k gateways): ready in %.2f s (median), peak RSS %.0f MiB (median)"
              % (hb, statistics.median(x for x, _ in v), statistics.median(y for _, y in v)))
    json.dump({"runs": [{"sender": n, "fleet": s, "pps": v[0], "cpu_us_per_pkt": v[1], "runs": v[2]}
                        for (n, s), v in res.items()],
               "ready": {hb: {"ready_s": statistics.median(x for x, _ in v),
                              "peak_rss_mib": statistics.median(y for _, y in v)} for hb, v in ready.items()}},
              open("results/bench-lorawan.json", "w"), indent=1)


def engine_of(probe):
    """the engine and mode --engine auto takes where probe ran (its JSON's checks)"""
    c = probe.get("checks", {})
    ok = lambda k: c.get(k, {}).get("ok", False)
    if ok("live_frames"):
        return "kernel (live frames)"
    if ok("afxdp_zerocopy"):
        return "xsk zero-copy"
    if ok("afxdp_copy"):
        return "xsk copy (live frames refused)" if "live_frames" in c else "xsk copy"
    return "unknown (probe found no engine)"


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"


def meta(a):
    try:
        probe = json.load(open(a[0]))
    except (OSError, ValueError):
        probe = {}
    m = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
         "kernel": platform.release(),
         "cpu": cpu_model(),
         "cpus": os.cpu_count(),
         "memory_gib": round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30, 1),
         "engine": engine_of(probe)}
    with open(a[1], "w") as f:
        json.dump(m, f)
        f.write("\n")


# the order of the page: what a reader looks for first
DOC_ORDER = ["bench-replay", "bench-rewrite", "bench-gaps", "bench-startup", "bench-tcp", "bench-mqtt", "bench-mqtt-paced",
             "bench-mqtt-search", "bench-mqtt-flood", "bench-mqtt-sub", "bench-mqtt-calls", "bench-dns",
             "bench-lorawan", "bench-drops", "bench-shards"]


def docs(a):
    results = a[0] if a else "results"
    out = a[1] if len(a) > 1 else "docs/benchmarks.md"
    tables = sorted(glob.glob(os.path.join(results, "bench-*.txt")),
                    key=lambda p: (DOC_ORDER.index(os.path.basename(p)[:-4])
                                   if os.path.basename(p)[:-4] in DOC_ORDER else len(DOC_ORDER), p))
    nav = open("docs/benchmark-notes.md").read().split("\n")[2]
    lines = ["# Benchmarks", "", nav, "",
             "The latest table of each benchmark, as `scripts/bench_report.py docs` found them in `results/`",
             "(`sudo make bench` runs them all and writes this page). How each runs, what it compares and",
             "what earlier runs found: [benchmark-notes.md](benchmark-notes.md). Each table says when, on",
             "which kernel and host, and with which engine xdpreplay ran (`--engine auto` on the sender's",
             "interface, as `xdpreplay probe` found it); rows named `-xsk` force the xsk engine.", ""]
    for p in tables:
        name = os.path.basename(p)[:-4]
        lines.append("## " + name)
        lines.append("")
        try:
            m = json.load(open(p[:-4] + ".meta.json"))
            lines.append("%s; kernel %s; %s x %s, %s GiB; xdpreplay engine: %s." %
                         (m["date"], m["kernel"], m["cpus"], m["cpu"], m["memory_gib"], m["engine"]))
        except (OSError, ValueError, KeyError):
            lines.append("Run %s; where and with which engine was not recorded (a run before bench_meta): "
                         "run `scripts/%s.sh` again." %
                         (time.strftime("%Y-%m-%d", time.gmtime(os.path.getmtime(p))), name))
        lines += ["", "```", open(p).read().rstrip("\n"), "```", ""]
    if not tables:
        lines.append("No results yet: `sudo make bench`.")
    with open(out, "w") as f:
        f.write("\n".join(lines).rstrip("\n") + "\n")


if __name__ == "__main__":
    {"replay": replay, "rewrite": rewrite, "lorawan": lorawan, "meta": meta, "docs": docs}[sys.argv[1]](sys.argv[2:])
