// SPDX-License-Identifier: GPL-2.0
/* The reply counter's maps read and summed over CPUs (bpf/lib/replies.bpf.h). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include "engine/session.h"
#include "util/time.h"
#include "gen.skel.h"

/* A histogram map (XR_HIST_MAP in bpf/lib/replies.bpf.h) by its shape as declared. */
static bool is_hist(const struct bpf_map *m)
{
	return bpf_map__type(m) == BPF_MAP_TYPE_ARRAY && (bpf_map__map_flags(m) & BPF_F_MMAPABLE) &&
	       bpf_map__value_size(m) == 8 && bpf_map__max_entries(m) == XR_RTT_CELLS;
}

int engine_hists_size(struct bpf_object *obj)
{
	int ncpu = libbpf_num_possible_cpus(), err;
	struct bpf_map *m;

	if (ncpu < 0)
		return ncpu;
	bpf_object__for_each_map(m, obj)
	{
		if (!is_hist(m))
			continue;
		err = bpf_map__set_max_entries(m, (__u32)ncpu * XR_RTT_CELLS);
		if (err)
			return err;
	}
	return 0;
}

int engine_hist_sum(int fd, uint64_t *sum)
{
	int ncpu = libbpf_num_possible_cpus();
	size_t sz, pg = sysconf(_SC_PAGESIZE);
	const uint64_t *cells;

	if (ncpu < 0)
		return ncpu;
	sz = ((size_t)ncpu * XR_RTT_CELLS * sizeof(uint64_t) + pg - 1) / pg * pg;
	/* fails (EINVAL) on a map left at one CPU's size: never a silent part of the counts */
	cells = mmap(NULL, sz, PROT_READ, MAP_SHARED, fd, 0);
	if (cells == MAP_FAILED)
		return -errno;
	memset(sum, 0, XR_RTT_CELLS * sizeof(uint64_t));
	for (int c = 0; c < ncpu; c++)
		for (__u32 i = 0; i < XR_RTT_CELLS; i++)
			sum[i] += cells[(size_t)c * XR_RTT_CELLS + i];
	munmap((void *)cells, sz);
	return 0;
}

int engine_hist_read(int fd, struct engine_replies *r)
{
	int err;

	r->seconds = 0;
	if (!r->hist)
		r->hist = calloc((size_t)XR_RTT_CELLS, sizeof(uint64_t));
	if (!r->hist)
		return -ENOMEM;
	err = engine_hist_sum(fd, r->hist);
	for (__u32 key = 0; !err && key < XR_RTT_CELLS; key++)
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

uint64_t rtt_bucket_floor(unsigned int b)
{
	unsigned int e;

	if (b < 16)
		return b;
	/* bucket (e - 3) * 16 + m holds [2^e + m * 2^(e-4), 2^e + (m+1) * 2^(e-4)) */
	e = b / 16 + 3;
	return (1ULL << e) + (uint64_t)(b % 16) * (1ULL << (e - 4));
}

/* One more row of the counters as they stand; a full table doubles, without going past a day. */
static int at_sec_push(struct gen_session *k, const struct xr_replies_stats *r)
{
	if (k->nsec_st == k->cap_st) {
		unsigned int cap = k->cap_st ? k->cap_st * 2 : 64;
		struct xr_replies_stats *t;

		if (cap > 86400)
			return -E2BIG;
		t = reallocarray(k->at_sec, cap, sizeof(*t));
		if (!t)
			return -ENOMEM;
		k->at_sec = t;
		k->cap_st = cap;
	}
	k->at_sec[k->nsec_st++] = *r;
	return 0;
}

/*
 * Each second of the run that has ended since the last call gets the counters
 * as read now: the control loops call at least once a second, so a row is at
 * most a poll late
 */
static void sample_seconds(struct gen_session *k, uint64_t now)
{
	uint64_t origin = k->skel->bss->replies_origin_ns;
	struct xr_replies_stats r;

	if (!origin || now < origin + (k->nsec_st + 1) * 1000000000ULL ||
	    engine_replies_sum(bpf_map__fd(k->skel->maps.replies_stats), &r))
		return;
	while (now >= origin + (k->nsec_st + 1) * 1000000000ULL)
		if (at_sec_push(k, &r))
			return;
}

void session_replies_tick(struct gen_session *k, const struct engine_opts *o)
{
	struct xr_replies_stats r;
	uint64_t now = now_ns();

	if (o->reply_kind == XR_REPLY_NONE || !k->skel)
		return;
	sample_seconds(k, now);
	/* ten times a second: a read sums every CPU's copy, and the control loop runs every ms */
	if (!o->live || now < k->live_replies_next)
		return;
	k->live_replies_next = now + 100000000ULL;
	if (engine_replies_sum(bpf_map__fd(k->skel->maps.replies_stats), &r))
		return;
	pthread_mutex_lock(&o->live->lock);
	if (o->live->rtt_fd < 0)
		o->live->rtt_fd = fcntl(bpf_map__fd(k->skel->maps.rtt_hist), F_DUPFD_CLOEXEC, 0);
	o->live->have_replies = true;
	o->live->replies = r;
	o->live->now_ns = now;
	pthread_mutex_unlock(&o->live->lock);
}

static void read_replies(struct gen_session *k, struct engine_result *res)
{
	struct engine_replies *r = &res->replies;
	struct bpf_prog_info info = {};
	__u32 len = sizeof(info);
	uint64_t origin = k->skel->bss->replies_origin_ns, now = now_ns();

	if (engine_replies_sum(bpf_map__fd(k->skel->maps.replies_stats), &r->st) == -ENOMEM)
		return;
	engine_hist_read(bpf_map__fd(k->skel->maps.rtt_hist), r);
	/* the last row: from the last whole second to now, so that each column's rows sum to its total */
	if (origin && now > origin + k->nsec_st * 1000000000ULL && !at_sec_push(k, &r->st)) {
		r->last_span_s = (now - origin) / 1e9 - (k->nsec_st - 1);
		r->at_sec = k->at_sec;
		r->nsec_st = k->nsec_st;
		k->at_sec = NULL;
		k->nsec_st = k->cap_st = 0;
	}
	/* what answering cost, when the kernel keeps program statistics (benchmarks) */
	if (k->replies_prog &&
	    !bpf_obj_get_info_by_fd(bpf_program__fd(k->replies_prog), &info, &len)) {
		res->replies_run_ns = info.run_time_ns;
		res->replies_run_cnt = info.run_cnt;
	}
}

void session_end(struct gen_session *k, const struct engine_opts *o, struct engine_result *res,
		 bool proto_started, uint64_t sent)
{
	const struct engine_proto *proto = o->proto;
	uint64_t until;

	if (proto_started && proto->stop)
		proto->stop(proto->ctx);
	res->open_peak = atomic_load(&k->open_peak);
	res->gate_waits = atomic_load(&k->gate_waits);
	if (o->reply_kind == XR_REPLY_NONE)
		return;
	/* answers to the last frames are still on their way (or, for sessions, until all ended) */
	until = now_ns() + o->reply_wait_ns;
	while (!xr_stop && now_ns() < until) {
		uint64_t known;

		if (proto && proto->settled && proto->settled(proto->ctx, sent))
			break;
		known = proto && proto->wait_until ? proto->wait_until(proto->ctx) : 0;
		if (known)
			until = known;
		session_replies_tick(k, o);
		sleep_until(now_ns() + 10000000ULL);
	}
	/*
	 * answers end here: the counters and the protocol's own tables (finish)
	 * are then read from one state, not from two moments
	 */
	bpf_link__destroy(k->replies);
	k->replies = NULL;
	read_replies(k, res);
}
