/* SPDX-License-Identifier: GPL-2.0 */
/*
 * --fail-if EXPR: a verdict on a run's figures, as k6's thresholds give one,
 * so that a CI job fails on a result rather than on a crash. EXPR is METRIC
 * OP VALUE: OP one of < <= > >=, VALUE in the metric's unit (a fraction as
 * 0.001 or 0.1%, a time as 10ms, a rate as 50k, or a fraction of the run's
 * target rate as 0.99*target). The command names its metrics.
 */
#ifndef __XR_UTIL_THRESHOLD_H
#define __XR_UTIL_THRESHOLD_H

#include <stdbool.h>
#include <stdio.h>
#include "util/json.h"

enum threshold_kind {
	THR_FRACTION, /* loss, unsent: 0.001 or 0.1% */
	THR_TIME, /* a latency: ns, written 250us, 10ms, 1.5s */
	THR_RATE, /* per second: 50k, 2.5M, or F*target */
	THR_COUNT, /* a number of things: 0, 1k, 2.5M */
};

struct threshold_metric {
	const char *name;
	enum threshold_kind kind;
	const char *what; /* for --help and the verdict: "frames sent that got no answer" */
};

enum threshold_op { THR_LT, THR_LE, THR_GT, THR_GE };

#define THR_MAX 16

struct threshold {
	char text[64]; /* as given */
	const struct threshold_metric *metric;
	enum threshold_op op;
	double value; /* a fraction, ns, or per second; with of_target, the factor */
	bool of_target;
};

struct thresholds {
	struct threshold t[THR_MAX];
	unsigned int n;
};

/*
 * One --fail-if EXPR against the command's metrics (n of them) into ts: 0, or
 * -EINVAL after a one-line message naming what is wrong.
 */
int threshold_add(struct thresholds *ts, const char *cmd, const char *expr,
		  const struct threshold_metric *metrics, unsigned int n);

/* Whether t fails (the run's figure breaks it) for the figure v; target: the run's rate, if any. */
bool threshold_fails(const struct threshold *t, double v, double target);

/*
 * The verdict of each of ts on the figures values[i] (NAN: the run has no such
 * figure, which fails the threshold) to human ("  threshold ...") and j's
 * "thresholds" array (either may be NULL). Whether any failed.
 */
bool thresholds_judge(const struct thresholds *ts, const double *values, double target, FILE *human,
		      struct json *j);

#endif
