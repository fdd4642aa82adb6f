#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): xdpreplay against the senders it replaces, on the test bed, in one run.
#  1. Top speed: frames per second received by the server (xdpreplay count --drop), medians of
#     BENCH_REPS runs of BENCH_SECS seconds, 64- and 300-byte frames (with FCS), and the sender's
#     CPU time per received frame.
#  2. Rate precision: asked vs achieved at 1k, 10k, 100k, 1M pps over 10 s, the per-second
#     spread, and CPU use, beside tcpreplay --pps at the same rates.
# Results: a table on stdout and results/bench-replay.{txt,json}.
#   BENCH_REPS=5 BENCH_SECS=3 scripts/bench-replay.sh
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/testbed.sh
XR=$PWD/xdpreplay
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-3}
RATE_SECS=${BENCH_RATE_SECS:-10}
WORK=$(mktemp -d /tmp/xdpreplay-bench.XXXXXX)
mkdir -p results
RAW=$WORK/raw.tsv
cleanup() { tb_down; rm -rf "$WORK"; }
trap cleanup EXIT
trap 'exit 130' INT TERM

[ -x "$XR" ] || { echo "bench: build first (make)" >&2; exit 1; }
tb_up --queues 2
NS_G=$TB_NS_GEN
NS_S=$TB_NS_SRV

# frame files: 60 and 296 bytes without FCS (64 and 300 on the wire)
for size in 64 300; do
	python3 pcaps/mkpcap.py udp "$WORK/one-$size.pcap" --count 1 --size $((size - 4))
	python3 pcaps/mkpcap.py udp "$WORK/k-$size.pcap" --count 1000 --size $((size - 4))
	# trafgen's configuration: the same frame as a byte list
	python3 - "$WORK/one-$size.pcap" >"$WORK/trafgen-$size.cfg" <<-'EOF'
	import sys
	d = open(sys.argv[1], "rb").read()[40:]
	print("{ " + ", ".join("0x%02x" % b for b in d) + " }")
	EOF
done

jget() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }

# count_stop: the sender has ended; let the counter see the last frames, then stop it
count_stop() {
	sleep 0.8
	kill -INT "$CPID" 2>/dev/null || true
	wait "$CPID" || true
}

count_start() {
	rm -f "$WORK/ready"
	ip netns exec "$NS_S" "$XR" count -i "$TB_SRV_IF" --udp --dport 9 --drop --duration 600s -q \
		--ready-file "$WORK/ready" --json "$WORK/c.json" &
	CPID=$!
	for _ in $(seq 100); do [ -f "$WORK/ready" ] && return 0; sleep 0.05; done
	echo "bench: counter did not start" >&2
	exit 1
}

# measure NAME SIZE CMD...: one run; appends "name size pps cpu_us_per_frame" to RAW
measure() {
	local name=$1 size=$2 cpu matched dur
	shift 2
	count_start
	# CPU time of the sender and its children, from /usr/bin/time's format
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" "$@" >/dev/null 2>&1 || true
	count_stop
	matched=$(jget "$WORK/c.json" matched)
	dur=$(jget "$WORK/c.json" first_to_last_s)
	cpu=$(awk '{print $1 + $2}' "$WORK/time" | tail -n 1)
	python3 -c 'import sys; n,d,c=float(sys.argv[4]),float(sys.argv[5]),float(sys.argv[6])
print("%s\t%s\t%.0f\t%.3f" % (sys.argv[1], sys.argv[2], n/d if d>0 else 0, c*1e6/n if n else 0))' \
		"$name" "$size" x "$matched" "$dur" "$cpu" >>"$RAW"
	echo "  $name ${size}B: $(tail -n 1 "$RAW" | cut -f3) pps received" >&2
}

nc_loop() { # one datagram per nc process, as the published LoRaWAN benchmark sent its uplinks
	local payload end
	payload=$(head -c "$1" /dev/zero | tr '\0' x)
	end=$((SECONDS + SECS))
	while [ $SECONDS -lt $end ]; do printf '%s' "$payload" | nc -w0 -u "$TB_SRV_IP" 9; done
}
export -f nc_loop
export SECS TB_SRV_IP

have() { command -v "$1" >/dev/null 2>&1; }
ncpu=$(nproc)

echo "== top speed, ${SECS}s runs, medians of $REPS (received at the server)" >&2
for size in 64 300; do
	payload=$((size - 4 - 42))
	for rep in $(seq "$REPS"); do
		measure "xdpreplay-1t" $size "$XR" replay -i "$TB_GEN_IF" -q --duration ${SECS}s "$WORK/one-$size.pcap"
		measure "xdpreplay-1t-1000frames" $size "$XR" replay -i "$TB_GEN_IF" -q --duration ${SECS}s "$WORK/k-$size.pcap"
		[ "$ncpu" -ge 2 ] && measure "xdpreplay-2t" $size "$XR" replay -i "$TB_GEN_IF" -q --threads 2 \
			--duration ${SECS}s "$WORK/one-$size.pcap"
		measure "xdpreplay-xsk-1t" $size "$XR" replay -i "$TB_GEN_IF" -q --engine xsk --duration ${SECS}s \
			"$WORK/one-$size.pcap"
		measure "xdpreplay-seq-1t" $size "$XR" replay -i "$TB_GEN_IF" -q --rewrite ip.id=seq \
			--duration ${SECS}s "$WORK/one-$size.pcap"
		have trafgen && measure "trafgen-1p" $size timeout -s INT $SECS trafgen -o "$TB_GEN_IF" \
			-i "$WORK/trafgen-$size.cfg" -P 1 --no-sock-mem -Q -C
		have trafgen && [ "$ncpu" -ge 2 ] && measure "trafgen-2p" $size timeout -s INT $SECS trafgen \
			-o "$TB_GEN_IF" -i "$WORK/trafgen-$size.cfg" -P 2 --no-sock-mem -Q -C
		have tcpreplay && measure "tcpreplay" $size timeout -s INT $SECS tcpreplay -q -i "$TB_GEN_IF" \
			--topspeed --loop 0 "$WORK/k-$size.pcap"
		have hping3 && measure "hping3" $size timeout -s INT $SECS hping3 -q --flood --udp -p 9 -s 1024 \
			-d $payload "$TB_SRV_IP"
		[ "$rep" -le 2 ] && have nc && measure "nc-loop" $size bash -c "nc_loop $payload"
	done
done

echo "== rate precision, ${RATE_SECS}s runs" >&2
RATES=$WORK/rates.tsv
for rate in 1000 10000 100000 1000000; do
	for tool in xdpreplay tcpreplay; do
		[ $tool = tcpreplay ] && ! have tcpreplay && continue
		count_start
		if [ $tool = xdpreplay ]; then
			cmd=("$XR" replay -i "$TB_GEN_IF" -q --pps $rate --duration ${RATE_SECS}s "$WORK/one-64.pcap")
		else
			cmd=(tcpreplay -q -i "$TB_GEN_IF" --pps $rate --loop 0 --limit $((rate * RATE_SECS)) "$WORK/k-64.pcap")
		fi
		/usr/bin/time -f "%U %S %e" -o "$WORK/time" ip netns exec "$NS_G" "${cmd[@]}" >/dev/null 2>&1 || true
		count_stop
		python3 - "$WORK/c.json" "$WORK/time" $rate "$RATE_SECS" $tool >>"$RATES" <<-'EOF'
		import json, sys
		c = json.load(open(sys.argv[1]))
		u, s, e = map(float, open(sys.argv[2]).read().split()[-3:])
		rate, secs, tool = float(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
		full = c["per_second"][:int(secs)]
		spread = (max(full) - min(full)) / rate * 100 if full else 0
		# n frames span n - 1 intervals
		achieved = (c["matched"] - 1) / c["first_to_last_s"] if c["first_to_last_s"] > 0 else 0
		print("%s\t%d\t%d\t%.1f\t%.4f\t%.3f\t%.1f" % (tool, rate, c["matched"], achieved,
		      (achieved - rate) / rate * 100, spread, (u + s) / e * 100))
		EOF
		echo "  $tool $rate pps: $(tail -n 1 "$RATES" | cut -f3-)" >&2
	done
done

python3 - "$RAW" "$RATES" "$REPS" "$SECS" <<'EOF' | tee results/bench-replay.txt
import json, statistics, sys
raw = [l.rstrip("\n").split("\t") for l in open(sys.argv[1])]
med = {}
for name, size, pps, cpu in raw:
    med.setdefault((name, size), []).append((float(pps), float(cpu)))
res = {k: (statistics.median(p for p, _ in v), statistics.median(c for _, c in v), len(v)) for k, v in med.items()}
names = []
for name, _, _, _ in raw:
    if name not in names:
        names.append(name)
print("Top speed on the test bed (veth, receiver counts and drops in XDP), medians of up to %s runs of %s s" % (sys.argv[3], sys.argv[4]))
print("%-26s %14s %14s %12s %12s" % ("sender", "64B pps", "300B pps", "64B us/pkt", "300B us/pkt"))
for n in names:
    a, b = res.get((n, "64"), (0, 0, 0)), res.get((n, "300"), (0, 0, 0))
    print("%-26s %14.0f %14.0f %12.3f %12.3f" % (n, a[0], b[0], a[1], b[1]))
print()
print("xdpreplay / other (received pps, same frame size):")
for ours in ("xdpreplay-1t", "xdpreplay-2t", "xdpreplay-xsk-1t"):
    for n in names:
        if n.startswith("xdpreplay"):
            continue
        r = ["%s %.1fx" % (s, res[(ours, s)][0] / res[(n, s)][0]) for s in ("64", "300")
             if (ours, s) in res and (n, s) in res and res[(n, s)][0] > 0]
        if r:
            print("  %-14s vs %-12s %s" % (ours, n, ", ".join(r)))
print("  xdp-trafficgen: not run (Debian's 1.3.1 does not run on this kernel); PLATFORM.md measured")
print("  4.78M pps (1 thread) and 10.5M (2 threads) at 64 B on this kind of test bed:")
for ours, ref in (("xdpreplay-1t", 4.78e6), ("xdpreplay-2t", 10.5e6)):
    if (ours, "64") in res:
        print("  %-14s vs xdp-trafficgen (PLATFORM.md) %.2fx" % (ours, res[(ours, "64")][0] / ref))
print()
print("Rate precision (64 B, one run each): asked, received, error, per-second spread, CPU of one core")
print("%-10s %9s %11s %12s %9s %9s %7s" % ("sender", "asked pps", "received", "achieved pps", "error %", "spread %", "CPU %"))
for l in open(sys.argv[2]):
    t, rate, n, ach, err, spread, cpu = l.split("\t")
    print("%-10s %9s %11s %12s %9s %9s %7s" % (t, rate, n, ach, err, spread, cpu.strip()))
json.dump({"top_speed": [{"sender": n, "size": s, "pps": v[0], "cpu_us_per_pkt": v[1], "runs": v[2]}
                         for (n, s), v in res.items()]}, open("results/bench-replay.json", "w"), indent=1)
EOF
