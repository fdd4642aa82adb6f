#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): what count's kernel drop reasons and books cost the server, at a fixed
# rate of frames the server's stack drops (to another MAC: OTHERHOST, one kfree_skb each).
# The modes, interleaved round by round:
#   counters   count --no-drop-reasons (XDP counter and the kernel's counters only)
#   udp        count --udp (skb:kfree_skb, and the UDP side of the books)
#   all        count with no protocol filter (every program: also netif_receive_skb and TCP's)
# Measured: the server's softirq CPU time (/proc/stat, all CPUs; the veth peer's NAPI runs there)
# per frame, and the drops the tracer counted (they must be every frame in the modes that trace).
# Results: a table on stdout and results/bench-drops.{txt,raw.tsv}; per-round ratios against
# counters.
#   BENCH_REPS=5 BENCH_SECS=5 BENCH_DROPS_PPS=1000000 scripts/bench-drops.sh
. "$(dirname "$0")/bench-lib.sh"
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-5}
PPS=${BENCH_DROPS_PPS:-1000000}
bench_setup
DROPS_RAW=$WORK/drops.tsv
: >"$DROPS_RAW"

# softirq jiffies of all CPUs (/proc/stat's 7th field of the cpu line)
softirq() { awk '$1 == "cpu" { print $8 }' /proc/stat; }

run_mode() { # MODE COUNT_ARGS...
	local mode=$1 si0 si1 hz
	shift
	COUNT_ARGS=("$@")
	COUNT_DROP=
	count_start
	si0=$(softirq)
	ip netns exec "$NS_G" "$XR" gen udp -i "$TB_GEN_IF" --dst "$TB_SRV_IP:9" --dst-mac 02:00:00:00:00:99 \
		--pps "$PPS" --duration "${SECS}s" -q --json "$WORK/g.json" || true
	si1=$(softirq)
	count_stop
	hz=$(getconf CLK_TCK)
	python3 - "$WORK/c.json" "$WORK/g.json" "$rep" "$mode" "$si0" "$si1" "$hz" >>"$DROPS_RAW" <<-'PY'
	import json, sys
	c, g = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
	rep, mode, si0, si1, hz = sys.argv[3], sys.argv[4], int(sys.argv[5]), int(sys.argv[6]), int(sys.argv[7])
	frames = c["matched"]
	traced = c.get("drops", {}).get("inbound", {}).get("OTHERHOST", 0)
	ns = (si1 - si0) / hz * 1e9 / frames if frames else 0
	print("%s\t%s\t%d\t%d\t%d\t%.1f" % (rep, mode, g["sent"], frames, traced, ns))
	PY
	echo "  $mode: $(tail -n 1 "$DROPS_RAW" | awk '{printf "%s frames, %s traced, %s ns softirq/frame", $4, $5, $6}')" >&2
}

for rep in $(seq "$REPS"); do
	echo "round $rep" >&2
	run_mode counters --udp --dport 9 --no-drop-reasons
	run_mode udp --udp --dport 9
	run_mode all
done

python3 - "$DROPS_RAW" "$PPS" <<'PY' | tee results/bench-drops.txt
import statistics as st, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
by = {}
for rep, mode, sent, frames, traced, ns in rows:
    by.setdefault(mode, {})[rep] = (int(frames), int(traced), float(ns))
print("count's cost at %s frames/s of drops (OTHERHOST), server softirq CPU per frame; median of %d rounds"
      % (sys.argv[2], len(by["counters"])))
print("%-10s %12s %12s %14s %18s" % ("mode", "frames", "traced", "ns/frame", "extra ns/frame"))
for mode in ("counters", "udp", "all"):
    r = by[mode]
    extra = [r[k][2] - by["counters"][k][2] for k in r if k in by["counters"]]
    print("%-10s %12d %12d %14.1f %18.1f" % (mode, st.median(v[0] for v in r.values()),
          st.median(v[1] for v in r.values()), st.median(v[2] for v in r.values()), st.median(extra)))
    if mode != "counters":
        bad = [k for k, v in r.items() if v[1] != v[0]]
        if bad:
            print("  rounds %s: the tracer did not count every frame" % ",".join(bad))
print("per round (mode/counters, ns per frame):")
for k in sorted(by["counters"], key=int):
    print("  round %s: udp %.2fx, all %.2fx" % (k, by["udp"][k][2] / by["counters"][k][2],
          by["all"][k][2] / by["counters"][k][2]))
PY
cp "$DROPS_RAW" results/bench-drops.raw.tsv
