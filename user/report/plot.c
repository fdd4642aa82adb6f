// SPDX-License-Identifier: GPL-2.0
/* Line charts as inline SVG (report/plot.h). */
#include <math.h>
#include "report/plot.h"
#include "report/svg.h"

#define PLOT_W 640
#define PLOT_H 300
#define LEFT 72
#define RIGHT 16
#define TOP 34
#define BOTTOM 48
#define MAX_MARKS 120

/* colours a reader with the common colour blindnesses tells apart (Okabe and Ito) */
static const char *const colour[] = { "#0072b2", "#d55e00", "#009e73",
				      "#cc79a7", "#e69f00", "#56b4e9" };

/* The axis over every point's x (or y), rounded outwards; a log axis over the positive ones */
static struct svg_axis fit(const struct plot_series *s, unsigned int ns, bool y, bool log,
			   double p0, double p1)
{
	struct svg_axis a = { .lo = INFINITY, .hi = -INFINITY, .p0 = p0, .p1 = p1, .log = log };

	for (unsigned int i = 0; i < ns; i++)
		for (unsigned int k = 0; k < s[i].n; k++) {
			double v = y ? s[i].y[k] : s[i].x[k];

			if (!isfinite(v) || (log && v <= 0))
				continue;
			a.lo = fmin(a.lo, v);
			a.hi = fmax(a.hi, v);
		}
	if (a.lo > a.hi)
		a.lo = log ? 1 : 0, a.hi = log ? 10 : 1;
	if (log) {
		a.lo = svg_nice_125(a.lo, false);
		a.hi = svg_nice_125(a.hi * 1.0001, true);
		if (a.hi <= a.lo)
			a.hi = a.lo * 10;
		return a;
	}
	/* a linear axis starts at zero: rates and counts are read against it */
	a.lo = fmin(0, a.lo);
	if (a.hi <= a.lo)
		a.hi = a.lo + 1;
	double st = svg_nice_step(a.lo, a.hi, 5);

	a.hi = ceil(a.hi / st) * st;
	return a;
}

static void frame(FILE *f, const struct plot *p, const struct svg_axis *x, const struct svg_axis *y)
{
	fprintf(f,
		"<svg class='plot' xmlns='http://www.w3.org/2000/svg' viewBox='0 0 %d %d' "
		"width='%d' height='%d' font-family='sans-serif' font-size='11'>\n"
		"<rect x='0' y='0' width='%d' height='%d' fill='#fff'/>\n"
		"<text x='%d' y='18' font-size='13' font-weight='bold'>",
		PLOT_W, PLOT_H, PLOT_W, PLOT_H, PLOT_W, PLOT_H, LEFT);
	svg_text(f, p->title);
	fprintf(f,
		"</text>\n<rect x='%d' y='%d' width='%d' height='%d' fill='none' stroke='#888'/>\n",
		LEFT, TOP, PLOT_W - LEFT - RIGHT, PLOT_H - TOP - BOTTOM);
	svg_axis_ticks_fmt(f, x, false, PLOT_H - BOTTOM + 15, "", p->xfmt ?: svg_tick_si);
	svg_axis_ticks_fmt(f, y, true, LEFT - 6, "", p->yfmt ?: svg_tick_si);
	fprintf(f, "<text x='%d' y='%d' text-anchor='middle'>", (LEFT + PLOT_W - RIGHT) / 2,
		PLOT_H - 10);
	svg_text(f, p->xlabel);
	fprintf(f, "</text>\n<text transform='translate(14 %d) rotate(-90)' text-anchor='middle'>",
		(TOP + PLOT_H - BOTTOM) / 2);
	svg_text(f, p->ylabel);
	fputs("</text>\n", f);
}

void plot_svg(FILE *f, const struct plot *p, const struct plot_series *s, unsigned int ns)
{
	struct svg_axis x = fit(s, ns, false, p->xlog, LEFT, PLOT_W - RIGHT);
	struct svg_axis y = fit(s, ns, true, p->ylog, PLOT_H - BOTTOM, TOP);
	unsigned int points = 0;

	for (unsigned int i = 0; i < ns; i++)
		points += s[i].n;
	if (!points)
		return;
	if (!p->xlog && x.hi - x.lo < p->xmin_span)
		x.hi = x.lo + p->xmin_span;
	frame(f, p, &x, &y);
	for (unsigned int i = 0; i < ns; i++) {
		const char *c = colour[i % (sizeof(colour) / sizeof(colour[0]))];

		fprintf(f,
			"<polyline class='series' fill='none' stroke='%s' stroke-width='2' points='",
			c);
		for (unsigned int k = 0; k < s[i].n; k++)
			if (isfinite(s[i].x[k]) && isfinite(s[i].y[k]) &&
			    (!p->xlog || s[i].x[k] > 0) && (!p->ylog || s[i].y[k] > 0))
				fprintf(f, "%.1f,%.1f ", svg_axis_px(&x, s[i].x[k]),
					svg_axis_px(&y, s[i].y[k]));
		fputs("'/>\n", f);
		/* a mark on each point while they are few: a one-second run is one point, no line */
		for (unsigned int k = 0; s[i].n <= MAX_MARKS && k < s[i].n; k++)
			if (isfinite(s[i].x[k]) && isfinite(s[i].y[k]) &&
			    (!p->xlog || s[i].x[k] > 0) && (!p->ylog || s[i].y[k] > 0))
				fprintf(f, "<circle cx='%.1f' cy='%.1f' r='3' fill='%s'/>\n",
					svg_axis_px(&x, s[i].x[k]), svg_axis_px(&y, s[i].y[k]), c);
		fprintf(f,
			"<rect x='%d' y='%d' width='14' height='4' fill='%s'/><text x='%d' y='%d'>",
			PLOT_W - RIGHT - 150, TOP + 8 + 15 * i, c, PLOT_W - RIGHT - 132,
			TOP + 13 + 15 * i);
		svg_text(f, s[i].name);
		fputs("</text>\n", f);
	}
	fputs("</svg>\n", f);
}
