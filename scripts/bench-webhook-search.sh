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
. scripts/bench_rounds.sh
bench_test_rounds lorawan/lorawan_webhook_latency_search "the latency limit found" uplinks/s "244-269"
