/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_KSTATS_H
#define __XR_KSTATS_H

#include <stdbool.h>
#include <stdint.h>

enum kstat_id {
	KS_IF_RX_PACKETS, KS_IF_RX_DROPPED, KS_IF_RX_ERRORS,
	KS_ET_XDP_PACKETS, KS_ET_XDP_DROPS, KS_ET_RX_DROPS,
	KS_IP_IN_RECEIVES, KS_IP_IN_DISCARDS, KS_IP_IN_HDR_ERRORS, KS_IP_IN_ADDR_ERRORS, KS_IP_IN_DELIVERS,
	KS_UDP_IN_DATAGRAMS, KS_UDP_NO_PORTS, KS_UDP_IN_ERRORS, KS_UDP_RCVBUF_ERRORS, KS_UDP_IN_CSUM_ERRORS,
	KS_TCP_PASSIVE_OPENS, KS_TCP_IN_SEGS, KS_TCP_IN_CSUM_ERRORS,
	KS_TCPEXT_LISTEN_DROPS, KS_TCPEXT_LISTEN_OVERFLOWS, KS_TCPEXT_SYNCOOKIES_SENT, KS_TCPEXT_REQQFULL_DROP,
	KS_SOFTNET_DROPPED, KS_SOFTNET_SQUEEZED,
	KS_NUM
};

struct kstat_def {
	const char *group; /* "iface", "ethtool", "softnet" or the /proc/net table's section */
	const char *name;
};
extern const struct kstat_def kstat_defs[KS_NUM];

struct kstats {
	uint64_t v[KS_NUM];
	bool have[KS_NUM];
};

/* Counters of ifname (may be NULL) and of this network namespace. */
void kstats_read(const char *ifname, struct kstats *ks);
void kstats_delta(const struct kstats *before, const struct kstats *after, struct kstats *d);

#endif
