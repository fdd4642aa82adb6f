// SPDX-License-Identifier: GPL-2.0
/* The report's part for each kind of result: a sender's, count's, search's (report/report.h). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include "measure/drop_words.h"
#include "report/headline.h"
#include "report/plot.h"
#include "report/report.h"
#include "report/series.h"
#include "report/timelines.h"
#include "report/svg.h"
#include "util/jsonpath.h"
#include "util/log.h"

/* A table of one row: a header per path, the figure at each under it */
static void row_table(FILE *f, struct json_object *j, const char *caption, const char *const *paths,
		      int n)
{
	fputs("<table><caption>", f);
	page_text(f, caption);
	fputs("</caption><tr>", f);
	for (int i = 0; i < n; i++)
		page_label(f, "th", paths[i]);
	fputs("</tr><tr>", f);
	for (int i = 0; i < n; i++)
		page_cell(f, j, paths[i]);
	fputs("</tr></table>\n", f);
}

static void headline_para(FILE *f, const struct report_doc *d);

/* The section's title, then what happened in words */
static void heading(FILE *f, const char *what, const struct report_doc *d)
{
	fputs("<h2>", f);
	page_text(f, what);
	fputs(": <code>", f);
	page_text(f, d->name);
	fputs("</code></h2>\n", f);
	headline_para(f, d);
}

/* The round trips' spectrum as HdrHistogram's plotter draws it: latency against 1/(1-p), log */
static void spectrum_plot(FILE *f, struct json_object *j)
{
	static double x[SERIES_MAX_POINTS], y[SERIES_MAX_POINTS];
	struct json_object *a = series_array_at(j, "replies.rtt_spectrum");
	struct plot p = { .title = "Round trips: percentile spectrum",
			  .xlabel = "percentile, as 1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9",
			  .ylabel = "round trip",
			  .xlog = true,
			  .yfmt = svg_tick_us };
	struct plot_series s = { "round trip", x, y, 0 };

	for (size_t i = 0; a && i < json_object_array_length(a) && s.n < SERIES_MAX_POINTS; i++) {
		struct json_object *pt = json_object_array_get_idx(a, i), *pc, *v;
		double pct;

		if (!json_object_object_get_ex(pt, "percentile", &pc) ||
		    !json_object_object_get_ex(pt, "value_us", &v))
			continue;
		pct = json_object_get_double(pc);
		/* 100% is at infinity on this axis: the max is in the table */
		if (pct >= 100)
			continue;
		x[s.n] = 1 / (1 - pct / 100);
		y[s.n++] = json_object_get_double(v);
	}
	plot_svg(f, &p, &s, 1);
}

void section_sender(FILE *f, const struct report_doc *d)
{
	static const char *const run[] = { "command_line", "interface", "engine", "threads",
					   "target.pps",   "asked",	"sent",	  "failed",
					   "pps",	   "duration_s" };

	/* the headline, then the timelines, then the details */
	heading(f, "Sender", d);
	timeline_sender(f, d->j);
	timeline_sessions(f, d->j);
	timeline_rtt(f, d->j);
	row_table(f, d->j, "The run", run, sizeof(run) / sizeof(run[0]));
	page_kv_table(f, d->j, "failed_reasons", "Frames not sent, by reason");
	page_kv_table(f, d->j, "replies", "Answers (round trips in microseconds)");
	spectrum_plot(f, d->j);
	page_kv_table(f, d->j, "system", "System");
}

void section_count(FILE *f, const struct report_doc *d)
{
	static const char *const run[] = { "iface",	      "matched",     "seen",
					   "passed",	      "xdp_dropped", "pps",
					   "first_to_last_s", "duration_s" };
	static double x[SERIES_MAX_POINTS], y[SERIES_MAX_POINTS];
	struct plot p = { .title = "Matched at the server, per second",
			  .xlabel = "second since the first frame",
			  .ylabel = "frames per second",
			  .xmin_span = 5 };
	struct plot_series s = { "matched", x, y, 0 };

	heading(f, "Server (count)", d);
	/* results from before the timeline: what matched per second since the first frame */
	if (!timeline_count(f, d->j)) {
		s.n = series_of(d->j, "per_second", NULL, x, y);
		plot_svg(f, &p, &s, 1);
	}
	row_table(f, d->j, "What arrived", run, sizeof(run) / sizeof(run[0]));
	page_kv_table(f, d->j, "attribution", "Where it went");
	page_kv_table(f, d->j, "drops.inbound", "The kernel's drops (inbound), by reason");
	page_kv_table(f, d->j, "system", "System");
}

/* one row per element of the array at path, the members given as columns */
static void array_table(FILE *f, struct json_object *j, const char *path, const char *caption,
			const char *const *cols, int ncols)
{
	struct json_object *a = series_array_at(j, path);
	char p[128];

	fputs("<table><caption>", f);
	page_text(f, caption);
	fputs("</caption><tr>", f);
	for (int c = 0; c < ncols; c++)
		page_label(f, "th", cols[c]);
	fputs("</tr>\n", f);
	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		fputs("<tr>", f);
		for (int c = 0; c < ncols; c++) {
			snprintf(p, sizeof(p), "%s.%zu.%s", path, i, cols[c]);
			page_cell(f, j, p);
		}
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static int by_x(const void *a, const void *b)
{
	const double *u = a, *v = b;

	return (u[0] > v[0]) - (u[0] < v[0]);
}

/* loss against the load offered, the trials in the order of their loads */
static void trials_plot(FILE *f, struct json_object *j)
{
	static double xy[SERIES_MAX_POINTS][2], x[SERIES_MAX_POINTS], y[SERIES_MAX_POINTS];
	struct json_object *a = series_array_at(j, "trials");
	struct plot p = { .title = "The trials: loss at each load offered",
			  .xlabel = "offered per second",
			  .ylabel = "loss (fraction)" };
	struct plot_series s = { "loss", x, y, 0 };
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; a && i < json_object_array_length(a) && s.n < SERIES_MAX_POINTS; i++) {
		struct json_object *t = json_object_array_get_idx(a, i), *o, *l;

		if (!json_object_object_get_ex(t, "offered_pps", &o) ||
		    !json_object_object_get_ex(t, "loss", &l))
			continue;
		xy[s.n][0] = json_object_get_double(o);
		xy[s.n++][1] = json_object_get_double(l);
		lo = fmin(lo, xy[s.n - 1][0]);
		hi = fmax(hi, xy[s.n - 1][0]);
	}
	qsort(xy, s.n, sizeof(xy[0]), by_x);
	for (unsigned int i = 0; i < s.n; i++)
		x[i] = xy[i][0], y[i] = xy[i][1];
	p.xlog = s.n && hi / lo > 10;
	plot_svg(f, &p, &s, 1);
}

#define REASON_SERIES 6

struct reason_series {
	char key[64], name[80];
	double total;
	unsigned int n;
	double x[SERIES_MAX_POINTS], y[SERIES_MAX_POINTS];
};

/* The series of server_drops' key (taken when first seen), or NULL when all are taken */
static struct reason_series *reason_of(struct reason_series *r, int *n, int max, const char *key)
{
	for (int i = 0; i < *n; i++)
		if (!strcmp(r[i].key, key))
			return &r[i];
	if (*n == max)
		return NULL;
	memset(&r[*n], 0, sizeof(r[0]) - sizeof(r[0].x) - sizeof(r[0].y));
	snprintf(r[*n].key, sizeof(r[0].key), "%s", key);
	snprintf(r[*n].name, sizeof(r[0].name), "%s", key);
	return &r[(*n)++];
}

static int by_total(const void *a, const void *b)
{
	const struct reason_series *x = a, *y = b;

	return (x->total < y->total) - (x->total > y->total);
}

/*
 * Where each trial's loss went: every drop counter the server's witness
 * gave, as a share of the frames the trial sent, against the load offered;
 * the largest few, in the order of their loads
 */
static void loss_by_reason_plot(FILE *f, struct json_object *j)
{
	static struct reason_series r[32];
	static struct plot_series s[REASON_SERIES];
	struct json_object *a = series_array_at(j, "trials");
	struct plot p = { .title = "Where the loss went: the server's drops at each load",
			  .xlabel = "offered per second",
			  .ylabel = "dropped, share of sent" };
	int n = 0, ns = 0;

	for (size_t i = 0; a && i < json_object_array_length(a); i++) {
		struct json_object *t = json_object_array_get_idx(a, i), *drops;
		double sent, load;

		if (json_path_double(t, "sent", &sent) || !(sent > 0) ||
		    json_path_double(t, "offered_pps", &load) ||
		    !json_object_object_get_ex(t, "server_drops", &drops) ||
		    !json_object_is_type(drops, json_type_object))
			continue;
		json_object_object_foreach(drops, key, val) {
			struct reason_series *rs =
				drop_key_is_loss(key) ? reason_of(r, &n, 32, key) : NULL;
			double v = json_object_get_double(val);

			if (!rs || rs->n == SERIES_MAX_POINTS)
				continue;
			/* kept in the order of their loads, as a curve */
			unsigned int k = rs->n++;

			for (; k > 0 && rs->x[k - 1] > load; k--)
				rs->x[k] = rs->x[k - 1], rs->y[k] = rs->y[k - 1];
			rs->x[k] = load;
			rs->y[k] = v / sent;
			rs->total += v;
		}
	}
	qsort(r, n, sizeof(r[0]), by_total);
	for (int i = 0; i < n && ns < REASON_SERIES && r[i].total > 0; i++)
		s[ns++] = (struct plot_series){ r[i].name, r[i].x, r[i].y, r[i].n };
	/* the same axis as the loss curve's above it */
	p.xlog = ns && s[0].n && s[0].x[0] > 0 && s[0].x[s[0].n - 1] / s[0].x[0] > 10;
	if (ns)
		plot_svg(f, &p, s, ns);
}

void section_search(FILE *f, const struct report_doc *d)
{
	static const char *const goals[] = { "name", "loss", "lower", "upper",
					     "conditional_throughput" };
	static const char *const trials[] = { "offered_pps", "asked",  "sent",	      "received",
					      "loss",	     "p99_us", "sender_short" };

	/* the headline, then the curves (the loss, where it went), then the details */
	heading(f, "Search", d);
	trials_plot(f, d->j);
	loss_by_reason_plot(f, d->j);
	array_table(f, d->j, "goals", "The bounds found", goals, sizeof(goals) / sizeof(goals[0]));
	page_kv_table(f, d->j, "settings", "Settings");
	array_table(f, d->j, "trials", "Every trial", trials, sizeof(trials) / sizeof(trials[0]));
	page_kv_table(f, d->j, "system", "System");
}

/* The document's headline in words (report/headline.h), as its JSON's "summary" says it */
static void headline_para(FILE *f, const struct report_doc *d)
{
	char hl[512];

	if (headline_of(d->j, hl, sizeof(hl)) || !hl[0])
		return;
	fputs("<p class='headline' data-k='summary'>", f);
	page_text(f, hl);
	fputs("</p>\n", f);
}

/*
 * A sender's run and its server's count together, first: what was offered,
 * sent, arrived and dropped, second by second on one chart
 */
static void section_both(FILE *f, const struct report_doc *docs, int n)
{
	struct json_object *sender = NULL, *count = NULL;

	for (int i = 0; i < n; i++) {
		enum result_kind k = result_kind_of(docs[i].j);

		if (k == RESULT_COUNT && !count)
			count = docs[i].j;
		else if (k != RESULT_COUNT && k != RESULT_SEARCH && !sender)
			sender = docs[i].j;
	}
	if (!sender || !count)
		return;
	if (timeline_both(f, sender, count, "<section data-doc='both'>\n<h2>Both ends</h2>\n"))
		fputs("</section>\n", f);
}

int report_html(FILE *f, const char *title, const struct report_doc *docs, int n)
{
	for (int i = 0; i < n; i++)
		if (result_kind_of(docs[i].j) == RESULT_UNKNOWN) {
			pr_warn("%s is not the JSON of a sender, count or search\n", docs[i].name);
			return -EINVAL;
		}
	page_begin(f, title);
	page_verdict(f, docs, n);
	section_both(f, docs, n);
	for (int i = 0; i < n; i++) {
		fputs("<section data-doc='", f);
		page_text(f, docs[i].name);
		fputs("'>\n", f);
		switch (result_kind_of(docs[i].j)) {
		case RESULT_SEARCH: section_search(f, &docs[i]); break;
		case RESULT_COUNT: section_count(f, &docs[i]); break;
		default: section_sender(f, &docs[i]); break;
		}
		fputs("</section>\n", f);
	}
	page_end(f);
	return 0;
}
