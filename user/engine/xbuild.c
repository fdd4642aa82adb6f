// SPDX-License-Identifier: GPL-2.0
/* The xsk engine's frames (engine/xbuild.h). */
#include <errno.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/xbuild.h"
#include "engine/pacer.h"
#include "frames/rewrite.h"
#include "gen.skel.h"

void xbuild_init(struct xbuild *b, const struct engine_opts *o, struct gen_session *k)
{
	*b = (struct xbuild){
		.o = o,
		.k = k,
		.nframes = o->fs->n,
		.frame_div = o->frame_div,
		.ts_mask = o->ts_mask ? o->ts_mask : XR_TS_RING - 1,
		.stamp = k && o->reply_kind != XR_REPLY_NONE,
		.fs = o->fs,
	};
	if (!engine_builds_frames(o))
		b->mode = XB_DESC;
	else
		b->mode = k && o->hook != XR_HOOK_NONE ? XB_PROGRAM : XB_PLAN;
	b->copy = k ? k->skel->rodata->cfg.copy : true;
}

/* Frame i's bytes, length and whether the plan skips it, from the session's maps or the frame set. */
static const uint8_t *frame_src(const struct xbuild *b, uint64_t i, uint32_t *len, bool *unplanned)
{
	const struct gen_session *k = b->k;
	const struct xr_frame *f;

	if (!k) {
		*len = b->fs->frames[i].len;
		*unplanned = frameset_unplanned(b->fs, i);
		return b->fs->bytes + b->fs->frames[i].off;
	}
	f = &k->frames[b->copy ? i : 0];
	*len = f->len;
	*unplanned = f->flags & XR_FRAME_UNPLANNED;
	return b->copy ? k->data + (size_t)f->chunk * XR_CHUNK_VALUE + f->off : k->tmpl;
}

static uint32_t build_plan(const struct xbuild *b, uint64_t n, uint8_t *buf, uint32_t room)
{
	uint32_t len;
	bool unplanned;
	const uint8_t *src = frame_src(b, xbuild_index(b, n), &len, &unplanned);

	if (len > room)
		return 0;
	memcpy(buf, src, len);
	if (b->o->nops && !unplanned)
		rewrite_apply(b->o->ops, b->o->nops, buf, len, n);
	if (b->stamp) {
		struct xr_send_ts *t = &b->k->send_ts[n & b->ts_mask];

		t->answered = 0;
		t->tag = 0;
		t->n32 = n;
		t->ts_ns = now_ns();
	}
	return len;
}

/*
 * xr_gen in test mode builds the slot's next frame: k_end one past it makes
 * the program take exactly that sequence number, with its running plan
 * values, the protocol's hook and the stamp as in a live-frames run.
 */
static int build_program(const struct xbuild *b, struct xr_gen_slot *s, uint64_t k, uint8_t *buf,
			 uint32_t room)
{
	struct gen_session *gs = b->k;
	struct xdp_md ctx = { .data_end = gs->tmpl_len, .ingress_ifindex = gs->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = gs->tmpl, .data_size_in = gs->tmpl_len,
		    .data_out = buf, .data_size_out = room, .ctx_in = &ctx,
		    .ctx_size_in = sizeof(ctx), .repeat = 1);

	s->k_next = k;
	s->k_end = k + 1;
	if (bpf_prog_test_run_opts(bpf_program__fd(gs->skel->progs.xr_gen), &topts))
		return -errno;
	return topts.retval == XDP_TX ? (int)topts.data_size_out : 0;
}

int xbuild_frame(const struct xbuild *b, struct xr_gen_slot *s, uint64_t k, uint64_t n,
		 uint8_t *buf, uint32_t room)
{
	uint32_t len;

	if (b->mode == XB_PROGRAM)
		return build_program(b, s, k, buf, room);
	/* the slot moves on as the program's would: a protocol's helper may watch it */
	s->k_next = k + 1;
	len = build_plan(b, n, buf, room);
	if (!len)
		s->bad_frame++;
	return len;
}
