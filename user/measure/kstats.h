/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_KSTATS_H
#define __XR_KSTATS_H

#include <stdbool.h>
#include <stdint.h>

enum kstat_id {
	KS_IF_RX_PACKETS,
	KS_IF_RX_DROPPED,
	KS_IF_RX_ERRORS,
	KS_ET_XDP_PACKETS,
	KS_ET_XDP_DROPS,
	KS_ET_RX_DROPS,
	KS_IP_IN_RECEIVES,
	KS_IP_IN_DISCARDS,
	KS_IP_IN_HDR_ERRORS,
	KS_IP_IN_ADDR_ERRORS,
	KS_IP_IN_DELIVERS,
	KS_IP_OUT_NO_ROUTES,
	KS_UDP_IN_DATAGRAMS,
	KS_UDP_NO_PORTS,
	KS_UDP_IN_ERRORS,
	KS_UDP_RCVBUF_ERRORS,
	KS_UDP_IN_CSUM_ERRORS,
	KS_TCP_PASSIVE_OPENS,
	KS_TCP_IN_SEGS,
	KS_TCP_IN_CSUM_ERRORS,
	KS_TCPEXT_LISTEN_DROPS,
	KS_TCPEXT_LISTEN_OVERFLOWS,
	KS_TCPEXT_SYNCOOKIES_SENT,
	KS_TCPEXT_REQQFULL_DROP,
	KS_SOFTNET_DROPPED,
	KS_SOFTNET_SQUEEZED,
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

/* nftables rules with a counter, from `nft -a list ruleset` (the namespace's). */
#define NFT_MAX_RULES 256
struct nft_rule_counter {
	char id[96]; /* "inet t in #2": family table chain #handle */
	char text[160]; /* the rule, for the report */
	uint64_t packets, bytes;
	bool drops; /* its verdict drops or rejects */
};
struct nft_counters {
	int n;
	struct nft_rule_counter r[NFT_MAX_RULES];
};
/* 0, or -errno when nft cannot be run (not installed, no permission). */
int nft_read(struct nft_counters *c);
/* after - before, rule by rule (rules missing from before count from zero). */
void nft_delta(const struct nft_counters *before, const struct nft_counters *after,
	       struct nft_counters *d);

#endif
