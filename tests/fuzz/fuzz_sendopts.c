// SPDX-License-Identifier: GPL-2.0
/*
 * libFuzzer: a sender command's whole command line (send_opts_parse: every
 * shared option and its value, --engine and --backoff among them), one
 * argument per line, for a protocol that takes a destination and one that
 * takes capture files. Whatever it accepts must hold in range, --fail-if's
 * thresholds too.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "send/opts.h"
#include "util/log.h"

#define MAX_ARGS 24

static const struct xr_proto with_dst = { .name = "fuzz", .accepts = ~0U & ~SO_FILES };
static const struct xr_proto with_files = { .name = "fuzz", .accepts = ~0U & ~SO_DST };

static void no_usage(FILE *f, const struct xr_proto *p)
{
	(void)f;
	(void)p;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char buf[4096];
	char *argv[MAX_ARGS + 2] = { "fuzz" };
	struct send_opts so = { .cmd = "fuzz" };
	int argc = 1;

	xr_verbosity = -1;
	if (size < 1 || size >= sizeof(buf))
		return 0;
	memcpy(buf, data + 1, size - 1);
	buf[size - 1] = 0;
	for (char *s = buf, *nl; s && argc <= MAX_ARGS; s = nl) {
		nl = strchr(s, '\n');
		if (nl)
			*nl++ = 0;
		/* --token-file reads a file (fuzz_http has the token's parser): not from here */
		if (!strncmp(s, "--tok", 5))
			return 0;
		argv[argc++] = s;
	}
	argv[argc] = NULL;
	if (send_opts_parse(&so, data[0] & 1 ? &with_files : &with_dst, NULL, argc, argv,
			    no_usage) != -1)
		return 0;
	if (!so.ifname || so.threads < 1 || so.batch < 1 || so.batch > 256 ||
	    so.engine > SEND_ENGINE_XSK || so.backoff > SEND_BACKOFF_SKIP || so.shards < 1 ||
	    so.shard >= so.shards || (so.pace == XR_PACE_RATE && !(so.pps > 0 || so.rate_bps > 0)))
		__builtin_trap();
	/* --fail-if: a known metric, an operator, a finite value in range */
	if (so.fail_if.n > THR_MAX)
		__builtin_trap();
	for (unsigned int i = 0; i < so.fail_if.n; i++) {
		const struct threshold *t = &so.fail_if.t[i];

		if (!t->metric || t->op > THR_GE || !isfinite(t->value) || t->value < 0 ||
		    (t->metric->kind == THR_FRACTION && t->value > 1))
			__builtin_trap();
	}
	return 0;
}
