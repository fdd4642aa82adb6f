#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): new HTTP sessions per second against nginx on the test bed (one worker
# on one CPU, the sender on the other), xdpreplay gen tcp beside ab, wrk and h2load (Debian's),
# interleaved round by round. Each session is one GET / of 600 bytes on its own connection
# (ab's default; wrk and h2load with "Connection: close").
#  - sessions/s: completed sessions over the run (xdpreplay: open loop at BENCH_TCP_RATE for
#    BENCH_SECS; the others: as fast as they go with BENCH_TCP_CONC connections).
#  - sender CPU per session: user + system time of the sender, and for xdpreplay also the run
#    time of its XDP program (kernel.bpf_stats_enabled), over the sessions completed; and for
#    xdpreplay the XDP program and its pump alone (xdpreplay-xdp): its sending thread spins
#    between departures, a core whatever the rate.
# BENCH_TCP_BODY=N: each session is one POST /post of an N-byte body instead (nginx reads it whole;
# xdpreplay's segments then go through its pump, several full ones in flight).
# BENCH_TCP_KEEPALIVE=K: keep-alive instead, a closed loop of BENCH_TCP_CONC connections for every
# tool (xdpreplay: --concurrency, K requests per session, a new session as one ends; wrk, ab -k and
# h2load keep theirs open), and the figure is requests/s.
# BENCH_TCP_RESPONDER=1: a server that is not the limit instead of nginx: xdpreplay count --respond
# answers in XDP on the server's interface (SYN-ACK, a 200 of 2 bytes with a FIN, the last ACK).
# xdpreplay is offered the rates of BENCH_TCP_LADDER in turn (the figure: the highest it completed
# whole); wrk and ab go as fast as they go (Connection: close), with a counter's XDP
# program on the generator's side for their runs (veth wakes a peer for XDP_TX frames only when it
# has one; xdpreplay's own program is there during its runs).
# BENCH_TCP_SESSIONS=1 (the default, GET / against nginx): xdpreplay replay --sessions too, playing
# curl's own GET / (recorded by tcpdump on the bed before the rounds) at BENCH_TCP_RATE: a captured
# session as a load, beside gen tcp's built one (tcpreplay cannot complete such a session: the
# server's ISN is not the capture's).
# Where --engine auto takes the kernel engine, gen tcp also runs with --engine xsk (xdpreplay-xsk;
# bench_xsk_rows in bench-lib.sh), and the report gives xsk / kernel per round.
# Results: a table on stdout and results/bench-tcp.{txt,raw.tsv}; per-round ratios against wrk.
#   BENCH_REPS=3 BENCH_SECS=3 scripts/bench-tcp.sh
#   BENCH_TCP_BODY=10240 BENCH_TCP_RATE=5000 scripts/bench-tcp.sh
#   BENCH_TCP_KEEPALIVE=100 BENCH_TCP_CONC=8 scripts/bench-tcp.sh
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/nginx.sh"
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECS:-3}
RATE=${BENCH_TCP_RATE:-15000}
CONC=${BENCH_TCP_CONC:-64}
KEEP=${BENCH_TCP_KEEPALIVE:-0}
have nginx && have ab && have wrk && have h2load ||
	{ echo "bench-tcp: needs nginx, ab, wrk and h2load (scripts/deps.sh --bench)" >&2; exit 1; }
bench_setup
nginx_conf "$WORK/nginx" "$TB_SRV_IP" 65535
ip netns exec "$NS_S" sysctl -qw net.core.somaxconn=65535 net.ipv4.tcp_max_syn_backlog=65535
ip netns exec "$NS_S" taskset -c 1 nginx -c "$WORK/nginx/nginx.conf" -p "$WORK/nginx" &
NGINX_PID=$!
BPF_STATS=$(sysctl -n kernel.bpf_stats_enabled)
trap 'kill $NGINX_PID 2>/dev/null; wait $NGINX_PID 2>/dev/null; sysctl -qw kernel.bpf_stats_enabled=$BPF_STATS; tb_down; rm -rf "$WORK"' EXIT
nginx_wait "$NS_S" "$TB_SRV_IP" "$NGINX_PID" || { echo "bench-tcp: nginx did not start" >&2; exit 1; }
sysctl -qw kernel.bpf_stats_enabled=1
# Each client's own network work on the sender's CPU (0), as a NIC's interrupt affinity would put
# it: wrk's and ab's runs in their syscalls there; xdpreplay's is its XDP program, which on veth
# runs in the NAPI of the CPU that sent the server's segment (nginx's). So the generator side gets
# a NAPI thread of its own, pinned to CPU 0 (BENCH_TCP_GEN_NAPI=0: leave it in nginx's softirq).
# (Against the responder: no NAPI thread, so that every XDP program runs in the sender's softirq,
# one core for the client and the server's XDP alike; a thread measured worse there.)
GEN_NAPI=${BENCH_TCP_GEN_NAPI:-1}
[ "${BENCH_TCP_RESPONDER:-0}" = 1 ] && GEN_NAPI=${BENCH_TCP_GEN_NAPI:-0}
# BENCH_TCP_SPLIT=1: each side's network work on a core of its own, as on two hosts: threaded
# NAPI at SCHED_FIFO 50 (so that it preempts the sender's spinning thread, as a softirq would), the
# generator's pinned to the sender's CPU 0 and the server's to CPU 1. With the responder, CPU 0 then
# carries the client alone (its SYNs and its XDP program): the issue's "from one sender core".
if [ "${BENCH_TCP_SPLIT:-0}" = 1 ]; then
	GEN_NAPI=0
	for side in "$NS_G:$TB_GEN_IF:0" "$NS_S:$TB_SRV_IF:1"; do
		IFS=: read -r ns dev cpu <<<"$side"
		before=$(pgrep '^napi/' | sort || true)
		ip netns exec "$ns" sh -c "echo 1 > /sys/class/net/$dev/threaded"
		for p in $(comm -13 <(echo "$before") <(pgrep '^napi/' | sort)); do
			taskset -pc "$cpu" "$p" >/dev/null
			chrt -f -p 50 "$p"
		done
	done
fi
if [ "$GEN_NAPI" = 1 ]; then
	before=$(pgrep '^napi/' | sort || true)
	ip netns exec "$NS_G" sh -c "echo 1 > /sys/class/net/$TB_GEN_IF/threaded"
	for p in $(comm -13 <(echo "$before") <(pgrep '^napi/' | sort)); do
		taskset -pc 0 "$p" >/dev/null
	done
fi
# xdpreplay's segments reach nginx's side of the veth at once only when it has an XDP program
COUNT_ARGS=(--tcp --dport 80)
RESPONDER=${BENCH_TCP_RESPONDER:-0}
LADDER=${BENCH_TCP_LADDER:-100k 150k 200k 250k 300k 350k 400k}
[ "$RESPONDER" = 1 ] && COUNT_ARGS+=(--respond --respond-close)
COUNT_DROP=
count_start
TCP_RAW=$WORK/tcp.tsv
: >"$TCP_RAW"
URL="http://$TB_SRV_IP/"
BODY=${BENCH_TCP_BODY:-0}
# the request each tool sends: GET /, or POST /post with a body of BODY bytes
XR_REQ=(--http 'GET /')
# BENCH_TCP_CLOSE=rst: xdpreplay ends each session with a RST (one segment and one XDP run fewer)
[ -n "${BENCH_TCP_CLOSE:-}" ] && XR_REQ+=(--close "$BENCH_TCP_CLOSE")
AB_REQ=()
WRK_REQ=()
H2_REQ=()
if [ "$BODY" -gt 0 ]; then
	URL="http://$TB_SRV_IP/post"
	head -c "$BODY" /dev/urandom >"$WORK/body"
	XR_REQ=(--http 'POST /post' --body "$WORK/body")
	AB_REQ=(-p "$WORK/body" -T application/octet-stream)
	printf 'local f = io.open("%s", "rb")\nwrk.method = "POST"\nwrk.body = f:read("*a")\nf:close()\n' \
		"$WORK/body" >"$WORK/post.lua"
	WRK_REQ=(-s "$WORK/post.lua")
	H2_REQ=(-d "$WORK/body")
fi

SESSIONS=${BENCH_TCP_SESSIONS:-0}
if [ "$SESSIONS" = 1 ] && [ "$BODY" = 0 ] && [ "$KEEP" = 0 ] && [ "$RESPONDER" = 0 ]; then
	have tcpdump && have curl || { echo "bench-tcp: BENCH_TCP_SESSIONS needs tcpdump and curl" >&2; exit 1; }
	ip netns exec "$NS_G" tcpdump -i "$TB_GEN_IF" -U -w "$WORK/curl.pcap" "tcp port 80" 2>"$WORK/td.err" &
	td=$!
	for i in $(seq 100); do grep -q "listening on" "$WORK/td.err" && break; sleep 0.05; done
	ip netns exec "$NS_G" curl -sf -o /dev/null "$URL"
	sleep 1
	kill -INT "$td"
	wait "$td" || true
else
	SESSIONS=0
fi

# run NAME CMD...: CMD on CPU 0 of the generator namespace under /usr/bin/time, output in $WORK/out
run() {
	local name=$1
	shift
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" taskset -c 0 "$@" >"$WORK/out" 2>&1 || true
	CPU=$(awk '{print $1 + $2}' "$WORK/time" | tail -n 1)
}

# xdp_cpu JSON: seconds of a gen tcp run's XDP program and its pump (the thread that sends the
# segments XDP_TX cannot), from its --json
xdp_cpu() {
	python3 -c 'import json,sys; g = json.load(open(sys.argv[1]))
print((g.get("replies_xdp_ns", 0) + g["segments"]["pump"]["cpu_ns"]) / 1e9)' "$1"
}

# record NAME ROUND SESSIONS SECONDS CPU_S
record() {
	python3 -c 'import sys; n, s, c = float(sys.argv[3]), float(sys.argv[4]), float(sys.argv[5])
print("%s\t%s\t%.0f\t%.2f" % (sys.argv[1], sys.argv[2], n / s if s > 0 else 0, c * 1e6 / n if n else 0))' "$@" >>"$TCP_RAW"
	echo "  round $2 $1: $(tail -n 1 "$TCP_RAW" | cut -f3) sessions/s, $(tail -n 1 "$TCP_RAW" | cut -f4) us CPU each" >&2
}

# keep_round ROUND: one round of keep-alive requests on BENCH_TCP_CONC connections, every tool
keep_round() {
	local round=$1 n
	run xdpreplay "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 "${XR_REQ[@]}" \
		--concurrency "$CONC" --requests-per-session "$KEEP" --duration "${SECS}s" --wait 5s \
		--json "$WORK/g.json"
	n=$(jget "$WORK/g.json" requests.responses)
	local xdp secs
	xdp=$(xdp_cpu "$WORK/g.json")
	# from the first SYN to the last response: the sessions open at the end finish after --duration
	secs=$(python3 -c 'import json,sys; r = json.load(open(sys.argv[1]))["requests"]
print(r["responses"] / r["responses_per_s"] if r["responses_per_s"] else 0)' "$WORK/g.json")
	record xdpreplay "$round" "$n" "$secs" "$(python3 -c "print($CPU + $xdp)")"
	record xdpreplay-xdp "$round" "$n" "$secs" "$xdp"
	run ab ab -q -k -n $((RATE * SECS)) -c "$CONC" "${AB_REQ[@]}" "$URL"
	n=$(awk '/^Complete requests:/ { c = $3 } /^Failed requests:/ { f = $3 } END { print c - f }' "$WORK/out")
	record ab "$round" "$n" "$(awk '/^Time taken for tests:/ { print $5 }' "$WORK/out")" "$CPU"
	run wrk wrk -t1 -c "$CONC" -d "${SECS}s" "${WRK_REQ[@]}" "$URL"
	n=$(awk '/requests in/ { print $1 }' "$WORK/out")
	record wrk "$round" "$n" "$(awk '/requests in/ { sub(/s,$/, "", $4); print $4 }' "$WORK/out")" "$CPU"
	run h2load h2load --h1 -D "$SECS" -c "$CONC" "${H2_REQ[@]}" "$URL"
	n=$(awk '/^requests:/ { print $8 }' "$WORK/out")
	record h2load "$round" "$n" "$(awk '/^finished in/ { sub(/s,$/, "", $3); print $3 }' "$WORK/out")" "$CPU"
}

# responder_round ROUND: xdpreplay up the ladder (the highest rate every session of completed),
# then the socket clients as fast as they go, all against the XDP responder
responder_round() {
	local round=$1 best=0 best_cpu=0 best_xdp=0 r n asked xdp
	for r in $LADDER; do
		run xdpreplay "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/18 \
			"${XR_REQ[@]}" --pps "$r" --duration "${SECS}s" --wait 3s --json "$WORK/g.json"
		n=$(jget "$WORK/g.json" sessions.completed)
		asked=$(jget "$WORK/g.json" sessions.asked)
		xdp=$(xdp_cpu "$WORK/g.json")
		echo "  round $round xdpreplay at $r: $n of $asked sessions completed" >&2
		[ "$n" = "$asked" ] || break
		best=$n best_cpu=$CPU best_xdp=$xdp
	done
	record xdpreplay "$round" "$best" "$SECS" "$(python3 -c "print($best_cpu + $best_xdp)")"
	record xdpreplay-xdp "$round" "$best" "$SECS" "$best_xdp"
	ip netns exec "$NS_G" "$XR" count -i "$TB_GEN_IF" --any --no-drop-reasons -q --duration 600s &
	local gen_count=$!
	sleep 0.5
	run ab ab -q -n 200000 -c "$CONC" "${AB_REQ[@]}" "$URL"
	n=$(awk '/^Complete requests:/ { c = $3 } /^Failed requests:/ { f = $3 } END { print c - f }' "$WORK/out")
	record ab "$round" "$n" "$(awk '/^Time taken for tests:/ { print $5 }' "$WORK/out")" "$CPU"
	run wrk wrk -t1 -c "$CONC" -d "${SECS}s" -H 'Connection: close' "${WRK_REQ[@]}" "$URL"
	n=$(awk '/requests in/ { print $1 }' "$WORK/out")
	record wrk "$round" "$n" "$(awk '/requests in/ { sub(/s,$/, "", $4); print $4 }' "$WORK/out")" "$CPU"
	# (no h2load: against the responder each of its connections made one request and its second
	# connections never sent a SYN, 32 requests/s; not understood)
	kill -INT "$gen_count"
	wait "$gen_count" || true
}

for round in $(seq "$REPS"); do
	if [ "$RESPONDER" = 1 ]; then
		responder_round "$round"
		continue
	fi
	if [ "$KEEP" -gt 0 ]; then
		keep_round "$round"
		continue
	fi
	run xdpreplay "$XR" gen tcp -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --src 198.18.64.0/23 "${XR_REQ[@]}" \
		--pps "$RATE" --duration "${SECS}s" --wait 3s --json "$WORK/g.json"
	n=$(jget "$WORK/g.json" sessions.completed)
	# the XDP program's run time, and the pump's (the thread that sends the segments XDP_TX cannot)
	xdp=$(xdp_cpu "$WORK/g.json")
	record xdpreplay "$round" "$n" "$(jget "$WORK/g.json" duration_s)" "$(python3 -c "print($CPU + $xdp)")"
	# what the sessions themselves cost: the XDP program alone (the sender's thread spins between
	# departures, so its CPU is a core whatever the rate)
	record xdpreplay-xdp "$round" "$n" "$(jget "$WORK/g.json" duration_s)" "$xdp"
	if bench_xsk_rows; then
		# the same sessions with the SYNs and requests sent by the xsk engine
		run xdpreplay-xsk "$XR" gen tcp -i "$TB_GEN_IF" --engine xsk --dst "$TB_SRV_IP" \
			--src 198.18.64.0/23 "${XR_REQ[@]}" --pps "$RATE" --duration "${SECS}s" --wait 3s \
			--json "$WORK/g.json"
		n=$(jget "$WORK/g.json" sessions.completed)
		xdp=$(xdp_cpu "$WORK/g.json")
		record xdpreplay-xsk "$round" "$n" "$(jget "$WORK/g.json" duration_s)" "$(python3 -c "print($CPU + $xdp)")"
	fi
	if [ "$SESSIONS" = 1 ]; then
		# the same GET /, as curl sent it, played from the capture (other sources: no TIME_WAIT
		# meets the run before)
		run replay-sessions "$XR" replay --sessions -i "$TB_GEN_IF" --dst "$TB_SRV_IP" \
			--src 198.18.96.0/20 --pps "$RATE" --duration "${SECS}s" --wait 3s --json "$WORK/g.json" \
			"$WORK/curl.pcap"
		n=$(jget "$WORK/g.json" sessions.completed)
		xdp=$(xdp_cpu "$WORK/g.json")
		record replay-sessions "$round" "$n" "$(jget "$WORK/g.json" duration_s)" "$(python3 -c "print($CPU + $xdp)")"
		record replay-sessions-xdp "$round" "$n" "$(jget "$WORK/g.json" duration_s)" "$xdp"
	fi
	run ab ab -q -n $((RATE * SECS)) -c "$CONC" "${AB_REQ[@]}" "$URL"
	n=$(awk '/^Complete requests:/ { c = $3 } /^Failed requests:/ { f = $3 } END { print c - f }' "$WORK/out")
	record ab "$round" "$n" "$(awk '/^Time taken for tests:/ { print $5 }' "$WORK/out")" "$CPU"
	run wrk wrk -t1 -c "$CONC" -d "${SECS}s" -H 'Connection: close' "${WRK_REQ[@]}" "$URL"
	n=$(awk '/requests in/ { print $1 }' "$WORK/out")
	record wrk "$round" "$n" "$(awk '/requests in/ { sub(/s,$/, "", $4); print $4 }' "$WORK/out")" "$CPU"
	run h2load h2load --h1 -n $((RATE * SECS)) -c "$CONC" -H 'Connection: close' "${H2_REQ[@]}" "$URL"
	n=$(awk '/^requests:/ { print $8 }' "$WORK/out")
	record h2load "$round" "$n" "$(awk '/^finished in/ { sub(/s,$/, "", $3); print $3 }' "$WORK/out")" "$CPU"
done
count_stop

what="against nginx (one worker), one GET / each"
[ "$BODY" -gt 0 ] && what="against nginx (one worker), one POST of $BODY bytes each"
unit=sessions
[ "$RESPONDER" = 1 ] && what="against a stateless responder in XDP, one GET / each (count --respond; xdpreplay: the highest of $LADDER completed whole)"
if [ "$KEEP" -gt 0 ]; then
	what="against nginx (one worker), keep-alive on $CONC connections (xdpreplay: --concurrency $CONC, $KEEP requests a session)"
	unit=requests
fi
python3 - "$TCP_RAW" "$what" "$unit" <<'PY' | tee results/bench-tcp.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
tools = ["xdpreplay", "xdpreplay-xdp", "xdpreplay-xsk", "replay-sessions", "replay-sessions-xdp", "ab", "wrk",
         "h2load"]
by = {t: [r for r in rows if r[0] == t] for t in tools}
u = sys.argv[3]
print("HTTP %s %s, median of %d rounds"
      % (u, sys.argv[2], len(by["wrk"])))
print("%-14s %14s %22s" % ("sender", u + "/s", "sender CPU/%s us" % u[:-1]))
for t in tools:
    if by[t]:
        print("%-14s %14.0f %22.2f" % (t, statistics.median(float(r[2]) for r in by[t]),
                                       statistics.median(float(r[3]) for r in by[t])))
print("per round, xdpreplay / wrk: %s/s, CPU per %s (with the spinning thread; XDP alone)" % (u, u[:-1]))
for x, xx, w in zip(by["xdpreplay"], by["xdpreplay-xdp"], by["wrk"]):
    print("  round %s: %.2f, %.3f; %.3f" % (x[1], float(x[2]) / max(float(w[2]), 1),
          float(x[3]) / max(float(w[3]), 1e-9), float(xx[3]) / max(float(w[3]), 1e-9)))
if by["xdpreplay-xsk"]:
    print("per round, the xsk engine / the kernel engine (gen tcp): %s/s" % u)
    for x, k in zip(by["xdpreplay-xsk"], by["xdpreplay"]):
        print("  round %s: %.3f" % (x[1], float(x[2]) / max(float(k[2]), 1)))
if by["replay-sessions"]:
    print("per round, replay --sessions / gen tcp: %s/s, XDP CPU per %s" % (u, u[:-1]))
    for s, sx, x, xx in zip(by["replay-sessions"], by["replay-sessions-xdp"], by["xdpreplay"],
                            by["xdpreplay-xdp"]):
        print("  round %s: %.3f, %.3f" % (s[1], float(s[2]) / max(float(x[2]), 1),
              float(sx[3]) / max(float(xx[3]), 1e-9)))
PY
cp "$TCP_RAW" results/bench-tcp.raw.tsv
