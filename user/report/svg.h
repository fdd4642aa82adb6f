/* SPDX-License-Identifier: GPL-2.0 */
/* What the SVG plots share (search --svg, xdpreplay report): axes, round ticks, escaped text. */
#ifndef __XR_REPORT_SVG_H
#define __XR_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* An axis: linear or logarithmic between lo and hi, mapped onto [p0, p1] pixels. */
struct svg_axis {
	double lo, hi, p0, p1;
	bool log;
};

/* Text inside an SVG (or HTML) element: the five characters XML reserves, escaped. */
void svg_text(FILE *f, const char *t);
/* v's pixel on x, clamped to the axis */
double svg_axis_px(const struct svg_axis *x, double v);
/* The nice step (1, 2 or 5 times a power of ten) that cuts [lo, hi] into about n parts. */
double svg_nice_step(double lo, double hi, int n);
/* The 1-2-5 value just below v, or just above it (up). */
double svg_nice_125(double v, bool up);
/* Tick labels: SI without trailing zeros (10k, 2.5M); a time given in microseconds (500 us, 2 ms) */
char *svg_tick_si(double v, char *buf, size_t len);
char *svg_tick_us(double v, char *buf, size_t len);
/*
 * Round ticks along x (1-2-5 in each decade on a log axis, a nice step on a
 * linear one), as text at `at` across it, formatted by fmt (svg_axis_ticks: SI)
 */
void svg_axis_ticks_fmt(FILE *f, const struct svg_axis *x, bool vertical, double at,
			const char *unit, char *(*fmt)(double, char *, size_t));
void svg_axis_ticks(FILE *f, const struct svg_axis *x, bool vertical, double at, const char *unit);

#endif
