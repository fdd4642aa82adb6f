#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): DNS queries against nsd on the test bed, xdpreplay gen dns beside
# dnsperf and resperf (Debian's), interleaved round by round.
#  1. Highest answered rate: each sender as fast as it goes for BENCH_SECS (xdpreplay --topspeed;
#     dnsperf with 100 and 1000 queries outstanding; resperf ramping to 300k qps, its
#     "maximum throughput"), answers counted by the sender.
#  2. Sender CPU per query: CPU time of the sender (user + system, children included) over the
#     queries it sent, at top speed and at the same fixed rate (100k qps).
# nsd runs one server process (one core); the sender has the other.
# Results: a table on stdout and results/bench-dns.{txt,raw.tsv}; per-round ratios against dnsperf.
#   BENCH_REPS=3 BENCH_SECS=5 scripts/bench-dns.sh
. "$(dirname "$0")/bench-lib.sh"
. "$(dirname "$0")/nsd.sh"
REPS=${BENCH_REPS:-3}
SECS=${BENCH_SECS:-5}
RATE=${BENCH_DNS_RATE:-100000}
NAMES=${BENCH_DNS_NAMES:-10000}
RESPERF_MAX=${BENCH_RESPERF_MAX:-300000}
have nsd && have dnsperf || { echo "bench-dns: needs nsd and dnsperf (scripts/deps.sh --bench)" >&2; exit 1; }
bench_setup
nsd_conf "$WORK/nsd" "$TB_SRV_IP" "$NAMES"
nsd_names "$NAMES" "$WORK/names"
# resperf reads its data once and stops when it runs out: enough lines for its ramp and plateau
python3 -c 'import sys; l = open(sys.argv[1]).read(); open(sys.argv[2], "w").write(l * (int(sys.argv[3]) // l.count("\n") + 1))' \
	"$WORK/names" "$WORK/names-resperf" $((RESPERF_MAX * (SECS + 2)))
ip netns exec "$NS_S" nsd -d -c "$WORK/nsd/nsd.conf" &
NSD_PID=$!
trap 'kill $NSD_PID 2>/dev/null; wait $NSD_PID 2>/dev/null; tb_down; rm -rf "$WORK"' EXIT
nsd_wait "$NS_S" "$TB_SRV_IP" "$NSD_PID" || { echo "bench-dns: nsd did not start" >&2; exit 1; }
DNS_RAW=$WORK/dns.tsv
: >"$DNS_RAW"

# run NAME KIND CMD...: CMD in the generator namespace under /usr/bin/time; its output in $WORK/out
run() {
	local name=$1 kind=$2
	shift 2
	/usr/bin/time -f "%U %S" -o "$WORK/time" ip netns exec "$NS_G" "$@" >"$WORK/out" 2>&1 || true
	CPU=$(awk '{print $1 + $2}' "$WORK/time" | tail -n 1)
}
# record NAME KIND SENT ANSWERED SECONDS
record() {
	printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$rep" "$1" "$2" "$3" "$4" "$5" "$CPU" >>"$DNS_RAW"
	echo "  $1 $2: $(python3 -c "import sys; print('%.0f answered/s, %.3f us CPU/query' % (float(sys.argv[2]) / float(sys.argv[3]), float(sys.argv[4]) * 1e6 / max(1, float(sys.argv[1]))))" "$3" "$4" "$5" "$CPU")" >&2
}
xr_dns() { # KIND ARGS...
	local kind=$1
	shift
	run xdpreplay "$kind" "$XR" gen dns -i "$TB_GEN_IF" --dst "$TB_SRV_IP" --names "$WORK/names" \
		--duration ${SECS}s --wait 500ms -q --json "$WORK/x.json" "$@"
	record xdpreplay "$kind" "$(jget "$WORK/x.json" sent)" "$(jget "$WORK/x.json" replies.answers)" \
		"$(jget "$WORK/x.json" duration_s)"
}
dnsperf_run() { # KIND ARGS...
	local kind=$1
	shift
	run dnsperf "$kind" dnsperf -s "$TB_SRV_IP" -d "$WORK/names" -l "$SECS" "$@"
	record dnsperf "$kind" "$(awk '/Queries sent:/ {print $3}' "$WORK/out")" \
		"$(awk '/Queries completed:/ {print $3}' "$WORK/out")" \
		"$(awk '/Run time \(s\):/ {print $4}' "$WORK/out")"
}

echo "== DNS against nsd, ${SECS}s runs, $REPS rounds" >&2
for rep in $(seq "$REPS"); do
	xr_dns topspeed --topspeed
	dnsperf_run "topspeed-q100"
	dnsperf_run "topspeed-q1000" -q 1000
	if have resperf; then
		run resperf ramp resperf -s "$TB_SRV_IP" -d "$WORK/names-resperf" -m "$RESPERF_MAX" -r "$SECS" -c 1 -t 1 -P "$WORK/resperf.gnuplot"
		# resperf reports its peak; what it sent and got in all: the rate at which answers came
		record resperf ramp "$(awk '/Queries sent:/ {print $3}' "$WORK/out")" \
			"$(awk '/Maximum throughput:/ {print $3}' "$WORK/out")" 1
	fi
	xr_dns "rate-$RATE" --pps "$RATE"
	dnsperf_run "rate-$RATE" -Q "$RATE" -q 1000
done

python3 - "$DNS_RAW" "$REPS" "$SECS" <<-'PY' | tee results/bench-dns.txt
import statistics, sys
rows = [l.rstrip("\n").split("\t") for l in open(sys.argv[1]) if l.strip()]
reps, secs = int(sys.argv[2]), sys.argv[3]
def val(r):
    rep, tool, kind, sent, ans, dur, cpu = r
    sent, ans, dur, cpu = float(sent or 0), float(ans or 0), float(dur or 0), float(cpu or 0)
    # resperf's "answered" is already its maximum throughput (qps)
    rate = ans if tool == "resperf" else (ans / dur if dur else 0)
    return int(rep), tool, kind, rate, (cpu * 1e6 / sent if sent else 0), sent
v = [val(r) for r in rows]
print("DNS against nsd (1 server process), %ss runs, %d rounds; medians" % (secs, reps))
print("%-10s %-16s %14s %16s" % ("sender", "run", "answered/s", "CPU us/query"))
for key in sorted({(t, k) for _, t, k, *_ in v}):
    rs = [x for x in v if (x[1], x[2]) == key]
    print("%-10s %-16s %14.0f %16.3f" % (key[0], key[1], statistics.median(x[3] for x in rs),
                                          statistics.median(x[4] for x in rs)))
print("\nper round, xdpreplay / dnsperf (same kind of run):")
for rep in sorted({x[0] for x in v}):
    x = {(t, k): (a, c) for r, t, k, a, c, _ in v if r == rep}
    for xk, dk in (("topspeed", "topspeed-q1000"), ) + tuple((k, k) for (t, k) in x if t == "xdpreplay" and k.startswith("rate")):
        if ("xdpreplay", xk) in x and ("dnsperf", dk) in x:
            xa, xc = x[("xdpreplay", xk)]
            da, dc = x[("dnsperf", dk)]
            print("  round %d %-12s answered %.2fx, CPU per query %.1fx less" % (rep, xk, xa / da if da else 0, dc / xc if xc else 0))
PY
cp "$DNS_RAW" results/bench-dns.raw.tsv
