/* SPDX-License-Identifier: GPL-2.0 */
/* A line chart as inline SVG: series of (x, y) points on linear or log axes, with a legend. */
#ifndef __XR_REPORT_PLOT_H
#define __XR_REPORT_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct plot_series {
	const char *name;
	const double *x, *y;
	unsigned int n;
};

struct plot {
	const char *title, *xlabel, *ylabel;
	bool xlog, ylog;
	double xmin_span; /* a linear x axis spans at least this much (seconds: 5) */
	/* tick labels (NULL: SI, as 10k) */
	char *(*xfmt)(double v, char *buf, size_t len);
	char *(*yfmt)(double v, char *buf, size_t len);
};

/* The chart of ns series into f, an <svg> element (nothing for no point at all) */
void plot_svg(FILE *f, const struct plot *p, const struct plot_series *s, unsigned int ns);

#endif
