/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Addresses as the send options give them, parsed once into these types:
 * a destination (--dst, --server), a source range (--src), a port range
 * (--sport); and where the defaults come from (the neighbour table, the
 * interface's own address). The parsers print nothing: the caller names
 * the option the user typed.
 */
#ifndef __XR_FRAMES_ADDR_H
#define __XR_FRAMES_ADDR_H

#include <stdbool.h>
#include <stdint.h>

struct xr_dst {
	bool ipv6;
	uint8_t addr[16]; /* network order; IPv4 in the first 4 bytes */
	uint16_t port; /* 0: not given */
};

/* A range of addresses: IPv4 base..base+count-1 (host order), or IPv6 high:base.. with count 0 = 2^64. */
struct addr_range {
	bool ipv6;
	uint64_t base, count;
	uint8_t high[8]; /* IPv6: the upper 64 bits, the prefix */
};

struct port_range {
	uint16_t lo, hi;
};

/* ADDR, ADDR:PORT or [ADDR6]:PORT: 0 or -EINVAL. */
int addr_parse_dst(const char *s, struct xr_dst *d);
/* A.B.C.D, A.B.C.D/P, A.B.C.D-E.F.G.H, or an IPv6 PREFIX/P with P >= 64: 0 or -EINVAL. */
int addr_parse_range(const char *s, struct addr_range *r);
int addr_parse_range4(const char *s, uint64_t *base, uint64_t *count);
int addr_parse_range6(const char *s, uint64_t *base, uint64_t *count, uint8_t high[8]);
/* PORT or LO-HI (0-65535, LO <= HI): 0 or -EINVAL. */
int addr_parse_ports(const char *s, struct port_range *p);

/* The MAC of d from the neighbour table (IPv4): 0 or -ENOENT. */
int addr_neigh_mac(const struct xr_dst *d, const char *ifname, uint8_t mac[6]);
/* The interface's first address of the family: 0 or -ENOENT. */
int addr_iface(const char *ifname, bool ipv6, uint8_t *addr);
/* The first address of r, in network order (4 or 16 bytes). */
void addr_range_first(const struct addr_range *r, uint8_t *addr);

#endif
