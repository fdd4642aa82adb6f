// SPDX-License-Identifier: GPL-2.0
/* Axes, ticks and text for the SVG plots (report/svg.h). */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "report/svg.h"
#include "util/units.h"

/* Text inside an SVG element: the five characters XML reserves, escaped. */
void svg_text(FILE *f, const char *t)
{
	for (; *t; t++) {
		switch (*t) {
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '&': fputs("&amp;", f); break;
		case '\'': fputs("&apos;", f); break;
		case '"': fputs("&quot;", f); break;
		default: fputc(*t, f);
		}
	}
}

double svg_axis_px(const struct svg_axis *x, double v)
{
	double f;

	if (x->log)
		f = (log10(fmax(v, x->lo)) - log10(x->lo)) / (log10(x->hi) - log10(x->lo));
	else
		f = (v - x->lo) / (x->hi - x->lo);
	return x->p0 + (x->p1 - x->p0) * fmin(1, fmax(0, f));
}

/* The nice step (1, 2 or 5 times a power of ten) that cuts [lo, hi] into about n parts. */
double svg_nice_step(double lo, double hi, int n)
{
	double raw = (hi - lo) / n, p = pow(10, floor(log10(raw))), m = raw / p;

	return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
}

/* A tick label without trailing zeros: 10k, 2.5M, 500. */
char *svg_tick_si(double v, char *buf, size_t len)
{
	char *dot, *end;

	/* a fraction's ticks (a loss of 0.2): SI's whole numbers would say 0 */
	if (fabs(v) < 999.5 && v != floor(v)) {
		snprintf(buf, len, "%.3g", v);
		return buf;
	}
	fmt_si(v, buf, len);
	dot = strchr(buf, '.');
	if (!dot)
		return buf;
	for (end = dot + 1; *end >= '0' && *end <= '9'; end++)
		;
	/* the digits after the point, trimmed of zeros; the point too when none is left */
	char *last = end;

	while (last > dot + 1 && last[-1] == '0')
		last--;
	if (last == dot + 1)
		last = dot;
	memmove(last, end, strlen(end) + 1);
	return buf;
}

/* A tick label of a round trip given in microseconds: 500 us, 2 ms, 1 s. */
char *svg_tick_us(double v, char *buf, size_t len)
{
	double ns = v * 1e3;

	/* a result's hostile figures too: the nanoseconds clamped to what a u64 holds */
	return fmt_duration(!(ns > 0) ? 0 : ns >= 1.8e19 ? UINT64_MAX : (uint64_t)ns, buf, len);
}

/* Round ticks: 1-2-5 in each decade on a log axis, a nice step on a linear one. */
void svg_axis_ticks_fmt(FILE *f, const struct svg_axis *x, bool vertical, double at,
			const char *unit, char *(*fmt)(double, char *, size_t))
{
	char a[16];

	if (x->log) {
		for (double d = pow(10, floor(log10(x->lo))); d <= x->hi * 1.0001; d *= 10)
			for (int m = 1; m <= 5; m += m == 1 ? 1 : 3) {
				double v = d * m, px = svg_axis_px(x, v);

				if (v < x->lo * 0.9999 || v > x->hi * 1.0001)
					continue;
				fprintf(f,
					vertical ?
						"<text x='%.0f' y='%.1f' text-anchor='end'>%s%s</text>\n" :
						"<text x='%.1f' y='%.0f' text-anchor='middle'>%s%s</text>\n",
					vertical ? at : px, vertical ? px + 4 : at,
					fmt(v, a, sizeof(a)), unit);
			}
		return;
	}
	double st = svg_nice_step(x->lo, x->hi, 5);

	/* each tick a multiple of the step, not a running sum (no 0.30000000000000004); no "-0" */
	double k0 = ceil(x->lo / st);

	for (int i = 0; i < 64 && (k0 + i) * st <= x->hi * 1.0001; i++) {
		double v = k0 + i ? (k0 + i) * st : 0, px = svg_axis_px(x, v);

		fprintf(f,
			vertical ? "<text x='%.0f' y='%.1f' text-anchor='end'>%s%s</text>\n" :
				   "<text x='%.1f' y='%.0f' text-anchor='middle'>%s%s</text>\n",
			vertical ? at : px, vertical ? px + 4 : at, fmt(v, a, sizeof(a)), unit);
	}
}

void svg_axis_ticks(FILE *f, const struct svg_axis *x, bool vertical, double at, const char *unit)
{
	svg_axis_ticks_fmt(f, x, vertical, at, unit, svg_tick_si);
}

/* The 1-2-5 value (1, 2 or 5 times a power of ten) just below v, or just above it (up). */
double svg_nice_125(double v, bool up)
{
	double p = pow(10, floor(log10(v))), m = v / p;

	if (up)
		return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10) * p;
	return (m >= 5 ? 5 : m >= 2 ? 2 : 1) * p;
}
