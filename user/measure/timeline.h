/* SPDX-License-Identifier: GPL-2.0 */
/*
 * count's timeline: what arrived and where it went, second by second, as
 * count's reader samples its totals and the kernel's drops by reason (the
 * drops program keeps totals only). Each row holds what changed in its
 * second; the last, shorter one ends where the report's totals were read,
 * so that each column sums to its total.
 */
#ifndef __XR_MEASURE_TIMELINE_H
#define __XR_MEASURE_TIMELINE_H

#include <stdbool.h>
#include <stdint.h>
#include "measure/count.h"
#include "measure/drops.h"
#include "util/json.h"

#define TIMELINE_REASONS 12 /* columns for the kernel's reasons; the rest are summed as "other" */

struct timeline_row {
	uint64_t matched, passed, xdp_dropped;
	uint64_t dropped[TIMELINE_REASONS + 1]; /* by column; the last: other reasons */
};

struct timeline {
	struct timeline_row *rows;
	unsigned int n, cap;
	int reason[TIMELINE_REASONS]; /* the kernel's reason of each column */
	unsigned int nreasons;
	struct timeline_row at; /* the totals at the last row's end */
	uint64_t at_dropped[XR_DROP_REASONS];
	double last_s; /* the last row's length, seconds */
	bool full; /* no room for more rows: the timeline stopped there */
};

/* An empty timeline (rows allocated as it grows) */
void timeline_init(struct timeline *tl);
/*
 * A row ending now: t's totals and the kernel's inbound drops (drops NULL:
 * none traced) less the last row's end; s its length in seconds. 0, or
 * -ENOMEM or -ENOSPC (24 h of rows): the timeline stops there, and its JSON says so.
 */
int timeline_tick(struct timeline *tl, const struct count_totals *t, struct drops *drops, double s);
/* "timeline": one array per column, the reasons' by name */
void timeline_json(const struct timeline *tl, struct drops *drops, struct json *j);
void timeline_free(struct timeline *tl);

#endif
