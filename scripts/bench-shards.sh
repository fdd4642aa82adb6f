#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): many senders, one run. On a bed with 3 sender namespaces joined to the
# server by a bridge, 1, 2 and 3 shards of one gen udp run at top speed (interleaved round by
# round): the total received at the server (count --drop on the bridge, generic XDP) and each
# round's ratio to one shard, and the start skew between the shards (their first departures,
# CLOCK_REALTIME, as each shard's JSON gives start_unix): started by the shell with no barrier, and
# with --start-at (one start time given to all, 1.5 s ahead, as search under MPI does).
# Results: a table on stdout and results/bench-shards.{txt,json}.
#   BENCH_REPS=5 BENCH_SECS=3 scripts/bench-shards.sh
. "$(dirname "$0")/bench-lib.sh"
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-3}
bench_setup --senders 3

# shards N [at]: one run in N shards from senders 0..N-1 (at: with --start-at); appends
# "shards<N>[-at] 64 pps skew_us" to $RAW
shards() {
	local n=$1 at=${2:-} i pids=() matched dur start=()
	count_start
	if [ -n "$at" ]; then
		start=(--start-at "$(python3 -c 'import time; print("%.3f" % (time.time() + 1.5))')")
	fi
	for i in $(seq 0 $((n - 1))); do
		"$XR" gen udp -i "$TB_GEN_IF" --netns "$(tb_gen_ns "$i")" --dst "$TB_SRV_IP:9" -q \
			--duration "${SECS}s" --shard "$i/$n" "${start[@]}" --json "$WORK/g$i.json" &
		pids+=($!)
	done
	for i in "${pids[@]}"; do wait "$i" || true; done
	count_stop
	matched=$(jget "$WORK/c.json" matched)
	dur=$(jget "$WORK/c.json" first_to_last_s)
	python3 - "$n" "$matched" "$dur" "$WORK" "${at:+-at}" >>"$RAW" <<-'PY'
	import json, sys
	n, matched, dur, work = int(sys.argv[1]), float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
	starts = [json.load(open("%s/g%d.json" % (work, i)))["start_unix"] for i in range(n)]
	print("shards%d%s\t64\t%.0f\t%.1f" % (n, sys.argv[5], matched / dur if dur > 0 else 0, (max(starts) - min(starts)) * 1e6))
	PY
	echo "  $n shard(s): $(tail -n 1 "$RAW" | cut -f3) pps received, start skew $(tail -n 1 "$RAW" | cut -f4) us" >&2
}

echo "== 1, 2, 3 shards of gen udp (64 B, top speed), ${SECS}s runs, $REPS interleaved rounds" >&2
for rep in $(seq "$REPS"); do
	for n in 1 2 3; do shards "$n"; done
	for n in 2 3; do shards "$n" at; done
done

python3 - "$RAW" "$REPS" <<'PY' | tee results/bench-shards.txt
import json, statistics, sys
rows = [l.split("\t") for l in open(sys.argv[1]).read().split("\n") if l]
reps = int(sys.argv[2])
by = {}
for name, _, pps, skew in rows:
    by.setdefault(name, []).append((float(pps), float(skew)))
print("shards    received pps (median)  per-round ratio to 1 shard        start skew us (median, max)")
out = {}
for name in ("shards1", "shards2", "shards3", "shards2-at", "shards3-at"):
    v = by.get(name, [])
    ratios = [a[0] / b[0] for a, b in zip(v, by["shards1"]) if b[0] > 0]
    med = statistics.median(p for p, _ in v)
    skews = [s for _, s in v]
    print("%-9s %-23s %-33s %.1f, %.1f" % (name[6:], "%.2fM" % (med / 1e6),
          " ".join("%.2f" % r for r in ratios), statistics.median(skews), max(skews)))
    out[name] = {"pps_median": med, "pps": [p for p, _ in v], "ratio_to_1": ratios, "skew_us": skews}
json.dump(out, open("results/bench-shards.json", "w"), indent=1)
PY
