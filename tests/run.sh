#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs every test: the C unit tests (tests/unit) and the test-bed tests (tests/t_*.sh,
# one shell function test_* each, run in a subshell with its own test bed).
# Prints PASS/FAIL/SKIP per test and ends with "tests: N passed, N failed, N skipped".
#   tests/run.sh [PATTERN]     only tests whose name contains PATTERN
#   XR_KEEP=1 tests/run.sh ...  keeps the work directory (each test's log) after the run
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

WORK=$(mktemp -d /tmp/xdpreplay-tests.XXXXXX)
export WORK
trap '[ -n "${XR_KEEP:-}" ] || rm -rf "$WORK"' EXIT
python3 pcaps/mkpcap.py hostile "$WORK/hostile" || { echo "cannot write the test captures" >&2; exit 2; }

# each test's time, for the slowest list at the end (set before a test: t_start=$SECONDS)
times=()
t_start=$SECONDS
record() { # name status detail
	local took=$((SECONDS - t_start))
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
	done < <(XR_HOSTILE="$WORK/hostile" XR_PCAPS="$TOP/pcaps" ./tests/unit 2>&1; echo "exit $?")
fi

for file in tests/t_*.sh; do
	for t in $(grep -oE '^test_[a-z0-9_]+' "$file"); do
		name="${file#tests/t_}"
		name="${name%.sh}/${t#test_}"
		[ -n "$pattern" ] && [[ "$name" != *"$pattern"* ]] && continue
		log="$WORK/$(echo "$name" | tr / _).log"
		(
			. tests/lib.sh
			. "$file"
			"$t"
		) >"$log" 2>&1
		rc=$?
		case $rc in
		0) record "$name" PASS ;;
		249) record "$name" SKIP "$(tail -n 1 "$log")" ;;
		*) record "$name" FAIL "$(grep -m1 '^FAIL:' "$log" | cut -c7-)"
		   sed 's/^/    | /' "$log" | tail -n 25 ;;
		esac
	done
done

# The xsk engine's pass: where live frames work, the sending tests run again with the kernel engine
# left out (XDPREPLAY_ENGINE=xsk, which --engine auto obeys); where they do not, every test above
# already sent through xsk. XR_XSK_PASS=0 skips it.
XSK_TESTS=${XSK_TESTS:-accounting/ rewrite/ templates/ syn/ dns/ tcp/ mqtt/ lorawan/ search/ shard/ drops/}
"$TOP/xdpreplay" probe --json "$WORK/probe.json" >/dev/null 2>&1
if [ "${XR_XSK_PASS:-1}" != 0 ] && python3 -c 'import json,sys; sys.exit(0 if json.load(open(sys.argv[1]))["checks"]["live_frames"]["ok"] else 1)' \
	"$WORK/probe.json" 2>/dev/null && { [ -z "$pattern" ] || [[ "$pattern" == xsk/* ]]; }; then
	for file in tests/t_*.sh; do
		for t in $(grep -oE '^test_[a-z0-9_]+' "$file"); do
			name="${file#tests/t_}"
			name="${name%.sh}/${t#test_}"
			want=0
			for p in $XSK_TESTS; do [[ "$name" == "$p"* ]] && want=1; done
			[ $want = 1 ] || continue
			[[ "$pattern" == xsk/* ]] && [[ "xsk/$name" != *"${pattern}"* ]] && continue
			log="$WORK/xsk_$(echo "$name" | tr / _).log"
			( . tests/lib.sh; . "$file"; export XDPREPLAY_ENGINE=xsk; "$t" ) >"$log" 2>&1
			rc=$?
			case $rc in
			0) record "xsk/$name" PASS ;;
			249) record "xsk/$name" SKIP "$(tail -n 1 "$log")" ;;
			*) record "xsk/$name" FAIL "$(grep -m1 '^FAIL:' "$log" | cut -c7-)"; sed 's/^/    | /' "$log" | tail -n 15 ;;
			esac
		done
	done
fi

# The same code under ASan and UBSan (float casts too): the unit tests, the selftest, and the
# test-bed tests that feed it hostile input, its faults, and one test per protocol (SAN_TESTS), with
# xdpreplay-san as $XR. Built by `make sanitize` (make test does it); XR_SANITIZE=0 skips this stage.
SAN_TESTS=${SAN_TESTS:-cli/ pcap/ hostile/ faults/ count/filters probe/veth_ready accounting/sigint_counts_the_rest accounting/bad_requests_refused_before_sending rewrite/bad_specs_refused replay/xsk_engine_exact templates/icmp_every_echo_answered syn/syn_every_one_answered dns/dns_bad_input dns/dns_every_query_answered drops/drops_no_socket tcp/tcp_bad_input tcp/tcp_every_session_completed tcp/tcp_replay_sessions_bad_input mqtt/mqtt_bad_input mqtt/mqtt_qos1_every_message lorawan/lorawan_bad_input lorawan/lorawan_otaa_join_storm lorawan/lorawan_webhook_counts_per_device search/search_bad_input shard/shard_bad_input}
if [ "${XR_SANITIZE:-1}" != 0 ] && [ -x "$TOP/xdpreplay-san" ] && [ -x "$TOP/tests/unit-san" ] &&
	{ [ -z "$pattern" ] || [[ san/ == *"$pattern"* ]] || [[ "$pattern" == san/* ]]; }; then
	# a sanitizer's finding exits 86, which no xdpreplay status means; leaks are findings too
	export ASAN_OPTIONS=exitcode=86:detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=exitcode=86:print_stacktrace=1
	san_found() { grep -qE 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$1"; }
	log="$WORK/san_unit.log"
	XR_HOSTILE="$WORK/hostile" XR_PCAPS="$TOP/pcaps" ./tests/unit-san >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! san_found "$log"; then record san/unit PASS; else record san/unit FAIL "exit $rc"; tail -n 20 "$log" | sed 's/^/    | /'; fi
	log="$WORK/san_selftest.log"
	"$TOP/xdpreplay-san" selftest --cases 60 >"$log" 2>&1
	rc=$?
	if [ $rc -eq 0 ] && ! san_found "$log"; then record san/selftest PASS; else record san/selftest FAIL "exit $rc"; tail -n 20 "$log" | sed 's/^/    | /'; fi
	for file in tests/t_*.sh; do
		for t in $(grep -oE '^test_[a-z0-9_]+' "$file"); do
			name="${file#tests/t_}"
			name="${name%.sh}/${t#test_}"
			want=0
			for p in $SAN_TESTS; do [[ "$name" == "$p"* ]] && want=1; done
			[ $want = 1 ] || continue
			[[ "$pattern" == san/* ]] && [[ "san/$name" != *"${pattern}"* ]] && continue
			log="$WORK/san_$(echo "$name" | tr / _).log"
			( . tests/lib.sh; . "$file"; XR="$TOP/xdpreplay-san" "$t" ) >"$log" 2>&1
			rc=$?
			if san_found "$log"; then
				record "san/$name" FAIL "a sanitizer found something"
				grep -m1 -B2 -A12 -E 'ERROR: (Address|Leak)Sanitizer|runtime error:' "$log" | sed 's/^/    | /'
			else
				case $rc in
				0) record "san/$name" PASS ;;
				249) record "san/$name" SKIP "$(tail -n 1 "$log")" ;;
				*) record "san/$name" FAIL "$(grep -m1 '^FAIL:' "$log" | cut -c7-)"; sed 's/^/    | /' "$log" | tail -n 15 ;;
				esac
			fi
		done
	done
fi

# The fuzz targets (make fuzz-build), each for FUZZ_SECS (20 s here; `make fuzz` runs them long).
if [ "${XR_FUZZ:-1}" != 0 ] && ls .output/fuzz/fuzz_* >/dev/null 2>&1 &&
	{ [ -z "$pattern" ] || [[ fuzz/ == *"$pattern"* ]] || [[ "$pattern" == fuzz/* ]]; }; then
	while IFS= read -r line; do
		case "$line" in
		PASS\ *) n=${line#PASS }; record "${n%%:*}" PASS; echo "    ${n#*: }" ;;
		FAIL\ *) n=${line#FAIL }; record "${n%% *}" FAIL "${n#* }" ;;
		fuzz:*) ;;
		*) echo "$line" ;;
		esac
	done < <(FUZZ_SECS=${FUZZ_SECS:-20} FUZZ_OUT="$WORK" bash tests/fuzz/run.sh 2>&1)
fi

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

echo "slowest:"
printf '%s\n' "${times[@]}" | sort -rn | head -n 10 | awk '{ printf "  %5d s  %s\n", $1, $2 }'
echo "all tests: $SECONDS s"
[ ${#failed_names[@]} -gt 0 ] && echo "failed: ${failed_names[*]}"
echo "tests: $pass passed, $fail failed, $skip skipped"
[ "$fail" -eq 0 ]
