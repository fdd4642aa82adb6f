#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs every fuzz target (built by `make fuzz-build`) for FUZZ_SECS seconds, FUZZ_JOBS at once, on its corpus in
# tests/fuzz/corpus/NAME, seeds in tests/fuzz/seeds/NAME; prints the executions of each and ends
# with "fuzz: N passed, N failed". A crash leaves its input in $FUZZ_OUT (default /tmp).
set -u
cd "$(dirname "$0")/../.." || exit 2
secs=${FUZZ_SECS:-60}
out=${FUZZ_OUT:-/tmp}
pass=0 fail=0
# MPICH's UCX catches SIGILL/SIGSEGV first and exits without libFuzzer's crash input
export UCX_HANDLE_ERRORS=none
jobs=${FUZZ_JOBS:-$(nproc)}
results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT

# fuzz_one NAME: one target for $secs, its PASS or FAIL lines into $results/NAME
fuzz_one() {
	local name=$1 corpus=tests/fuzz/corpus/$1 work log rc execs seeds=()
	mkdir -p "$corpus"
	work=$(mktemp -d)
	# a copy: the committed corpus changes only when someone merges new inputs on purpose
	cp -r "$corpus/." "$work/" 2>/dev/null
	[ -d "tests/fuzz/seeds/$name" ] && seeds=("tests/fuzz/seeds/$name")
	log=$(mktemp)
	".output/fuzz/fuzz_$name" -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -max_len=65536 \
		-print_final_stats=1 -artifact_prefix="$out/fuzz-$name-" "$work" "${seeds[@]}" >"$log" 2>&1
	rc=$?
	execs=$(grep -m1 -oE 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -oE '[0-9]+$')
	if [ $rc -eq 0 ]; then
		echo "PASS fuzz/$name: ${execs:-?} executions in ${secs} s, corpus $(ls "$work" | wc -l) inputs"
	else
		echo "FAIL fuzz/$name (exit $rc):"
		grep -E 'ERROR|SUMMARY|artifact|Test unit written' "$log" | head -n 8 | sed 's/^/    | /'
	fi >"$results/$name"
	rm -rf "$work" "$log"
}

# the targets FUZZ_JOBS at a time (default: one per CPU; each fuzzer is one process), the results
# printed in name order
names=()
for bin in .output/fuzz/fuzz_*; do
	name=$(basename "$bin")
	names+=("${name#fuzz_}")
	while [ "$(jobs -rp | wc -l)" -ge "$jobs" ]; do wait -n; done
	fuzz_one "${name#fuzz_}" &
done
wait
for name in "${names[@]}"; do
	if [ -s "$results/$name" ]; then cat "$results/$name"; else echo "FAIL fuzz/$name (no result)"; fi
	if grep -q '^PASS' "$results/$name" 2>/dev/null; then pass=$((pass + 1)); else fail=$((fail + 1)); fi
done
echo "fuzz: $pass passed, $fail failed"
[ "$fail" -eq 0 ]
