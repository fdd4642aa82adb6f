// SPDX-License-Identifier: GPL-2.0
/* The SYNs of gen syn and gen tcp (proto/syn/handshake.h). */
#include <errno.h>
#include <string.h>
#include <sys/random.h>
#include <netinet/in.h>
#include "proto/syn/handshake.h"
#include "send/opts.h"
#include "util/log.h"
#include "util/splitmix.h"

/* x with x * a == 1 mod 2^32, for odd a (Newton's iteration doubles the good bits). */
static uint32_t inverse32(uint32_t a)
{
	uint32_t x = a;

	for (int i = 0; i < 5; i++)
		x *= 2 - a * x;
	return x;
}

int syn_template(const struct send_opts *so, const struct iface *ifc, struct frameset *fs,
		 struct send_plan *plan, struct template_addr *ta, struct syn_isn *isn,
		 const char *what, double *planned, uint8_t flags)
{
	uint32_t l3len = so->net.dst.ipv6 ? 40 : 20, key[2], isn_step;
	struct template_frame t = { .net = &so->net,
				    .ta = ta,
				    .ifc = ifc,
				    .l4 = IPPROTO_TCP,
				    .tcp_flags = flags };
	struct rewrite_spec *spec;
	int err;

	err = template_addressing(&so->net, ifc, IPPROTO_TCP, NULL, 0, plan->specs, &plan->nspecs,
				  ta);
	if (err)
		return err;
	err = template_build(&t, fs);
	if (err)
		return err;
	/*
	 * ISN = base + n * step (step odd): distinct per n, and n comes back with
	 * the SYN-ACK. A random key, so that a run does not meet the last one's
	 * connections (TIME_WAIT) with the same ISNs; the shards of one run share
	 * theirs (--seed), or together they would not be one run.
	 */
	if (so->have_seed) {
		uint64_t state = so->seed, k = splitmix64(&state);

		key[0] = (uint32_t)k;
		key[1] = (uint32_t)(k >> 32);
	} else if (so->shards > 1) {
		pr_warn("--shard: the shards of one run must share its ISN key: give each the same "
			"--seed N (one random number for the run)\n");
		return -EINVAL;
	} else if (getrandom(key, sizeof(key), 0) != sizeof(key)) {
		key[0] = 0x9e3779b9, key[1] = 0x7f4a7c15;
	}
	isn_step = key[1] | 1;
	spec = &plan->specs[plan->nspecs++];
	memset(spec, 0, sizeof(*spec));
	snprintf(spec->text, sizeof(spec->text), "tcp.seq (ISN)");
	spec->op = (struct xr_op){ .kind = XR_OP_COUNTER,
				   .width = 4,
				   .flags = XR_OPF_BIG_ENDIAN,
				   .base = key[0],
				   .step = isn_step };
	spec->where = 0; /* absolute */
	spec->field_off = 14 + l3len + 4;
	*isn = (struct syn_isn){ .base = key[0], .inv = inverse32(isn_step), .step = isn_step };

	*planned = so->count				       ? (double)so->count :
		   so->pace == XR_PACE_RATE && so->duration_ns ? so->pps * so->duration_ns / 1e9 :
								 0;
	if (ta->tuples && *planned > ta->tuples)
		pr_warn("warning: %s: %.0f %s from a pool of %llu (source, port) pairs: pairs repeat, "
			"and a server still holding one in TIME_WAIT may refuse it; widen --src or "
			"--sport\n",
			so->cmd, *planned, what, (unsigned long long)ta->tuples);
	return 0;
}
