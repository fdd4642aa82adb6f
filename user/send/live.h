/* SPDX-License-Identifier: GPL-2.0 */
/* A sender's --listen: its live figures as JSON (/) and Prometheus text (/metrics). */
#ifndef __XR_SENDLIVE_H
#define __XR_SENDLIVE_H

#include <stddef.h>
#include <stdio.h>
#include "engine/engine.h"

struct httpd_request;

struct send_live {
	struct engine_live live; /* the engine keeps it up to date */
	const char *cmd, *ifname;
	double target_pps; /* 0: top speed or capture timing */
	const struct engine_proto *proto; /* its live figures, or NULL */
	unsigned int shard, shards,
		trial; /* labels: --shard I/N (shards > 1), a search's trial (> 0) */
};

/* An httpd_handler; ctx is a struct send_live. */
const char *send_live_serve(const struct httpd_request *rq, FILE *f, void *ctx);

#endif
