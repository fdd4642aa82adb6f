/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Built-in frames: one Ethernet/IPv4-or-IPv6/UDP-or-TCP frame with valid
 * checksums, and the plan specs that spread it over source addresses and
 * ports. gen's protocols (user/proto/udp, syn, dns) build on it.
 */
#ifndef __XR_FRAMES_TEMPLATE_H
#define __XR_FRAMES_TEMPLATE_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/iface.h"
#include "frames/addr.h"
#include "frames/frameset.h"
#include "frames/rewrite.h"

/* The addressing options of gen and lorawan send, typed (struct send_opts.net). */
struct template_net {
	struct xr_dst dst;
	bool have_dst;
	struct addr_range src; /* --src; default: the interface's address */
	bool have_src;
	struct port_range sport; /* --sport; default 1024-65535 */
	bool have_sport;
	unsigned int size; /* --size: on the wire, with FCS; 0 = 64 */
	uint8_t dst_mac[6]; /* --dst-mac; default: the neighbour table */
	bool have_mac;
	bool have_vlan; /* --vlan: frames tagged 802.1Q with vlan_tci */
	uint16_t vlan_tci;
};

/* What the addressing resolved to, for the frame and the reply counter. */
struct template_addr {
	uint8_t src[16]; /* the first source address (network order) */
	uint8_t dst_mac[6];
	uint64_t pool, ports; /* source addresses and ports the plan cycles through */
	uint64_t tuples; /* distinct (address, port) pairs before one repeats; 0 = 2^64 or more */
	struct xr_reply_match match; /* IPv4: the server and our sources, for replies */
};

/*
 * Resolves net for a frame of protocol l4 (IPPROTO_UDP or IPPROTO_TCP): the
 * next hop's MAC, the first source address, and specs that give address
 * n mod pool and port (n / pool) mod ports (every pair once before any
 * repeats; port_divisor, when not 0, replaces pool there), appended to
 * specs. Ports default to default_ports, or 1024-65535 when NULL. 0 or
 * -errno after a one-line message.
 */
int template_addressing(const struct template_net *net, const struct iface *ifc, uint8_t l4,
			const struct port_range *default_ports, uint64_t port_divisor,
			struct rewrite_spec *specs, int *nspecs, struct template_addr *ta);

struct template_frame {
	const struct template_net *net;
	const struct template_addr *ta;
	const struct iface *ifc;
	uint8_t l4; /* IPPROTO_UDP, IPPROTO_TCP or IPPROTO_ICMP (an echo request; ICMPv6's for IPv6) */
	uint8_t tcp_flags; /* TCP: the flags (a SYN carries an MSS option, nothing else does) */
	const uint8_t
		*payload; /* UDP: the payload's first bytes, as many as fit (the rest is zero) */
	uint32_t payload_len;
	uint32_t len; /* UDP, ICMP: the frame's length without FCS; at least the headers */
};

/* One frame into fs. 0 or -errno after a one-line message. */
int template_build(const struct template_frame *t, struct frameset *fs);

/*
 * gen udp's and gen icmp's frame: addressing (ports from default_ports when
 * --sport is not given), a datagram of --size (default 64) starting "XRGEN",
 * and n in its payload's first 8 bytes where it has them. 0 or -errno.
 */
int template_stamped(const struct template_net *net, const struct iface *ifc, uint8_t l4,
		     const struct port_range *default_ports, struct frameset *fs,
		     struct rewrite_spec *specs, int *nspecs);

#endif
