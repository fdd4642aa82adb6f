#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# Fetches Debian's own kernel for a release into the VM cache and prints its folder.
#   tests/vm/kernel.sh 5.10|6.1|6.12|newest     (or a suite: bullseye, bookworm, trixie, sid)
# The folder holds vmlinuz, lib/modules/KVER (depmod run) and kernel.env (KVER, VERSION, SUITE).
# apt runs with a private sources list, lists and cache under the VM cache (XR_VM_CACHE, default
# /var/cache/xdpreplay-vm): the system's own sources and state are never touched. The mirror is
# the one the system's sources name. A kernel fetched once is reused until Debian publishes a
# newer one for that suite (the lists are refreshed once a day).
set -euo pipefail

CACHE=${XR_VM_CACHE:-/var/cache/xdpreplay-vm}

suite_of() {
	case "$1" in
	5.10 | bullseye) echo bullseye ;;
	6.1 | bookworm) echo bookworm ;;
	6.12 | trixie) echo trixie ;;
	newest | sid | unstable) echo sid ;;
	*) echo "vm: no Debian kernel named '$1' (5.10, 6.1, 6.12 or newest)" >&2; return 2 ;;
	esac
}

# the mirror of the system's own sources (deb822 or one-line), Debian's main archive otherwise
mirror() {
	local m
	m=$(grep -hoE 'https?://[^ ]+/debian/?( |$)' /etc/apt/sources.list.d/*.sources /etc/apt/sources.list \
		2>/dev/null | grep -v security | head -n 1 | tr -d ' ')
	echo "${m:-http://deb.debian.org/debian}"
}

APT_DIR="$CACHE/apt"
apt_opts() {
	echo -o "Dir::Etc::SourceList=$APT_DIR/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o "Dir::State::Lists=$APT_DIR/lists" -o "Dir::Cache=$APT_DIR/cache" \
		-o Debug::NoLocking=1 -o APT::Sandbox::User=root
}

apt_lists() {
	mkdir -p "$APT_DIR/lists/partial" "$APT_DIR/cache/archives/partial"
	local m stamp=$APT_DIR/lists/.fetched
	m=$(mirror)
	printf 'deb %s %s main\n' "$m" bullseye "$m" bookworm "$m" trixie "$m" sid >"$APT_DIR/sources.list.new"
	if cmp -s "$APT_DIR/sources.list.new" "$APT_DIR/sources.list" && [ -n "$(find "$stamp" -mmin -1440 2>/dev/null)" ]; then
		rm -f "$APT_DIR/sources.list.new"
		return 0
	fi
	mv "$APT_DIR/sources.list.new" "$APT_DIR/sources.list"
	# shellcheck disable=SC2046
	apt-get $(apt_opts) -qq update >&2 || { echo "vm: cannot read Debian's package lists from $m" >&2; return 1; }
	touch "$stamp"
}

# field SUITE PACKAGE FIELD: one field of a package in that suite
field() {
	# shellcheck disable=SC2046
	apt-cache $(apt_opts) show "$2/$1" 2>/dev/null | sed -n "s/^$3: //p" | head -n 1
}

# the image package linux-image-amd64 depends on, then those it depends on by the same version
# (newer kernels split the image into linux-binary-* and linux-modules-*)
packages() {
	local suite=$1 image dep
	image=$(field "$suite" linux-image-amd64 Depends | tr ',' '\n' | grep -oE 'linux-image-[^ ]+' | head -n 1)
	[ -n "$image" ] || { echo "vm: $suite has no linux-image-amd64" >&2; return 1; }
	echo "$image"
	for dep in $(field "$suite" "$image" Depends | tr ',' '\n' | grep -oE 'linux-(binary|modules|base)-[0-9][^ ]*'); do
		echo "$dep"
	done
}

unpack() { # SUITE DIR PACKAGE...
	local suite=$1 dir=$2 p deb
	shift 2
	mkdir -p "$dir.tmp/debs"
	for p in "$@"; do
		# shellcheck disable=SC2046
		(cd "$dir.tmp/debs" && apt-get $(apt_opts) -qq download "$p/$suite" >&2) ||
			{ echo "vm: cannot download $p from $suite" >&2; return 1; }
	done
	for deb in "$dir.tmp/debs"/*.deb; do dpkg-deb -x "$deb" "$dir.tmp/root"; done
}

# lays out DIR from the unpacked packages: vmlinuz, lib/modules/KVER with depmod's index
lay_out() {
	local dir=$1 root=$1.tmp/root kver mods
	mods=$(find "$root" -maxdepth 4 -type d -path '*lib/modules/*' -name '[0-9]*' | head -n 1)
	[ -n "$mods" ] || { echo "vm: no modules in the kernel package" >&2; return 1; }
	kver=$(basename "$mods")
	mkdir -p "$dir.tmp/lib/modules"
	mv "$mods" "$dir.tmp/lib/modules/$kver"
	if [ -f "$root/boot/vmlinuz-$kver" ]; then
		mv "$root/boot/vmlinuz-$kver" "$dir.tmp/vmlinuz"
	else
		mv "$dir.tmp/lib/modules/$kver/vmlinuz" "$dir.tmp/vmlinuz"
	fi
	depmod -b "$dir.tmp" "$kver"
	echo "KVER=$kver" >"$dir.tmp/kernel.env"
	rm -rf "$root" "$dir.tmp/debs"
}

main() {
	local suite version dir
	[ $# -eq 1 ] || { echo "usage: tests/vm/kernel.sh 5.10|6.1|6.12|newest" >&2; exit 2; }
	suite=$(suite_of "$1")
	if ! apt_lists; then
		# Debian unreachable for now: the kernel fetched last time, if there is one
		dir=$(ls -d "$CACHE/kernels/$suite"-* 2>/dev/null | grep -v '\.tmp$' | sort -V | tail -n 1)
		[ -n "$dir" ] && [ -f "$dir/kernel.env" ] || exit 1
		echo "vm: using the cached $(basename "$dir")" >&2
		echo "$dir"
		return 0
	fi
	version=$(field "$suite" linux-image-amd64 Version)
	[ -n "$version" ] || { echo "vm: no linux-image-amd64 in $suite" >&2; exit 1; }
	dir="$CACHE/kernels/$suite-$version"
	if [ ! -f "$dir/kernel.env" ]; then
		echo "vm: fetching Debian $suite's kernel $version" >&2
		rm -rf "$dir" "$dir.tmp"
		# shellcheck disable=SC2046
		unpack "$suite" "$dir" $(packages "$suite")
		lay_out "$dir"
		printf 'VERSION=%s\nSUITE=%s\n' "$version" "$suite" >>"$dir.tmp/kernel.env"
		mv "$dir.tmp" "$dir"
	fi
	echo "$dir"
}

main "$@"
