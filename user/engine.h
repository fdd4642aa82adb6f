/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What every engine is asked and what it answers. The answer accounts for
 * every frame asked for: sent, or not sent with a reason.
 */
#ifndef __XR_ENGINE_H
#define __XR_ENGINE_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include "frameset.h"
#include "iface.h"
#include "xdpreplay.h"

#define XR_FOREVER UINT64_MAX

struct engine_opts {
	const struct iface *ifc;
	struct frameset *fs;
	unsigned int threads;
	int cpus[XR_MAX_CPUS];   /* CPU of each thread */
	uint64_t count;          /* frames to send; XR_FOREVER = until duration or signal */
	uint64_t duration_ns;    /* 0 = no limit */
	enum xr_pace pace;
	double pps;              /* XR_PACE_RATE: all threads together */
	double multiplier;       /* XR_PACE_PCAP */
	unsigned int batch;      /* live-frames batch size */
	bool progress;           /* live line on stderr */
	struct xr_op ops[XR_MAX_OPS]; /* rewrite plan, the same for every frame */
	unsigned int nops;
};

/* Why frames asked for were not sent. */
struct engine_unsent {
	uint64_t ring_full;     /* the driver refused them (xmit drops) */
	uint64_t redirect;      /* refused before the driver (MTU, link down) */
	uint64_t bad_frame;     /* the program could not build them */
	uint64_t interrupted;   /* SIGINT/SIGTERM came first */
	uint64_t duration;      /* --duration came first */
	uint64_t unaccounted;   /* handed to the driver, outcome unknown: a bug if ever non-zero */
};

struct engine_result {
	uint64_t asked;   /* count, or what was attempted when running until stopped */
	uint64_t sent;
	uint64_t sent_bytes;
	struct engine_unsent unsent;
	int xmit_err, redirect_errno;
	uint64_t start_ns, end_ns; /* CLOCK_MONOTONIC */
	const char *engine;
};

static inline uint64_t engine_unsent_total(const struct engine_unsent *u)
{
	return u->ring_full + u->redirect + u->bad_frame + u->interrupted + u->duration +
	       u->unaccounted;
}

/* Set from a signal handler: stop sending and report. */
extern volatile sig_atomic_t xr_stop;

int kengine_run(const struct engine_opts *o, struct engine_result *res);
int xengine_run(const struct engine_opts *o, struct engine_result *res);

/* Sends a single test frame with live frames and reports what the driver did. */
struct kengine_probe {
	bool loaded;    /* the program loaded (BTF, live frames flag known) */
	bool ran;       /* BPF_PROG_RUN with live frames worked */
	bool xmit_ok;   /* the driver took the frame */
	int err;        /* errno of the failing step */
	int xmit_err;   /* the driver's error */
	const char *step;
};
int kengine_probe(const struct iface *ifc, struct kengine_probe *p);

/*
 * Runs xr_gen once per sequence number in ns (not live: nothing is sent) and
 * returns each frame it built in out (XR_MAX_FRAME bytes apart); a length of
 * 0 means the program refused the frame. For the tests.
 */
int kengine_run_frames(const struct iface *ifc, struct engine_opts *o, const uint64_t *ns, size_t count,
		       uint8_t *out, uint32_t *out_len);


#endif
