// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/mount.h>
#include "util/log.h"
#include "util/netns.h"

int netns_enter(const char *name)
{
	char path[4096];
	int fd, err = 0;

	if (strchr(name, '/'))
		snprintf(path, sizeof(path), "%s", name);
	else
		snprintf(path, sizeof(path), "/run/netns/%s", name);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		err = -errno;
		pr_warn("--netns %s: cannot open %s: %s\n", name, path, strerror(-err));
		return err;
	}
	if (setns(fd, CLONE_NEWNET)) {
		err = -errno;
		pr_warn("--netns %s: cannot enter it: %s\n", name,
			err == -EINVAL ? "not a network namespace" : strerror(-err));
		goto out;
	}
	/*
	 * /sys/class/net shows the namespace of whoever mounted /sys: a private
	 * mount namespace with a sysfs of its own shows ours (ip netns exec does
	 * the same). Only counters are read there, so a failure is not fatal.
	 */
	if (unshare(CLONE_NEWNS) || mount("", "/", NULL, MS_SLAVE | MS_REC, NULL)) {
		pr_info("--netns %s: /sys still shows the first namespace (%s)\n", name,
			strerror(errno));
		goto out;
	}
	/* no sysfs there before is fine: there is one now */
	umount2("/sys", MNT_DETACH);
	if (mount(name, "/sys", "sysfs", 0, NULL))
		pr_info("--netns %s: cannot mount /sys for it: %s\n", name, strerror(errno));
out:
	close(fd);
	return err;
}
