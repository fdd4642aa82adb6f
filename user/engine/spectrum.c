// SPDX-License-Identifier: GPL-2.0
/* The percentile spectrum of a round-trip histogram (engine/spectrum.h). */
#include <math.h>
#include "engine/engine.h"
#include "engine/spectrum.h"

#define TICKS_PER_HALF_DISTANCE 5
/* enough for any histogram: each half distance to 100% adds 10 points, and 2^-64 is below 1 count */
#define SPECTRUM_MAX 1024

/* highest value (ns) in bucket b: HdrHistogram's highestEquivalentValue */
static uint64_t highest_equivalent(unsigned int b)
{
	return rtt_bucket_floor(b + 1) - 1;
}

/* the next percentile after level: half distances to 100% each get ten ticks, finer each time */
static double next_level(double level)
{
	double half = pow(2, (int64_t)(log(100 / (100 - level)) / log(2)) + 1);

	return level + 100 / (TICKS_PER_HALF_DISTANCE * half);
}

unsigned int spectrum_points(const uint64_t *h, struct spectrum_point *out, unsigned int max)
{
	uint64_t total = 0, cum = 0;
	unsigned int n = 0, last = 0;
	double level = 0;

	for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++)
		if (h[b]) {
			total += h[b];
			last = b;
		}
	if (!total)
		return 0;
	for (unsigned int b = 0; b < XR_RTT_BUCKETS && n + 1 < max; b++) {
		if (!h[b])
			continue;
		cum += h[b];
		/*
		 * each level reached in this bucket, as HdrHistogram's iterator: it
		 * stays on a bucket while levels are due, but once every count is
		 * behind it, the next point is the last one, at 100%
		 */
		do {
			if (level > 100.0 * cum / total)
				break;
			out[n++] = (struct spectrum_point){ highest_equivalent(b), level, cum };
			level = next_level(level);
		} while (cum < total && n + 1 < max);
		if (cum == total)
			break;
	}
	out[n++] = (struct spectrum_point){ highest_equivalent(last), 100, total };
	return n;
}

void spectrum_print(FILE *f, const uint64_t *h)
{
	struct spectrum_point p[SPECTRUM_MAX];
	unsigned int n = spectrum_points(h, p, SPECTRUM_MAX);
	double sum = 0, sq = 0, mean = 0;
	uint64_t total = 0;

	fprintf(f, "%12s %12s %12s %12s\n\n", "Value", "Percentile", "TotalCount",
		"1/(1-Percentile)");
	for (unsigned int i = 0; i < n; i++)
		fprintf(f, "%12.3f %12f %12llu %12.2f\n", p[i].value_ns / 1e6,
			p[i].percentile / 100, (unsigned long long)p[i].count,
			1 / (1 - p[i].percentile / 100));
	/* mean and deviation from each bucket's middle, as HdrHistogram's medianEquivalentValue */
	for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++) {
		total += h[b];
		sum += h[b] *
		       (rtt_bucket_floor(b) + (rtt_bucket_floor(b + 1) - rtt_bucket_floor(b)) / 2);
	}
	mean = total ? sum / total : 0;
	for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++) {
		double d = rtt_bucket_floor(b) +
			   (rtt_bucket_floor(b + 1) - rtt_bucket_floor(b)) / 2 - mean;

		sq += h[b] * d * d;
	}
	fprintf(f,
		"#[Mean    = %12.3f, StdDeviation   = %12.3f]\n"
		"#[Max     = %12.3f, Total count    = %12llu]\n"
		"#[Buckets = %12d, SubBuckets     = %12d]\n",
		mean / 1e6, total ? sqrt(sq / total) / 1e6 : 0, n ? p[n - 1].value_ns / 1e6 : 0,
		(unsigned long long)total, XR_RTT_BUCKETS / 16 - 1, 32);
}

void spectrum_json(struct json *j, const char *name, const uint64_t *h)
{
	struct spectrum_point p[SPECTRUM_MAX];
	unsigned int n = spectrum_points(h, p, SPECTRUM_MAX);

	json_open(j, name, '[');
	for (unsigned int i = 0; i < n; i++) {
		json_open(j, NULL, '{');
		json_double(j, "value_us", p[i].value_ns / 1e3);
		json_double(j, "percentile", p[i].percentile);
		json_u64(j, "count", p[i].count);
		json_close(j, '}');
	}
	json_close(j, ']');
}
