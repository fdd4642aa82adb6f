#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs every test: the C unit tests (tests/unit) and the test-bed tests (tests/t_*.sh,
# one shell function test_* each, run in a subshell with its own test bed).
# Prints PASS/FAIL/SKIP per test and ends with "tests: N passed, N failed, N skipped".
#   tests/run.sh [PATTERN]     only tests whose name contains PATTERN
#   tests/run.sh 'P1 P2 ...'    test-bed tests whose name contains one of them (one run's set-up)
#   XR_KEEP=1 tests/run.sh ...  keeps the suite's folder (each test's log and work) after the run
#   XR_JOBS=N tests/run.sh      test-bed tests N at a time (default: 2, or 1 on one CPU), those in
#                               EXCLUSIVE alone
set -u
cd "$(dirname "$0")/.." || exit 2
TOP=$PWD
export TOP XR="$TOP/xdpreplay"
pattern=${1:-}
pass=0 fail=0 skip=0
failed_names=()

if [ "$(id -u)" -ne 0 ]; then
	exec sudo -E bash "$0" "$@"
fi

# the suite's folder: each test's work folder and log in it, the hostile captures, the probe
SUITE=$(mktemp -d /tmp/xdpreplay-tests.XXXXXX)
trap '[ -n "${XR_KEEP:-}" ] || rm -rf "$SUITE"' EXIT
python3 pcaps/mkpcap.py hostile "$SUITE/hostile" || { echo "cannot write the test captures" >&2; exit 2; }
# whether this host runs live frames, probed once for every test (lib.sh: live_frames)
export LIVE_PROBE="$SUITE/probe.json"
"$TOP/xdpreplay" probe --json "$LIVE_PROBE" >/dev/null 2>&1

# each test's time, for the slowest list at the end (record's 4th argument, or since t_start)
times=()
t_start=$SECONDS
record() { # name status detail [seconds]
	local took=${4:-$((SECONDS - t_start))}
	times+=("$took $1")
	case "$2" in
	PASS) pass=$((pass + 1)); echo "PASS $1 (${took} s)" ;;
	SKIP) skip=$((skip + 1)); echo "SKIP $1 ($3)" ;;
	*) fail=$((fail + 1)); failed_names+=("$1"); echo "FAIL $1${3:+: $3}" ;;
	esac
	t_start=$SECONDS
}

# C unit tests print "PASS name" / "FAIL name: why" lines themselves
if [ -z "$pattern" ] || [[ unit == *"$pattern"* ]]; then
	while IFS= read -r line; do
		case "$line" in
		PASS\ *) record "unit/${line#PASS }" PASS ;;
		FAIL\ *) n=${line#FAIL }; record "unit/${n%%:*}" FAIL "${n#*: }" ;;
		exit\ 0) ;;
		exit\ *) record "unit/exit_status" FAIL "tests/unit exited with ${line#exit }" ;;
		*) echo "  $line" ;;
		esac
	done < <(XR_HOSTILE="$SUITE/hostile" XR_PCAPS="$TOP/pcaps" ./tests/unit 2>&1; echo "exit $?")
fi

# every test-bed test as "NAME FILE FUNCTION", in file order
all_tests() {
	local file t name
	for file in tests/t_*.sh; do
		for t in $(grep -oE '^test_[a-z0-9_]+' "$file"); do
			name="${file#tests/t_}"
			echo "${name%.sh}/${t#test_} $file $t"
		done
	done
}
# in_list NAME "PREFIX...": NAME starts with one of the prefixes
in_list() {
	local p
	for p in $2; do [[ "$1" == "$p"* ]] && return 0; done
	return 1
}
san_found() { grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; }
# XR_JOBS=N: test-bed tests N at a time (each has its own bed and work folder), but those that
# judge the host's speed or take the whole host (EXCLUSIVE: CPU placement and shares, rates,
# timings, searches) alone. The default: two where there are two CPUs; 1: one after another.
JOBS=${XR_JOBS:-$(($(nproc) > 1 ? 2 : 1))}
EXCLUSIVE=${XR_EXCLUSIVE:-accounting/refusals accounting/backoff accounting/count_rate accounting/count_times replay/ search/ dns/dns_search mqtt/mqtt_broker_cpu mqtt/mqtt_msg_rate mqtt/mqtt_search mqtt/mqtt_calls_search mqtt/mqtt_pattern_search lorawan/lorawan_webhook_latency lorawan/lorawan_search tcp/tcp_request_rate tcp/tcp_search tcp/tcp_replay_sessions_search shard/mpi hostile/slow_and_idle install/}
# BACKGROUND: long and CPU-bound, but judging nothing of the host's speed: started first, beside
# the others and outside XR_JOBS's count, at the lowest CPU priority (nice 19), so that it fills
# what the others leave idle (the package's build: 73 s alone, with the host's two CPUs)
BACKGROUND=${XR_BACKGROUND:-package/}
pending=() background_dirs=''

# test_exec DIR FILE FUNCTION [VAR=VALUE...]: one test in a subshell in its work folder DIR (the
# suite's hostile captures linked in), VAR=VALUE exported; DIR.log, DIR.rc and DIR.took after it.
# Its stdin is /dev/null and the list of tests (fd 3) closed: mpiexec (hydra) forwards its stdin to
# rank 0, and once ate every test after the MPI search unseen when the list was the loop's stdin
test_exec() {
	local dir=$1 file=$2 func=$3 t0=$SECONDS
	shift 3
	mkdir -p "$dir" && ln -sfn "$SUITE/hostile" "$dir/hostile"
	(
		export WORK=$dir
		for kv in "$@"; do export "${kv?}"; done
		. tests/lib.sh
		. "$file"
		"$func"
	) </dev/null 3<&- >"$dir.log" 2>&1
	echo $? >"$dir.rc.tmp"
	echo $((SECONDS - t0)) >"$dir.took"
	mv "$dir.rc.tmp" "$dir.rc"
}

# test_record NAME DIR: the result of the test run in DIR. A sanitizer's finding fails it whatever its status.
test_record() {
	local name=$1 log=$2.log rc took
	rc=$(cat "$2.rc")
	took=$(cat "$2.took")
	if san_found "$log"; then
		record "$name" FAIL "a sanitizer found something" "$took"
		grep -m1 -B2 -A12 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" | sed 's/^/    | /'
		return
	fi
	case $rc in
	0) record "$name" PASS "" "$took" ;;
	249) record "$name" SKIP "$(tail -n 1 "$log")" "$took" ;;
	*) record "$name" FAIL "$(grep -m1 '^FAIL:' "$log" | cut -c7-)" "$took"; sed 's/^/    | /' "$log" | tail -n 25 ;;
	esac
}

# collect [all]: records the background tests that ended (all: waits for every one first)
collect() {
	local keep=() p
	[ "${1:-}" = all ] && wait
	for p in "${pending[@]}"; do
		if [ -f "${p#* }.rc" ]; then test_record "${p%% *}" "${p#* }"; else keep+=("$p"); fi
	done
	pending=("${keep[@]}")
}

# pool_running: the tests running that count against XR_JOBS (those not in BACKGROUND)
pool_running() {
	local p n=0
	for p in "${pending[@]}"; do [[ "$background_dirs" == *" ${p#* } "* ]] || n=$((n + 1)); done
	echo "$n"
}

# run_test STAGE NAME FILE FUNCTION [VAR=VALUE...]: one test, its result recorded as STAGE/NAME
# (STAGE empty for the main pass); in the background when XR_JOBS lets it
run_test() {
	local stage=$1 base=$2 file=$3 func=$4 dir name
	shift 4
	dir="$SUITE/${stage:+$stage-}$(echo "$base" | tr / _)"
	name="${stage:+$stage/}$base"
	if [ "$JOBS" -le 1 ] || in_list "$base" "$EXCLUSIVE"; then
		collect all
		test_exec "$dir" "$file" "$func" "$@"
		test_record "$name" "$dir"
		return
	fi
	if in_list "$base" "$BACKGROUND"; then
		niced test_exec "$dir" "$file" "$func" "$@" &
		pending+=("$name $dir")
		background_dirs+=" $dir "
		return
	fi
	while [ "$(pool_running)" -ge "$JOBS" ]; do
		wait -n
		collect
	done
	test_exec "$dir" "$file" "$func" "$@" &
	pending+=("$name $dir")
}

# wanted STAGE NAME: the pattern (if any) picks this test of this stage; in the main pass, any of
# several space-separated patterns does
wanted() {
	local p
	[ -z "$pattern" ] && return 0
	if [ -z "$1" ]; then
		for p in $pattern; do [[ "$2" == *"$p"* ]] && return 0; done
	fi
	[ -n "$1" ] && [[ "$pattern" == "$1/"* ]] && [[ "$1/$2" == *"$pattern"* ]]
}

# by_turns: all_tests, those in BACKGROUND first and those in EXCLUSIVE last: each of these waits
# for the tests running beside it to end, so scattered among the others every one of them would
# leave a CPU idle
by_turns() {
	local name file func alone=() rest=()
	while read -r name file func; do
		if in_list "$name" "$BACKGROUND"; then
			echo "$name $file $func"
		elif in_list "$name" "$EXCLUSIVE"; then
			alone+=("$name $file $func")
		else
			rest+=("$name $file $func")
		fi
	done < <(all_tests)
	printf '%s\n' "${rest[@]}" "${alone[@]}" | grep -v '^$'
}

# each stage's wall time, for the summary at the end ("stages: main 1200 s, vm 640 s, ...")
stages=() stage_t0=$SECONDS
stage_end() {
	stages+=("$1 $((SECONDS - stage_t0)) s")
	stage_t0=$SECONDS
}

# niced CMD...: CMD at the lowest CPU priority (run in the background: its own subshell)
niced() {
	renice -n 19 -p "$BASHPID" >/dev/null
	"$@"
}

# The sanitizer pass's unit tests and selftest: CPU-bound, judging nothing of the host's speed, so
# started now, beside the main pass at nice 19 (as BACKGROUND); recorded in their stage
# a sanitizer's finding exits 86, which no xdpreplay status means; leaks are findings too
ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1
san_wanted() {
	[ "${XR_SANITIZE:-1}" != 0 ] && [ -x "$TOP/xdpreplay-san" ] && [ -x "$TOP/tests/unit-san" ] &&
		{ [ -z "$pattern" ] || [[ san/ == *"$pattern"* ]] || [[ "$pattern" == san/* ]]; }
}
# san_part NAME CMD...: CMD's output in san_NAME.log, its status in .rc, its seconds in .took
san_part() {
	local t0=$SECONDS
	"${@:2}" >"$SUITE/san_$1.log" 2>&1
	echo $? >"$SUITE/san_$1.rc"
	echo $((SECONDS - t0)) >"$SUITE/san_$1.took"
}
# The fuzz targets (make fuzz-build), each for FUZZ_SECS (8 s here, from its committed corpus;
# `make fuzz` runs them long), CPU-bound too: started now at nice 19, recorded in their stage
fuzz_wanted() {
	[ "${XR_FUZZ:-1}" != 0 ] && ls .output/fuzz/fuzz_* >/dev/null 2>&1 &&
		{ [ -z "$pattern" ] || [[ fuzz/ == *"$pattern"* ]] || [[ "$pattern" == fuzz/* ]]; }
}
FUZZ_EARLY=
if fuzz_wanted; then
	FUZZ_SECS=${FUZZ_SECS:-8} FUZZ_OUT="$SUITE" niced bash tests/fuzz/run.sh >"$SUITE/fuzz.out" 2>&1 &
	FUZZ_EARLY=$!
fi
SAN_EARLY=
if san_wanted; then
	(
		export ASAN_OPTIONS UBSAN_OPTIONS XR_HOSTILE="$SUITE/hostile" XR_PCAPS="$TOP/pcaps"
		niced san_part unit ./tests/unit-san
		niced san_part selftest "$TOP/xdpreplay-san" selftest --cases 60
	) &
	SAN_EARLY=$!
fi

results_before=$((pass + fail + skip))
while read -r -u 3 name file func; do
	wanted "" "$name" && run_test "" "$name" "$file" "$func"
done 3< <(by_turns)
collect all
# every test of the main pass has its result, counted apart from the loop that ran them
asked=$(all_tests | while read -r name _; do wanted "" "$name" && echo; done | wc -l)
[ $((pass + fail + skip - results_before)) -eq "$asked" ] ||
	record suite/every_test_ran FAIL "$((pass + fail + skip - results_before)) results for $asked tests"

stage_end main

# The xsk engine's pass: where live frames work, the sending tests run again with the kernel engine
# left out (XDPREPLAY_ENGINE=xsk, which --engine auto obeys); where they do not, every test above
# already sent through xsk. XR_XSK_PASS=0 skips it.
XSK_TESTS=${XSK_TESTS:-accounting/ rewrite/ templates/ syn/ dns/ tcp/ mqtt/ lorawan/ search/ shard/ drops/}
if [ "${XR_XSK_PASS:-1}" != 0 ] && { [ -z "$pattern" ] || [[ "$pattern" == xsk/* ]]; } && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["checks"]["live_frames"]["ok"] else 1)' \
	"$LIVE_PROBE" 2>/dev/null; then
	while read -r -u 3 name file func; do
		in_list "$name" "$XSK_TESTS" && wanted xsk "$name" && run_test xsk "$name" "$file" "$func" XDPREPLAY_ENGINE=xsk
	done 3< <(by_turns)
	collect all
fi

stage_end xsk

# The VM pass (tests/vm/): the smoke pass (tests/t_kernels.sh) in a VM of each of Debian's kernels,
# and in 6.12's the kernel engine's own tests (VM_TESTS), which this host may refuse; each result
# recorded as vm-KERNEL/NAME (there engines_send_the_same_frames holds the kernel engine against xsk,
# byte for byte). XR_VM=0 skips it, XR_VM_KERNELS chooses the kernels.
VM_TESTS=${VM_TESTS:-accounting/refusals_from accounting/backoff_skips replay/threads_off_pinned replay/threads_beside_pinned rewrite/engines_send_the_same_frames}
if [ "${XR_VM:-1}" != 0 ] && [ -z "${XR_IN_VM:-}" ] && { [ -z "$pattern" ] || [[ "$pattern" == vm* ]]; }; then
	vm_args=()
	for t in $VM_TESTS; do vm_args+=(-T "$t"); done
	while IFS= read -r line; do
		case "$line" in
		PASS\ *) n=${line#PASS }; s=${n##*(}; record "${n%% (*}" PASS "" "${s%% s)}" ;;
		SKIP\ *) n=${line#SKIP }; s=${n#* (}; record "${n%% (*}" SKIP "${s%)}" 0 ;;
		FAIL\ *) n=${line#FAIL }; record "${n%%:*}" FAIL "${n#*: }" 0 ;;
		*) echo "$line" ;;
		esac
	done < <(bash tests/vm/matrix.sh -o "$SUITE/vm" "${vm_args[@]}" ${XR_VM_KERNELS:-} 2>&1)
fi

stage_end vm

# The same code under ASan and UBSan (float casts too): the unit tests, the selftest, and the
# test-bed tests that feed it hostile input, its faults, and one test per protocol (SAN_TESTS), with
# xdpreplay-san as $XR. Built by `make sanitize` (make test does it); XR_SANITIZE=0 skips this stage.
SAN_TESTS=${SAN_TESTS:-cli/ pcap/ hostile/ faults/ count/filters probe/veth_ready accounting/sigint_counts_the_rest accounting/bad_requests_refused_before_sending rewrite/bad_specs_refused replay/xsk_engine_exact templates/icmp_every_echo_answered syn/syn_every_one_answered dns/dns_bad_input dns/dns_every_query_answered drops/drops_no_socket tcp/tcp_bad_input tcp/tcp_every_session_completed tcp/tcp_replay_sessions_bad_input mqtt/mqtt_bad_input mqtt/mqtt_qos1_every_message redis/redis_bad_input redis/redis_ping_closed_loop lorawan/lorawan_bad_input lorawan/lorawan_otaa_join_storm lorawan/lorawan_webhook_counts_per_device search/search_bad_input shard/shard_bad_input}
if san_wanted; then
	export ASAN_OPTIONS UBSAN_OPTIONS
	wait "$SAN_EARLY" 2>/dev/null
	for part in unit selftest; do
		log="$SUITE/san_$part.log" rc=$(cat "$SUITE/san_$part.rc" 2>/dev/null || echo none)
		if [ "$rc" = 0 ] && ! san_found "$log"; then
			record "san/$part" PASS "" "$(cat "$SUITE/san_$part.took")"
		else
			record "san/$part" FAIL "exit $rc"
			tail -n 20 "$log" | sed 's/^/    | /'
		fi
	done
	while read -r -u 3 name file func; do
		in_list "$name" "$SAN_TESTS" || continue
		[[ "$pattern" == san/* ]] && ! wanted san "$name" && continue
		run_test san "$name" "$file" "$func" XR="$TOP/xdpreplay-san"
	done 3< <(by_turns)
	collect all
fi

stage_end san

# The fuzz targets' results (started with the main pass).
if fuzz_wanted; then
	wait "$FUZZ_EARLY" 2>/dev/null
	while IFS= read -r line; do
		case "$line" in
		PASS\ *) n=${line#PASS }; record "${n%%:*}" PASS; echo "    ${n#*: }" ;;
		FAIL\ *) n=${line#FAIL }; record "${n%% *}" FAIL "${n#* }" ;;
		fuzz:*) ;;
		*) echo "$line" ;;
		esac
	done <"$SUITE/fuzz.out"
fi

stage_end fuzz

# nothing may be left behind: namespaces of ours, XDP programs in the root namespace
if [ -z "$pattern" ]; then
	left=$(ip netns list 2>/dev/null | grep -E '^xr[0-9]' | head -n 3)
	xdp=$(ip -o link show 2>/dev/null | grep -E ' xdp|prog/xdp' | head -n 3)
	if [ -z "$left" ] && [ -z "$xdp" ]; then
		record "cleanup/nothing_left_behind" PASS
	else
		record "cleanup/nothing_left_behind" FAIL "left: ${left} ${xdp}"
	fi
fi

[ ${#times[@]} -gt 0 ] && echo "slowest:" &&
	printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | awk '{ printf "  %5d s  %s\n", $1, $2 }'
echo "stages: $(printf '%s, ' "${stages[@]}" | sed 's/, $//')"
echo "all tests: $SECONDS s"
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
