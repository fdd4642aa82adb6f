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
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/engine.h"
#include "engine/pacer.h"
#include "frames/rewrite.h"
#include "util/log.h"
#include "engine/meter.h"
#include "util/units.h"
#include "gen.skel.h"

#define SHORT_RUN_MAX 31 /* repeat below 32 avoids the slow set-up */
#define LONG_RUN_MAX (1 << 30)
#define USER_PACED_MAX_PPS 500000.0 /* per thread; above it the program paces */
#define POLL_NS 1000000ULL /* control loop period */
/*
 * Low-rate pacing wakes at most this often and then sends all that is due:
 * fewer, fuller calls, at the price of frames leaving up to this much late.
 */
#define USER_PACED_TICK_NS 100000ULL
/* A closed loop with every session open looks again this often for one that ended. */
#define GATE_WAIT_NS 20000ULL

volatile sig_atomic_t xr_stop;

struct kengine {
	struct gen_bpf *skel;
	uint64_t live_replies_next; /* when --listen's reply counters are read again */
	struct bpf_link *links[2];
	struct bpf_link *hold; /* keeps xr_gen in the XDP dispatcher */
	struct bpf_link *replies; /* xr_replies on the interface */
	int hold_netns_fd;
	struct xr_gen_slot *slots;
	struct xr_frame *frames;
	uint8_t *data;
	size_t slots_sz, frames_sz, data_sz;
	const struct engine_proto *proto; /* NULL for the probe */
	uint64_t nframes;
	uint8_t *tmpl;
	uint32_t tmpl_len;
	int ifindex;
	/*
	 * --concurrency: frames the senders took leave to send (less those an
	 * interrupted call did not send), the most sessions seen open at once,
	 * and the times a sender found none may start
	 */
	_Atomic uint64_t admitted;
	_Atomic uint64_t open_peak, gate_waits;
	unsigned int nthreads;
	const int *cpus;
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

void *engine_map_mmap(struct bpf_map *map, size_t *sz)
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
		pr_debug(
			"cannot hold the XDP dispatcher (%s): each BPF_PROG_RUN call will cost more\n",
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
	if (k->proto && k->proto->close)
		k->proto->close(k->proto->ctx);
	gen_bpf__destroy(k->skel);
	free(k->tmpl);
	memset(k, 0, sizeof(*k));
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
	const struct engine_proto *proto = o ? o->proto : NULL;
	/* one frame stays in the page pool's pages as data_in put it; more are copied in */
	bool copy = (fs && fs->n > 1) || (o && o->copy_always);
	int err;

	memset(k, 0, sizeof(*k));
	k->ifindex = ifc->ifindex;
	k->skel = gen_bpf__open();
	if (!k->skel) {
		err = -errno;
		pr_warn("cannot open the kernel engine's BPF object: %s\n", strerror(-err));
		return err;
	}
	/*
	 * The LoRaWAN selftest's programs (AES, the downlink reader and its MIC
	 * check) are loaded by the selftest alone: a run would pay for their
	 * verification in its start-up
	 */
	bpf_program__set_autoload(k->skel->progs.xr_aes_test, false);
	bpf_program__set_autoload(k->skel->progs.xr_lora_dl_test, false);
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
	err = gen_bpf__load(k->skel);
	if (err) {
		pr_warn("cannot load the kernel engine's BPF program: %s (run with -vv for the verifier log)\n",
			strerror(-err));
		goto err;
	}
	if (bpf_obj_get_info_by_fd(bpf_program__fd(k->skel->progs.xr_gen), &info, &info_len) == 0)
		k->skel->bss->gen_prog_id = info.id;
	k->skel->bss->owner_tgid = getpid();

	k->slots = engine_map_mmap(k->skel->maps.slots, &k->slots_sz);
	k->frames = engine_map_mmap(k->skel->maps.frames, &k->frames_sz);
	k->data = engine_map_mmap(k->skel->maps.frame_data, &k->data_sz);
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
			memcpy(k->data + (size_t)chunk * XR_CHUNK_VALUE + off, fs->bytes + f->off,
			       f->len);
			k->frames[i] = (struct xr_frame){ .chunk = chunk,
							  .off = off,
							  .len = f->len,
							  .flags = frameset_unplanned(fs, i) ?
									   XR_FRAME_UNPLANNED :
									   0,
							  .ts_ns = f->ts_ns };
			off += f->len;
		}
	} else if (fs) {
		k->frames[0] = (struct xr_frame){ .len = fs->frames[0].len, .ts_ns = 0 };
	}
	/* from here kengine_close also closes the protocol's part */
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

	k->links[0] = bpf_program__attach(k->skel->progs.xr_xmit);
	k->links[1] = bpf_program__attach(k->skel->progs.xr_redirect_err);
	if (!k->links[0] || !k->links[1]) {
		err = -errno;
		pr_warn("cannot attach the xdp_devmap_xmit/xdp_redirect_err tracepoints that account for "
			"sent frames: %s\n",
			strerror(-err));
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
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = k->tmpl, .data_size_in = k->tmpl_len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = batch, );

	return bpf_prog_test_run_opts(bpf_program__fd(k->skel->progs.xr_gen), &topts) ? -errno : 0;
}

/*
 * --concurrency: how many of want frames thread sd may send now, taken from
 * what the closed loop leaves: admitted less the frames the driver refused
 * (their sessions never started) less the sessions that ended is what is
 * open, and at most o->concurrency may be.
 */
static uint64_t gate_take(struct kengine *k, const struct engine_opts *o, uint64_t want)
{
	uint64_t lost = 0, ended = o->proto->ended(o->proto->ctx), a, open, room, take, peak;

	for (unsigned int i = 0; i < k->nthreads; i++) {
		const struct xr_gen_slot *s = &k->slots[k->cpus[i]];

		lost += s->xmit_drops + s->redirect_err + s->bad_frame;
	}
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
		pr_warn("cannot pin thread %u to CPU %d: %s\n", sd->thread, sd->cpu,
			strerror(-err));
		goto out;
	}
	while (!xr_stop && s->k_next < s->k_end) {
		uint64_t left = s->k_end - s->k_next;
		int repeat;

		if (o->pace == XR_PACE_NONE) {
			repeat = left < LONG_RUN_MAX ? (int)left : LONG_RUN_MAX;
		} else if (sd->user_paced) {
			repeat = pacer_wait(&sd->pacer, s->k_next, s->k_end, SHORT_RUN_MAX,
					    USER_PACED_TICK_NS);
		} else {
			repeat = LONG_RUN_MAX;
		}
		if (o->concurrency) {
			repeat = (int)gate_take(k, o, repeat);
			if (!repeat) {
				sleep_until(now_ns() + GATE_WAIT_NS);
				continue;
			}
		}
		uint64_t t = now_ns(), k_before = s->k_next;

		err = run_live(k, repeat, o->batch);
		sd->call_ns += now_ns() - t;
		sd->calls++;
		/* what an interrupted call did not send goes back to the closed loop */
		if (o->concurrency && s->k_next - k_before < (uint64_t)repeat)
			atomic_fetch_sub(&k->admitted, (uint64_t)repeat - (s->k_next - k_before));
		if (err && err != -EINTR) {
			sd->err = err;
			pr_warn("BPF_PROG_RUN (live frames) on CPU %d failed: %s\n", sd->cpu,
				strerror(-err));
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

/*
 * The running values of a slot whose next sequence number is n, each next
 * one `stride` further on (see struct xr_gen_slot).
 */
static void slot_ops_init(struct xr_gen_slot *s, const struct xr_op *ops, unsigned int nops,
			  uint64_t n, uint64_t stride)
{
	for (unsigned int i = 0; i < nops && i < XR_MAX_OPS; i++) {
		s->op_val[i] = op_mulmod(&ops[i], n);
		s->op_inc[i] = op_mulmod(&ops[i], stride);
	}
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

int engine_percpu_sum(int fd, uint32_t cells, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	uint64_t *vals = calloc(ncpu, sizeof(uint64_t));
	int err = 0;

	if (!vals)
		return -ENOMEM;
	for (__u32 key = 0; key < cells; key++) {
		sum[key] = 0;
		if (bpf_map_lookup_elem(fd, &key, vals)) {
			err = -errno;
			break;
		}
		for (int c = 0; c < ncpu; c++)
			sum[key] += vals[c];
	}
	free(vals);
	return err;
}

int engine_hist_read(int fd, struct engine_replies *r)
{
	int err;

	r->seconds = 0;
	if (!r->hist)
		r->hist = calloc((size_t)XR_RTT_SECS * XR_RTT_BUCKETS, sizeof(uint64_t));
	if (!r->hist)
		return -ENOMEM;
	err = engine_percpu_sum(fd, XR_RTT_SECS * XR_RTT_BUCKETS, r->hist);
	for (__u32 key = 0; !err && key < XR_RTT_SECS * XR_RTT_BUCKETS; key++)
		if (r->hist[key] && key / XR_RTT_BUCKETS + 1 > r->seconds)
			r->seconds = key / XR_RTT_BUCKETS + 1;
	return err;
}

int engine_replies_sum(int fd, struct xr_replies_stats *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	struct xr_replies_stats *per = calloc(ncpu, sizeof(*per));
	__u32 zero = 0;
	int err = 0;

	memset(sum, 0, sizeof(*sum));
	if (!per)
		return -ENOMEM;
	if (bpf_map_lookup_elem(fd, &zero, per))
		err = -errno;
	for (int c = 0; !err && c < ncpu; c++) {
		sum->answered += per[c].answered;
		sum->repeated += per[c].repeated;
		sum->unmatched += per[c].unmatched;
		for (int i = 0; i < XR_REPLY_CTRS; i++)
			sum->ctr[i] += per[c].ctr[i];
	}
	free(per);
	return err;
}

/* --listen: the reply counters as they are now */
static void live_replies(struct kengine *k, const struct engine_opts *o)
{
	struct xr_replies_stats r;
	uint64_t now = now_ns();

	/* ten times a second: a read sums every CPU's copy, and the control loop runs every ms */
	if (!o->live || o->reply_kind == XR_REPLY_NONE || !k->skel || now < k->live_replies_next)
		return;
	k->live_replies_next = now + 100000000ULL;
	if (engine_replies_sum(bpf_map__fd(k->skel->maps.replies_stats), &r))
		return;
	pthread_mutex_lock(&o->live->lock);
	o->live->have_replies = true;
	o->live->replies = r;
	o->live->now_ns = now;
	pthread_mutex_unlock(&o->live->lock);
}

static void read_replies(struct kengine *k, struct engine_result *res)
{
	int hfd = bpf_map__fd(k->skel->maps.rtt_hist);
	struct engine_replies *r = &res->replies;

	if (engine_replies_sum(bpf_map__fd(k->skel->maps.replies_stats), &r->st) == -ENOMEM)
		return;
	engine_hist_read(hfd, r);
	{
		/* what answering cost, when the kernel keeps program statistics (benchmarks) */
		struct bpf_prog_info info = {};
		__u32 len = sizeof(info);

		if (!bpf_obj_get_info_by_fd(bpf_program__fd(k->skel->progs.xr_replies), &info,
					    &len)) {
			res->replies_run_ns = info.run_time_ns;
			res->replies_run_cnt = info.run_cnt;
		}
	}
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
static void slots_sum(const struct kengine *k, const struct sender *sd, unsigned int n,
		      uint64_t *sent, uint64_t *failed, uint64_t *bytes)
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
	const struct engine_proto *proto = o->proto;
	bool stopped_by_duration = false, proto_started = false;
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
	if (o->reply_kind != XR_REPLY_NONE) {
		k.replies = bpf_program__attach_xdp(k.skel->progs.xr_replies, o->ifc->ifindex);
		if (!k.replies) {
			err = -errno;
			pr_warn("cannot attach the reply counter to %s: %s%s\n", o->ifc->name,
				strerror(-err),
				err == -EBUSY || err == -EEXIST ?
					" (another XDP program is attached)" :
					"");
			kengine_close(&k);
			return err;
		}
	}

	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the signal must end a BPF_PROG_RUN call with EINTR */
	sigaction(SIGUSR1, &sa, &old_sa);

	if (o->concurrency && (!proto || !proto->ended || o->pace != XR_PACE_NONE)) {
		pr_warn("a closed loop (--concurrency) needs sessions that say when they end, at top speed\n");
		sigaction(SIGUSR1, &old_sa, NULL);
		kengine_close(&k);
		return -EINVAL;
	}
	k.nthreads = o->threads;
	k.cpus = o->cpus;
	for (unsigned int i = 0; i < o->threads; i++) {
		struct xr_gen_slot *s = &k.slots[o->cpus[i]];

		memset(s, 0, sizeof(*s));
		s->thread = i;
		slot_ops_init(s, o->ops, o->nops, engine_seq(o, i, 0),
			      (uint64_t)o->threads * (o->shards > 1 ? o->shards : 1));
	}
	/* the protocol's helpers (a precompute thread, say) are ready before the first departure */
	if (proto && proto->start) {
		err = proto->start(proto->ctx, k.slots, o);
		if (err) {
			sigaction(SIGUSR1, &old_sa, NULL);
			kengine_close(&k);
			return err;
		}
		proto_started = true;
	}
	/*
	 * Departure times are fixed after the helpers started: LoRaWAN's first
	 * ring of uplinks (~45 ms) inside the lead made the first 135 frames of a
	 * 2,800/s run leave at once, a burst that a rate limiter in front of the
	 * server (burst 100) partly dropped. A short lead so that every thread is
	 * running before the first departure.
	 */
	t0 = engine_t0(o, 2 * POLL_NS);
	for (unsigned int i = 0; i < o->threads; i++) {
		struct xr_gen_slot *s = &k.slots[o->cpus[i]];

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
			sd[i].user_paced = o->fs->span_ns == 0 || o->fs->n * o->multiplier * 1e9 /
										  o->fs->span_ns /
										  o->threads <=
									  USER_PACED_MAX_PPS;
	}
	engine_wait_start(o, t0, 2 * POLL_NS);
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
			else if (s->k_next >= s->k_end &&
				 (o->pace != XR_PACE_NONE || s->k_end == 0))
				pthread_kill(sd[i].tid, SIGUSR1);
		}
		if (done == started)
			break;
		if (now >= meter.next_sec || (o->progress && now >= meter.next_line) || o->live) {
			uint64_t sent, failed, bytes;

			slots_sum(&k, sd, started, &sent, &failed, &bytes);
			meter_tick(&meter, now, sent, failed,
				   sent + failed ? (double)bytes / (sent + failed) : 0);
			live_replies(&k, o);
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
	if (proto_started && proto->stop)
		proto->stop(proto->ctx);
	if (o->reply_kind != XR_REPLY_NONE) {
		/* answers to the last frames are still on their way (or, for sessions, until all ended) */
		uint64_t until = now_ns() + o->reply_wait_ns, sent = 0, failed, bytes;

		slots_sum(&k, sd, started, &sent, &failed, &bytes);
		while (!xr_stop && now_ns() < until) {
			uint64_t known;

			if (proto && proto->settled && proto->settled(proto->ctx, sent))
				break;
			known = proto && proto->wait_until ? proto->wait_until(proto->ctx) : 0;
			if (known)
				until = known;
			live_replies(&k, o);
			sleep_until(now_ns() + 10000000ULL);
		}
		/*
		 * answers end here: the counters and the protocol's own tables
		 * (finish) are then read from one state, not from two moments
		 */
		bpf_link__destroy(k.replies);
		k.replies = NULL;
		read_replies(&k, res);
	}
	sigaction(SIGUSR1, &old_sa, NULL);
	res->open_peak = atomic_load(&k.open_peak);
	res->gate_waits = atomic_load(&k.gate_waits);

	for (unsigned int i = 0; i < o->threads; i++) {
		const struct xr_gen_slot *s = &k.slots[o->cpus[i]];
		enum thread_stop why = sd[i].err	   ? STOP_ERROR :
				       xr_stop		   ? STOP_SIGNAL :
				       stopped_by_duration ? STOP_DEADLINE :
							     STOP_DONE;

		if (i >= started)
			why = STOP_ERROR;
		thread_account(&plan[i], o, s->k_next, why, &res->asked, &res->unsent);
		tx += s->tx;
		tx_bytes += s->tx_bytes;
		res->sent += s->xmit_sent;
		res->unsent.ring_full += s->xmit_drops;
		res->unsent.redirect += s->redirect_err;
		res->unsent.bad_frame += s->bad_frame;
		res->hook_ctr[0] += s->hook_ctr[0];
		res->hook_ctr[1] += s->hook_ctr[1];
		res->backoff_skipped += s->backoff_skipped;
		res->spun_ns += s->spun_ns;
		accounted += s->xmit_sent + s->xmit_drops + s->redirect_err;
		if (s->xmit_err)
			res->xmit_err = s->xmit_err;
		if (s->redirect_errno)
			res->redirect_errno = s->redirect_errno;
		if (sd[i].err && !err)
			err = sd[i].err;
		pr_debug(
			"thread %u on CPU %d: %llu BPF_PROG_RUN calls, %.1f us each, %llu frames handed to XDP_TX, "
			"%llu iterations skipped and %.3f s spun while the driver refused frames\n",
			i, sd[i].cpu, (unsigned long long)sd[i].calls,
			sd[i].calls ? sd[i].call_ns / 1e3 / sd[i].calls : 0,
			(unsigned long long)s->tx, (unsigned long long)s->backoff_skipped,
			s->spun_ns / 1e9);
	}
	if (tx > accounted)
		res->unsent.unaccounted = tx - accounted;
	/* bytes of frames the driver refused are not known one by one: take the mean */
	res->sent_bytes = tx ? (uint64_t)((double)tx_bytes * res->sent / tx) : 0;
	if (proto && proto->finish)
		proto->finish(proto->ctx, k.skel);
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

int kengine_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns,
		       size_t count, uint8_t *out, uint32_t *out_len, uint64_t *ring_hits)
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
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = k.tmpl, .data_size_in = k.tmpl_len,
			    .data_out = out + i * XR_MAX_FRAME, .data_size_out = XR_MAX_FRAME,
			    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = 1, );

		memset(slot, 0, sizeof(*slot));
		slot->k_next = ns[i];
		slot->k_end = ns[i] + 1;
		slot_ops_init(slot, o->ops, o->nops, ns[i], 1);
		if (k.proto && k.proto->frame)
			k.proto->frame(k.proto->ctx, ns[i]);
		if (bpf_prog_test_run_opts(bpf_program__fd(k.skel->progs.xr_gen), &topts)) {
			err = -errno;
			pr_warn("BPF_PROG_RUN: %s\n", strerror(-err));
			goto out;
		}
		out_len[i] = topts.retval == XDP_TX ? topts.data_size_out : 0;
		if (ring_hits)
			*ring_hits += slot->hook_ctr[0];
	}
out:
	kengine_close(&k);
	return err;
}

int kengine_due_test(const struct iface *ifc, const struct engine_opts *o, unsigned int thread,
		     uint64_t t0, const uint64_t *ks, size_t n, uint64_t *due)
{
	uint8_t pkt[64] = {};
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1);
	struct xr_due_test t = { .n = n };
	struct pacer p;
	struct kengine k;
	__u32 zero = 0;
	int err;

	if (n > XR_DUE_TEST_K)
		return -EINVAL;
	err = kengine_open(&k, ifc, o->fs, NULL, 0, o);
	if (err)
		return err;
	pacer_init(&p, o, thread, t0, k.frames);
	t.slot = (struct xr_gen_slot){ .thread = thread,
				       .t0_ns = p.t0_ns,
				       .k_base = p.k_base,
				       .interval_ps = p.interval_ps };
	memcpy(t.k, ks, n * sizeof(*ks));
	if (bpf_map_update_elem(bpf_map__fd(k.skel->maps.due_test), &zero, &t, 0) ||
	    bpf_prog_test_run_opts(bpf_program__fd(k.skel->progs.xr_due_test), &topts) ||
	    bpf_map_lookup_elem(bpf_map__fd(k.skel->maps.due_test), &zero, &t)) {
		err = -errno;
		goto out;
	}
	memcpy(due, t.due, n * sizeof(*due));
out:
	kengine_close(&k);
	return err;
}
