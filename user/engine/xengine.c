// SPDX-License-Identifier: GPL-2.0
/*
 * xsk engine: AF_XDP transmit. The frame set is laid out once in the UMEM,
 * one chunk per frame; sending a frame is writing a descriptor that points
 * at its chunk (any number of descriptors may point at the same chunk). One
 * socket per thread, each on its own queue, all sharing the one UMEM.
 * Zero-copy where the driver has it (the NIC reads the UMEM), copy mode
 * otherwise (the kernel builds an skb per frame: slower, but it needs nothing
 * on a veth peer).
 *
 * Accounting: a frame is sent when its descriptor comes back on the
 * completion ring; frames the driver then dropped show in the interface's
 * tx_dropped, read before and after the run (so on a shared interface other
 * senders' drops are counted too; the summary says so).
 */
#include <errno.h>
#include <pthread.h>
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
#include "util/log.h"
#include "engine/meter.h"
#include "engine/pacer.h"
#include "util/units.h"

#define XSK_RING_SIZE 2048
#define XSK_KICK_EVERY 32 /* copy mode sends at most 32 frames per kick */
#define XSK_BATCH 64
#define XSK_DRAIN_NS 1000000000ULL
#define XSK_TICK_NS 100000ULL

struct xthread {
	pthread_t tid;
	const struct engine_opts *o;
	struct xsk_umem *umem;
	struct xsk_socket *xsk;
	struct xsk_ring_prod tx, fill;
	struct xsk_ring_cons comp;
	const struct xr_frame *frames;
	uint32_t chunk_size;
	unsigned int thread;
	int cpu;
	uint64_t k_next, k_end, deadline;
	struct thread_plan plan;
	bool hit_deadline;
	struct pacer pacer;
	volatile uint64_t completed;
	uint64_t outstanding;
	volatile bool done;
	int err;
};

static int libxdp_quiet(enum libxdp_print_level level, const char *fmt, va_list ap)
{
	if (xr_verbosity >= XR_LOG_DEBUG)
		vfprintf(stderr, fmt, ap);
	return 0;
}

static void complete(struct xthread *t)
{
	__u32 idx, n = xsk_ring_cons__peek(&t->comp, XSK_RING_SIZE, &idx);

	if (n) {
		xsk_ring_cons__release(&t->comp, n);
		t->outstanding -= n;
		t->completed += n;
	}
}

static int kick(struct xthread *t)
{
	if (!xsk_ring_prod__needs_wakeup(&t->tx))
		return 0;
	if (sendto(xsk_socket__fd(t->xsk), NULL, 0, MSG_DONTWAIT, NULL, 0) >= 0)
		return 0;
	/* the kernel is busy or out of buffers: the descriptors stay queued, try again */
	if (errno == EAGAIN || errno == EBUSY || errno == ENOBUFS)
		return 0;
	/* the device is down or gone (ENETDOWN, ENXIO, ENODEV): nothing more will leave */
	return -errno;
}

static void *xthread_main(void *arg)
{
	struct xthread *t = arg;
	const struct engine_opts *o = t->o;
	uint64_t N = o->fs->n, since_kick = 0, drain_end;
	int err;

	err = pin_to_cpu(t->cpu);
	if (err) {
		t->err = err;
		goto out;
	}
	while (!xr_stop && t->k_next < t->k_end) {
		uint64_t want = pacer_wait(&t->pacer, t->k_next, t->k_end, XSK_BATCH, XSK_TICK_NS);
		__u32 idx, got;

		if (t->deadline && now_ns() >= t->deadline) {
			t->hit_deadline = true;
			break;
		}
		got = xsk_ring_prod__reserve(&t->tx, want, &idx);
		if (!got) {
			/* ring full: let the kernel work, then take back what it finished */
			err = kick(t);
			if (err)
				break;
			complete(t);
			continue;
		}
		for (__u32 i = 0; i < got; i++) {
			uint64_t n = engine_seq(o, t->thread, t->k_next + i);
			const struct xr_frame *f = &t->frames[n % N];
			struct xdp_desc *d = xsk_ring_prod__tx_desc(&t->tx, idx + i);

			d->addr = (uint64_t)(n % N) * t->chunk_size;
			d->len = f->len;
			d->options = 0;
		}
		xsk_ring_prod__submit(&t->tx, got);
		t->k_next += got;
		t->outstanding += got;
		since_kick += got;
		if (since_kick >= XSK_KICK_EVERY || o->pace != XR_PACE_NONE) {
			err = kick(t);
			if (err)
				break;
			since_kick = 0;
		}
		complete(t);
	}
	if (err) {
		t->err = err;
		pr_warn("AF_XDP send on queue %u failed: %s\n", t->thread, strerror(-err));
	}
	/* what was queued is still sent: wait for its completions */
	drain_end = now_ns() + XSK_DRAIN_NS;
	while (t->outstanding && now_ns() < drain_end) {
		kick(t);
		complete(t);
		if (t->outstanding)
			usleep(100);
	}
out:
	t->done = true;
	return NULL;
}

int xengine_run(const struct engine_opts *o, struct engine_result *res)
{
	struct xsk_umem_config ucfg = {
		.fill_size = XSK_RING_SIZE,
		.comp_size = XSK_RING_SIZE,
		.frame_headroom = 0,
	};
	struct xsk_socket_config scfg = {
		.tx_size = XSK_RING_SIZE,
		.libxdp_flags = XSK_LIBXDP_FLAGS__INHIBIT_PROG_LOAD,
		.bind_flags = XDP_USE_NEED_WAKEUP,
	};
	struct xthread th[XR_MAX_CPUS] = {};
	uint64_t tx_dropped0 = 0, tx_dropped1 = 0, size, t0, total = 0, sent;
	struct run_meter meter;
	struct xr_frame *frames = NULL;
	struct xsk_umem *umem = NULL;
	unsigned int started = 0;
	struct rlimit rl;
	uint32_t chunk;
	void *area;
	int err;

	memset(res, 0, sizeof(*res));
	libxdp_set_print(libxdp_quiet);
	if (o->concurrency) {
		pr_warn("a closed loop (--concurrency) runs on the kernel engine only\n");
		return -EINVAL;
	}
	if (o->threads > o->ifc->ntxq || o->threads > o->ifc->nrxq) {
		pr_warn("--engine xsk needs a queue per thread: %s has %u\n", o->ifc->name,
			o->ifc->ntxq < o->ifc->nrxq ? o->ifc->ntxq : o->ifc->nrxq);
		return -EINVAL;
	}
	chunk = o->fs->max_len <= 2048 ? 2048 : 4096;
	size = (uint64_t)o->fs->n * chunk;
	area = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE,
		    -1, 0);
	frames = calloc(o->fs->n, sizeof(*frames));
	if (area == MAP_FAILED || !frames) {
		pr_warn("cannot allocate %llu bytes of UMEM for %zu frames\n",
			(unsigned long long)size, o->fs->n);
		err = -ENOMEM;
		area = MAP_FAILED;
		goto out;
	}
	for (size_t i = 0; i < o->fs->n; i++) {
		memcpy((uint8_t *)area + i * chunk, o->fs->bytes + o->fs->frames[i].off,
		       o->fs->frames[i].len);
		frames[i].len = o->fs->frames[i].len;
		frames[i].ts_ns = o->fs->frames[i].ts_ns;
	}
	/* the UMEM holds the frames now */
	frameset_release(o->fs);
	ucfg.frame_size = chunk;
	/* a UMEM is locked memory: lift the limit where we may (root) */
	if (getrlimit(RLIMIT_MEMLOCK, &rl) == 0 && rl.rlim_cur < size) {
		rl.rlim_cur = rl.rlim_max = RLIM_INFINITY;
		setrlimit(RLIMIT_MEMLOCK, &rl);
	}
	err = xsk_umem__create(&umem, area, size, &th[0].fill, &th[0].comp, &ucfg);
	if (err) {
		pr_warn("cannot register %llu bytes of UMEM: %s%s\n", (unsigned long long)size,
			strerror(-err),
			err == -ENOMEM || err == -ENOBUFS ? " (locked memory limit?)" : "");
		goto out;
	}
	res->engine = "xsk";
	for (unsigned int i = 0; i < o->threads; i++) {
		struct xthread *t = &th[i];

		t->o = o;
		t->umem = umem;
		t->frames = frames;
		t->chunk_size = chunk;
		t->thread = i;
		t->cpu = o->cpus[i];
		/* zero-copy first; copy mode where the driver has none */
		scfg.bind_flags = XDP_USE_NEED_WAKEUP | XDP_ZEROCOPY;
		err = xsk_socket__create_shared(&t->xsk, o->ifc->name, i, umem, NULL, &t->tx,
						&t->fill, &t->comp, &scfg);
		if (err) {
			scfg.bind_flags = XDP_USE_NEED_WAKEUP | XDP_COPY;
			err = xsk_socket__create_shared(&t->xsk, o->ifc->name, i, umem, NULL,
							&t->tx, &t->fill, &t->comp, &scfg);
			res->engine = "xsk (copy mode)";
		} else {
			res->engine = "xsk (zero-copy)";
		}
		if (err) {
			pr_warn("cannot bind an AF_XDP socket to %s queue %u: %s\n", o->ifc->name,
				i, strerror(-err));
			goto out;
		}
	}

	iface_sysfs_stat(o->ifc->name, "tx_dropped", &tx_dropped0);
	t0 = engine_t0(o, 2000000ULL);
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
	engine_wait_start(o, t0, 2000000ULL);
	res->start_ns = o->pace == XR_PACE_NONE ? now_ns() : t0;
	if (o->on_start)
		o->on_start(o->on_start_ctx, res->start_ns);
	for (unsigned int i = 0; i < o->threads; i++) {
		err = -pthread_create(&th[i].tid, NULL, xthread_main, &th[i]);
		if (err) {
			pr_warn("cannot start sender thread: %s\n", strerror(-err));
			xr_stop = 1;
			break;
		}
		started++;
	}
	meter_init(&meter, o, res->start_ns, total);
	for (;;) {
		unsigned int done = 0;
		uint64_t now = now_ns();

		sent = 0;
		for (unsigned int i = 0; i < started; i++) {
			done += th[i].done;
			sent += th[i].completed;
		}
		if (done == started)
			break;
		meter_tick(&meter, now, sent, 0, (double)o->fs->bytes_len / o->fs->n);
		usleep(1000);
	}
	res->end_ns = now_ns();
	res->interrupted = xr_stop;
	meter_finish(&meter, res->end_ns, sent, res);
	iface_sysfs_stat(o->ifc->name, "tx_dropped", &tx_dropped1);
	for (unsigned int i = 0; i < started; i++) {
		struct xthread *t = &th[i];
		enum thread_stop why = t->err	       ? STOP_ERROR :
				       xr_stop	       ? STOP_SIGNAL :
				       t->hit_deadline ? STOP_DEADLINE :
							 STOP_DONE;

		pthread_join(t->tid, NULL);
		res->sent += t->completed;
		/* what a failed device never completed was not sent: a device error, not a lost outcome */
		if (t->err)
			res->unsent.device_error += t->outstanding;
		else
			res->unsent.unaccounted += t->outstanding;
		thread_account(&t->plan, o, t->k_next, why, &res->asked, &res->unsent);
		if (t->err && !err)
			err = t->err;
	}
	res->unsent.ring_full = tx_dropped1 - tx_dropped0;
	if (res->unsent.ring_full > res->sent)
		res->unsent.ring_full = res->sent;
	res->sent -= res->unsent.ring_full;
	/* which frames the driver dropped is not known: bytes from the mean frame size */
	res->sent_bytes = (uint64_t)((double)o->fs->bytes_len / o->fs->n * res->sent);
out:
	for (unsigned int i = 0; i < o->threads; i++)
		xsk_socket__delete(th[i].xsk);
	xsk_umem__delete(umem);
	if (area != MAP_FAILED)
		munmap(area, size);
	free(frames);
	return err;
}
