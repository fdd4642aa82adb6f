# SPDX-License-Identifier: GPL-2.0
# Sourced by the benchmarks that run a test of the suite with XR_BENCH=1 (its long form and the
# target it checks then), BENCH_REPS times: bench_test_rounds TEST WHAT UNIT TARGET runs
# tests/run.sh TEST each round, prints the figure the test wrote to XR_BENCH_OUT, the median and
# how many rounds met the target; its exit status 0 when all did.
bench_test_rounds() {
	local test=$1 what=$2 unit=$3 target=$4 reps=${BENCH_REPS:-3} found out v pass=0 r
	local figures=()
	found=$(mktemp)
	for r in $(seq "$reps"); do
		: >"$found"
		out=$(XR_BENCH=1 XR_BENCH_OUT=$found XR_FUZZ=0 XR_SANITIZE=0 XR_JOBS=1 bash tests/run.sh \
			"$test" 2>&1)
		v=$(tail -n 1 "$found")
		grep -q "^PASS $test" <<<"$out" && pass=$((pass + 1))
		figures+=("${v:-none}")
		echo "round $r: $what: ${v:-none} $unit (target $target)"
	done
	rm -f "$found"
	printf '%s\n' "${figures[@]}" | grep -E '^[0-9.]+$' | sort -n | awk -v u="$unit" '{ v[NR] = $1 }
		END { if (NR) printf "median %s %s over %d rounds\n", v[int((NR + 1) / 2)], u, NR }'
	echo "$pass of $reps rounds within the target"
	[ "$pass" -eq "$reps" ]
}
