#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): MQTT messages per second into Mosquitto (Debian's, on one CPU, configured
# as the published flood benchmark's broker: scripts/mosquitto.sh), xdpreplay gen mqtt beside
# mosquitto_pub (one client, -l: a message per line of stdin) and tsung (Debian's 1.7.0, its MQTT
# plugin: CONNS users, each publishing its share, the next once the last was taken: QoS 1 waits
# for its PUBACK), interleaved round by round, each pattern at 16 B and 1 KB payloads:
#   fire & forget  QoS 0 (xdpreplay: bursts answered by a PINGRESP)
#   sync           QoS 1, each message PUBACKed before the next (xdpreplay --burst 1 on each of
#                  its connections; mosquitto_pub -M 1)
#   async          QoS 1, 5 in flight (xdpreplay --burst 5 per connection; mosquitto_pub -M 5;
#                  tsung has no row: its MQTT requests wait for their answer one at a time)
# messages/s: messages the broker took (PUBACKs, or read before the PINGRESP; mosquitto_pub: those
# the broker's namespace received, from its TCP and IP counters, of at most 60,000 lines a run, as
# past 65,535 it stops early: bench-lib.sh; tsung: its mqtt_server_pubacked, or at QoS 0 its
# mqtt_published) over the sender's time (xdpreplay: first SYN to last answer; mosquitto_pub: its
# whole run; tsung: the server's first to last segment of the run, as count saw them, since its
# Erlang VM takes seconds to start and stop). Sender CPU per message: user + system time, and for
# xdpreplay the run time of its XDP program (kernel.bpf_stats_enabled) and of its pump thread, also
# alone (xdpreplay-xdp).
# Bursts longer than what XDP_TX builds in place on veth (~192 B) go in full segments through gen
# tcp's pump (a thread and a packet socket; its CPU is in the sender's time).
# BENCH_MQTT_SIZES: the payload sizes (default "16 1024"; from 1024 on, BENCH_MQTT_MSGS_LARGE messages).
# Results: a table on stdout and results/bench-mqtt.{txt,raw.tsv}; per-round ratios against
# mosquitto_pub and tsung (BENCH_MQTT_TSUNG=0 leaves tsung out).
# BENCH_MQTT_PACED=1: a precise total rate instead, QoS 1 at 16 B from CONNS publishers, each rate
# of BENCH_MQTT_RATES for BENCH_SECS seconds' worth of messages: xdpreplay --msg-rate R --burst 1
# (a schedule: late bursts go as their answer comes, timed from their departure) beside tsung
# (each user's publishes CONNS / R s of think time apart, its only way to a rate: the round trip
# adds to it); the rate the broker's answers came at (xdpreplay: from the schedule's start to the
# last PUBACK; tsung: its segments' span at the server) over the rate asked, and xdpreplay's
# bursts sent late and its p99 from departure to PUBACK. Results: results/bench-mqtt-paced.txt.
# BENCH_MQTT_SEARCH=1: the broker's limit for QoS 1 at 16 B, found by xdpreplay search over
# --msg-rate search (CONNS publishers, 1 s trials, bursts of BENCH_MQTT_BURST messages, default 1;
# NDR, PDR and p99 within BENCH_MQTT_P99, default 10ms, from departure to PUBACK; what each bound's
# trials received per second) beside
# mosquitto_pub's own top rate at QoS 1 (-M 20, the broker's max_inflight_messages: as many in
# flight as it takes), round by round. Results: results/bench-mqtt-search.txt.
#   BENCH_REPS=3 BENCH_MQTT_MSGS=100000 scripts/bench-mqtt.sh
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/mosquitto.sh"
REPS=${BENCH_REPS:-3}
MSGS=${BENCH_MQTT_MSGS:-100000}
# 1 KB messages: fewer, mosquitto_pub's rounds are long
MSGS_LARGE=${BENCH_MQTT_MSGS_LARGE:-50000}
CONNS=${BENCH_MQTT_CONNS:-100}
have mosquitto && have mosquitto_pub ||
	{ echo "bench-mqtt: needs mosquitto and mosquitto_pub (scripts/deps.sh)" >&2; exit 1; }
TSUNG=${BENCH_MQTT_TSUNG:-1}
[ "$TSUNG" = 0 ] || have tsung || { echo "bench-mqtt: needs tsung (scripts/deps.sh --bench)" >&2; exit 1; }
bench_setup
mosquitto_conf "$WORK/mq" "$TB_SRV_IP" bench flood-0 >/dev/null
ip netns exec "$NS_S" taskset -c 1 mosquitto -c "$WORK/mq/mosquitto.conf" &
MQ_PID=$!
BPF_STATS=$(sysctl -n kernel.bpf_stats_enabled)
trap 'kill $MQ_PID 2>/dev/null; wait $MQ_PID 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled=$BPF_STATS; tb_down; rm -rf "$WORK"' EXIT
mosquitto_wait "$NS_S" "$TB_SRV_IP" "$MQ_PID" || { echo "bench-mqtt: mosquitto did not start" >&2; exit 1; }
sysctl -qw kernel.bpf_stats_enabled=1
# xdpreplay's segments reach the broker's side of the veth at once only when it has an XDP program
COUNT_ARGS=(--tcp --dport 1883)
COUNT_DROP=
count_start
MQ_RAW=$WORK/mqtt.tsv
: >"$MQ_RAW"

# run CMD...: CMD on CPU 0 of the generator namespace under /usr/bin/time; $CPU, $WALL
run() {
	local t0
	t0=$(date +%s.%N)
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" taskset -c 0 "$@" >"$WORK/out" 2>&1 || true
	WALL=$(python3 -c "import sys; print($(date +%s.%N) - $t0)")
	CPU=$(awk '{print $1 + $2}' "$WORK/time" | tail -n 1)
}

# record TOOL PATTERN SIZE ROUND MESSAGES SECONDS CPU_S
record() {
	python3 -c 'import sys; n, s, c = float(sys.argv[5]), float(sys.argv[6]), float(sys.argv[7])
print("%s\t%s\t%s\t%s\t%.0f\t%.2f" % (sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], n / s if s > 0 else 0, c * 1e6 / n if n else 0))' "$@" >>"$MQ_RAW"
	echo "  round $4 $1 $2 $3 B: $(tail -n 1 "$MQ_RAW" | cut -f5) messages/s, $(tail -n 1 "$MQ_RAW" | cut -f6) us CPU each" >&2
}

# xr PATTERN SIZE ROUND ARGS...: gen mqtt, CONNS connections sharing MSGS messages
xr() {
	local pattern=$1 size=$2 round=$3
	shift 3
	run "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --username bench \
		--password flood-0 --payload "$size" --messages $((MSGS / CONNS)) --count "$CONNS" \
		--pps 10k --wait 60s --json "$WORK/g.json" "$@"
	local n xdp
	n=$(jget "$WORK/g.json" messages.acked)
	# the XDP program's run time, and its pump's (the thread that sends what XDP_TX cannot)
	xdp=$(python3 -c 'import json,sys; g = json.load(open(sys.argv[1]))
print((g.get("replies_xdp_ns", 0) + g["segments"]["pump"]["cpu_ns"]) / 1e9)' "$WORK/g.json")
	record xdpreplay "$pattern" "$size" "$round" "$n" "$(jget "$WORK/g.json" messages.seconds)" \
		"$(python3 -c "print($CPU + $xdp)")"
	# the XDP program and the pump alone: the sender's thread spins to the end of the run, and the softirq work
	# on its CPU (the test bed's veth, the server's stack) is charged to it as system time
	record xdpreplay-xdp "$pattern" "$size" "$round" "$n" "$(jget "$WORK/g.json" messages.seconds)" "$xdp"
}

# pub PATTERN SIZE ROUND QOS ARGS...: mosquitto_pub -l -q QOS, MSGS lines (at most MQ_PUB_MAX:
# bench-lib.sh) of SIZE - 1 characters and a newline; what the broker received is counted
pub() {
	local pattern=$1 size=$2 round=$3 qos=$4 n lines=$MSGS
	shift 4
	[ "$lines" -le "$MQ_PUB_MAX" ] || lines=$MQ_PUB_MAX
	python3 -c 'import sys; sys.stdout.write(("x" * (int(sys.argv[1]) - 1) + "\n") * int(sys.argv[2]))' \
		"$size" "$lines" >"$WORK/lines"
	broker_in_start
	run sh -c "mosquitto_pub -h $TB_SRV_IP -u bench -P flood-0 -t msg/pub -l -q $qos $* <'$WORK/lines'"
	n=$(broker_in_msgs "$qos" "$size")
	[ "$n" -ge $((lines * 99 / 100)) ] ||
		echo "  round $round mosquitto_pub: the broker received $n of $lines lines" >&2
	[ "$n" -le "$lines" ] || n=$lines
	record mosquitto_pub "$pattern" "$size" "$round" "$n" "$WALL" "$CPU"
}

# tsung_xml MSGS SIZE QOS THINK: $WORK/tsung.xml, CONNS users arriving 1 ms apart, each connecting
# and publishing MSGS messages of SIZE bytes at QOS, THINK seconds of think time after each (0: none)
tsung_xml() {
	python3 - "$WORK/tsung.xml" "$TB_SRV_IP" "$CONNS" "$@" <<-'PY'
	import sys
	path, server, users, msgs, size, qos, think = sys.argv[1:]
	pause = f'<thinktime value="{think}" random="false"/>' if float(think) else ""
	with open(path, "w") as f:
	    f.write(f'''<?xml version="1.0"?>
	<!DOCTYPE tsung SYSTEM "/usr/share/tsung/tsung-1.0.dtd">
	<tsung loglevel="notice" version="1.0">
	 <clients><client host="localhost" use_controller_vm="true" maxusers="{users}"/></clients>
	 <servers><server host="{server}" port="1883" type="tcp"/></servers>
	 <load><arrivalphase phase="1" duration="60" unit="second">
	  <users maxnumber="{users}" interarrival="0.001" unit="second"/></arrivalphase></load>
	 <sessions><session name="pub" probability="100" type="ts_mqtt">
	  <request><mqtt type="connect" clean_start="true" keepalive="60" username="bench" password="flood-0"/></request>
	  <for from="1" to="{msgs}" incr="1" var="i">
	   <request><mqtt type="publish" topic="msg/tsung" qos="{qos}">{"x" * int(size)}</mqtt></request>{pause}
	  </for>
	  <request><mqtt type="disconnect"/></request>
	 </session></sessions>
	</tsung>
	''')
	PY
}

# tsung_run QOS: tsung on $WORK/tsung.xml with a counter of its own; TS_N the messages the broker
# took (QoS 1: PUBACKs; QoS 0: those published), TS_SECS the span of its segments at the server
tsung_run() {
	local log
	rm -rf "$WORK/tsung"
	count_stop
	count_start
	# HOME: tsung's ~/.tsung is the run's
	run env HOME="$WORK" tsung -n -f "$WORK/tsung.xml" -l "$WORK/tsung" start
	count_stop
	log=$(find "$WORK/tsung" -name tsung.log | head -n 1)
	TS_N=$(awk -v k="$([ "$1" = 0 ] && echo mqtt_published || echo mqtt_server_pubacked)" \
		'$2 == k {v = $4} END {print v + 0}' "$log")
	TS_SECS=$(jget "$WORK/c.json" first_to_last_s)
	count_start
}

# ts PATTERN SIZE ROUND QOS: tsung, CONNS users arriving 1 ms apart, each MSGS / CONNS messages of
# SIZE bytes at QOS
ts() {
	local pattern=$1 size=$2 round=$3 qos=$4
	[ "$TSUNG" = 0 ] && return 0
	tsung_xml $((MSGS / CONNS)) "$size" "$qos" 0
	tsung_run "$qos"
	record tsung "$pattern" "$size" "$round" "$TS_N" "$TS_SECS" "$CPU"
}

# paced ROUND RATE: xdpreplay and tsung asked for RATE messages/s in all (QoS 1, 16 B)
paced() {
	local round=$1 rate=$2 n per think
	n=$(python3 -c "print(int(float('$rate'.replace('k', 'e3')) * $SECS) // $CONNS * $CONNS)")
	per=$((n / CONNS))
	run "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --username bench \
		--password flood-0 --payload 16 --messages "$per" --count "$CONNS" --pps 10k --qos 1 \
		--burst 1 --msg-rate "$rate" --wait 30s --json "$WORK/g.json"
	python3 - "$WORK/g.json" "$round" "$rate" "$CPU" >>"$PACED_RAW" <<-'PY'
	import json, sys
	g = json.load(open(sys.argv[1]))
	p, m = g["messages"]["pace"], g["messages"]
	cpu = float(sys.argv[4]) + (g.get("replies_xdp_ns", 0) + g["segments"]["pump"]["cpu_ns"]) / 1e9
	print("xdpreplay\t%s\t%s\t%.0f\t%.0f\t%d\t%d\t%.3f\t%.2f" % (sys.argv[2], sys.argv[3], p["per_s"],
	      p["answered_per_s"], m["acked"], p["late"], m["burst_us"]["p99"] / 1e3, cpu))
	PY
	echo "  round $round xdpreplay at $rate: $(tail -n 1 "$PACED_RAW" | cut -f5) messages/s answered" >&2
	[ "$TSUNG" = 0 ] && return 0
	think=$(python3 -c "print('%.6f' % ($CONNS / float('$rate'.replace('k', 'e3'))))")
	tsung_xml "$per" 16 1 "$think"
	tsung_run 1
	python3 - "$round" "$rate" "$TS_N" "$TS_SECS" "$CPU" >>"$PACED_RAW" <<-'PY'
	import sys
	rnd, rate, n, s, cpu = sys.argv[1], sys.argv[2], int(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
	asked = float(rate.replace("k", "e3"))
	print("tsung\t%s\t%s\t%.0f\t%.0f\t%d\t\t\t%.2f" % (rnd, rate, asked, n / s if s else 0, n, cpu))
	PY
	echo "  round $round tsung at $rate: $(tail -n 1 "$PACED_RAW" | cut -f5) messages/s answered" >&2
}

# limit ROUND: the broker's limit as xdpreplay search finds it, and mosquitto_pub's top rate
limit() {
	local round=$1
	run "$XR" search --witness replies --trial 1s --min 5k --max "${BENCH_MQTT_MAX:-200k}" \
		--latency-goal "p99=${BENCH_MQTT_P99:-10ms}" --max-trials 30 --json "$WORK/s.json" -- \
		gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --username bench \
		--password flood-0 --payload 16 --qos 1 --count "$CONNS" --pps 10k --msg-rate search \
		--burst "${BENCH_MQTT_BURST:-1}"
	python3 - "$WORK/s.json" "$round" "$CPU" >>"$LIMIT_RAW" <<-'PY'
	import json, sys
	s = json.load(open(sys.argv[1]))
	for g in s["goals"]:
	    print("xdpreplay-%s\t%s\t%.0f\t%.0f\t%d" % (g["name"], sys.argv[2], g["lower"],
	          g["conditional_throughput"], len(s["trials"])))
	PY
	grep -E "^(NDR|PDR|p99)" "$WORK/out" >&2
	local lines=$MSGS n
	[ "$lines" -le "$MQ_PUB_MAX" ] || lines=$MQ_PUB_MAX
	python3 -c 'import sys; sys.stdout.write(("x" * 15 + "\n") * int(sys.argv[1]))' "$lines" >"$WORK/lines"
	broker_in_start
	run sh -c "mosquitto_pub -h $TB_SRV_IP -u bench -P flood-0 -t msg/pub -l -q 1 -M 20 <'$WORK/lines'"
	n=$(broker_in_msgs 1 16)
	[ "$n" -le "$lines" ] || n=$lines
	python3 -c 'import sys; print("mosquitto_pub\t%s\t\t%.0f\t" % (sys.argv[1], int(sys.argv[2]) / float(sys.argv[3])))' \
		"$round" "$n" "$WALL" >>"$LIMIT_RAW"
	echo "  round $round mosquitto_pub: $(tail -n 1 "$LIMIT_RAW" | cut -f4) messages/s" >&2
}

if [ "${BENCH_MQTT_SEARCH:-0}" = 1 ]; then
	LIMIT_RAW=$WORK/limit.tsv
	: >"$LIMIT_RAW"
	for round in $(seq "$REPS"); do
		limit "$round"
	done
	count_stop
	python3 - "$LIMIT_RAW" "$CONNS" "${BENCH_MQTT_BURST:-1}" <<-'PY' | tee results/bench-mqtt-search.txt
	import statistics, sys
	rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
	print("Mosquitto 2.0.11 (one CPU), QoS 1 at 16 B: its limit as xdpreplay search finds it (%s "
	      "publishers, bursts of %s, 1 s trials) and mosquitto_pub's top rate (-M 20), median of %d rounds"
	      % (sys.argv[2], sys.argv[3], len({r[1] for r in rows})))
	print("%-22s %14s %16s" % ("", "bound msg/s", "received msg/s"))
	names = list(dict.fromkeys(r[0] for r in rows))
	for n in names:
	    sel = [r for r in rows if r[0] == n]
	    b = [float(r[2]) for r in sel if r[2]]
	    print("%-22s %14s %16.0f" % (n, "%.0f" % statistics.median(b) if b else "-",
	                                 statistics.median(float(r[3]) for r in sel)))
	pub = [float(r[3]) for r in rows if r[0] == "mosquitto_pub"]
	print("per round, each bound's received rate / mosquitto_pub's:")
	for n in names[:-1] if names[-1] == "mosquitto_pub" else names:
	    if n == "mosquitto_pub":
	        continue
	    sel = [float(r[3]) for r in rows if r[0] == n]
	    print("  %-20s %s" % (n, ", ".join("%.2f" % (x / p) for x, p in zip(sel, pub))))
	PY
	cp "$LIMIT_RAW" results/bench-mqtt-search.raw.tsv
	exit 0
fi

if [ "${BENCH_MQTT_PACED:-0}" = 1 ]; then
	SECS=${BENCH_SECS:-2}
	PACED_RAW=$WORK/paced.tsv
	: >"$PACED_RAW"
	for round in $(seq "$REPS"); do
		for rate in ${BENCH_MQTT_RATES:-10k 25k 50k 100k}; do
			paced "$round" "$rate"
		done
	done
	count_stop
	python3 - "$PACED_RAW" "$CONNS" <<-'PY' | tee results/bench-mqtt-paced.txt
	import statistics, sys
	rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
	print("QoS-1 messages of 16 B into Mosquitto 2.0.11 (one CPU) at a rate asked, %s publishers, "
	      "median of %d rounds" % (sys.argv[2], len({r[1] for r in rows})))
	print("%-10s %10s %14s %10s %12s %14s %12s" % ("sender", "asked/s", "answered/s", "ratio",
	      "late bursts", "p99 ms (dep.)", "CPU s"))
	for rate in dict.fromkeys(r[2] for r in rows):
	    for t in ("xdpreplay", "tsung"):
	        sel = [r for r in rows if r[0] == t and r[2] == rate]
	        if not sel:
	            continue
	        med = lambda i: statistics.median(float(r[i]) for r in sel if r[i] != "")
	        print("%-10s %10.0f %14.0f %10.4f %12s %14s %12.2f" % (t, med(3), med(4), med(4) / med(3),
	              "%.0f" % med(6) if sel[0][6] else "-", "%.2f" % med(7) if sel[0][7] else "-", med(8)))
	print("per round, answered / asked:")
	for rate in dict.fromkeys(r[2] for r in rows):
	    for t in ("xdpreplay", "tsung"):
	        sel = [r for r in rows if r[0] == t and r[2] == rate]
	        if sel:
	            print("  %-10s %6s: %s" % (t, rate, ", ".join("%.4f" % (float(r[4]) / float(r[3])) for r in sel)))
	PY
	cp "$PACED_RAW" results/bench-mqtt-paced.raw.tsv
	exit 0
fi

for round in $(seq "$REPS"); do
	for size in ${BENCH_MQTT_SIZES:-16 1024}; do
		MSGS=${BENCH_MQTT_MSGS:-100000}
		[ "$size" -lt 1024 ] || MSGS=$MSGS_LARGE
		xr fire-forget "$size" "$round" --qos 0
		pub fire-forget "$size" "$round" 0
		ts fire-forget "$size" "$round" 0
		xr sync "$size" "$round" --qos 1 --burst 1
		pub sync "$size" "$round" 1 -M 1
		ts sync "$size" "$round" 1
		# 5 in flight are one request of gen mqtt's: up to 68 KiB
		[ $((size * 5)) -le 65536 ] || continue
		xr async "$size" "$round" --qos 1 --burst 5
		pub async "$size" "$round" 1 -M 5
	done
done
count_stop

python3 - "$MQ_RAW" "$CONNS" <<'PY' | tee results/bench-mqtt.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
keys = []
for r in rows:
    if (r[1], r[2]) not in keys:
        keys.append((r[1], r[2]))
print("MQTT messages into Mosquitto 2.0.11 (one CPU), median of %d rounds; xdpreplay on %s connections"
      % (len({r[3] for r in rows}), sys.argv[2]))
print("%-12s %6s %-14s %14s %22s" % ("pattern", "bytes", "sender", "messages/s", "sender CPU/msg us"))
for p, s in keys:
    for t in ("xdpreplay", "xdpreplay-xdp", "mosquitto_pub", "tsung"):
        sel = [r for r in rows if r[0] == t and r[1] == p and r[2] == s]
        if sel:
            print("%-12s %6s %-14s %14.0f %22.2f" % (p, s, t, statistics.median(float(r[4]) for r in sel),
                                                     statistics.median(float(r[5]) for r in sel)))
for other in ("mosquitto_pub", "tsung"):
    print("per round, xdpreplay / %s: messages/s, CPU per message" % other)
    for p, s in keys:
        xs = [r for r in rows if r[0] == "xdpreplay" and r[1] == p and r[2] == s]
        ms = [r for r in rows if r[0] == other and r[1] == p and r[2] == s]
        if ms:
            print("  %-12s %6s: %s" % (p, s, ", ".join("%.2f/%.3f" % (float(x[4]) / max(float(m[4]), 1),
                  float(x[5]) / max(float(m[5]), 1e-9)) for x, m in zip(xs, ms))))
PY
cp "$MQ_RAW" results/bench-mqtt.raw.tsv
