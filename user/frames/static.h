/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Static rewrites, in the spirit of tcprewrite: applied once to each frame as
 * the frame set is built (no per-packet cost), so that a capture made on
 * another network replays onto this one. MACs, address maps (CIDR to CIDR,
 * IPv4 or IPv6, both directions of a flow alike), port maps, TTL or hop
 * limit, a VLAN tag pushed or stripped, truncation to the interface's MTU
 * (IPv4); the checksums are updated wherever anything they cover changed. They run before the per-packet
 * --rewrite ops, which then see the rewritten frames.
 */
#ifndef __XR_FRAMES_STATIC_H
#define __XR_FRAMES_STATIC_H

#include <stdbool.h>
#include <stdint.h>

#define STATIC_MAX_MAPS 16
#define STATIC_AUTO_MACS 1024

/* FROM=TO: an address in FROM keeps its host bits under TO's prefix (tcprewrite's --pnat) */
struct ip_map {
	bool ipv6;
	uint32_t from, from_mask, to, to_mask; /* IPv4, host order */
	uint8_t from6[16],
		to6[16]; /* the prefixes (IPv4 in the first 4 bytes), and their lengths */
	unsigned int from_len, to_len;
};

struct port_map {
	uint16_t from, to;
};

enum mac_how { MAC_KEEP, MAC_SET, MAC_AUTO };
enum ttl_how { TTL_KEEP, TTL_SET, TTL_ADD, TTL_SUB };

struct static_rewrite {
	enum mac_how src_mac_how, dst_mac_how;
	uint8_t src_mac[6], dst_mac[6];
	struct ip_map maps[STATIC_MAX_MAPS];
	int nmaps;
	struct port_map ports[STATIC_MAX_MAPS];
	int nports;
	enum ttl_how ttl_how;
	uint8_t ttl;
	bool vlan_push, vlan_strip;
	uint16_t vlan_tci;
	bool mtu_trunc;
	bool skip_misfits; /* --misfit skip: frames an IP rewrite does not fit are left out */
	bool misfit_given; /* --misfit given: the --rewrite ops' misfits go (or are left out) too */
	/* set by the caller before the first frame */
	uint32_t mtu; /* the interface's, for --mtu-trunc */
	const char *ifname; /* for --dst-mac auto (the neighbour table) */
	uint8_t if_mac[6]; /* for --src-mac auto */
	/* --dst-mac auto: destinations already looked up */
	uint32_t auto_ip[STATIC_AUTO_MACS];
	uint8_t auto_mac[STATIC_AUTO_MACS][6];
	int nauto;
	/* what happened, for the report */
	uint64_t changed; /* frames that differ from the capture */
	uint64_t misfits_sent; /* not IP (nor ARP for the maps): sent as they were */
	uint64_t misfits_skipped; /* the same, left out (--misfit skip) */
	uint64_t truncated; /* cut to the MTU */
};

/* Whether any static rewrite was asked for. */
bool static_active(const struct static_rewrite *sr);
/* One option's value into sr; 0 or -EINVAL (the caller names the option). */
int static_parse_map_ip(const char *s, struct ip_map *m);
int static_parse_map_port(const char *s, struct port_map *m);
int static_parse_ttl(const char *s, struct static_rewrite *sr);
int static_parse_vlan(const char *s, uint16_t *tci);
/*
 * Rewrites frame in (len bytes, orig_len on the wire) into out, which has
 * room for len + 4 bytes. Returns 1 when the frame is left out (--misfit
 * skip), 0 with *out_len and *out_orig set, or -errno after one line that
 * names the frame (n, 1-based) and the problem.
 */
int static_frame(struct static_rewrite *sr, const uint8_t *in, uint32_t len, uint32_t orig_len,
		 uint8_t *out, uint32_t *out_len, uint32_t *out_orig, uint64_t n);

#endif
