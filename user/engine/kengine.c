// SPDX-License-Identifier: GPL-2.0
/*
 * Kernel engine: one pinned thread per CPU, each calling BPF_PROG_RUN in
 * live-frames mode on xr_gen (bpf/gen.bpf.c).
 *
 * Pacing. A BPF_PROG_RUN call with repeat >= 32 costs ~25 ms of set-up, one
 * with repeat < 32 about 12 us (PLATFORM.md). So:
 *  - top speed: few long calls (repeat = what is left, or 2^30);
 *  - low rates: the thread sleeps (clock_nanosleep, absolute) until the next
 *    frame is due and sends what is due in one short call (<= 31 frames), so
 *    CPU use grows with the rate;
 *  - high rates: one long call; the program itself holds each frame until
 *    its departure time (XDP_DROP without using a sequence number), and the
 *    control thread interrupts the call with a signal when the thread is done.
 * Departure times are a pure function of the sequence number in both the
 * program and here, so catching up after a late wake-up never drifts.
 *
 * The XDP dispatcher. Every XDP BPF_PROG_RUN call adds the program to the
 * kernel's XDP dispatcher and removes it at the end; each change rewrites the
 * dispatcher's code (text_poke, IPIs to every CPU). Measured here: 350 us per
 * call at 10k calls/s, a whole core of system time. While the program stays
 * attached somewhere the change is a reference count: 12 us per call. So the
 * engine attaches xr_gen (generic mode) to the loopback device of a private
 * network namespace that only a short-lived thread of ours ever enters; no
 * traffic flows there, nobody else sees it, and it goes away with us.
 */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "proto/lorawan/aesni.h"
#include "engine/engine.h"
#include "proto/lorawan/lorawan.h"
#include "engine/pacer.h"
#include "frames/rewrite.h"
#include "util/log.h"
#include "engine/meter.h"
#include "util/units.h"
#include "gen.skel.h"

#define SHORT_RUN_MAX 31              /* repeat below 32 avoids the slow set-up */
#define LONG_RUN_MAX (1 << 30)
#define USER_PACED_MAX_PPS 500000.0   /* per thread; above it the program paces */
#define POLL_NS 1000000ULL            /* control loop period */
/*
 * Low-rate pacing wakes at most this often and then sends all that is due:
 * fewer, fuller calls, at the price of frames leaving up to this much late.
 */
#define USER_PACED_TICK_NS 100000ULL

volatile sig_atomic_t xr_stop;

struct kengine {
	struct gen_bpf *skel;
	struct bpf_link *links[2];
	struct bpf_link *hold;  /* keeps xr_gen in the XDP dispatcher */
	struct bpf_link *replies; /* xr_replies on the interface */
	int hold_netns_fd;
	struct xr_gen_slot *slots;
	struct xr_frame *frames;
	uint8_t *data;
	size_t slots_sz, frames_sz, data_sz;
	uint64_t *gw_acks;
	size_t gw_acks_sz;
	struct xr_lora_dev *devs;     /* LoRaWAN: the device records, also read by the producer */
	size_t devs_sz;
	struct xr_lora_ring_slot *ring; /* LoRaWAN: uplinks precomputed for the program */
	size_t ring_sz;
	const struct lw_fleet *lora;
	uint64_t nframes;
	uint8_t *tmpl;
	uint32_t tmpl_len;
	int ifindex;
};

struct sender {
	struct kengine *k;
	const struct engine_opts *o;
	pthread_t tid;
	int cpu;
	unsigned int thread;
	bool user_paced;
	struct pacer pacer;
	uint64_t calls, call_ns; /* BPF_PROG_RUN calls and the time spent in them */
	volatile bool done;
	int err;
};

static size_t page_round(size_t sz)
{
	size_t pg = sysconf(_SC_PAGESIZE);

	return (sz + pg - 1) / pg * pg;
}

static void *map_mmap(struct bpf_map *map, size_t *sz)
{
	void *p;

	*sz = page_round((size_t)bpf_map__value_size(map) * bpf_map__max_entries(map));
	p = mmap(NULL, *sz, PROT_READ | PROT_WRITE, MAP_SHARED, bpf_map__fd(map), 0);
	return p == MAP_FAILED ? NULL : p;
}

struct hold_args {
	struct kengine *k;
	int err;
};

static void *hold_main(void *arg)
{
	struct hold_args *h = arg;
	struct kengine *k = h->k;

	/* only this thread moves to the new namespace; it ends right after */
	if (unshare(CLONE_NEWNET)) {
		h->err = -errno;
		return NULL;
	}
	k->hold_netns_fd = open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
	if (k->hold_netns_fd < 0) {
		h->err = -errno;
		return NULL;
	}
	k->hold = bpf_program__attach_xdp(k->skel->progs.xr_gen, 1 /* lo */);
	if (!k->hold)
		h->err = -errno;
	return NULL;
}

static void hold_dispatcher(struct kengine *k)
{
	struct hold_args h = { .k = k };
	pthread_t tid;

	if (pthread_create(&tid, NULL, hold_main, &h) || pthread_join(tid, NULL))
		h.err = -EAGAIN;
	if (h.err)
		pr_debug("cannot hold the XDP dispatcher (%s): each BPF_PROG_RUN call will cost more\n",
			 strerror(-h.err));
}

static void kengine_close(struct kengine *k)
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
	if (k->gw_acks)
		munmap(k->gw_acks, k->gw_acks_sz);
	if (k->devs)
		munmap(k->devs, k->devs_sz);
	if (k->ring)
		munmap(k->ring, k->ring_sz);
	gen_bpf__destroy(k->skel);
	free(k->tmpl);
	memset(k, 0, sizeof(*k));
}

/* The fleet's devices and gateways into the rewriter's maps (written in place: no second copy). */
static int lora_fill(struct kengine *k, const struct lw_fleet *f)
{
	const struct xr_aes_tables *t = (const struct xr_aes_tables *)&k->skel->rodata->aes;
	struct xr_lora_dev *devs;
	struct lw_crypto *c;
	uint64_t *gws;
	size_t gsz;
	int err = 0;

	devs = k->devs = map_mmap(k->skel->maps.lora_devs, &k->devs_sz);
	gws = map_mmap(k->skel->maps.lora_gws, &gsz);
	k->gw_acks = map_mmap(k->skel->maps.lora_gw_acks, &k->gw_acks_sz);
	if (k->skel->rodata->cfg.lora.ring)
		k->ring = map_mmap(k->skel->maps.lora_ring, &k->ring_sz);
	c = lw_crypto_new();
	if (!devs || !gws || !k->gw_acks || !c || (k->skel->rodata->cfg.lora.ring && !k->ring)) {
		err = -ENOMEM;
		pr_warn("cannot map the LoRaWAN device table: %s\n", strerror(ENOMEM));
		goto out;
	}
	for (size_t g = 0; g < f->ngw; g++)
		memcpy(&gws[g], f->gw[g].eui, 8);
	for (size_t d = 0; d < f->ndev && !err; d++)
		err = lw_bpf_device(f, d, t, c, &devs[d]);
	if (err)
		pr_warn("cannot compute the devices' CMAC subkeys (OpenSSL)\n");
out:
	lw_crypto_free(c);
	if (gws)
		munmap(gws, gsz);
	return err;
}

/*
 * Uplinks precomputed ahead of the senders (AES-NI): this many ring slots,
 * kept this far behind the slowest sender so that a slot is never rewritten
 * while a sender may still read it.
 */
#define LORA_RING_SLOTS (1U << 17)
#define LORA_RING_MARGIN 4096

/* Uplink u into its ring slot: tag cleared, characters, then the tag (stores stay in order on x86). */
static void ring_fill(struct kengine *k, uint64_t u)
{
	const struct lw_fleet *f = k->lora;
	struct xr_lora_ring_slot *slot = &k->ring[u & (LORA_RING_SLOTS - 1)];
	size_t d = u % f->ndev;

	const struct xr_lora_dev *dev = &k->devs[d];
	int chars;

	__atomic_store_n(&slot->tag, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	chars = aesni_uplink_b64(dev, dev->fcnt0 + (uint32_t)(u / f->ndev), slot->b64);
	if (chars < 0)
		return; /* too long for a slot: the program computes it */
	slot->chars = chars;
	slot->b64_off = dev->b64_off;
	slot->tmst_off = dev->tmst_off;
	memcpy(slot->gw, dev->gw, sizeof(slot->gw));
	__atomic_store_n(&slot->tag, u + 1, __ATOMIC_RELEASE);
}

struct producer {
	struct kengine *k;
	const struct engine_opts *o;
	uint64_t next_u;         /* the next uplink to compute */
	uint64_t made;
	volatile bool stop;
	pthread_t tid;
	int cpu;
};

/* The uplink the slowest sender is at. */
static uint64_t consumer_u(const struct producer *p)
{
	uint64_t min = UINT64_MAX;

	for (unsigned int i = 0; i < p->o->threads; i++) {
		const struct xr_gen_slot *s = &p->k->slots[p->o->cpus[i]];
		uint64_t u = (p->o->first_n + s->k_next * p->o->threads + i) / p->k->lora->heard_by;

		if (u < min)
			min = u;
	}
	return min;
}

static void produce(struct producer *p, uint64_t limit)
{
	for (; p->next_u < limit; p->next_u++, p->made++)
		ring_fill(p->k, p->next_u);
}

static void *producer_main(void *arg)
{
	struct producer *p = arg;

	pin_to_cpu(p->cpu);
	while (!p->stop) {
		uint64_t u = consumer_u(p), limit = u + LORA_RING_SLOTS - LORA_RING_MARGIN;

		/* fallen behind: the program has computed those itself */
		if (p->next_u < u)
			p->next_u = u;
		/*
		 * Full: the ring holds 127k uplinks, 13 ms even at 10 M/s, so a 1 ms
		 * nap cannot starve a sender, and a paced run leaves the CPU to others
		 * (on a small test bed, the server under test).
		 */
		if (p->next_u + 256 > limit) {
			usleep(1000);
			continue;
		}
		produce(p, limit < p->next_u + 4096 ? limit : p->next_u + 4096);
	}
	return NULL;
}

/*
 * Loads xr_gen for a frame set (or for a single template frame when fs is
 * NULL), lays the frames out in the maps and attaches the tracepoints.
 */
static int kengine_open(struct kengine *k, const struct iface *ifc, const struct frameset *fs,
			const uint8_t *tmpl, uint32_t tmpl_len, const struct engine_opts *o)
{
	struct bpf_prog_info info = {};
	__u32 info_len = sizeof(info);
	uint64_t nchunks = 1, off = 0;
	const struct lw_fleet *lora = o ? o->lora : NULL;
	/* one frame stays in the page pool's pages as data_in put it; more are copied in */
	bool copy = (fs && fs->n > 1) || lora;
	int err;

	memset(k, 0, sizeof(*k));
	k->ifindex = ifc->ifindex;
	k->skel = gen_bpf__open();
	if (!k->skel) {
		err = -errno;
		pr_warn("cannot open the kernel engine's BPF object: %s\n", strerror(-err));
		return err;
	}
	k->nframes = fs ? fs->n : 1;
	if (copy) {
		/* place frames in chunks: a frame starts below XR_CHUNK_SIZE */
		for (size_t i = 0; i < fs->n; i++) {
			if (off >= XR_CHUNK_SIZE) {
				nchunks++;
				off = 0;
			}
			off += fs->frames[i].len;
		}
		if (fs->n > UINT32_MAX || nchunks > UINT32_MAX / XR_CHUNK_VALUE) {
			pr_warn("frame set too large for the kernel engine (%zu frames)\n", fs->n);
			err = -E2BIG;
			goto err;
		}
		bpf_map__set_max_entries(k->skel->maps.frames, fs->n);
		bpf_map__set_max_entries(k->skel->maps.frame_data, nchunks);
	}
	k->skel->rodata->cfg = (struct xr_gen_cfg){
		.nframes = k->nframes,
		.ifindex = ifc->ifindex,
		.netns_ino = ifc->netns_ino,
		.copy = copy,
		.pace = o ? o->pace : XR_PACE_NONE,
		.nthreads = o ? o->threads : 1,
		.span_ns = fs ? fs->span_ns : 0,
		.mult_milli = o && o->pace == XR_PACE_PCAP ? (uint64_t)(o->multiplier * 1000 + 0.5) : 1000,
		.nops = o ? o->nops : 0,
		.stamp = o ? o->replies : 0,
		.first_n = o ? o->first_n : 0,
		.frame_div = lora ? lora->heard_by : 1,
		.ts_mask = lora ? XR_LORA_TOKENS - 1 : XR_TS_RING - 1,
	};
	if (o)
		k->skel->rodata->cfg.rpl = o->rpl;
	if (lora) {
		k->skel->rodata->cfg.lora = (struct xr_lora_cfg){
			.on = !o->lora_static, .ndev = lora->ndev, .heard_by = lora->heard_by, .ngw = lora->ngw };
		lw_aes_tables((struct xr_aes_tables *)&k->skel->rodata->aes);
		bpf_map__set_max_entries(k->skel->maps.lora_devs, lora->ndev);
		bpf_map__set_max_entries(k->skel->maps.lora_gws, lora->ngw);
		bpf_map__set_max_entries(k->skel->maps.lora_gw_acks, lora->ngw);
		if (o->lora_precompute && !o->lora_static && aesni_available()) {
			k->skel->rodata->cfg.lora.ring = LORA_RING_SLOTS;
			bpf_map__set_max_entries(k->skel->maps.lora_ring, LORA_RING_SLOTS);
		}
		k->lora = lora;
	}
	if (o) {
		memcpy(k->skel->rodata->cfg.ops, o->ops, sizeof(o->ops));
		if (!copy && fs && o->nops)
			rewrite_nocopy(k->skel->rodata->cfg.ops, o->nops, fs->bytes + fs->frames[0].off,
				       fs->frames[0].len, &k->skel->rodata->cfg.nc);
	}
	if (!k->skel->rodata->cfg.mult_milli)
		k->skel->rodata->cfg.mult_milli = 1;
	err = gen_bpf__load(k->skel);
	if (err) {
		pr_warn("cannot load the kernel engine's BPF program: %s (run with -vv for the verifier log)\n",
			strerror(-err));
		goto err;
	}
	if (bpf_obj_get_info_by_fd(bpf_program__fd(k->skel->progs.xr_gen), &info, &info_len) == 0)
		k->skel->bss->gen_prog_id = info.id;
	k->skel->bss->owner_tgid = getpid();

	k->slots = map_mmap(k->skel->maps.slots, &k->slots_sz);
	k->frames = map_mmap(k->skel->maps.frames, &k->frames_sz);
	k->data = map_mmap(k->skel->maps.frame_data, &k->data_sz);
	if (!k->slots || !k->frames || !k->data) {
		err = -errno;
		pr_warn("cannot mmap the frame set maps: %s\n", strerror(-err));
		goto err;
	}
	if (copy) {
		uint32_t chunk = 0;

		off = 0;
		for (size_t i = 0; i < fs->n; i++) {
			const struct fs_frame *f = &fs->frames[i];

			if (off >= XR_CHUNK_SIZE) {
				chunk++;
				off = 0;
			}
			memcpy(k->data + (size_t)chunk * XR_CHUNK_VALUE + off, fs->bytes + f->off, f->len);
			k->frames[i] = (struct xr_frame){ .chunk = chunk, .off = off, .len = f->len,
							  .ts_ns = f->ts_ns };
			off += f->len;
		}
	} else if (fs) {
		k->frames[0] = (struct xr_frame){ .len = fs->frames[0].len, .ts_ns = 0 };
	}
	if (lora) {
		err = lora_fill(k, lora);
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

	k->links[0] = bpf_program__attach(k->skel->progs.xr_xmit);
	k->links[1] = bpf_program__attach(k->skel->progs.xr_redirect_err);
	if (!k->links[0] || !k->links[1]) {
		err = -errno;
		pr_warn("cannot attach the xdp_devmap_xmit/xdp_redirect_err tracepoints that account for "
			"sent frames: %s\n", strerror(-err));
		goto err;
	}
	if (o)
		hold_dispatcher(k);
	return 0;
err:
	kengine_close(k);
	return err;
}

static int run_live(struct kengine *k, int repeat, unsigned int batch)
{
	struct xdp_md ctx = { .data_end = k->tmpl_len, .ingress_ifindex = k->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, topts,
		.data_in = k->tmpl,
		.data_size_in = k->tmpl_len,
		.ctx_in = &ctx,
		.ctx_size_in = sizeof(ctx),
		.repeat = repeat,
		.flags = BPF_F_TEST_XDP_LIVE_FRAMES,
		.batch_size = batch,
	);

	return bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.xr_gen), &topts) ? -errno : 0;
}

static void *sender_main(void *arg)
{
	struct sender *sd = arg;
	struct kengine *k = sd->k;
	const struct engine_opts *o = sd->o;
	struct xr_gen_slot *s = &k->slots[sd->cpu];
	int err;

	err = pin_to_cpu(sd->cpu);
	if (err) {
		sd->err = err;
		pr_warn("cannot pin thread %u to CPU %d: %s\n", sd->thread, sd->cpu, strerror(-err));
		goto out;
	}
	while (!xr_stop && s->k_next < s->k_end) {
		uint64_t left = s->k_end - s->k_next;
		int repeat;

		if (o->pace == XR_PACE_NONE) {
			repeat = left < LONG_RUN_MAX ? (int)left : LONG_RUN_MAX;
		} else if (sd->user_paced) {
			repeat = pacer_wait(&sd->pacer, s->k_next, s->k_end, SHORT_RUN_MAX, USER_PACED_TICK_NS);
		} else {
			repeat = LONG_RUN_MAX;
		}
		uint64_t t = now_ns();

		err = run_live(k, repeat, o->batch);
		sd->call_ns += now_ns() - t;
		sd->calls++;
		if (err && err != -EINTR) {
			sd->err = err;
			pr_warn("BPF_PROG_RUN (live frames) on CPU %d failed: %s\n", sd->cpu, strerror(-err));
			break;
		}
	}
out:
	sd->done = true;
	return NULL;
}

/* (n * step) mod modulus for op, without overflow; modulus 0 wraps at 2^64 */
static uint64_t op_mulmod(const struct xr_op *op, uint64_t n)
{
	if (!op->modulus)
		return n * op->step;
	return (unsigned __int128)n * op->step % op->modulus;
}

/* The running values of a slot whose next sequence number is n (see struct xr_gen_slot). */
static void slot_ops_init(struct xr_gen_slot *s, const struct xr_op *ops, unsigned int nops, uint64_t n,
			  unsigned int nthreads)
{
	for (unsigned int i = 0; i < nops && i < XR_MAX_OPS; i++) {
		s->op_val[i] = op_mulmod(&ops[i], n);
		s->op_inc[i] = op_mulmod(&ops[i], nthreads);
	}
}

static void read_replies(struct kengine *k, struct engine_result *res)
{
	int ncpu = libbpf_num_possible_cpus(), hfd = bpf_map__fd(k->skel->maps.rtt_hist);
	struct xr_replies_stats *per = calloc(ncpu, sizeof(*per));
	uint64_t *vals = calloc(ncpu, sizeof(uint64_t));
	struct engine_replies *r = &res->replies;
	__u32 key = 0;

	r->hist = calloc((size_t)XR_RTT_SECS * XR_RTT_BUCKETS, sizeof(uint64_t));
	if (!per || !vals || !r->hist)
		goto out;
	if (!bpf_map_lookup_elem(bpf_map__fd(k->skel->maps.replies_stats), &key, per)) {
		for (int c = 0; c < ncpu; c++) {
			r->st.syn_acks += per[c].syn_acks;
			r->st.retransmits += per[c].retransmits;
			r->st.rsts += per[c].rsts;
			r->st.acks_sent += per[c].acks_sent;
			r->st.fins += per[c].fins;
			r->st.unmatched += per[c].unmatched;
			r->st.push_acks += per[c].push_acks;
			r->st.push_ack_dups += per[c].push_ack_dups;
		}
	}
	if (k->gw_acks) {
		r->lora = true;
		r->ngw = bpf_map__max_entries(k->skel->maps.lora_gw_acks);
		r->gw_acks = malloc(r->ngw * sizeof(uint64_t));
		if (r->gw_acks)
			memcpy(r->gw_acks, k->gw_acks, r->ngw * sizeof(uint64_t));
	}
	for (key = 0; key < XR_RTT_SECS * XR_RTT_BUCKETS; key++) {
		if (bpf_map_lookup_elem(hfd, &key, vals))
			break;
		for (int c = 0; c < ncpu; c++)
			r->hist[key] += vals[c];
		if (r->hist[key] && key / XR_RTT_BUCKETS + 1 > r->seconds)
			r->seconds = key / XR_RTT_BUCKETS + 1;
	}
out:
	free(per);
	free(vals);
}

uint64_t rtt_bucket_floor(unsigned int b)
{
	unsigned int e;

	if (b < 16)
		return b;
	/* bucket (e - 3) * 16 + m holds [2^e + m * 2^(e-4), 2^e + (m+1) * 2^(e-4)) */
	e = b / 16 + 3;
	return (1ULL << e) + (uint64_t)(b % 16) * (1ULL << (e - 4));
}

static void on_sigusr1(int sig)
{
}

/* The running totals of the started threads, as the tracepoints and the program count them. */
static void slots_sum(const struct kengine *k, const struct sender *sd, unsigned int n, uint64_t *sent,
		      uint64_t *failed, uint64_t *bytes)
{
	*sent = *failed = *bytes = 0;
	for (unsigned int i = 0; i < n; i++) {
		const struct xr_gen_slot *s = &k->slots[sd[i].cpu];

		*sent += s->xmit_sent;
		*failed += s->xmit_drops + s->redirect_err + s->bad_frame;
		*bytes += s->tx_bytes;
	}
}

int kengine_run(const struct engine_opts *o, struct engine_result *res)
{
	struct sigaction sa = { .sa_handler = on_sigusr1 }, old_sa;
	uint64_t tx = 0, tx_bytes = 0, accounted = 0, total = 0;
	uint64_t t0, deadline;
	struct thread_plan plan[XR_MAX_CPUS];
	struct sender sd[XR_MAX_CPUS] = {};
	struct run_meter meter;
	struct producer prod = {};
	bool stopped_by_duration = false, prod_started = false;
	unsigned int started = 0;
	struct kengine k;
	int err;

	memset(res, 0, sizeof(*res));
	res->engine = "kernel";
	err = kengine_open(&k, o->ifc, o->fs, NULL, 0, o);
	if (err)
		return err;
	/* the maps hold the frames now: the loading buffer would only double the memory */
	frameset_release(o->fs);
	if (o->replies) {
		k.replies = bpf_program__attach_xdp(k.skel->progs.xr_replies, o->ifc->ifindex);
		if (!k.replies) {
			err = -errno;
			pr_warn("cannot attach the reply counter to %s: %s%s\n", o->ifc->name, strerror(-err),
				err == -EBUSY || err == -EEXIST ? " (another XDP program is attached)" : "");
			kengine_close(&k);
			return err;
		}
	}

	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the signal must end a BPF_PROG_RUN call with EINTR */
	sigaction(SIGUSR1, &sa, &old_sa);

	if (k.ring) {
		/* a full ring before the departure times are fixed: a paced run must not start late */
		long ncpu = sysconf(_SC_NPROCESSORS_ONLN);

		prod = (struct producer){ .k = &k, .o = o, .next_u = o->first_n / k.lora->heard_by,
					  .cpu = o->threads < ncpu ? (int)(ncpu - 1 - o->threads) : 0 };
		produce(&prod, prod.next_u + LORA_RING_SLOTS - LORA_RING_MARGIN);
	}
	/* a short lead so that every thread is running before the first departure */
	t0 = now_ns() + 2 * POLL_NS;
	for (unsigned int i = 0; i < o->threads; i++) {
		struct xr_gen_slot *s = &k.slots[o->cpus[i]];

		memset(s, 0, sizeof(*s));
		s->thread = i;
		slot_ops_init(s, o->ops, o->nops, o->first_n + i, o->threads);
		sd[i] = (struct sender){ .k = &k, .o = o, .cpu = o->cpus[i], .thread = i };
		pacer_init(&sd[i].pacer, o, i, t0, k.frames);
		s->t0_ns = sd[i].pacer.t0_ns;
		s->interval_ps = sd[i].pacer.interval_ps;
		/*
		 * A paced run with --duration is asked for exactly the frames due
		 * before its end; the control loop's wall-clock stop (after a grace)
		 * only ends a sender that fell behind, and what it did not send is
		 * counted as such.
		 */
		thread_plan_init(&plan[i], o, &sd[i].pacer, i, t0);
		s->k_end = thread_plan_end(&plan[i]);
		if (total != XR_FOREVER)
			total = s->k_end == XR_FOREVER ? XR_FOREVER : total + s->k_end;
		s->active = 1;
		if (o->pace == XR_PACE_RATE)
			sd[i].user_paced = o->pps / o->threads <= USER_PACED_MAX_PPS;
		else if (o->pace == XR_PACE_PCAP)
			sd[i].user_paced = o->fs->span_ns == 0 ||
					   o->fs->n * o->multiplier * 1e9 / o->fs->span_ns / o->threads <=
						   USER_PACED_MAX_PPS;
	}
	if (k.ring) {
		/* then a thread keeps the ring ahead of the senders */
		if (pthread_create(&prod.tid, NULL, producer_main, &prod))
			pr_warn("cannot start the precompute thread: uplinks beyond the first %u are computed in BPF\n",
				LORA_RING_SLOTS - LORA_RING_MARGIN);
		else
			prod_started = true;
		res->lora_ring = true;
	}
	/* paced runs start at t0; the duration counts from there */
	res->start_ns = o->pace == XR_PACE_NONE ? now_ns() : t0;
	k.skel->bss->replies_origin_ns = res->start_ns;
	if (o->on_start)
		o->on_start(o->on_start_ctx, res->start_ns);
	for (unsigned int i = 0; i < o->threads; i++) {
		err = -pthread_create(&sd[i].tid, NULL, sender_main, &sd[i]);
		if (err) {
			pr_warn("cannot start sender thread: %s\n", strerror(-err));
			xr_stop = 1;
			break;
		}
		started++;
	}
	deadline = o->duration_ns ? res->start_ns + o->duration_ns + pacer_grace_ns(o) : UINT64_MAX;
	meter_init(&meter, o, res->start_ns, total);
	for (;;) {
		unsigned int done = 0;
		uint64_t now = now_ns();

		if (now >= deadline && !stopped_by_duration && !xr_stop) {
			stopped_by_duration = true;
			for (unsigned int i = 0; i < started; i++)
				k.slots[sd[i].cpu].k_end = 0;
		}
		if (xr_stop)
			for (unsigned int i = 0; i < started; i++)
				k.slots[sd[i].cpu].k_end = 0;
		for (unsigned int i = 0; i < started; i++) {
			struct xr_gen_slot *s = &k.slots[sd[i].cpu];

			if (sd[i].done)
				done++;
			else if (s->k_next >= s->k_end && (o->pace != XR_PACE_NONE || s->k_end == 0))
				pthread_kill(sd[i].tid, SIGUSR1);
		}
		if (done == started)
			break;
		if (now >= meter.next_sec || (o->progress && now >= meter.next_line) || o->live) {
			uint64_t sent, failed, bytes;

			slots_sum(&k, sd, started, &sent, &failed, &bytes);
			meter_tick(&meter, now, sent, failed, sent + failed ? (double)bytes / (sent + failed) : 0);
		}
		sleep_until(now + POLL_NS);
	}
	res->end_ns = now_ns();
	res->interrupted = xr_stop;
	for (unsigned int i = 0; i < started; i++)
		pthread_join(sd[i].tid, NULL);
	{
		uint64_t sent, failed, bytes;

		slots_sum(&k, sd, started, &sent, &failed, &bytes);
		meter_finish(&meter, res->end_ns, sent, res);
	}
	if (prod_started) {
		prod.stop = true;
		pthread_join(prod.tid, NULL);
		pr_debug("precompute thread: %llu uplinks\n", (unsigned long long)prod.made);
	}
	if (o->replies) {
		/* answers to the last frames are still on their way */
		if (!xr_stop)
			sleep_until(now_ns() + o->reply_wait_ns);
		read_replies(&k, res);
	}
	sigaction(SIGUSR1, &old_sa, NULL);

	for (unsigned int i = 0; i < o->threads; i++) {
		const struct xr_gen_slot *s = &k.slots[o->cpus[i]];
		enum thread_stop why = sd[i].err ? STOP_ERROR : xr_stop ? STOP_SIGNAL :
				       stopped_by_duration ? STOP_DEADLINE : STOP_DONE;

		if (i >= started)
			why = STOP_ERROR;
		thread_account(&plan[i], o, s->k_next, why, &res->asked, &res->unsent);
		tx += s->tx;
		tx_bytes += s->tx_bytes;
		res->sent += s->xmit_sent;
		res->unsent.ring_full += s->xmit_drops;
		res->unsent.redirect += s->redirect_err;
		res->unsent.bad_frame += s->bad_frame;
		res->lora_ring_hits += s->lora_ring_hits;
		res->lora_computed += s->lora_computed;
		accounted += s->xmit_sent + s->xmit_drops + s->redirect_err;
		if (s->xmit_err)
			res->xmit_err = s->xmit_err;
		if (s->redirect_errno)
			res->redirect_errno = s->redirect_errno;
		if (sd[i].err && !err)
			err = sd[i].err;
		pr_debug("thread %u on CPU %d: %llu BPF_PROG_RUN calls, %.1f us each, %llu frames handed to XDP_TX\n",
			 i, sd[i].cpu, (unsigned long long)sd[i].calls,
			 sd[i].calls ? sd[i].call_ns / 1e3 / sd[i].calls : 0, (unsigned long long)s->tx);
	}
	if (tx > accounted)
		res->unsent.unaccounted = tx - accounted;
	/* bytes of frames the driver refused are not known one by one: take the mean */
	res->sent_bytes = tx ? (uint64_t)((double)tx_bytes * res->sent / tx) : 0;
	kengine_close(&k);
	return err;
}

/* The CPU to run a one-off call on: this one, unless it has no slot (hosts with more than XR_MAX_CPUS). */
static int slot_cpu(void)
{
	int cpu = sched_getcpu();

	return cpu >= 0 && cpu < XR_MAX_CPUS ? cpu : 0;
}

int kengine_probe(const struct iface *ifc, bool send_frame, struct kengine_probe *p)
{
	uint8_t frame[60] = {};
	struct xr_gen_slot *s;
	struct kengine k;
	int cpu, err;

	memset(p, 0, sizeof(*p));
	/*
	 * One frame to ourselves with the IEEE local experimental EtherType: a
	 * receiver's stack drops it as addressed to another host.
	 */
	memcpy(frame, ifc->mac, 6);
	memcpy(frame + 6, ifc->mac, 6);
	frame[12] = 0x88;
	frame[13] = 0xb5;
	memcpy(frame + 14, "xdpreplay probe", 15);

	p->step = "load";
	err = kengine_open(&k, ifc, NULL, frame, sizeof(frame), NULL);
	if (err) {
		p->err = err;
		return err;
	}
	p->loaded = true;
	cpu = slot_cpu();
	pin_to_cpu(cpu);
	s = &k.slots[cpu];
	/* k_end 0: the program burns the iteration with XDP_DROP, the frame never leaves */
	s->k_end = send_frame ? 1 : 0;
	s->active = 1;
	p->step = "run";
	err = run_live(&k, 1, 0);
	if (err) {
		p->err = err;
		goto out;
	}
	p->ran = true;
	p->xmit_ok = s->xmit_sent == 1;
	p->xmit_err = s->xmit_err ? s->xmit_err : s->redirect_errno;
	if (!p->xmit_ok && !p->xmit_err)
		p->xmit_err = -EIO;
out:
	kengine_close(&k);
	return 0;
}

int kengine_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns, size_t count,
		       uint8_t *out, uint32_t *out_len, uint64_t *ring_hits)
{
	struct xr_gen_slot *slot;
	struct kengine k;
	int cpu, err;

	err = kengine_open(&k, ifc, o->fs, NULL, 0, o);
	if (err)
		return err;
	cpu = slot_cpu();
	err = pin_to_cpu(cpu);
	if (err)
		goto out;
	slot = &k.slots[cpu];
	for (size_t i = 0; i < count; i++) {
		struct xdp_md ctx = { .data_end = k.tmpl_len, .ingress_ifindex = k.ifindex };
		LIBBPF_OPTS(bpf_test_run_opts, topts,
			.data_in = k.tmpl,
			.data_size_in = k.tmpl_len,
			.data_out = out + i * XR_MAX_FRAME,
			.data_size_out = XR_MAX_FRAME,
			.ctx_in = &ctx,
			.ctx_size_in = sizeof(ctx),
			.repeat = 1,
		);

		memset(slot, 0, sizeof(*slot));
		slot->k_next = ns[i];
		slot->k_end = ns[i] + 1;
		slot_ops_init(slot, o->ops, o->nops, ns[i], 1);
		if (k.ring)
			ring_fill(&k, ns[i] / k.lora->heard_by);
		if (bpf_prog_test_run_opts(bpf_program__fd(k.skel->progs.xr_gen), &topts)) {
			err = -errno;
			pr_warn("BPF_PROG_RUN: %s\n", strerror(-err));
			goto out;
		}
		out_len[i] = topts.retval == XDP_TX ? topts.data_size_out : 0;
		if (ring_hits)
			*ring_hits += slot->lora_ring_hits;
	}
out:
	kengine_close(&k);
	return err;
}

int kengine_aes_test(struct xr_aes_test *t)
{
	uint8_t pkt[64] = {};
	struct gen_bpf *skel;
	__u32 zero = 0;
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt), .repeat = 1);
	int err;

	skel = gen_bpf__open();
	if (!skel)
		return -errno;
	lw_aes_tables((struct xr_aes_tables *)&skel->rodata->aes);
	err = gen_bpf__load(skel);
	if (err)
		goto out;
	if (bpf_map_update_elem(bpf_map__fd(skel->maps.aes_test), &zero, t, 0) ||
	    bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xr_aes_test), &topts) ||
	    bpf_map_lookup_elem(bpf_map__fd(skel->maps.aes_test), &zero, t)) {
		err = -errno;
		goto out;
	}
	if (topts.retval != XDP_PASS)
		err = -EINVAL;
out:
	gen_bpf__destroy(skel);
	return err;
}
