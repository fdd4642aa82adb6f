// SPDX-License-Identifier: GPL-2.0
/*
 * Snapshots of the kernel's own counters, for drop attribution: interface,
 * ethtool, /proc/net/snmp, /proc/net/netstat and /proc/net/softnet_stat.
 * All of them are per network namespace (softnet_stat is per CPU, global).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "engine/iface.h"
#include "measure/kstats.h"

const struct kstat_def kstat_defs[KS_NUM] = {
	[KS_IF_RX_PACKETS] = { "iface", "rx_packets" },
	[KS_IF_RX_DROPPED] = { "iface", "rx_dropped" },
	[KS_IF_RX_ERRORS] = { "iface", "rx_errors" },
	[KS_ET_XDP_PACKETS] = { "ethtool", "xdp_packets" },
	[KS_ET_XDP_DROPS] = { "ethtool", "xdp_drops" },
	[KS_ET_RX_DROPS] = { "ethtool", "drops" },
	[KS_IP_IN_RECEIVES] = { "Ip", "InReceives" },
	[KS_IP_IN_DISCARDS] = { "Ip", "InDiscards" },
	[KS_IP_IN_HDR_ERRORS] = { "Ip", "InHdrErrors" },
	[KS_IP_IN_ADDR_ERRORS] = { "Ip", "InAddrErrors" },
	[KS_IP_IN_DELIVERS] = { "Ip", "InDelivers" },
	[KS_IP_OUT_NO_ROUTES] = { "Ip", "OutNoRoutes" },
	[KS_UDP_IN_DATAGRAMS] = { "Udp", "InDatagrams" },
	[KS_UDP_NO_PORTS] = { "Udp", "NoPorts" },
	[KS_UDP_IN_ERRORS] = { "Udp", "InErrors" },
	[KS_UDP_RCVBUF_ERRORS] = { "Udp", "RcvbufErrors" },
	[KS_UDP_IN_CSUM_ERRORS] = { "Udp", "InCsumErrors" },
	[KS_TCP_PASSIVE_OPENS] = { "Tcp", "PassiveOpens" },
	[KS_TCP_IN_SEGS] = { "Tcp", "InSegs" },
	[KS_TCP_IN_CSUM_ERRORS] = { "Tcp", "InCsumErrors" },
	[KS_TCPEXT_LISTEN_DROPS] = { "TcpExt", "ListenDrops" },
	[KS_TCPEXT_LISTEN_OVERFLOWS] = { "TcpExt", "ListenOverflows" },
	[KS_TCPEXT_SYNCOOKIES_SENT] = { "TcpExt", "SyncookiesSent" },
	[KS_TCPEXT_REQQFULL_DROP] = { "TcpExt", "TCPReqQFullDrop" },
	[KS_SOFTNET_DROPPED] = { "softnet", "dropped" },
	[KS_SOFTNET_SQUEEZED] = { "softnet", "time_squeeze" },
};

/* Reads "Sect: Name1 Name2\nSect: v1 v2" tables (/proc/net/snmp, /proc/net/netstat). */
static void read_table(const char *path, struct kstats *ks)
{
	char *hdr = NULL, *val = NULL;
	size_t hl = 0, vl = 0;
	FILE *f = fopen(path, "r");

	if (!f)
		return;
	while (getline(&hdr, &hl, f) > 0 && getline(&val, &vl, f) > 0) {
		char *hs, *vs, *h, *v, *colon = strchr(hdr, ':');

		if (!colon)
			continue;
		*colon = 0;
		h = strtok_r(colon + 1, " \n", &hs);
		v = strtok_r(strchr(val, ':') ? strchr(val, ':') + 1 : val, " \n", &vs);
		for (; h && v; h = strtok_r(NULL, " \n", &hs), v = strtok_r(NULL, " \n", &vs)) {
			for (int i = 0; i < KS_NUM; i++) {
				if (!strcmp(kstat_defs[i].group, hdr) &&
				    !strcmp(kstat_defs[i].name, h)) {
					ks->v[i] = strtoull(v, NULL, 10);
					ks->have[i] = true;
				}
			}
		}
	}
	free(hdr);
	free(val);
	fclose(f);
}

static void read_softnet(struct kstats *ks)
{
	unsigned int processed, dropped, squeezed;
	char line[512];
	FILE *f = fopen("/proc/net/softnet_stat", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (sscanf(line, "%x %x %x", &processed, &dropped, &squeezed) == 3) {
			ks->v[KS_SOFTNET_DROPPED] += dropped;
			ks->v[KS_SOFTNET_SQUEEZED] += squeezed;
			ks->have[KS_SOFTNET_DROPPED] = ks->have[KS_SOFTNET_SQUEEZED] = true;
		}
	}
	fclose(f);
}

static void set(struct kstats *ks, int i, uint64_t v)
{
	ks->v[i] = v;
	ks->have[i] = true;
}

void kstats_read(const char *ifname, struct kstats *ks)
{
	struct ethtool_counters ec;
	uint64_t v;

	memset(ks, 0, sizeof(*ks));
	if (ifname) {
		if (!iface_sysfs_stat(ifname, "rx_packets", &v))
			set(ks, KS_IF_RX_PACKETS, v);
		if (!iface_sysfs_stat(ifname, "rx_dropped", &v))
			set(ks, KS_IF_RX_DROPPED, v);
		if (!iface_sysfs_stat(ifname, "rx_errors", &v))
			set(ks, KS_IF_RX_ERRORS, v);
		if (!ethtool_counters_get(ifname, &ec)) {
			/* veth names them rx_queue_N_xdp_packets etc.; other drivers similarly */
			set(ks, KS_ET_XDP_PACKETS, ethtool_counters_sum(&ec, "_xdp_packets"));
			set(ks, KS_ET_XDP_DROPS, ethtool_counters_sum(&ec, "_xdp_drops"));
			set(ks, KS_ET_RX_DROPS,
			    ethtool_counters_sum(&ec, "_drops") -
				    ethtool_counters_sum(&ec, "_xdp_drops"));
			ethtool_counters_free(&ec);
		}
	}
	read_table("/proc/net/snmp", ks);
	read_table("/proc/net/netstat", ks);
	read_softnet(ks);
}

void kstats_delta(const struct kstats *a, const struct kstats *b, struct kstats *d)
{
	for (int i = 0; i < KS_NUM; i++) {
		d->have[i] = a->have[i] && b->have[i];
		d->v[i] = d->have[i] ? b->v[i] - a->v[i] : 0;
	}
}

int nft_read(struct nft_counters *c)
{
	char line[512], family[16] = "", table[32] = "", chain[32] = "";
	FILE *p;

	c->n = 0;
	p = popen("nft -a list ruleset 2>/dev/null", "r");
	if (!p)
		return -errno;
	while (fgets(line, sizeof(line), p)) {
		struct nft_rule_counter *r;
		char *cnt, *h, *s = line;
		unsigned long long pk, by;
		unsigned int handle;

		while (*s == ' ' || *s == '\t')
			s++;
		s[strcspn(s, "\n")] = 0;
		if (sscanf(s, "table %15s %31s {", family, table) == 2 ||
		    sscanf(s, "chain %31s {", chain) == 1)
			continue;
		cnt = strstr(s, "counter packets ");
		h = strstr(s, "# handle ");
		if (!cnt || !h || c->n >= NFT_MAX_RULES ||
		    sscanf(cnt, "counter packets %llu bytes %llu", &pk, &by) != 2 ||
		    sscanf(h, "# handle %u", &handle) != 1)
			continue;
		r = &c->r[c->n++];
		snprintf(r->id, sizeof(r->id), "%s %s %s #%u", family, table, chain, handle);
		*h = 0;
		snprintf(r->text, sizeof(r->text), "%.159s", s);
		r->packets = pk;
		r->bytes = by;
		r->drops = strstr(s, " drop") || strstr(s, " reject");
	}
	return pclose(p) == 0 ? 0 : -ENOENT;
}

void nft_delta(const struct nft_counters *before, const struct nft_counters *after,
	       struct nft_counters *d)
{
	d->n = 0;
	for (int i = 0; i < after->n; i++) {
		struct nft_rule_counter *r = &d->r[d->n++];

		*r = after->r[i];
		for (int j = 0; j < before->n; j++) {
			if (!strcmp(before->r[j].id, after->r[i].id)) {
				r->packets -= before->r[j].packets;
				r->bytes -= before->r[j].bytes;
				break;
			}
		}
	}
}
