// SPDX-License-Identifier: GPL-2.0
/*
 * The gen program's session (engine/session.h): what the kernel engine and
 * the xsk engine share, from loading xr_gen to reading the replies.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/session.h"
#include "util/time.h"
#include "frames/rewrite.h"
#include "util/log.h"
#include "gen.skel.h"

void session_close(struct gen_session *k)
{
	bpf_link__destroy(k->replies);
	bpf_link__destroy(k->hold);
	if (k->hold_netns_fd > 0)
		close(k->hold_netns_fd);
	for (int i = 0; i < 2; i++)
		bpf_link__destroy(k->links[i]);
	if (k->slots)
		munmap(k->slots, k->slots_sz);
	if (k->frames)
		munmap(k->frames, k->frames_sz);
	if (k->data)
		munmap(k->data, k->data_sz);
	if (k->send_ts)
		munmap(k->send_ts, k->send_ts_sz);
	if (k->proto && k->proto->close)
		k->proto->close(k->proto->ctx);
	gen_bpf__destroy(k->skel);
	free(k->tmpl);
	free(k->at_sec);
	memset(k, 0, sizeof(*k));
}

/* Frames in chunks of the frame_data map: a frame starts below XR_CHUNK_SIZE. 0 or -E2BIG. */
static int chunks_needed(const struct frameset *fs, uint64_t *nchunks)
{
	uint64_t off = 0;

	*nchunks = 1;
	for (size_t i = 0; i < fs->n; i++) {
		if (off >= XR_CHUNK_SIZE) {
			(*nchunks)++;
			off = 0;
		}
		off += fs->frames[i].len;
	}
	if (fs->n > UINT32_MAX || *nchunks > UINT32_MAX / XR_CHUNK_VALUE) {
		pr_warn("frame set too large for the gen program (%zu frames)\n", fs->n);
		return -E2BIG;
	}
	return 0;
}

static void frames_lay_out(struct gen_session *k, const struct frameset *fs)
{
	uint32_t chunk = 0;
	uint64_t off = 0;

	for (size_t i = 0; i < fs->n; i++) {
		const struct fs_frame *f = &fs->frames[i];

		if (off >= XR_CHUNK_SIZE) {
			chunk++;
			off = 0;
		}
		memcpy(k->data + (size_t)chunk * XR_CHUNK_VALUE + off, fs->bytes + f->off, f->len);
		k->frames[i] = (struct xr_frame){
			.chunk = chunk,
			.off = off,
			.len = f->len,
			.flags = frameset_unplanned(fs, i) ? XR_FRAME_UNPLANNED : 0,
			.ts_ns = f->ts_ns,
		};
		off += f->len;
	}
}

static void cfg_set(struct gen_session *k, const struct iface *ifc, const struct frameset *fs,
		    const struct engine_opts *o, bool copy, enum session_use use)
{
	k->skel->rodata->cfg = (struct xr_gen_cfg){
		.nframes = k->nframes,
		.ifindex = ifc->ifindex,
		.netns_ino = ifc->netns_ino,
		.copy = copy,
		/* a builder makes the frame it is asked for: the sender paces */
		.pace = o && use == SESSION_LIVE ? o->pace : XR_PACE_NONE,
		.nthreads = o ? o->threads : 1,
		.shards = o ? o->shards : 0,
		.shard = o ? o->shard : 0,
		.span_ns = fs ? fs->span_ns : 0,
		.mult_milli = o && o->pace == XR_PACE_PCAP ?
				      (uint64_t)(o->multiplier * 1000 + 0.5) :
				      1000,
		.nops = o ? o->nops : 0,
		.stamp = o ? o->reply_kind != XR_REPLY_NONE : 0,
		.first_n = o ? o->first_n : 0,
		.frame_div = o && o->frame_div > 1 ? o->frame_div : 1,
		.ts_mask = o && o->ts_mask ? o->ts_mask : XR_TS_RING - 1,
		.hook = o ? o->hook : XR_HOOK_NONE,
		.reply_kind = o ? o->reply_kind : XR_REPLY_NONE,
		.backoff = o ? o->backoff : XR_BACKOFF_SKIP,
	};
	if (o)
		k->skel->rodata->cfg.rpl = o->rpl;
}

static int maps_map(struct gen_session *k)
{
	k->slots = engine_map_mmap(k->skel->maps.slots, &k->slots_sz);
	k->frames = engine_map_mmap(k->skel->maps.frames, &k->frames_sz);
	k->data = engine_map_mmap(k->skel->maps.frame_data, &k->data_sz);
	k->send_ts = engine_map_mmap(k->skel->maps.send_ts, &k->send_ts_sz);
	if (!k->slots || !k->frames || !k->data || !k->send_ts) {
		pr_warn("cannot mmap the frame set maps: %s\n", strerror(errno));
		return -errno;
	}
	return 0;
}

static int tracepoints_attach(struct gen_session *k)
{
	k->links[0] = bpf_program__attach(k->skel->progs.xr_xmit);
	k->links[1] = bpf_program__attach(k->skel->progs.xr_redirect_err);
	if (k->links[0] && k->links[1])
		return 0;
	pr_warn("cannot attach the xdp_devmap_xmit/xdp_redirect_err tracepoints that account for "
		"sent frames: %s\n",
		strerror(errno));
	return -errno;
}

/* The helpers of XR_NEEDS_*, and the first kernel that has each. */
static const struct {
	unsigned int need;
	enum bpf_func_id helper;
	const char *name, *since;
} helpers[] = {
	{ XR_NEEDS_LOOP, BPF_FUNC_loop, "bpf_loop", "5.17" },
	{ XR_NEEDS_XDP_BYTES, BPF_FUNC_xdp_store_bytes, "bpf_xdp_store_bytes", "5.18" },
};

/* The first helper of needs this kernel lacks, or -1 */
static int helper_missing(unsigned int needs)
{
	for (size_t i = 0; i < sizeof(helpers) / sizeof(helpers[0]); i++)
		if ((needs & helpers[i].need) &&
		    libbpf_probe_bpf_helper(BPF_PROG_TYPE_XDP, helpers[i].helper, NULL) == 0)
			return i;
	return -1;
}

/*
 * -EOPNOTSUPP for prog, which needs helper i, said in one line naming the
 * helper and the first kernel with it (unless quiet: the probe's row says it)
 */
static int helper_refuse(int i, const char *prog, bool quiet)
{
	if (!quiet)
		pr_warn("cannot load %s: this kernel lacks %s, which came in Linux %s\n", prog,
			helpers[i].name, helpers[i].since);
	return -EOPNOTSUPP;
}

/* The protocol's answers before load (engine_proto): no protocol, or no answer, says no */
static bool builds_every_frame(const struct engine_opts *o)
{
	const struct engine_proto *p = o ? o->proto : NULL;

	return p && p->builds_every_frame && p->builds_every_frame(p->ctx);
}

static bool answers_unread_ok(const struct engine_opts *o)
{
	const struct engine_proto *p = o ? o->proto : NULL;

	return p && p->answers_unread_ok && p->answers_unread_ok(p->ctx);
}

/*
 * The frame builder (xr_build) where this kernel has its helpers; where not,
 * none when the protocol finishes every frame in userspace (and no plan is
 * left for the program), said in one line. 0 or -EOPNOTSUPP, said.
 */
static int builder_choose(struct gen_session *k, const struct engine_opts *o, bool quiet)
{
	int i = helper_missing(XR_BUILD_NEEDS);

	if (i < 0)
		return 0;
	if (o && !o->nops && builds_every_frame(o)) {
		bpf_program__set_autoload(k->skel->progs.xr_build, false);
		k->gen_prog = NULL;
		if (!quiet)
			pr_warn("warning: this kernel lacks %s (Linux %s): every frame is finished "
				"in userspace, without the frame builder (xr_build)\n",
				helpers[i].name, helpers[i].since);
		return 0;
	}
	return helper_refuse(i, "the frame builder (xr_build)", quiet);
}

/*
 * The run's reply program where this kernel has its helpers; where not, the
 * kind's lighter one when the run can do without what it leaves out, said in
 * one line. The program's name, or NULL with -EOPNOTSUPP in *err, said.
 */
static const char *replies_choose(const struct engine_opts *o, unsigned int kind, bool quiet,
				  int *err)
{
	static const char *const names[] = XR_REPLY_PROGS, *const lite[] = XR_REPLY_PROGS_LITE,
				 *const leaves[] = XR_REPLY_LITE_LEAVES;
	static const unsigned int needs[] = XR_REPLY_NEEDS;
	unsigned int need = kind < sizeof(needs) / sizeof(needs[0]) ? needs[kind] : 0;
	int i = helper_missing(need);

	*err = 0;
	if (i < 0)
		return names[kind];
	if (kind < sizeof(lite) / sizeof(lite[0]) && lite[kind] && answers_unread_ok(o)) {
		if (!quiet)
			pr_warn("warning: this kernel lacks %s (Linux %s): %s (%s)\n",
				helpers[i].name, helpers[i].since, leaves[kind], lite[kind]);
		return lite[kind];
	}
	*err = helper_refuse(i, names[kind], quiet);
	return NULL;
}

/*
 * The programs a session loads: the frame builder for its use, and only the
 * run's reply program, since another kind's may not pass this kernel's
 * verifier. 0, or -EOPNOTSUPP (helper_refuse).
 */
static int programs_choose(struct gen_session *k, const struct engine_opts *o, enum session_use use)
{
	static const char *const names[] = XR_REPLY_PROGS;
	unsigned int kind = o ? o->reply_kind : XR_REPLY_NONE;
	bool quiet = !o || o->quiet_load;
	const char *replies;
	int err;

	k->gen_prog = k->skel->progs.xr_gen;
	if (use != SESSION_LIVE) {
		/* the transmit tracepoints account for live frames alone */
		bpf_program__set_autoload(k->skel->progs.xr_xmit, false);
		bpf_program__set_autoload(k->skel->progs.xr_redirect_err, false);
		bpf_program__set_autoload(k->skel->progs.xr_gen, false);
		bpf_program__set_autoload(k->skel->progs.xr_build, use == SESSION_BUILD);
		k->gen_prog = use == SESSION_BUILD ? k->skel->progs.xr_build : NULL;
	}
	if (use == SESSION_BUILD) {
		err = builder_choose(k, o, quiet);
		if (err)
			return err;
	}
	if (kind >= sizeof(names) / sizeof(names[0]) || !names[kind])
		return 0;
	replies = replies_choose(o, kind, quiet, &err);
	if (err)
		return err;
	k->replies_prog = bpf_object__find_program_by_name(k->skel->obj, replies);
	if (k->replies_prog)
		bpf_program__set_autoload(k->replies_prog, true);
	return 0;
}

/* Why the gen object did not load, in one line: privileges, the verifier's refusal or its limit. */
static void load_refusal(int err)
{
	const char *prog = xr_log_failed_prog();

	if (err == -EPERM)
		pr_warn("cannot load %s: this process may not load BPF: it needs CAP_BPF and "
			"CAP_NET_ADMIN\n",
			prog);
	else if (err == -E2BIG)
		pr_warn("cannot load %s: too complex for this kernel's verifier (it gave up at a "
			"million instructions); docs/kernels.md says which kernels take it\n",
			prog);
	else if (err == -EACCES)
		pr_warn("cannot load %s: this kernel's verifier refused it (-vv shows its log; "
			"docs/kernels.md says which kernels take it)\n",
			prog);
	else
		pr_warn("cannot load %s: %s (run with -vv for the verifier log)\n", prog,
			strerror(-err));
}

int session_open(struct gen_session *k, const struct iface *ifc, const struct frameset *fs,
		 const uint8_t *tmpl, uint32_t tmpl_len, const struct engine_opts *o,
		 enum session_use use)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	const struct engine_proto *proto = o ? o->proto : NULL;
	/* one frame stays in the page pool's pages as data_in put it; more are copied in */
	bool copy = (fs && fs->n > 1) || (o && o->copy_always);
	uint64_t nchunks = 1;
	int err;

	memset(k, 0, sizeof(*k));
	k->ifindex = ifc->ifindex;
	k->skel = gen_bpf__open();
	if (!k->skel) {
		err = -errno;
		pr_warn("cannot open the gen program's BPF object: %s\n", strerror(-err));
		return err;
	}
	err = programs_choose(k, o, use);
	if (err)
		goto err;
	err = engine_hists_size(k->skel->obj);
	if (err)
		goto err;
	k->nframes = fs ? fs->n : 1;
	if (copy) {
		err = chunks_needed(fs, &nchunks);
		if (err)
			goto err;
		bpf_map__set_max_entries(k->skel->maps.frames, fs->n);
		bpf_map__set_max_entries(k->skel->maps.frame_data, nchunks);
	}
	cfg_set(k, ifc, fs, o, copy, use);
	if (proto && proto->before_load) {
		err = proto->before_load(proto->ctx, k->skel, o);
		if (err)
			goto err;
	}
	if (o) {
		memcpy(k->skel->rodata->cfg.ops, o->ops, sizeof(o->ops));
		if (!copy && fs && o->nops)
			rewrite_nocopy(k->skel->rodata->cfg.ops, o->nops,
				       fs->bytes + fs->frames[0].off, fs->frames[0].len,
				       &k->skel->rodata->cfg.nc);
	}
	if (!k->skel->rodata->cfg.mult_milli)
		k->skel->rodata->cfg.mult_milli = 1;
	xr_log_failed_prog_clear();
	err = gen_bpf__load(k->skel);
	if (err) {
		/* the probe says what a failure means in its own words */
		if (o && !o->quiet_load)
			load_refusal(err);
		goto err;
	}
	if (k->gen_prog &&
	    bpf_obj_get_info_by_fd(bpf_program__fd(k->gen_prog), &info, &info_len) == 0)
		k->skel->bss->gen_prog_id = info.id;
	k->skel->bss->owner_tgid = getpid();
	err = maps_map(k);
	if (err)
		goto err;
	if (copy)
		frames_lay_out(k, fs);
	else if (fs)
		k->frames[0] = (struct xr_frame){ .len = fs->frames[0].len, .ts_ns = 0 };
	/* from here session_close also closes the protocol's part */
	k->proto = proto;
	if (proto && proto->after_load) {
		err = proto->after_load(proto->ctx, k->skel, o);
		if (err)
			goto err;
	}
	/* the page pool starts every page as a copy of data_in */
	k->tmpl_len = tmpl ? tmpl_len : fs->max_len;
	k->tmpl = calloc(1, k->tmpl_len);
	if (!k->tmpl) {
		err = -ENOMEM;
		goto err;
	}
	if (tmpl)
		memcpy(k->tmpl, tmpl, tmpl_len);
	else if (!copy)
		memcpy(k->tmpl, fs->bytes + fs->frames[0].off, fs->frames[0].len);
	if (use == SESSION_LIVE) {
		err = tracepoints_attach(k);
		if (err)
			goto err;
	}
	return 0;
err:
	session_close(k);
	return err;
}

bool session_bpf_refused(void)
{
	/* r0 = XDP_PASS; exit */
	const struct bpf_insn pass[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_PASS },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", pass, 2, NULL);

	if (fd >= 0) {
		close(fd);
		return false;
	}
	return errno == EPERM;
}

/* (n * step) mod modulus for op, without overflow; modulus 0 wraps at 2^64 */
static uint64_t op_mulmod(const struct xr_op *op, uint64_t n)
{
	if (!op->modulus)
		return n * op->step;
	return (unsigned __int128)n * op->step % op->modulus;
}

/*
 * The running values of a slot whose next sequence number is n, each next
 * one `stride` further on (see struct xr_gen_slot).
 */
void slot_ops_init(struct xr_gen_slot *s, const struct xr_op *ops, unsigned int nops, uint64_t n,
		   uint64_t stride)
{
	for (unsigned int i = 0; i < nops && i < XR_MAX_OPS; i++) {
		s->op_val[i] = op_mulmod(&ops[i], n);
		s->op_inc[i] = op_mulmod(&ops[i], stride);
	}
}

void session_slots_init(struct gen_session *k, const struct engine_opts *o)
{
	k->nthreads = o->threads;
	k->cpus = o->cpus;
	for (unsigned int i = 0; i < o->threads; i++) {
		struct xr_gen_slot *s = &k->slots[o->cpus[i]];

		memset(s, 0, sizeof(*s));
		s->thread = i;
		slot_ops_init(s, o->ops, o->nops, engine_seq(o, i, 0),
			      (uint64_t)o->threads * (o->shards > 1 ? o->shards : 1));
	}
}

int session_replies_attach(struct gen_session *k, const struct engine_opts *o)
{
	int err;

	if (!k->replies_prog)
		return 0;
	k->replies = bpf_program__attach_xdp(k->replies_prog, o->ifc->ifindex);
	if (k->replies)
		return 0;
	err = -errno;
	pr_warn("cannot attach the reply counter to %s: %s%s\n", o->ifc->name, strerror(-err),
		err == -EBUSY || err == -EEXIST ? " (another XDP program is attached)" : "");
	return err;
}

uint64_t session_gate_take(struct gen_session *k, const struct engine_opts *o, uint64_t want,
			   uint64_t lost)
{
	uint64_t ended = o->proto->ended(o->proto->ctx), a, open, room, take, peak;

	a = atomic_load(&k->admitted);
	do {
		open = a > lost + ended ? a - lost - ended : 0;
		room = open < o->concurrency ? o->concurrency - open : 0;
		take = want < room ? want : room;
	} while (take && !atomic_compare_exchange_weak(&k->admitted, &a, a + take));
	open += take;
	peak = atomic_load(&k->open_peak);
	while (open > peak && !atomic_compare_exchange_weak(&k->open_peak, &peak, open))
		;
	if (!take)
		atomic_fetch_add(&k->gate_waits, 1);
	return take;
}

uint64_t engine_shard_count(uint64_t count, unsigned int shard, unsigned int shards, uint64_t unit)
{
	uint64_t units, mine;

	if (shards <= 1 || count == XR_FOREVER)
		return count;
	if (unit < 1)
		unit = 1;
	/* whole units go round the shards; a last, partial one is the next shard's */
	units = count / unit;
	mine = units > shard ? (units - shard + shards - 1) / shards : 0;
	return mine * unit + (units % shards == shard ? count % unit : 0);
}
