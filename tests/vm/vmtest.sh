#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Runs a command of this checkout inside a VM booted from Debian's own kernel, as the kernel's
# BPF selftests (vmtest.sh) and libbpf's CI do, and exits with the command's status.
#
#   tests/vm/vmtest.sh [-k KERNEL] [-o DIR] [-t SECONDS] [-m MEM] -- COMMAND...
#     -k  5.10, 6.1, 6.12 or newest (Debian's bullseye, bookworm, trixie, sid; default 6.12)
#     -o  where the guest's output goes (out.log, rc, console.log); default a temporary folder
#     -t  the whole run's limit, boot included (default 1800); past it: exit 124
#     -m  guest memory (default 4G)
#   e.g. tests/vm/vmtest.sh -k 6.1 -- tests/run.sh count/    make vmtest KERNEL=6.1 TESTS=count/
#   XR_VM_ACCEL=kvm|tcg chooses; a guest not up within XR_VM_BOOT_LIMIT s (120) is stopped, and a
#   KVM guest then booted again under emulation
#
# The guest's root is this host's / (9p, read-only) under a tmpfs overlay, so the guest runs the
# binary, the tools and the tests of this checkout as built here; it has no network device, and
# its traffic stays on the veth pairs the tests make inside it. KVM where /dev/kvm works, software
# emulation (TCG) otherwise: emulation cannot keep time, so tests inside (lib.sh: in_vm) judge
# books, bytes and refusals, never rates. Exit: the command's status; 3 the VM did not run it.
set -uo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
TOP=$(cd "$HERE/../.." && pwd)
kernel=6.12 out= limit=1800 mem=4G

usage() { sed -n '3,13p' "$0" | sed 's/^# \{0,1\}//' >&2; exit 2; }

while getopts k:o:t:m:h opt; do
	case $opt in
	k) kernel=$OPTARG ;;
	o) out=$OPTARG ;;
	t) limit=$OPTARG ;;
	m) mem=$OPTARG ;;
	*) usage ;;
	esac
done
shift $((OPTIND - 1))
[ "${1:-}" = -- ] && shift
[ $# -gt 0 ] || usage
[[ "$limit" =~ ^[0-9]+$ ]] || { echo "vm: -t takes whole seconds, not '$limit'" >&2; exit 2; }
[ "$(id -u)" -eq 0 ] || { echo "vm: run as root (the guest's tests load BPF)" >&2; exit 2; }
command -v qemu-system-x86_64 >/dev/null || { echo "vm: no qemu-system-x86_64 (scripts/deps.sh installs it)" >&2; exit 3; }

# accel: KVM where a guest can use it (the CPU shows vmx or svm), TCG otherwise; XR_VM_ACCEL chooses
accel() {
	if [ -n "${XR_VM_ACCEL:-}" ]; then
		echo "$XR_VM_ACCEL"
	elif [ -w /dev/kvm ] && grep -qwE 'vmx|svm' /proc/cpuinfo; then
		echo kvm
	else
		echo tcg
	fi
}

kdir=$("$HERE/kernel.sh" "$kernel") || exit 3
initrd=$("$HERE/initramfs.sh" "$kdir") || exit 3
# shellcheck disable=SC1091
kver=$(. "$kdir/kernel.env" && echo "$KVER")
[ -n "$out" ] || { out=$(mktemp -d /tmp/xdpreplay-vm.XXXXXX); }
mkdir -p "$out"
out=$(cd "$out" && pwd)
rm -f "$out/rc" "$out/out.log" "$out/console.log"
printf 'KDIR=%q\nKVER=%q\nTOP=%q\n' "$kdir" "$kver" "$TOP" >"$out/env"
printf '%q ' "$@" >"$out/cmd"
echo >>"$out/cmd"

# boot ACCEL: the guest under kvm or tcg, its output followed; qemu's status. A guest that has not
# come up within XR_VM_BOOT_LIMIT seconds is stopped (status 125): a KVM guest on this kind of
# host once hung before its kernel printed a line.
boot() {
	local acc=$1 opts rc watch
	shift
	case $acc in
	kvm) opts=(-accel kvm -cpu host) ;;
	*) opts=(-accel tcg,thread=multi -cpu max) ;;
	esac
	: >"$out/out.log"
	rm -f "$out/hung"
	echo "vm: Debian $kernel ($kver), $acc, $(nproc) CPUs, $mem: $*" >&2
	timeout "$limit" qemu-system-x86_64 "${opts[@]}" -smp "$(nproc)" -m "$mem" \
		-kernel "$kdir/vmlinuz" -initrd "$initrd" \
		-append "console=ttyS0 quiet panic=-1 xr.guest=$HERE/guest.sh" \
		-no-reboot -display none -monitor none -serial "file:$out/console.log" -nic none \
		-virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
		-virtfs "local,path=$out,mount_tag=vmout,security_model=none,multidevs=remap" &
	qemu=$!
	trap 'kill "$qemu" 2>/dev/null' EXIT INT TERM
	(
		end=$((SECONDS + ${XR_VM_BOOT_LIMIT:-120}))
		until grep -q '^vm: Linux' "$out/out.log"; do
			[ $SECONDS -lt $end ] || { touch "$out/hung"; kill "$qemu"; exit 0; }
			sleep 1
		done
	) >/dev/null 2>&1 &
	watch=$!
	tail -n +1 -f --pid="$qemu" "$out/out.log" &
	wait "$qemu"
	rc=$?
	kill "$watch" 2>/dev/null
	wait 2>/dev/null
	trap - EXIT INT TERM
	[ -f "$out/hung" ] && return 125
	return $rc
}

accel=$(accel)
boot "$accel" "$@"
rc=$?
if [ $rc -eq 125 ] && [ "$accel" = kvm ]; then
	echo "vm: the KVM guest did not come up within ${XR_VM_BOOT_LIMIT:-120} s: software emulation instead" >&2
	boot tcg "$@"
	rc=$?
fi
if [ $rc -eq 125 ]; then
	echo "vm: the guest did not come up within ${XR_VM_BOOT_LIMIT:-120} s; its console:" >&2
	tail -n 20 "$out/console.log" >&2
	exit 3
fi
if [ $rc -eq 124 ]; then
	echo "vm: stopped after $limit s (-t); the guest's console: $out/console.log" >&2
	exit 124
fi
if [ ! -f "$out/rc" ]; then
	echo "vm: the guest ran nothing to its end; its console:" >&2
	tail -n 20 "$out/console.log" >&2
	exit 3
fi
exit "$(cat "$out/rc")"
