// SPDX-License-Identifier: GPL-2.0
/* Round-trip percentiles of a run's replies from the program's histograms (bpf/lib/replies.bpf.h). */
#include <errno.h>
#include <stdbool.h>
#include "engine/replies.h"
#include "engine/spectrum.h"
#include "util/units.h"

static uint64_t percentile(const uint64_t *h, unsigned int nb, uint64_t total, double q)
{
	uint64_t want = (uint64_t)(q * total + 0.5), acc = 0;

	if (!total)
		return 0;
	if (want < 1)
		want = 1;
	for (unsigned int b = 0; b < nb; b++) {
		acc += h[b];
		if (acc >= want)
			return rtt_bucket_floor(b);
	}
	return rtt_bucket_floor(nb - 1);
}

static uint64_t hist_max(const uint64_t *h, unsigned int nb)
{
	for (unsigned int b = nb; b-- > 0;)
		if (h[b])
			return rtt_bucket_floor(b + 1);
	return 0;
}

/* The histograms of every second together: n round trips in total. */
static void hist_total(const struct engine_replies *r, uint64_t *total, uint64_t *n)
{
	*n = 0;
	for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++)
		total[b] = 0;
	for (unsigned int s = 0; s < r->seconds && s < XR_RTT_SECS; s++)
		for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++) {
			total[b] += r->hist[s * XR_RTT_BUCKETS + b];
			*n += r->hist[s * XR_RTT_BUCKETS + b];
		}
}

double replies_per_s(const struct engine_result *res, uint64_t v)
{
	double dur = (res->end_ns - res->start_ns) / 1e9;

	return dur > 0 ? v / dur : 0;
}

/* Whether any of the n counters is non-zero. */
static bool any_nonzero(const __u64 *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (v[i])
			return true;
	return false;
}

void replies_rtt_line(const struct engine_result *res, FILE *human)
{
	if (!res->replies.hist)
		return;
	/* silence (not even a RST or a stray answer) has two usual causes; the server's count tells which */
	if (res->sent && !res->replies.st.answered && !res->replies.st.unmatched &&
	    !any_nonzero(res->replies.st.ctr,
			 sizeof(res->replies.st.ctr) / sizeof(res->replies.st.ctr[0]))) {
		fprintf(human,
			"  no answer came back: does the server have a route back to the sources "
			"(--src)? 'xdpreplay count' on the server says where the requests died\n");
		return;
	}
	replies_hist_line(human, "round trip", &res->replies);
}

void replies_hist_line(FILE *human, const char *label, const struct engine_replies *r)
{
	uint64_t total[XR_RTT_BUCKETS], n;
	char a[16], b[16], c[16], d[16], e[16], f[16];

	hist_total(r, total, &n);
	fprintf(human, "  %s: p50 %s, p90 %s, p99 %s, p99.9 %s, p99.99 %s, max %s\n", label,
		fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.5), a, sizeof(a)),
		fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.9), b, sizeof(b)),
		fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.99), c, sizeof(c)),
		fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.999), e, sizeof(e)),
		fmt_duration(percentile(total, XR_RTT_BUCKETS, n, 0.9999), f, sizeof(f)),
		fmt_duration(hist_max(total, XR_RTT_BUCKETS), d, sizeof(d)));
}

double replies_hist_quantile_us(const struct engine_replies *r, double q)
{
	uint64_t total[XR_RTT_BUCKETS], n;

	hist_total(r, total, &n);
	return percentile(total, XR_RTT_BUCKETS, n, q) / 1e3;
}

void replies_hist_json(struct json *j, const char *name, const struct engine_replies *r)
{
	uint64_t total[XR_RTT_BUCKETS], n;

	hist_total(r, total, &n);
	json_open(j, name, '{');
	json_double(j, "p50", percentile(total, XR_RTT_BUCKETS, n, 0.5) / 1e3);
	json_double(j, "p90", percentile(total, XR_RTT_BUCKETS, n, 0.9) / 1e3);
	json_double(j, "p99", percentile(total, XR_RTT_BUCKETS, n, 0.99) / 1e3);
	json_double(j, "p99.9", percentile(total, XR_RTT_BUCKETS, n, 0.999) / 1e3);
	json_double(j, "p99.99", percentile(total, XR_RTT_BUCKETS, n, 0.9999) / 1e3);
	json_double(j, "max", hist_max(total, XR_RTT_BUCKETS) / 1e3);
	json_close(j, '}');
}

void replies_spectrum_json(const struct engine_result *res, struct json *j)
{
	uint64_t total[XR_RTT_BUCKETS], n;

	if (!res->replies.hist)
		return;
	hist_total(&res->replies, total, &n);
	spectrum_json(j, "rtt_spectrum", total);
}

int replies_spectrum_write(const struct engine_result *res, FILE *f)
{
	uint64_t total[XR_RTT_BUCKETS], n;

	if (!res->replies.hist)
		return -ENODATA;
	hist_total(&res->replies, total, &n);
	spectrum_print(f, total);
	return 0;
}

void replies_rtt_json(const struct engine_result *res, struct json *j)
{
	const struct engine_replies *r = &res->replies;

	if (!r->hist)
		return;
	replies_hist_json(j, "rtt_us", r);
	replies_spectrum_json(res, j);
	json_open(j, "per_second", '[');
	for (unsigned int s = 0; s < r->seconds && s < XR_RTT_SECS; s++) {
		const uint64_t *h = r->hist + (size_t)s * XR_RTT_BUCKETS;
		uint64_t c = 0, within10 = 0, within50 = 0;

		for (unsigned int b = 0; b < XR_RTT_BUCKETS; b++) {
			c += h[b];
			/* a bucket counts as within a bound when all of it is */
			if (rtt_bucket_floor(b + 1) <= 10000000ULL)
				within10 += h[b];
			if (rtt_bucket_floor(b + 1) <= 50000000ULL)
				within50 += h[b];
		}
		json_open(j, NULL, '{');
		json_u64(j, "second", s);
		json_u64(j, "answered", c);
		json_u64(j, "within_10ms", within10);
		json_u64(j, "within_50ms", within50);
		json_double(j, "p50_us", percentile(h, XR_RTT_BUCKETS, c, 0.5) / 1e3);
		json_double(j, "p90_us", percentile(h, XR_RTT_BUCKETS, c, 0.9) / 1e3);
		json_double(j, "p99_us", percentile(h, XR_RTT_BUCKETS, c, 0.99) / 1e3);
		json_double(j, "max_us", hist_max(h, XR_RTT_BUCKETS) / 1e3);
		json_close(j, '}');
	}
	json_close(j, ']');
}

void replies_seconds_json(struct json *j, const struct engine_result *res, replies_second_fn *row,
			  const void *ctx)
{
	const struct engine_replies *r = &res->replies;
	const struct xr_replies_stats zero = {};

	if (!r->nsec_st)
		return;
	json_open(j, "per_second", '[');
	for (unsigned int s = 0; s < r->nsec_st; s++) {
		json_open(j, NULL, '{');
		json_u64(j, "second", s);
		json_double(j, "span_s", s + 1 < r->nsec_st ? 1.0 : r->last_span_s);
		row(ctx, &r->at_sec[s], s ? &r->at_sec[s - 1] : &zero, j);
		json_close(j, '}');
	}
	json_close(j, ']');
}
