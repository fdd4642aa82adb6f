#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): how long a run takes to start, as the wall time of a run of one frame,
# from exec to exit: its set-up is nearly all of it, and a search's trials, a shard's launch and a
# test suite start hundreds of runs. xdpreplay replay (frames as captured; and with a plan, which
# loads the gen program and creates its maps), gen udp, gen syn (with the reply counter on the
# interface) and count (its programs and drop tracer; with its 0.1 s window), beside tcpreplay -K
# and trafgen sending the same frame once; interleaved round by round, medians of BENCH_REPS.
# Results: a table on stdout and results/bench-startup.{txt,raw.tsv}.
#   BENCH_REPS=5 scripts/bench-startup.sh
. "$(dirname "$0")/bench-lib.sh"
REPS=${BENCH_REPS:-5}
bench_setup
python3 pcaps/mkpcap.py udp "$WORK/one.pcap" --count 1 --size 60
trafgen_cfg "$WORK/one.pcap" >"$WORK/trafgen.cfg"
# the server drops what reaches it in XDP, so that no answer of its stack is part of a run
ip netns exec "$NS_S" "$XR" count -i "$TB_SRV_IF" --any --drop -q --duration 3600s &
COUNT_PID=$!
trap 'kill -INT $COUNT_PID 2>/dev/null; wait; tb_down; rm -rf "$WORK"' EXIT
sleep 1

# timed NAME ROUND NS CMD...: CMD's wall time in namespace NS, appended to $RAW (a run that failed is
# said and left out)
timed() {
	local name=$1 round=$2 ns=$3 t0 t1
	shift 3
	t0=$(date +%s.%N)
	if ! ip netns exec "$ns" "$@" >"$WORK/out" 2>&1; then
		echo "bench-startup: $name failed, not counted: $(tail -n 1 "$WORK/out")" >&2
		return 0
	fi
	t1=$(date +%s.%N)
	printf '%s\t%s\t%s\n' "$name" "$round" "$(python3 -c "print($t1 - $t0)")" >>"$RAW"
}

echo "== start-up: runs of one frame, medians of $REPS" >&2
for round in $(seq "$REPS"); do
	timed "xdpreplay replay" "$round" "$NS_G" "$XR" replay -i "$TB_GEN_IF" -q --count 1 "$WORK/one.pcap"
	timed "xdpreplay replay --rewrite" "$round" "$NS_G" "$XR" replay -i "$TB_GEN_IF" -q --count 1 \
		--rewrite ip.src=198.18.64.0/23 "$WORK/one.pcap"
	timed "xdpreplay gen udp" "$round" "$NS_G" "$XR" gen udp -i "$TB_GEN_IF" -q --count 1 \
		--dst "$TB_SRV_IP:9"
	timed "xdpreplay gen syn" "$round" "$NS_G" "$XR" gen syn -i "$TB_GEN_IF" -q --count 1 \
		--dst "$TB_SRV_IP:80" --wait 0
	# on the generator's interface: the server's has the sink's program
	timed "xdpreplay count (0.1 s)" "$round" "$NS_G" "$XR" count -i "$TB_GEN_IF" -q --duration 0.1s
	have tcpreplay && timed "tcpreplay -K" "$round" "$NS_G" tcpreplay -q -K -i "$TB_GEN_IF" "$WORK/one.pcap"
	have trafgen && timed "trafgen" "$round" "$NS_G" trafgen -o "$TB_GEN_IF" -i "$WORK/trafgen.cfg" -n 1 \
		-P 1 --no-sock-mem -Q -C
done

python3 - "$RAW" <<-'PY' | tee results/bench-startup.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
names = list(dict.fromkeys(r[0] for r in rows))
by = {n: [float(r[2]) for r in rows if r[0] == n] for n in names}
print("Start-up: wall time of a run of one frame, exec to exit, median of %d rounds [each round's]"
      % max(len(v) for v in by.values()))
for n in names:
    print("%-28s %7.3f s  [%s]" % (n, statistics.median(by[n]), " ".join("%.3f" % x for x in by[n])))
PY
cp "$RAW" results/bench-startup.raw.tsv
