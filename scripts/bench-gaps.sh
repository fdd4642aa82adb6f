#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): how evenly each engine spaces a paced run's frames, measured where they
# arrive. For each engine that sends on this host (the kernel engine where live frames work, xsk
# always) and each rate (10k, 100k, 1M frames/s), BENCH_FRAMES frames (default 100k, a tenth of a
# second at 1M) captured on the server's end with nanosecond timestamps; the gaps between
# consecutive frames against the schedule's interval: p50, p99, p99.9 and max, and the longest
# burst of frames closer than a tenth of the interval. A rate limiter in front of a server (a
# token bucket) drops what comes in bursts longer than its burst size, whatever the mean rate.
# Results: a table on stdout and results/bench-gaps.{txt,json}.
#   BENCH_FRAMES=100000 scripts/bench-gaps.sh
. "$(dirname "$0")/bench-lib.sh"
FRAMES=${BENCH_FRAMES:-100000}
bench_setup
python3 pcaps/mkpcap.py udp "$WORK/one-64.pcap" --count 1 --size 60
engines=xsk
bench_live_frames && engines="kernel xsk"
# the server's end needs an XDP program for the kernel engine's frames (NAPI); it passes them
ip netns exec "$NS_S" "$XR" count -i "$TB_SRV_IF" --any -q --duration 3600s &
COUNT_PID=$!
trap 'kill -INT $COUNT_PID 2>/dev/null; wait; tb_down; rm -rf "$WORK"' EXIT
sleep 1

: >"$WORK/rows"
for engine in $engines; do
	for rate in 10000 100000 1000000; do
		cap=$WORK/$engine-$rate.pcap
		ip netns exec "$NS_S" tcpdump -i "$TB_SRV_IF" --immediate-mode -B 65536 -Q in -n -s 64 \
			--time-stamp-precision nano -w "$cap" -c "$FRAMES" udp and dst port 9 2>"$cap.log" &
		tcpdump_pid=$!
		for _ in $(seq 100); do grep -q "listening on" "$cap.log" 2>/dev/null && break; sleep 0.1; done
		ip netns exec "$NS_G" "$XR" replay -i "$TB_GEN_IF" --engine "$engine" -q --pps "$rate" \
			--count "$FRAMES" "$WORK/one-64.pcap" || echo "$engine at $rate: replay exited $?" >&2
		sleep 0.5
		kill -INT "$tcpdump_pid" 2>/dev/null || true
		wait "$tcpdump_pid" 2>/dev/null || true
		python3 - "$cap" "$engine" "$rate" "$FRAMES" >>"$WORK/rows" <<-'PY'
		import struct, sys
		path, engine, rate, want = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
		d = open(path, "rb").read()
		ts, off = [], 24
		while off + 16 <= len(d):
		    sec, nsec, incl, _ = struct.unpack_from("<IIII", d, off)
		    ts.append(sec * 10**9 + nsec)
		    off += 16 + incl
		gaps = sorted(b - a for a, b in zip(ts, ts[1:]))
		interval = 1e9 / rate
		q = lambda p: gaps[min(len(gaps) - 1, int(p * len(gaps)))] / interval if gaps else 0
		burst = best = 0
		for a, b in zip(ts, ts[1:]):
		    burst = burst + 1 if b - a < interval / 10 else 0
		    best = max(best, burst)
		print(f"{engine} {rate} {len(ts)} {want} {q(0.5):.3f} {q(0.99):.3f} {q(0.999):.3f} "
		      f"{(gaps[-1] / interval if gaps else 0):.1f} {best + 1 if gaps else 0}")
		PY
	done
done

python3 - "$WORK/rows" <<-'PY' | tee results/bench-gaps.txt
import json, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
print("gaps between frames at the server, in intervals of the schedule (1 = on time)")
print(f"{'engine':8} {'frames/s':>9} {'captured':>9} {'p50':>6} {'p99':>6} {'p99.9':>6} {'max':>7} {'burst':>6}")
out = []
for e, r, n, want, p50, p99, p999, mx, burst in rows:
    print(f"{e:8} {int(r):>9} {n + '/' + want:>9} {p50:>6} {p99:>6} {p999:>6} {mx:>7} {burst:>6}")
    out.append(dict(engine=e, pps=int(r), captured=int(n), frames=int(want), p50=float(p50),
                    p99=float(p99), p99_9=float(p999), max=float(mx), longest_burst=int(burst)))
json.dump(out, open("results/bench-gaps.json", "w"), indent=1)
PY
