/* SPDX-License-Identifier: GPL-2.0 */
/* The round trips of a run's replies, for every protocol's report: percentiles, per second. */
#ifndef __XR_ENGINE_REPLIES_H
#define __XR_ENGINE_REPLIES_H

#include <stdio.h>
#include "engine/engine.h"
#include "util/json.h"

/* "  round trip: p50 .., p90 .., p99 .., p99.9 .., p99.99 .., max ..\n" */
void replies_rtt_line(const struct engine_result *res, FILE *human);
/*
 * "rtt_us": {p50, p90, p99, p99.9, p99.99, max}, "rtt_spectrum": [...] and
 * "per_second": [...], inside the protocol's "replies" object
 */
void replies_rtt_json(const struct engine_result *res, struct json *j);
/* "  LABEL: p50 .., p90 .., p99 .., max ..\n" of any histogram laid out as the round trips' */
void replies_hist_line(FILE *human, const char *label, const struct engine_replies *r);
/* The q-quantile (0.5: the median) of such a histogram, in microseconds (0 when empty) */
double replies_hist_quantile_us(const struct engine_replies *r, double q);
/* "NAME": {p50, p90, p99, p99.9, p99.99, max} in microseconds */
void replies_hist_json(struct json *j, const char *name, const struct engine_replies *r);
/* "rtt_spectrum": the round trips' percentile spectrum (engine/spectrum.h) */
void replies_spectrum_json(const struct engine_result *res, struct json *j);
/* The spectrum in HdrHistogram's text layout (.hgrm) into f: 0, or -ENODATA without round trips */
int replies_spectrum_write(const struct engine_result *res, FILE *f);
/* A row of a per-second table: what one second added to the counters (now less before) */
typedef void replies_second_fn(const void *ctx, const struct xr_replies_stats *now,
			       const struct xr_replies_stats *before, struct json *j);
/*
 * "per_second": [{second, span_s, and what row writes}], a row for each
 * second of the run and its wait (engine_replies.at_sec), the last as long as span_s
 */
void replies_seconds_json(struct json *j, const struct engine_result *res, replies_second_fn *row,
			  const void *ctx);
/* v per second of the run */
double replies_per_s(const struct engine_result *res, uint64_t v);

#endif
