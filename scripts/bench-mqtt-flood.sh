#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): the published flood benchmark's table, its four patterns at 0 (16: the
# stamp alone), 1, 5 and 10 KB, through Mosquitto (Debian's, on one CPU, configured as that
# benchmark's broker: scripts/mosquitto.sh). Each cell, interleaved round by round:
#   xdpreplay x1     gen mqtt --pattern P, one client as the published benchmark's (its other end,
#                    subscribers or the responder, on the second sender's interface)
#   xdpreplay xN     N clients at once, the same messages in all
#   mosquitto        Debian's clients, the same messages: fire mosquitto_pub -l (QoS 0); notify the
#                    same, read by mosquitto_sub; sync mosquitto_rr, a process per call in a shell
#                    loop (RR_CALLS of them); async none (no Debian client pipelines calls)
# count, seconds, per second, ms each as the published table has them: per second over the senders'
# time (xdpreplay: first SYN to last answer; mosquitto: the whole run, to mosquitto_sub's last
# line); ms each the calls' median round trip, or seconds / count. CPU per message: both ends, user +
# system (xdpreplay's whole command with its other end's child, loading and verifying BPF included;
# mosquitto: each process's).
# Then, with BENCH_FLOOD_SEARCH=1 (the default), the broker's drop point per pattern at
# BENCH_FLOOD_SEARCH_SIZES: search --preset quick on xdpreplay's clients per second (each
# SEARCH_MSGS messages), NDR: fire and calls, every session completed within --wait 2s; notify,
# every publisher's messages at every subscriber. Offered messages/s is clients/s x messages: a
# trial's sessions may end after it, as long as within the wait (the broker's queues absorb a
# burst), so it is the load the broker carried whole, not its sustained rate.
# Results: a table on stdout and results/bench-mqtt-flood.{txt,raw.tsv}; per-round ratios.
#   BENCH_REPS=3 BENCH_FLOOD_MSGS=10000 BENCH_FLOOD_CLIENTS=10 BENCH_FLOOD_SEARCH_MSGS=100 \
#     scripts/bench-mqtt-flood.sh
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/mosquitto.sh"
REPS=${BENCH_REPS:-3}
MSGS=${BENCH_FLOOD_MSGS:-10000}
[ "$MSGS" -le "$MQ_PUB_MAX" ] ||
	{ echo "bench-mqtt-flood: at most $MQ_PUB_MAX messages (mosquitto_pub -l stops early past 65,535: bench-lib.sh)" >&2; exit 2; }
CLIENTS=${BENCH_FLOOD_CLIENTS:-10}
RR_CALLS=${BENCH_RR_CALLS:-100}
SIZES=${BENCH_MQTT_SIZES:-16 1024 5120 10240}
PATTERNS=${BENCH_FLOOD_PATTERNS:-fire notify sync async}
SEARCH=${BENCH_FLOOD_SEARCH:-1}
SEARCH_MSGS=${BENCH_FLOOD_SEARCH_MSGS:-100}
SEARCH_SIZES=${BENCH_FLOOD_SEARCH_SIZES:-16 1024}
SEARCH_MAX=${BENCH_FLOOD_SEARCH_MAX:-4000}
have mosquitto && have mosquitto_pub && have mosquitto_sub && have mosquitto_rr ||
	{ echo "bench-mqtt-flood: needs mosquitto and its clients (scripts/deps.sh)" >&2; exit 1; }
bench_mqtt_bed bench-mqtt-flood
PEER=(--peer "$TB_GEN_IF" --peer-netns "$(tb_gen_ns 1)")
AUTH=(--dst "$TB_SRV_IP" --username bench --password flood-0)
RAW_FLOOD=$WORK/flood.tsv
: >"$RAW_FLOOD"

# record TOOL PATTERN SIZE ROUND COUNT SECONDS MS_EACH CPU_S [XDP_CPU_S]
record() {
	python3 -c 'import sys; n, s, ms, c, x = map(float, sys.argv[5:10])
print("%s\t%s\t%s\t%s\t%d\t%.4f\t%.0f\t%.4f\t%.2f\t%.2f" % (*sys.argv[1:5], n, s, n / s if s > 0 else 0, ms,
      c * 1e6 / n if n else 0, x * 1e6 / n if n else 0))' "$1" "$2" "$3" "$4" "$5" "$6" "$7" "$8" "${9:-0}" \
		>>"$RAW_FLOOD"
	echo "  round $4 $1 $2 $3 B: $5 in $6 s, $(tail -n 1 "$RAW_FLOOD" | cut -f7)/s, $7 ms each," \
		"$(tail -n 1 "$RAW_FLOOD" | cut -f9) us CPU each ($(tail -n 1 "$RAW_FLOOD" | cut -f10) in XDP)" >&2
}

# cpu: user + system seconds of the last /usr/bin/time
cpu() { awk '{print $1 + $2}' "$WORK/time" | tail -n 1; }

# xr PATTERN SIZE ROUND CLIENTS: gen mqtt --pattern, MSGS messages (or calls) in all
xr() {
	local pattern=$1 size=$2 round=$3 clients=$4 peer=()
	[ "$pattern" = fire ] || peer=("${PEER[@]}")
	rm -f "$WORK/g.json"
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" taskset -c 0 "$XR" gen mqtt \
		-i "$TB_GEN_IF" "${AUTH[@]}" --src 198.18.64.0/23 --pattern "$pattern" "${peer[@]}" \
		--payload "$size" --messages $((MSGS / clients)) --count "$clients" --pps 10k --wait 10s -q \
		--json "$WORK/g.json" >"$WORK/out" 2>&1 ||
		echo "bench-mqtt-flood: gen mqtt --pattern $pattern exited $?: $(tail -n 3 "$WORK/out")" >&2
	[ -s "$WORK/g.json" ] || return 0
	# the publishers' or callers' XDP program and pump alone (the rest is mostly loading BPF, twice)
	local xdp
	xdp=$(python3 -c 'import json,sys; g = json.load(open(sys.argv[1]))
print((g.get("replies_xdp_ns", 0) + g["segments"]["pump"]["cpu_ns"]) / 1e9)' "$WORK/g.json")
	record "xdpreplay-x$clients" "$pattern" "$size" "$round" "$(jget "$WORK/g.json" pattern.count)" \
		"$(jget "$WORK/g.json" pattern.seconds)" "$(jget "$WORK/g.json" pattern.ms_each)" "$(cpu)" "$xdp"
}

# lines SIZE N: N messages of SIZE bytes, one a line (mosquitto_pub -l)
lines() {
	python3 -c 'import sys; sys.stdout.write(("x" * (int(sys.argv[1]) - 1) + "\n") * int(sys.argv[2]))' \
		"$1" "$2" >"$WORK/lines"
}

# mq PATTERN SIZE ROUND: Debian's clients, the same messages
mq() {
	local pattern=$1 size=$2 round=$3 t0 t1 n sub_cpu=0 sub
	case $pattern in
	fire | notify)
		lines "$size" "$MSGS"
		if [ "$pattern" = notify ]; then
			/usr/bin/time -f "%U %S" -o "$WORK/time.sub" ip netns exec "$(tb_gen_ns 1)" \
				mosquitto_sub -h "$TB_SRV_IP" -u bench -P flood-0 -t 'msg/#' -C "$MSGS" -W 30 \
				>"$WORK/sub.out" 2>/dev/null &
			sub=$!
			broker_holds "$(tb_gen_ip 1)" 1
		fi
		t0=$(date +%s.%N)
		/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" taskset -c 0 \
			mosquitto_pub -h "$TB_SRV_IP" -u bench -P flood-0 -t msg/pub -q 0 -l <"$WORK/lines" || true
		n=$MSGS
		if [ "$pattern" = notify ]; then
			wait "$sub" || true
			n=$(wc -l <"$WORK/sub.out")
			sub_cpu=$(awk '{print $1 + $2}' "$WORK/time.sub" | tail -n 1)
		fi
		t1=$(date +%s.%N)
		record mosquitto "$pattern" "$size" "$round" "$n" "$(python3 -c "print($t1 - $t0)")" \
			"$(python3 -c "print(($t1 - $t0) * 1e3 / max($n, 1))")" \
			"$(python3 -c "print($(cpu) + $sub_cpu)")"
		;;
	sync)
		# mosquitto_rr's requests need a responder: xdpreplay's (gen mqtt --answer), on the second
		# sender's interface while the loop runs (it holds that interface's XDP hook)
		ip netns exec "$(tb_gen_ns 1)" "$XR" gen mqtt -i "$TB_GEN_IF" "${AUTH[@]}" \
			--client-id 'rr-responder-{c}' --subscribe 'req/rr' --answer 'res/{c}' --publishers 1 \
			--messages 1000000 --count 1 --wait 3600s -q &
		local resp=$!
		broker_holds "$(tb_gen_ip 1)" 1
		rr_loop "$size" "$RR_CALLS"
		kill -TERM "$resp" 2>/dev/null
		wait "$resp" 2>/dev/null || true
		record mosquitto sync "$size" "$round" "$RR_N" "$RR_SECS" \
			"$(python3 -c "print($RR_SECS * 1e3 / max($RR_N, 1))")" "$(cpu)"
		;;
	esac
}


for round in $(seq "$REPS"); do
	for size in $SIZES; do
		for pattern in $PATTERNS; do
			xr "$pattern" "$size" "$round" 1
			xr "$pattern" "$size" "$round" "$CLIENTS"
			mq "$pattern" "$size" "$round"
		done
	done
done

# the broker's drop point: clients per second, each with SEARCH_MSGS messages
SEARCH_RAW=$WORK/search.tsv
: >"$SEARCH_RAW"
if [ "$SEARCH" = 1 ]; then
	for size in $SEARCH_SIZES; do
		for pattern in $PATTERNS; do
			peer=()
			[ "$pattern" = fire ] || peer=("${PEER[@]}")
			rm -f "$WORK/s.json"
			ip netns exec "$NS_G" "$XR" search --witness replies --preset quick --min 10 --max "$SEARCH_MAX" \
				--max-trials 8 --json "$WORK/s.json" -- gen mqtt -i "$TB_GEN_IF" "${AUTH[@]}" \
				--src 198.18.64.0/23 --pattern "$pattern" "${peer[@]}" --payload "$size" \
				--messages "$SEARCH_MSGS" --wait 2s >"$WORK/s.out" 2>&1 ||
				echo "bench-mqtt-flood: search $pattern $size exited $?: $(tail -n 3 "$WORK/s.out")" >&2
			python3 - "$WORK/s.json" "$pattern" "$size" "$SEARCH_MSGS" >>"$SEARCH_RAW" <<-'PY' || true
			import json, sys
			s = json.load(open(sys.argv[1]))
			g = s["goals"][0]
			print("%s\t%s\t%s\t%s\t%s" % (sys.argv[2], sys.argv[3], g["lower"], g.get("upper") or "",
			                              float(g["lower"]) * int(sys.argv[4])))
			PY
			echo "  search $pattern $size B: $(tail -n 1 "$SEARCH_RAW")" >&2
		done
	done
fi

python3 - "$RAW_FLOOD" "$SEARCH_RAW" "$CLIENTS" "$SEARCH_MSGS" <<'PY' | tee results/bench-mqtt-flood.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
published = {"fire": "7,182-10,185/s", "notify": "16,034 (0 KB) - 10,545/s (10 KB)",
             "sync": "88-374/s, 11.4 ms at 0 KB", "async": "3,594-3,930/s"}
names = {"fire": "fire & forget", "notify": "notifications", "sync": "sync calls", "async": "async calls"}
print("The flood benchmark's table through Mosquitto 2.0.11 (one CPU); median of %d rounds"
      % len({r[3] for r in rows}))
print("published (one Perl client, 1,000 messages a pattern, Mosquitto 2.0.10):")
for p in names:
    print("  %-14s %s" % (names[p], published[p]))
# the sender's share of a core while it sends: its XDP program and pump per message times its rate
print("%-14s %6s %-14s %7s %8s %10s %9s %11s %11s %12s" % ("pattern", "bytes", "client", "count", "seconds",
                                                           "per second", "ms each", "CPU/msg us", "XDP/msg us",
                                                           "sender core"))
keys = []
for r in rows:
    if (r[1], r[2], r[0]) not in keys:
        keys.append((r[1], r[2], r[0]))
for p, s, t in keys:
    sel = [r for r in rows if (r[1], r[2], r[0]) == (p, s, t)]
    med = lambda i: statistics.median(float(r[i]) for r in sel)
    core = statistics.median(float(r[6]) * float(r[9]) / 1e4 for r in sel)
    print("%-14s %6s %-14s %7.0f %8.3f %10.0f %9.3f %11.1f %11.2f %12s" % (
        names[p], s, t, med(4), med(5), med(6), med(7), med(8), med(9),
        "%.1f%%" % core if t.startswith("xdpreplay") else ""))
print("per round, xdpreplay x1 / mosquitto per second:")
for p in names:
    for s in sorted({r[2] for r in rows}, key=int):
        xs = [r for r in rows if r[0] == "xdpreplay-x1" and r[1] == p and r[2] == s]
        ms = [r for r in rows if r[0] == "mosquitto" and r[1] == p and r[2] == s]
        if xs and ms:
            print("  %-14s %6s B: %s" % (names[p], s, ", ".join("%.1f" % (float(x[6]) / max(float(m[6]), 1))
                                                             for x, m in zip(xs, ms))))
srows = [l.rstrip("\n").split("\t") for l in open(sys.argv[2]) if l.strip()]
if srows:
    print("the broker's drop point (search --preset quick, NDR: clients per second, each %s messages)"
          % sys.argv[4])
    print("%-14s %6s %14s %14s %18s" % ("pattern", "bytes", "clients/s", "upper", "offered msg/s"))
    for r in srows:
        print("%-14s %6s %14.0f %14s %18.0f" % (names[r[0]], r[1], float(r[2]), r[3] or "none", float(r[4])))
PY
cp "$RAW_FLOOD" results/bench-mqtt-flood.raw.tsv
[ ! -s "$SEARCH_RAW" ] || cp "$SEARCH_RAW" results/bench-mqtt-flood.search.tsv
