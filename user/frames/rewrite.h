/* SPDX-License-Identifier: GPL-2.0 */
#ifndef __XR_REWRITE_H
#define __XR_REWRITE_H

#include <stdbool.h>
#include <stdint.h>
#include "frames/addr.h"
#include "frames/frameset.h"
#include "xdpreplay.h"

/* --rewrite specs a command line may give: per-packet ops (XR_MAX_OPS), constants, csum=auto */
#define XR_MAX_USER_SPECS 16

struct rewrite_spec {
	char text[96];
	struct xr_op op; /* kind, width, flags, base, step, modulus */
	int where; /* a named field, an absolute offset, or into the L4 payload */
	unsigned int field_off;
	uint8_t proto; /* udp.* / tcp.*: the protocol the frame must carry */
	bool csum_only; /* csum=auto: checks that the frames are IP, adds no op */
	bool constant; /* FIELD=CONST: written once into the frames (rewrite_constants) */
	bool applied; /* ... which it was: no op in the plan */
	bool ip6_check; /* ip6.*: the frames' upper 64 address bits must be the prefix's */
	uint8_t ip6_high[8];
};

/*
 * --rewrite FIELD=seq[%MOD] | FIELD+=STEP[%MOD] | ADDRFIELD=RANGE | PORTFIELD=LO-HI | csum=auto
 * FIELD: ip.id ip.src ip.dst ip6.src ip6.dst udp.sport udp.dport tcp.sport tcp.dport
 *        u8@OFF u16be@OFF u32be@OFF u64be@OFF (le: little-endian) payload@OFF:W
 * RANGE: A.B.C.D, A.B.C.D/P, A.B.C.D-E.F.G.H; for IPv6 PREFIX/P with P >= 64.
 * Returns 0, or -EINVAL after a one-line message.
 */
int rewrite_parse(const char *spec, struct rewrite_spec *out);
/* The same for a spec made from another option (opt, e.g. "--src"): errors name it and its value. */
int rewrite_parse_opt(const char *spec, const char *opt, struct rewrite_spec *out);
/* Specs from typed values (gen's --src and --sport): the ops rewrite_parse makes of FIELD=RANGE. */
void rewrite_spec_src(struct rewrite_spec *sp, const struct addr_range *r);
/* the port is base + (n / divisor) mod the range's size */
void rewrite_spec_sport(struct rewrite_spec *sp, uint8_t proto, const struct port_range *p,
			uint64_t divisor);
/*
 * --misfit skip: leaves out of fs the frames the specs do not fit, or that are
 * laid out unlike the first that fits (one plan serves all). The number left out.
 */
size_t rewrite_keep_fitting(const struct rewrite_spec *specs, int nspecs, struct frameset *fs);
/* --misfit send: the same frames, marked in fs->unplanned to go as they are. The number marked. */
size_t rewrite_mark_unfit(const struct rewrite_spec *specs, int nspecs, struct frameset *fs);
/*
 * Writes the FIELD=CONST specs into every frame of fs (checksums fixed), once,
 * and marks them applied: rewrite_plan then leaves them out. The number
 * written, or -EINVAL naming the frame one does not fit.
 */
int rewrite_constants(struct rewrite_spec *specs, int nspecs, struct frameset *fs);
/* Resolves specs against every frame of fs into ops; the number of ops, or -EINVAL naming the frame that does not fit. */
int rewrite_plan(const struct rewrite_spec *specs, int nspecs, const struct frameset *fs,
		 struct xr_op *ops);
/* For a single-frame set sent without copying: the template's words and checksums into ops and nc. */
void rewrite_nocopy(struct xr_op *ops, int nops, const uint8_t *frame, uint32_t len,
		    struct xr_nocopy *nc);
/* The reference: applies ops to frame f (the captured bytes) for sequence number n. */
void rewrite_apply(const struct xr_op *ops, int nops, uint8_t *f, uint32_t len, uint64_t n);

#endif
