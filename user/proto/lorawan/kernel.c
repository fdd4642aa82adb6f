// SPDX-License-Identifier: GPL-2.0
/* LoRaWAN in the kernel engine: see kernel.h. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <time.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <arpa/inet.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/pacer.h"
#include "proto/lorawan/aesni.h"
#include "proto/lorawan/kernel.h"
#include "util/log.h"
#include "gen.skel.h"

/*
 * The ring (LORA_RING_SLOTS, kernel.h) is kept this far behind the slowest
 * sender, so that a slot is never rewritten while a sender may still read it.
 */
#define LORA_RING_MARGIN 4096
/* JoinAccepts waiting for userspace: ~4,000 of them (a storm's 2 ms at 2 M/s) */
#define LORA_JOIN_RING_BYTES (4U << 20)

static int lw_before_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	struct lw_kernel *lk = ctx;
	const struct lw_fleet *f = lk->fleet;

	skel->rodata->lora_cfg = (struct xr_lora_cfg){ .ndev = f->ndev,
						       .heard_by = f->heard_by,
						       .ngw = f->ngw,
						       .gw_addrs = f->gw_addrs,
						       .join = f->joining,
						       .stat = lk->ka.stat_interval_ns > 0 };
	lw_aes_tables((struct xr_aes_tables *)&skel->rodata->aes);
	bpf_map__set_max_entries(skel->maps.lora_devs, f->ndev);
	bpf_map__set_max_entries(skel->maps.lora_gws, f->ngw);
	bpf_map__set_max_entries(skel->maps.lora_gw_ctr, f->ngw);
	/* a token per stat in flight; without stats the map is not read */
	if (lk->ka.stat_interval_ns)
		bpf_map__set_max_entries(skel->maps.lora_stat_tok, XR_LORA_STAT_TOKENS);
	{
		size_t nconf = 0;

		/* JoinRequests are no confirmed uplinks; uplinks that ask for MAC answers wait as they do */
		for (size_t d = 0; d < f->ndev && !f->joining; d++)
			nconf += f->dev[d].confirmed || f->dev[d].mac_asks;
		skel->rodata->lora_cfg.confirmed = nconf > 0;
		if (nconf) {
			bpf_map__set_max_entries(skel->maps.lora_confirmed, f->ndev);
			bpf_map__set_max_entries(skel->maps.lora_devaddr, nconf);
		}
	}
	for (size_t d = 0; d < f->ndev && !f->joining; d++)
		skel->rodata->lora_cfg.v11 |= f->dev[d].v11;
	if (skel->rodata->lora_cfg.v11)
		bpf_map__set_max_entries(skel->maps.lora_devs11, f->ndev);
	if (f->joining) {
		bpf_map__set_max_entries(skel->maps.lora_join, f->ndev);
		bpf_map__set_max_entries(skel->maps.lora_join_accepts, LORA_JOIN_RING_BYTES);
	}
	/* a JoinRequest is sent as built: nothing to precompute */
	if (lk->precompute && lk->rewrite && !f->joining && aesni_available()) {
		skel->rodata->lora_cfg.ring = LORA_RING_SLOTS;
		bpf_map__set_max_entries(skel->maps.lora_ring, LORA_RING_SLOTS);
	}
	return 0;
}

/*
 * The confirmed devices and those that ask for MAC answers: marked in their
 * table, and their DevAddrs into the downlinks' index.
 */
static int confirmed_fill(struct lw_kernel *lk, struct gen_bpf *skel)
{
	const struct lw_fleet *f = lk->fleet;
	int fd = bpf_map__fd(skel->maps.lora_devaddr);

	for (size_t d = 0; d < f->ndev; d++) {
		uint32_t idx = d, addr = f->dev[d].dev_addr;

		if (!f->dev[d].confirmed && !f->dev[d].mac_asks)
			continue;
		lk->confirmed_map[d].is_confirmed = f->dev[d].confirmed;
		lk->confirmed_map[d].mac_asks = f->dev[d].mac_asks;
		if (bpf_map_update_elem(fd, &addr, &idx, BPF_NOEXIST)) {
			int err = -errno;

			pr_warn("cannot index DevAddr %08x: %s\n", addr, strerror(-err));
			return err;
		}
	}
	return 0;
}

/* The fleet's devices and gateways into the rewriter's maps (written in place: no second copy). */
static int lw_after_load(void *ctx, struct gen_bpf *skel, const struct engine_opts *o)
{
	const struct xr_aes_tables *t = (const struct xr_aes_tables *)&skel->rodata->aes;
	struct lw_kernel *lk = ctx;
	const struct lw_fleet *f = lk->fleet;
	bool ring = skel->rodata->lora_cfg.ring;
	struct lw_crypto *c = NULL;
	struct xr_lora_gw *gws;
	size_t gsz;
	int err = 0;

	lk->devs = engine_map_mmap(skel->maps.lora_devs, &lk->devs_sz);
	gws = engine_map_mmap(skel->maps.lora_gws, &gsz);
	lk->gw_ctr_map = engine_map_mmap(skel->maps.lora_gw_ctr, &lk->gw_ctr_sz);
	if (ring)
		lk->ring = engine_map_mmap(skel->maps.lora_ring, &lk->ring_sz);
	if (skel->rodata->lora_cfg.confirmed) {
		lk->confirmed_map = engine_map_mmap(skel->maps.lora_confirmed, &lk->confirmed_sz);
		if (!lk->confirmed_map) {
			err = -ENOMEM;
			pr_warn("cannot map the confirmed devices' table: %s\n", strerror(ENOMEM));
			goto out;
		}
		err = confirmed_fill(lk, skel);
		if (err)
			goto out;
	}
	if (f->joining) {
		lk->join_map = engine_map_mmap(skel->maps.lora_join, &lk->join_sz);
		lk->join_ring_fd = bpf_map__fd(skel->maps.lora_join_accepts);
		if (!lk->join_map) {
			err = -ENOMEM;
			pr_warn("cannot map the JoinRequests' table: %s\n", strerror(ENOMEM));
			goto out;
		}
	}
	lk->ka.stat_tok_fd = bpf_map__fd(skel->maps.lora_stat_tok);
	lk->ka.gw_ctr = lk->gw_ctr_map;
	c = lw_crypto_new();
	if (!lk->devs || !gws || !lk->gw_ctr_map || !c || (ring && !lk->ring)) {
		err = -ENOMEM;
		pr_warn("cannot map the LoRaWAN device table: %s\n", strerror(ENOMEM));
		goto out;
	}
	for (size_t g = 0; g < f->ngw; g++) {
		memcpy(&gws[g].eui, f->gw[g].eui, 8);
		gws[g].saddr = f->gw[g].saddr;
		gws[g].sport = htons(f->gw[g].sport);
	}
	if (skel->rodata->lora_cfg.v11) {
		lk->devs11 = engine_map_mmap(skel->maps.lora_devs11, &lk->devs11_sz);
		if (!lk->devs11) {
			err = -ENOMEM;
			pr_warn("cannot map the LoRaWAN 1.1 device table: %s\n", strerror(ENOMEM));
			goto out;
		}
	}
	for (size_t d = 0; d < f->ndev && !err; d++) {
		err = lw_bpf_device(f, d, t, c, &lk->devs[d]);
		if (!err && lk->devs11 && f->dev[d].v11)
			err = lw_bpf_device11(&f->dev[d], t, c, &lk->devs11[d]);
	}
	if (err)
		pr_warn("cannot compute the devices' CMAC subkeys (OpenSSL)\n");
out:
	lw_crypto_free(c);
	if (gws)
		munmap(gws, gsz);
	return err;
}

/* Uplink u into its ring slot: tag cleared, characters, then the tag (stores stay in order on x86). */
static void ring_fill(struct lw_kernel *lk, uint64_t u)
{
	const struct lw_fleet *f = lk->fleet;
	struct xr_lora_ring_slot *slot = &lk->ring[(u / lk->u_step) & (LORA_RING_SLOTS - 1)];
	size_t d = u % f->ndev;
	const struct xr_lora_dev *dev = &lk->devs[d];
	const struct xr_lora_dev11 *dev11 = lk->devs11 ? &lk->devs11[d] : NULL;
	uint32_t sum;
	int chars;

	__atomic_store_n(&slot->tag, 0, __ATOMIC_RELAXED);
	__atomic_signal_fence(__ATOMIC_SEQ_CST);
	chars = aesni_uplink_b64(dev, dev11, dev->fcnt0 + (uint32_t)(u / f->ndev), slot->b64);
	if (chars < 0)
		return; /* too long for a slot: the program computes it */
	sum = dev->csum_rest;
	for (int i = 0; i < chars; i++)
		sum += xr_lora_csum_byte(slot->b64[i], dev->b64_off + 8 + i);
	slot->csum = xr_lora_csum_fold(sum);
	slot->chars = chars;
	slot->b64_off = dev->b64_off;
	slot->tmst_off = dev->tmst_off;
	memcpy(slot->gw, dev->gw, sizeof(slot->gw));
	__atomic_store_n(&slot->tag, u + 1, __ATOMIC_RELEASE);
}

/* The uplink the slowest sender is at. */
static uint64_t consumer_u(const struct lw_kernel *lk)
{
	const struct engine_opts *o = lk->o;
	uint64_t min = UINT64_MAX;

	for (unsigned int i = 0; i < o->threads; i++) {
		const struct xr_gen_slot *s = &lk->slots[o->cpus[i]];
		uint64_t u = engine_seq(o, i, s->k_next) / lk->fleet->heard_by;

		if (u < min)
			min = u;
	}
	return min;
}

/* The sequence number the slowest sender is at (a stat's token keeps away from it). */
static uint64_t current_n(void *ctx)
{
	struct lw_kernel *lk = ctx;

	return consumer_u(lk) * lk->fleet->heard_by;
}

static void produce(struct lw_kernel *lk, uint64_t limit)
{
	for (; lk->next_u < limit; lk->next_u += lk->u_step, lk->made++)
		ring_fill(lk, lk->next_u);
}

static void *producer_main(void *arg)
{
	struct lw_kernel *lk = arg;

	pin_to_cpu(lk->cpu);
	while (!lk->stop) {
		uint64_t u = consumer_u(lk),
			 limit = u + (uint64_t)(LORA_RING_SLOTS - LORA_RING_MARGIN) * lk->u_step;

		/* fallen behind: the program has computed those itself */
		if (lk->next_u < u)
			lk->next_u = u;
		/*
		 * Full: the ring holds 127k uplinks, 13 ms even at 10 M/s, so a 1 ms
		 * nap cannot starve a sender, and a paced run leaves the CPU to others
		 * (on a small test bed, the server under test).
		 */
		if (lk->next_u + 256 * lk->u_step > limit) {
			usleep(1000);
			continue;
		}
		produce(lk, limit < lk->next_u + 4096 * lk->u_step ?
				    limit :
				    lk->next_u + 4096 * lk->u_step);
	}
	return NULL;
}

static int lw_start(void *ctx, const struct xr_gen_slot *slots, const struct engine_opts *o)
{
	struct lw_kernel *lk = ctx;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	int err;

	lk->slots = slots;
	lk->o = o;
	if (lk->ka.interval_ns || lk->ka.stat_interval_ns) {
		/* a shard keeps its share of the gateways alive */
		lk->ka.first = o->shards > 1 ? o->shard : 0;
		lk->ka.step = o->shards > 1 ? o->shards : 1;
		lk->ka.cur_n = current_n;
		lk->ka.cur_n_ctx = lk;
		err = lw_keepalive_start(&lk->ka, lk->fleet, &lk->net, lk->ifindex);
		if (err)
			return err;
	}
	if (lk->join_map) {
		err = lw_join_start(&lk->join, lk->fleet, lk->join_map, lk->join_ring_fd);
		if (err)
			return err;
	}
	if (!lk->ring)
		return 0;
	lk->ring_used = true;
	/* a shard's uplinks: every N-th from its first (whole uplinks go to a shard) */
	lk->u_step = o->shards > 1 ? o->shards : 1;
	lk->next_u = engine_seq(o, 0, 0) / lk->fleet->heard_by;
	lk->cpu = o->threads < ncpu ? (int)(ncpu - 1 - o->threads) : 0;
	/* a full ring before the departure times are fixed: a paced run must not start late */
	produce(lk, lk->next_u + (uint64_t)(LORA_RING_SLOTS - LORA_RING_MARGIN) * lk->u_step);
	/* then a thread keeps the ring ahead of the senders */
	if (pthread_create(&lk->tid, NULL, producer_main, lk))
		pr_warn("cannot start the precompute thread: uplinks beyond the first %u are computed in BPF\n",
			LORA_RING_SLOTS - LORA_RING_MARGIN);
	else
		lk->running = true;
	return 0;
}

static void lw_stop(void *ctx)
{
	struct lw_kernel *lk = ctx;

	lw_keepalive_stop(&lk->ka);
	if (!lk->running)
		return;
	lk->stop = true;
	pthread_join(lk->tid, NULL);
	lk->running = false;
	pr_debug("precompute thread: %llu uplinks\n", (unsigned long long)lk->made);
}

static void lw_frame(void *ctx, uint64_t n)
{
	struct lw_kernel *lk = ctx;

	if (lk->ring)
		ring_fill(lk, n / lk->fleet->heard_by);
}

/* A join storm is over when every device that asked has joined. */
static bool lw_settled(void *ctx, uint64_t sent)
{
	struct lw_kernel *lk = ctx;

	return lk->join.running && atomic_load(&lk->join.joined) >= sent / lk->fleet->heard_by;
}

/*
 * GPS time (DeviceTimeAns) is TAI - 19 s, counted from 1980-01-06: Unix time
 * + 18 leap seconds (the count since 2017-01-01, still so in 2026) - the
 * epochs' distance.
 */
#define LW_GPS_EPOCH_UNIX_S 315964800LL
#define LW_GPS_LEAP_S 18LL

/*
 * MAC answers summed over the devices; each DeviceTimeAns's time against its
 * uplink's departure (the program's clock is CLOCK_MONOTONIC).
 */
static void mac_finish(struct lw_kernel *lk, struct gen_bpf *skel)
{
	struct lw_mac_result *m = &lk->mac;
	struct timespec rt, mono;
	double sum = 0, gps_of_mono_ns;

	clock_gettime(CLOCK_REALTIME, &rt);
	clock_gettime(CLOCK_MONOTONIC, &mono);
	gps_of_mono_ns = (rt.tv_sec - mono.tv_sec - LW_GPS_EPOCH_UNIX_S + LW_GPS_LEAP_S) * 1e9 +
			 (rt.tv_nsec - mono.tv_nsec);
	for (size_t d = 0; d < lk->fleet->ndev; d++) {
		const struct xr_lora_confirmed *c = &lk->confirmed_map[d];
		double err_ms;

		if (!c->mac_asks)
			continue;
		m->uplinks += c->mac_uplinks;
		m->answered += c->mac_answered;
		m->dup += c->mac_dup;
		m->link_check += c->link_check_ans;
		m->device_time += c->device_time_ans;
		m->gw_cnt_sum += c->gw_cnt_sum;
		if (!c->device_time_ans)
			continue;
		err_ms = ((double)(c->device_time >> 8) * 1e9 + (c->device_time & 255) * 1e9 / 256 -
			  (c->device_time_sent_ns + gps_of_mono_ns)) /
			 1e6;
		sum += err_ms;
		if (fabs(err_ms) > m->device_time_err_max_ms)
			m->device_time_err_max_ms = fabs(err_ms);
		m->device_time_devices++;
	}
	if (m->device_time_devices)
		m->device_time_err_mean_ms = sum / m->device_time_devices;
	engine_hist_read(bpf_map__fd(skel->maps.lora_mac_hist), &m->hist);
}

static void lw_finish(void *ctx, struct gen_bpf *skel)
{
	struct lw_kernel *lk = ctx;

	/* XDP hands on no more JoinAccepts (the replies' link is gone): read the rest */
	lw_join_stop(&lk->join);
	free(lk->gw_ctr);
	lk->gw_ctr = malloc(lk->fleet->ngw * sizeof(*lk->gw_ctr));
	if (lk->gw_ctr && lk->gw_ctr_map)
		memcpy(lk->gw_ctr, lk->gw_ctr_map, lk->fleet->ngw * sizeof(*lk->gw_ctr));
	engine_percpu_sum(bpf_map__fd(skel->maps.lora_dl_ctr), XR_LORA_DL_CTRS, lk->dl_ctr);
	if (!lk->confirmed_map)
		return;
	for (size_t d = 0; d < lk->fleet->ndev; d++) {
		const struct xr_lora_confirmed *c = &lk->confirmed_map[d];

		lk->confirmed_uplinks += c->uplinks;
		lk->confirmed_acked += c->acked;
		lk->dup_acks += c->dup_acks;
	}
	engine_hist_read(bpf_map__fd(skel->maps.lora_ack_hist), &lk->ack_hist);
	mac_finish(lk, skel);
}

static void lw_close(void *ctx)
{
	struct lw_kernel *lk = ctx;

	lw_join_stop(&lk->join);
	if (lk->join_map)
		munmap(lk->join_map, lk->join_sz);
	lk->join_map = NULL;
	if (lk->devs)
		munmap(lk->devs, lk->devs_sz);
	if (lk->devs11)
		munmap(lk->devs11, lk->devs11_sz);
	lk->devs11 = NULL;
	if (lk->ring)
		munmap(lk->ring, lk->ring_sz);
	if (lk->gw_ctr_map)
		munmap(lk->gw_ctr_map, lk->gw_ctr_sz);
	if (lk->confirmed_map)
		munmap(lk->confirmed_map, lk->confirmed_sz);
	lk->confirmed_map = NULL;
	lk->devs = NULL;
	lk->ring = NULL;
	lk->gw_ctr_map = NULL;
}

/* Confirmed uplinks, or ones that ask for MAC answers: the run reads the server's downlinks */
static bool lw_wants_downlinks(const struct lw_fleet *f)
{
	for (size_t d = 0; d < f->ndev; d++)
		if (f->dev[d].confirmed || f->dev[d].mac_asks)
			return true;
	return false;
}

/*
 * lw_xsk_build finishes every frame, each heard by no more gateways than a
 * device's record holds: a join storm's JoinRequests, or uplinks that come
 * whole from the AES-NI ring (no device that waits for its downlink)
 */
static bool lw_builds_every_frame(void *ctx)
{
	const struct lw_kernel *lk = ctx;
	const struct lw_fleet *f = lk->fleet;

	if (!lk->rewrite || f->heard_by > XR_LORA_MAX_HEARD)
		return false;
	return f->joining || (lk->precompute && !lw_wants_downlinks(f) && aesni_available());
}

/*
 * The lighter reply program reads JoinAccepts and counts data downlinks
 * unread: a join storm, or a run with no device that waits for its downlink
 */
static bool lw_answers_unread_ok(void *ctx)
{
	const struct lw_fleet *f = ((const struct lw_kernel *)ctx)->fleet;

	return f->joining || !lw_wants_downlinks(f);
}

void lw_kernel_init(struct lw_kernel *lk, const struct lw_fleet *f, bool rewrite, bool precompute,
		    struct engine_opts *o)
{
	memset(lk, 0, sizeof(*lk));
	lk->ops = (struct engine_proto){ .ctx = lk,
					 .before_load = lw_before_load,
					 .after_load = lw_after_load,
					 .start = lw_start,
					 .stop = lw_stop,
					 .frame = lw_frame,
					 .build = lw_xsk_build,
					 .builds_every_frame = lw_builds_every_frame,
					 .answers_unread_ok = lw_answers_unread_ok,
					 .settled = lw_settled,
					 .finish = lw_finish,
					 .close = lw_close };
	lk->fleet = f;
	lk->u_step = 1;
	lk->rewrite = rewrite;
	lk->precompute = precompute;
	o->proto = &lk->ops;
	o->hook = rewrite ? XR_HOOK_LORAWAN : XR_HOOK_NONE;
	/* the hook writes into the frame, and every copy of an uplink is one frame of the set */
	o->copy_always = true;
	o->frame_div = f->heard_by;
	/* a device's frame counter must come from one shard, or their skew would reorder it */
	o->frames_are_devices = true;
	/* PUSH_ACKs echo a 16-bit token: n's low bits */
	o->ts_mask = XR_LORA_TOKENS - 1;
	o->reply_kind = XR_REPLY_LORA_ACK;
}

void lw_kernel_free(struct lw_kernel *lk)
{
	lw_keepalive_stop(&lk->ka);
	free(lk->gw_ctr);
	lk->gw_ctr = NULL;
	free(lk->ack_hist.hist);
	lk->ack_hist.hist = NULL;
	free(lk->mac.hist.hist);
	lk->mac.hist.hist = NULL;
	lw_join_stop(&lk->join);
	lw_join_free(&lk->join);
}

int lw_kernel_aes_test(struct xr_aes_test *t)
{
	uint8_t pkt[64] = {};
	struct gen_bpf *skel;
	__u32 zero = 0;
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1);
	int err;

	skel = gen_bpf__open();
	if (!skel)
		return -errno;
	lw_aes_tables((struct xr_aes_tables *)&skel->rodata->aes);
	bpf_program__set_autoload(skel->progs.xr_aes_test, true);
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

int lw_kernel_dl_test(const uint8_t *frames, size_t stride, const uint32_t *lens, size_t n,
		      const struct xr_lora_dev *dev, const struct xr_lora_dev11 *dev11,
		      struct xr_lora_dl_test *out)
{
	struct gen_bpf *skel;
	__u32 zero = 0;
	int err;

	skel = gen_bpf__open();
	if (!skel)
		return -errno;
	/* the MIC check's AES reads its tables from rodata */
	lw_aes_tables((struct xr_aes_tables *)&skel->rodata->aes);
	bpf_program__set_autoload(skel->progs.xr_lora_dl_test, true);
	err = gen_bpf__load(skel);
	if (!err &&
	    (bpf_map_update_elem(bpf_map__fd(skel->maps.lora_dl_test_dev), &zero, dev, 0) ||
	     bpf_map_update_elem(bpf_map__fd(skel->maps.lora_dl_test_dev11), &zero, dev11, 0)))
		err = -errno;
	for (size_t i = 0; i < n && !err; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = frames + i * stride,
			    .data_size_in = lens[i], .repeat = 1);
		uint32_t fcnt = out[i].fcnt, v11 = out[i].v11, conf = out[i].conf_fcnt;

		memset(&out[i], 0, sizeof(out[i]));
		out[i].fcnt = fcnt;
		out[i].v11 = v11;
		out[i].conf_fcnt = conf;
		if (bpf_map_update_elem(bpf_map__fd(skel->maps.lora_dl_test), &zero, &out[i], 0) ||
		    bpf_prog_test_run_opts(bpf_program__fd(skel->progs.xr_lora_dl_test), &topts) ||
		    bpf_map_lookup_elem(bpf_map__fd(skel->maps.lora_dl_test), &zero, &out[i]))
			err = -errno;
		else if (topts.retval != XDP_PASS)
			err = -EINVAL;
	}
	gen_bpf__destroy(skel);
	return err;
}
