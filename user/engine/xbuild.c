// SPDX-License-Identifier: GPL-2.0
/* The xsk engine's frames (engine/xbuild.h). */
#include <errno.h>
#include <sched.h>
#include <string.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/xbuild.h"
#include "engine/pacer.h"
#include "frames/rewrite.h"
#include "util/time.h"
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

/* Frame n's bytes into buf, the plan applied: its length, or 0 when it does not fit. */
static uint32_t copy_planned(const struct xbuild *b, uint64_t n, uint8_t *buf, uint32_t room)
{
	uint32_t len;
	bool unplanned;
	const uint8_t *src = frame_src(b, xbuild_index(b, n), &len, &unplanned);

	if (len > room)
		return 0;
	memcpy(buf, src, len);
	if (b->o->nops && !unplanned)
		rewrite_apply(b->o->ops, b->o->nops, buf, len, n);
	return len;
}

/* n's send time for the reply handler, as xr_gen stamps it (tag: the hook's) */
static void stamp(const struct xbuild *b, uint64_t n, uint16_t tag)
{
	struct xr_send_ts *t = &b->k->send_ts[n & b->ts_mask];

	t->answered = 0;
	t->tag = tag;
	t->n32 = n;
	t->ts_ns = now_ns();
}

static uint32_t build_plan(const struct xbuild *b, uint64_t n, uint8_t *buf, uint32_t room)
{
	uint32_t len = copy_planned(b, n, buf, room);

	if (len && b->stamp)
		stamp(b, n, 0);
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

	/* no builder loaded (a kernel without its helpers): the protocol said it builds all */
	if (!gs->gen_prog)
		return -EOPNOTSUPP;
	s->k_next = k;
	s->k_end = k + 1;
	if (bpf_prog_test_run_opts(bpf_program__fd(gs->gen_prog), &topts))
		return -errno;
	return topts.retval == XDP_TX ? (int)topts.data_size_out : 0;
}

/*
 * Without a frame builder (a kernel that lacks its helpers), the protocol
 * builds every frame itself: -EAGAIN is "not yet" (LoRaWAN's ring behind the
 * senders), tried again for up to a second, then the frame counts as not built
 */
static int build_waiting(const struct engine_proto *p, struct xr_gen_slot *s, uint64_t n,
			 uint8_t *buf, uint32_t len, uint16_t *tag)
{
	uint64_t until = now_ns() + 1000000000ULL;
	int err;

	while ((err = p->build(p->ctx, s, n, buf, len, tag)) == -EAGAIN && now_ns() < until)
		sched_yield();
	return err;
}

/*
 * The protocol's userspace share of the hook where it has one (the xsk
 * engine's fast path), the program in test mode for what it leaves
 */
static int build_hooked(const struct xbuild *b, struct xr_gen_slot *s, uint64_t k, uint64_t n,
			uint8_t *buf, uint32_t room)
{
	const struct engine_proto *p = b->o->proto;
	uint16_t tag = 0;
	uint32_t len;
	int err;

	/* the program keeps the plan's running values in the slot: a plan and a hook, it builds all */
	if (!p || !p->build || b->o->nops)
		return build_program(b, s, k, buf, room);
	len = copy_planned(b, n, buf, room);
	if (!len)
		err = -EINVAL;
	else if (b->k->gen_prog)
		err = p->build(p->ctx, s, n, buf, len, &tag);
	else
		err = build_waiting(p, s, n, buf, len, &tag);
	if (err == -EAGAIN && b->k->gen_prog)
		return build_program(b, s, k, buf, room);
	/* the sequence number is used up either way, as the program's would be */
	s->k_next = k + 1;
	if (err) {
		s->bad_frame++;
		return 0;
	}
	s->tx++;
	if (b->stamp)
		stamp(b, n, tag);
	return len;
}

int xbuild_frame(const struct xbuild *b, struct xr_gen_slot *s, uint64_t k, uint64_t n,
		 uint8_t *buf, uint32_t room)
{
	uint32_t len;

	if (b->mode == XB_PROGRAM)
		return build_hooked(b, s, k, n, buf, room);
	/* the slot moves on as the program's would: a protocol's helper may watch it */
	s->k_next = k + 1;
	len = build_plan(b, n, buf, room);
	if (!len)
		s->bad_frame++;
	return len;
}

int xbuild_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns,
		      size_t count, uint8_t *out, uint32_t *out_len, uint64_t *here)
{
	int cpu = engine_slot_cpu();
	struct gen_session k;
	struct xr_gen_slot *s;
	struct xbuild b;
	int err, len;

	err = session_open(&k, ifc, o->fs, NULL, 0, o,
			   o->hook == XR_HOOK_NONE ? SESSION_MAPS : SESSION_BUILD);
	if (err)
		return err;
	err = pin_to_cpu(cpu);
	xbuild_init(&b, o, &k);
	s = &k.slots[cpu];
	*here = 0;
	for (size_t i = 0; i < count && !err; i++) {
		memset(s, 0, sizeof(*s));
		slot_ops_init(s, o->ops, o->nops, ns[i], 1);
		if (o->proto && o->proto->frame)
			o->proto->frame(o->proto->ctx, ns[i]);
		/* the program's path sets k_end one past the frame; the protocol's leaves it */
		s->k_end = 0;
		len = xbuild_frame(&b, s, ns[i], ns[i], out + i * XR_MAX_FRAME, XR_MAX_FRAME);
		if (len < 0)
			err = len;
		out_len[i] = len > 0 ? len : 0;
		*here += len > 0 && !s->k_end;
	}
	session_close(&k);
	return err;
}
