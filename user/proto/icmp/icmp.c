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
	int err;

	err = template_stamped(&so->net, ifc, IPPROTO_ICMP, &ids, fs, plan->specs, &plan->nspecs);
	if (err)
		return err;
	return rewrite_parse("icmp.seq=seq", &plan->specs[plan->nspecs++]) ? -EINVAL : 0;
}

const struct xr_proto proto_icmp = {
	.name = "icmp",
	.gen = true,
	.summary = "ICMP echo requests (ICMPv6 for IPv6), sequence number n, n in the payload",
	.accepts = SO_REWRITE | SO_DST | SO_SRC | SO_SPORT | SO_SIZE | SO_DSTMAC | SO_VLAN,
	.build = icmp_build,
	.frames_are = "echo requests",
};
