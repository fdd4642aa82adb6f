#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test), on the test bed, in one run:
#  1. Rewrite overhead: frames/s received with a typical plan (source address + source port, and
#     the checksums they touch) against the same frame static, per round; target >= 90%.
#  2. SYN generation: xdpreplay gen syn against hping3 --flood -S (SYNs/s received), per round.
#  Both with the engine --engine auto takes, and where that is the kernel engine with xsk too
#  (rows xdpreplay-xsk-...; bench_xsk_rows in bench-lib.sh).
#  3. SYN rate sweep against a Linux listener: the highest rate at which >= 99.9% of SYNs are
#     answered within 10 ms, and within 50 ms.
# Results: a table on stdout and results/bench-rewrite.{txt,json}.
#   BENCH_REPS=5 BENCH_SECS=3 scripts/bench-rewrite.sh
. "$(dirname "$0")/bench-lib.sh"
REPS=${BENCH_REPS:-5}
SECS=${BENCH_SECS:-3}
bench_setup --queues 2
python3 pcaps/mkpcap.py udp "$WORK/one-64.pcap" --count 1 --size 60

# the engine --engine auto takes here, and xsk beside it where that is the kernel engine
ENGINES=(auto)
bench_xsk_rows && ENGINES+=(xsk)

echo "== rewrite overhead and SYN generation, ${SECS}s runs, medians of $REPS" >&2
for rep in $(seq "$REPS"); do
	for engine in "${ENGINES[@]}"; do
		name=xdpreplay
		[ "$engine" = auto ] || name=xdpreplay-$engine
		COUNT_ARGS=(--udp --dport 9)
		measure "$name-static" 64 "$XR" replay -i "$TB_GEN_IF" --engine "$engine" -q \
			--duration ${SECS}s "$WORK/one-64.pcap"
		measure "$name-src+sport+csum" 64 "$XR" replay -i "$TB_GEN_IF" --engine "$engine" -q \
			--duration ${SECS}s --rewrite ip.src=198.18.64.0/23 --rewrite udp.sport=1024-65535 \
			"$WORK/one-64.pcap"
		COUNT_ARGS=(--tcp --dport 80)
		measure "$name-gen-syn" 64 "$XR" gen syn -i "$TB_GEN_IF" --engine "$engine" -q \
			--dst "$TB_SRV_IP:80" --src 198.18.64.0/23 --duration ${SECS}s --wait 0
	done
	have hping3 && measure "hping3-S-flood" 64 timeout -s INT $SECS hping3 -q --flood -S -p 80 "$TB_SRV_IP"
done

echo "== SYN rate sweep against a listener (2 s each)" >&2
# a bed of its own with threaded NAPI on both ends: the server's answers (and its bursts of
# retransmitted SYN-ACKs) are taken off the ring by the generator's own receive thread
tb_down
tb_up --queues 2 --threaded
NS_G=$TB_NS_GEN
NS_S=$TB_NS_SRV
SWEEP=$WORK/sweep.txt
: >"$SWEEP"
step=0
rm -f "$WORK/listen.ready"
# a listener that never accepts: the kernel answers SYNs (SYN cookies once the queue is full)
ip netns exec "$NS_S" python3 tests/tcp_server.py --ready "$WORK/listen.ready" --out /dev/null \
	--timeout 3600 --backlog 4096 &
LPID=$!
for _ in $(seq 100); do [ -f "$WORK/listen.ready" ] && break; sleep 0.05; done
for rate in 10000 20000 50000 100000 200000 400000 800000; do
	# a fresh /23 per step: the listener still holds request sockets of the last step's sources
	ip netns exec "$NS_G" "$XR" gen syn -i "$TB_GEN_IF" -q --dst "$TB_SRV_IP:80" \
		--src "198.18.$((64 + 2 * step)).0/23" --pps $rate --duration 2s --wait 1s --json "$WORK/g.json" || true
	step=$((step + 1))
	python3 - "$WORK/g.json" $rate >>"$SWEEP" <<-'PY'
	import json, sys
	g = json.load(open(sys.argv[1]))
	ps = g["replies"]["per_second"]
	print(sys.argv[2], g["asked"], g["sent"], g["replies"]["syn_acks"], sum(s["within_10ms"] for s in ps),
	      sum(s["within_50ms"] for s in ps))
	PY
	echo "  $(tail -n 1 "$SWEEP")" >&2
done
kill $LPID 2>/dev/null || true
python3 scripts/bench_report.py rewrite "$RAW" "$SWEEP" "$REPS" "$SECS" | tee results/bench-rewrite.txt
