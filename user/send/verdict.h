/* SPDX-License-Identifier: GPL-2.0 */
/* A sender run's --fail-if thresholds: its metrics, what they need, their values after the run. */
#ifndef __XR_SEND_VERDICT_H
#define __XR_SEND_VERDICT_H

#include "engine/engine.h"
#include "util/threshold.h"

/* The metrics a sender's --fail-if names (send_threshold_metrics[send_nthreshold_metrics]). */
extern const struct threshold_metric send_threshold_metrics[];
extern const unsigned int send_nthreshold_metrics;

/*
 * Before the run: whether o's run has what each threshold reads (answers for
 * loss and the round trips, a target rate for F*target). 0, or -EINVAL after
 * a one-line message.
 */
int send_thresholds_check(const struct thresholds *ts, const struct engine_opts *o);

/*
 * After it: each threshold judged on the run's figures, to human and j's
 * "thresholds" (either may be NULL). Whether any failed.
 */
bool send_thresholds_judge(const struct thresholds *ts, const struct engine_opts *o,
			   const struct engine_result *res, FILE *human, struct json *j);

#endif
