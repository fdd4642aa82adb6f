#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): the published flood benchmark's calls through Mosquitto (Debian's, on one
# CPU, configured as that benchmark's broker: scripts/mosquitto.sh), in its shape: pattern, size,
# calls, seconds, calls per second, ms each. One responder answers every caller: xdpreplay's
# (gen mqtt --subscribe 'req/+' --answer 'res/{c}', in XDP, from the second sender namespace). The
# callers, interleaved round by round:
#   xdpreplay sync       one caller, a call at a time (gen mqtt --await 'res/{c}'), as the
#                        published benchmark's single client
#   xdpreplay sync xN    N callers at once, each a call at a time
#   xdpreplay async      one caller, 10 calls at a time (--burst 10; fewer where 10 requests
#                        are more than the 16 KB a burst holds: 3 at 5 KB, 1 at 10 KB)
#   mosquitto_rr         Debian's request/response client (MQTT 5), one call per process in a
#                        shell loop, the way the LoRaWAN benchmark's nc loop sent
# Request sizes: 16 B (the stamp alone: the published "0 KB"), 1, 5 and 10 KB; each answer is the
# request's 16-byte stamp on res/{caller}. ms each: the median request-to-answer time (xdpreplay),
# the loop's time per call (mosquitto_rr: a process, a connection and a call). Sender CPU per call:
# user + system time (xdpreplay's includes loading and verifying its BPF programs, ~1-2 s a run,
# which a short run does not amortize), and its XDP program's and pump thread's time alone (xdp).
# Results: a table on stdout and results/bench-mqtt-calls.{txt,raw.tsv}; per-round ratios.
#   BENCH_REPS=3 BENCH_CALLS=2000 BENCH_CALLERS=20 BENCH_RR_CALLS=100 scripts/bench-mqtt-calls.sh
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/mosquitto.sh"
REPS=${BENCH_REPS:-3}
CALLS=${BENCH_CALLS:-2000}
CALLERS=${BENCH_CALLERS:-20}
RR_CALLS=${BENCH_RR_CALLS:-100}
SIZES=${BENCH_MQTT_SIZES:-16 1024 5120 10240}
have mosquitto && have mosquitto_rr ||
	{ echo "bench-mqtt-calls: needs mosquitto and mosquitto_rr (scripts/deps.sh)" >&2; exit 1; }
bench_mqtt_bed bench-mqtt-calls
# the responder for the whole run: it answers every stamped request, whoever sent it
RESP_IP=$(tb_gen_ip 1)
ip netns exec "$(tb_gen_ns 1)" "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --username bench --password flood-0 \
	--client-id 'responder-{c}' --subscribe 'req/+' --answer 'res/{c}' --publishers 100000 \
	--messages 10000 --count 1 --wait 3600s -q --json "$WORK/responder.json" &
RESP_PID=$!
BENCH_PIDS+=("$RESP_PID")
broker_holds "$RESP_IP" 1
RAW_CALLS=$WORK/calls.tsv
: >"$RAW_CALLS"
FIRST=0

# record TOOL PATTERN SIZE ROUND CALLS SECONDS MS_EACH CPU_S XDP_CPU_S
record() {
	python3 -c 'import sys; n, s, c, x = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[8]), float(sys.argv[9])
print("%s\t%s\t%s\t%s\t%d\t%.3f\t%.0f\t%.3f\t%.2f\t%.2f" % (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], n, s,
      n / s if s > 0 else 0, float(sys.argv[7]), c * 1e6 / n if n else 0, x * 1e6 / n if n else 0))' "$@" >>"$RAW_CALLS"
	echo "  round $4 $1 $2 $3 B: $(tail -n 1 "$RAW_CALLS" | cut -f7) calls/s, $7 ms each," \
		"$(tail -n 1 "$RAW_CALLS" | cut -f9) us CPU each ($(tail -n 1 "$RAW_CALLS" | cut -f10) in XDP)" >&2
}

# xr PATTERN SIZE ROUND CALLERS BURST: gen mqtt callers, CALLS calls in all; each run's callers are
# new numbers (--first-seq), so that the responder's books keep them apart
xr() {
	local pattern=$1 size=$2 round=$3 callers=$4 burst=$5 per xdp
	# a burst is one request of at most 16 KB
	while [ "$burst" -gt 1 ] && [ $((burst * (size + 64))) -gt 16384 ]; do burst=$((burst - 1)); done
	per=$((CALLS / callers / burst * burst))
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" taskset -c 0 "$XR" gen mqtt \
		-i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --username bench --password flood-0 \
		--topic 'req/{c}' --await 'res/{c}' --payload "$size" --messages "$per" --burst "$burst" \
		--count "$callers" --first-seq "$FIRST" --pps 10k --wait 60s -q --json "$WORK/g.json" \
		>"$WORK/out" 2>&1 || echo "bench-mqtt-calls: gen mqtt exited $?: $(tail -n 3 "$WORK/out")" >&2
	FIRST=$((FIRST + callers))
	xdp=$(python3 -c 'import json,sys; g = json.load(open(sys.argv[1]))
print((g.get("replies_xdp_ns", 0) + g["segments"]["pump"]["cpu_ns"]) / 1e9)' "$WORK/g.json")
	record xdpreplay "$pattern" "$size" "$round" "$(jget "$WORK/g.json" calls.answered)" \
		"$(jget "$WORK/g.json" calls.seconds)" "$(jget "$WORK/g.json" calls.ms_each)" \
		"$(python3 -c "print($(awk '{print $1 + $2}' "$WORK/time" | tail -n 1) + $xdp)")" "$xdp"
}

# rr SIZE ROUND: RR_CALLS calls of mosquitto_rr, one process each (answered on res/1094795585)
rr() {
	rr_loop "$1" "$RR_CALLS"
	record mosquitto_rr sync "$1" "$2" "$RR_N" "$RR_SECS" \
		"$(python3 -c "print($RR_SECS * 1e3 / max($RR_N, 1))")" \
		"$(awk '{print $1 + $2}' "$WORK/time" | tail -n 1)" 0
}

for round in $(seq "$REPS"); do
	for size in $SIZES; do
		xr sync "$size" "$round" 1 1
		xr "sync-x$CALLERS" "$size" "$round" "$CALLERS" 1
		xr async "$size" "$round" 1 10
		rr "$size" "$round"
	done
done

python3 - "$RAW_CALLS" <<'PY' | tee results/bench-mqtt-calls.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
keys = []
for r in rows:
    if (r[0], r[1], r[2]) not in keys:
        keys.append((r[0], r[1], r[2]))
print("Calls through Mosquitto 2.0.11 (one CPU), answered by xdpreplay's responder in XDP; median of %d rounds"
      % len({r[3] for r in rows}))
print("published (one Perl client, Mosquitto 2.0.10): sync 88-374/s (11.4 ms each at 0 KB), async 3,594-3,930/s")
print("%-14s %-10s %6s %7s %8s %10s %9s %12s %12s" % ("caller", "pattern", "bytes", "calls", "seconds",
                                                    "calls/s", "ms each", "CPU/call us", "XDP/call us"))
for t, p, s in keys:
    sel = [r for r in rows if (r[0], r[1], r[2]) == (t, p, s)]
    med = lambda i: statistics.median(float(r[i]) for r in sel)
    print("%-14s %-10s %6s %7.0f %8.3f %10.0f %9.3f %12.1f %12.2f" % (t, p, s, med(4), med(5), med(6), med(7),
                                                                     med(8), med(9)))
print("per round, xdpreplay / mosquitto_rr calls/s (sync, one caller each):")
for s in sorted({r[2] for r in rows}, key=int):
    xs = [r for r in rows if r[0] == "xdpreplay" and r[1] == "sync" and r[2] == s]
    ms = [r for r in rows if r[0] == "mosquitto_rr" and r[2] == s]
    print("  %6s B: %s" % (s, ", ".join("%.1f" % (float(x[6]) / max(float(m[6]), 1)) for x, m in zip(xs, ms))))
PY
cp "$RAW_CALLS" results/bench-mqtt-calls.raw.tsv
kill -TERM $RESP_PID 2>/dev/null
wait $RESP_PID 2>/dev/null || true
echo "responder: $(jget "$WORK/responder.json" deliveries.answers_sent) answers sent, $(jget "$WORK/responder.json" segments.again) segments sent again" >&2
