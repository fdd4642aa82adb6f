// SPDX-License-Identifier: GPL-2.0
/* search's --fail-if thresholds on what it found (search/search.h). */
#include <math.h>
#include <string.h>
#include "search/search.h"

const struct threshold_metric search_threshold_metrics[] = {
	{ "limit", THR_RATE, "the lowest lower bound of the goals (what every goal held at)" },
	{ "short_trials", THR_COUNT, "trials where the sender fell short of the load" },
};
const unsigned int search_nthreshold_metrics =
	sizeof(search_threshold_metrics) / sizeof(search_threshold_metrics[0]);

/* The goals' lowest lower bound: none (NAN) when a goal found none */
static double limit(const struct search *s)
{
	double v = INFINITY;

	for (int i = 0; i < s->ng; i++)
		v = s->g[i].lower < v ? s->g[i].lower : v;
	return s->ng && v > 0 && isfinite(v) ? v : NAN;
}

bool search_thresholds_judge(const struct search *s, FILE *human, struct json *j)
{
	double values[THR_MAX];
	int shorts = 0;

	for (int i = 0; i < s->nt; i++)
		shorts += s->t[i].sender_short;
	for (unsigned int i = 0; i < s->fail_if.n; i++)
		values[i] = !strcmp(s->fail_if.t[i].metric->name, "limit") ? limit(s) : shorts;
	/* F*target: a fraction of the most the search was asked to offer */
	return thresholds_judge(&s->fail_if, values, s->max_asked, human, j);
}
