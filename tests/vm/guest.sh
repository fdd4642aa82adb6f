#!/bin/bash
# SPDX-License-Identifier: GPL-2.0
# PID 1 of the guest (tests/vm/init switch_root's here): what a Debian host has mounted that the
# tests use, the kernel's modules at /lib/modules, then /vmout/cmd in the checkout; its output
# to /vmout/out.log, its status to /vmout/rc, and the machine powered off.
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb
# tests/lib.sh's in_vm: emulation cannot keep time, so rate checks are skipped here
export XR_IN_VM=1
# shellcheck disable=SC1091
. /vmout/env # KDIR KVER TOP, written by tests/vm/vmtest.sh

setup() {
	# /run fresh (the host's namespaces and test beds are not the guest's); /tmp stays the
	# overlay's, where a checkout under the host's /tmp (a CI clone) is still seen
	mount -t tmpfs tmpfs /run
	mkdir -p /dev/pts /dev/shm /lib/modules/"$KVER"
	mount -t devpts devpts /dev/pts
	mount -t tmpfs tmpfs /dev/shm
	ln -sfn /proc/self/fd /dev/fd
	ln -sfn /proc/self/fd/0 /dev/stdin
	ln -sfn /proc/self/fd/1 /dev/stdout
	ln -sfn /proc/self/fd/2 /dev/stderr
	mount --bind "$KDIR/lib/modules/$KVER" /lib/modules/"$KVER"
	mount -t bpf bpf /sys/fs/bpf
	mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	mount -t tracefs tracefs /sys/kernel/tracing 2>/dev/null
	mount -t cgroup2 cgroup2 /sys/fs/cgroup 2>/dev/null
	hostname "xr-vm-${KVER%%-*}"
	ip link set lo up
	ulimit -l unlimited
}

setup >/vmout/setup.log 2>&1
echo "vm: Linux $(uname -r) up after $(cut -d' ' -f1 /proc/uptime) s" >>/vmout/out.log
cd "$TOP" && bash /vmout/cmd >>/vmout/out.log 2>&1 </dev/null
echo $? >/vmout/rc
sync
echo o >/proc/sysrq-trigger
sleep 30
