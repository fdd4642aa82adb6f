// SPDX-License-Identifier: GPL-2.0
/* The Mann-Whitney U test of two sets of rounds, as benchstat decides noise (report/compare.h). */
#include <math.h>
#include <stdbool.h>
#include <string.h>
#include "report/compare.h"

#define EXACT_MAX 20 /* rounds a side up to which the distribution is counted exactly */

/* U of x against y: pairs where x is larger, a tie counting half */
static double u_of(const double *x, int nx, const double *y, int ny, bool *ties)
{
	double u = 0;

	*ties = false;
	for (int i = 0; i < nx; i++)
		for (int k = 0; k < ny; k++) {
			u += x[i] > y[k] ? 1 : x[i] == y[k] ? 0.5 : 0;
			*ties |= x[i] == y[k];
		}
	return u;
}

/* P(U <= u) without ties: the orderings of nx + ny rounds counted by their U, each as likely */
static double exact_cdf(int nx, int ny, int u)
{
	/* f[m][n][v]: orderings of m x-rounds and n y-rounds with U = v */
	static double f[EXACT_MAX + 1][EXACT_MAX + 1][EXACT_MAX * EXACT_MAX + 1];
	double below = 0, all = 0;

	memset(f, 0, sizeof(f));
	for (int m = 0; m <= nx; m++)
		for (int n = 0; n <= ny; n++)
			for (int v = 0; v <= m * n; v++) {
				if (!m || !n) {
					f[m][n][v] = v == 0;
					continue;
				}
				/* the largest round is an x (above all n y's) or a y */
				f[m][n][v] = (v >= n ? f[m - 1][n][v - n] : 0) + f[m][n - 1][v];
			}
	for (int v = 0; v <= nx * ny; v++) {
		all += f[nx][ny][v];
		if (v <= u)
			below += f[nx][ny][v];
	}
	return below / all;
}

/* The normal approximation, corrected for ties and continuity */
static double normal_p(const double *x, int nx, const double *y, int ny, double u)
{
	double all[2 * EXACT_MAX * 8], t = 0, n = nx + ny, mu = nx * ny / 2.0, sd;
	int k = 0;

	for (int i = 0; i < nx && k < (int)(sizeof(all) / sizeof(all[0])); i++)
		all[k++] = x[i];
	for (int i = 0; i < ny && k < (int)(sizeof(all) / sizeof(all[0])); i++)
		all[k++] = y[i];
	for (int i = 0; i < k; i++) {
		int same = 0;

		for (int j = 0; j < k; j++)
			same += all[j] == all[i];
		/* each member of a tie group adds (s^3 - s) / s: the group's s^3 - s in all */
		t += (pow(same, 3) - same) / same;
	}
	sd = sqrt(nx * ny / 12.0 * ((n + 1) - t / (n * (n - 1))));
	if (!(sd > 0))
		return 1;
	return erfc(fmax(fabs(u - mu) - 0.5, 0) / sd / M_SQRT2);
}

double compare_u_test(const double *x, int nx, const double *y, int ny)
{
	bool ties;
	double u, lo, hi;

	if (nx < 1 || ny < 1)
		return 1;
	u = u_of(x, nx, y, ny, &ties);
	if (ties || nx > EXACT_MAX || ny > EXACT_MAX)
		return fmin(1, normal_p(x, nx, y, ny, u));
	lo = exact_cdf(nx, ny, (int)u);
	hi = 1 - exact_cdf(nx, ny, (int)u - 1);
	return fmin(1, 2 * fmin(lo, hi));
}
