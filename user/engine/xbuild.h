/* SPDX-License-Identifier: GPL-2.0 */
/*
 * How the xsk engine makes the frame of sequence number n, the same frame the
 * kernel engine's program would: a descriptor onto the frame as captured, the
 * plan applied by the userspace reference (frames/rewrite.c, which selftest
 * holds byte for byte against the BPF), or, for a protocol's per-packet hook,
 * xr_gen itself run in test mode into the frame's buffer.
 */
#ifndef __XR_ENGINE_XBUILD_H
#define __XR_ENGINE_XBUILD_H

#include "engine/session.h"

enum xbuild_mode {
	XB_DESC, /* frames go as they are: a descriptor points at the frame's own chunk */
	XB_PLAN, /* copied into a buffer, the plan applied (and the send time stamped) here */
	XB_PROGRAM, /* xr_gen builds it in test mode (plan, hook and stamp in BPF) */
};

struct xbuild {
	enum xbuild_mode mode;
	const struct engine_opts *o;
	struct gen_session *k; /* XB_PLAN, XB_PROGRAM; NULL: no program may be loaded here */
	const struct frameset *fs; /* XB_PLAN without a session: the frames as loaded */
	uint64_t nframes, frame_div;
	uint32_t ts_mask;
	bool stamp, copy;
};

/*
 * The mode o needs, and the session it builds from: NULL for XB_DESC, and for
 * XB_PLAN where no BPF may be loaded (the frames then come from o->fs).
 */
void xbuild_init(struct xbuild *b, const struct engine_opts *o, struct gen_session *k);

/*
 * Frame n (the thread's k-th, slot s) into buf of room bytes: its length; 0
 * when it could not be built (counted in s->bad_frame); -errno when the
 * program could not be run at all.
 */
int xbuild_frame(const struct xbuild *b, struct xr_gen_slot *s, uint64_t k, uint64_t n,
		 uint8_t *buf, uint32_t room);

/*
 * The xsk engine's frames of sequence numbers ns as a run builds them (one
 * thread, nothing sent), each XR_MAX_FRAME bytes apart in out, out_len[i]
 * their lengths (0: not built); *here: how many the protocol finished in
 * userspace rather than the program. For the tests. 0 or -errno.
 */
int xbuild_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns,
		      size_t count, uint8_t *out, uint32_t *out_len, uint64_t *here);

/* Frame n's index in the frame set. */
static inline uint64_t xbuild_index(const struct xbuild *b, uint64_t n)
{
	return (b->frame_div > 1 ? n / b->frame_div : n) % b->nframes;
}

static inline const char *xbuild_mode_name(enum xbuild_mode m)
{
	return m == XB_DESC ? "frames as they are" :
	       m == XB_PLAN ? "plan applied in userspace" :
			      "built by the gen program in test mode";
}

#endif
