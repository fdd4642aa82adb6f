#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Benchmark (not a test): the latency limit a search finds for a LoRaWAN network server whose
# application side takes 250 uplinks/s, with the webhook's latency from departure as its goal
# (p99 within 100 ms over 4 s trials): 250 x (1 + 0.1 / (0.99 x 4)) = 256 uplinks/s. Target: each
# round's limit within 5% of it (244-269). It runs tests/t_lorawan.sh's
# lorawan_webhook_latency_search with XR_BENCH=1 (its long trials and this check), BENCH_REPS
# times, and prints each round's limit and the median.
#   BENCH_REPS=3 scripts/bench-webhook-search.sh
set -u
cd "$(dirname "$0")/.." || exit 2
REPS=${BENCH_REPS:-3}
limits=() pass=0
found=$(mktemp)
trap 'rm -f "$found"' EXIT
for r in $(seq "$REPS"); do
	: >"$found"
	out=$(XR_BENCH=1 XR_BENCH_OUT=$found XR_FUZZ=0 XR_SANITIZE=0 XR_JOBS=1 bash tests/run.sh \
		lorawan/lorawan_webhook_latency_search 2>&1)
	lim=$(tail -n 1 "$found")
	grep -q "^PASS lorawan/lorawan_webhook_latency_search" <<<"$out" && pass=$((pass + 1))
	limits+=("${lim:-none}")
	echo "round $r: the latency limit found: ${lim:-none} uplinks/s (target 244-269)"
done
printf '%s\n' "${limits[@]}" | grep -E '^[0-9.]+$' | sort -n | awk '{ v[NR] = $1 } END {
	if (NR) printf "median %s uplinks/s over %d rounds\n", v[int((NR + 1) / 2)], NR }'
echo "$pass of $REPS rounds within the target"
[ "$pass" -eq "$REPS" ]
