#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# A long run at a fixed rate on the test bed: does anything drift, grow or lose count?
#   SOAK_SECS=3600 SOAK_PPS=1M bash scripts/soak.sh      (not part of make test or CI)
# The sender (replay --listen) and the server's counter (count --drop --listen) are sampled every
# SOAK_EVERY seconds: each one's RSS, the sender's sent and failed, the counter's matched, the rates
# over the interval. Writes results/soak.csv and prints the drift of the rate, the growth of memory
# and the final accounting (sent + failed == asked, counted == sent).
set -euo pipefail
cd "$(dirname "$0")/.."
TOP=$PWD
XR=$TOP/xdpreplay
secs=${SOAK_SECS:-3600}
pps=${SOAK_PPS:-1M}
every=${SOAK_EVERY:-10}
. scripts/testbed.sh
tb_up >/dev/null
WORK=$(mktemp -d)
trap 'kill $SND $CNT 2>/dev/null || true; tb_down; rm -rf "$WORK"' EXIT
mkdir -p results
ip netns exec "$TB_NS_SRV" "$XR" count -i "$TB_SRV_IF" --udp --dport 9 --drop --listen :9120 \
	--duration $((secs + 60))s --idle 5s --json "$WORK/c.json" -q &
CNT=$!
sleep 1
ip netns exec "$TB_NS_GEN" "$XR" replay -i "$TB_GEN_IF" --pps "$pps" --duration "${secs}s" --listen :9121 \
	--json "$WORK/r.json" -q pcaps/udp-64.pcap &
SND=$!
get() { ip netns exec "$1" python3 -c 'import json, sys, urllib.request
d = json.load(urllib.request.urlopen(sys.argv[1], timeout=3)); print(" ".join(str(d.get(k, 0)) for k in sys.argv[2:]))' "$2" "${@:3}"; }
rss() { awk '/VmRSS/ {print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }
echo "t_s,sender_rss_kb,count_rss_kb,sent,failed,matched,sent_pps,matched_pps" >results/soak.csv
t0=$(date +%s.%N)
last_sent=0 last_matched=0 last_t=$t0
while kill -0 "$SND" 2>/dev/null; do
	sleep "$every"
	now=$(date +%s.%N)
	read -r sent failed < <(get "$TB_NS_GEN" http://127.0.0.1:9121/ sent failed 2>/dev/null || echo "0 0")
	read -r matched < <(get "$TB_NS_SRV" http://127.0.0.1:9120/ matched 2>/dev/null || echo 0)
	# rates over the interval between the two readings, in fractional seconds
	awk -v now="$now" -v t0="$t0" -v last="$last_t" -v s="$sent" -v ls="$last_sent" -v m="$matched" -v lm="$last_matched" \
		-v srss="$(rss "$SND")" -v crss="$(rss "$CNT")" -v f="$failed" \
		'BEGIN { dt = now - last; if (dt <= 0) exit; printf "%.1f,%d,%d,%d,%d,%d,%.0f,%.0f\n", now - t0, srss, crss, s, f, m, (s - ls) / dt, (m - lm) / dt }' \
		>>results/soak.csv
	last_sent=$sent last_matched=$matched last_t=$now
done
wait "$SND" || true
wait "$CNT" || true
python3 - "$WORK/r.json" "$WORK/c.json" results/soak.csv <<'PY'
import csv, json, statistics, sys
r, c = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
rows = [x for x in csv.DictReader(open(sys.argv[3])) if int(x["sent"]) > 0]
rate = [float(x["sent_pps"]) for x in rows[1:-1]] or [0]
n = max(1, len(rate) // 6)
first, last = statistics.median(rate[:n]), statistics.median(rate[-n:])
srss = [int(x["sender_rss_kb"]) for x in rows]
# the sampler reads the two ends a few ms apart: interval rates carry that jitter, the totals none
crss = [int(x["count_rss_kb"]) for x in rows]
print("soak: %d samples over %.0f s at %s pps asked; %.1f pps sent over the whole run"
      % (len(rows), r["duration_s"], r["target"].get("pps"), r["sent"] / r["duration_s"]))
print("  sender rate: median %.0f pps; first sixth %.0f, last sixth %.0f (drift %+.3f%%); min %d, max %d"
      % (statistics.median(rate), first, last, 100 * (last - first) / first if first else 0, min(rate), max(rate)))
print("  sender RSS %d -> %d KiB (max %d); counter RSS %d -> %d KiB (max %d)"
      % (srss[0], srss[-1], max(srss), crss[0], crss[-1], max(crss)))
print("  accounting: asked %d, sent %d, failed %d (%s), sent + failed == asked: %s; counted at the server %d (== sent: %s)"
      % (r["asked"], r["sent"], r["failed"], {k: v for k, v in r["failed_reasons"].items() if v},
         r["sent"] + r["failed"] == r["asked"], c["matched"], c["matched"] == r["sent"]))
PY
