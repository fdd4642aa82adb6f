#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): the notifications pattern's receiving side. Mosquitto (Debian's, on one
# CPU, scripts/mosquitto.sh's broker) fans CONNS publishers' QoS-0 messages out to SUBS subscribers;
# the subscribers are xdpreplay's (gen mqtt --subscribe: sessions read and booked in XDP) or SUBS
# mosquitto_sub processes (kernel sockets), interleaved round by round, the publishers xdpreplay's
# (gen mqtt, the same load each round) from another sender namespace.
# Per round: deliveries received (xdpreplay: booked by their stamps, lost ones counted; mosquitto_sub:
# the lines it printed) over the time from the publishers' start to the last subscriber's end, and
# the subscribers' CPU per delivery (xdpreplay: its XDP program's run time, kernel.bpf_stats_enabled;
# mosquitto_sub: user + system time of the SUBS processes).
# Results: a table on stdout and results/bench-mqtt-sub.{txt,raw.tsv}; per-round ratios.
#   BENCH_REPS=3 BENCH_MQTT_SUBS=3 BENCH_MQTT_MSGS=100000 BENCH_MQTT_PAYLOAD=16 scripts/bench-mqtt-sub.sh
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/mosquitto.sh"
REPS=${BENCH_REPS:-3}
SUBS=${BENCH_MQTT_SUBS:-3}
MSGS=${BENCH_MQTT_MSGS:-100000}
CONNS=${BENCH_MQTT_CONNS:-100}
PAYLOAD=${BENCH_MQTT_PAYLOAD:-16}
PER=$((MSGS / CONNS))
have mosquitto && have mosquitto_sub ||
	{ echo "bench-mqtt-sub: needs mosquitto and mosquitto_sub (scripts/deps.sh)" >&2; exit 1; }
[ "$PAYLOAD" -ge 16 ] || { echo "bench-mqtt-sub: BENCH_MQTT_PAYLOAD >= 16 (the stamp)" >&2; exit 2; }
bench_mqtt_bed bench-mqtt-sub
SUB_IP=$(tb_gen_ip 1)
RAW_SUB=$WORK/sub.tsv
: >"$RAW_SUB"

# subscribed N: until the broker holds N connections from the subscribers' namespace, and a moment
subscribed() {
	for _ in $(seq 200); do
		[ "$(ip netns exec "$NS_S" ss -tn state established "( sport = :1883 )" | grep -c " $SUB_IP:")" -ge "$1" ] &&
			break
		sleep 0.05
	done
	sleep 0.5
}

# publish: the publishers (QoS 0, every message read by the broker before the PINGRESP); its start time in T0
publish() {
	T0=$(date +%s.%N)
	tb_geni 0 "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 --username bench \
		--password flood-0 --qos 0 --payload "$PAYLOAD" --messages "$PER" --count "$CONNS" --pps 10k \
		--wait 60s -q --json "$WORK/pub.json" || echo "bench-mqtt-sub: the publishers exited $?" >&2
}

# record TOOL ROUND RECEIVED SECONDS CPU_S LOST
record() {
	python3 -c 'import sys; n, s, c = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print("%s\t%s\t%.0f\t%.3f\t%s\t%s" % (sys.argv[1], sys.argv[2], n / s if s > 0 else 0, c * 1e6 / n if n else 0, sys.argv[6], int(n)))' "$@" >>"$RAW_SUB"
	echo "  round $2 $1: $(tail -n 1 "$RAW_SUB" | cut -f3) deliveries/s, $(tail -n 1 "$RAW_SUB" | cut -f4) us CPU each, $6 lost" >&2
}

xr_round() {
	local t1 n
	tb_geni 1 "$XR" gen mqtt -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --username bench --password flood-0 \
		--subscribe 'msg/#' --publishers "$CONNS" --messages "$PER" --count "$SUBS" --wait 60s -q \
		--json "$WORK/sub.json" &
	local pid=$!
	subscribed "$SUBS"
	publish
	wait "$pid"
	t1=$(date +%s.%N)
	n=$(jget "$WORK/sub.json" deliveries.received)
	record xdpreplay "$1" "$n" "$(python3 -c "print($t1 - $T0)")" \
		"$(python3 -c "print($(jget "$WORK/sub.json" replies_xdp_ns) / 1e9)")" \
		"$(jget "$WORK/sub.json" deliveries.lost)"
}

sub_round() {
	local t1 pids=() n=0 cpu=0 i
	for i in $(seq "$SUBS"); do
		/usr/bin/time -f "%U %S" -o "$WORK/time.$i" ip netns exec "$(tb_gen_ns 1)" mosquitto_sub \
			-h "$TB_SRV_IP" -u bench -P flood-0 -t 'msg/#' -q 0 -C "$MSGS" -W 60 -F '%l' >"$WORK/lines.$i" 2>/dev/null &
		pids+=($!)
	done
	subscribed "$SUBS"
	publish
	wait "${pids[@]}"
	t1=$(date +%s.%N)
	for i in $(seq "$SUBS"); do
		n=$((n + $(wc -l <"$WORK/lines.$i")))
		cpu=$(python3 -c "print($cpu + $(awk '{print $1 + $2}' "$WORK/time.$i" | tail -n 1))")
	done
	record mosquitto_sub "$1" "$n" "$(python3 -c "print($t1 - $T0)")" "$cpu" $((MSGS * SUBS - n))
}

for round in $(seq "$REPS"); do
	xr_round "$round"
	sub_round "$round"
done

python3 - "$RAW_SUB" "$SUBS" "$CONNS" "$MSGS" "$PAYLOAD" <<'PY' | tee results/bench-mqtt-sub.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
subs, conns, msgs, payload = sys.argv[2:6]
print("Notifications through Mosquitto 2.0.11 (one CPU): %s publishers x %d QoS-0 messages of %s B to %s "
      "subscribers; median of %d rounds" % (conns, int(msgs) // int(conns), payload, subs, len({r[1] for r in rows})))
print("%-14s %16s %22s %10s" % ("subscribers", "deliveries/s", "subscriber CPU/msg us", "lost"))
for t in ("xdpreplay", "mosquitto_sub"):
    sel = [r for r in rows if r[0] == t]
    if sel:
        print("%-14s %16.0f %22.3f %10.0f" % (t, statistics.median(float(r[2]) for r in sel),
                                             statistics.median(float(r[3]) for r in sel),
                                             statistics.median(float(r[4]) for r in sel)))
xs = [r for r in rows if r[0] == "xdpreplay"]
ms = [r for r in rows if r[0] == "mosquitto_sub"]
print("per round, xdpreplay / mosquitto_sub: deliveries/s, CPU per delivery: " +
      ", ".join("%.2f/%.3f" % (float(x[2]) / max(float(m[2]), 1), float(x[3]) / max(float(m[3]), 1e-9))
                for x, m in zip(xs, ms)))
PY
cp "$RAW_SUB" results/bench-mqtt-sub.raw.tsv
