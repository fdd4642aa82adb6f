/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_REWRITE_H
#define __XR_REWRITE_H

#include <stdbool.h>
#include <stdint.h>
#include "frameset.h"
#include "xdpreplay.h"

struct rewrite_spec {
	char text[96];
	struct xr_op op;       /* kind, width, flags, step, modulus */
	int where;             /* absolute offset, the IPv4 ID, or into the L4 payload */
	unsigned int field_off;
};

/*
 * --rewrite FIELD=seq[%MOD] | FIELD+=STEP[%MOD]
 * FIELD: ip.id | u16be@OFF | u32be@OFF | u64be@OFF | u16le@OFF ... | payload@OFF:W
 * Returns 0, or -EINVAL after a one-line message.
 */
int rewrite_parse(const char *spec, struct rewrite_spec *out);
/* Resolves specs against every frame of fs into ops; -EINVAL naming the frame that does not fit. */
int rewrite_plan(const struct rewrite_spec *specs, int nspecs, const struct frameset *fs, struct xr_op *ops);
/* The reference: applies ops to frame f (the captured bytes) for sequence number n. */
void rewrite_apply(const struct xr_op *ops, int nops, uint8_t *f, uint32_t len, uint64_t n);

#endif
