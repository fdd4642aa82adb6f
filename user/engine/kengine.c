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
#include "engine/engine.h"
#include "engine/pacer.h"
#include "engine/session.h"
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

struct sender {
	struct gen_session *k;
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

struct hold_args {
	struct gen_session *k;
	int err;
};

static void *hold_main(void *arg)
{
	struct hold_args *h = arg;
	struct gen_session *k = h->k;

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
	k->hold = bpf_program__attach_xdp(k->gen_prog, 1 /* lo */);
	if (!k->hold)
		h->err = -errno;
	return NULL;
}

static void hold_dispatcher(struct gen_session *k)
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

static int run_live(struct gen_session *k, int repeat, unsigned int batch)
{
	struct xdp_md ctx = { .data_end = k->tmpl_len, .ingress_ifindex = k->ifindex };
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = k->tmpl, .data_size_in = k->tmpl_len,
		    .ctx_in = &ctx, .ctx_size_in = sizeof(ctx), .repeat = repeat,
		    .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = batch, );

	return bpf_prog_test_run_opts(bpf_program__fd(k->gen_prog), &topts) ? -errno : 0;
}

/* --concurrency: frames taken that started no session (refused by the driver, not built) */
static uint64_t gate_lost(const struct gen_session *k)
{
	uint64_t lost = 0;

	for (unsigned int i = 0; i < k->nthreads; i++) {
		const struct xr_gen_slot *s = &k->slots[k->cpus[i]];

		lost += s->xmit_drops + s->redirect_err + s->bad_frame;
	}
	return lost;
}

static void *sender_main(void *arg)
{
	struct sender *sd = arg;
	struct gen_session *k = sd->k;
	const struct engine_opts *o = sd->o;
	struct xr_gen_slot *s = &k->slots[sd->cpu];
	int err;

	err = pin_to_cpu(sd->cpu);
	if (!err)
		pacer_thread_init();
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
			repeat = (int)session_gate_take(k, o, repeat, gate_lost(k));
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

static void on_sigusr1(int sig)
{
}

/* The running totals of the started threads, as the tracepoints and the program count them. */
static void slots_sum(const struct gen_session *k, const struct sender *sd, unsigned int n,
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

/* A kernel-engine run's state, shared by its steps */
struct krun {
	const struct engine_opts *o;
	struct engine_result *res;
	struct gen_session k;
	struct sender sd[XR_MAX_CPUS];
	struct thread_plan plan[XR_MAX_CPUS];
	struct run_meter meter;
	struct sigaction old_sa;
	uint64_t total; /* frames planned, or XR_FOREVER */
	unsigned int started; /* sender threads running */
	bool proto_started, stopped_by_duration;
};

/*
 * The session loaded and held in the dispatcher, its reply program attached,
 * the protocol's helpers started, SIGUSR1 ready to stop a sender. 0 or -errno.
 */
static int run_open(struct krun *r)
{
	const struct engine_opts *o = r->o;
	const struct engine_proto *proto = o->proto;
	struct sigaction sa = { .sa_handler = on_sigusr1 };
	int err;

	if (o->concurrency && (!proto || !proto->ended || o->pace != XR_PACE_NONE)) {
		pr_warn("a closed loop (--concurrency) needs sessions that say when they end, at top speed\n");
		return -EINVAL;
	}
	err = session_open(&r->k, o->ifc, o->fs, NULL, 0, o, SESSION_LIVE);
	if (err)
		return err;
	hold_dispatcher(&r->k);
	/* the maps hold the frames now: the loading buffer would only double the memory */
	frameset_release(o->fs);
	err = session_replies_attach(&r->k, o);
	if (err)
		goto err;
	session_slots_init(&r->k, o);
	/* the protocol's helpers (a precompute thread, say) are ready before the first departure */
	if (proto && proto->start) {
		err = proto->start(proto->ctx, r->k.slots, o);
		if (err)
			goto err;
		r->proto_started = true;
	}
	sigemptyset(&sa.sa_mask);
	/* no SA_RESTART: the signal must end a BPF_PROG_RUN call with EINTR */
	sigaction(SIGUSR1, &sa, &r->old_sa);
	return 0;
err:
	session_close(&r->k);
	return err;
}

/* Each sender's pacer and plan, from one start t0 (returned); the frames planned in r->total */
static uint64_t senders_plan(struct krun *r)
{
	const struct engine_opts *o = r->o;
	/*
	 * Departure times are fixed after the helpers started: LoRaWAN's first
	 * ring of uplinks (~45 ms) inside the lead made the first 135 frames of a
	 * 2,800/s run leave at once, a burst that a rate limiter in front of the
	 * server (burst 100) partly dropped. A short lead so that every thread is
	 * running before the first departure.
	 */
	uint64_t t0 = engine_t0(o, 2 * POLL_NS);

	for (unsigned int i = 0; i < o->threads; i++) {
		struct xr_gen_slot *s = &r->k.slots[o->cpus[i]];
		struct sender *sd = &r->sd[i];

		*sd = (struct sender){ .k = &r->k, .o = o, .cpu = o->cpus[i], .thread = i };
		pacer_init(&sd->pacer, o, i, t0, r->k.frames);
		s->t0_ns = sd->pacer.t0_ns;
		s->per_num = sd->pacer.per_num;
		s->per_den = sd->pacer.per_den;
		s->per_q = sd->pacer.per_q;
		s->per_r = sd->pacer.per_r;
		/*
		 * A paced run with --duration is asked for exactly the frames due
		 * before its end; the control loop's wall-clock stop (after a grace)
		 * only ends a sender that fell behind, and what it did not send is
		 * counted as such.
		 */
		thread_plan_init(&r->plan[i], o, &sd->pacer, i, t0);
		s->k_end = thread_plan_end(&r->plan[i]);
		if (r->total != XR_FOREVER)
			r->total = s->k_end == XR_FOREVER ? XR_FOREVER : r->total + s->k_end;
		s->active = 1;
		if (o->pace == XR_PACE_RATE)
			sd->user_paced = o->pps / o->threads <= USER_PACED_MAX_PPS;
		else if (o->pace == XR_PACE_PCAP)
			sd->user_paced = o->fs->span_ns == 0 || o->fs->n * o->multiplier * 1e9 /
										o->fs->span_ns /
										o->threads <=
									USER_PACED_MAX_PPS;
	}
	return t0;
}

/* The senders started at t0 (paced runs; at once otherwise): 0, or why one could not start */
static int senders_start(struct krun *r, uint64_t t0)
{
	const struct engine_opts *o = r->o;
	int err;

	engine_wait_start(o, t0, 2 * POLL_NS);
	/* paced runs start at t0; the duration counts from there */
	r->res->start_ns = o->pace == XR_PACE_NONE ? now_ns() : t0;
	r->k.skel->bss->replies_origin_ns = r->res->start_ns;
	if (o->on_start)
		o->on_start(o->on_start_ctx, r->res->start_ns);
	for (unsigned int i = 0; i < o->threads; i++) {
		err = -pthread_create(&r->sd[i].tid, NULL, sender_main, &r->sd[i]);
		if (err) {
			pr_warn("cannot start sender thread: %s\n", strerror(-err));
			xr_stop = 1;
			return err;
		}
		r->started++;
	}
	return 0;
}

/*
 * One pass of the control loop at now: --duration's end and a signal stop the
 * senders, a sender past its plan is woken to see it; whether all are done
 */
static bool senders_watch(struct krun *r, uint64_t now, uint64_t deadline)
{
	unsigned int done = 0;

	if (now >= deadline && !r->stopped_by_duration && !xr_stop) {
		r->stopped_by_duration = true;
		for (unsigned int i = 0; i < r->started; i++)
			r->k.slots[r->sd[i].cpu].k_end = 0;
	}
	if (xr_stop)
		for (unsigned int i = 0; i < r->started; i++)
			r->k.slots[r->sd[i].cpu].k_end = 0;
	for (unsigned int i = 0; i < r->started; i++) {
		struct xr_gen_slot *s = &r->k.slots[r->sd[i].cpu];

		if (r->sd[i].done)
			done++;
		else if (s->k_next >= s->k_end && (r->o->pace != XR_PACE_NONE || s->k_end == 0))
			pthread_kill(r->sd[i].tid, SIGUSR1);
	}
	return done == r->started;
}

/* Until the senders are done: the live line, the per-second figures; then the answers waited for */
static void control_loop(struct krun *r)
{
	const struct engine_opts *o = r->o;
	uint64_t deadline = o->duration_ns ? r->res->start_ns + o->duration_ns + pacer_grace_ns(o) :
					     UINT64_MAX,
		 sent, failed, bytes;

	meter_init(&r->meter, o, r->res->start_ns, r->total);
	for (;;) {
		uint64_t now = now_ns();

		if (senders_watch(r, now, deadline))
			break;
		if (now >= r->meter.next_sec || (o->progress && now >= r->meter.next_line) ||
		    o->live) {
			slots_sum(&r->k, r->sd, r->started, &sent, &failed, &bytes);
			meter_tick(&r->meter, now, sent, failed,
				   sent + failed ? (double)bytes / (sent + failed) : 0);
			session_replies_tick(&r->k, o);
		}
		sleep_until(now + POLL_NS);
	}
	r->res->end_ns = now_ns();
	r->res->interrupted = xr_stop;
	for (unsigned int i = 0; i < r->started; i++)
		pthread_join(r->sd[i].tid, NULL);
	slots_sum(&r->k, r->sd, r->started, &sent, &failed, &bytes);
	meter_finish(&r->meter, r->res->end_ns, sent, r->res);
	session_end(&r->k, o, r->res, r->proto_started, sent);
	sigaction(SIGUSR1, &r->old_sa, NULL);
}

/* Thread i's books into res: asked, sent, not sent by reason */
static void thread_books(struct krun *r, unsigned int i, uint64_t *tx, uint64_t *tx_bytes,
			 uint64_t *accounted)
{
	const struct engine_opts *o = r->o;
	const struct xr_gen_slot *s = &r->k.slots[o->cpus[i]];
	const struct sender *sd = &r->sd[i];
	struct engine_result *res = r->res;
	enum thread_stop why = i >= r->started	      ? STOP_ERROR :
			       sd->err		      ? STOP_ERROR :
			       xr_stop		      ? STOP_SIGNAL :
			       r->stopped_by_duration ? STOP_DEADLINE :
							STOP_DONE;

	thread_account(&r->plan[i], o, s->k_next, why, &res->asked, &res->unsent);
	*tx += s->tx;
	*tx_bytes += s->tx_bytes;
	res->sent += s->xmit_sent;
	res->unsent.ring_full += s->xmit_drops;
	res->unsent.redirect += s->redirect_err;
	res->unsent.bad_frame += s->bad_frame;
	res->hook_ctr[0] += s->hook_ctr[0];
	res->hook_ctr[1] += s->hook_ctr[1];
	res->backoff_skipped += s->backoff_skipped;
	res->spun_ns += s->spun_ns;
	*accounted += s->xmit_sent + s->xmit_drops + s->redirect_err;
	if (s->xmit_err)
		res->xmit_err = s->xmit_err;
	if (s->redirect_errno)
		res->redirect_errno = s->redirect_errno;
	pr_debug("thread %u on CPU %d: %llu BPF_PROG_RUN calls, %.1f us each, %llu frames handed "
		 "to XDP_TX, %llu iterations skipped and %.3f s spun while the driver refused "
		 "frames\n",
		 i, sd->cpu, (unsigned long long)sd->calls,
		 sd->calls ? sd->call_ns / 1e3 / sd->calls : 0, (unsigned long long)s->tx,
		 (unsigned long long)s->backoff_skipped, s->spun_ns / 1e9);
}

/* The run's books from every thread's; err, or the first sender's error when err is 0 */
static int run_account(struct krun *r, int err)
{
	struct engine_result *res = r->res;
	uint64_t tx = 0, tx_bytes = 0, accounted = 0;

	for (unsigned int i = 0; i < r->o->threads; i++) {
		thread_books(r, i, &tx, &tx_bytes, &accounted);
		if (r->sd[i].err && !err)
			err = r->sd[i].err;
	}
	if (tx > accounted)
		res->unsent.unaccounted = tx - accounted;
	/* bytes of frames the driver refused are not known one by one: take the mean */
	res->sent_bytes = tx ? (uint64_t)((double)tx_bytes * res->sent / tx) : 0;
	return err;
}

int kengine_run(const struct engine_opts *o, struct engine_result *res)
{
	struct krun r = { .o = o, .res = res };
	int err;

	memset(res, 0, sizeof(*res));
	res->engine = "kernel";
	err = run_open(&r);
	if (err)
		return err;
	err = senders_start(&r, senders_plan(&r));
	control_loop(&r);
	err = run_account(&r, err);
	if (o->proto && o->proto->finish)
		o->proto->finish(o->proto->ctx, r.k.skel);
	session_close(&r.k);
	return err;
}

/*
 * Live frames themselves, with a program of two instructions (XDP_DROP: no
 * frame leaves), before the gen program's load: a kernel without them (before
 * 5.18) refuses the flag, and its verifier may refuse the gen program too,
 * which would hide the reason that matters. 0 or -errno.
 */
static int live_frames_try(void)
{
	const struct bpf_insn drop[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = XDP_DROP },
		{ .code = BPF_JMP | BPF_EXIT },
	};
	uint8_t pkt[64] = {};
	/* batch_size came with live frames: an older kernel refuses the field (5.10 ignores the flag) */
	LIBBPF_OPTS(bpf_test_run_opts, topts, .data_in = pkt, .data_size_in = sizeof(pkt),
		    .repeat = 1, .flags = BPF_F_TEST_XDP_LIVE_FRAMES, .batch_size = 1);
	int fd = bpf_prog_load(BPF_PROG_TYPE_XDP, NULL, "GPL", drop, 2, NULL), err;

	if (fd < 0)
		return -errno;
	err = bpf_prog_test_run_opts(fd, &topts) ? -errno : 0;
	close(fd);
	return err;
}

int kengine_probe(const struct iface *ifc, bool send_frame, struct kengine_probe *p)
{
	uint8_t frame[60] = {};
	struct xr_gen_slot *s;
	struct gen_session k;
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

	p->step = "run";
	err = live_frames_try();
	if (err) {
		p->err = err;
		return err;
	}
	p->step = "load";
	err = session_open(&k, ifc, NULL, frame, sizeof(frame), NULL, SESSION_LIVE);
	if (err) {
		p->err = err;
		return err;
	}
	p->loaded = true;
	cpu = engine_slot_cpu();
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
	session_close(&k);
	return 0;
}

int kengine_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns,
		       size_t count, uint8_t *out, uint32_t *out_len, uint64_t *ring_hits)
{
	struct xr_gen_slot *slot;
	struct gen_session k;
	int cpu, err;

	err = session_open(&k, ifc, o->fs, NULL, 0, o, SESSION_BUILD);
	if (err)
		return err;
	hold_dispatcher(&k);
	cpu = engine_slot_cpu();
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
		if (bpf_prog_test_run_opts(bpf_program__fd(k.gen_prog), &topts)) {
			err = -errno;
			pr_warn("BPF_PROG_RUN: %s\n", strerror(-err));
			goto out;
		}
		out_len[i] = topts.retval == XDP_TX ? topts.data_size_out : 0;
		if (ring_hits)
			*ring_hits += slot->hook_ctr[0];
	}
out:
	session_close(&k);
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
	struct gen_session k;
	__u32 zero = 0;
	int err;

	if (n > XR_DUE_TEST_K)
		return -EINVAL;
	err = session_open(&k, ifc, o->fs, NULL, 0, o, SESSION_LIVE);
	if (err)
		return err;
	pacer_init(&p, o, thread, t0, k.frames);
	t.slot = (struct xr_gen_slot){ .thread = thread,
				       .t0_ns = p.t0_ns,
				       .k_base = p.k_base,
				       .per_num = p.per_num,
				       .per_den = p.per_den,
				       .per_q = p.per_q,
				       .per_r = p.per_r };
	memcpy(t.k, ks, n * sizeof(*ks));
	if (bpf_map_update_elem(bpf_map__fd(k.skel->maps.due_test), &zero, &t, 0) ||
	    bpf_prog_test_run_opts(bpf_program__fd(k.skel->progs.xr_due_test), &topts) ||
	    bpf_map_lookup_elem(bpf_map__fd(k.skel->maps.due_test), &zero, &t)) {
		err = -errno;
		goto out;
	}
	memcpy(due, t.due, n * sizeof(*due));
out:
	session_close(&k);
	return err;
}
