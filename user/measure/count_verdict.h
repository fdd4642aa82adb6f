/* SPDX-License-Identifier: GPL-2.0 */
/* count's --fail-if thresholds: its metrics, what they need, their values at the end. */
#ifndef __XR_MEASURE_COUNT_VERDICT_H
#define __XR_MEASURE_COUNT_VERDICT_H

#include <stdbool.h>
#include <stdint.h>
#include "util/threshold.h"

/* The metrics count's --fail-if names (count_threshold_metrics[count_nthreshold_metrics]). */
extern const struct threshold_metric count_threshold_metrics[];
extern const unsigned int count_nthreshold_metrics;

/* What they read: the counter's figures at the end */
struct count_verdict_in {
	uint64_t matched;
	double rate; /* matched frames per second, first to last */
	bool have_drops,
		have_books; /* the kernel's drop reasons were read; the sockets' side too */
	uint64_t dropped; /* inbound drops of matched frames, every reason */
	int64_t unattributed; /* passed up, neither delivered nor dropped (with the books) */
	bool have_seq; /* --seq */
	uint64_t received, lost;
};

/*
 * Before the count: whether it will have what each threshold reads (--seq for
 * loss; drop reasons for dropped and unattributed). 0, or -EINVAL after a
 * one-line message.
 */
int count_thresholds_check(const struct thresholds *ts, bool seq, bool drop_reasons);

/* Each threshold judged on in, to human and j's "thresholds" (either may be NULL); whether any failed. */
bool count_thresholds_judge(const struct thresholds *ts, const struct count_verdict_in *in,
			    FILE *human, struct json *j);

#endif
