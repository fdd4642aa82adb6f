// SPDX-License-Identifier: GPL-2.0
/* count's timeline, second by second (measure/timeline.h). */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include "measure/timeline.h"

#define TIMELINE_MAX_ROWS (24 * 3600)

void timeline_init(struct timeline *tl)
{
	memset(tl, 0, sizeof(*tl));
}

/* The column of the kernel's reason r, taken when it first drops; the last: other reasons */
static unsigned int column(struct timeline *tl, int r)
{
	for (unsigned int c = 0; c < tl->nreasons; c++)
		if (tl->reason[c] == r)
			return c;
	if (tl->nreasons == TIMELINE_REASONS)
		return TIMELINE_REASONS;
	tl->reason[tl->nreasons] = r;
	return tl->nreasons++;
}

static int grow(struct timeline *tl)
{
	unsigned int cap = tl->cap ? 2 * tl->cap : 64;
	struct timeline_row *rows;

	if (tl->n < tl->cap)
		return 0;
	if (tl->cap >= TIMELINE_MAX_ROWS)
		return -ENOSPC;
	rows = realloc(tl->rows, cap * sizeof(*rows));
	if (!rows)
		return -ENOMEM;
	tl->rows = rows;
	tl->cap = cap;
	return 0;
}

int timeline_tick(struct timeline *tl, const struct count_totals *t, struct drops *drops, double s)
{
	struct drops_totals dt;
	struct timeline_row *row;
	int err = tl->full ? -ENOSPC : grow(tl);

	if (err) {
		tl->full = true;
		return err;
	}
	row = &tl->rows[tl->n++];
	memset(row, 0, sizeof(*row));
	row->matched = t->matched - tl->at.matched;
	row->passed = t->passed - tl->at.passed;
	row->xdp_dropped = t->dropped - tl->at.xdp_dropped;
	tl->at.matched = t->matched;
	tl->at.passed = t->passed;
	tl->at.xdp_dropped = t->dropped;
	tl->last_s = s;
	if (!drops || drops_read(drops, 0, &dt))
		return 0;
	for (int r = 0; r < XR_DROP_REASONS; r++) {
		uint64_t d = dt.dropped[XR_DROP_IN][r] - tl->at_dropped[r];

		if (d)
			row->dropped[column(tl, r)] += d;
		tl->at_dropped[r] = dt.dropped[XR_DROP_IN][r];
	}
	return 0;
}

static void column_json(const struct timeline *tl, struct json *j, const char *name, size_t off)
{
	json_open(j, name, '[');
	for (unsigned int i = 0; i < tl->n; i++)
		json_u64(j, NULL, *(const uint64_t *)((const char *)&tl->rows[i] + off));
	json_close(j, ']');
}

void timeline_json(const struct timeline *tl, struct drops *drops, struct json *j)
{
	json_open(j, "timeline", '{');
	json_double(j, "interval_s", 1);
	json_double(j, "last_interval_s", tl->last_s);
	json_flag(j, "full", tl->full);
	column_json(tl, j, "matched", offsetof(struct timeline_row, matched));
	column_json(tl, j, "passed", offsetof(struct timeline_row, passed));
	column_json(tl, j, "xdp_dropped", offsetof(struct timeline_row, xdp_dropped));
	json_open(j, "dropped_by_reason", '{');
	for (unsigned int c = 0; drops && c < tl->nreasons; c++)
		column_json(tl, j, drops_reason_name(drops, tl->reason[c]),
			    offsetof(struct timeline_row, dropped) + c * sizeof(uint64_t));
	/* every column taken: the reasons that came later, together */
	if (drops && tl->nreasons == TIMELINE_REASONS)
		column_json(tl, j, "OTHER",
			    offsetof(struct timeline_row, dropped) +
				    TIMELINE_REASONS * sizeof(uint64_t));
	json_close(j, '}');
	json_close(j, '}');
}

void timeline_free(struct timeline *tl)
{
	free(tl->rows);
	memset(tl, 0, sizeof(*tl));
}
