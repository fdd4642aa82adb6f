/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_GEN_H
#define __XR_GEN_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include "engine/engine.h"
#include "util/json.h"
#include "frames/rewrite.h"

/* --rewrite ops the user gives plus those gen adds (source, port, stamp or ISN) */
#define GEN_MAX_SPECS (XR_MAX_OPS + 4)

struct gen_opts {
	bool syn;            /* gen syn; else gen udp */
	bool ipv6;
	uint8_t dst[16];
	uint16_t dport;
	const char *src;     /* --src RANGE (ip.src / ip6.src syntax) */
	const char *sport;   /* --sport LO-HI */
	unsigned int size;   /* on the wire, with FCS */
	bool have_mac;
	uint8_t dst_mac[6];
	bool complete;
	uint64_t tuples;     /* distinct (source, port) pairs before one repeats; 0 = 2^64 or more */
};

/* --dst (or lorawan send's --server, named by opt): ADDR, ADDR:PORT or [ADDR6]:PORT. */
int gen_parse_dst(const char *s, const char *opt, struct gen_opts *g);
/* The MAC of g->dst from the neighbour table (IPv4): 0 or -ENOENT. */
int gen_neigh_mac(const struct gen_opts *g, const char *ifname, uint8_t *mac);
/* The interface's first address of the family: 0 or -ENOENT. */
int gen_iface_addr(const char *ifname, bool ipv6, uint8_t *addr);
/*
 * Builds the template frame into fs and the specs that vary it per packet;
 * for gen syn also the reply counter's configuration. 0 or -errno (printed).
 */
int gen_build(struct gen_opts *g, const struct iface *ifc, struct frameset *fs, struct rewrite_spec *specs,
	      int *nspecs, struct xr_replies_cfg *rpl);
/* Replies and round trips of a gen syn run, to a human (human) and into JSON (j). */
void gen_report(const struct engine_result *res, FILE *human, struct json *j);

#endif
