// SPDX-License-Identifier: GPL-2.0
/*
 * gen udp: one UDP datagram template, spread over the source range and
 * ports, its payload carrying the sequence number n in its first 8 bytes
 * (xdpreplay count --seq payload@0:8).
 */
#include <netinet/in.h>
#include "proto/proto.h"
#include "send/opts.h"

static int udp_build(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	return template_stamped(&so->net, ifc, IPPROTO_UDP, NULL, fs, plan->specs, &plan->nspecs);
}

const struct xr_proto proto_udp = {
	.name = "udp",
	.gen = true,
	.summary = "UDP datagrams, the sequence number in the payload",
	.accepts = SO_REWRITE | SO_DST | SO_SRC | SO_SPORT | SO_SIZE | SO_DSTMAC | SO_VLAN,
	.default_port = 9,
	.build = udp_build,
	.frames_are = "datagrams",
};
