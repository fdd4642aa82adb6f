/* SPDX-License-Identifier: GPL-2.0 */
/*
 * A sender's --json-stream: "start" (command, system, settings), an
 * "interval" a second from the run's live figures (send/live.h), "end" (the
 * run's JSON result).
 */
#ifndef __XR_SEND_STREAM_H
#define __XR_SEND_STREAM_H

#include <pthread.h>
#include <stdatomic.h>
#include "send/live.h"
#include "util/jstream.h"

struct iface;

struct send_stream {
	struct jstream js;
	struct send_live *sl;
	pthread_t thread;
	bool started;
	atomic_bool stop;
};

/*
 * Opens path, writes "start" and starts the interval thread over sl (which the
 * engine keeps up to date). 0, or -errno after a message.
 */
int send_stream_start(struct send_stream *s, const char *path, struct send_live *sl,
		      const struct iface *ifc, double target_pps, uint64_t planned);
/* Stops the intervals and writes "end" with write(ctx, f), the run's JSON; 0 or -errno (lost lines) */
int send_stream_end(struct send_stream *s, void (*write)(void *ctx, FILE *f), void *ctx);

#endif
