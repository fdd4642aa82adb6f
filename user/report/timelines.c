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

#define TIMELINE_SERIES 8

/* What arrived and where it went, second by second: matched, dropped in XDP, by the kernel's reasons */
bool timeline_count(FILE *f, struct json_object *j)
{
	static double x[TIMELINE_SERIES][SERIES_MAX_POINTS], y[TIMELINE_SERIES][SERIES_MAX_POINTS];
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
	s[ns].n = series_rate(j, "timeline.matched", NULL, last_s, x[ns], y[ns]);
	ns++;
	if (!json_path_double(j, "xdp_dropped", &total) && total > 0) {
		s[ns] = (struct plot_series){ "dropped in XDP (count --drop)", x[ns], y[ns], 0 };
		s[ns].n = series_rate(j, "timeline.xdp_dropped", NULL, last_s, x[ns], y[ns]);
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
			s[ns].n = series_rate(j, path, NULL, last_s, x[ns], y[ns]);
			ns++;
		}
	}
	plot_svg(f, &p, s, ns);
	return true;
}
