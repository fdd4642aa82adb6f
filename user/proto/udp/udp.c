// SPDX-License-Identifier: GPL-2.0
/*
 * gen udp: one UDP datagram template, spread over the source range and
 * ports, its payload carrying the sequence number n in its first 8 bytes
 * (xdpreplay count --seq payload@0:8).
 */
#include <errno.h>
#include <netinet/in.h>
#include "proto/proto.h"
#include "send/opts.h"

static int udp_build(void *st, const struct send_opts *so, const struct iface *ifc,
		     struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	unsigned int size = so->net.size ? so->net.size : 64;
	struct template_addr ta;
	struct template_frame t = { .net = &so->net,
				    .ta = &ta,
				    .ifc = ifc,
				    .l4 = IPPROTO_UDP,
				    .payload = (const uint8_t *)"XRGEN",
				    .payload_len = 5,
				    .len = size - 4 };
	uint32_t hdrs = (so->net.have_vlan ? 18 : 14) + (so->net.dst.ipv6 ? 40 : 20) + 8;
	int err;

	err = template_addressing(&so->net, ifc, IPPROTO_UDP, NULL, 0, plan->specs, &plan->nspecs,
				  &ta);
	if (err)
		return err;
	err = template_build(&t, fs);
	if (err)
		return err;
	/* the sequence number, for count --seq payload@0:8 */
	if (fs->frames[0].len >= hdrs + 8 &&
	    rewrite_parse("payload@0:8=seq", &plan->specs[plan->nspecs++]))
		return -EINVAL;
	return 0;
}

const struct xr_proto proto_udp = {
	.name = "udp",
	.gen = true,
	.summary = "UDP datagrams, the sequence number in the payload",
	.accepts = SO_REWRITE | SO_DST | SO_SRC | SO_SPORT | SO_SIZE | SO_DSTMAC | SO_VLAN,
	.default_port = 9,
	.kernel_only = true,
	.build = udp_build,
};
