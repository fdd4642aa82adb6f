// SPDX-License-Identifier: GPL-2.0
/*
 * xsk engine: AF_XDP transmit. One socket per thread, each on its own queue,
 * all sharing one UMEM. Zero-copy where the driver has it (the NIC reads the
 * UMEM), copy mode otherwise (the kernel builds an skb per frame: slower, but
 * it needs nothing on a veth peer).
 *
 * Frames as captured are laid out once, a chunk each, and sending one is
 * writing a descriptor. Frames that vary per packet are built into buffers of
 * the thread's own (engine/xbuild.h) from the gen program's session, which
 * also holds the protocol's maps and counts the server's answers on the
 * interface, as in the kernel engine (engine/session.h).
 *
 * Accounting: a frame is sent when its descriptor comes back on the
 * completion ring, less those the driver dropped: copy mode's sendto stops
 * at such a frame and says EBUSY, once for each (the interface's tx_dropped
 * also counts what others sent, XDP_TX answers among them).
 */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <linux/if_xdp.h>
#include <xdp/xsk.h>
#include <xdp/libxdp.h>
#include "engine/engine.h"
#include "engine/meter.h"
#include "engine/pacer.h"
#include "engine/xbuild.h"
#include "util/caps.h"
#include "util/log.h"
#include "util/units.h"
#include "gen.skel.h"

#define XSK_RING_SIZE 2048
#define XSK_BUFS \
	(2 * XSK_RING_SIZE) /* a building thread's buffers: the TX ring and its completions */
#define XSK_KICK_EVERY 32 /* copy mode sends at most 32 frames per kick */
/* what one kick sends in copy mode: the frames in flight stay few and their buffers in cache */
#define XSK_BATCH XSK_KICK_EVERY
#define XSK_DRAIN_NS 1000000000ULL
#define XSK_TICK_NS 100000ULL
/* A queue stays busy for about a second after the last socket on it closed (PLATFORM.md). */
#define XSK_BIND_WAIT_NS 5000000000ULL
#define XSK_BIND_RETRY_NS 20000000ULL
/* how long a UMEM that the limit allows waits for an earlier run's to be released */
#define XSK_UMEM_RETRY_NS 3000000000ULL
#define XSK_GATE_WAIT_NS 20000ULL

struct xsk_run {
	const struct engine_opts *o;
	struct gen_session k; /* with a session: XB_PLAN, XB_PROGRAM */
	bool have_session, proto_started;
	bool no_program; /* BPF refused here: frames built from the frame set, answers uncounted */
	struct xbuild b;
	struct xsk_umem *umem;
	uint8_t *area;
	uint64_t size;
	uint32_t chunk;
	unsigned int bufs; /* a building thread's buffers */
	struct xr_frame *frames; /* XB_DESC: each frame's length and capture time */
	bool zerocopy;
};

struct xthread {
	pthread_t tid;
	struct xsk_run *r;
	struct xsk_socket *xsk;
	struct xsk_ring_prod tx, fill;
	struct xsk_ring_cons comp;
	struct xr_gen_slot *slot; /* the session's slot of this thread's CPU, or own_slot */
	struct xr_gen_slot own_slot;
	uint64_t *free; /* building: addresses of buffers not in flight */
	unsigned int nfree;
	unsigned int thread;
	int cpu;
	uint64_t k_next, k_end, deadline;
	struct thread_plan plan;
	bool hit_deadline;
	struct pacer pacer;
	volatile uint64_t completed;
	volatile uint64_t refused; /* completed without being sent: the driver dropped them */
	uint64_t outstanding;
	volatile bool done;
	bool zerocopy;
	int err;
};

/* Frames the driver took: a refusal is counted at once, its completion a little later. */
static uint64_t xthread_sent(const struct xthread *t)
{
	uint64_t completed = t->completed, refused = t->refused;

	return completed > refused ? completed - refused : 0;
}

static int libxdp_quiet(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (xr_verbosity >= XR_LOG_DEBUG)
		vfprintf(stderr, fmt, ap);
	return 0;
}

static void complete(struct xthread *t)
{
	__u32 idx, n = xsk_ring_cons__peek(&t->comp, XSK_RING_SIZE, &idx);

	if (!n)
		return;
	if (t->free)
		for (__u32 i = 0; i < n; i++)
			t->free[t->nfree++] = *xsk_ring_cons__comp_addr(&t->comp, idx + i);
	xsk_ring_cons__release(&t->comp, n);
	t->outstanding -= n;
	t->completed += n;
}

static int kick(struct xthread *t)
{
	if (!xsk_ring_prod__needs_wakeup(&t->tx))
		return 0;
	if (sendto(xsk_socket__fd(t->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	/*
	 * Copy mode stops at a frame the driver dropped (NET_XMIT_DROP): its
	 * descriptor completes, and the call says EBUSY, once per such frame
	 */
	if (errno == EBUSY) {
		t->refused++;
		return 0;
	}
	/* the kernel is out of room for more: the descriptors stay queued, try again */
	if (errno == EAGAIN || errno == ENOBUFS)
		return 0;
	/* the device is down or gone (ENETDOWN, ENXIO, ENODEV): nothing more will leave */
	return -errno;
}

/* Descriptors for sequence numbers k .. k+got-1 at ring index idx; how many were filled, or -errno. */
static int fill_descs(struct xthread *t, __u32 idx, __u32 got)
{
	struct xsk_run *r = t->r;
	const struct engine_opts *o = r->o;
	int filled = 0;

	for (__u32 i = 0; i < got; i++) {
		uint64_t k = t->k_next + i, n = engine_seq(o, t->thread, k);
		struct xdp_desc *d = xsk_ring_prod__tx_desc(&t->tx, idx + filled);
		uint64_t f, addr;
		int len;

		if (r->b.mode == XB_DESC) {
			f = xbuild_index(&r->b, n);
			d->addr = f * r->chunk;
			d->len = r->frames[f].len;
			d->options = 0;
			filled++;
			continue;
		}
		addr = t->free[--t->nfree];
		len = xbuild_frame(&r->b, t->slot, k, n, r->area + addr, r->chunk);
		if (len < 0)
			return len;
		if (!len) {
			/* not built (counted): its sequence number is used, its buffer is not */
			t->nfree++;
			continue;
		}
		d->addr = addr;
		d->len = len;
		d->options = 0;
		filled++;
	}
	return filled;
}

/* --concurrency: of want frames, those the closed loop lets go now */
static uint64_t gate(struct xthread *t, uint64_t want)
{
	struct xsk_run *r = t->r;
	uint64_t lost = 0;

	if (!r->o->concurrency)
		return want;
	/* a frame not built started no session; one the driver dropped is resent by its protocol */
	for (unsigned int i = 0; i < r->o->threads; i++)
		lost += r->k.slots[r->o->cpus[i]].bad_frame;
	return session_gate_take(&r->k, r->o, want, lost);
}

static void gate_return(struct xthread *t, uint64_t n)
{
	if (t->r->o->concurrency && n)
		atomic_fetch_sub(&t->r->k.admitted, n);
}

/* One batch: 1 while the run goes on, 0 at its end, -errno on failure. */
static int send_batch(struct xthread *t, uint64_t *since_kick)
{
	const struct engine_opts *o = t->r->o;
	uint64_t want = pacer_wait(&t->pacer, t->k_next, t->k_end, XSK_BATCH, XSK_TICK_NS), take;
	__u32 idx, got;
	int filled, err;

	if (t->deadline && now_ns() >= t->deadline) {
		t->hit_deadline = true;
		return 0;
	}
	if (t->free && want > t->nfree)
		want = t->nfree;
	take = gate(t, want);
	got = take ? xsk_ring_prod__reserve(&t->tx, take, &idx) : 0;
	gate_return(t, take - got);
	if (!got) {
		/* ring full, no buffer free or no session may start: let the kernel work */
		err = kick(t);
		complete(t);
		if (!err && o->concurrency && !take)
			sleep_until(now_ns() + XSK_GATE_WAIT_NS);
		return err ? err : 1;
	}
	filled = fill_descs(t, idx, got);
	if (filled < 0)
		return filled;
	/* the reserved places of frames not built go back (libxdp 1.3 has no cancel) */
	t->tx.cached_prod -= got - filled;
	xsk_ring_prod__submit(&t->tx, filled);
	t->k_next += got;
	t->outstanding += filled;
	*since_kick += filled;
	if (*since_kick >= XSK_KICK_EVERY || o->pace != XR_PACE_NONE) {
		err = kick(t);
		if (err)
			return err;
		*since_kick = 0;
	}
	complete(t);
	return 1;
}

static void *xthread_main(void *arg)
{
	struct xthread *t = arg;
	uint64_t since_kick = 0, drain_end;
	int err;

	err = pin_to_cpu(t->cpu);
	if (err)
		goto out;
	pacer_thread_init();
	while (!xr_stop && t->k_next < t->k_end) {
		err = send_batch(t, &since_kick);
		if (err <= 0)
			break;
	}
	if (err > 0)
		err = 0;
	if (err)
		pr_warn("AF_XDP send on queue %u failed: %s\n", t->thread, strerror(-err));
	/* what was queued is still sent: wait for its completions */
	drain_end = now_ns() + XSK_DRAIN_NS;
	while (t->outstanding && now_ns() < drain_end) {
		kick(t);
		complete(t);
		if (t->outstanding)
			usleep(100);
	}
out:
	t->err = err;
	t->done = true;
	return NULL;
}

/* The UMEM: the frames as captured, a chunk each (XB_DESC), or each thread's buffers. */
static int umem_fill(struct xsk_run *r, struct xthread *th)
{
	const struct engine_opts *o = r->o;
	const struct frameset *fs = o->fs;

	if (!r->have_session) {
		/* each frame's length and capture time, for the pacer and the descriptors */
		r->frames = calloc(fs->n, sizeof(*r->frames));
		if (!r->frames)
			return -ENOMEM;
		for (size_t i = 0; i < fs->n; i++) {
			r->frames[i].len = fs->frames[i].len;
			r->frames[i].ts_ns = fs->frames[i].ts_ns;
		}
	}
	if (r->b.mode != XB_DESC) {
		for (unsigned int i = 0; i < o->threads; i++) {
			th[i].free = calloc(r->bufs, sizeof(uint64_t));
			if (!th[i].free)
				return -ENOMEM;
			for (unsigned int j = 0; j < r->bufs; j++)
				th[i].free[j] = ((uint64_t)i * r->bufs + j) * r->chunk;
			th[i].nfree = r->bufs;
		}
		return 0;
	}
	for (size_t i = 0; i < fs->n; i++)
		memcpy(r->area + i * r->chunk, fs->bytes + fs->frames[i].off, fs->frames[i].len);
	return 0;
}

/*
 * A UMEM is locked memory, counted against RLIMIT_MEMLOCK unless the process
 * has CAP_IPC_LOCK: whether size fits, once the limit is lifted where we may
 * (CAP_SYS_RESOURCE). Without CAP_IPC_LOCK it may fit anyway: the kernel says.
 */
static bool memlock_allows(uint64_t size)
{
	struct rlimit rl;

	/* a quarter for the rings and what else is locked */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) || rl.rlim_cur == RLIM_INFINITY ||
	    rl.rlim_cur / 4 * 3 >= size)
		return true;
	rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
	if (!setrlimit(RLIMIT_MEMLOCK, &rl))
		return true;
	return cap_effective(XR_CAP_IPC_LOCK);
}

/* A building thread's buffers within three quarters of the limit (the rest for the rings), 256 at least. */
static unsigned int memlock_bufs(unsigned int threads, uint32_t chunk)
{
	struct rlimit rl;
	uint64_t n;

	getrlimit(RLIMIT_MEMLOCK, &rl);
	n = rl.rlim_cur / 4 * 3 / chunk / threads;
	n = n < 256 ? 256 : n > XSK_BUFS ? XSK_BUFS : n;
	pr_debug("the locked-memory limit is %llu KiB: %llu buffers a thread\n",
		 (unsigned long long)(rl.rlim_cur >> 10), (unsigned long long)n);
	return n;
}

/*
 * The UMEM registered, within the locked-memory limit: a run that just ended
 * has its UMEM released by deferred work after its process exits, still
 * counted against the same user, so a registration the limit allows waits for
 * it (a container's runs back to back failed so, 2 of 6) rather than failing.
 */
static int umem_register(struct xsk_run *r, struct xthread *th, const struct xsk_umem_config *ucfg)
{
	uint64_t start = now_ns();
	int err;

	for (;;) {
		err = xsk_umem__create(&r->umem, r->area, r->size, &th[0].fill, &th[0].comp, ucfg);
		if ((err != -ENOMEM && err != -ENOBUFS) || !memlock_allows(r->size) || xr_stop ||
		    now_ns() - start >= XSK_UMEM_RETRY_NS)
			return err;
		sleep_until(now_ns() + XSK_BIND_RETRY_NS);
	}
}

static int umem_create(struct xsk_run *r, struct xthread *th)
{
	const struct engine_opts *o = r->o;
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_SIZE,
		.comp_size = XSK_RING_SIZE,
		.frame_headroom = 0,
	};
	uint64_t chunks;
	int err;

	r->chunk = o->fs->max_len <= 2048 ? 2048 : 4096;
	r->bufs = XSK_BUFS;
	chunks = r->b.mode == XB_DESC ? o->fs->n : (uint64_t)o->threads * XSK_BUFS;
	r->size = chunks * r->chunk;
	if (!memlock_allows(r->size) && r->b.mode != XB_DESC) {
		r->bufs = memlock_bufs(o->threads, r->chunk);
		r->size = (uint64_t)o->threads * r->bufs * r->chunk;
	}
	r->area = mmap(NULL, r->size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
	if (r->area == MAP_FAILED) {
		r->area = NULL;
		pr_warn("cannot allocate %llu bytes of UMEM\n", (unsigned long long)r->size);
		return -ENOMEM;
	}
	err = umem_fill(r, th);
	if (err)
		return err;
	ucfg.frame_size = r->chunk;
	err = umem_register(r, th, &ucfg);
	if (err == -ENOMEM || err == -ENOBUFS)
		pr_warn("cannot register %llu KiB of UMEM: the locked-memory limit is lower "
			"(raise it: ulimit -l, or LimitMEMLOCK=; or run with CAP_IPC_LOCK)\n",
			(unsigned long long)(r->size >> 10));
	else if (err)
		pr_warn("cannot register %llu bytes of UMEM: %s\n", (unsigned long long)r->size,
			strerror(-err));
	return err;
}

static bool xsk_is_zerocopy(struct xsk_socket *xsk)
{
	struct xdp_options opts = {};
	socklen_t len = sizeof(opts);

	return !getsockopt(xsk_socket__fd(xsk), SOL_XDP, XDP_OPTIONS, &opts, &len) &&
	       (opts.flags & XDP_OPTIONS_ZEROCOPY);
}

/* Zero-copy first, copy mode where the driver has none; a queue an earlier run just left is waited for. */
static int socket_bind(struct xsk_run *r, struct xthread *t)
{
	struct xsk_socket_config scfg = {
		.tx_size = XSK_RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
	};
	const char *ifname = r->o->ifc->name;
	uint64_t start = now_ns();
	int err;

	for (;;) {
		scfg.bind_flags = XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY;
		err = xsk_socket__create_shared(&t->xsk, ifname, t->thread, r->umem, NULL, &t->tx,
						&t->fill, &t->comp, &scfg);
		if (err && err != -EBUSY) {
			scfg.bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY;
			err = xsk_socket__create_shared(&t->xsk, ifname, t->thread, r->umem, NULL,
							&t->tx, &t->fill, &t->comp, &scfg);
		}
		if (err != -EBUSY || now_ns() - start >= XSK_BIND_WAIT_NS)
			break;
		sleep_until(now_ns() + XSK_BIND_RETRY_NS);
	}
	if (err) {
		pr_warn("cannot bind an AF_XDP socket to %s queue %u: %s\n", ifname, t->thread,
			strerror(-err));
		return err;
	}
	if (now_ns() - start >= XSK_BIND_RETRY_NS)
		pr_debug("%s queue %u was still busy from an earlier socket: bound after %.0f ms\n",
			 ifname, t->thread, (now_ns() - start) / 1e6);
	t->zerocopy = xsk_is_zerocopy(t->xsk);
	return 0;
}

/*
 * The gen program's session; where the frames do not need it and this
 * kernel still refuses what is left (the reply program), the frames are
 * built in userspace, the answers uncounted, and the fallback said in one line.
 */
static int open_optional(struct xsk_run *r, const struct engine_opts *o)
{
	/* without a hook, xbuild.c builds every frame in userspace: no frame builder in BPF */
	enum session_use use = o->hook == XR_HOOK_NONE ? SESSION_MAPS : SESSION_BUILD;
	struct engine_opts quiet;
	int err;

	if (!engine_program_optional(o))
		return session_open(&r->k, o->ifc, o->fs, NULL, 0, o, use);
	quiet = *o;
	quiet.quiet_load = true;
	err = session_open(&r->k, o->ifc, o->fs, NULL, 0, &quiet, use);
	if (err == -ENOMEM || err == -EPERM || !err)
		return err;
	pr_warn("warning: the gen program does not load on this kernel (%s): the xsk engine builds "
		"the frames without it%s\n",
		strerror(-err),
		o->reply_kind != XR_REPLY_NONE ? ", and the server's answers are not counted" : "");
	r->no_program = true;
	return 0;
}

static int session_start(struct xsk_run *r)
{
	const struct engine_opts *o = r->o;
	int err;

	if (o->concurrency && (!o->proto || !o->proto->ended || o->pace != XR_PACE_NONE)) {
		pr_warn("a closed loop (--concurrency) needs sessions that say when they end, at top speed\n");
		return -EINVAL;
	}
	if (!engine_builds_frames(o))
		return 0;
	/*
	 * Where no BPF may be loaded (Docker's default capabilities: no
	 * CAP_BPF, CAP_NET_ADMIN), a TX-only socket still sends what the plan
	 * builds in userspace; the answers go uncounted
	 */
	if (engine_program_optional(o) && session_bpf_refused()) {
		pr_warn("warning: this host refuses to load BPF (EPERM): the xsk engine builds the frames "
			"without the gen program%s\n",
			o->reply_kind != XR_REPLY_NONE ?
				", and the server's answers are not counted" :
				"");
		r->no_program = true;
		return 0;
	}
	err = open_optional(r, o);
	if (err || r->no_program)
		return err;
	r->have_session = true;
	err = session_replies_attach(&r->k, o);
	if (err)
		return err;
	session_slots_init(&r->k, o);
	if (o->xdp_tx_answers)
		iface_warn_veth_peer_xdp(o->ifc, o->xdp_tx_answers);
	/* the protocol's helpers (a precompute thread, say) are ready before the first departure */
	if (o->proto && o->proto->start) {
		err = o->proto->start(o->proto->ctx, r->k.slots, o);
		if (err)
			return err;
		r->proto_started = true;
	}
	return 0;
}

static void run_close(struct xsk_run *r, struct xthread *th)
{
	for (unsigned int i = 0; i < r->o->threads; i++) {
		xsk_socket__delete(th[i].xsk);
		free(th[i].free);
	}
	xsk_umem__delete(r->umem);
	if (r->area)
		munmap(r->area, r->size);
	free(r->frames);
	if (r->have_session)
		session_close(&r->k);
}

static int sockets_bind(struct xsk_run *r, struct xthread *th)
{
	int err;

	r->zerocopy = true;
	for (unsigned int i = 0; i < r->o->threads; i++) {
		th[i].r = r;
		th[i].thread = i;
		th[i].cpu = r->o->cpus[i];
		th[i].slot = r->have_session ? &r->k.slots[th[i].cpu] : &th[i].own_slot;
		err = socket_bind(r, &th[i]);
		if (err)
			return err;
		r->zerocopy &= th[i].zerocopy;
	}
	return 0;
}

/* Each thread's schedule and share of the run; the frames planned in all (XR_FOREVER: unknown). */
static uint64_t threads_plan(struct xsk_run *r, struct xthread *th, uint64_t t0)
{
	const struct engine_opts *o = r->o;
	const struct xr_frame *frames = r->have_session ? r->k.frames : r->frames;
	uint64_t total = 0;

	for (unsigned int i = 0; i < o->threads; i++) {
		struct xthread *t = &th[i];

		pacer_init(&t->pacer, o, i, t0, frames);
		thread_plan_init(&t->plan, o, &t->pacer, i, t0);
		t->k_end = thread_plan_end(&t->plan);
		if (total != XR_FOREVER)
			total = t->k_end == XR_FOREVER ? XR_FOREVER : total + t->k_end;
		if (o->duration_ns)
			t->deadline = t0 + o->duration_ns + pacer_grace_ns(o);
	}
	return total;
}

static unsigned int threads_start(struct xthread *th, unsigned int n)
{
	unsigned int started = 0;

	for (unsigned int i = 0; i < n; i++) {
		int err = -pthread_create(&th[i].tid, NULL, xthread_main, &th[i]);

		if (err) {
			pr_warn("cannot start sender thread: %s\n", strerror(-err));
			xr_stop = 1;
			break;
		}
		started++;
	}
	return started;
}

/* The live line and --listen until every thread is done; the frames sent. */
static uint64_t threads_watch(struct xsk_run *r, struct xthread *th, unsigned int started,
			      struct run_meter *meter)
{
	const struct engine_opts *o = r->o;
	double mean = (double)o->fs->bytes_len / o->fs->n;

	for (;;) {
		unsigned int done = 0;
		uint64_t sent = 0, failed = 0;

		for (unsigned int i = 0; i < started; i++) {
			done += th[i].done;
			sent += xthread_sent(&th[i]);
			failed += th[i].slot->bad_frame + th[i].refused;
		}
		if (done == started)
			return sent;
		meter_tick(meter, now_ns(), sent, failed, mean);
		if (r->have_session)
			session_replies_tick(&r->k, o);
		usleep(1000);
	}
}

static void threads_account(struct xsk_run *r, struct xthread *th, unsigned int started,
			    struct engine_result *res, int *err)
{
	const struct engine_opts *o = r->o;

	for (unsigned int i = 0; i < o->threads; i++) {
		struct xthread *t = &th[i];
		enum thread_stop why = i >= started || t->err ? STOP_ERROR :
				       xr_stop		      ? STOP_SIGNAL :
				       t->hit_deadline	      ? STOP_DEADLINE :
								STOP_DONE;

		if (i < started)
			pthread_join(t->tid, NULL);
		res->sent += xthread_sent(t);
		res->unsent.ring_full += t->refused;
		res->unsent.bad_frame += t->slot->bad_frame;
		res->hook_ctr[0] += t->slot->hook_ctr[0];
		res->hook_ctr[1] += t->slot->hook_ctr[1];
		/* what a failed device never completed was not sent: a device error, not a lost outcome */
		if (t->err)
			res->unsent.device_error += t->outstanding;
		else
			res->unsent.unaccounted += t->outstanding;
		thread_account(&t->plan, o, t->k_next, why, &res->asked, &res->unsent);
		if (t->err && !*err)
			*err = t->err;
	}
}

int xengine_run(const struct engine_opts *o, struct engine_result *res)
{
	struct xthread th[XR_MAX_CPUS] = {};
	struct xsk_run r = { .o = o };
	uint64_t t0, total, sent;
	struct run_meter meter;
	unsigned int started;
	int err;

	memset(res, 0, sizeof(*res));
	libxdp_set_print(libxdp_quiet);
	if (o->threads > o->ifc->ntxq || o->threads > o->ifc->nrxq) {
		pr_warn("--engine xsk needs a queue per thread: %s has %u\n", o->ifc->name,
			o->ifc->ntxq < o->ifc->nrxq ? o->ifc->ntxq : o->ifc->nrxq);
		return -EINVAL;
	}
	err = session_start(&r);
	if (err)
		goto out;
	xbuild_init(&r.b, o, r.have_session ? &r.k : NULL);
	err = umem_create(&r, th);
	if (err)
		goto out;
	/* the UMEM or the session's maps hold the frames now; without either, the plan reads them */
	if (!r.no_program)
		frameset_release(o->fs);
	res->replies_uncounted = r.no_program && o->reply_kind != XR_REPLY_NONE;
	err = sockets_bind(&r, th);
	if (err)
		goto out;
	res->engine = r.zerocopy ? "xsk zero-copy" : "xsk copy";
	pr_debug("xsk engine: %s, %s\n", res->engine, xbuild_mode_name(r.b.mode));
	t0 = engine_t0(o, 2000000ULL);
	total = threads_plan(&r, th, t0);
	engine_wait_start(o, t0, 2000000ULL);
	res->start_ns = o->pace == XR_PACE_NONE ? now_ns() : t0;
	if (r.have_session)
		r.k.skel->bss->replies_origin_ns = res->start_ns;
	if (o->on_start)
		o->on_start(o->on_start_ctx, res->start_ns);
	started = threads_start(th, o->threads);
	meter_init(&meter, o, res->start_ns, total);
	sent = threads_watch(&r, th, started, &meter);
	res->end_ns = now_ns();
	res->interrupted = xr_stop;
	meter_finish(&meter, res->end_ns, sent, res);
	threads_account(&r, th, started, res, &err);

	/* which frames the driver dropped is not known: bytes from the mean frame size */
	res->sent_bytes = (uint64_t)((double)o->fs->bytes_len / o->fs->n * res->sent);
	if (r.have_session) {
		session_end(&r.k, o, res, r.proto_started, res->sent);
		r.proto_started = false;
		if (o->proto && o->proto->finish)
			o->proto->finish(o->proto->ctx, r.k.skel);
	}
out:
	if (r.proto_started && o->proto->stop)
		o->proto->stop(o->proto->ctx);
	run_close(&r, th);
	return err;
}
