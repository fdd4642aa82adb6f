/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The percentile spectrum of a round-trip histogram (XR_RTT_BUCKETS buckets,
 * bpf/lib/replies.bpf.h) in HdrHistogram's layout, the one wrk2 prints as its
 * "Detailed Percentile spectrum" and HdrHistogram's plotter reads (.hgrm).
 * The buckets are HdrHistogram's with 32 sub-buckets and a unit of 1 ns: each
 * value reported is its bucket's highest equivalent value, as there.
 */
#ifndef __XR_ENGINE_SPECTRUM_H
#define __XR_ENGINE_SPECTRUM_H

#include <stdint.h>
#include <stdio.h>
#include "util/json.h"

/* One line of the spectrum: the value (ns) below which `percentile` (0..100) of `count` lie */
struct spectrum_point {
	uint64_t value_ns;
	double percentile;
	uint64_t count;
};

/*
 * The points of h's spectrum with HdrHistogram's percentile iteration (5
 * ticks per half distance) up to the last one at 100%, into out (of max):
 * how many (0 for an empty histogram).
 */
unsigned int spectrum_points(const uint64_t *h, struct spectrum_point *out, unsigned int max);

/* The spectrum as HdrHistogram_c's hdr_percentiles_print writes it, values in milliseconds */
void spectrum_print(FILE *f, const uint64_t *h);

/* "NAME": [{"value_us", "percentile", "count"}, ...] */
void spectrum_json(struct json *j, const char *name, const uint64_t *h);

#endif
