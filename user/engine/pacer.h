/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Departure times. Thread t of T sends sequence numbers n = k * T + t; the
 * departure time of its k-th frame is a pure function of k (and, for capture
 * timing, of the frame's timestamp), so a late wake-up never shifts what
 * follows. bpf/gen.bpf.c computes the same function (due_ns) in the kernel.
 */
#ifndef __XR_PACER_H
#define __XR_PACER_H

#include <stdint.h>
#include "engine/engine.h"
#include "util/time.h"

struct pacer {
	enum xr_pace pace;
	uint64_t t0_ns; /* departure of k_base */
	uint64_t k_base;
	/* XR_PACE_RATE: the run's interval, per_num / per_den ns (struct xr_gen_slot) */
	uint64_t per_num, per_den, per_q, per_r;
	unsigned int nthreads, thread;
	uint64_t nframes, span_ns, mult_milli; /* XR_PACE_PCAP */
	const struct engine_opts *o; /* n of k: engine_seq(o, thread, k) */
	const struct xr_frame *frames;
	uint64_t last_wake;
};

int pin_to_cpu(int cpu);
/* The CPU to run a one-off call on: this one, unless it has no slot (hosts with more than XR_MAX_CPUS). */
int engine_slot_cpu(void);
/* A sender thread wakes when its frames are due, not up to the default timer slack (50 us) later. */
void pacer_thread_init(void);

/* Thread `thread` of o's run, all threads starting from t0; frames[] gives capture times. */
void pacer_init(struct pacer *p, const struct engine_opts *o, unsigned int thread, uint64_t t0,
		const struct xr_frame *frames);
uint64_t pacer_due(const struct pacer *p, uint64_t k);
/* The first k whose departure is at or after t0 + duration (XR_FOREVER: no departure is that late). */
uint64_t pacer_k_at(const struct pacer *p, uint64_t t0, uint64_t duration_ns);
/*
 * Sleeps until frame k is due, but wakes at most every tick_ns while frames are
 * dense; returns how many frames from k on (below k_end, at most max) are due.
 */
uint64_t pacer_wait(struct pacer *p, uint64_t k, uint64_t k_end, uint64_t max, uint64_t tick_ns);

/*
 * What one thread is asked to send: k_count frames from --count (XR_FOREVER
 * without one) and, for a rate with --duration, the k_due frames due before
 * the duration ends. The thread is told to send min(k_count, k_due).
 */
struct thread_plan {
	uint64_t k_count, k_due;
};

/* Why a thread stopped before its plan's end (or STOP_DONE when it did not). */
enum thread_stop { STOP_DONE, STOP_SIGNAL, STOP_DEADLINE, STOP_ERROR };

void thread_plan_init(struct thread_plan *tp, const struct engine_opts *o, const struct pacer *p,
		      unsigned int thread, uint64_t t0);
static inline uint64_t thread_plan_end(const struct thread_plan *tp)
{
	return tp->k_count < tp->k_due ? tp->k_count : tp->k_due;
}
/*
 * Adds a thread that got to k_next to what was asked and to the reasons for
 * what it did not send: the frames of its plan it did not reach (interrupted,
 * fell behind the schedule, device error, or cut by --duration at top speed),
 * and those of --count beyond the duration's end. Without a count or a
 * schedule, what was asked is what it attempted.
 */
void thread_account(const struct thread_plan *tp, const struct engine_opts *o, uint64_t k_next,
		    enum thread_stop why, uint64_t *asked, struct engine_unsent *u);
/*
 * The first departure (CLOCK_MONOTONIC): lead_ns from now, or --start-at's
 * wall-clock time when that is later (a warning when it has passed).
 */
uint64_t engine_t0(const struct engine_opts *o, uint64_t lead_ns);

/*
 * With --start-at: sleeps until shortly before t0 (until t0 at top speed,
 * which has no schedule), so that no thread spins through the wait; a
 * signal ends it early (xr_stop).
 */
void engine_wait_start(const struct engine_opts *o, uint64_t t0, uint64_t lead_ns);

/* How long after --duration's end a paced thread may still send frames due before it. */
uint64_t pacer_grace_ns(const struct engine_opts *o);

#endif
