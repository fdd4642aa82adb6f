# SPDX-License-Identifier: GPL-2.0
# Shared by the benchmarks (sourced): a test bed, a counter on the server, one measured run.
#   bench_setup [tb_up options]   test bed + WORK + RAW, torn down on exit; results/NAME.meta.json
#   COUNT_ARGS=(--udp --dport 9)  what the server's counter matches (it drops them: a sink)
#   measure NAME SIZE CMD...      one run of CMD in the generator namespace; appends
#                                 "name size received_pps cpu_us_per_frame round" to $RAW
#                                 (round: this run's number among NAME SIZE's, for per-round ratios)
#   xdp_trafficgen                the path of xdp-trafficgen built from $XDP_TOOLS, or fails
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
. scripts/testbed.sh
XR=${XR:-$PWD/xdpreplay}
COUNT_ARGS=(--udp --dport 9)
COUNT_DROP=--drop

bench_setup() {
	[ -x "$XR" ] || { echo "bench: build first (make)" >&2; exit 1; }
	WORK=$(mktemp -d /tmp/xdpreplay-bench.XXXXXX)
	RAW=$WORK/raw.tsv
	: >"$RAW"
	mkdir -p results
	trap 'tb_down; rm -rf "$WORK"' EXIT
	trap 'exit 130' INT TERM
	tb_up "$@"
	NS_G=$TB_NS_GEN
	NS_S=$TB_NS_SRV
	bench_meta
}

# bench_meta: results/NAME.meta.json, where and how this benchmark runs (NAME: the script's), for
# scripts/bench_report.py docs: the date, kernel, CPU, and the engine xdpreplay's --engine auto
# takes on the sender's interface, as xdpreplay probe finds it there
bench_meta() {
	ip netns exec "$NS_G" "$XR" probe -i "$TB_GEN_IF" --json "$WORK/probe.json" >/dev/null 2>&1 || true
	python3 scripts/bench_report.py meta "$WORK/probe.json" "results/$(basename "$0" .sh).meta.json"
}

# trafgen_cfg PCAP: the first frame of a one-frame capture as trafgen's configuration (a byte list)
trafgen_cfg() {
	python3 - "$1" <<-'EOF'
	import sys
	d = open(sys.argv[1], "rb").read()[40:]
	print("{ " + ", ".join("0x%02x" % b for b in d) + " }")
	EOF
}

# bench_live_frames: true where xdpreplay's kernel engine sends on the sender's interface (bench_meta's
# probe found live frames)
bench_live_frames() {
	python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["checks"]["live_frames"]["ok"] else 1)' \
		"$WORK/probe.json" 2>/dev/null
}

# bench_xsk_rows: true where a benchmark adds rows with --engine xsk (named xdpreplay-xsk-...) beside
# its own, so that both engines' figures come from one run, interleaved: where --engine auto takes
# the kernel engine. Where auto takes xsk, its own rows are the xsk engine's already.
# BENCH_XSK_ROWS=1 adds them anyway (to try that path on any host), BENCH_XSK_ROWS=0 never.
bench_xsk_rows() {
	case "${BENCH_XSK_ROWS:-}" in
	1) return 0 ;;
	0) return 1 ;;
	esac
	bench_live_frames
}

# bench_mqtt_bed NAME: bench_setup with 2 senders, Mosquitto on the server's CPU 1 configured as
# the flood benchmark's broker (scripts/mosquitto.sh: user bench, password flood-0), an XDP program
# on each bridge port (a veth delivers XDP_TX frames at once only to a peer with one) and BPF run
# times on (kernel.bpf_stats_enabled); all of it undone on exit, and BENCH_PIDS stopped with TERM
# (not INT: a script's background commands ignore SIGINT)
BENCH_PIDS=()
bench_mqtt_bed() {
	local name=$1 i
	bench_setup --senders 2
	mosquitto_conf "$WORK/mq" "$TB_SRV_IP" bench flood-0 >/dev/null
	ip netns exec "$NS_S" taskset -c 1 mosquitto -c "$WORK/mq/mosquitto.conf" &
	MQ_PID=$!
	BPF_STATS=$(sysctl -n kernel.bpf_stats_enabled)
	trap bench_mqtt_down EXIT
	mosquitto_wait "$NS_S" "$TB_SRV_IP" "$MQ_PID" || { echo "$name: mosquitto did not start" >&2; exit 1; }
	sysctl -qw kernel.bpf_stats_enabled=1
	for i in 0 1; do
		rm -f "$WORK/peer$i.ready"
		ip netns exec "$NS_S" "$XR" count -i "srvp$i" --any --no-drop-reasons -q --duration 3600s \
			--ready-file "$WORK/peer$i.ready" &
		BENCH_PIDS+=($!)
		for _ in $(seq 100); do [ -f "$WORK/peer$i.ready" ] && break; sleep 0.05; done
	done
}

bench_mqtt_down() {
	kill -TERM "${BENCH_PIDS[@]}" 2>/dev/null
	kill "$MQ_PID" 2>/dev/null
	wait 2>/dev/null
	sysctl -qw kernel.bpf_stats_enabled="$BPF_STATS"
	tb_down
	rm -rf "$WORK"
}

# mosquitto_pub -l stops early past 65,535 lines at QoS 0 or 1: message ids wrap, and it disconnects at
# the first PUBACK (or publish) whose id is the last line's, the rest of its queue unsent (measured:
# 100,000 lines at QoS 1 -M 20, mosquitto_sub read the first 34,468, exit 0). So a run gets at most
# MQ_PUB_MAX lines, and what the broker received is measured, not assumed:
#   broker_in_start               before the run: the server namespace's TCP segments and IP bytes in
#   broker_in_msgs QOS SIZE       after it: the PUBLISH packets of SIZE-byte lines (SIZE - 1 payload
#                                 bytes on msg/pub) those bytes hold, less 52 bytes of headers a segment
#                                 (IPv4, TCP with timestamps: Linux's client); CONNECT, PINGREQ and
#                                 DISCONNECT count as a few bytes over
MQ_PUB_MAX=60000
broker_in_counters() {
	ip netns exec "$NS_S" nstat -az TcpInSegs IpExtInOctets |
		awk '/TcpInSegs/ {s = $2} /IpExtInOctets/ {b = $2} END {print s, b}'
}
broker_in_start() { BROKER_IN0=$(broker_in_counters); }
broker_in_msgs() {
	python3 - "$BROKER_IN0" "$(broker_in_counters)" "$1" "$2" <<-'PY'
	import sys
	(s0, b0), (s1, b1) = (map(int, a.split()) for a in sys.argv[1:3])
	qos, size = int(sys.argv[3]), int(sys.argv[4])
	rl = 2 + len("msg/pub") + (2 if qos else 0) + size - 1
	msg = 1 + (1 if rl < 128 else 2 if rl < 16384 else 3) + rl
	print(max(0, (b1 - b0 - 52 * (s1 - s0)) // msg))
	PY
}

# broker_holds IP N: until the broker holds N connections from IP (5 s at most), and a moment more
broker_holds() {
	for _ in $(seq 100); do
		[ "$(ip netns exec "$NS_S" ss -tn state established "( sport = :1883 )" | grep -c " $1:")" -ge "$2" ] &&
			break
		sleep 0.05
	done
	sleep 0.3
}

# rr_loop SIZE CALLS: CALLS mosquitto_rr calls of SIZE bytes, a process each in a shell loop on CPU 0
# of the generator namespace, under /usr/bin/time ($WORK/time); the answered ones in RR_N, the
# loop's seconds in RR_SECS. The stamp's caller is 'AAAA' (0x41414141: an argument cannot hold a zero
# byte), so a responder answers on res/1094795585
rr_loop() {
	local t0
	python3 -c 'import sys; sys.stdout.write("A" * int(sys.argv[1]))' "$1" >"$WORK/payload"
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" taskset -c 0 sh -c '
		n=0; p=$(cat "$2")
		for i in $(seq "$1"); do
			mosquitto_rr -h "$3" -u bench -P flood-0 -t req/rr -e res/1094795585 -m "$p" -W 5 \
				>/dev/null 2>&1 && n=$((n + 1))
		done
		echo "$n" >"$4"' rr "$2" "$WORK/payload" "$TB_SRV_IP" "$WORK/rr.n"
	RR_SECS=$(python3 -c "print($(date +%s.%N) - $t0)")
	RR_N=$(cat "$WORK/rr.n")
}

jget() { python3 -c 'import json,sys; v=json.load(open(sys.argv[1]))
for k in sys.argv[2].split("."): v=v[k]
print(v)' "$1" "$2"; }

have() { command -v "$1" >/dev/null 2>&1; }

count_start() {
	rm -f "$WORK/ready"
	ip netns exec "$NS_S" "$XR" count -i "$TB_SRV_IF" "${COUNT_ARGS[@]}" $COUNT_DROP --duration 600s -q \
		--ready-file "$WORK/ready" --json "$WORK/c.json" &
	CPID=$!
	for _ in $(seq 100); do [ -f "$WORK/ready" ] && return 0; sleep 0.05; done
	echo "bench: counter did not start" >&2
	exit 1
}

# count_stop: the sender has ended; let the counter see the last frames, then stop it
count_stop() {
	sleep 0.8
	kill -INT "$CPID" 2>/dev/null || true
	wait "$CPID" || true
}

measure() {
	local name=$1 size=$2 cpu matched dur round
	shift 2
	round=$(($(awk -F'\t' -v n="$name" -v s="$size" '$1 == n && $2 == s' "$RAW" | wc -l) + 1))
	count_start
	# CPU time of the sender and its children, from /usr/bin/time's format
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" "$@" >"$WORK/sender.out" 2>&1 || true
	count_stop
	matched=$(jget "$WORK/c.json" matched)
	dur=$(jget "$WORK/c.json" first_to_last_s)
	cpu=$(awk '{print $1 + $2}' "$WORK/time" | tail -n 1)
	python3 -c 'import sys; n,d,c=float(sys.argv[4]),float(sys.argv[5]),float(sys.argv[6])
print("%s\t%s\t%.0f\t%.3f\t%s" % (sys.argv[1], sys.argv[2], n/d if d>0 else 0, c*1e6/n if n else 0, sys.argv[7]))' \
		"$name" "$size" x "$matched" "$dur" "$cpu" "$round" >>"$RAW"
	echo "  $name ${size}B: $(tail -n 1 "$RAW" | cut -f3) pps received" >&2
}

# xdp-trafficgen from the xdp-tools tree XDP_TOOLS points at, built there on first use: Debian's
# 1.3.1 does not run on this kernel, 1.6.3 from source does (PLATFORM.md). Configured against the
# system's libbpf (1.1); stdbool.h is included for the headers that use bool without it.
xdp_trafficgen() {
	local dir=${XDP_TOOLS:-} bin
	[ -n "$dir" ] || return 1
	bin=$dir/xdp-trafficgen/xdp-trafficgen
	if [ ! -x "$bin" ]; then
		echo "bench: building xdp-trafficgen in $dir (log: $WORK/xdp-tools-build.log)" >&2
		if ! (cd "$dir" && FORCE_SYSTEM_LIBBPF=1 ./configure &&
			printf 'CFLAGS += -include stdbool.h\nBPF_CFLAGS += -include stdbool.h\n' >>config.mk &&
			make -C lib && make -C xdp-trafficgen) >"$WORK/xdp-tools-build.log" 2>&1; then
			tail -n 5 "$WORK/xdp-tools-build.log" >&2
			echo "bench: cannot build xdp-trafficgen in $dir" >&2
			return 1
		fi
	fi
	echo "$bin"
}
