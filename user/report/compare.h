/* SPDX-License-Identifier: GPL-2.0 */
/*
 * xdpreplay report --compare: two runs (or two sets of rounds of a run) of
 * the same kind side by side: each figure's median on each side, the change,
 * and, where both sides have rounds, whether the change is beyond their
 * run-to-run noise (benchstat's convention: a Mann-Whitney U test at
 * alpha 0.05, "~" when it is not). Two searches also overlay their curves.
 */
#ifndef __XR_REPORT_COMPARE_H
#define __XR_REPORT_COMPARE_H

#include <stdio.h>
#include "report/report.h"

struct compare_side {
	const struct report_doc *docs; /* its rounds */
	int n;
};

/*
 * The comparison as a page into html and as text into text (either may be
 * NULL). 0, or -EINVAL after one line when the two sides are results of
 * different kinds (a sender and a count, two protocols) that cannot be
 * compared.
 */
int report_compare(FILE *html, FILE *text, const char *title, const struct compare_side *a,
		   const struct compare_side *b);

/* The two-sided p-value of a Mann-Whitney U test of x[0..nx) against y[0..ny) */
double compare_u_test(const double *x, int nx, const double *y, int ny);

#endif
