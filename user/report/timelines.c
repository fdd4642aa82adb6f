// SPDX-License-Identifier: GPL-2.0
/* The report's charts of a run second by second (report/timelines.h). */
#include <stdio.h>
#include "report/plot.h"
#include "report/series.h"
#include "report/svg.h"
#include "report/timelines.h"
#include "util/jsonpath.h"

void timeline_sender(FILE *f, struct json_object *j)
{
	static double x[2][SERIES_MAX_POINTS], y[2][SERIES_MAX_POINTS];
	struct plot p = { .title = "Per second",
			  .xlabel = "second of the run",
			  .ylabel = "per second",
			  .xmin_span = 5 };
	struct plot_series s[2] = { { "frames sent", x[0], y[0], 0 },
				    { "answered", x[1], y[1], 0 } };

	s[0].n = series_of(j, "sent_per_second", NULL, x[0], y[0]);
	s[1].n = series_of(j, "replies.per_second", "answered", x[1], y[1]);
	plot_svg(f, &p, s, s[1].n ? 2 : 1);
}

/* The chart of the members of sessions.per_second that the run has, as rates */
static void sessions_chart(FILE *f, struct json_object *j, const struct plot *p,
			   const char *const (*cols)[2], unsigned int ncols)
{
	static double x[4][SERIES_MAX_POINTS], y[4][SERIES_MAX_POINTS];
	struct json_object *rows = series_array_at(j, "sessions.per_second"), *last, *span;
	struct plot_series s[4];
	unsigned int ns = 0;
	double last_s;

	if (!rows || !json_object_array_length(rows))
		return;
	last = json_object_array_get_idx(rows, json_object_array_length(rows) - 1);
	last_s = json_object_object_get_ex(last, "span_s", &span) ? json_object_get_double(span) :
								    1;
	for (unsigned int c = 0; c < ncols && ns < 4; c++) {
		s[ns] = (struct plot_series){ cols[c][1], x[ns], y[ns], 0 };
		s[ns].n = series_rate(j, "sessions.per_second", cols[c][0], last_s, x[ns], y[ns]);
		if (s[ns].n)
			ns++;
	}
	if (ns)
		plot_svg(f, p, s, ns);
}

void timeline_sessions(FILE *f, struct json_object *j)
{
	static const char *const sessions[][2] = { { "completed", "sessions completed" },
						   { "failed", "sessions failed" } };
	static const char *const messages[][2] = { { "messages_acked", "messages the broker took" },
						   { "delivered", "messages delivered" } };
	const struct plot ps = { .title = "Sessions per second",
				 .xlabel = "second of the run and its wait",
				 .ylabel = "sessions per second",
				 .xmin_span = 5 };
	const struct plot pm = { .title = "Messages per second",
				 .xlabel = "second of the run and its wait",
				 .ylabel = "messages per second",
				 .xmin_span = 5 };

	/* apart: a session carries up to thousands of messages, one scale would flatten it */
	sessions_chart(f, j, &ps, sessions, 2);
	sessions_chart(f, j, &pm, messages, 2);
}

/* The round trips second by second: p50 and p99 of each second's answers */
void timeline_rtt(FILE *f, struct json_object *j)
{
	static double x[2][SERIES_MAX_POINTS], y[2][SERIES_MAX_POINTS];
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

#define TIMELINE_SERIES 10

/* Room for a chart's series, each with its own points and name */
struct chart {
	struct plot_series s[TIMELINE_SERIES];
	double x[TIMELINE_SERIES][SERIES_MAX_POINTS], y[TIMELINE_SERIES][SERIES_MAX_POINTS];
	char names[TIMELINE_SERIES][96];
	unsigned int ns;
};

/* A new series named name (its points to fill), or NULL when the chart is full */
static struct plot_series *chart_add(struct chart *c, const char *name)
{
	struct plot_series *s;

	if (c->ns == TIMELINE_SERIES)
		return NULL;
	s = &c->s[c->ns];
	snprintf(c->names[c->ns], sizeof(c->names[0]), "%s", name);
	*s = (struct plot_series){ c->names[c->ns], c->x[c->ns], c->y[c->ns], 0 };
	c->ns++;
	return s;
}

/* The column of count's timeline at path as a series, its seconds moved by shift */
static void count_column(struct chart *c, struct json_object *j, const char *name, const char *path,
			 double last_s, double shift)
{
	struct plot_series *s = chart_add(c, name);

	if (!s)
		return;
	s->n = series_rate(j, path, NULL, last_s, c->x[c->ns - 1], c->y[c->ns - 1]);
	for (unsigned int i = 0; i < s->n; i++)
		c->x[c->ns - 1][i] += shift;
}

/* count's timeline as series: arrived, dropped in XDP, each kernel reason; false without one */
static bool count_columns(struct chart *c, struct json_object *j, double shift)
{
	struct json_object *by = json_path_get(j, "timeline.dropped_by_reason");
	double last_s, total;
	char path[160], name[96];

	if (json_path_double(j, "timeline.last_interval_s", &last_s))
		return false;
	count_column(c, j, "arrived at the server", "timeline.matched", last_s, shift);
	if (!json_path_double(j, "xdp_dropped", &total) && total > 0)
		count_column(c, j, "dropped in XDP (count --drop)", "timeline.xdp_dropped", last_s,
			     shift);
	if (by && json_object_is_type(by, json_type_object)) {
		json_object_object_foreach(by, key, val) {
			(void)val;
			snprintf(path, sizeof(path), "timeline.dropped_by_reason.%s", key);
			/* the reason's name: the legend has room for a few words (the table has them all) */
			snprintf(name, sizeof(name), "dropped: %s", key);
			count_column(c, j, name, path, last_s, shift);
		}
	}
	return true;
}

/* What arrived and where it went, second by second: matched, dropped in XDP, by the kernel's reasons */
bool timeline_count(FILE *f, struct json_object *j)
{
	static struct chart c;
	struct plot p = { .title = "What arrived and where it went, per second",
			  .xlabel = "second since count started",
			  .ylabel = "frames per second",
			  .xmin_span = 5 };

	c.ns = 0;
	if (!count_columns(&c, j, 0))
		return false;
	plot_svg(f, &p, c.s, c.ns);
	return true;
}

bool timeline_both(FILE *f, struct json_object *sender, struct json_object *count,
		   const char *opening)
{
	static struct chart c;
	struct plot p = { .title = "Offered, sent, arrived and dropped, per second",
			  .xlabel = "second since the sender started",
			  .ylabel = "frames per second",
			  .xmin_span = 5 };
	double g0, c0, pps;
	struct plot_series *s;

	c.ns = 0;
	if (json_path_double(sender, "start_unix", &g0) ||
	    json_path_double(count, "start_unix", &c0) ||
	    !json_path_get(count, "timeline.last_interval_s"))
		return false;
	fputs(opening, f);
	/* the rate asked, over the seconds the sender sent */
	s = chart_add(&c, "offered (the rate asked)");
	s->n = series_of(sender, "sent_per_second", NULL, c.x[c.ns - 1], c.y[c.ns - 1]);
	if (json_path_double(sender, "target.pps", &pps) || !(pps > 0))
		s->n = 0;
	for (unsigned int i = 0; i < s->n; i++)
		c.y[c.ns - 1][i] = pps;
	s = chart_add(&c, "sent");
	s->n = series_of(sender, "sent_per_second", NULL, c.x[c.ns - 1], c.y[c.ns - 1]);
	count_columns(&c, count, c0 - g0);
	plot_svg(f, &p, c.s, c.ns);
	return true;
}
