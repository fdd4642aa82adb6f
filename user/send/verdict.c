// SPDX-License-Identifier: GPL-2.0
/* A sender run's --fail-if thresholds (send/verdict.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "engine/replies.h"
#include "send/verdict.h"
#include "util/log.h"

const struct threshold_metric send_threshold_metrics[] = {
	{ "loss", THR_FRACTION, "frames sent that no answer came for" },
	{ "unsent", THR_FRACTION, "frames asked for that were not sent" },
	{ "rate", THR_RATE, "frames sent per second" },
	{ "p50", THR_TIME, "the answers' round trip, median" },
	{ "p90", THR_TIME, "the answers' round trip, 90th percentile" },
	{ "p99", THR_TIME, "the answers' round trip, 99th percentile" },
	{ "p99.9", THR_TIME, "the answers' round trip, 99.9th percentile" },
	{ "p99.99", THR_TIME, "the answers' round trip, 99.99th percentile" },
	{ "max", THR_TIME, "the answers' longest round trip" },
	{ "sessions_failed", THR_COUNT, "sessions asked for that did not complete (TCP, MQTT)" },
};
const unsigned int send_nthreshold_metrics =
	sizeof(send_threshold_metrics) / sizeof(send_threshold_metrics[0]);

/* The quantile a round-trip metric names (p50 .. p99.99, max); -1 for the others. */
static double metric_quantile(const struct threshold_metric *m)
{
	if (!strcmp(m->name, "max"))
		return 1;
	return m->name[0] == 'p' ? strtod(m->name + 1, NULL) / 100 : -1;
}

int send_thresholds_check(const struct thresholds *ts, const struct engine_opts *o)
{
	for (unsigned int i = 0; i < ts->n; i++) {
		const struct threshold *t = &ts->t[i];
		bool answers = !strcmp(t->metric->name, "loss") || metric_quantile(t->metric) >= 0;

		if (answers && o->reply_kind == XR_REPLY_NONE) {
			pr_warn("--fail-if %s: this run counts no answers (gen syn, dns, tcp, mqtt and "
				"lorawan send do)\n",
				t->text);
			return -EINVAL;
		}
		if (!strcmp(t->metric->name, "sessions_failed") && o->reply_kind != XR_REPLY_TCP) {
			pr_warn("--fail-if %s: this run has no sessions (gen tcp, gen mqtt and replay "
				"--sessions do)\n",
				t->text);
			return -EINVAL;
		}
		if (t->of_target && o->pace != XR_PACE_RATE) {
			pr_warn("--fail-if %s: a target rate is --pps or --rate\n", t->text);
			return -EINVAL;
		}
	}
	return 0;
}

/* Each threshold's figure into values (NAN: none), the run's target into *target. */
static void thresholds_values(const struct thresholds *ts, const struct engine_opts *o,
			      const struct engine_result *res, double *values, double *target)
{
	double dur = (res->end_ns - res->start_ns) / 1e9;

	*target = o->pace == XR_PACE_RATE ? o->pps : NAN;
	for (unsigned int i = 0; i < ts->n; i++) {
		const struct threshold_metric *m = ts->t[i].metric;
		double q = metric_quantile(m);

		if (!strcmp(m->name, "loss"))
			values[i] = res->sent ? 1 - (double)res->replies.st.answered / res->sent :
						NAN;
		else if (!strcmp(m->name, "unsent"))
			values[i] = res->asked ? (double)(res->asked - res->sent) / res->asked : 0;
		else if (!strcmp(m->name, "rate"))
			values[i] = dur > 0 ? res->sent / dur : 0;
		/* each frame a session's SYN: the sessions asked for, less those that completed */
		else if (!strcmp(m->name, "sessions_failed"))
			values[i] = res->asked - res->replies.st.ctr[XR_TCP_COMPLETED];
		else
			values[i] = res->replies.st.answered ?
					    replies_hist_quantile_us(&res->replies, q) * 1e3 :
					    NAN;
	}
}

bool send_thresholds_judge(const struct thresholds *ts, const struct engine_opts *o,
			   const struct engine_result *res, FILE *human, struct json *j)
{
	double values[THR_MAX], target;

	if (!ts->n)
		return false;
	thresholds_values(ts, o, res, values, &target);
	return thresholds_judge(ts, values, target, human, j);
}
