// SPDX-License-Identifier: GPL-2.0
#include <errno.h>
#include <sched.h>
#include <time.h>
#include <sys/prctl.h>
#include "engine/pacer.h"
#include "util/log.h"

int pin_to_cpu(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -errno : 0;
}

/*
 * The interval between frames of all threads, 1e9 / pps ns, as num / den: pps
 * to as many decimal places as keep den below 2^32 (an integer rate is
 * exact). Thread t's k-th frame is the run's j = k * threads + t-th and leaves
 * at j * num / den, without drift, so --duration T asks for exactly the
 * frames due before T, however many threads share them.
 */
static void pacer_period(struct pacer *p, double pps)
{
	double scale = 1;

	while (pps * scale * 10 < 4294967296.0 && scale < 1e9)
		scale *= 10;
	p->per_den = (uint64_t)(pps * scale + 0.5);
	if (!p->per_den)
		p->per_den = 1;
	p->per_num = (uint64_t)(1e9 * scale + 0.5);
	p->per_q = p->per_num / p->per_den;
	p->per_r = p->per_num % p->per_den;
}

int engine_slot_cpu(void)
{
	int cpu = sched_getcpu();

	return cpu >= 0 && cpu < XR_MAX_CPUS ? cpu : 0;
}

void pacer_thread_init(void)
{
	prctl(PR_SET_TIMERSLACK, 1UL);
}

void pacer_init(struct pacer *p, const struct engine_opts *o, unsigned int thread, uint64_t t0,
		const struct xr_frame *frames)
{
	*p = (struct pacer){
		.pace = o->pace,
		.t0_ns = t0,
		.nthreads = o->threads,
		.thread = thread,
		.nframes = o->fs->n,
		.span_ns = o->fs->span_ns,
		.mult_milli = o->pace == XR_PACE_PCAP ? (uint64_t)(o->multiplier * 1000 + 0.5) :
							1000,
		.frames = frames,
		.o = o,
	};
	if (!p->mult_milli)
		p->mult_milli = 1;
	if (o->pace == XR_PACE_RATE) {
		pacer_period(p, o->pps);
		/* a shard's frames fall between the shard before's (its pps is its own part of the whole) */
		if (o->shards > 1)
			p->t0_ns +=
				(uint64_t)(1e9 * o->shard * (o->frame_div > 1 ? o->frame_div : 1) /
					   (o->pps * o->shards));
	}
}

uint64_t pacer_due(const struct pacer *p, uint64_t k)
{
	uint64_t n, nb, ct, ctb, N = p->nframes;

	if (p->pace == XR_PACE_RATE)
		/* j * num / den, the product of 128 bits that bpf/gen.bpf.c splits */
		return p->t0_ns +
		       (uint64_t)((unsigned __int128)((k - p->k_base) * p->nthreads + p->thread) *
				  p->per_num / p->per_den);
	if (p->pace != XR_PACE_PCAP)
		return 0;
	n = engine_seq(p->o, p->thread, k);
	nb = engine_seq(p->o, p->thread, p->k_base);
	ct = (n / N) * p->span_ns + p->frames[n % N].ts_ns;
	ctb = (nb / N) * p->span_ns + p->frames[nb % N].ts_ns;
	/* 128 bits: a capture spanning months, slowed down, would wrap 64 */
	return p->t0_ns + (uint64_t)((unsigned __int128)(ct - ctb) * 1000 / p->mult_milli);
}

uint64_t pacer_k_at(const struct pacer *p, uint64_t t0, uint64_t duration_ns)
{
	uint64_t phase = p->t0_ns - t0, lo = 0, hi, end = t0 + duration_ns, j;
	/* as far as departures are computed without wrapping: 2^52 ns (52 days) of capture time */
	uint64_t loops = p->span_ns ? (1ULL << 52) / p->span_ns : 1ULL << 52;

	if (p->pace == XR_PACE_RATE) {
		if (duration_ns <= phase)
			return 0;
		/* the first j with floor(j * num / den) >= duration - phase, then this thread's first k past it */
		j = ((unsigned __int128)(duration_ns - phase) * p->per_den + p->per_num - 1) /
		    p->per_num;
		return j > p->thread ? (j - p->thread + p->nthreads - 1) / p->nthreads : 0;
	}
	/*
	 * Capture timing: departures never go back (the loader keeps capture
	 * times in order, and a loop starts after the last frame), so the first
	 * k due at or after the end is found by halving. A capture whose frames
	 * all share one time has no schedule to keep: none is due "later".
	 */
	hi = (loops ? loops : 1) * p->nframes / p->nthreads / (p->o->shards > 1 ? p->o->shards : 1);
	if (pacer_due(p, hi) < end)
		return XR_FOREVER;
	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (pacer_due(p, mid) < end)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

uint64_t pacer_wait(struct pacer *p, uint64_t k, uint64_t k_end, uint64_t max, uint64_t tick_ns)
{
	uint64_t due = pacer_due(p, k), now = now_ns(), wake = due, kk;

	if (p->pace == XR_PACE_NONE)
		return k_end - k < max ? k_end - k : max;
	if (due < p->last_wake + tick_ns && k + max <= k_end) {
		uint64_t full = pacer_due(p, k + max - 1);

		wake = full < p->last_wake + tick_ns ? full : p->last_wake + tick_ns;
	}
	if (wake > now) {
		sleep_until(wake);
		now = now_ns();
	}
	p->last_wake = now;
	for (kk = k + 1; kk < k_end && kk - k < max; kk++)
		if (pacer_due(p, kk) > now)
			break;
	return kk - k;
}

void thread_plan_init(struct thread_plan *tp, const struct engine_opts *o, const struct pacer *p,
		      unsigned int thread, uint64_t t0)
{
	tp->k_count = XR_FOREVER;
	if (o->count != XR_FOREVER)
		tp->k_count =
			o->count > thread ? (o->count - thread + o->threads - 1) / o->threads : 0;
	tp->k_due = XR_FOREVER;
	if ((o->pace == XR_PACE_RATE || o->pace == XR_PACE_PCAP) && o->duration_ns)
		tp->k_due = pacer_k_at(p, t0, o->duration_ns);
}

void thread_account(const struct thread_plan *tp, const struct engine_opts *o, uint64_t k_next,
		    enum thread_stop why, uint64_t *asked, struct engine_unsent *u)
{
	uint64_t end = thread_plan_end(tp), missed;

	if (end == XR_FOREVER) {
		/* until stopped: what was asked is what was attempted */
		*asked += k_next;
		return;
	}
	*asked += tp->k_count != XR_FOREVER ? tp->k_count : end;
	if (tp->k_count != XR_FOREVER && tp->k_count > end)
		u->duration += tp->k_count - end;
	missed = end > k_next ? end - k_next : 0;
	if (!missed)
		return;
	switch (why) {
	case STOP_SIGNAL: u->interrupted += missed; break;
	case STOP_ERROR: u->device_error += missed; break;
	case STOP_DEADLINE:
	case STOP_DONE:
		/* the frames were due before the end: a schedule the sender did not keep */
		if (tp->k_due != XR_FOREVER)
			u->behind += missed;
		else
			u->duration += missed;
		break;
	}
}

uint64_t engine_t0(const struct engine_opts *o, uint64_t lead_ns)
{
	uint64_t mono = now_ns(), t0 = mono + lead_ns, real, at;
	struct timespec ts;

	if (!o->start_unix_ns)
		return t0;
	clock_gettime(CLOCK_REALTIME, &ts);
	real = ts.tv_sec * 1000000000ULL + ts.tv_nsec;
	if (o->start_unix_ns <= real) {
		pr_warn("warning: --start-at was %.3f s ago when the engine was ready: starting now\n",
			(real - o->start_unix_ns) / 1e9);
		return t0;
	}
	/* closer than the lead: the threads need the lead to be running, so it starts late by less */
	at = mono + (o->start_unix_ns - real);
	return at > t0 ? at : t0;
}

void engine_wait_start(const struct engine_opts *o, uint64_t t0, uint64_t lead_ns)
{
	uint64_t until = o->pace == XR_PACE_NONE ? t0 : t0 - lead_ns;

	if (!o->start_unix_ns)
		return;
	/* the signal handler has no SA_RESTART: a signal ends the sleep */
	while (!xr_stop && now_ns() < until)
		sleep_until(until);
}

uint64_t pacer_grace_ns(const struct engine_opts *o)
{
	uint64_t g = o->duration_ns / 50;

	if (o->pace == XR_PACE_NONE || !o->duration_ns)
		return 0;
	return g < 20000000ULL ? 20000000ULL : g > 500000000ULL ? 500000000ULL : g;
}
