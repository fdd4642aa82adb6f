// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <linux/ethtool.h>
#include <linux/sockios.h>
#include "engine/iface.h"
#include "util/log.h"

static int ethtool_ioctl(int fd, const char *name, void *cmd)
{
	struct ifreq ifr = {};

	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	ifr.ifr_data = cmd;
	return ioctl(fd, SIOCETHTOOL, &ifr) ? -errno : 0;
}

int iface_get(const char *name, struct iface *ifc)
{
	struct ethtool_drvinfo drv = { .cmd = ETHTOOL_GDRVINFO };
	struct ethtool_channels ch = { .cmd = ETHTOOL_GCHANNELS };
	struct ifreq ifr = {};
	int fd, err = 0;

	memset(ifc, 0, sizeof(*ifc));
	if (!name || !*name || strlen(name) >= IF_NAMESIZE) {
		pr_warn("invalid interface name '%s'\n", name ? name : "");
		return -EINVAL;
	}
	snprintf(ifc->name, sizeof(ifc->name), "%s", name);
	ifc->ifindex = if_nametoindex(name);
	if (!ifc->ifindex) {
		err = -errno;
		pr_warn("interface %s: %s\n", name,
			err == -ENODEV ? "no such interface" : strerror(-err));
		return err;
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		err = -errno;
		pr_warn("socket: %s\n", strerror(-err));
		return err;
	}
	snprintf(ifr.ifr_name, sizeof(ifr.ifr_name), "%s", name);
	if (!ioctl(fd, SIOCGIFMTU, &ifr))
		ifc->mtu = ifr.ifr_mtu;
	if (!ioctl(fd, SIOCGIFFLAGS, &ifr))
		ifc->up = ifr.ifr_flags & IFF_UP;
	if (!ioctl(fd, SIOCGIFHWADDR, &ifr))
		memcpy(ifc->mac, ifr.ifr_hwaddr.sa_data, 6);
	if (!ethtool_ioctl(fd, name, &drv)) {
		snprintf(ifc->driver, sizeof(ifc->driver), "%s", drv.driver);
		snprintf(ifc->driver_version, sizeof(ifc->driver_version), "%s", drv.version);
		snprintf(ifc->firmware, sizeof(ifc->firmware), "%s", drv.fw_version);
	}
	if (!ethtool_ioctl(fd, name, &ch)) {
		ifc->nrxq = ch.rx_count + ch.combined_count;
		ifc->ntxq = ch.tx_count + ch.combined_count;
	}
	if (!ifc->nrxq)
		ifc->nrxq = 1;
	if (!ifc->ntxq)
		ifc->ntxq = 1;
	ifc->netns_ino = netns_ino_self();
	close(fd);
	return 0;
}

int iface_sysfs_stat(const char *name, const char *stat, uint64_t *val)
{
	char path[128];
	unsigned long long v;
	FILE *f;
	int n;

	snprintf(path, sizeof(path), "/sys/class/net/%s/statistics/%s", name, stat);
	f = fopen(path, "r");
	if (!f)
		return -errno;
	n = fscanf(f, "%llu", &v);
	fclose(f);
	if (n != 1)
		return -EINVAL;
	*val = v;
	return 0;
}

int ethtool_counters_get(const char *name, struct ethtool_counters *c)
{
	struct ethtool_sset_info *sset = NULL;
	struct ethtool_gstrings *strs = NULL;
	struct ethtool_stats *stats = NULL;
	unsigned int n, room;
	int fd, err;

	memset(c, 0, sizeof(*c));
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	sset = calloc(1, sizeof(*sset) + sizeof(__u32));
	if (!sset) {
		err = -ENOMEM;
		goto out;
	}
	sset->cmd = ETHTOOL_GSSET_INFO;
	sset->sset_mask = 1ULL << ETH_SS_STATS;
	err = ethtool_ioctl(fd, name, sset);
	if (err)
		goto out;
	n = sset->sset_mask ? sset->data[0] : 0;
	if (!n)
		goto out;
	/*
	 * The kernel writes as many strings and values as the device has at the
	 * time of each call, whatever length we give: room for more than it said
	 * (queues may be added between the calls), and the counts checked after.
	 */
	room = 2 * n + 256;
	strs = calloc(1, sizeof(*strs) + (size_t)room * ETH_GSTRING_LEN);
	stats = calloc(1, sizeof(*stats) + (size_t)room * sizeof(__u64));
	c->names = calloc(room, 32);
	c->vals = calloc(room, sizeof(uint64_t));
	if (!strs || !stats || !c->names || !c->vals) {
		err = -ENOMEM;
		goto out;
	}
	strs->cmd = ETHTOOL_GSTRINGS;
	strs->string_set = ETH_SS_STATS;
	strs->len = n;
	stats->cmd = ETHTOOL_GSTATS;
	stats->n_stats = n;
	err = ethtool_ioctl(fd, name, strs);
	if (!err)
		err = ethtool_ioctl(fd, name, stats);
	if (err)
		goto out;
	if (strs->len != stats->n_stats || strs->len > room) {
		/* the device changed between the calls: no names to match the values */
		err = -EAGAIN;
		goto out;
	}
	n = strs->len;
	for (unsigned int i = 0; i < n; i++) {
		memcpy(c->names[i], (char *)strs->data + i * ETH_GSTRING_LEN, 31);
		c->names[i][31] = 0;
		c->vals[i] = stats->data[i];
	}
	c->n = n;
out:
	if (err)
		ethtool_counters_free(c);
	free(sset);
	free(strs);
	free(stats);
	close(fd);
	return err;
}

uint64_t ethtool_counters_sum(const struct ethtool_counters *c, const char *suffix)
{
	size_t sl = strlen(suffix);
	uint64_t sum = 0;

	for (unsigned int i = 0; i < c->n; i++) {
		size_t l = strlen(c->names[i]);

		if (l >= sl && !strcmp(c->names[i] + l - sl, suffix))
			sum += c->vals[i];
	}
	return sum;
}

void ethtool_counters_free(struct ethtool_counters *c)
{
	free(c->names);
	free(c->vals);
	memset(c, 0, sizeof(*c));
}

uint32_t netns_ino_self(void)
{
	struct stat st;

	return stat("/proc/self/ns/net", &st) ? 0 : (uint32_t)st.st_ino;
}
