#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The kernel matrix: boots each of Debian's kernels (tests/vm/vmtest.sh), runs the smoke pass
# (tests/t_kernels.sh: every command on each engine, exact books) and any further tests inside,
# and writes what happened per kernel, command and engine.
#
#   tests/vm/matrix.sh [-o DIR] [-d DOC] [-T TESTS] [KERNEL...]
#     KERNEL  5.10 6.1 6.12 newest (the default: all four)
#     -o      results: DIR/KERNEL/ (out.log, matrix.tsv), DIR/matrix.tsv (all); default results/vm
#     -d      write the matrix as Markdown to DOC too (docs/kernels.md)
#     -T      tests/run.sh patterns to run after the smoke pass, in the VM of 6.12 (e.g. accounting/)
# Exit 0 when every kernel's tests passed; 1 otherwise (each kernel runs whatever came before).
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
out=$TOP/results/vm doc= more=()

while getopts o:d:T:h opt; do
	case $opt in
	o) out=$OPTARG ;;
	d) doc=$OPTARG ;;
	T) more+=("$OPTARG") ;;
	*) sed -n '6,12p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
kernels=("$@")
[ ${#kernels[@]} -gt 0 ] || kernels=(5.10 6.1 6.12 newest)
mkdir -p "$out"
: >"$out/matrix.tsv"
status=0 summary=()

for k in "${kernels[@]}"; do
	dir=$out/$k
	rm -rf "$dir"
	mkdir -p "$dir"
	t0=$SECONDS
	# the smoke pass, then (on 6.12) the further patterns, in one run of tests/run.sh; the smoke
	# tests three at a time (XR_VM_JOBS): two leave a guest's vCPUs idle while tests wait
	cmd="rc=0; XR_MATRIX=/vmout/matrix.tsv XR_JOBS=${XR_VM_JOBS:-3} bash tests/run.sh kernels/ || rc=1"
	if [ "$k" = 6.12 ]; then
		[ ${#more[@]} -eq 0 ] || cmd+="; bash tests/run.sh $(printf '%q' "${more[*]}") || rc=1"
	fi
	cmd+="; exit \$rc"
	# each test's line named after its kernel (PASS vm-6.1/kernels/replay_xsk (8 s)), given once the
	# pass is over: a guest whose kernel panicked is booted once more, and only that pass counts.
	# Under emulation (TCG, a host thread per vCPU) a vCPU has run the XDP dispatcher's code while
	# another patched it (7.2.13, 1 boot in 5: "Oops: int3" in bpf_dispatcher_xdp_func): the
	# emulator's hazard, not the code under test, and said so in the output
	for try in 1 2; do
		rm -f "$dir/matrix.tsv"
		"$HERE/vmtest.sh" -k "$k" -o "$dir" -t "${XR_VM_LIMIT:-2400}" -- bash -c "$cmd" 2>&1 |
			grep -E '^(PASS|FAIL|SKIP|vm:)' | sed -E "s,^(PASS|FAIL|SKIP) ,\\1 vm-$k/," >"$dir/lines"
		rc=${PIPESTATUS[0]}
		[ $try = 1 ] && [ $rc -gt 1 ] && grep -q "Kernel panic" "$dir/console.log" || break
		echo "vm: $k: the guest's kernel panicked ($(grep -m1 -E 'Oops|BUG:|Kernel panic' "$dir/console.log" |
			sed 's/^\[[ 0-9.]*\] //'), $(grep -m1 -oE 'RIP: [^ ]+ [^ ]+' "$dir/console.log")): booted once more"
		cp "$dir/console.log" "$dir/console-panic.log"
	done
	cat "$dir/lines"
	[ $rc -eq 0 ] || status=1
	# 1: tests failed, and said so above; anything else: the VM did not run them to their end
	[ $rc -le 1 ] || echo "FAIL vm-$k/run: exit $rc (tests/vm/vmtest.sh; $dir/console.log)"
	[ -f "$dir/matrix.tsv" ] && cat "$dir/matrix.tsv" >>"$out/matrix.tsv"
	summary+=("$k: exit $rc, $((SECONDS - t0)) s, $(grep -h '^tests:' "$dir/out.log" | tr '\n' ' ')")
done
printf 'vm: %s\n' "${summary[@]}"
if [ -n "$doc" ]; then
	python3 "$HERE/matrix_doc.py" "$out/matrix.tsv" "$doc" || status=1
fi
exit $status
