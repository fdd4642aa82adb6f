// SPDX-License-Identifier: GPL-2.0
/*
 * gen icmp: ICMP echo requests (ICMPv6's for an IPv6 destination), the
 * ping flood of trafgen and hping3 users: sources from the range, the
 * identifier 0x5852 ("XR"; --sport LO-HI: a range, taken n / pool as ports
 * elsewhere), the echo sequence number n mod 65536, and n in the payload's
 * first 8 bytes (which the echo reply carries back).
 */
#include <errno.h>
#include <netinet/in.h>
#include "proto/proto.h"
#include "send/opts.h"

static int icmp_build(void *st, const struct send_opts *so, const struct iface *ifc,
		      struct frameset *fs, struct send_plan *plan, struct engine_opts *o)
{
	/* one identifier, as one ping process has; --sport LO-HI gives a range */
	static const struct port_range ids = { 0x5852, 0x5852 };
	unsigned int size = so->net.size ? so->net.size : 64;
	struct template_addr ta;
	struct template_frame t = { .net = &so->net,
				    .ta = &ta,
				    .ifc = ifc,
				    .l4 = IPPROTO_ICMP,
				    .payload = (const uint8_t *)"XRGEN",
				    .payload_len = 5,
				    .len = size - 4 };
	uint32_t hdrs = (so->net.have_vlan ? 18 : 14) + (so->net.dst.ipv6 ? 40 : 20) + 8;
	int err;

	err = template_addressing(&so->net, ifc, IPPROTO_ICMP, &ids, 0, plan->specs, &plan->nspecs,
				  &ta);
	if (err)
		return err;
	err = template_build(&t, fs);
	if (err)
		return err;
	if (rewrite_parse("icmp.seq=seq", &plan->specs[plan->nspecs++]))
		return -EINVAL;
	/* the sequence number whole, where the echo reply carries it back */
	if (fs->frames[0].len >= hdrs + 8 &&
	    rewrite_parse("payload@0:8=seq", &plan->specs[plan->nspecs++]))
		return -EINVAL;
	return 0;
}

const struct xr_proto proto_icmp = {
	.name = "icmp",
	.gen = true,
	.summary = "ICMP echo requests (ICMPv6 for IPv6), sequence number n, n in the payload",
	.accepts = SO_REWRITE | SO_DST | SO_SRC | SO_SPORT | SO_SIZE | SO_DSTMAC | SO_VLAN,
	.kernel_only = true,
	.build = icmp_build,
};
