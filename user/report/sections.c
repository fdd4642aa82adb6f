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
#include "report/svg.h"
#include "util/jsonpath.h"
#include "util/log.h"

#define MAX_POINTS 4096

/* The array at path, or NULL when there is none (or something else is there) */
static struct json_object *array_at(struct json_object *j, const char *path)
{
	struct json_object *a = json_path_get(j, path);

	return a && json_object_is_type(a, json_type_array) ? a : NULL;
}

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

/*
 * The numbers of the array at path (its elements' member key, or the elements
 * themselves with key NULL) into y, their indices into x: how many
 */
static unsigned int series_of(struct json_object *j, const char *path, const char *key, double *x,
			      double *y)
{
	struct json_object *a = array_at(j, path), *v;
	unsigned int n = 0;

	for (size_t i = 0; a && i < json_object_array_length(a) && n < MAX_POINTS; i++) {
		v = json_object_array_get_idx(a, i);
		if (key && !json_object_object_get_ex(v, key, &v))
			continue;
		x[n] = i;
		y[n++] = json_object_get_double(v);
	}
	return n;
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
	static double x[MAX_POINTS], y[MAX_POINTS];
	struct json_object *a = array_at(j, "replies.rtt_spectrum");
	struct plot p = { .title = "Round trips: percentile spectrum",
			  .xlabel = "percentile, as 1/(1-p): 10 = p90, 100 = p99, 1000 = p99.9",
			  .ylabel = "round trip",
			  .xlog = true,
			  .yfmt = svg_tick_us };
	struct plot_series s = { "round trip", x, y, 0 };

	for (size_t i = 0; a && i < json_object_array_length(a) && s.n < MAX_POINTS; i++) {
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

/* The round trips second by second: p50 and p99 of each second's answers */
static void rtt_timeline_plot(FILE *f, struct json_object *j)
{
	static double x[2][MAX_POINTS], y[2][MAX_POINTS];
	struct plot p = { .title = "Round trips per second",
			  .xlabel = "second of the run",
			  .ylabel = "round trip",
			  .xmin_span = 5,
			  .yfmt = svg_tick_us };
	struct plot_series s[2] = { { "p50", x[0], y[0], 0 }, { "p99", x[1], y[1], 0 } };

	s[0].n = series_of(j, "replies.per_second", "p50_us", x[0], y[0]);
	s[1].n = series_of(j, "replies.per_second", "p99_us", x[1], y[1]);
	if (s[0].n)
		plot_svg(f, &p, s, 2);
}

void section_sender(FILE *f, const struct report_doc *d)
{
	static const char *const run[] = { "command_line", "interface", "engine", "threads",
					   "target.pps",   "asked",	"sent",	  "failed",
					   "pps",	   "duration_s" };
	static double x[2][MAX_POINTS], y[2][MAX_POINTS];
	struct plot p = { .title = "Per second",
			  .xlabel = "second of the run",
			  .ylabel = "per second",
			  .xmin_span = 5 };
	struct plot_series s[2] = { { "frames sent", x[0], y[0], 0 },
				    { "answered", x[1], y[1], 0 } };

	/* the headline, then the timeline, then the details */
	heading(f, "Sender", d);
	s[0].n = series_of(d->j, "sent_per_second", NULL, x[0], y[0]);
	s[1].n = series_of(d->j, "replies.per_second", "answered", x[1], y[1]);
	plot_svg(f, &p, s, s[1].n ? 2 : 1);
	rtt_timeline_plot(f, d->j);
	row_table(f, d->j, "The run", run, sizeof(run) / sizeof(run[0]));
	page_kv_table(f, d->j, "failed_reasons", "Frames not sent, by reason");
	page_kv_table(f, d->j, "replies", "Answers (round trips in microseconds)");
	spectrum_plot(f, d->j);
	page_kv_table(f, d->j, "system", "System");
}

#define TIMELINE_SERIES 8

/*
 * The timeline's column at path as a rate per second: each whole second's
 * count, the last (shorter) row's over its length, left out under 0.2 s
 */
static unsigned int timeline_series(struct json_object *j, const char *path, double last_s,
				    double *x, double *y)
{
	unsigned int n = series_of(j, path, NULL, x, y);

	if (n && last_s < 0.2)
		n--;
	else if (n)
		y[n - 1] /= last_s;
	return n;
}

/* What arrived and where it went, second by second: matched, dropped in XDP, by the kernel's reasons */
static bool timeline_plot(FILE *f, struct json_object *j)
{
	static double x[TIMELINE_SERIES][MAX_POINTS], y[TIMELINE_SERIES][MAX_POINTS];
	static char names[TIMELINE_SERIES][96];
	struct json_object *by = json_path_get(j, "timeline.dropped_by_reason");
	double last_s, total;
	struct plot p = { .title = "What arrived and where it went, per second",
			  .xlabel = "second since count started",
			  .ylabel = "frames per second",
			  .xmin_span = 5 };
	struct plot_series s[TIMELINE_SERIES];
	unsigned int ns = 0;
	char path[160];

	if (json_path_double(j, "timeline.last_interval_s", &last_s))
		return false;
	s[ns] = (struct plot_series){ "arrived (matched)", x[ns], y[ns], 0 };
	s[ns].n = timeline_series(j, "timeline.matched", last_s, x[ns], y[ns]);
	ns++;
	if (!json_path_double(j, "xdp_dropped", &total) && total > 0) {
		s[ns] = (struct plot_series){ "dropped in XDP (count --drop)", x[ns], y[ns], 0 };
		s[ns].n = timeline_series(j, "timeline.xdp_dropped", last_s, x[ns], y[ns]);
		ns++;
	}
	if (by && json_object_is_type(by, json_type_object)) {
		json_object_object_foreach(by, key, val) {
			(void)val;
			if (ns == TIMELINE_SERIES)
				break;
			snprintf(path, sizeof(path), "timeline.dropped_by_reason.%s", key);
			s[ns] = (struct plot_series){ names[ns], x[ns], y[ns], 0 };
			/* the reason's name: the legend has room for a few words (the table has them all) */
			snprintf(names[ns], sizeof(names[ns]), "dropped: %s", key);
			s[ns].n = timeline_series(j, path, last_s, x[ns], y[ns]);
			ns++;
		}
	}
	plot_svg(f, &p, s, ns);
	return true;
}

void section_count(FILE *f, const struct report_doc *d)
{
	static const char *const run[] = { "iface",	      "matched",     "seen",
					   "passed",	      "xdp_dropped", "pps",
					   "first_to_last_s", "duration_s" };
	static double x[MAX_POINTS], y[MAX_POINTS];
	struct plot p = { .title = "Matched at the server, per second",
			  .xlabel = "second since the first frame",
			  .ylabel = "frames per second",
			  .xmin_span = 5 };
	struct plot_series s = { "matched", x, y, 0 };

	heading(f, "Server (count)", d);
	/* results from before the timeline: what matched per second since the first frame */
	if (!timeline_plot(f, d->j)) {
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
	struct json_object *a = array_at(j, path);
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
	static double xy[MAX_POINTS][2], x[MAX_POINTS], y[MAX_POINTS];
	struct json_object *a = array_at(j, "trials");
	struct plot p = { .title = "The trials: loss at each load offered",
			  .xlabel = "offered per second",
			  .ylabel = "loss (fraction)" };
	struct plot_series s = { "loss", x, y, 0 };
	double lo = INFINITY, hi = 0;

	for (size_t i = 0; a && i < json_object_array_length(a) && s.n < MAX_POINTS; i++) {
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
	double x[MAX_POINTS], y[MAX_POINTS];
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
	struct json_object *a = array_at(j, "trials");
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

			if (!rs || rs->n == MAX_POINTS)
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

	heading(f, "Search", d);
	page_kv_table(f, d->j, "settings", "Settings");
	array_table(f, d->j, "goals", "The bounds found", goals, sizeof(goals) / sizeof(goals[0]));
	trials_plot(f, d->j);
	loss_by_reason_plot(f, d->j);
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

int report_html(FILE *f, const char *title, const struct report_doc *docs, int n)
{
	for (int i = 0; i < n; i++)
		if (result_kind_of(docs[i].j) == RESULT_UNKNOWN) {
			pr_warn("%s is not the JSON of a sender, count or search\n", docs[i].name);
			return -EINVAL;
		}
	page_begin(f, title);
	page_verdict(f, docs, n);
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
