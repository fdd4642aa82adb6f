// SPDX-License-Identifier: GPL-2.0
/* count's --fail-if thresholds (measure/count_verdict.h). */
#include <errno.h>
#include <math.h>
#include <string.h>
#include "measure/count_verdict.h"
#include "util/log.h"

const struct threshold_metric count_threshold_metrics[] = {
	{ "matched", THR_COUNT, "frames that matched the filter" },
	{ "rate", THR_RATE, "matched frames per second, first to last" },
	{ "dropped", THR_COUNT, "matched frames the server's kernel dropped (every reason)" },
	{ "unattributed", THR_COUNT, "frames passed up, neither delivered nor dropped" },
	{ "loss", THR_FRACTION, "frames the sequence numbers (--seq) say were lost" },
};
const unsigned int count_nthreshold_metrics =
	sizeof(count_threshold_metrics) / sizeof(count_threshold_metrics[0]);

static bool needs_drops(const struct threshold_metric *m)
{
	return !strcmp(m->name, "dropped") || !strcmp(m->name, "unattributed");
}

int count_thresholds_check(const struct thresholds *ts, bool seq, bool drop_reasons)
{
	for (unsigned int i = 0; i < ts->n; i++) {
		const struct threshold *t = &ts->t[i];

		if (!strcmp(t->metric->name, "loss") && !seq) {
			pr_warn("--fail-if %s: loss is what --seq finds; give --seq\n", t->text);
			return -EINVAL;
		}
		if (needs_drops(t->metric) && !drop_reasons) {
			pr_warn("--fail-if %s: %s needs the kernel's drop reasons (not with --drop, "
				"--respond or --no-drop-reasons)\n",
				t->text, t->metric->name);
			return -EINVAL;
		}
		if (t->of_target) {
			pr_warn("--fail-if %s: count has no target rate; give one (rate<50k)\n",
				t->text);
			return -EINVAL;
		}
	}
	return 0;
}

static double value_of(const struct threshold_metric *m, const struct count_verdict_in *in)
{
	if (!strcmp(m->name, "matched"))
		return in->matched;
	if (!strcmp(m->name, "rate"))
		return in->rate;
	if (!strcmp(m->name, "loss"))
		return in->have_seq && in->received + in->lost ?
			       (double)in->lost / (in->received + in->lost) :
			       NAN;
	/* drop reasons unavailable on this kernel: no figure, which fails the threshold */
	if (!in->have_drops)
		return NAN;
	if (!strcmp(m->name, "dropped"))
		return in->dropped;
	return in->have_books ? in->unattributed : NAN;
}

bool count_thresholds_judge(const struct thresholds *ts, const struct count_verdict_in *in,
			    FILE *human, struct json *j)
{
	double values[THR_MAX];

	for (unsigned int i = 0; i < ts->n; i++)
		values[i] = value_of(ts->t[i].metric, in);
	return thresholds_judge(ts, values, NAN, human, j);
}
