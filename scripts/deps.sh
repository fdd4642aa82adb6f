#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
# The one place that names the Debian packages xdpreplay needs.
#   scripts/deps.sh          build, tests and demo
#   scripts/deps.sh --bench  also the tools the benchmarks compare against
# Idempotent: quiet when everything is present; runs apt-get update only when a package is missing.
set -euo pipefail

# clang-16 is the BPF compiler (clang-14, Debian's default, cannot build kfunc/kptr code).
build=(make git gcc pkg-config python3 man-db clang-16 llvm-16 libbpf-dev libxdp-dev libelf-dev zlib1g-dev
       libssl-dev libjson-c-dev libmicrohttpd-dev libcurl4-openssl-dev bpftool clang-format-16
       libmpich-dev mpich libmosquitto-dev)
testbed=(iproute2 ethtool nftables tcpdump tcpreplay procps python3 python3-cryptography gzip util-linux librsvg2-bin nsd
         nginx-light mosquitto mosquitto-clients redis-server prometheus python3-prometheus-client chromium python3-pil
         poppler-utils)
# libFuzzer and the sanitizers for clang-16 (the fuzz targets); gcc brings its own ASan and UBSan
fuzz=(libclang-rt-16-dev)
# the VM pass (tests/vm/): Debian's kernels booted under QEMU, their modules indexed and unpacked
vm=(qemu-system-x86 busybox-static cpio kmod xz-utils zstd)
# the Debian package (tests/t_package.sh builds, lints and installs it)
package=(dpkg-dev debhelper fakeroot lintian)
# m4: xdp-tools' build (XDP_TOOLS=DIR builds xdp-trafficgen from source for bench-replay.sh)
bench=(netsniff-ng hping3 netcat-openbsd time dnsperf apache2-utils wrk nghttp2-client tsung m4)

want=("${build[@]}" "${testbed[@]}" "${fuzz[@]}" "${vm[@]}" "${package[@]}")
[[ "${1:-}" == "--bench" ]] && want+=("${bench[@]}")

missing=()
for p in "${want[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

if [[ $(id -u) -ne 0 ]]; then
	echo "deps.sh: missing packages (${missing[*]}); run as root to install them" >&2
	exit 1
fi
echo "deps.sh: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
