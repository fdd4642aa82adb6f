/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The SYNs of gen syn and gen tcp: one template from the source pool and
 * ports, and an ISN that is an invertible keyed function of the sequence
 * number n, so that n comes back with the SYN-ACK (ack - 1).
 */
#ifndef __XR_PROTO_HANDSHAKE_H
#define __XR_PROTO_HANDSHAKE_H

#include "proto/proto.h"
#include "frames/template.h"

struct send_opts;

/* ISN = base + n * step (step odd): n = (isn - base) * inv mod 2^32 */
struct syn_isn {
	uint32_t base, inv, step;
};

/*
 * The SYN template into fs, the source, port and ISN ops into plan, the
 * addressing into ta and the ISN's key into isn; what the run plans to send
 * into *planned (0: until stopped), with a warning when that is more than the
 * pool's (source, port) pairs (what names them: "SYNs", "sessions"). flags:
 * the segment's TCP flags (0x02, a SYN, but for gen syn --flags). 0 or -errno
 * after a one-line message.
 */
int syn_template(const struct send_opts *so, const struct iface *ifc, struct frameset *fs,
		 struct send_plan *plan, struct template_addr *ta, struct syn_isn *isn,
		 const char *what, double *planned, uint8_t flags);

#endif
