#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Builds the initramfs for a kernel folder (tests/vm/kernel.sh) and prints its path:
#   tests/vm/initramfs.sh KERNEL_DIR
# busybox-static, tests/vm/init, and the modules the guest needs before it can mount its root
# (virtio PCI, 9p over virtio, overlayfs) with what they depend on, in the order modprobe would
# load them, decompressed (busybox's insmod reads plain .ko). Those built into the kernel are
# simply not there. Rebuilt when the init or the kernel changes.
set -euo pipefail

HERE=$(cd "$(dirname "$0")" && pwd)
ROOT_MODULES="virtio_pci 9pnet_virtio 9p overlay"

# load_order MODDIR MODULE...: the modules' files (relative), dependencies first, each once
load_order() {
	local moddir=$1 m line deps seen=" "
	shift
	for m in "$@"; do
		line=$(grep -E "/${m//_/[_-]}\.ko(\.[a-z]+)?:" "$moddir/modules.dep" || true)
		[ -n "$line" ] || continue # built in
		# modules.dep lists a module's dependencies, the deepest last: load them last to first
		deps=$(echo "${line#*:}" | tr ' ' '\n' | sed '/^$/d' | tac)
		for f in $deps "${line%%:*}"; do
			[[ "$seen" == *" $f "* ]] && continue
			seen+="$f "
			echo "$f"
		done
	done
}

decompress() { # SRC DST
	case "$1" in
	*.xz) xz -dc "$1" >"$2" ;;
	*.zst) zstd -qdc "$1" >"$2" ;;
	*.gz) gzip -dc "$1" >"$2" ;;
	*) cp "$1" "$2" ;;
	esac
}

main() {
	local kdir=$1 kver out tmp f i=0 sum
	# shellcheck disable=SC1091
	kver=$(. "$kdir/kernel.env" && echo "$KVER")
	sum=$(cat "$HERE/init" "$0" /bin/busybox | md5sum | cut -c1-12)
	out="$kdir/initramfs-$sum.cpio.gz"
	[ -f "$out" ] && { echo "$out"; return 0; }
	command -v cpio >/dev/null && [ -x /bin/busybox ] ||
		{ echo "vm: the initramfs needs cpio and busybox-static (scripts/deps.sh)" >&2; return 1; }
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' RETURN
	mkdir -p "$tmp"/{bin,dev,proc,sys,mnt/lower,mnt/upper,mnt/root,modules}
	cp /bin/busybox "$tmp/bin/busybox"
	ln -s busybox "$tmp/bin/sh"
	cp "$HERE/init" "$tmp/init"
	chmod 0755 "$tmp/init"
	for f in $(load_order "$kdir/lib/modules/$kver" $ROOT_MODULES); do
		i=$((i + 1))
		decompress "$kdir/lib/modules/$kver/$f" "$tmp/modules/$(printf '%02d' $i)-$(basename "${f%.ko*}").ko"
	done
	(cd "$tmp" && find . | cpio -o -H newc --quiet | gzip -1) >"$out.tmp"
	mv "$out.tmp" "$out"
	echo "$out"
}

main "$@"
