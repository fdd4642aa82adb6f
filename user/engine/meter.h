/* SPDX-License-Identifier: GPL-2.0 */
/*
 * What a run shows while it runs and keeps for its report: the live line
 * (sent, rate, failed, done of total, ETA) and the frames sent per second.
 * Shared by the engines; fed from their control loops.
 */
#ifndef __XR_METER_H
#define __XR_METER_H

#include <stdbool.h>
#include <stdint.h>
#include "engine/engine.h"

struct run_meter {
	uint64_t start_ns,
		total; /* frames planned; XR_FOREVER when only a signal or --duration ends it */
	uint64_t duration_ns; /* --duration, for the ETA of runs without a total */
	bool progress; /* the live line on stderr */
	struct engine_live *live; /* NULL, or kept up to date for --listen */
	uint64_t last_t, last_sent, next_line, next_sec;
	uint64_t *per_sec;
	unsigned int nsec, cap;
};

void meter_init(struct run_meter *m, const struct engine_opts *o, uint64_t start_ns,
		uint64_t total);
/* Called often with the running totals: samples each whole second, prints the line once a second. */
void meter_tick(struct run_meter *m, uint64_t now, uint64_t sent, uint64_t failed, double mean_len);
/* The last, partial second; hands the series to res (per_sec, nsec) and ends the live line. */
void meter_finish(struct run_meter *m, uint64_t now, uint64_t sent, struct engine_result *res);

#endif
